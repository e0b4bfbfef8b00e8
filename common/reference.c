/* Float64 reference math (see reference.h).
 *
 * Why double: the kernels compute in float32, and a reference must be far
 * more accurate than what it checks. Double carries 29 more bits, so its own
 * rounding is invisible next to a float32 kernel's.
 *
 * Special values follow PyTorch: NaN anywhere in a row makes the whole row
 * NaN; a row whose entries are all -inf has no meaningful softmax and gives
 * NaN (exp(-inf - -inf) = exp(NaN)); -inf entries among finite ones give
 * exactly 0. */
#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* max(a, b) that returns NaN if either is NaN, like torch.max. A plain
 * `a > b ? a : b` would quietly drop a NaN in one of the two positions. */
static double nan_max(double a, double b)
{
    if (isnan(a) || isnan(b)) return NAN;
    return a > b ? a : b;
}

/* The softmax of the values v[j] = keep[j] ? scale * x[j] : -inf (keep NULL
 * keeps all), in two passes: max, then sum of exp(v - max), then divide.
 * Every special case of the header comes out of the arithmetic itself:
 *   - a NaN value makes m NaN, then every exp and the sum NaN;
 *   - all values -inf: m = -inf, v - m = -inf - -inf = NaN, so NaN again;
 *   - a -inf value among finite ones: exp(-inf) = 0 exactly. */
static double value(const float *x, const unsigned char *keep, double scale, long long j)
{
    return (keep && !keep[j]) ? -INFINITY : scale * (double)x[j];
}

static void softmax_values(const float *x, const unsigned char *keep, double scale, double *y,
                           long long n)
{
    double m = -INFINITY;
    for (long long j = 0; j < n; j++) m = nan_max(m, value(x, keep, scale, j));
    double sum = 0.0;
    for (long long j = 0; j < n; j++) {
        y[j] = exp(value(x, keep, scale, j) - m);
        sum += y[j];
    }
    for (long long j = 0; j < n; j++) y[j] /= sum;
}

void ref_softmax_row(const float *x, double *y, long long n) { softmax_values(x, NULL, 1.0, y, n); }

void ref_softmax_scaled_row(const float *x, double *y, long long n, double scale)
{
    softmax_values(x, NULL, scale, y, n);
}

void ref_softmax_masked_row(const float *x, const unsigned char *keep, double *y, long long n,
                            double scale)
{
    softmax_values(x, keep, scale, y, n);
}

/* The textbook formula, kept to show what goes wrong: exp(800) is inf even
 * in double, and inf / inf is NaN. */
void ref_softmax_naive_row(const float *x, double *y, long long n)
{
    double sum = 0.0;
    for (long long j = 0; j < n; j++) {
        y[j] = exp((double)x[j]);
        sum += y[j];
    }
    for (long long j = 0; j < n; j++) y[j] /= sum;
}

double ref_logsumexp_row(const float *x, long long n)
{
    double m = -INFINITY;
    for (long long j = 0; j < n; j++) m = nan_max(m, x[j]);
    /* log(sum(exp)) of all -inf is log(0) = -inf; with a +inf entry it is
     * +inf. The shifted formula would give NaN for both (inf - inf). */
    if (isnan(m) || isinf(m)) return m;
    double sum = 0.0;
    for (long long j = 0; j < n; j++) sum += exp((double)x[j] - m);
    return m + log(sum); /* sum >= 1 (the max contributes exp(0)) */
}

/* ---- the online view -------------------------------------------------------
 * (m, d) summarises a set of values: m their max, d = sum of exp(v - m).
 * A state with m = -inf holds only -inf values (or none) and has d = 0: it
 * is the identity, and the code must never compute -inf - -inf with it. */

md_state md_identity(void)
{
    md_state s = {-INFINITY, 0.0};
    return s;
}

static md_state md_nan(void)
{
    md_state s = {NAN, NAN};
    return s;
}

