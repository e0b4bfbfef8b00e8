/* Lesson 9: softmax with 16-bit storage and 32-bit arithmetic.
 *
 * x and y are device pointers to rows x cols elements of storage type t
 * (float32, float16 as __half, bfloat16 as __nv_bfloat16), row i of x at
 * x + i * ldx elements, of y at y + i * ldy. Every element is widened to
 * float on the load; max, exp, sum and the quotient are float32, as in
 * lessons 5 and 8; each result is rounded once, to nearest even, on the
 * store. The special values behave as in docs/special-values.md: a row
 * holding NaN or +inf, or of only -inf, gives NaN; -inf among finite
 * values gives 0.
 *
 * Two entry points, the lesson's two steps:
 *   softmax_half_fused    lesson 5's fused row for any storage type: one
 *                         block per row, the row read once and written once
 *   softmax_half_fastest  lesson 8's dispatcher for any storage type */
#ifndef LESSON09_SOFTMAX_HALF_H
#define LESSON09_SOFTMAX_HALF_H
#include <cuda_runtime.h>
#include "f16.h" /* dtype */

void softmax_half_fused(const void *x, long long ldx, void *y, long long ldy, long long rows, long long cols,
                        dtype t, cudaStream_t stream);
void softmax_half_fastest(const void *x, long long ldx, void *y, long long ldy, long long rows, long long cols,
                          dtype t, cudaStream_t stream);

#endif
