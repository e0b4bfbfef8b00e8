/* Lesson 10: the cross-entropy loss per row, loss = logsumexp(x) - x[t].
 *
 * -log softmax(x)[t] = -(x[t] - m - log d) = (m - x[t]) + log(d): lesson
 * 6's (m, d) of the row plus the one logit of the target. Nothing is
 * written per element, so one streaming read of the logits is all it
 * needs:
 *
 *     1 read = 4 bytes per element, for every row length,
 *
 * and its bound is a read-only pass over the same bytes, not a copy (which
 * moves twice as many). The output is M floats.
 *
 * x[t] is not fetched with a second access: each thread already holds its
 * share of the row, and the one that holds column t contributes it to a
 * sum in which every other thread contributes 0 (exact: x + 0 = x).
 *
 * Rows longer than TRAIN_REG_MAX_COLS: kernel 1 (train_split_state_kernel)
 * writes each piece's (m, d) and, from the piece that holds t, x[t]; a
 * tiny kernel merges each row's states (a warp per row) into its loss.
 * Still 4 bytes per element, plus 8 per piece of TRAIN_SPLIT_SEG floats. */
#include "check.h"
#include "train_row.cuh"

/* The loss of one row, given its (m, d), x[t] and t: 0 for an ignored row,
 * NaN for a target out of range (no element of the row was t). */
__device__ __forceinline__ float train_loss_or_rule(long long t, long long cols, int ignore_index, float m, float d,
                                                    float xt)
{
    if (t == ignore_index) return 0.0f;
    if (t < 0 || t >= cols) return __int_as_float(0x7fc00000); /* quiet NaN */
    return train_row_loss(m, d, xt);
}

template <int VEC, int FPT, int TPR, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
cross_entropy_registers_kernel(const float *__restrict__ x, const int *__restrict__ targets, float *__restrict__ loss,
                               long long rows, int cols, int ignore_index)
{
    constexpr int ROWS_PER_BLOCK = BLOCK / TPR;
    __shared__ float red_max[32], red_sum[32], red_t[32];
    const int sub = threadIdx.x % TPR;
    for (long long first = (long long)blockIdx.x * ROWS_PER_BLOCK; first < rows;
         first += (long long)gridDim.x * ROWS_PER_BLOCK) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < rows;
        const int t = live ? targets[row] : -1;
        const int tc = t >= 0 && t < cols ? t : -1; /* the column to pick up: never a slot past the end */
        float v[FPT];
        train_load<VEC, FPT, TPR>(x + (live ? row : 0) * cols, cols, sub, live, v, -INFINITY);
        float xt;
        const float m = train_row_max_pick<VEC, FPT, TPR>(v, sub, tc, red_max, red_t, &xt);
        float d = 0.0f;
#pragma unroll
        for (int p = 0; p < FPT; p++) d += expf(v[p] - m);
        d = row_reduce<TPR>(d, red_sum, op_sum());
        if (live && sub == 0) loss[row] = train_loss_or_rule(t, cols, ignore_index, m, d, xt);
    }
}

/* The split path's merge: a warp per row, lane k merging states k, k + 32,
 * ..., then a butterfly (common/device/online_md.cuh). */
#define CE_MERGE_BLOCK 128
__global__ void __launch_bounds__(CE_MERGE_BLOCK)
cross_entropy_merge_kernel(const online_md *__restrict__ state, const float *__restrict__ xt,
                           const int *__restrict__ targets, float *__restrict__ loss, long long rows, long long cols,
                           long long splits, int ignore_index)
{
    const long long row = (long long)blockIdx.x * (CE_MERGE_BLOCK / 32) + threadIdx.x / 32;
    const bool live = row < rows; /* whole warps are dead or live: no early return before the shuffles */
    online_md s = online_md_identity();
    if (live)
        for (long long k = threadIdx.x % 32; k < splits; k += 32) s = online_md_merge(s, state[row * splits + k]);
    s = online_md_row_merge<32>(s, nullptr, nullptr); /* no shared memory for a warp */
    if (live && threadIdx.x % 32 == 0) {
        const long long t = targets[row];
        const bool in_range = t >= 0 && t < cols; /* xt[row] was written only then */
        loss[row] = train_loss_or_rule(t, cols, ignore_index, s.m, s.d, in_range ? xt[row] : 0.0f);
    }
}

template <int VEC, int FPT, int TPR, int BLOCK>
static void launch_cross_entropy(const float *x, const int *targets, float *loss, long long rows, long long cols,
                                 int ignore_index, cudaStream_t stream)
{
    cross_entropy_registers_kernel<VEC, FPT, TPR, BLOCK><<<train_grid(rows, BLOCK / TPR), BLOCK, 0, stream>>>(
        x, targets, loss, rows, (int)cols, ignore_index);
    CUDA_CHECK_LAUNCH();
}

void cross_entropy_forward(const float *x, const int *targets, float *loss, long long rows, long long cols,
                           int ignore_index, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    const bool v4 = train_aligned(x, cols, 4);
    switch (train_class(cols)) {
#define CE_CASE(c, maxc, fpt, tpr, block)                                                                   \
    case c:                                                                                                 \
        if (v4) launch_cross_entropy<4, fpt, tpr, block>(x, targets, loss, rows, cols, ignore_index, stream); \
        else launch_cross_entropy<1, fpt, tpr, block>(x, targets, loss, rows, cols, ignore_index, stream);    \
        return;
        TRAIN_CLASSES(CE_CASE)
#undef CE_CASE
    default: {
        const long long splits = train_splits(cols), batch = train_split_batch(splits);
        const long long nb = batch < rows ? batch : rows;
        /* workspace: nb x splits states, then nb floats of x[t] */
        online_md *state = (online_md *)train_workspace((size_t)nb * splits * sizeof(online_md) + (size_t)nb * sizeof(float));
        float *xt = (float *)(state + nb * splits);
        for (long long r0 = 0; r0 < rows; r0 += batch) {
            const long long n = rows - r0 < batch ? rows - r0 : batch, o = r0 * cols;
            train_split_states<float>(x + o, n, cols, splits, targets + r0, state, xt, v4, stream);
            cross_entropy_merge_kernel<<<train_grid(n, CE_MERGE_BLOCK / 32), CE_MERGE_BLOCK, 0, stream>>>(
                state, xt, targets + r0, loss + r0, n, cols, splits, ignore_index);
            CUDA_CHECK_LAUNCH();
        }
    }
    }
}
