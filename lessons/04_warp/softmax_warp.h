/* Lesson 4: warp-shuffle reductions; the attention softmax notes' kernel and its fix. */
#ifndef LESSON04_SOFTMAX_WARP_H
#define LESSON04_SOFTMAX_WARP_H
#include <cuda_runtime.h>

/* y = softmax of each row (device pointers, contiguous rows, x and y not
 * overlapping), any rows and cols. A row holding NaN, or only -inf, gives
 * NaN (as PyTorch). */

/* One block of 256 threads per row, two-level shuffle reductions. */
void softmax_warp(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);

/* The same with 1024 threads per block. */
void softmax_warp_1024(const float *x, float *y, long long rows, long long cols,
                       cudaStream_t stream);

/* One warp per row, 8 rows per block: for short rows. */
void softmax_warp_per_row(const float *x, float *y, long long rows, long long cols,
                          cudaStream_t stream);

/* The attention softmax notes' kernel with `threads` threads per block (a multiple of 32, at
 * most 1024). WRONG whenever threads > 32 and cols > 32: only warp 0's max
 * and sum are used. Kept to be shown and tested, not used. */
void softmax_warp_one_level(const float *x, float *y, long long rows, long long cols, int threads,
                          cudaStream_t stream);

#endif
