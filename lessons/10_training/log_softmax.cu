/* Lesson 10: log-softmax, out = x - m - log(d), m = max(x), d = sum exp(x - m).
 *
 * Why not log(softmax(x)): softmax underflows to 0 for every x more than
 * about 104 below the max (exp(-104) is below float's smallest subnormal),
 * and log(0) = -inf, where the true answer is a modest -104.x. Written as
 * x - m - log(d), the only exp is inside d, whose terms are all <= 1 with
 * at least one equal to 1: d is in [1, N], log(d) in [0, log N], and the
 * result is exact up to a few ulps for every input lesson 2 handles.
 *
 * While the row fits in registers (TRAIN_REG_MAX_COLS): the row engine's
 * paths 1 and 2 (common/device/path1_2_rows.cuh), which lesson 8 teaches
 * for the softmax, with this operation's ending (op_log_softmax): read
 * once, max and sum reduced on chip, written once: 8 bytes per element, a
 * copy's. Longer
 * rows, on chip across CTAs (train_grid.cuh): each CTA's piece waits on
 * chip while the pieces' (m, d) states (lesson 6's) meet in a cluster or
 * the workspace: still 8 bytes. Split, when a row is too long for that:
 * kernel 1 writes each piece's (m, d), kernel 2 merges the row's states
 * in each block and writes its piece: 2 reads + 1 write = 12 bytes per
 * element. */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "train_grid.cuh"
#include "device/path1_2_rows.cuh" /* the row engine's paths 1 and 2, for any operation */

/* log-softmax as an operation of the row engine (common/device/rows_op.cuh):
 * each register keeps x, and (x - m) first, exact or nearly for x near m,
 * where the result is small; m = -inf (a row of only -inf) gives NaN, as
 * lesson 2. */
struct op_log_softmax {
    static constexpr bool KEEP_EXP = false;
    static constexpr int FPT_MIN = 8; /* each thread's log over 8 floats at least (fx_reg_op) */
    struct fin {
        float m, lse;
    };
    static __device__ __forceinline__ fin finish(float m, float d) { return fin{m, logf(d)}; }
    static __device__ __forceinline__ float out(float x, fin f) { return (x - f.m) - f.lse; }
};

/* Kernel 2 of the split path: the row's (m, d) from all its pieces' states
 * (the same merge in every block of the row), then this piece's output,
 * in vectors of VEC floats. */
/* (x - m) - log d of one element (train_split_map's op). */
struct log_softmax_op {
    op_log_softmax::fin f;
    __device__ float operator()(float v, long long) const { return op_log_softmax::out(v, f); }
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
    const log_softmax_op op = {op_log_softmax::finish(s.m, s.d)};
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

/* Rows up to TRAIN_REG_MAX_COLS: the row engine's plan for float rows in
 * registers (path 1 up to 1024 floats, else path 2), 16-byte accesses
 * where the rows allow them, peeled where they start off 16 bytes. */
static fastest_plan log_softmax_reg_plan(const float *x, float *out, long long rows, long long cols)
{
    const fastest_path want = cols <= FASTEST_WARP_MAX_COLS ? FASTEST_WARP : FASTEST_BLOCK;
    return fx_plan_f32(want, x, cols, out, cols, rows, cols);
}

const char *log_softmax_reg_name(long long rows, long long cols)
{
    static char name[128];
    const float *a = (const float *)(uintptr_t)256; /* an aligned address, never dereferenced */
    const fastest_plan p = log_softmax_reg_plan(a, (float *)(uintptr_t)256, rows, cols);
    const fx_reg_config c = fx_reg_op(fx_reg_for(fx_reg_index(cols, p.path == FASTEST_WARP ? 0 : FX_NWARP), 4),
                                      op_log_softmax::FPT_MIN);
    snprintf(name, sizeof name, "registers (the row engine's path %d), %d %s per row, %d floats each",
             p.path == FASTEST_WARP ? 1 : 2, c.tpr, c.tpr == 1 ? "lane" : c.tpr < 32 ? "lanes" : "threads", c.fpt);
    return name;
}

void log_softmax_forward(const float *x, float *out, long long rows, long long cols, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    if (cols <= TRAIN_REG_MAX_COLS) {
        const fastest_plan p = log_softmax_reg_plan(x, out, rows, cols);
        fx_run_rows_op<op_log_softmax>(&p, x, cols, out, cols, rows, cols, stream);
        return;
    }
    const bool v4 = train_aligned(x, cols, 4) && train_aligned(out, cols, 4);
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
