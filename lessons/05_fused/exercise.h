/* Exercise 5: column-wise softmax, softmax over dim 0. */
#ifndef LESSON05_EXERCISE_H
#define LESSON05_EXERCISE_H
#include <cuda_runtime.h>

/* For each column c of the rows x cols matrix x (device pointers,
 * contiguous rows): y[r][c] = exp(x[r][c] - max_r x[r][c]) / sum_r exp(...),
 * i.e. every COLUMN of y sums to 1. */
void softmax_columns(const float *x, float *y, long long rows, long long cols,
                     cudaStream_t stream);

#endif