md_state md_merge(md_state a, md_state b)
{
    if (isnan(a.m) || isnan(b.m)) return md_nan();
    if (a.m == -INFINITY) return b; /* a adds exp(-inf) = 0 to every sum */
    if (b.m == -INFINITY) return a;
    /* Rescale both sums to the larger max: exp(v - a.m) * exp(a.m - m) =
     * exp(v - m). The factors are <= 1, so nothing overflows. */
    md_state s;
    s.m = a.m > b.m ? a.m : b.m;
    s.d = a.d * exp(a.m - s.m) + b.d * exp(b.m - s.m);
    return s;
}

md_state md_push(md_state s, double x)
{
    md_state one = {x, 1.0}; /* a single value: max x, exp(x - x) = 1 */
    if (x == -INFINITY) return s; /* contributes exp(-inf) = 0 */
    return md_merge(s, one);
}

/* The (m, d) of x[0 .. n-1] computed directly: max first, then the sum.
 * This is what one thread block computes for its part of a row. */
static md_state local_state(const float *x, long long n)
{
    double m = -INFINITY;
    for (long long j = 0; j < n; j++) m = nan_max(m, x[j]);
    if (isnan(m)) return md_nan();
    if (m == -INFINITY) return md_identity(); /* empty, or only -inf */
    md_state s = {m, 0.0};
    for (long long j = 0; j < n; j++) s.d += exp((double)x[j] - m);
    return s;
}

/* The final pass shared by every online variant: y = exp(x - m) / d.
 * For an all -inf row s is the identity and this gives exp(NaN) / 0 = NaN,
 * the same answer as the two-pass definition. */
static void normalize(const float *x, double *y, long long n, md_state s)
{
    for (long long j = 0; j < n; j++) y[j] = exp((double)x[j] - s.m) / s.d;
}

void ref_online_1d(const float *x, double *y, long long n)
{
    md_state s = md_identity();
    for (long long j = 0; j < n; j++) s = md_push(s, x[j]);
    normalize(x, y, n, s);
}

/* A row in blocks of `block` elements (the last may be shorter); block < 1
 * means a single block. */
static long long block_count(long long n, long long *block)
{
    if (*block < 1 || *block > n) *block = n > 0 ? n : 1;
    return (n + *block - 1) / *block;
}

void ref_block_softmax(const float *x, double *y, long long n, long long block)
{
    long long nb = block_count(n, &block);
    md_state *part = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *part);
    if (!part) {
        fprintf(stderr, "ref_block_softmax: out of memory for %lld blocks\n", nb);
        abort();
    }
    /* Step 1, as separate thread blocks would: each block's own (m, d). */
    for (long long b = 0; b < nb; b++) {
        long long len = b + 1 < nb ? block : n - b * block;
        part[b] = local_state(x + b * block, len);
    }
    /* Step 2: the global max, then every block's sum rescaled to it. */
    double m = -INFINITY;
    for (long long b = 0; b < nb; b++) m = nan_max(m, part[b].m);
    md_state s = {m, 0.0};
    if (isnan(m)) s = md_nan();
    else if (m == -INFINITY) s = md_identity(); /* an all -inf row */
    else /* m is finite: an all -inf block adds 0 * exp(-inf) = 0 */
        for (long long b = 0; b < nb; b++) s.d += part[b].d * exp(part[b].m - m);
    free(part);
    normalize(x, y, n, s);
}

void ref_online_block_softmax(const float *x, double *y, long long n, long long block)
{
    long long nb = block_count(n, &block);
    md_state s = md_identity();
    for (long long b = 0; b < nb; b++) {
        long long len = b + 1 < nb ? block : n - b * block;
        s = md_merge(s, local_state(x + b * block, len));
    }
    normalize(x, y, n, s);
}

void ref_batch_softmax(const float *x, double *y, long long rows, long long cols)
{
    for (long long i = 0; i < rows; i++) {
        const float *r = x + i * cols;
        long long half = cols / 2; /* cols == 1: the left half is empty */
        md_state s = md_merge(local_state(r, half), local_state(r + half, cols - half));
        normalize(r, y + i * cols, cols, s);
    }
}

