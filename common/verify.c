/* Checking a kernel's output against the float64 reference (see verify.h).
 *
 * The one trap in a checker: every comparison with NaN is false, so the
 * obvious `if (fabs(y - want) > tol) bad++;` counts a NaN output as good.
 * Here every test is written as "passes if err <= tol", which NaN fails. */
#include "verify.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "reference.h"

double verify_rtol(long long cols)
{
    return 2e-5 + 2.0 * FLT_EPSILON * sqrt((double)cols);
}

double verify_rtol_sequential(long long cols)
{
    /* FLT_EPSILON / 2 = 2^-24, the unit roundoff of float32 */
    return 2e-5 + (double)(cols - 1) * (FLT_EPSILON / 2);
}

double verify_rtol_storage(dtype t, double rtol)
{
    /* half an ulp relative: 2^-(p) for p significant bits, 11 and 8 */
    return rtol + (t == DTYPE_F16 ? ldexp(1.0, -11) : t == DTYPE_BF16 ? ldexp(1.0, -8) : 0.0);
}

double verify_atol_storage(dtype t)
{
    return t == DTYPE_F16 ? ldexp(1.0, -25) : VERIFY_ATOL;
}

void ref_row_softmax(const float *x, double *y, long long n, const void *ctx)
{
    (void)ctx;
    ref_softmax_row(x, y, n);
}

void ref_row_softmax_masked_zeros(const float *x, double *y, long long n, const void *ctx)
{
    (void)ctx;
    long long j = 0;
    while (j < n && x[j] == -INFINITY) j++;
    if (j < n) {
        ref_softmax_row(x, y, n);
        return;
    }
    for (j = 0; j < n; j++) y[j] = 0.0;
}

int verify_element(float y, double want, double rtol)
{
    return verify_element_atol(y, want, rtol, VERIFY_ATOL);
}

int verify_element_atol(float y, double want, double rtol, double atol)
{
    if (isnan(want)) return isnan(y);          /* NaN must stay NaN */
    if (isinf(want)) return (double)y == want; /* the same infinity */
    /* want is finite. If y is NaN, err is NaN and `err <= tol` is false;
     * if y is +-inf, err is inf, and inf <= tol is false too. Written as
     * `!(err > tol)` both would pass. */
    double err = fabs((double)y - want);
    return err <= atol + rtol * fabs(want);
}

long long verify_row_count(long long rows, long long cols)
{
    /* Below the limit, or with few rows, every row (hence every element). */
    if (rows * cols <= VERIFY_FULL_LIMIT || rows <= VERIFY_SAMPLE_ROWS) return rows;
    return VERIFY_SAMPLE_ROWS;
}

long long verify_row_at(long long i, long long count, long long rows)
{
    if (count >= rows) return i;
    if (count <= 1) return 0;
    /* Evenly spread: i = 0 gives row 0, i = count - 1 gives rows - 1. The
     * step (rows - 1) / (count - 1) is >= 1, so no row repeats; the product
     * stays below 2^10 * 2^31. */
    return i * (rows - 1) / (count - 1);
}

int verify_softmax(const float *x, const float *y, long long rows, long long cols,
                   ref_row_fn ref, const void *ctx, double rtol, verify_report *r)
{
    return verify_softmax_atol(x, y, rows, cols, ref, ctx, rtol, VERIFY_ATOL, r);
}

int verify_softmax_atol(const float *x, const float *y, long long rows, long long cols, ref_row_fn ref,
                        const void *ctx, double rtol, double atol, verify_report *r)
{
    verify_report z = {0};
    *r = z;
    r->rows = rows;
    r->cols = cols;
    r->bad_row = r->bad_col = -1;
    verify_wrong_init(&r->wrong, rows, cols);
    if (rows < 1 || cols < 1) return 1;

    long long count = verify_row_count(rows, cols);
    r->sampled = count < rows;
    double *want = malloc((size_t)cols * sizeof *want);
    if (!want) {
        fprintf(stderr, "verify_softmax: out of memory for a row of %lld doubles\n", cols);
        abort();
    }

    for (long long k = 0; k < count; k++) {
        long long i = verify_row_at(k, count, rows);
        const float *xi = x + i * cols, *yi = y + i * cols;
        ref(xi, want, cols, ctx);
        for (long long j = 0; j < cols; j++) {
            if (!verify_element_atol(yi[j], want[j], rtol, atol)) {
                verify_wrong_add(&r->wrong, i, j, want[j], yi[j]);
                if (r->bad++ == 0) {
                    r->bad_row = i;
                    r->bad_col = j;
                    r->bad_got = yi[j];
                    r->bad_want = want[j];
                }
            }
            /* Error statistics over finite reference values. A NaN y is not
             * counted here (NaN > max is false) but it was counted as bad. */
            if (isfinite(want[j])) {
                double err = fabs((double)yi[j] - want[j]);
                if (err > r->max_abs) r->max_abs = err;
                if (fabs(want[j]) > VERIFY_ATOL && err / fabs(want[j]) > r->max_rel)
                    r->max_rel = err / fabs(want[j]);
            }
        }
        r->checked += cols;
        r->rows_checked++;
    }
    free(want);
    return r->bad == 0;
}

