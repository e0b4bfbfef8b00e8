/* Solution to exercise 10: the log-softmax backward,
 * dx = dout - exp(out) * sum(dout), one block per row.
 *
 * The row's sum of dout is reduced once (lesson 5's row_reduce: warp
 * shuffles, then one value per warp through shared memory), and every
 * thread gets the same total; each element is then one exp and one fused
 * multiply-add. 2 reads + 1 write = 12 bytes per element, with each row
 * read twice from this kernel's point of view (the sum, then the write)
 * but the second read served from L1/L2 for rows that fit there; holding
 * the row in registers, as softmax_backward.cu does, makes it one read.
 *
 * Special values: out = -inf (a zero probability) gives exp(-inf) = 0 and
 * dx = dout, as it should; NaN in dout makes the row NaN through the sum. */
#include <math.h>

#include "check.h"
#include "exercise.h"
#include "device/row_reduce.cuh"

#define LSB_BLOCK 256

__global__ void __launch_bounds__(LSB_BLOCK)
log_softmax_backward_kernel(const float *__restrict__ out, const float *__restrict__ dout, float *__restrict__ dx,
                            long long cols)
{
    __shared__ float red[32];
    const long long row = blockIdx.x;
    const float *o = out + row * cols, *g = dout + row * cols;
    float *d = dx + row * cols;
    float s = 0.0f;
    for (long long j = threadIdx.x; j < cols; j += LSB_BLOCK) s += g[j];
    s = row_reduce<LSB_BLOCK>(s, red, op_sum());
    for (long long j = threadIdx.x; j < cols; j += LSB_BLOCK) d[j] = g[j] - expf(o[j]) * s;
}

void log_softmax_backward(const float *out, const float *dout, float *dx, long long rows, long long cols,
                          cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    log_softmax_backward_kernel<<<(unsigned)rows, LSB_BLOCK, 0, stream>>>(out, dout, dx, cols);
    CUDA_CHECK_LAUNCH();
}
