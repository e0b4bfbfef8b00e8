/* Checker for exercise 9 (do not edit): softmax_half_row in float16,
 * bfloat16 and float32 against the float64 reference on the 16-bit input
 * widened exactly, every element within the one-rounding tolerance
 * (common/verify.h: half an ulp of the storage type plus float32's error),
 * outputs poisoned first; ordinary rows of several lengths, and special
 * rows: the largest finite values, -inf entries, a row of only -inf, NaN,
 * +inf. Exit 0 when solved, 1 if not, 3 without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "verify.h"
#include "exercise.h"

/* x: rows x cols floats, narrowed to t here (round to nearest even). */
static int check(const char *what, const float *x, long long rows, long long cols, dtype t)
{
    const size_t n = (size_t)(rows * cols), bytes = n * (size_t)dtype_size(t);
    void *hx = malloc(bytes), *hy = malloc(bytes), *dx, *dy;
    float *xw = (float *)malloc(n * sizeof(float)), *yw = (float *)malloc(n * sizeof(float));
    storage_narrow(x, hx, n, t);
    storage_widen(hx, xw, n, t); /* the values the kernel reads, exactly */
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMemcpy(dx, hx, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN in all three types until written */
    softmax_half_row(dx, dy, rows, cols, t, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(hy, dy, bytes, cudaMemcpyDeviceToHost));
    storage_widen(hy, yw, n, t);
    verify_report r;
    char desc[512], label[128];
    int ok = verify_softmax_atol(xw, yw, rows, cols, ref_row_softmax, NULL,
                                 verify_rtol_storage(t, verify_rtol(cols)), verify_atol_storage(t), &r);
    verify_describe(&r, desc, sizeof desc);
    snprintf(label, sizeof label, "%-5s %s", dtype_name(t), what);
    printf("  %-4s %-40s %s\n", ok ? "ok" : "BAD", label, desc);
    verify_wrong_print(&r.wrong, "y", "       ");
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    free(hx);
    free(hy);
    free(xw);
    free(yw);
    return ok;
}

int main(void)
{
    require_gpu("exercise9");
    const long long shapes[][2] = {{64, EX_MAX_COLS}, {33, 1000}, {7, 5}, {3, 1}, {100, 300}};
    const dtype types[] = {DTYPE_F16, DTYPE_BF16, DTYPE_F32};
    int solved = 1;
    char what[96];
    printf("Exercise 9: one block of %d threads per row, %d elements each, round once\n", EX_BLOCK, EX_PER_THREAD);
    for (int ti = 0; ti < 3; ti++) {
        for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
            const long long rows = shapes[s][0], cols = shapes[s][1];
            float *x = (float *)malloc((size_t)(rows * cols) * sizeof(float));
            inputs_fill(x, rows, cols, INPUT_NORMAL, 90 + s);
            snprintf(what, sizeof what, "%lld x %lld", rows, cols);
            solved &= check(what, x, rows, cols, types[ti]);
            free(x);
        }
        /* Special rows, each beside ordinary ones: the largest finite
         * float16 (65504, also ordinary for bfloat16) and its negative,
         * -inf among finite values, only -inf (NaN out), a NaN, +inf. */
        enum { R = 6, N = 40 };
        float x[R * N];
        inputs_fill(x, R, N, INPUT_NORMAL, 99);
        x[0 * N + 3] = 65504.0f;
        x[0 * N + 7] = 65504.0f;
        x[0 * N + 9] = -65504.0f;
        for (int j = 0; j < N; j += 2) x[1 * N + j] = -INFINITY;
        for (int j = 0; j < N; j++) x[2 * N + j] = -INFINITY;
        x[3 * N + 5] = NAN;
        x[4 * N + 11] = INFINITY;
        solved &= check("special rows (65504, -inf, NaN, +inf)", x, R, N, types[ti]);
    }
    printf("%s\n", solved ? "Solved: every element within one rounding of the exact softmax."
                          : "NOT YET: every element must be within one rounding of the exact softmax; the BAD lines "
                            "show where it is not");
    return solved ? 0 : 1;
}
