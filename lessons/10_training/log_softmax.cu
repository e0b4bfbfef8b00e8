/* Lesson 10: log-softmax, out = x - m - log(d), m = max(x), d = sum exp(x - m).
 *
 * Why not log(softmax(x)): softmax underflows to 0 for every x more than
 * about 104 below the max (exp(-104) is below float's smallest subnormal),
 * and log(0) = -inf, where the true answer is a modest -104.x. Written as
 * x - m - log(d), the only exp is inside d, whose terms are all <= 1 with
 * at least one equal to 1: d is in [1, N], log(d) in [0, log N], and the
 * result is exact up to a few ulps for every input lesson 2 handles.
 *
 * While the row fits in registers (TRAIN_REG_MAX_COLS): read once, max and
 * sum reduced on chip, written once: 8 bytes per element, a copy's. Longer
 * rows, on chip across CTAs (train_grid.cuh): each CTA's piece waits on
 * chip while the pieces' (m, d) states (lesson 6's) meet in a cluster or
 * the workspace: still 8 bytes. Split, when a row is too long for that:
 * kernel 1 writes each piece's (m, d), kernel 2 merges the row's states
 * in each block and writes its piece: 2 reads + 1 write = 12 bytes per
 * element. */
#include "check.h"
#include "train_grid.cuh"

template <int VEC, int FPT, int TPR, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
log_softmax_registers_kernel(const float *__restrict__ x, float *__restrict__ out, long long rows, int cols)
{
    constexpr int ROWS_PER_BLOCK = BLOCK / TPR;
    __shared__ float red_max[32], red_sum[32]; /* two arrays: common/device/row_reduce.cuh says why */
    const int sub = threadIdx.x % TPR;
    for (long long first = (long long)blockIdx.x * ROWS_PER_BLOCK; first < rows;
         first += (long long)gridDim.x * ROWS_PER_BLOCK) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < rows;
        const long long off = (live ? row : 0) * cols;
        float v[FPT];
        train_load<VEC, FPT, TPR>(x + off, cols, sub, live, v, -INFINITY);
        float m = -INFINITY;
#pragma unroll
        for (int p = 0; p < FPT; p++) m = fmaxf(m, v[p]);
        m = row_reduce<TPR>(m, red_max, op_max());
        float d = 0.0f;
#pragma unroll
        for (int p = 0; p < FPT; p++) d += expf(v[p] - m);
        d = row_reduce<TPR>(d, red_sum, op_sum());
        /* (x - m) first: exact or nearly for x near m, where the result is
         * small; m = -inf (a row of only -inf) gives NaN, as lesson 2. */
        const float lse = logf(d);
#pragma unroll
        for (int p = 0; p < FPT; p++) v[p] = (v[p] - m) - lse;
        train_store<VEC, FPT, TPR>(out + off, cols, sub, live, v);
    }
}

/* Kernel 2 of the split path: the row's (m, d) from all its pieces' states
 * (the same merge in every block of the row), then this piece's output,
 * in vectors of VEC floats. */
/* (x - m) - log d of one element (train_split_map's op). */
struct log_softmax_op {
    float m, lse;
    __device__ float operator()(float v, long long) const { return (v - m) - lse; }
};

template <int VEC>
__global__ void __launch_bounds__(TRAIN_SPLIT_BLOCK)
log_softmax_split_write_kernel(const float *__restrict__ x, float *__restrict__ out, long long cols,
                               long long splits, const online_md *__restrict__ state)
{
    __shared__ float red_m[32], red_d[32];
    long long row, begin, len;
    train_piece(splits, cols, &row, &begin, &len);
    const online_md s = train_merge_pieces<TRAIN_SPLIT_BLOCK>(state + row * splits, splits, red_m, red_d);
    const log_softmax_op op = {s.m, logf(s.d)};
    train_split_map<VEC>(x + row * cols + begin, out + row * cols + begin, len / VEC, op);
}

