/* Exercise 6: one row split across several blocks (the online-softmax tutorial's block
 * softmax on a GPU). */
#ifndef LESSON06_EXERCISE_H
#define LESSON06_EXERCISE_H
#include <cuda_runtime.h>

#include "device/online_md.cuh"

/* y = softmax(x) for each row (device pointers, contiguous rows), each row
 * cut into `splits` segments of ceil(cols / splits) floats (the last ones
 * shorter or empty), one block per segment. work: device scratch of
 * rows * splits states, written by the first kernel, read by the second. */
void softmax_split(const float *x, float *y, long long rows, long long cols, int splits,
                   online_md *work, cudaStream_t stream);

#endif
