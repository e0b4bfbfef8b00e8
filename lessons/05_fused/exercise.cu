/* Exercise 5: column-wise softmax (the Triton teaching example's third exercise).
 *
 * torch.softmax(x, dim=0): each COLUMN of a rows x cols matrix becomes a
 * probability distribution. The elements of a column are `cols` floats
 * apart in memory. Write a kernel for it, and think about the access
 * pattern before you write it:
 *   - lesson 1 gave each row to one thread, and was slow because the 32
 *     threads of a warp read 32 addresses `cols` floats apart. What do the
 *     32 threads of a warp read if each thread owns a COLUMN instead?
 *   - lesson 5 keeps the data on chip so that it is read once. A column
 *     has `rows` elements: when can it stay in registers, and what can you
 *     do when it cannot?
 *
 * This starter calls lesson 5's kernel, which normalises the ROWS, so the
 * checker fails. `make exercise5` checks several shapes against the
 * float64 reference; solutions/05_fused/exercise.cu is one answer. */
#include "check.h"
#include "exercise.h"
#include "softmax_fused.h" /* lesson 5's kernel, which this starter reuses */

void softmax_columns(const float *x, float *y, long long rows, long long cols,
                     cudaStream_t stream)
{
    /* TODO: normalise each column, not each row. */
    softmax_fused(x, y, rows, cols, stream);
}
