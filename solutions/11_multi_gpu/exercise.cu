/* Solution to exercise 11: the all-reduce way of joining K ranks' (m, d).
 *
 * Step 2 writes d_k exp(m_k - shift(M)): each rank's sum moved from its
 * own max to the row's, after which the shares add up to D. shift(M) is
 * lesson 6's online_md_shift: 0 when M = -inf, so a row that is -inf on
 * every rank gives exp(-inf - 0) x 0 = 0 on each, D = 0, and (M, D) =
 * (-inf, 0), the identity, where exp(-inf - (-inf)) would give NaN. A rank
 * whose slice alone is all -inf has (-inf, 0) and adds exp(-inf - M) x 0
 * = 0. A NaN in a slice makes that rank's d_k NaN, and the sum carries it.
 *
 * The cost against the all-gather: two collectives of M floats, each a
 * round of latency, where one collective of 2M floats does it; the
 * lesson's text measures which wins where. */
#include <math.h>

#include "check.h"
#include "exercise.h"
#include "device/online_md.cuh" /* online_md_shift */

__global__ void copy_max_kernel(const float2 *__restrict__ mine, long long rows, float *__restrict__ m)
{
    for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < rows; r += (long long)gridDim.x * blockDim.x)
        m[r] = mine[r].x;
}

/* m holds M: this rank's share of D is d_k moved from m_k to M. */
__global__ void share_of_d_kernel(const float2 *__restrict__ mine, const float *__restrict__ m, long long rows,
                                  float *__restrict__ d)
{
    for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < rows; r += (long long)gridDim.x * blockDim.x) {
        const float2 s = mine[r];
        d[r] = s.y * expf(s.x - online_md_shift(m[r]));
    }
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
