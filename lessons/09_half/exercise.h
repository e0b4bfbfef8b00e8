/* Exercise 9: round once. */
#ifndef LESSON09_EXERCISE_H
#define LESSON09_EXERCISE_H
#include <cuda_runtime.h>

#include "f16.h" /* dtype */

/* One block of EX_BLOCK threads per row, EX_PER_THREAD elements of the row
 * per thread, so rows of at most EX_MAX_COLS elements. */
#define EX_BLOCK 256
#define EX_PER_THREAD 8
#define EX_MAX_COLS (EX_BLOCK * EX_PER_THREAD)

/* y = softmax(x) over each row: x and y are device pointers to rows x cols
 * elements of storage type t (float32, float16 or bfloat16), contiguous
 * rows, 1 <= cols <= EX_MAX_COLS. The arithmetic is float32. */
void softmax_half_row(const void *x, void *y, long long rows, long long cols, dtype t, cudaStream_t stream);

#endif
