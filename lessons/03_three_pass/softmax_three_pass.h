/* Lesson 3: one block per row, shared-memory tree reductions, coalesced. */
#ifndef LESSON03_SOFTMAX_THREE_PASS_H
#define LESSON03_SOFTMAX_THREE_PASS_H
#include <cuda_runtime.h>

/* y = exp(x - max) / sum(exp(x - max)) for each row (device pointers,
 * contiguous rows; x and y must not overlap). One block of 256 threads per
 * row, any cols. A row holding NaN, or only -inf, gives NaN (as PyTorch). */
void softmax_three_pass(const float *x, float *y, long long rows, long long cols,
                        cudaStream_t stream);

/* The same kernel with 1024 threads per block (the lesson measures both). */
void softmax_three_pass_1024(const float *x, float *y, long long rows, long long cols,
                             cudaStream_t stream);

#endif
