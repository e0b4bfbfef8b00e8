/* make test-large (GPU only): every kernel is right when the matrix holds
 * more than 2^31 elements, where 32-bit index arithmetic wraps:
 *
 *   1 x (2^31 + 17)           one row longer than INT_MAX
 *   (2^17 + 1) x (2^14 + 3)   2^31 + 2^18 ... elements in short-ish rows
 *
 * Each needs 2 x 8.6 GB of GPU memory and as much host memory. To keep the
 * host side fast, inputs take 1024 distinct values, x = k / 128 - 4 with k a
 * hash of the 64-bit element index: a wrapped index reads a different value,
 * so the check catches it. The float64 reference then needs a histogram per
 * row instead of 2^31 calls to exp, and every element is checked.
 *
 * One-thread-per-row kernels (lessons 1-2) are skipped on the single long
 * row, where they would run for minutes; their indexing is 64-bit and the
 * second shape checks it.
 *
 * Lesson 10's four kernels (run_training) take the same shapes and inputs
 * and lesson 10's own rules (train_check.h): every element of the long
 * row, and of 1024 rows spread over the second shape (its last row, past
 * 2^31 elements, included); every row's loss. They need 4 x 8.6 GB of
 * GPU and of host memory.
 *
 * Usage: large [N]: only lesson N's kernels (exit 2 for anything else,
 * a lesson without kernels here included). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "verify.h"
#include "kernels.h"
#include "test.h"
#include "../lessons/08_fastest/softmax_fastest.h"
#include "../lessons/10_training/training.h"
#include "train_check.h"

#define LEVELS 1024

static float level_value(int k) { return (float)k / 128.0f - 4.0f; } /* exact in float */

static int level_of(unsigned long long i)
{
    i ^= i >> 33;
    i *= 0xff51afd7ed558ccdULL;
    i ^= i >> 33;
    return (int)(i & (LEVELS - 1));
}

/* Checks row r of y against the exact softmax of the row: y[j] must be
 * e^(x[j] - m) / d, with m and d from the row's histogram in float64. */
static long long check_row(const float *x, const float *y, long long cols, rtol_fn rtol,
                           double *worst)
{
    static long long count[LEVELS];
    double p[LEVELS];
    memset(count, 0, sizeof count);
    for (long long j = 0; j < cols; j++) count[(int)((x[j] + 4.0f) * 128.0f)]++;
    int top = LEVELS - 1;
    while (count[top] == 0) top--;
    double d = 0;
    for (int k = 0; k < LEVELS; k++) {
        p[k] = exp((double)level_value(k) - (double)level_value(top));
        d += (double)count[k] * p[k];
    }
    for (int k = 0; k < LEVELS; k++) p[k] /= d;
    double tol = rtol(cols);
    long long bad = 0;
    for (long long j = 0; j < cols; j++) {
        double want = p[(int)((x[j] + 4.0f) * 128.0f)];
        double err = fabs((double)y[j] - want) / want;
        if (!(err <= tol)) bad++; /* NaN counts as bad */
        if (err > *worst) *worst = err; /* NaN never raises it */
    }
    return bad;
}

static int only_lesson; /* 0: every lesson */

static void run_shape(long long rows, long long cols)
{
    int any = 0;
    for (int k = 0; k < NKERNELS; k++) any |= !only_lesson || KERNELS[k].lesson == only_lesson;
    if (!any) return;
    size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(float);
    float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes), *dx, *dy;
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    char name[200];
    if (!x || !y || 2 * bytes > free_b) {
        for (int k = 0; k < NKERNELS; k++) {
            snprintf(name, sizeof name, "lesson%d %s is right at %lld x %lld", KERNELS[k].lesson,
                     KERNELS[k].name, rows, cols);
            test_skip(name, !x || !y ? "not enough host memory" : "not enough GPU memory");
        }
        free(x);
        free(y);
        return;
    }
    for (size_t i = 0; i < n; i++) x[i] = level_value(level_of(i));
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    for (int k = 0; k < NKERNELS; k++) {
        const kernel *K = &KERNELS[k];
        if (only_lesson && K->lesson != only_lesson) continue;
        snprintf(name, sizeof name, "lesson%d %s is right at %lld x %lld (%.2f x 2^31 elements)",
                 K->lesson, K->name, rows, cols, (double)n / 2147483648.0);
        if (K->max_cols && cols > K->max_cols) {
            test_skip(name, "longer than this kernel's rows (max_cols in tests/kernels.h); its lesson sends such rows to another kernel");
            continue;
        }
        CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN until written */
        K->run(dx, dy, rows, cols, 0);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
        long long bad = 0, first_bad_row = -1;
        double worst = 0;
        for (long long r = 0; r < rows; r++) {
            long long b = check_row(x + r * cols, y + r * cols, cols, K->rtol, &worst);
            if (b && first_bad_row < 0) first_bad_row = r;
            bad += b;
        }
        test_expect(bad == 0, name, "%lld of %zu elements wrong (first in row %lld), max rel err %.1e", bad, n,
                    first_bad_row, worst);
        if (bad == 0) printf("     every element checked, max rel err %.1e\n", worst);
    }
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    free(x);
    free(y);
}

/* ---- lesson 10 ------------------------------------------------------------ */

/* One kernel's verdict by train_check.h's rules. */
static void training_verdict(const char *kernel_name, long long rows, long long cols, int ok, const train_report *r)
{
    char name[200], what[400];
    snprintf(name, sizeof name, "lesson10 %s is right at %lld x %lld (%.2f x 2^31 elements)", kernel_name, rows, cols,
             (double)rows * (double)cols / 2147483648.0);
    train_describe(r, rows, cols, what, sizeof what);
    test_expect(ok, name, "%s", what);
    if (ok) printf("     %s\n", what);
}

