/* Solution to exercise 1: bisect over the bit patterns of non-negative
 * floats. Invariant: expf(lo) is finite, expf(hi) is infinite; 32 steps at
 * most, since there are fewer than 2^32 patterns between them. */
#include <math.h>

#include "check.h"
#include "exercise.h"

__global__ void overflow_threshold_kernel(float *result)
{
    unsigned lo = __float_as_uint(0.0f), hi = __float_as_uint(INFINITY);
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (isinf(expf(__uint_as_float(mid)))) hi = mid;
        else lo = mid;
    }
    *result = __uint_as_float(hi);
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
