/* Lesson 7: single-head attention, O = softmax(Q K^T * scale) V, two ways.
 *
 * Q, K, V and O are S x d floats, row-major and contiguous (row i of Q is
 * query i, row j of K and V is key j). With causal = 1 query i attends to
 * keys j <= i only. Device pointers; d must be 32, 64 or 128. */
#ifndef LESSON07_ATTENTION_FORWARD_H
#define LESSON07_ATTENTION_FORWARD_H
#include <cuda_runtime.h>

/* The online way (FlashAttention's idea, in plain CUDA C): each block walks
 * over tiles of K and V with a running max m, sum l and output row per
 * query, rescaled by exp(m_old - m_new) as the max grows. No S x S matrix
 * exists anywhere: the memory is Q, K, V, O, O(S d). A query none of whose
 * keys is kept (impossible without a mask; causal always keeps key i)
 * would give a zero row, the policy of softmax_attention.h. */
void attention_forward(const float *q, const float *k, const float *v, float *o, long long S,
                       int d, float scale, int causal, cudaStream_t stream);

/* The materialising way: scores = Q K^T (an S x S matrix), P = this
 * lesson's row softmax of the scores (softmax_scaled or softmax_causal),
 * O = P V. `work` must hold attention_materialized_work_floats(S) floats:
 * the S x S scores and the S x S probabilities, O(S^2) memory. */
void attention_materialized(const float *q, const float *k, const float *v, float *o, float *work,
                            long long S, int d, float scale, int causal, cudaStream_t stream);
long long attention_materialized_work_floats(long long S);

/* Bytes each way needs in global memory: Q, K, V, O (4 S d floats), plus
 * for the materialising way its 2 S^2 floats of work. */
double attention_forward_bytes(long long S, int d);
double attention_materialized_bytes(long long S, int d);

/* The float64 reference on the CPU (host pointers): it materialises the
 * scores of one query at a time, exactly as the definition reads:
 *   s_j = scale * sum_c q[i][c] k[j][c]   (j <= i when causal)
 *   p_j = exp(s_j - max_j s_j) / sum_j exp(s_j - max_j s_j)
 *   o[i][c] = sum_j p_j v[j][c].
 * Also returns, when the pointers are not NULL, what the tests need for a
 * tolerance: mag[i * d + c] = sum_j p_j |v[j][c]| (the size of what the
 * weighted average added up: o can be near 0 by cancellation) and
 * dotmag[i] = max_j scale * sum_c |q[i][c] k[j][c]| (the size of the dot
 * products, whose float32 rounding moves the scores). */
void attention_reference(const float *q, const float *k, const float *v, double *o, double *mag,
                         double *dotmag, long long S, int d, double scale, int causal);

#endif
