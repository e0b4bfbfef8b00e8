/* Exercise 4: fix the attention softmax notes' kernel.
 *
 * Below is the attention softmax notes' kernel as lesson 4 shows it (softmax_warp.cu,
 * softmax_warp_one_level). It is right with 32 threads per block and wrong
 * with more: after warp_max, lane 0 of every warp holds its warp's max, but
 * only thread 0 publishes one, so the other warps' values are lost; the sum
 * has the same problem.
 *
 * Fix it for any block of 32 to 1024 threads (a multiple of 32; the number
 * of warps is blockDim.x / 32, known only at run time here). Keep the full
 * mask: every shuffle must be reached by all 32 lanes of the warp. Watch
 * for reads past the warps that exist, and for a shared value read by one
 * warp while another overwrites it.
 *
 * `make exercise4` checks 32, 64, 128, 256 and 1024 threads on several
 * shapes; solutions/04_warp/exercise.cu is one answer. */
#include <math.h>

#include "check.h"
#include "exercise.h"
#include "warp_reduce.h" /* warp_max, warp_sum */

__global__ void exercise_softmax_kernel(const float *x, float *y, long long cols)
{
    __shared__ float row_max, row_sum;
    const float *xr = x + (long long)blockIdx.x * cols;
    float *yr = y + (long long)blockIdx.x * cols;

    float m = -INFINITY;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = warp_max(m);
    if (threadIdx.x == 0) row_max = m; /* TODO: every warp's max counts */
    __syncthreads();
    m = row_max;

    float s = 0.0f;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        float e = expf(xr[j] - m);
        yr[j] = e;
        s += e;
    }
    s = warp_sum(s);
    if (threadIdx.x == 0) row_sum = s; /* TODO: every warp's sum counts */
    __syncthreads();

    const float inv = 1.0f / row_sum;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) yr[j] *= inv;
}

void softmax_warp_fixed(const float *x, float *y, long long rows, long long cols, int threads,
                        cudaStream_t stream)
{
    if (rows < 1 || cols < 1) return;
    exercise_softmax_kernel<<<(unsigned)rows, threads, 0, stream>>>(x, y, cols);
    CUDA_CHECK_LAUNCH();
}