/* Long rows on chip: a CTA's piece, its (m, d), the row's from the
 * exchange (CLUSTER: the row is a cluster, train_grid.cuh), then
 * (x - m) - log d from the raw values it kept.
 *
 * Through the workspace, the ticket and the exchange are written out here
 * as lesson 8's path 3g writes them (common/device/path3g_grid.cu), not
 * through train_onchip_take and train_onchip_exchange. The two forms
 * differ in the PTX only in where the counter's address and the piece's
 * length are computed, yet ptxas scheduled the helpers' form 4 us slower
 * at 64 x 2^20 (log-softmax 204 us, lesson 8 200 us, H100). In a
 * standalone 2 x 2 of frame and body (docs/experiments/frame_body.cu),
 * only the helpers with this kernel's load and store were slow; either
 * half with lesson 8's other half ran at lesson 8's speed. The same change
 * to the classifier's kernel moved nothing, so it keeps the helpers
 * (docs/experiments/training-onchip-clusters.md). */
template <int VEC, bool CLUSTER, int B = TRAIN_GRID_BLOCK>
__global__ void __launch_bounds__(B) /* no minimum: train_grid.cuh, TRAIN_GRID_MIN_CTAS */
log_softmax_grid_kernel(const float *__restrict__ x, float *__restrict__ out, long long cols, int pieces, int seg,
                        unsigned *sync, online_md *work)
{
    if constexpr (CLUSTER && !FX_CLUSTER_CODE) return; /* never launched there (train_onchip_exchange) */
    extern __shared__ float4 train_grid_smem[];
    float *srow = reinterpret_cast<float *>(train_grid_smem);
    __shared__ float red_m[32], red_d[32];
    long long row, begin;
    int piece, len;
    if constexpr (CLUSTER) {
        train_onchip_take<true>(sync, pieces, seg, cols, &row, &piece, &begin, &len);
    } else {
        __shared__ unsigned ticket;
        if (threadIdx.x == 0) fx_grid_ticket(&sync[0], &ticket);
        __syncthreads();
        row = ticket / (unsigned)pieces;
        piece = (int)(ticket % (unsigned)pieces);
        len = fx_piece_len((int)cols, piece, seg); /* int: a row on chip fits the GPU, far below 2^31 */
        begin = (long long)piece * seg;
    }
    float v[TRAIN_GRID_FPT];
    online_md s = train_onchip_load<VEC, TRAIN_GRID_FPT, true, float, false, B>(x + row * cols + begin, len, v, srow,
                                                                                -INFINITY);
    s = online_md_row_merge<B>(s, red_m, red_d);
    unsigned before = 0;
    online_md r;
    if constexpr (CLUSTER) {
        r = train_onchip_exchange<true>(s, work + row * pieces, piece, pieces, &sync[1 + row], red_m, red_d, &before);
    } else {
        online_md *wr = work + row * pieces;
        if (threadIdx.x == 0) {
            wr[piece] = s;
            fx_grid_arrive_wait(&sync[1 + row], (unsigned)pieces); /* count in, wait for the row */
        }
        __syncthreads(); /* thread 0's acquire covers the block's reads after the barrier */
        online_md q = online_md_identity();
        for (int i = threadIdx.x; i < pieces; i += B) {
            const float2 w = __ldcg(reinterpret_cast<const float2 *>(wr + i)); /* from L2, never a stale L1 line */
            const online_md o = {w.x, w.y};
            q = online_md_merge(q, o);
        }
        r = online_md_row_merge<B>(q, red_m, red_d);
        before = threadIdx.x == 0 ? fx_grid_count_out(&sync[1 + row]) : 0u;
    }
    const log_softmax_op op = {r.m, logf(r.d)};
    train_onchip_store<VEC, TRAIN_GRID_FPT, float, log_softmax_op, B>(out + row * cols + begin, len, v, srow, op);
    if constexpr (CLUSTER) train_onchip_leave<true>(&sync[1 + row], before, pieces);
    else if (threadIdx.x == 0) fx_grid_leave(&sync[1 + row], before, (unsigned)pieces);
}

/* The on-chip plan for rows x cols (false: the pieces do not fit), in
 * clusters where they pay (train_cluster_plan). */
