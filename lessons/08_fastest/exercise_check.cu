/* Checker for exercise 8 (do not edit): softmax_rows_per_warp against the
 * float64 reference, outputs poisoned first, on row counts that are and
 * are not multiples of 4 (a warp's last rows past the end), rows shorter
 * than the lanes, and special rows (all -inf, NaN, +inf) next to ordinary
 * ones, which must stay unaffected. Exit 0 when solved, 1 if not, 3
 * without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "exercise.h"

static int check(const char *what, const float *x, long long rows, long long cols)
{
    const size_t bytes = (size_t)(rows * cols) * sizeof(float);
    float *y = (float *)malloc(bytes), *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN until written */
    softmax_rows_per_warp(dx, dy, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
    verify_report r;
    char desc[512];
    int ok = verify_softmax(x, y, rows, cols, ref_row_softmax, NULL, verify_rtol(cols), &r);
    verify_describe(&r, desc, sizeof desc);
    printf("  %-4s %-40s %s\n", ok ? "ok" : "BAD", what, desc);
    verify_wrong_print(&r.wrong, "y", "       ");
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    free(y);
    return ok;
}

int main(void)
{
    require_gpu("exercise8");
    const long long shapes[][2] = {{64, 128}, {33, 100}, {7, 5}, {5, 1}, {1000, 37}};
    int solved = 1;
    char what[96];
    printf("Exercise 8: %d lanes per row, %d rows per warp\n", EX_LANES, 32 / EX_LANES);
    for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
        const long long rows = shapes[s][0], cols = shapes[s][1];
        float *x = (float *)malloc((size_t)(rows * cols) * sizeof(float));
        inputs_fill(x, rows, cols, INPUT_NORMAL, 80 + s);
        snprintf(what, sizeof what, "%lld x %lld", rows, cols);
        solved &= check(what, x, rows, cols);
        free(x);
    }

    /* 8 rows of 20: rows 1, 2, 5 special, their warp neighbours ordinary. */
    enum { R = 8, N = 20 };
    float x[R * N];
    inputs_fill(x, R, N, INPUT_NORMAL, 88);
    for (int j = 0; j < N; j++) {
        x[1 * N + j] = -INFINITY;
        if (j == 3) x[2 * N + j] = NAN;
    }
    x[5 * N + 7] = INFINITY;
    solved &= check("8 x 20, all -inf, NaN and +inf rows", x, R, N);

    printf("%s\n", solved ? "SOLVED"
                          : "NOT YET: every row must match its float64 softmax; "
                            "the BAD lines show where it does not");
    return solved ? 0 : 1;
}
