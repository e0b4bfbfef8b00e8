/* Exercise 2: temperature softmax, softmax(x / T). */
#ifndef LESSON02_EXERCISE_H
#define LESSON02_EXERCISE_H
#include <cuda_runtime.h>

/* y = softmax(x / T) for each row (device pointers, contiguous), T > 0. */
void softmax_temperature(const float *x, float *y, int rows, int cols, float T,
                         cudaStream_t stream);

#endif
