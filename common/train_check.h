/* Taught in lesson 10. Checking the four training kernels' outputs against
 * the float64 reference (reference.h), on the host. One set of rules for
 * lesson 10's program and exercise, the tests and the benchmark.
 *
 * The element rule is common/verify.h's: NaN only where the reference is
 * NaN, the same infinity where it is infinite, else |got - want| <= atol +
 * rtol |want| (written so that NaN fails). A float64 answer beyond float's
 * range (log-softmax of -3e38 next to 3e38 is -6e38) is expected as the
 * float infinity of its sign: that is what float32 arithmetic must give.
 *
 * The tolerances, R = verify_rtol(N) (a float32 row sum's error and a few
 * ulps of expf, verify.h):
 *   - log-softmax and the loss, (x - m) - log(d): log(d) turns d's relative
 *     error R into an absolute one; the subtractions round relatively:
 *     atol = rtol = R;
 *   - the backward at element j, y_j (dy_j - s): s = <y, dy> is summed in
 *     float with an error up to R sum |y dy|, so atol_j = R |y_j| (sum |y
 *     dy| + |dy_j|), rtol = R;
 *   - the classifier's gradient: p rtol R; at the target p - 1 owes p's
 *     error as an absolute one, R dloss; 16-bit storage adds half an ulp
 *     (verify_rtol_storage, verify_atol_storage);
 *   - the reduced loss: the per-row tolerances summed, plus the float sum
 *     of M losses (verify_rtol(M)).
 *
 * Above VERIFY_FULL_LIMIT elements only VERIFY_SAMPLE_ROWS rows are
 * compared (every element of each), as verify.h does; the reduced loss
 * always sums every row's reference loss. */
#ifndef COMMON_TRAIN_CHECK_H
#define COMMON_TRAIN_CHECK_H

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "f16.h"
#include "reference.h"
#include "verify.h"

typedef struct {
    long long checked, bad, rows_checked;
    int sampled;
    int per_row;               /* one value per row compared (the loss)  */
    double max_abs;            /* over finite references                 */
    double max_rel;            /* over references above their atol: where
                                  the relative part of the rule decides  */
    long long bad_row, bad_col; /* first bad element, or -1               */
    float bad_got;
    double bad_want;
    const char *what;          /* which output the first bad one is in   */
    verify_wrong wrong;        /* the first few bad ones, for checkers   */
} train_report;

static inline void train_report_init(train_report *r)
{
    memset(r, 0, sizeof *r);
    r->bad_row = r->bad_col = -1;
}

static inline int train_element_ok(float got, double want, double rtol, double atol)
{
    if (isfinite(want) && fabs(want) > FLT_MAX) want = want > 0 ? INFINITY : -INFINITY;
    return verify_element_atol(got, want, rtol, atol);
}

static inline void train_report_add(train_report *r, const char *what, long long row, long long col, float got,
                                    double want, double rtol, double atol)
{
    const int ok = train_element_ok(got, want, rtol, atol);
    r->checked++;
    if (isfinite(want) && isfinite(got)) {
        const double err = fabs(got - want);
        if (err > r->max_abs) r->max_abs = err;
        if (fabs(want) > atol && err / fabs(want) > r->max_rel) r->max_rel = err / fabs(want);
    }
    if (ok) return;
    verify_wrong_add(&r->wrong, row, col, want, got);
    if (r->bad++ == 0) {
        r->bad_row = row;
        r->bad_col = col;
        r->bad_got = got;
        r->bad_want = want;
        r->what = what;
    }
}

/* "max abs err 1.2e-07, max rel err 3.4e-07 over every element (4 x 8)" or
 * "... over 1024 sampled rows", and the first bad element. */
static inline void train_describe(const train_report *r, long long rows, long long cols, char *buf, size_t len)
{
    int k = r->per_row ? snprintf(buf, len, "max abs err %.1e, max rel err %.1e over every row's loss (%lld rows of "
                                  "%lld)", r->max_abs, r->max_rel, rows, cols)
                       : snprintf(buf, len, "max abs err %.1e, max rel err %.1e over %s (%lld x %lld)", r->max_abs,
                                  r->max_rel, r->sampled ? "sampled rows" : "every element",
                                  r->sampled ? r->rows_checked : rows, cols);
    if (r->bad && k > 0 && (size_t)k < len)
        snprintf(buf + k, len - (size_t)k, "; %lld bad, first %s[%lld][%lld] = %.9g, want %.12g", r->bad, r->what,
                 r->bad_row, r->bad_col, r->bad_got, r->bad_want);
}

