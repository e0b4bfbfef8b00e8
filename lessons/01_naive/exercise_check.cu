/* Checker for exercise 1 (do not edit): the answer t must make expf(t)
 * infinite on the GPU while the float just below t stays finite. The
 * property is checked, not a stored number. Exit 0 when solved, 1 if not,
 * 3 without a GPU. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "harness.h"
#include "exercise.h"

__global__ void expf_pair_kernel(float t, float *out)
{
    out[0] = expf(t);
    out[1] = expf(nextafterf(t, 0.0f));
}

int main(void)
{
    require_gpu("exercise1");
    float t = exp_overflow_threshold();

    float *d, e[2];
    CUDA_CHECK(cudaMalloc(&d, 2 * sizeof(float)));
    expf_pair_kernel<<<1, 1>>>(t, d);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(e, d, sizeof e, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d));

    printf("Exercise 1: the smallest float whose expf overflows\n");
    printf("  your answer          t = %.9g\n", t);
    printf("  expf(t)              %g   (must be inf)\n", e[0]);
    printf("  expf(float below t)  %g   (must be finite)\n", e[1]);
    printf("  ln(FLT_MAX) in double = %.9f, for comparison\n", log((double)FLT_MAX));
    int ok = isfinite(t) && isinf(e[0]) && isfinite(e[1]);
    if (ok) printf("SOLVED\n");
    else printf("NOT YET: expf(t): expected inf, got %g; expf(float below t): expected a finite value, got %g%s\n",
                e[0], e[1], isfinite(t) ? "" : " (t itself must be finite)");
    return ok ? 0 : 1;
}
