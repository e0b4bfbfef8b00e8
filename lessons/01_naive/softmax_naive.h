/* Lesson 1: the textbook softmax, one thread per row. */
#ifndef LESSON01_SOFTMAX_NAIVE_H
#define LESSON01_SOFTMAX_NAIVE_H
#include <cuda_runtime.h>

/* y = exp(x) / sum(exp(x)) for each of `rows` rows of `cols` floats
 * (device pointers, contiguous rows). Overflows for any x above ~88.72. */
void softmax_naive(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);

#endif
