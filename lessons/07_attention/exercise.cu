/* Exercise 7: a padding mask from sequence lengths.
 *
 * Sequences in a batch have different lengths; they are padded to a
 * common S so that the scores form one [batch * S, S] matrix, and the
 * padded keys must get probability 0. One way is a byte mask, [batch, S]
 * or [batch * S, S], built from the lengths and passed to softmax_masked:
 * that costs a tensor and 1 byte per score read. Causal needed no tensor
 * at all: the kernel knew from the row index how much of the row to read.
 * A length per sequence works the same way: row r belongs to sequence
 * r / S, and only its first lengths[r / S] scores are real.
 *
 * Write softmax_padded (exercise.h) so that it reads only the real scores
 * and writes zeros over the padding. Think first:
 *   - what must a row of a length-0 sequence give, and how does the lesson
 *     avoid NaN there (README.md, "Fully masked rows")?
 *   - the checker fills the padded scores with NaN: what happens to a
 *     kernel that reads them and then masks them with a multiplication?
 *
 * This starter ignores the lengths, so the checker fails. `make exercise7`
 * checks several batches against the float64 reference;
 * solutions/07_attention/exercise.cu is one answer. */
#include "check.h"
#include "exercise.h"
#include "softmax_attention.h" /* the lesson's kernels, which this starter reuses */

void softmax_padded(const float *x, const int *lengths, float *y, long long batch, long long S,
                    float scale, cudaStream_t stream)
{
    (void)lengths; /* TODO: keys k >= lengths[r / S] are padding */
    softmax_scaled(x, y, batch * S, S, scale, stream);
}
