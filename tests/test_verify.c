/* The checker checked: it must accept a correct output and reject every
 * way a kernel can be wrong, above all the NaN that a naive
 * `fabs(y - want) > tol` comparison lets through. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "reference.h"
#include "test.h"
#include "verify.h"

/* The reference rounded to float: what a perfect float32 kernel returns. */
static void perfect_output(const float *x, float *y, long long rows, long long cols)
{
    double *want = malloc((size_t)cols * sizeof *want);
    for (long long i = 0; i < rows; i++) {
        ref_softmax_row(x + i * cols, want, cols);
        for (long long j = 0; j < cols; j++) y[i * cols + j] = (float)want[j];
    }
    free(want);
}

/* Bits 0xFFFFFFFF, what a cudaMemset(0xFF) leaves: a NaN. */
static float poison(void)
{
    float f;
    memset(&f, 0xFF, sizeof f);
    return f;
}

#define R 64
#define C 1000
static float X[R * C], Y[R * C];

static void test_accepts_reference(void)
{
    const char *name = "verify: accepts the float64 reference rounded to float32, every input kind";
    for (int k = 0; k < 4; k++) {
        inputs_fill(X, R, C, (input_kind)k, 5 + k);
        perfect_output(X, Y, R, C);
        verify_report r;
        if (!verify_softmax(X, Y, R, C, ref_row_softmax, NULL, verify_rtol(C), &r) || r.checked != R * C ||
            r.rows_checked != R || r.sampled || r.bad != 0 || r.bad_row != -1) {
            char d[300];
            verify_describe(&r, d, sizeof d);
            test_fail(name, "%s: %s", input_kind_name((input_kind)k), d);
            return;
        }
    }
    test_pass(name);
}

static void test_nan(void)
{
    double want = 0.25, tol = 1e-6;
    float y = NAN;
    /* The classic bug: every comparison with NaN is false, so a checker
     * that counts `err > tol` as bad counts NaN as good. */
    int naive_flags_it = fabs((double)y - want) > tol;
    int ok = !verify_element(y, want, verify_rtol(C));
    test_expect(!naive_flags_it && ok,
                "verify: rejects NaN where the reference is finite (which `fabs(y - want) > tol` misses)",
                "naive check flags it: %d, verify_element rejects it: %d", naive_flags_it, ok);

    test_expect(!verify_element(INFINITY, 0.25, 1e-3) && !verify_element(-INFINITY, 0.25, 1e-3) &&
                    !verify_element(INFINITY, 1e300, 1.0),
                "verify: rejects +inf and -inf where the reference is finite (even a huge one)", "accepted");

    test_expect(verify_element(NAN, NAN, 1e-3) && !verify_element(0.25f, NAN, 1e-3) &&
                    !verify_element(0.0f, NAN, 1e-3),
                "verify: where the reference is NaN, only NaN passes", "wrong");

    test_expect(verify_element(INFINITY, INFINITY, 1e-3) && verify_element(-INFINITY, -INFINITY, 1e-3) &&
                    !verify_element(-INFINITY, INFINITY, 1e-3) && !verify_element(FLT_MAX, INFINITY, 1e-3) &&
                    !verify_element(NAN, -INFINITY, 1e-3),
                "verify: where the reference is +-inf, only the same infinity passes", "wrong");
}

static void test_poison(void)
{
    inputs_fill(X, R, C, INPUT_NORMAL, 9);
    perfect_output(X, Y, R, C);
    Y[3 * C + 7] = poison();
    verify_report r;
    int ok = verify_softmax(X, Y, R, C, ref_row_softmax, NULL, verify_rtol(C), &r);
    char d[300];
    verify_describe(&r, d, sizeof d);
    test_expect(!ok && r.bad == 1 && r.bad_row == 3 && r.bad_col == 7 && strstr(d, "first bad y[3][7] = nan"),
                "verify: rejects one unwritten (0xFF-poisoned) element and names it", "ok %d: %s", ok, d);

    perfect_output(X, Y, R, C);
    Y[R * C - 1] = 0.0f; /* never written, memory that happened to be 0 */
    ok = verify_softmax(X, Y, R, C, ref_row_softmax, NULL, verify_rtol(C), &r);
    test_expect(!ok && r.bad == 1 && r.bad_row == R - 1 && r.bad_col == C - 1,
                "verify: rejects a single zero left in the last element", "ok %d bad %lld", ok, r.bad);
}

