/* Exercise 8: several rows per warp (path 1 of the dispatcher). */
#ifndef LESSON08_EXERCISE_H
#define LESSON08_EXERCISE_H
#include <cuda_runtime.h>

/* Rows of at most EX_MAX_COLS floats, EX_LANES lanes per row, so that
 * 32 / EX_LANES rows share each warp. */
#define EX_LANES 8
#define EX_FPT 16
#define EX_MAX_COLS (EX_LANES * EX_FPT)

/* y = softmax(x) over each row (device pointers, contiguous rows,
 * 1 <= cols <= EX_MAX_COLS). */
void softmax_rows_per_warp(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);

#endif
