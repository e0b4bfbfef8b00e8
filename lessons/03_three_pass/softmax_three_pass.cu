/* Lesson 3: one block per row, three passes over the row (the Triton softmax notes'
 * three-pass softmax, written for CUDA):
 *
 *   1. each thread takes the max of its share of the row; the block
 *      combines the shares in a shared-memory tree;
 *   2. each thread sums exp(x - max) over its share; tree again;
 *   3. each thread writes exp(x - max) / sum for its share.
 *
 * "Its share" is every BLOCK-th element starting at threadIdx.x: in each
 * step of a loop, the 32 threads of a warp read 32 consecutive floats, one
 * 128-byte line, where lessons 1-2 needed 32 lines. That, and BLOCK threads
 * working on a row instead of one, is the whole speed-up.
 *
 * Traffic: the row is read three times and written once, 16 bytes per
 * element, unless a re-read finds the row still in L1 or L2 (README.md). */
#include <math.h>

#include "softmax_three_pass.h"
#include "block_reduce.h"
#include "check.h"

/* __restrict__ promises that x and y do not overlap (in-place use is not
 * supported). Without it the compiler must assume that the store to yr[j]
 * may change xr[j + BLOCK], and cannot issue the next loads before the
 * store: one load in flight per thread instead of several. */
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
softmax_three_pass_kernel(const float *__restrict__ x, float *__restrict__ y, long long cols)
{
    __shared__ float buf[BLOCK];

    /* 64-bit: the offset of a row passes 2^31 at 16384 x 131072, and one
     * row may itself hold more than 2^31 elements, so j is 64-bit too. */
    const long long row = blockIdx.x;
    const float *xr = x + row * cols;
    float *yr = y + row * cols;

    /* -INFINITY, the identity of max: a thread with no element (cols <
     * BLOCK) must not change the result, and 0 would for all-negative rows. */
    float m = -INFINITY;
    for (long long j = threadIdx.x; j < cols; j += BLOCK) m = fmaxf(m, xr[j]); /* read 1 */
    m = block_reduce_max<BLOCK>(m, buf);

    /* 0, the identity of +: threads with no element add nothing. Kahan's
     * compensated sum: a plain running float sum drops terms below half an
     * ulp of the sum, and over a 2^31-element row each of 256 threads adds
     * 8 million terms: every element came out wrong (`make test-large`,
     * H100). c carries what each addition lost; the three extra flops are
     * free in a memory-bound pass. */
    float s = 0.0f, c = 0.0f;
    for (long long j = threadIdx.x; j < cols; j += BLOCK) { /* read 2 */
        const float t = expf(xr[j] - m) - c;
        const float u = s + t;
        c = (u - s) - t;
        s = u;
    }
    s = block_reduce_sum<BLOCK>(s, buf);

    /* One division per thread instead of one per element; the extra
     * rounding is one ulp. s >= 1 (the max contributes exp(0) = 1) unless
     * the row holds NaN or is all -inf: then s is NaN and so is the row. */
    const float inv = 1.0f / s;
    for (long long j = threadIdx.x; j < cols; j += BLOCK)
        yr[j] = expf(xr[j] - m) * inv; /* read 3, write */
}

template <int BLOCK>
static void launch(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    if (rows < 1 || cols < 1) return; /* nothing to do; a 0-block grid is an error */
    /* One block per row: rows <= 2^31 - 1 (options.h), the limit of gridDim.x. */
    softmax_three_pass_kernel<BLOCK><<<(unsigned)rows, BLOCK, 0, stream>>>(x, y, cols);
    CUDA_CHECK_LAUNCH();
}

void softmax_three_pass(const float *x, float *y, long long rows, long long cols,
                        cudaStream_t stream)
{
    launch<256>(x, y, rows, cols, stream);
}

void softmax_three_pass_1024(const float *x, float *y, long long rows, long long cols,
                             cudaStream_t stream)
{
    launch<1024>(x, y, rows, cols, stream);
}
