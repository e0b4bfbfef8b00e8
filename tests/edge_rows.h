/* Checks shared by tests/test_lesson3.cu and tests/test_lesson4.cu, for
 * kernels that take any row length (one block or one warp per row):
 *
 *   edge_check     row lengths around the warp and block sizes that the
 *                  kernel matrix (test_kernels.cu) does not have, on normal
 *                  rows and on hand-made special rows: all -inf (NaN), a
 *                  NaN (NaN), only NaN (NaN), +inf (NaN), all equal, one
 *                  finite value among -inf, very negative rows, the max in
 *                  the last element;
 *   big_check      64-bit offsets: M x N > 2^31, or one row longer than
 *                  2^31 elements, on the GPU only (8 GiB per tensor).
 *
 * Each test prints one PASS/FAIL/SKIP line (test.h). */
#ifndef TESTS_EDGE_ROWS_H
#define TESTS_EDGE_ROWS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "verify.h"
#include "../tests/test.h"

#define EDGE_SPECIAL_ROWS 9

/* Row r of a special set, n elements. The float64 reference decides what
 * each row's answer is (NaN for the first four, as PyTorch). */
static inline void edge_special_row(float *x, long long n, int r, unsigned long long seed)
{
    inputs_fill(x, 1, n, INPUT_NORMAL, seed + (unsigned long long)r);
    switch (r) {
    case 0: for (long long j = 0; j < n; j++) x[j] = -INFINITY; break;
    case 1: x[n / 2] = NAN; break;
    case 2: for (long long j = 0; j < n; j++) x[j] = NAN; break;
    case 3: x[n - 1] = INFINITY; break;
    case 4: for (long long j = 0; j < n; j++) x[j] = 7.0f; break;
    case 5: for (long long j = 0; j < n; j++) x[j] = j == n - 1 ? -5.0f : -INFINITY; break;
    case 6: for (long long j = 0; j < n; j++) x[j] = -1000.0f - (float)(j % 5); break;
    case 7: x[n - 1] = 100.0f; break; /* a max that only the last thread sees */
    default: break;                   /* plain normal row */
    }
}

/* Runs k on host x (rows x cols), output poisoned with NaN; checks every
 * element against the float64 reference. */
static inline int edge_run(softmax_fn k, const float *x, long long rows, long long cols, char *desc,
                    size_t desclen)
{
    size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    float *y = (float *)malloc(bytes), *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, bytes));
    k(dx, dy, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    verify_report r;
    int ok = verify_softmax(x, y, rows, cols, ref_row_softmax, NULL, verify_rtol(cols), &r);
    verify_describe(&r, desc, desclen);
    free(y);
    return ok;
}

static inline void edge_check(const char *kname, softmax_fn k, int have_gpu)
{
    static const long long NS[] = {2, 3, 31, 32, 33, 63, 255, 256, 257, 1023, 1024, 4095};
    char name[256], desc[512];
    for (size_t i = 0; i < sizeof NS / sizeof NS[0]; i++) {
        long long n = NS[i];
        for (int set = 0; set < 2; set++) {
            long long rows = set ? EDGE_SPECIAL_ROWS : 5;
            snprintf(name, sizeof name, "%s matches the float64 reference: %lldx%lld %s", kname,
                     rows, n, set ? "special rows (NaN, all -inf, +inf, equal, ...)" : "normal");
            if (!have_gpu) {
                test_skip(name, "no GPU");
                continue;
            }
            float *x = (float *)malloc((size_t)rows * (size_t)n * sizeof(float));
            if (set)
                for (int r = 0; r < rows; r++) edge_special_row(x + r * n, n, r, 500 + (unsigned)n);
            else
                inputs_fill(x, rows, n, INPUT_NORMAL, 700 + (unsigned long long)n);
            int ok = edge_run(k, x, rows, n, desc, sizeof desc);
            test_expect(ok, name, "%s", desc);
            free(x);
        }
    }
}

