/* Exercise 1: find the smallest float that overflows expf.
 *
 * Lesson 1's kernel breaks as soon as one input x has expf(x) == inf. The
 * text says this happens "above about 88.72". Find the exact float.
 *
 * Fill in the kernel below so that *result is the smallest float t with
 * expf(t) == inf, computed on the GPU (where expf is the device's own).
 *
 * Hint: for non-negative floats, the bit patterns read as unsigned ints are
 * in the same order as the values (__float_as_uint / __uint_as_float), so
 * you can bisect over the integers between the bits of 0.0f (expf finite)
 * and the bits of INFINITY (expf infinite).
 *
 * Check your answer with `make exercise1`; the solved version is in
 * solutions/01_naive/exercise.cu. */
#include <math.h>

#include "check.h"
#include "exercise.h"

__global__ void overflow_threshold_kernel(float *result)
{
    /* TODO: replace this guess by a search. */
    *result = 100.0f;
}

float exp_overflow_threshold(void)
{
    float *d, t;
    CUDA_CHECK(cudaMalloc(&d, sizeof(float)));
    overflow_threshold_kernel<<<1, 1>>>(d);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(&t, d, sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d));
    return t;
}
