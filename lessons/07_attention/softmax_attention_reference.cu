/* Lesson 7's float64 reference for the attention variants (see the header).
 * Host code only; a .cu so that it builds with the lesson's kernels and is
 * linked into the program, the tests and the benchmark alike. */
#include "softmax_attention_reference.h"

#include <math.h>

double attn_ref_value(const attn_ref_case *c, long long r, long long j, float x)
{
    const long long mr = c->mask_rows > 0 ? r % c->mask_rows : 0;
    switch (c->kind) {
    case ATTN_BYTE_MASK: return c->keep[mr * c->cols + j] ? c->scale * (double)x : -INFINITY;
    case ATTN_ADD_MASK: return c->scale * (double)x + (double)c->bias[mr * c->cols + j];
    case ATTN_CAUSAL: return j <= r % c->cols ? c->scale * (double)x : -INFINITY;
    default: return c->scale * (double)x;
    }
}

void attn_ref_row(const float *x, double *y, long long n, const void *ctx)
{
    const attn_ref_case *c = (const attn_ref_case *)ctx;
    const long long r = (long long)(x - c->x0) / c->cols;
    /* The values are cheap to recompute: computing them twice needs no
     * scratch row, so the function holds no state between calls. */
    int nan = 0;
    double m = -INFINITY;
    for (long long j = 0; j < n; j++) {
        const double v = attn_ref_value(c, r, j, x[j]);
        if (isnan(v)) nan = 1;
        else if (v > m) m = v;
    }
    if (nan || m == -INFINITY) {
        for (long long j = 0; j < n; j++) y[j] = nan ? NAN : 0.0;
        return;
    }
    double sum = 0.0;
    for (long long j = 0; j < n; j++) {
        y[j] = exp(attn_ref_value(c, r, j, x[j]) - m); /* +inf max: inf - inf = NaN */
        sum += y[j];
    }
    for (long long j = 0; j < n; j++) y[j] /= sum;
}