/* 64-bit offsets. The input is all zeros except the last T elements of
 * the last row (T = min(4096, cols / 2)), which are 100: every answer is
 * known without an 8 GiB host copy. Rows of zeros give exactly 1 / cols;
 * in the last row each 100 gives 1 / T (exp(0) / T, since the zeros add
 * ~e^-100 each) and each 0 gives ~e^-100 / T, below 1e-30 (compared
 * absolutely, verify.h). A kernel with a 32-bit offset or index reads and
 * writes the wrong places (or faults): outputs stay NaN (poisoned) or are
 * wrong; one that misses the elements past 2^31 of a long row gets a sum
 * of fewer than T terms. The arithmetic is exact here, so the tolerance is
 * 1e-5, not verify_rtol(2^31) = 1.1e-2.
 *
 * Checked: the first, middle and last 4096 elements of rows 0, rows / 2,
 * rows - 2 and rows - 1, and the 4096 around element 2^31 of a row longer
 * than that. GPU only (compiled by nvcc): a CPU would take hours. Skipped
 * when the GPU lacks the memory. */
#define BIG_SEG 4096LL

static inline int big_segment_ok(const float *dy, long long rows, long long cols, long long tail,
                          long long r, long long j0, char *why, size_t whylen)
{
    static float y[BIG_SEG];
    if (j0 < 0) j0 = 0;
    long long len = cols - j0 < BIG_SEG ? cols - j0 : BIG_SEG;
    if (len <= 0) return 1;
    CUDA_CHECK(cudaMemcpy(y, dy + r * cols + j0, (size_t)len * sizeof(float),
                          cudaMemcpyDeviceToHost));
    double e = exp(-100.0), d = (double)tail + (double)(cols - tail) * e;
    for (long long i = 0; i < len; i++) {
        long long j = j0 + i;
        double want = r < rows - 1 ? 1.0 / (double)cols : (j >= cols - tail ? 1.0 / d : e / d);
        if (!verify_element(y[i], want, 1e-5)) {
            snprintf(why, whylen, "y[%lld][%lld] = %g, want %g", r, j, y[i], want);
            return 0;
        }
    }
    return 1;
}

static inline void big_check(const char *kname, softmax_fn k, long long rows, long long cols,
                      int have_gpu)
{
    char name[256], why[256] = "";
    snprintf(name, sizeof name, "%s handles 64-bit offsets: %lld x %lld (%s)", kname, rows, cols,
             rows == 1 ? "one row longer than 2^31 elements" : "M x N > 2^31");
#if !defined(__NVCC__)
    (void)k;
    (void)have_gpu;
    test_skip(name, "GPU only (8 GiB per tensor): not on the CPU path");
#else
    if (!have_gpu) {
        test_skip(name, "no GPU");
        return;
    }
    size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(float), free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (2 * bytes + (1ULL << 30) > free_b) {
        test_skip(name, "not enough GPU memory");
        return;
    }
    long long tail = cols / 2 < BIG_SEG ? cols / 2 : BIG_SEG;
    static float hundreds[BIG_SEG];
    for (long long i = 0; i < tail; i++) hundreds[i] = 100.0f;
    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMemset(dx, 0, bytes));
    CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN until written */
    CUDA_CHECK(cudaMemcpy(dx + n - tail, hundreds, (size_t)tail * sizeof(float),
                          cudaMemcpyHostToDevice));
    k(dx, dy, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());

    const long long check_rows[] = {0, rows / 2, rows - 2, rows - 1};
    const long long two31 = 1LL << 31;
    int ok = 1;
    for (int i = 0; i < 4 && ok; i++) {
        long long r = check_rows[i];
        if (r < 0) continue;
        ok = big_segment_ok(dy, rows, cols, tail, r, 0, why, sizeof why) &&
             big_segment_ok(dy, rows, cols, tail, r, cols / 2, why, sizeof why) &&
             big_segment_ok(dy, rows, cols, tail, r, cols - BIG_SEG, why, sizeof why) &&
             (cols <= two31 ||
              big_segment_ok(dy, rows, cols, tail, r, two31 - BIG_SEG / 2, why, sizeof why));
    }
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    test_expect(ok, name, "%s", why);
#endif
}

#endif
