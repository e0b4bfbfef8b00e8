/* Exercise 11: join K ranks' (m, d) with two all-reduces.
 *
 * Each rank k has summarised its slice of every row by (m_k, d_k): its
 * max and the sum of exp(x - m_k) over its columns. The whole row's state
 * is
 *
 *     M = max_k m_k,    D = sum_k d_k exp(m_k - M),
 *
 * and the collectives can do a max and a sum, not a merge. So:
 *
 *   1. every rank copies its m_k into m[k]; all-reduce with SPLIT_MAX:
 *      every rank now holds M. (Done.)
 *   2. every rank writes its share of D into d[k]; all-reduce with
 *      SPLIT_SUM: every rank now holds D.
 *
 * The starter's step 2 writes d_k as it is. Each d_k was summed against
 * its own m_k, so adding them is adding numbers in different units: the
 * result is right only where every rank had the same max. Rescale each
 * d_k to M before the sum. Then think of a rank whose slice of a row is
 * all -inf (m_k = -inf, d_k = 0), and of a row that is -inf everywhere
 * (M = -inf): lesson 6's online_md_shift exists for them.
 *
 * `make exercise11` checks it (three ranks on one GPU, or on the CPU
 * emulator, joined by the in-process stand-in for NCCL);
 * solutions/11_multi_gpu/exercise.cu is one answer. */
#include <math.h>

#include "check.h"
#include "exercise.h"
#include "device/online_md.cuh" /* online_md_shift */

__global__ void copy_max_kernel(const float2 *__restrict__ mine, long long rows, float *__restrict__ m)
{
    for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < rows; r += (long long)gridDim.x * blockDim.x)
        m[r] = mine[r].x;
}

/* TODO: m holds M (step 1 is done when this runs). Write this rank's share
 * of D: d_k rescaled from m_k to M, not d_k itself. */
__global__ void share_of_d_kernel(const float2 *__restrict__ mine, const float *__restrict__ m, long long rows,
                                  float *__restrict__ d)
{
    for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < rows; r += (long long)gridDim.x * blockDim.x)
        d[r] = mine[r].y;
}

void combine_all_reduce(split_comm *comm, const split_place *at, const float2 *const *mine, float *const *m,
                        float *const *d, long long rows)
{
    if (rows < 1) return;
    const unsigned blocks = (unsigned)((rows + 255) / 256 < 4096 ? (rows + 255) / 256 : 4096);
    for (int k = 0; k < comm->ranks; k++) {
        CUDA_CHECK(cudaSetDevice(at[k].device));
        copy_max_kernel<<<blocks, 256, 0, at[k].stream>>>(mine[k], rows, m[k]);
        CUDA_CHECK_LAUNCH();
    }
    comm->all_reduce(comm, m, rows, SPLIT_MAX, at);
    for (int k = 0; k < comm->ranks; k++) {
        CUDA_CHECK(cudaSetDevice(at[k].device));
        share_of_d_kernel<<<blocks, 256, 0, at[k].stream>>>(mine[k], m[k], rows, d[k]);
        CUDA_CHECK_LAUNCH();
    }
    comm->all_reduce(comm, d, rows, SPLIT_SUM, at);
}