static void test_tolerance_edge(void)
{
    double rtol = verify_rtol(C), want = 0.01;
    /* the float just inside and just outside want * (1 +- rtol) */
    float in = (float)(want * (1 + 0.9 * rtol)), out = (float)(want * (1 + 1.1 * rtol));
    float in_lo = (float)(want * (1 - 0.9 * rtol)), out_lo = (float)(want * (1 - 1.1 * rtol));
    test_expect(verify_element(in, want, rtol) && verify_element(in_lo, want, rtol) &&
                    !verify_element(out, want, rtol) && !verify_element(out_lo, want, rtol),
                "verify: accepts an error of 0.9 x tolerance and rejects 1.1 x tolerance, both signs", "wrong");

    /* the same through verify_softmax: one element nudged just outside */
    inputs_fill(X, R, C, INPUT_UNIFORM, 10);
    perfect_output(X, Y, R, C);
    double w[C];
    ref_softmax_row(X + 5 * C, w, C);
    Y[5 * C + 9] = (float)(w[9] * (1 + 0.9 * rtol));
    verify_report r;
    int ok_in = verify_softmax(X, Y, R, C, ref_row_softmax, NULL, verify_rtol(C), &r);
    double rel_in = r.max_rel;
    Y[5 * C + 9] = (float)(w[9] * (1 + 1.1 * rtol));
    int ok_out = verify_softmax(X, Y, R, C, ref_row_softmax, NULL, verify_rtol(C), &r);
    test_expect(ok_in && !ok_out && rel_in > 0.8 * rtol && r.max_rel > rtol && r.bad_row == 5 && r.bad_col == 9,
                "verify: a whole matrix passes with one element 0.9 x tolerance off, fails at 1.1 x",
                "in %d out %d, max rel %g / %g, rtol %g", ok_in, ok_out, rel_in, r.max_rel, rtol);

    /* atol: outputs below 1e-30 may be flushed to 0, larger ones may not */
    test_expect(verify_element(0.0f, 1e-40, rtol) && verify_element(0.0f, 5e-31, rtol) &&
                    !verify_element(0.0f, 1e-20, rtol) && !verify_element(1e-20f, 0.0, rtol),
                "verify: outputs below 1e-30 may be flushed to 0, larger ones may not", "wrong");

    double r1 = verify_rtol(1), r2 = verify_rtol(1 << 20);
    test_expect(fabs(r1 - (2e-5 + 2 * FLT_EPSILON)) < 1e-15 && fabs(r2 - (2e-5 + 2 * FLT_EPSILON * 1024)) < 1e-15,
                "verify: rtol is 2e-5 + 2 FLT_EPSILON sqrt(cols)", "rtol(1) %g, rtol(2^20) %g", r1, r2);
    double s1 = verify_rtol_sequential(1), s2 = verify_rtol_sequential(100003);
    test_expect(fabs(s1 - 2e-5) < 1e-15 && fabs(s2 - (2e-5 + 100002 * ldexp(1, -24))) < 1e-15,
                "verify: the sequential-sum rtol is 2e-5 + (cols - 1) 2^-24", "rtol(1) %g, rtol(100003) %g",
                s1, s2);
}

/* Why two tolerances: one thread summing a constant row left to right makes
 * the same rounding error at every step, so the error grows like n, not
 * sqrt(n). This is lessons 1-2's kernel, run on the host in float32. */
