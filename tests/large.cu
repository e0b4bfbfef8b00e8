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
 * second shape checks it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "verify.h"
#include "kernels.h"
#include "test.h"

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

static void run_shape(long long rows, long long cols)
{
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

int main(void)
{
    require_gpu("test-large");
    run_shape(1, (1LL << 31) + 17);
    run_shape((1LL << 17) + 1, (1LL << 14) + 3);
    return test_exit_status();
}
