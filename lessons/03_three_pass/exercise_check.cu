/* Checker for exercise 3 (do not edit): LogSumExp per row against a
 * float64 reference computed here on the CPU (ref_logsumexp_row in
 * common/reference.c), on random rows of several shapes and kinds and on
 * hand-made special rows, output poisoned with NaN first. Exit 0 when
 * solved, 1 if not, 3 without a GPU.
 *
 * Tolerance: an error d in the float32 sum becomes log(s (1 + d)) - log(s)
 * ~ d in lse, an absolute error, so the sum's tolerance verify_rtol(cols)
 * is used as an absolute one; plus 4 float32 ulps of |lse| for rounding
 * the result itself (lse ~ 3000 on large inputs, where one ulp is 2.4e-4). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "exercise.h"

static int lse_ok(float got, double want, long long cols)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return (double)got == want;
    double tol = verify_rtol(cols) + 4.0 * FLT_EPSILON * fabs(want);
    return fabs((double)got - want) <= tol; /* false for a NaN or inf got */
}

/* Runs the learner's function on host rows x; returns the number of wrong
 * rows and prints the first few. */
static long long check_rows(const char *what, const float *x, long long rows, long long cols)
{
    size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    float *dx, *dl, *lse = (float *)malloc((size_t)rows * sizeof(float));
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dl, (size_t)rows * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dl, 0xFF, (size_t)rows * sizeof(float))); /* NaN until written */
    logsumexp_rows(dx, dl, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(lse, dl, (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost));

    verify_wrong w; /* lse: rows x 1 */
    verify_wrong_init(&w, rows, 1);
    for (long long r = 0; r < rows; r++) {
        double want = ref_logsumexp_row(x + r * cols, cols);
        if (!lse_ok(lse[r], want, cols)) verify_wrong_add(&w, r, 0, want, lse[r]);
    }
    printf("  %-4s %-28s %lld rows\n", w.count ? "BAD" : "ok", what, rows);
    verify_wrong_print(&w, "lse", "       ");
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dl));
    free(lse);
    return w.count;
}

int main(void)
{
    require_gpu("exercise3");
    printf("Exercise 3: LogSumExp per row\n");
    long long bad = 0;

    /* Hand-made rows: ordinary, lesson 1's overflow, and the special rows. */
    const float inf = INFINITY, nan = NAN;
    const float special[][4] = {
        {1, 2, 3, 4},               /* 4.4401897 */
        {1000, 1001, 1002, -inf},   /* 1002.40761: exp(1002) overflows float */
        {-inf, -inf, -inf, -inf},   /* log(0) = -inf, not NaN */
        {1, nan, 2, 3},             /* NaN */
        {1, inf, 2, 3},             /* +inf */
        {nan, nan, nan, nan},       /* NaN (fmaxf skips NaN: the max is -inf) */
        {-inf, nan, -inf, -inf},    /* NaN */
        {inf, 1, nan, 2},           /* NaN: NaN anywhere wins, even over +inf */
        {-1000, -1001, -1002, -1003}, /* -999.5598: exp(-1000) is 0 in float */
    };
    bad += check_rows("hand-made rows (1 x 4 each)", &special[0][0], 9, 4);

    const long long shapes[][2] = {{1, 1}, {4, 31}, {64, 1000}, {7, 1025}, {3, 4097}, {1, 100003}};
    const input_kind kinds[] = {INPUT_NORMAL, INPUT_LARGE, INPUT_SPECIAL};
    for (int s = 0; s < 6; s++) {
        long long rows = shapes[s][0], cols = shapes[s][1];
        float *x = (float *)malloc((size_t)rows * (size_t)cols * sizeof(float));
        for (int k = 0; k < 3; k++) {
            char what[64];
            snprintf(what, sizeof what, "%lld x %lld %s", rows, cols, input_kind_name(kinds[k]));
            inputs_fill(x, rows, cols, kinds[k], 300 + 10 * s + k);
            bad += check_rows(what, x, rows, cols);
        }
        free(x);
    }
    printf("%s\n", bad ? "NOT YET: lse must match log(sum(exp(x))) in float64; the BAD lines show where it does not"
                     : "SOLVED");
    return bad ? 1 : 0;
}
