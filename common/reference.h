/* Float64 reference math on the CPU. Every kernel in the course is checked
 * against these; the tests check these against each other.
 *
 * Row functions read float32 input (what the kernels see) and compute in
 * double. */
#ifndef COMMON_REFERENCE_H
#define COMMON_REFERENCE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The definition: y = exp(x - max) / sum(exp(x - max)). Two passes.
 * A row holding NaN gives NaN everywhere; an all -inf row gives NaN
 * (as PyTorch does). */
void ref_softmax_row(const float *x, double *y, long long n);

/* Textbook exp(x) / sum(exp(x)) in double: overflows once x > ~709.78
 * (and gives 0/0 = NaN once every exp underflows). */
void ref_softmax_naive_row(const float *x, double *y, long long n);

/* softmax(scale * x): attention's 1/sqrt(d), or temperature 1/T. */
void ref_softmax_scaled_row(const float *x, double *y, long long n, double scale);

/* softmax of where(keep, scale * x, -inf); keep[j] != 0 keeps x[j].
 * A row with nothing kept gives NaN (PyTorch's answer). */
void ref_softmax_masked_row(const float *x, const unsigned char *keep, double *y,
                            long long n, double scale);

/* log(sum(exp(x))), computed as max + log(sum(exp(x - max))). */
double ref_logsumexp_row(const float *x, long long n);

/* ---- The online view (seed 002): a row summarised by (m, d) ----------
 * m = running max, d = sum of exp(x - m). The identity is (-inf, 0).
 * Merging is associative and commutative, which is what lets a GPU split
 * a row across threads, warps and blocks in any order. */
typedef struct {
    double m, d;
} md_state;

md_state md_identity(void);
md_state md_push(md_state s, double x);         /* add one element      */
md_state md_merge(md_state a, md_state b);      /* combine two summaries */

/* The seed 002 algorithms, each producing the full softmax of one row. */
/* one element at a time, then a normalize pass */
void ref_online_1d(const float *x, double *y, long long n);
/* row cut into blocks of `block`: local (m, d) per block, then combined
 * with the global max */
void ref_block_softmax(const float *x, double *y, long long n, long long block);
/* the same blocks, merged into a running (m, d) as they arrive */
void ref_online_block_softmax(const float *x, double *y, long long n, long long block);
/* a batch of rows, each row's columns split in two halves whose (m, d)
 * are merged */
void ref_batch_softmax(const float *x, double *y, long long rows, long long cols);
/* a batch of rows, columns processed block by block with a running (m, d) */
void ref_online_batch_softmax(const float *x, double *y, long long rows, long long cols,
                              long long block);

#ifdef __cplusplus
}
#endif
#endif