static void test_sequential_sum_needs_its_own_tolerance(void)
{
    enum { N = 100003 };
    static float x[N], y[N];
    float sum = 0.0f;
    for (int j = 0; j < N; j++) {
        x[j] = -10.0f;
        sum += expf(x[j]);
    }
    for (int j = 0; j < N; j++) y[j] = expf(x[j]) / sum;
    verify_report a, b;
    int sqrt_ok = verify_softmax(x, y, 1, N, ref_row_softmax, NULL, verify_rtol(N), &a);
    int seq_ok = verify_softmax(x, y, 1, N, ref_row_softmax, NULL, verify_rtol_sequential(N), &b);
    test_expect(!sqrt_ok && seq_ok && b.max_rel > 1e-4,
                "verify: a sequential float32 sum of a constant 1 x 100003 row breaks the sqrt(n) rtol, not the sequential one",
                "sqrt rule passes %d, sequential rule passes %d, rel err %.2g", sqrt_ok, seq_ok, b.max_rel);
}

static void test_max_rel(void)
{
    /* a row with one huge entry: the others' softmax is below 1e-30, and
     * their 100% error (flushed to 0) must not count as relative error */
    float x[4] = {0, -100, -120, -300};
    float y[4] = {1, 0, 0, 0};
    verify_report r;
    int ok = verify_softmax(x, y, 1, 4, ref_row_softmax, NULL, verify_rtol(4), &r);
    test_expect(ok && r.max_rel < 1e-6, "verify: max rel err ignores reference values below atol",
                "ok %d, max rel %g", ok, r.max_rel);
}

/* ---- sampling above VERIFY_FULL_LIMIT ------------------------------------ */

static void test_row_choice(void)
{
    long long big = 1LL << 20, cols = 65;
    int ok = verify_row_count(1000, 1000) == 1000 && verify_row_count(1 << 16, 1 << 10) == 1 << 16 &&
             verify_row_count(big, cols) == VERIFY_SAMPLE_ROWS &&
             verify_row_count(8, 100000000) == 8; /* few long rows: every row */
    long long count = verify_row_count(big, cols), prev = -1;
    for (long long i = 0; i < count && ok; i++) {
        long long row = verify_row_at(i, count, big);
        if (row <= prev || row >= big) ok = 0;
        prev = row;
    }
    ok = ok && verify_row_at(0, count, big) == 0 && verify_row_at(count - 1, count, big) == big - 1;
    /* evenly spread: no gap more than twice the average */
    long long gap = (big - 1) / (count - 1);
    for (long long i = 1; i < count && ok; i++)
        if (verify_row_at(i, count, big) - verify_row_at(i - 1, count, big) > 2 * gap) ok = 0;
    test_expect(ok, "verify: above 2^26 elements it picks 1024 distinct rows, evenly spread, first and last included",
                "row choice wrong");
}

/* A 2^20 x 65 matrix (2^26 + 2^20 elements, over the full-check limit)
 * costs almost no memory: calloc'ed pages stay unbacked until written.
 * x is all zeros, so every softmax value is 1/65; only the sampled rows of
 * y are written. The check must pass (it looks at those rows only) and
 * fail once the first or last row is spoiled. */
