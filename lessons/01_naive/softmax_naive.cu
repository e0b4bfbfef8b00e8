/* Lesson 1: the definition, transcribed. Each thread owns one row and walks
 * it twice: once to sum exp(x), once to write exp(x) / sum.
 *
 * Two things are wrong with it, and the lesson measures both:
 *   1. expf(x) is larger than FLT_MAX once x > 88.7228 (= ln FLT_MAX), so a
 *      row holding 1000 becomes inf / inf = NaN.
 *   2. In each step of the loop, the 32 threads of a warp read 32 addresses
 *      `cols` floats apart: 32 separate memory transactions where one
 *      128-byte transaction could have served the warp. */
#include "softmax_naive.h"
#include "check.h"

__global__ void softmax_naive_kernel(const float *x, float *y, long long rows, long long cols)
{
    long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;

    /* 64-bit before multiplying: row * cols passes 2^31 at 16384 x 131072,
     * and one row may itself be longer than 2^31. */
    const float *xr = x + row * cols;
    float *yr = y + row * cols;

    float sum = 0.0f;
    for (long long j = 0; j < cols; j++) sum += expf(xr[j]);   /* read 1 */
    for (long long j = 0; j < cols; j++) yr[j] = expf(xr[j]) / sum; /* read 2, write */
}

void softmax_naive(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    const int threads = 256;
    unsigned blocks = (unsigned)((rows + threads - 1) / threads);
    softmax_naive_kernel<<<blocks, threads, 0, stream>>>(x, y, rows, cols);
    CUDA_CHECK_LAUNCH();
}
