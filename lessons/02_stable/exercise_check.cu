/* Checker for exercise 2 (do not edit): softmax(x / T) against the float64
 * reference, with the same verifier as the lessons, for several T and
 * shapes, outputs poisoned first. Exit 0 when solved, 1 if not, 3 without
 * a GPU. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "exercise.h"

static void ref_temperature(const float *x, double *y, long long n, const void *ctx)
{
    ref_softmax_scaled_row(x, y, n, 1.0 / *(const double *)ctx);
}

int main(void)
{
    require_gpu("exercise2");
    const double temps[] = {0.5, 2.0, 10.0};
    const int shapes[][2] = {{1, 4}, {64, 1000}, {7, 1025}};
    int solved = 1;
    printf("Exercise 2: temperature softmax, softmax(x / T)\n");
    for (int s = 0; s < 3; s++) {
        int rows = shapes[s][0], cols = shapes[s][1];
        size_t n = (size_t)rows * cols, bytes = n * sizeof(float);
        float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes), *dx, *dy;
        inputs_fill(x, rows, cols, INPUT_NORMAL, 42 + s);
        CUDA_CHECK(cudaMalloc(&dx, bytes));
        CUDA_CHECK(cudaMalloc(&dy, bytes));
        CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
        for (int t = 0; t < 3; t++) {
            CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN until written */
            softmax_temperature(dx, dy, rows, cols, (float)temps[t], 0);
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
            verify_report r;
            char desc[512];
            int ok = verify_softmax(x, y, rows, cols, ref_temperature, &temps[t],
                                   verify_rtol_sequential(cols), &r);
            verify_describe(&r, desc, sizeof desc);
            printf("  %-4s %5d x %-5d T = %-4g %s\n", ok ? "ok" : "BAD", rows, cols, temps[t], desc);
            verify_wrong_print(&r.wrong, "y", "       ");
            solved &= ok;
        }
        CUDA_CHECK(cudaFree(dx));
        CUDA_CHECK(cudaFree(dy));
        free(x);
        free(y);
    }
    printf("%s\n", solved ? "SOLVED"
                          : "NOT YET: softmax(x / T) must match the float64 reference; "
                            "the BAD lines show where it does not");
    return solved ? 0 : 1;
}
