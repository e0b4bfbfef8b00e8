/* Checker for exercise 4 (do not edit): softmax_warp_fixed against the
 * float64 reference for 32, 64, 128, 256 and 1024 threads per block, on
 * shapes around the warp size and longer rows, normal and special values,
 * outputs poisoned with NaN first. Exit 0 when solved, 1 if not, 3 without
 * a GPU. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "exercise.h"

int main(void)
{
    require_gpu("exercise4");
    const int threads[] = {32, 64, 128, 256, 1024};
    const long long shapes[][2] = {{1, 1}, {5, 31}, {3, 33}, {64, 1000}, {7, 1025}, {2, 4099}};
    const input_kind kinds[] = {INPUT_NORMAL, INPUT_SPECIAL};
    int solved = 1;
    printf("Exercise 4: the attention softmax notes' kernel, fixed for blocks of more than one warp\n");
    for (int t = 0; t < 5; t++) {
        int ok_all = 1;
        char first_bad[2048] = "";
        for (int s = 0; s < 6; s++) {
            long long rows = shapes[s][0], cols = shapes[s][1];
            size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(float);
            float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes), *dx, *dy;
            CUDA_CHECK(cudaMalloc(&dx, bytes));
            CUDA_CHECK(cudaMalloc(&dy, bytes));
            for (int k = 0; k < 2; k++) {
                inputs_fill(x, rows, cols, kinds[k], 400 + 10 * s + k);
                CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
                CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN until written */
                softmax_warp_fixed(dx, dy, rows, cols, threads[t], 0);
                CUDA_CHECK_LAUNCH();
                CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
                verify_report r;
                if (!verify_softmax(x, y, rows, cols, ref_row_softmax, NULL, verify_rtol(cols), &r)) {
                    if (ok_all) {
                        char desc[512], wrong[1024];
                        verify_describe(&r, desc, sizeof desc);
                        verify_wrong_format(&r.wrong, "y", "       ", wrong, sizeof wrong);
                        snprintf(first_bad, sizeof first_bad, "%s %lld x %lld: %s\n%s", input_kind_name(kinds[k]),
                                 rows, cols, desc, wrong);
                    }
                    ok_all = 0;
                }
            }
            CUDA_CHECK(cudaFree(dx));
            CUDA_CHECK(cudaFree(dy));
            free(x);
            free(y);
        }
        printf("  %-4s %4d threads per block%s%s", ok_all ? "ok" : "BAD", threads[t],
               ok_all ? "\n" : "; first failure, ", first_bad);
        solved &= ok_all;
    }
    printf("%s\n", solved ? "SOLVED"
                          : "NOT YET: every block size must match the float64 reference; the BAD lines show where "
                            "it does not");
    return solved ? 0 : 1;
}
