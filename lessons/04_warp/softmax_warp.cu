/* Lesson 4: lesson 3's three passes with warp-shuffle reductions, in two
 * layouts, and the attention softmax notes' kernel with its bug.
 *
 *   softmax_warp           one block of 256 threads per row: each thread
 *                          loops over its share of the row, as in lesson 3;
 *                          the two block reductions are two-level shuffles
 *                          (warp_reduce.h): 2 __syncthreads per row instead
 *                          of 2 x (log2(256) + 2) = 20
 *   softmax_warp_1024      the same, 1024 threads per block
 *   softmax_warp_per_row   one warp per row, 8 rows per block: no shared
 *                          memory and no __syncthreads at all; for short
 *                          rows, where most of a 256-thread block would idle
 *   softmax_warp_one_level  the attention softmax notes' kernel (rewritten,
 *                          same structure, same bug): right only for
 *                          blocks of 32 threads
 *
 * Traffic of the first three: 3 reads + 1 write, as in lesson 3. */
#include <math.h>

#include "softmax_warp.h"
#include "warp_reduce.h"
#include "check.h"

/* ---- one block per row, two-level shuffle reductions ------------------ */

/* __restrict__: x and y do not overlap, so the compiler may issue several
 * loads of x before the stores to y (see lesson 3). */
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
softmax_warp_kernel(const float *__restrict__ x, float *__restrict__ y, long long cols)
{
    /* One array per reduction: block_max_warps' partials are still being
     * read by slow warps when fast ones reach block_sum_warps. */
    __shared__ float partial_max[BLOCK / 32], partial_sum[BLOCK / 32];

    const long long row = blockIdx.x; /* 64-bit offsets and indices, as in lesson 3 */
    const float *xr = x + row * cols;
    float *yr = y + row * cols;

    float m = -INFINITY;
    for (long long j = threadIdx.x; j < cols; j += BLOCK) m = fmaxf(m, xr[j]); /* read 1 */
    m = block_max_warps<BLOCK>(m, partial_max);

    float s = 0.0f, c = 0.0f; /* Kahan-compensated, as in lesson 3 */
    for (long long j = threadIdx.x; j < cols; j += BLOCK) { /* read 2 */
        const float t = expf(xr[j] - m) - c;
        const float u = s + t;
        c = (u - s) - t;
        s = u;
    }
    s = block_sum_warps<BLOCK>(s, partial_sum);

    const float inv = 1.0f / s; /* NaN for a row holding NaN or only -inf */
    for (long long j = threadIdx.x; j < cols; j += BLOCK)
        yr[j] = expf(xr[j] - m) * inv; /* read 3, write */
}

template <int BLOCK>
static void launch_block(const float *x, float *y, long long rows, long long cols,
                         cudaStream_t stream)
{
    if (rows < 1 || cols < 1) return; /* a 0-block grid is an error */
    softmax_warp_kernel<BLOCK><<<(unsigned)rows, BLOCK, 0, stream>>>(x, y, cols);
    CUDA_CHECK_LAUNCH();
}

void softmax_warp(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    launch_block<256>(x, y, rows, cols, stream);
}

void softmax_warp_1024(const float *x, float *y, long long rows, long long cols,
                       cudaStream_t stream)
{
    launch_block<1024>(x, y, rows, cols, stream);
}

/* ---- one warp per row ----------------------------------------------------- */

#define ROWS_PER_BLOCK 8 /* 8 warps = 256 threads per block */

__global__ void __launch_bounds__(ROWS_PER_BLOCK * 32)
softmax_warp_per_row_kernel(const float *__restrict__ x, float *__restrict__ y, long long rows,
                            long long cols)
{
    const int lane = threadIdx.x % 32;
    const long long row = (long long)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32;
    /* The last block may have warps without a row. The test is the same for
     * all 32 lanes of a warp, so a warp leaves whole and the shuffles below
     * still see all 32 lanes; and no __syncthreads waits for it. */
    if (row >= rows) return;
    const float *xr = x + row * cols;
    float *yr = y + row * cols;

    float m = -INFINITY;
    for (long long j = lane; j < cols; j += 32) m = fmaxf(m, xr[j]); /* read 1 */
    m = warp_max(m); /* every lane has the row max: no shared memory, no barrier */

    float s = 0.0f, c = 0.0f; /* Kahan-compensated: 67 million terms per lane on a 2^31 row */
    for (long long j = lane; j < cols; j += 32) { /* read 2 */
        const float t = expf(xr[j] - m) - c;
        const float u = s + t;
        c = (u - s) - t;
        s = u;
    }
    s = warp_sum(s);

    const float inv = 1.0f / s;
    for (long long j = lane; j < cols; j += 32) yr[j] = expf(xr[j] - m) * inv; /* read 3, write */
}

void softmax_warp_per_row(const float *x, float *y, long long rows, long long cols,
                          cudaStream_t stream)
{
    if (rows < 1 || cols < 1) return;
    /* rows <= 2^31 - 1, so at most 2^28 blocks: within gridDim.x. */
    unsigned blocks = (unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    softmax_warp_per_row_kernel<<<blocks, ROWS_PER_BLOCK * 32, 0, stream>>>(x, y, rows, cols);
    CUDA_CHECK_LAUNCH();
}

/* ---- the attention softmax notes' kernel, bug included ------------------ */

/* The structure of the attention softmax notes' CUDA kernel: warp-shuffle max, then thread 0
 * alone publishes it; exp written to y and summed; thread 0 publishes the
 * sum; y rescaled in place. Two changes only, so that the one bug left is
 * the lesson's: 64-bit offsets (the seed's int row * seq_len wraps past
 * 2^31 elements), and the early `if (row >= rows) return` dropped (the grid
 * has exactly one block per row, so it never fired).
 *
 * THE BUG: after warp_max, lane 0 of *every* warp holds its own warp's max,
 * but only thread 0 - lane 0 of warp 0 - writes row_max. Warps 1, 2, ...
 * then use warp 0's max, and row_sum is warp 0's partial sum alone. With
 * one warp per block this is the whole row and the kernel is right; with
 * more, and cols > 32, the outputs no longer sum to 1 (lesson 4's README and
 * tests/test_lesson4.cu show by how much). It also moves 3 reads + 2
 * writes = 20 bytes per element: y is written, read back and written again. */
__global__ void softmax_warp_one_level_kernel(const float *x, float *y, long long cols)
{
    __shared__ float row_max, row_sum;
    const float *xr = x + (long long)blockIdx.x * cols;
    float *yr = y + (long long)blockIdx.x * cols;

    float m = -INFINITY;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = warp_max(m);                    /* the max of this warp's elements only */
    if (threadIdx.x == 0) row_max = m;  /* BUG: warps 1, 2, ... are ignored */
    __syncthreads();
    m = row_max;

    float s = 0.0f;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
        float e = expf(xr[j] - m);
        yr[j] = e; /* kept in y, rescaled below: an extra write and read */
        s += e;
    }
    s = warp_sum(s);
    if (threadIdx.x == 0) row_sum = s;  /* BUG: warp 0's partial sum only */
    __syncthreads();

    const float inv = 1.0f / row_sum;
    for (long long j = threadIdx.x; j < cols; j += blockDim.x) yr[j] *= inv;
}

void softmax_warp_one_level(const float *x, float *y, long long rows, long long cols, int threads,
                          cudaStream_t stream)
{
    if (rows < 1 || cols < 1) return;
    softmax_warp_one_level_kernel<<<(unsigned)rows, threads, 0, stream>>>(x, y, cols);
    CUDA_CHECK_LAUNCH();
}