/* A checker's verdict on one case of rows x cols: "  ok   what: ..." or
 * "  BAD  what: ...", then the first wrong elements. Returns 1 if none. */
static inline int train_print_check(const char *what, train_report *r, long long rows, long long cols)
{
    char desc[400];
    train_describe(r, rows, cols, desc, sizeof desc);
    printf("  %-4s %s: %s\n", r->bad ? "BAD" : "ok", what, desc);
    r->wrong.rows = rows;
    r->wrong.cols = cols;
    verify_wrong_print(&r->wrong, r->what ? r->what : "the output", "       ");
    return r->bad == 0;
}

/* ---- the four checks; each returns 1 when everything compared passes ---- */

/* One row of float64 reference values. */
static inline double *train_row_buffer(long long cols)
{
    double *p = (double *)malloc((size_t)cols * sizeof(double));
    if (!p) {
        fprintf(stderr, "train_check: out of memory for a row of %lld doubles\n", cols);
        abort();
    }
    return p;
}

static inline int train_check_backward(const float *y, const float *dy, const float *dx, long long rows,
                                       long long cols, train_report *r)
{
    double *ref = train_row_buffer(cols);
    const long long nrows = verify_row_count(rows, cols);
    const double R = verify_rtol(cols);
    r->sampled = nrows < rows;
    for (long long k = 0; k < nrows; k++) {
        const long long i = verify_row_at(k, nrows, rows);
        const float *yr = y + i * cols, *dyr = dy + i * cols;
        ref_softmax_backward_row(yr, dyr, ref, cols);
        double sum_abs = 0.0;
        for (long long j = 0; j < cols; j++) sum_abs += fabs((double)yr[j] * (double)dyr[j]);
        for (long long j = 0; j < cols; j++)
            train_report_add(r, "dx", i, j, dx[i * cols + j], ref[j], R,
                             R * fabs((double)yr[j]) * (sum_abs + fabs((double)dyr[j])) + VERIFY_ATOL);
        r->rows_checked++;
    }
    free(ref);
    return r->bad == 0;
}

static inline int train_check_log_softmax(const float *x, const float *out, long long rows, long long cols,
                                          train_report *r)
{
    double *ref = train_row_buffer(cols);
    const long long nrows = verify_row_count(rows, cols);
    const double R = verify_rtol(cols);
    r->sampled = nrows < rows;
    for (long long k = 0; k < nrows; k++) {
        const long long i = verify_row_at(k, nrows, rows);
        ref_log_softmax_row(x + i * cols, ref, cols);
        for (long long j = 0; j < cols; j++) train_report_add(r, "out", i, j, out[i * cols + j], ref[j], R, R);
        r->rows_checked++;
    }
    free(ref);
    return r->bad == 0;
}

/* Every row's loss (M values: cheap next to the logits). */
static inline int train_check_loss(const float *x, const int *targets, const float *loss, long long rows,
                                   long long cols, int ignore_index, train_report *r)
{
    const double R = verify_rtol(cols);
    for (long long i = 0; i < rows; i++)
        train_report_add(r, "loss", i, targets[i], loss[i],
                         ref_cross_entropy_row(x + i * cols, cols, targets[i], ignore_index), R, R);
    r->rows_checked = rows;
    r->per_row = 1;
    return r->bad == 0;
}

/* x: the logits the kernel read (16-bit ones widened exactly); grad: its
 * gradient widened to float; losses (M) and loss (1) as written; mean: 1
 * for the mean over the rows not ignored, 0 for the sum, -1 for no total
 * (loss not checked; the gradient as the sum's); st: the storage
 * type of the logits and gradient. */
