/* Exercise 10: the backward of log-softmax.
 *
 * out_i = x_i - logsumexp(x), so d out_i / d x_j = [i == j] - softmax(x)_j
 * = [i == j] - exp(out_j): the Jacobian is I - 1 y^T, with y = exp(out).
 * Multiply the incoming gradient dout by it (README.md, "Exercises",
 * exercise 1):
 *
 *     dx_j = sum_i dout_i ([i == j] - y_j) = dout_j - y_j * sum_i dout_i.
 *
 * Unlike softmax's backward (softmax_backward.cu) the row reduction is a
 * plain sum of dout, not a dot product with y; y itself is never stored:
 * exp(out) is computed where it is needed, from the forward's output.
 *
 * The starter below writes dout - exp(out): right only when the row of
 * dout sums to 1. Add the row's sum: reduce it over the block with lesson
 * 5's row_reduce<LSB_BLOCK>(v, red, op_sum()) (a __shared__ float red[32]
 * is what it needs), then use it in the write.
 *
 * `make exercise10` checks it (every element against a float64 reference,
 * and central differences of sum(dout * log_softmax(x)));
 * solutions/10_training/exercise.cu is one answer. */
#include <math.h>

#include "check.h"
#include "exercise.h"
#include "device/row_reduce.cuh"

#define LSB_BLOCK 256

/* One block per row, any row length: 2 reads (out, dout) + 1 write. */
__global__ void __launch_bounds__(LSB_BLOCK)
log_softmax_backward_kernel(const float *__restrict__ out, const float *__restrict__ dout, float *__restrict__ dx,
                            long long cols)
{
    const long long row = blockIdx.x;
    const float *o = out + row * cols, *g = dout + row * cols;
    float *d = dx + row * cols;
    /* TODO: s = the sum of g over the row, then dx = g - exp(o) * s. */
    for (long long j = threadIdx.x; j < cols; j += LSB_BLOCK) d[j] = g[j] - expf(o[j]);
}

void log_softmax_backward(const float *out, const float *dout, float *dx, long long rows, long long cols,
                          cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    log_softmax_backward_kernel<<<(unsigned)rows, LSB_BLOCK, 0, stream>>>(out, dout, dx, cols);
    CUDA_CHECK_LAUNCH();
}
