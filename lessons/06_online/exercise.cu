/* Exercise 6: split each row across `splits` blocks and merge their (m, d).
 *
 * Lessons 5 and 6 give each row to one block, so a single long row keeps
 * one SM busy out of 132. The online-softmax tutorial's "block softmax" shows the way out:
 * cut the row into segments, summarise each segment by its own (m, d), then
 * combine the summaries. On a GPU that is two kernels:
 *
 *   1. segment_state_kernel: one block per segment computes the segment's
 *      (m, d) and writes it to work[row * splits + segment]. (Done.)
 *   2. segment_normalize_kernel: one block per segment writes
 *      exp(x - m) / d for its segment, where (m, d) must be the state of
 *      the WHOLE row: the merge of the row's `splits` states.
 *
 * The starter's second kernel uses its own segment's state only, so each
 * segment comes out as a softmax on its own: every segment sums to 1 and
 * the row sums to `splits`. Fix it with online_md_merge (online_md.cuh).
 * Think about the identity: with splits > cols some segments are empty,
 * and a row may have segments that hold only -inf.
 *
 * `make exercise6` checks it; solutions/06_online/exercise.cu is one answer. */
#include <math.h>

#include "check.h"
#include "exercise.h"

#define SPLIT_BLOCK 256

/* Block b handles segment b % splits of row b / splits. */
__global__ void __launch_bounds__(SPLIT_BLOCK)
segment_state_kernel(const float *__restrict__ x, long long cols, int splits, long long seg_len,
                     online_md *__restrict__ work)
{
    __shared__ float red_m[32], red_d[32];
    const long long b = blockIdx.x, row = b / splits;
    const long long begin = (b % splits) * seg_len;
    const long long end = begin + seg_len < cols ? begin + seg_len : cols;
    const float *xr = x + row * cols;

    online_md s = online_md_identity();
    for (long long j = begin + threadIdx.x; j < end; j += SPLIT_BLOCK) s = online_md_push<1>(s, &xr[j]);
    s = online_md_row_merge<SPLIT_BLOCK>(s, red_m, red_d);
    if (threadIdx.x == 0) work[b] = s;
}

__global__ void __launch_bounds__(SPLIT_BLOCK)
segment_normalize_kernel(const float *__restrict__ x, float *__restrict__ y, long long cols,
                         int splits, long long seg_len, const online_md *__restrict__ work)
{
    const long long b = blockIdx.x, row = b / splits;
    const long long begin = (b % splits) * seg_len;
    const long long end = begin + seg_len < cols ? begin + seg_len : cols;

    /* TODO: this is the state of this segment only. The softmax of the row
     * needs the merge of work[row * splits + 0 ... splits - 1]. */
    const online_md s = work[b];

    const float inv = 1.0f / s.d;
    for (long long j = begin + threadIdx.x; j < end; j += SPLIT_BLOCK)
        y[row * cols + j] = expf(x[row * cols + j] - s.m) * inv;
}

void softmax_split(const float *x, float *y, long long rows, long long cols, int splits,
                   online_md *work, cudaStream_t stream)
{
    if (rows < 1 || cols < 1 || splits < 1) return;
    const long long seg_len = (cols + splits - 1) / splits;
    const unsigned blocks = (unsigned)(rows * splits);
    segment_state_kernel<<<blocks, SPLIT_BLOCK, 0, stream>>>(x, cols, splits, seg_len, work);
    CUDA_CHECK_LAUNCH();
    segment_normalize_kernel<<<blocks, SPLIT_BLOCK, 0, stream>>>(x, y, cols, splits, seg_len, work);
    CUDA_CHECK_LAUNCH();
}