void verify_wrong_init(verify_wrong *w, long long rows, long long cols)
{
    verify_wrong z = {0};
    *w = z;
    w->rows = rows;
    w->cols = cols;
}

void verify_wrong_add(verify_wrong *w, long long row, long long col, double expected, double got)
{
    if (w->count < VERIFY_SHOW_WRONG) {
        w->row[w->count] = row;
        w->col[w->count] = col;
        w->expected[w->count] = expected;
        w->got[w->count] = got;
    }
    w->count++;
}

static void swap_ll(long long *a, long long *b)
{
    long long t = *a;
    *a = *b;
    *b = t;
}

void verify_report_transpose(verify_report *r)
{
    swap_ll(&r->rows, &r->cols);
    swap_ll(&r->bad_row, &r->bad_col);
    swap_ll(&r->wrong.rows, &r->wrong.cols);
    for (int k = 0; k < VERIFY_SHOW_WRONG; k++) swap_ll(&r->wrong.row[k], &r->wrong.col[k]);
}

/* %.9g, but "nan" for every NaN: printf shows 0xFFFFFFFF, the poison, as
 * "-nan", and a NaN's sign means nothing. */
static void fmt_value(double v, char *buf, unsigned long len)
{
    if (isnan(v)) snprintf(buf, len, "nan");
    else snprintf(buf, len, "%.9g", v);
}

void verify_wrong_format(const verify_wrong *w, const char *what, const char *indent, char *buf,
                         unsigned long len)
{
    buf[0] = '\0';
    if (w->count == 0) return;
    const int shown = w->count < VERIFY_SHOW_WRONG ? (int)w->count : VERIFY_SHOW_WRONG;
    int n = snprintf(buf, len, "%s%lld of the %lld x %lld elements of %s %s wrong", indent, w->count, w->rows,
                     w->cols, what, w->count == 1 ? "is" : "are");
    if (n > 0 && (unsigned long)n < len && w->count > shown)
        n += snprintf(buf + n, len - (unsigned long)n, "; the first %d", shown);
    if (n > 0 && (unsigned long)n < len) n += snprintf(buf + n, len - (unsigned long)n, ":\n");
    for (int k = 0; k < shown && n > 0 && (unsigned long)n < len; k++) {
        char e[40], g[40];
        fmt_value(w->expected[k], e, sizeof e);
        fmt_value(w->got[k], g, sizeof g);
        n += snprintf(buf + n, len - (unsigned long)n, "%s  row %lld, column %lld: expected %s, got %s\n", indent,
                      w->row[k], w->col[k], e, g);
    }
}

void verify_wrong_print(const verify_wrong *w, const char *what, const char *indent)
{
    char buf[1024];
    verify_wrong_format(w, what, indent, buf, sizeof buf);
    fputs(buf, stdout);
}

void verify_describe(const verify_report *r, char *buf, unsigned long len)
{
    int n;
    if (r->sampled)
        n = snprintf(buf, len, "max abs err %.1e, max rel err %.1e over %lld sampled rows of %lld",
                     r->max_abs, r->max_rel, r->rows_checked, r->rows);
    else
        n = snprintf(buf, len, "max abs err %.1e, max rel err %.1e over every element (%lld x %lld)",
                     r->max_abs, r->max_rel, r->rows, r->cols);
    if (r->bad > 0 && n >= 0 && (unsigned long)n < len) {
        /* printf shows 0xFFFFFFFF as "-nan"; a NaN's sign means nothing */
        char got[32];
        if (isnan(r->bad_got)) snprintf(got, sizeof got, "nan");
        else snprintf(got, sizeof got, "%.6g", (double)r->bad_got);
        snprintf(buf + n, len - (unsigned long)n, ", first bad y[%lld][%lld] = %s, want %.6g (%lld bad)",
                 r->bad_row, r->bad_col, got, r->bad_want, r->bad);
    }
}