static inline int train_check_classifier(const float *x, const int *targets, const float *grad, const float *losses,
                                         float loss, long long rows, long long cols, int ignore_index,
                                         int mean, dtype st, train_report *r)
{
    const double R = verify_rtol(cols), rs = verify_rtol_storage(st, R), as = verify_atol_storage(st);
    long long count = 0;
    for (long long i = 0; i < rows; i++) count += targets[i] != ignore_index;
    const double dloss = mean == 1 ? 1.0 / (double)(count ? count : 1) : 1.0;

    /* every row's loss and the reduced loss */
    double total = 0.0, tol = 0.0;
    for (long long i = 0; i < rows; i++) {
        const double li = ref_cross_entropy_row(x + i * cols, cols, targets[i], ignore_index);
        train_report_add(r, "losses", i, targets[i], losses[i], li, R, R);
        total += li;
        if (isfinite(li)) tol += R * (1.0 + fabs(li));
    }
    const double want = mean == 1 ? total / (double)count : total; /* 0 / 0 = NaN: every row ignored */
    tol = (tol + verify_rtol(rows) * fabs(total)) * dloss;
    if (mean >= 0) train_report_add(r, "loss", 0, 0, loss, want, 0.0, tol + VERIFY_ATOL);

    /* the gradient, row by row (sampled above VERIFY_FULL_LIMIT) */
    double *g = train_row_buffer(cols), l1;
    const long long nrows = verify_row_count(rows, cols);
    r->sampled = nrows < rows;
    for (long long k = 0; k < nrows; k++) {
        const long long i = verify_row_at(k, nrows, rows);
        ref_classifier(x + i * cols, targets + i, 1, cols, ignore_index, 0, &l1, g); /* dloss 1: scaled below */
        for (long long j = 0; j < cols; j++) {
            const double atol = (j == targets[i] ? R * dloss : 0.0) + as;
            train_report_add(r, "grad", i, j, grad[i * cols + j], g[j] * dloss, rs, atol);
        }
        r->rows_checked++;
    }
    free(g);
    return r->bad == 0;
}

/* logsumexp of a row of doubles, max + log(sum(exp(x - max))): the
 * finite-difference checks' objectives (the tests and exercise 10), which
 * perturb their logits in float64. Finite rows only. */
static inline double train_logsumexp64(const double *r, long long n)
{
    double m = -INFINITY, d = 0.0;
    for (long long j = 0; j < n; j++) m = r[j] > m ? r[j] : m;
    for (long long j = 0; j < n; j++) d += exp(r[j] - m);
    return m + log(d);
}

/* The central difference of f at element e of the float64 logits xd
 * (restored after): the gradients' real specification, against which the
 * tests and exercise 10 hold the kernels' gradients. */
static inline double train_central(double (*f)(const double *, const void *), const void *ctx, double *xd, size_t e)
{
    const double h = 1e-5, keep = xd[e];
    xd[e] = keep + h;
    const double up = f(xd, ctx);
    xd[e] = keep - h;
    const double down = f(xd, ctx);
    xd[e] = keep;
    return (up - down) / (2.0 * h);
}

/* A float64 reference row function (reference.h) on every row, rounded
 * to float: what a forward gives (the backward's y, exercise 10's out). */
static inline void train_forward_rows(void (*row)(const float *, double *, long long), const float *x, float *out,
                                      long long rows, long long cols)
{
    double *r = train_row_buffer(cols);
    for (long long i = 0; i < rows; i++) {
        row(x + i * cols, r, cols);
        for (long long j = 0; j < cols; j++) out[i * cols + j] = (float)r[j];
    }
    free(r);
}

/* Targets for rows x cols logits (the program's and the benchmark's): row
 * i's a column from a fixed hash of (seed, i), every 16th row the ignore
 * index, so both the loss and the ignored rows are exercised. */
static inline void train_make_targets(int *t, long long rows, long long cols, unsigned long long seed,
                                      int ignore_index)
{
    for (long long i = 0; i < rows; i++) {
        unsigned long long z = (seed + 1) * 0x9E3779B97F4A7C15ULL ^ (unsigned long long)i * 0xBF58476D1CE4E5B9ULL;
        z ^= z >> 31;
        z *= 0x94D049BB133111EBULL;
        z ^= z >> 29;
        t[i] = i % 16 == 15 ? ignore_index : (int)(z % (unsigned long long)cols);
    }
}

#endif
