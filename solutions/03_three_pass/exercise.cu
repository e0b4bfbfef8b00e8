/* Solution to exercise 3: lesson 3's first two passes, then
 * lse = m + log(sum), written by thread 0.
 *
 * The special rows are where the formula breaks, because of inf - inf:
 *   - only -inf: m = -inf, and x - m = -inf - -inf = NaN where the answer
 *     is log(0) = -inf;
 *   - a +inf entry: m = +inf, and inf - inf = NaN where the answer is +inf;
 *   - a NaN entry: fmaxf skips it (m may even stay -inf, for a row of NaN
 *     only), so the max alone cannot tell; the sum must carry it.
 * So the sum skips the infinite entries (each contributes exp(-inf) = 0 or
 * is settled by m) and keeps NaN ones: then the sum is NaN exactly when
 * the row holds a NaN, 0 when it holds only infinities, and >= 1 otherwise
 * (the max contributes exp(0) = 1). The last line reads the answer off. */
#include <math.h>

#include "check.h"
#include "exercise.h"
#include "block_reduce.h"

#define LSE_BLOCK 256

__global__ void __launch_bounds__(LSE_BLOCK)
logsumexp_kernel(const float *__restrict__ x, float *__restrict__ lse, long long cols)
{
    __shared__ float buf[LSE_BLOCK];
    const long long row = blockIdx.x;
    const float *xr = x + row * cols;

    float m = -INFINITY;
    for (long long j = threadIdx.x; j < cols; j += LSE_BLOCK) m = fmaxf(m, xr[j]);
    m = block_reduce_max<LSE_BLOCK>(m, buf);

    float s = 0.0f;
    for (long long j = threadIdx.x; j < cols; j += LSE_BLOCK)
        if (!isinf(xr[j])) s += expf(xr[j] - m);
    s = block_reduce_sum<LSE_BLOCK>(s, buf);

    /* NaN anywhere: NaN. Else m = +inf: +inf. Else m = -inf (s = 0):
     * -inf + log(0) = -inf. Else the formula. */
    if (threadIdx.x == 0) lse[row] = isnan(s) ? s : m == INFINITY ? m : m + logf(s);
}

void logsumexp_rows(const float *x, float *lse, long long rows, long long cols,
                    cudaStream_t stream)
{
    if (rows < 1 || cols < 1) return;
    logsumexp_kernel<<<(unsigned)rows, LSE_BLOCK, 0, stream>>>(x, lse, cols);
    CUDA_CHECK_LAUNCH();
}
