/* Exercise 7: key padding from sequence lengths. */
#ifndef LESSON07_EXERCISE_H
#define LESSON07_EXERCISE_H
#include <cuda_runtime.h>

/* A batch of `batch` sequences padded to S tokens: x holds batch * S rows
 * of S attention scores (device pointers, contiguous), sequence b owning
 * rows b S ... b S + S - 1. Sequence b has lengths[b] real tokens
 * (lengths: a device array of `batch` ints in 0 ... S); keys k >=
 * lengths[b] are padding. For every row r of sequence b = r / S:
 *     y[r][k] = softmax over k < lengths[b] of x[r][k] * scale,
 *     y[r][k] = 0 for k >= lengths[b],
 * and a sequence of length 0 gives rows of zeros (the lesson's policy for
 * fully masked rows). The padded scores may hold anything, even NaN. */
void softmax_padded(const float *x, const int *lengths, float *y, long long batch, long long S,
                    float scale, cudaStream_t stream);

#endif
