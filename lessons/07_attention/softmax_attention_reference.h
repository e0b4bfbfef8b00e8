/* Lesson 7: the float64 reference for every variant of softmax_attention.h
 * (scaled, byte mask, additive mask, causal; full or broadcast masks), with
 * the lesson's policy: a row whose every value is -inf (every key masked)
 * gives zeros, where torch.softmax gives NaN. Host only, no GPU needed. The
 * program (main.cu) and tests/test_lesson7.cu check against this one
 * implementation, so they cannot disagree about what a variant computes. */
#ifndef LESSON07_SOFTMAX_ATTENTION_REFERENCE_H
#define LESSON07_SOFTMAX_ATTENTION_REFERENCE_H
#include "softmax_attention.h"

/* A variant to check: the kind, scale and HOST masks, plus where x starts.
 * verify_softmax (common/verify.h) hands the row function only a row
 * pointer; x0 and cols let it find the row index r = (x - x0) / cols, which
 * picks the mask row (r % mask_rows) and the causal query (r % cols). */
typedef struct {
    attn_kind kind;
    double scale;
    const unsigned char *keep; /* ATTN_BYTE_MASK: mask_rows x cols, host */
    const float *bias;         /* ATTN_ADD_MASK: mask_rows x cols, host  */
    long long mask_rows;
    const float *x0;           /* row 0 of the x that is checked         */
    long long cols;
} attn_ref_case;

/* The value softmaxed at (r, j) for score x, in double: -inf where the
 * variant masks it. A masked score is never looked at, whatever it holds. */
double attn_ref_value(const attn_ref_case *c, long long r, long long j, float x);

/* A ref_row_fn (common/verify.h) with ctx = const attn_ref_case *: the
 * softmax of the row's values. NaN among them gives NaN everywhere; all
 * -inf gives zeros; +inf gives NaN (inf - inf), as the definition says. */
void attn_ref_row(const float *x, double *y, long long n, const void *ctx);

#endif