template <int VEC>
static bool log_softmax_grid_plan(long long rows, long long cols, train_grid_plan *p)
{
    constexpr long long RCAP = TRAIN_GRID_BLOCK * TRAIN_GRID_FPT, CAP = RCAP + TRAIN_GRID_SMEM / 4;
    if (!train_grid_make_plan(rows, cols, CAP, RCAP, 1, 4,
                              train_grid_resident((const void *)log_softmax_grid_kernel<VEC, false>), p))
        return false;
    /* 128 KB CTAs up to 32 pieces of 64 KB (2^19 floats in a cluster of 16) */
    train_float_cluster_plan(rows, cols, 32, (const void *)log_softmax_grid_kernel<VEC, true>,
                             (const void *)log_softmax_grid_kernel<VEC, true, TRAIN_BIG_BLOCK>, p);
    return true;
}

int log_softmax_on_chip(long long rows, long long cols)
{
    train_grid_plan p;
    return log_softmax_grid_plan<4>(rows, cols, &p) ? (p.cluster ? p.cluster : 1) : 0;
}

/* The on-chip path for all rows, if their pieces fit on the GPU at once. */
template <int VEC>
static bool log_softmax_grid(const float *x, float *out, long long rows, long long cols, cudaStream_t stream)
{
    train_grid_plan p;
    if (!log_softmax_grid_plan<VEC>(rows, cols, &p)) return false;
    const long long batch = train_grid_batch(p.pieces);
    online_md *work = (online_md *)train_workspace((size_t)((batch < rows ? batch : rows) * p.pieces) * sizeof(online_md));
    for (long long r0 = 0; r0 < rows; r0 += batch) {
        const long long n = rows - r0 < batch ? rows - r0 : batch, o = r0 * cols;
        unsigned *sync = train_sync_counters(n + 1);
        train_onchip_launch(&p, n, stream,
                            p.block == TRAIN_BIG_BLOCK ? log_softmax_grid_kernel<VEC, true, TRAIN_BIG_BLOCK>
                            : p.cluster                ? log_softmax_grid_kernel<VEC, true>
                                                       : log_softmax_grid_kernel<VEC, false>,
                            x + o, out + o, cols, (int)p.pieces, (int)p.seg, sync, work);
    }
    return true;
}

template <int VEC, int FPT, int TPR, int BLOCK>
static void launch_log_softmax(const float *x, float *out, long long rows, long long cols, cudaStream_t stream)
{
    log_softmax_registers_kernel<VEC, FPT, TPR, BLOCK><<<train_grid(rows, BLOCK / TPR), BLOCK, 0, stream>>>(
        x, out, rows, (int)cols);
    CUDA_CHECK_LAUNCH();
}

void log_softmax_forward(const float *x, float *out, long long rows, long long cols, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    const bool v4 = train_aligned(x, cols, 4) && train_aligned(out, cols, 4);
    switch (train_class(cols)) {
#define LOG_SOFTMAX_CASE(c, maxc, fpt, tpr, block)                                   \
    case c:                                                                          \
        if (v4) launch_log_softmax<4, fpt, tpr, block>(x, out, rows, cols, stream);  \
        else launch_log_softmax<1, fpt, tpr, block>(x, out, rows, cols, stream);     \
        return;
        TRAIN_CLASSES(LOG_SOFTMAX_CASE)
#undef LOG_SOFTMAX_CASE
    default: {
        if (train_long_on_chip() && (v4 ? log_softmax_grid<4>(x, out, rows, cols, stream)
                                        : log_softmax_grid<1>(x, out, rows, cols, stream)))
            return;
        const long long splits = train_splits(cols), batch = train_split_batch(splits);
        online_md *state =
            (online_md *)train_workspace((size_t)(batch < rows ? batch : rows) * splits * sizeof(online_md));
        for (long long r0 = 0; r0 < rows; r0 += batch) {
            const long long n = rows - r0 < batch ? rows - r0 : batch, o = r0 * cols;
            train_split_states<float>(x + o, n, cols, splits, (const int *)nullptr, state, (float *)nullptr, v4, stream);
            if (v4)
                log_softmax_split_write_kernel<4><<<(unsigned)(n * splits), TRAIN_SPLIT_BLOCK, 0, stream>>>(
                    x + o, out + o, cols, splits, state);
            else
                log_softmax_split_write_kernel<1><<<(unsigned)(n * splits), TRAIN_SPLIT_BLOCK, 0, stream>>>(
                    x + o, out + o, cols, splits, state);
            CUDA_CHECK_LAUNCH();
        }
    }
    }
}