/* The running form a kernel keeps in registers: after each block of
 * columns, M = max(M, block max) and the sum so far L is rescaled by
 * exp(M_old - M_new) before the block's exp(x - M_new) are added. */
void ref_online_batch_softmax(const float *x, double *y, long long rows, long long cols,
                              long long block)
{
    long long nb = block_count(cols, &block);
    for (long long i = 0; i < rows; i++) {
        const float *r = x + i * cols;
        double M = -INFINITY, L = 0.0;
        for (long long b = 0; b < nb; b++) {
            const float *xb = r + b * block;
            long long len = b + 1 < nb ? block : cols - b * block;
            double mb = -INFINITY;
            for (long long j = 0; j < len; j++) mb = nan_max(mb, xb[j]);
            double Mnew = nan_max(M, mb);
            if (Mnew == -INFINITY) continue; /* only -inf so far: L stays 0 */
            L = (M == -INFINITY ? 0.0 : L * exp(M - Mnew)); /* avoid exp(-inf - -inf) */
            for (long long j = 0; j < len; j++) L += exp((double)xb[j] - Mnew);
            M = Mnew;
        }
        md_state s = {M, L};
        normalize(r, y + i * cols, cols, s);
    }
}

/* ---- Training (lesson 10) ---------------------------------------------------
 * Straight from the definitions, two passes each. */

void ref_softmax_backward_row(const float *y, const float *dy, double *dx, long long n)
{
    double s = 0.0;
    for (long long j = 0; j < n; j++) s += (double)y[j] * (double)dy[j];
    for (long long j = 0; j < n; j++) dx[j] = (double)y[j] * ((double)dy[j] - s);
}

/* m and d of a row: m = max (NaN if any is NaN), d = sum exp(x - m). For
 * m = -inf (only -inf) or +inf, x - m is NaN somewhere and so is d. */
static void row_md(const float *x, long long n, double *m, double *d)
{
    *m = -INFINITY;
    for (long long j = 0; j < n; j++) *m = nan_max(*m, x[j]);
    *d = 0.0;
    for (long long j = 0; j < n; j++) *d += exp((double)x[j] - *m);
}

void ref_log_softmax_row(const float *x, double *out, long long n)
{
    double m, d;
    row_md(x, n, &m, &d);
    for (long long j = 0; j < n; j++) out[j] = ((double)x[j] - m) - log(d);
}

double ref_cross_entropy_row(const float *x, long long n, long long t, long long ignore_index)
{
    if (t == ignore_index) return 0.0;
    if (t < 0 || t >= n) return NAN;
    double m, d;
    row_md(x, n, &m, &d);
    return (m - (double)x[t]) + log(d);
}

double ref_classifier(const float *x, const int *targets, long long rows, long long cols, long long ignore_index,
                      int mean, double *losses, double *grad)
{
    long long count = 0;
    for (long long i = 0; i < rows; i++) count += targets[i] != ignore_index;
    const double dloss = mean ? 1.0 / (double)count : 1.0;
    double total = 0.0;
    for (long long i = 0; i < rows; i++) {
        const float *xr = x + i * cols;
        const long long t = targets[i];
        const double li = ref_cross_entropy_row(xr, cols, t, ignore_index);
        total += li;
        if (losses) losses[i] = li;
        if (!grad) continue;
        double *g = grad + i * cols;
        if (t == ignore_index) {
            for (long long j = 0; j < cols; j++) g[j] = 0.0;
        } else if (t < 0 || t >= cols) {
            for (long long j = 0; j < cols; j++) g[j] = NAN;
        } else {
            double m, d;
            row_md(xr, cols, &m, &d);
            for (long long j = 0; j < cols; j++) g[j] = (exp((double)xr[j] - m) / d - (j == t ? 1.0 : 0.0)) * dloss;
        }
    }
    return mean ? total / (double)count : total;
}
