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

/* ---- The online view (the online-softmax tutorial): a row summarised by (m, d) ----------
 * m = running max, d = sum of exp(x - m). The identity is (-inf, 0).
 * Merging is associative and commutative, which is what lets a GPU split
 * a row across threads, warps and blocks in any order. */
typedef struct {
    double m, d;
} md_state;

md_state md_identity(void);
md_state md_push(md_state s, double x);         /* add one element      */
md_state md_merge(md_state a, md_state b);      /* combine two summaries */

/* The online-softmax tutorial's algorithms, each producing the full softmax of one row. */
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

/* ---- Training (lesson 10): the backward, log-softmax, the loss ---------
 * Float64 definitions of lesson 10's four kernels. Special values follow
 * the formulas in IEEE arithmetic, as the forward's do: NaN or +inf in a
 * row, or a row of only -inf, gives NaN. A result beyond float's range
 * (log-softmax of -3e38 next to 3e38 is -6e38) is returned as computed;
 * the checker expects the float infinity there. */

/* dx = y * (dy - sum_j y_j dy_j): the gradient through softmax, y being
 * softmax's output and dy the gradient of the loss with respect to it. */
void ref_softmax_backward_row(const float *y, const float *dy, double *dx, long long n);

/* out = x - max - log(sum exp(x - max)). */
void ref_log_softmax_row(const float *x, double *out, long long n);

/* The cross-entropy of one row with target t: logsumexp(x) - x[t]; 0 when
 * t == ignore_index; NaN when t is out of [0, n) and not ignore_index. */
double ref_cross_entropy_row(const float *x, long long n, long long t, long long ignore_index);

/* The fused classifier over rows x cols logits: losses[i] as above, grad
 * (rows x cols) = (softmax(x_i) - one_hot(t_i)) * dloss, dloss = 1 / count
 * (mean; count = rows whose target is not ignore_index) or 1 (sum); 0 on
 * ignored rows, NaN on rows whose target is out of range. Returns the
 * reduced loss: the sum of losses, divided by count for the mean (NaN
 * when every row is ignored: 0 / 0, as PyTorch). grad or losses may be
 * NULL. */
double ref_classifier(const float *x, const int *targets, long long rows, long long cols, long long ignore_index,
                      int mean, double *losses, double *grad);

#ifdef __cplusplus
}
#endif
#endif