static void test_sampled_mode(void)
{
    const char *name = "verify: samples 1024 rows of a 2^20 x 65 matrix and catches a bad first or last row";
    long long rows = 1LL << 20, cols = 65;
    float *x = calloc((size_t)(rows * cols), sizeof *x), *y = calloc((size_t)(rows * cols), sizeof *y);
    if (!x || !y) {
        test_skip(name, "cannot reserve 2 x 272 MB of address space");
        free(x);
        free(y);
        return;
    }
    long long count = verify_row_count(rows, cols);
    for (long long i = 0; i < count; i++) {
        float *yr = y + verify_row_at(i, count, rows) * cols;
        for (long long j = 0; j < cols; j++) yr[j] = 1.0f / 65;
    }
    verify_report r;
    char d[300];
    int ok = verify_softmax(x, y, rows, cols, ref_row_softmax, NULL, verify_rtol(cols), &r);
    verify_describe(&r, d, sizeof d);
    int pass_ok = ok && r.sampled && r.rows_checked == VERIFY_SAMPLE_ROWS &&
                  r.checked == VERIFY_SAMPLE_ROWS * cols && strstr(d, "over 1024 sampled rows of 1048576");

    y[(rows - 1) * cols + 64] = poison();
    int last = verify_softmax(x, y, rows, cols, ref_row_softmax, NULL, verify_rtol(cols), &r);
    long long last_row = r.bad_row;
    y[(rows - 1) * cols + 64] = 1.0f / 65;
    y[3] = 0.5f;
    int first = verify_softmax(x, y, rows, cols, ref_row_softmax, NULL, verify_rtol(cols), &r);
    test_expect(pass_ok && !last && last_row == rows - 1 && !first && r.bad_row == 0 && r.bad_col == 3, name,
                "clean %d (%s), bad last row passes %d, bad first row passes %d", ok, d, last, first);
    free(x);
    free(y);
}

static void test_describe(void)
{
    float x[6] = {1, 2, 3, 4, 5, 6}, y[6];
    perfect_output(x, y, 2, 3);
    verify_report r;
    char d[300];
    verify_softmax(x, y, 2, 3, ref_row_softmax, NULL, verify_rtol(3), &r);
    verify_describe(&r, d, sizeof d);
    int ok1 = strncmp(d, "max abs err ", 12) == 0 && strstr(d, "max rel err") &&
              strstr(d, "over every element (2 x 3)") && !strstr(d, "bad");
    y[4] = 0.5f;
    verify_softmax(x, y, 2, 3, ref_row_softmax, NULL, verify_rtol(3), &r);
    char e[300];
    verify_describe(&r, e, sizeof e);
    int ok2 = strstr(e, ", first bad y[1][1] = 0.5, want 0.244728") != NULL;
    char small[20];
    verify_describe(&r, small, sizeof small); /* truncated, never overflowing */
    test_expect(ok1 && ok2 && strlen(small) == sizeof small - 1 && !strchr(e, '\n'),
                "verify: the summary reads 'max abs err .., max rel err .. over every element (2 x 3)', then the first bad element",
                "got '%s' and '%s'", d, e);
}

/* The checkers' list of wrong elements: the count, the shape, the first
 * few in order with expected and got, NaN as "nan" (the poison's sign bit
 * set), a transpose, and a buffer too small truncated, never overflowed. */
static void test_wrong_list(void)
{
    float x[4 * 5], y[4 * 5];
    inputs_fill(x, 4, 5, INPUT_NORMAL, 11);
    perfect_output(x, y, 4, 5);
    y[1 * 5 + 2] = poison();
    y[2 * 5 + 0] = 2.0f;
    y[2 * 5 + 4] = -1.0f;
    y[3 * 5 + 3] = 0.0f;
    verify_report r;
    verify_softmax(x, y, 4, 5, ref_row_softmax, NULL, verify_rtol(5), &r);
    char d[1024], want_line[128], small[40];
    verify_wrong_format(&r.wrong, "y", "  ", d, sizeof d);
    double want12[5];
    ref_softmax_row(x + 5, want12, 5);
    snprintf(want_line, sizeof want_line, "    row 1, column 2: expected %.9g, got nan\n", want12[2]);
    const int ok = r.wrong.count == 4 && r.wrong.rows == 4 && r.wrong.cols == 5 &&
                   strstr(d, "  4 of the 4 x 5 elements of y are wrong; the first 3:\n") == d &&
                   strstr(d, want_line) && strstr(d, "    row 2, column 0: expected ") && strstr(d, ", got 2\n") &&
                   strstr(d, "    row 2, column 4: expected ") && strstr(d, ", got -1\n") && !strstr(d, "row 3");
    verify_report_transpose(&r);
    char t[1024];
    verify_wrong_format(&r.wrong, "y", "", t, sizeof t);
    verify_wrong_format(&r.wrong, "y", "", small, sizeof small);
    verify_wrong w;
    verify_wrong_init(&w, 2, 2);
    char none[8] = "x";
    verify_wrong_format(&w, "y", "", none, sizeof none);
    test_expect(ok && r.rows == 5 && r.cols == 4 && r.bad_row == 2 && r.bad_col == 1 &&
                    strstr(t, "of the 5 x 4 elements") && strstr(t, "  row 2, column 1: expected ") &&
                    strlen(small) == sizeof small - 1 && none[0] == '\0',
                "verify: the wrong-element list names the count, the shape and the first 3 (row, column, "
                "expected, got), NaN as nan",
                "got '%s' and, transposed, '%s'", d, t);
}

