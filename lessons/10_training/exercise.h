/* Exercise 10: the log-softmax backward. */
#ifndef LESSON10_EXERCISE_H
#define LESSON10_EXERCISE_H
#include <cuda_runtime.h>

/* dx = dout - exp(out) * sum_j dout_j per row, where out = log_softmax(x)
 * (the forward's output, lessons/10_training/log_softmax.cu) and dout the
 * gradient of the loss with respect to out. Device pointers, contiguous
 * rows, any shape. */
void log_softmax_backward(const float *out, const float *dout, float *dx, long long rows, long long cols,
                          cudaStream_t stream);

#endif