/* The backward (y = softmax(x) from lesson 8, dy a second hash of the same
 * levels), log-softmax, the loss and the classifier (the sum, in place,
 * last), each output poisoned with NaN before its run. */
static void run_training(long long rows, long long cols)
{
    static const char *NAMES[4] = {"log_softmax_forward", "cross_entropy_forward", "softmax_backward",
                                   "classifier_fused"};
    const size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(float);
    float *hx = (float *)malloc(bytes), *hy = (float *)malloc(bytes), *hdy = (float *)malloc(bytes);
    float *hout = (float *)malloc(bytes), *hl = (float *)malloc(((size_t)rows + 1) * sizeof(float));
    int *ht = (int *)malloc((size_t)rows * sizeof(int));
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (!hx || !hy || !hdy || !hout || !hl || !ht || 4 * bytes + (size_t)rows * 8 + 4096 > free_b) {
        char name[200];
        for (int k = 0; k < 4; k++) {
            snprintf(name, sizeof name, "lesson10 %s is right at %lld x %lld", NAMES[k], rows, cols);
            test_skip(name, !hx || !hy || !hdy || !hout || !hl || !ht ? "not enough host memory"
                                                                        : "not enough GPU memory");
        }
        free(hx), free(hy), free(hdy), free(hout), free(hl), free(ht);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        hx[i] = level_value(level_of(i));
        hdy[i] = level_value(level_of(i ^ 0x5bd1e9955bd1e995ULL));
    }
    train_make_targets(ht, rows, cols, 1, TRAIN_IGNORE_INDEX);
    if (rows == 1) ht[0] = INT_MAX - 1; /* column 2^31 - 2: targets are ints */
    float *d_x, *d_y, *d_dy, *d_out;
    int *d_t;
    CUDA_CHECK(cudaMalloc(&d_x, bytes));
    CUDA_CHECK(cudaMalloc(&d_y, bytes));
    CUDA_CHECK(cudaMalloc(&d_dy, bytes));
    CUDA_CHECK(cudaMalloc(&d_out, bytes));
    CUDA_CHECK(cudaMalloc(&d_t, (size_t)rows * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(d_x, hx, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_dy, hdy, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_t, ht, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice));
    train_report r;

    /* log-softmax */
    CUDA_CHECK(cudaMemset(d_out, 0xFF, bytes)); /* NaN until written */
    log_softmax_forward(d_x, d_out, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(hout, d_out, bytes, cudaMemcpyDeviceToHost));
    train_report_init(&r);
    training_verdict(NAMES[0], rows, cols, train_check_log_softmax(hx, hout, rows, cols, &r), &r);

    /* the loss */
    CUDA_CHECK(cudaMemset(d_out, 0xFF, (size_t)rows * sizeof(float)));
    cross_entropy_forward(d_x, d_t, d_out, rows, cols, TRAIN_IGNORE_INDEX, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(hl, d_out, (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost));
    train_report_init(&r);
    training_verdict(NAMES[1], rows, cols, train_check_loss(hx, ht, hl, rows, cols, TRAIN_IGNORE_INDEX, &r), &r);

    /* the backward: y = softmax(x), so that <y, dy> is a sum of probabilities */
    softmax_fastest(d_x, d_y, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(hy, d_y, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemset(d_out, 0xFF, bytes));
    softmax_backward(d_y, d_dy, d_out, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(hout, d_out, bytes, cudaMemcpyDeviceToHost));
    train_report_init(&r);
    training_verdict(NAMES[2], rows, cols, train_check_backward(hy, hdy, hout, rows, cols, &r), &r);

    /* the classifier, in place over x: the gradient, every row's loss and their sum */
    CUDA_CHECK(cudaMemset(d_out, 0xFF, ((size_t)rows + 1) * sizeof(float)));
    classifier_fused(d_x, d_t, d_out, d_out + rows, rows, cols, TRAIN_IGNORE_INDEX, TRAIN_SUM, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(hout, d_x, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hl, d_out, ((size_t)rows + 1) * sizeof(float), cudaMemcpyDeviceToHost));
    train_report_init(&r);
    training_verdict(NAMES[3], rows, cols,
                     train_check_classifier(hx, ht, hout, hl, hl[rows], rows, cols, TRAIN_IGNORE_INDEX, 0, DTYPE_F32,
                                            &r),
                     &r);

    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_y));
    CUDA_CHECK(cudaFree(d_dy));
    CUDA_CHECK(cudaFree(d_out));
    CUDA_CHECK(cudaFree(d_t));
    train_release();
    free(hx), free(hy), free(hdy), free(hout), free(hl), free(ht);
}

int main(int argc, char **argv)
{
    if (argc == 2) {
        char *end;
        const long v = strtol(argv[1], &end, 10);
        only_lesson = *end || end == argv[1] || v < 1 || v > 99 ? -1 : (int)v;
        int known = only_lesson == 10; /* lesson 10's kernels are run_training's */
        for (int k = 0; k < NKERNELS; k++) known |= KERNELS[k].lesson == only_lesson;
        if (!known) only_lesson = -1;
    }
    if (argc > 2 || only_lesson < 0) {
        fprintf(stderr, "large: bad argument '%s' (usage: large [LESSON], a lesson with kernels here)\n", argv[argc - 1]);
        return 2;
    }
    require_gpu("test-large");
    const long long SHAPES[2][2] = {{1, (1LL << 31) + 17}, {(1LL << 17) + 1, (1LL << 14) + 3}};
    for (int s = 0; s < 2; s++) {
        run_shape(SHAPES[s][0], SHAPES[s][1]);
        if (!only_lesson || only_lesson == 10) run_training(SHAPES[s][0], SHAPES[s][1]);
    }
    return test_exit_status();
}
