/* Lesson 6: the online softmax. One pass over the row computes its max m
 * and its sum d = sum exp(x - m) together, as a running (m, d) state per
 * thread merged across threads and warps; a second pass writes
 * exp(x - m) / d: 2 reads + 1 write, for rows of any length. */
#ifndef LESSON06_SOFTMAX_ONLINE_H
#define LESSON06_SOFTMAX_ONLINE_H
#include <cuda_runtime.h>

/* y = softmax(x) for each of `rows` rows of `cols` floats (device pointers,
 * contiguous rows; x and y must not overlap). Any shape. A row holding NaN
 * gives NaN; a row of only -inf gives NaN, as PyTorch does (its max is -inf
 * and exp(-inf - (-inf)) is NaN); -inf entries among others give 0. */
void softmax_online(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);

/* The same on views: row i of x starts at x + i * ldx, row i of y at
 * y + i * ldy (strides in elements, >= cols). Elements between cols and
 * the stride are never touched. Accesses as softmax_online_access says. */
void softmax_online_strided(const float *x, long long ldx, float *y, long long ldy,
                            long long rows, long long cols, cudaStream_t stream);

/* How softmax_online_strided moves a view: float4 throughout when both
 * views are 16-byte aligned and cols, ldx, ldy are multiples of 4; float4
 * bodies with each row's 0-6 head and tail floats peeled off
 * (common/device/view_cut.cuh) when every row of x starts at the same
 * offset from 16 bytes as the same row of y; otherwise rows cut at y's
 * boundaries, y written in float4s and x read in 32-bit loads (both views
 * 4-byte aligned), or single floats. */
typedef enum { ONLINE_SCALAR, ONLINE_X32, ONLINE_PEELED, ONLINE_FLOAT4 } online_access;
online_access softmax_online_access(const float *x, long long ldx, const float *y, long long ldy,
                                    long long rows, long long cols);

/* The one-block-per-row configuration (512 threads, block-wide merge
 * through shared memory) on rows of every length, where softmax_online
 * uses it only above ONLINE_WARP_MAX_COLS: the test matrix runs it on
 * short rows too. */
void softmax_online_block_per_row(const float *x, float *y, long long rows, long long cols,
                                  cudaStream_t stream);

/* Rows up to this length are shared by 1 ... 32 lanes of a warp (several
 * rows per warp); longer rows get a block of ONLINE_BLOCK threads. */
#define ONLINE_WARP_MAX_COLS 2048
#define ONLINE_BLOCK 512

#endif