/* Lesson 7's policy for a row of only -inf: zeros pass there, but NaN
 * (the plain definition's answer, or an unwritten output) fails, and so do
 * zeros on a row with a finite score; other rows are checked as usual. */
static void test_masked_zeros_policy(void)
{
    const float ninf = -INFINITY;
    const float x[3 * 4] = {ninf, ninf, ninf, ninf, 1, 2, 3, 4, 0.5f, ninf, ninf, ninf};
    float y[3 * 4];
    perfect_output(x, y, 3, 4);
    for (int j = 0; j < 4; j++) y[j] = 0.0f; /* the kernel's zeros */
    verify_report r;
    int zeros_pass = verify_softmax(x, y, 3, 4, ref_row_softmax_masked_zeros, NULL, verify_rtol(4), &r);
    int plain_rejects = !verify_softmax(x, y, 3, 4, ref_row_softmax, NULL, verify_rtol(4), &r);
    float nan_row[3 * 4];
    memcpy(nan_row, y, sizeof y);
    for (int j = 0; j < 4; j++) nan_row[j] = poison();
    int nan_fails = !verify_softmax(x, nan_row, 3, 4, ref_row_softmax_masked_zeros, NULL, verify_rtol(4), &r) &&
                    r.bad == 4 && r.bad_row == 0;
    float zero_finite[3 * 4];
    memcpy(zero_finite, y, sizeof y);
    zero_finite[8] = 0.0f; /* row 2's only finite score, whose answer is 1 */
    int zeros_fail = !verify_softmax(x, zero_finite, 3, 4, ref_row_softmax_masked_zeros, NULL, verify_rtol(4), &r) &&
                     r.bad == 1 && r.bad_row == 2 && r.bad_col == 0;
    const float nan_in[4] = {ninf, NAN, ninf, ninf};
    double want[4];
    ref_row_softmax_masked_zeros(nan_in, want, 4, NULL);
    int nan_in_nan_out = isnan(want[0]) && isnan(want[1]) && isnan(want[3]);
    test_expect(zeros_pass && plain_rejects && nan_fails && zeros_fail && nan_in_nan_out,
                "verify: the masked-zeros reference accepts zeros for a row of only -inf and rejects NaN "
                "there, zeros on a finite row, and keeps NaN in -> NaN out",
                "zeros pass %d, plain reference rejects them %d, NaN fails %d, zeros on a finite row "
                "fail %d, NaN in gives NaN %d", zeros_pass, plain_rejects, nan_fails, zeros_fail,
                nan_in_nan_out);
}

int main(void)
{
    test_accepts_reference();
    test_nan();
    test_poison();
    test_tolerance_edge();
    test_sequential_sum_needs_its_own_tolerance();
    test_max_rel();
    test_row_choice();
    test_sampled_mode();
    test_describe();
    test_wrong_list();
    test_masked_zeros_policy();
    return test_exit_status();
}
