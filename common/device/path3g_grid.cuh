/* Taught in lesson 8. Path 3g of the row engine (path3g_grid.cu says
 * what it is for), for any row operation (rows_op.cuh) and storage type:
 * the kernel, its occupancy and its launcher as templates, which
 * path3g_grid.cu instantiates for the softmax and lesson 10 for its
 * operations. Each operation's kernel has its own registers, so its own
 * residency: the plan asks fx_grid_resident_op of that kernel, since a
 * row's pieces must all be resident at once. */
#ifndef COMMON_DEVICE_PATH3G_GRID_CUH
#define COMMON_DEVICE_PATH3G_GRID_CUH
#include <limits.h>
#include <math.h>

#include "check.h"
#include "fastest_device.cuh"
#include "fastest_paths.h"
#include "grid_sync.cuh" /* the ticket, the release add and the acquire load */

/* Path 3g: one row over P independent CTAs (any GPU of the last decade).
 * Clusters stop at 16 CTAs; a 4 MiB row then needs 256 KB per CTA, one CTA
 * per SM, and DRAM idles through every wait (75 % of copy at 64 x 2^20 on
 * the H100). Spread over P = 32 ... 64 CTAs of 64-128 KB, two to four share
 * an SM and hide each other's waits.
 * The states travel through global memory: each CTA writes its state to
 * work[row * P + piece], then counts itself in at sync[1 + row] and waits
 * until all P have, then merges the P states (same threads, same order,
 * same tree in every CTA: the same bits).
 * Waiting for other CTAs is safe only if they are sure to run. A CTA
 * takes its piece from a ticket (sync[0]) drawn when it starts, not from
 * blockIdx: tickets go out in the order CTAs become resident, so every
 * ticket below ours belongs to a running CTA. Only the row with the
 * highest ticket can be incomplete; all rows below it finish and free
 * their SMs for the CTAs it waits for, as long as one row's P CTAs fit on
 * the GPU at once (the host checks). Single-pass scans, whose blocks wait
 * for other blocks, meet the same question (Merrill and Garland,
 * "Single-pass parallel prefix scan with decoupled look-back", 2016).
 * The counters start at 0 (the host zeroes them once, when it allocates
 * them) and the kernel leaves them at 0: the last ticket puts sync[0]
 * back, and each CTA counts itself in a second time once past the wait,
 * the last of the row's 2P counts putting sync[1 + row] back. A memset
 * before each launch would do the same at a cost of 1 us or so: at
 * 1 x 2^20, 57.7 % of copy without it against 54.6 % with it, H100
 * (docs/experiments/rows-grid-path.md).
 * The exchange: thread 0 writes the CTA's state b as piece `piece` of the
 * row's states wr, counts in at *count and waits; then the block merges
 * the P states. *before: thread 0's count out, for fx_grid_leave. Path 3b
 * meets the same way past a cluster's size (path3b_bulk.cuh). */
template <int BLOCK>
__device__ __forceinline__ online_md fx_grid_exchange(online_md b, online_md *wr, int piece, int pieces,
                                                      unsigned *count, float *red_m, float *red_d, unsigned *before)
{
    if (threadIdx.x == 0) {
        wr[piece] = b;
        fx_grid_arrive_wait(count, (unsigned)pieces); /* count in, wait for the row */
    }
    __syncthreads(); /* thread 0's acquire covers the block's reads after the barrier */
    /* The block merges the P states together, then across its warps: every
     * warp merging all P states itself is half a point slower at
     * 64 x 2^20 on the H100. */
    online_md q = online_md_identity();
    for (int i = threadIdx.x; i < pieces; i += BLOCK) {
        const float2 w = __ldcg(reinterpret_cast<const float2 *>(wr + i)); /* from L2, never a stale L1 line */
        const online_md o = {w.x, w.y};
        q = online_md_merge(q, o);
    }
    const online_md R = online_md_row_merge<BLOCK>(q, red_m, red_d);
    *before = threadIdx.x == 0 ? fx_grid_count_out(count) : 0u;
    return R;
}

/* The kernel: a piece of FPT elements a thread in registers, the rest in
 * shared memory (fx_piece_read), as path 3's CTA holds it. */
template <class OP, int VEC, bool PEEL, int FPT, int BLOCK, bool XS, class T = float>
__global__ void __launch_bounds__(BLOCK)
fastest_grid_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, int cols,
                    int pieces, int seg, int mis, unsigned *sync, online_md *work, OP op)
{
    extern __shared__ float4 fastest_grid_smem[];
    T *srow = reinterpret_cast<T *>(fastest_grid_smem);
    __shared__ float red_m[32], red_d[32];
    __shared__ unsigned ticket;

    if (threadIdx.x == 0) fx_grid_ticket(&sync[0], &ticket);
    __syncthreads();
    const long long row = ticket / (unsigned)pieces;
    const int piece = (int)(ticket % (unsigned)pieces);
    const T *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, XS ? ldy : ldx, mis, cols); /* XS: mis is y's */
    const int len = fx_piece_len((int)(cut.nvec * VEC), piece, seg);
    const int begin = cut.head + piece * seg;
    const bool has_extra = PEEL && piece == 0 && (int)threadIdx.x < cut.nextra;

    fx_row_t<OP> r{};
    if constexpr (OP::ROW) r = op.begin(row, true);
    float v[FPT + (PEEL ? 1 : 0)], m_regs;
    const online_md t = fx_piece_read<OP, VEC, PEEL, FPT, BLOCK, XS>(
        xr + begin, len, has_extra ? view_extra_load(xr, cut, threadIdx.x) : -INFINITY, v, srow, &m_regs);
    [[maybe_unused]] bool owner = false; /* ROW: this thread holds the row's column */
    if constexpr (OP::ROW)
        owner = fx_row_piece_pick<PEEL>(op, &r, xr, begin, begin + len, VEC, BLOCK, (int)threadIdx.x, cut, piece == 0);
    unsigned before = 0;
    const online_md R = fx_grid_exchange<BLOCK>(online_md_row_merge<BLOCK>(t, red_m, red_d), work + row * pieces,
                                                piece, pieces, &sync[1 + row], red_m, red_d, &before);
    T *yr = y + row * ldy;
    [[maybe_unused]] const typename OP::fin f = fx_finish(op, R.m, R.d, r);
    if constexpr (OP::ROW) fx_row_piece_lead(op, r, f, owner, piece == 0);
    if constexpr (OP::OUT)
        fx_piece_write<OP, VEC, PEEL, FPT, BLOCK>(yr + begin, len, v, srow, m_regs, R,
                                                  has_extra ? yr + fx_extra_at<T>(cut, threadIdx.x) : nullptr, f);
    if constexpr (OP::ROW) fx_row_piece_end(op, r, f, yr, owner, red_m);
    if (threadIdx.x == 0) fx_grid_leave(&sync[1 + row], before, (unsigned)pieces);
}

/* ---- path 3g for an operation of two inputs (NIN = 2, float rows) ------
 * Each CTA holds its piece of both inputs: FPT floats of each per thread
 * in registers, the rest of each in shared memory (a's part, then b's).
 * It loads a's piece, then b's, 64 bytes per thread in flight, and only
 * then reduces its part of the row's sum of OP::term, going over shared
 * memory a second time: folding the terms in as both arrive was 1.4-2.2 %
 * slower for the backward at N = 2^15 ... 2^20 on the H200
 * (docs/experiments/rows-two-inputs.md). Returns this thread's part of the
 * sum. */
template <class OP, int VEC, int FPT, int BLOCK>
__device__ __forceinline__ float fx_piece2_read(const float *__restrict__ xa, const float *xb, int len, float *a,
                                                float *b, float *sa, float *sb)
{
    constexpr int RCAP = BLOCK * FPT, U = 8 / VEC;
    const int rlen = len < RCAP ? len : RCAP;
    const int nvec_r = rlen / VEC, nvec_s = (len - rlen) / VEC;
#pragma unroll
    for (int i = 0; i < FPT / VEC; i++) {
        const int k = i * BLOCK + (int)threadIdx.x;
        if (k < nvec_r) {
            load_vec<VEC>(xa + k * VEC, &a[i * VEC]);
            load_vec<VEC>(xb + k * VEC, &b[i * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) a[i * VEC + j] = b[i * VEC + j] = 0.0f;
        }
    }
    float s = 0.0f;
    /* a's shared part, then b's: 16 floats per thread in flight (written
     * out twice: this is the machine code measured; a helper or a loop over
     * the two inputs compiles to a different schedule) */
    for (int k0 = threadIdx.x; k0 < nvec_s; k0 += 2 * U * BLOCK) {
        float u[2 * U * VEC];
#pragma unroll
        for (int i = 0; i < 2 * U; i++) {
            const int k = k0 + i * BLOCK;
            if (k < nvec_s) load_vec<VEC>(xa + RCAP + k * VEC, &u[i * VEC]);
        }
#pragma unroll
        for (int i = 0; i < 2 * U; i++) {
            const int k = k0 + i * BLOCK;
            if (k < nvec_s) store_vec<VEC>(sa + k * VEC, &u[i * VEC]);
        }
    }
    for (int k0 = threadIdx.x; k0 < nvec_s; k0 += 2 * U * BLOCK) {
        float u[2 * U * VEC];
#pragma unroll
        for (int i = 0; i < 2 * U; i++) {
            const int k = k0 + i * BLOCK;
            if (k < nvec_s) load_vec<VEC>(xb + RCAP + k * VEC, &u[i * VEC]);
        }
#pragma unroll
        for (int i = 0; i < 2 * U; i++) {
            const int k = k0 + i * BLOCK;
            if (k < nvec_s) store_vec<VEC>(sb + k * VEC, &u[i * VEC]);
        }
    }
#pragma unroll
    for (int p = 0; p < FPT; p++) s += OP::term(a[p], b[p]);
    for (int k = threadIdx.x; k < nvec_s; k += BLOCK) {
        float u[VEC], w[VEC];
        load_vec<VEC>(sa + k * VEC, u);
        load_vec<VEC>(sb + k * VEC, w);
#pragma unroll
        for (int j = 0; j < VEC; j++) s += OP::term(u[j], w[j]);
    }
    return s;
}

/* The way out of fx_piece2_read's piece: OP::out2 of each element pair. */
template <class OP, int VEC, bool PEEL, int FPT, int BLOCK>
__device__ __forceinline__ void fx_piece2_write(float *yr, int len, float *a, const float *b, const float *sa,
                                                const float *sb, typename OP::fin f)
{
    constexpr int RCAP = BLOCK * FPT;
    const int rlen = len < RCAP ? len : RCAP;
    const int nvec_r = rlen / VEC, nvec_s = (len - rlen) / VEC;
#pragma unroll
    for (int i = 0; i < FPT / VEC; i++) {
        const int k = i * BLOCK + (int)threadIdx.x;
        if (k < nvec_r) {
#pragma unroll
            for (int j = 0; j < VEC; j++) a[i * VEC + j] = OP::out2(a[i * VEC + j], b[i * VEC + j], f);
            if constexpr (PEEL) fx_store_peel<VEC>(yr + k * VEC, &a[i * VEC]);
            else store_vec<VEC>(yr + k * VEC, &a[i * VEC]);
        }
    }
    for (int k = threadIdx.x; k < nvec_s; k += BLOCK) {
        float u[VEC], w[VEC];
        load_vec<VEC>(sa + k * VEC, u);
        load_vec<VEC>(sb + k * VEC, w);
#pragma unroll
        for (int j = 0; j < VEC; j++) u[j] = OP::out2(u[j], w[j], f);
        store_vec<VEC>(yr + RCAP + k * VEC, u);
    }
}

/* The kernel: path 3g's ticket, pieces and exchange, the row's sum in
 * each state's m. y may be x2 (lesson 10's dx = dy): each CTA reads its
 * whole piece before the exchange. */
template <class OP, int VEC, bool PEEL, int FPT, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_grid2_kernel(const float *__restrict__ x, long long ldx, const float *x2, long long ldx2, float *y,
                     long long ldy, int cols, int pieces, int seg, int mis, unsigned *sync, online_md *work)
{
    extern __shared__ float4 fastest_grid_smem[];
    constexpr int RCAP = BLOCK * FPT;
    float *sa = reinterpret_cast<float *>(fastest_grid_smem);
    float *sb = sa + (seg > RCAP ? seg - RCAP : 0);
    __shared__ float red[32];
    __shared__ unsigned ticket;

    if (threadIdx.x == 0) fx_grid_ticket(&sync[0], &ticket);
    __syncthreads();
    const long long row = ticket / (unsigned)pieces;
    const int piece = (int)(ticket % (unsigned)pieces);
    const float *xr = x + row * ldx, *x2r = x2 + row * ldx2;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, ldx, mis, cols);
    const int len = fx_piece_len((int)(cut.nvec * VEC), piece, seg);
    const int begin = cut.head + piece * seg;
    const bool has_extra = PEEL && piece == 0 && (int)threadIdx.x < cut.nextra;
    float a[FPT], b[FPT];
    float s = fx_piece2_read<OP, VEC, FPT, BLOCK>(xr + begin, x2r + begin, len, a, b, sa, sb);
    const float ea = has_extra ? view_extra_load(xr, cut, threadIdx.x) : 0.0f;
    const float eb = has_extra ? view_extra_load(x2r, cut, threadIdx.x) : 0.0f;
    s += OP::term(ea, eb);
    s = row_reduce<BLOCK>(s, red, op_sum());
    online_md *wr = work + row * pieces;
    if (threadIdx.x == 0) {
        wr[piece] = online_md{s, 0.0f};
        fx_grid_arrive_wait(&sync[1 + row], (unsigned)pieces); /* count in, wait for the row */
    }
    __syncthreads(); /* thread 0's acquire covers the block's reads after the barrier */
    float q = 0.0f;
    for (int i = threadIdx.x; i < pieces; i += BLOCK) q += __ldcg(&wr[i].m); /* from L2, never a stale L1 line */
    const typename OP::fin f = OP::finish_sum(row_reduce<BLOCK>(q, red, op_sum()));
    const unsigned before = threadIdx.x == 0 ? fx_grid_count_out(&sync[1 + row]) : 0u;
    float *yr = y + row * ldy;
    fx_piece2_write<OP, VEC, PEEL, FPT, BLOCK>(yr + begin, len, a, b, sa, sb, f);
    if (has_extra) yr[view_extra_at(cut, threadIdx.x)] = OP::out2(ea, eb, f);
    if (threadIdx.x == 0) fx_grid_leave(&sync[1 + row], before, (unsigned)pieces);
}

/* A path 3g kernel over storage type T (float: lesson 8; 16-bit: lesson 9). */
template <class OP, class T>
using fx_grid_fn_t = void (*)(const T *, long long, T *, long long, int, int, int, int, unsigned *, online_md *, OP);

/* Operation OP's kernel for storage T: float rows by the plan's mode
 * (fx_plan_mode), 16-bit rows by fx_mode16's. */
template <class OP, class T>
static fx_grid_fn_t<OP, T> fx_grid_kernel_op(int mode)
{
    if constexpr (fx_is_float<T>) {
        if (mode == FX_ALIGNED) return fastest_grid_kernel<OP, 4, false, FX_GRID_FPT, FX_GRID_BLOCK, false>;
        if (mode == FX_PEELED) return fastest_grid_kernel<OP, 4, true, FX_GRID_FPT, FX_GRID_BLOCK, false>;
        if (mode == FX_YCUT) return fastest_grid_kernel<OP, 4, true, FX_GRID_FPT, FX_GRID_BLOCK, true>;
        return fastest_grid_kernel<OP, 1, false, FX_GRID_FPT, FX_GRID_BLOCK, false>;
    } else {
        if (mode == 2) return fastest_grid_kernel<OP, 8, true, FX_GRID_FPT, FX_GRID_BLOCK, false, T>;
        if (mode == 1) return fastest_grid_kernel<OP, 8, false, FX_GRID_FPT, FX_GRID_BLOCK, false, T>;
        return fastest_grid_kernel<OP, 1, false, FX_GRID_FPT, FX_GRID_BLOCK, false, T>;
    }
}

template <class OP>
using fx_grid2_fn = void (*)(const float *, long long, const float *, long long, float *, long long, int, int, int, int,
                             unsigned *, online_md *);
template <class OP>
static fx_grid2_fn<OP> fx_grid2_kernel_op(int mode)
{
    constexpr int F = FX_GRID_FPT / 2; /* of each input */
    if (mode == FX_ALIGNED) return fastest_grid2_kernel<OP, 4, false, F, FX_GRID_BLOCK>;
    if (mode == FX_PEELED) return fastest_grid2_kernel<OP, 4, true, F, FX_GRID_BLOCK>;
    return fastest_grid2_kernel<OP, 1, false, F, FX_GRID_BLOCK>;
}

/* How many CTAs of kernel k with full pieces the GPU holds at once (its
 * registers, so its occupancy, are its own). A row's pieces must all fit:
 * a CTA waits for its row's others. Opts k in to its shared memory: 48 KB
 * of dynamic shared memory, plus the kernel's static arrays, is above the
 * 48 KB a block gets without opting in. */
template <class F>
static long long fx_grid_resident_of(F k)
{
    /* 48 KB, for 16-bit CTAs and two inputs too */
    const size_t smem = (size_t)fx_grid_smem(FX_GRID_PIECE, sizeof(float), 1);
    int per_sm = 0;
    CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, FX_GRID_BLOCK, smem));
    return (long long)per_sm * fx_sms();
}

/* fx_grid_resident_of OP's kernel for mode, asked once per process (one
 * kind of GPU per process). */
template <class OP, class T>
static long long fx_grid_resident_op(int mode)
{
    static long long cache[FX_NMODES] = {-1, -1, -1, -1};
    long long *slot = &cache[mode];
    if constexpr (OP::NIN == 2) {
        if (*slot < 0) *slot = fx_grid_resident_of(fx_grid2_kernel_op<OP>(mode));
    } else {
        if (*slot < 0) *slot = fx_grid_resident_of(fx_grid_kernel_op<OP, T>(mode));
    }
    return *slot;
}

/* Rows in batches of at most INT_MAX CTAs of smem bytes of dynamic shared
 * memory. The workspace holds the batch's states; the counters are
 * sync[0], the ticket, and sync[1 + r], row r's. cut_at_y: the rows are
 * cut at y's 16-byte boundaries (FX_YCUT). Path 3b's kernels past a
 * cluster take the same arguments. */
template <class OP, class T>
static void fx_grid_batches(fx_grid_fn_t<OP, T> k, bool cut_at_y, long long smem, const T *x, long long ldx, T *y,
                            long long ldy, long long rows, long long cols, long long pieces, long long seg,
                            cudaStream_t stream, const OP &op)
{
    const long long batch_max = INT_MAX / pieces;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        online_md *work = fx_workspace(n * pieces);
        unsigned *sync = fx_sync_counters(n + 1);
        const T *xb = x + r0 * ldx;
        T *yb = y + r0 * ldy;
        const int mis = cut_at_y ? fx_mis(yb) : fx_mis(xb); /* where the rows are cut */
        k<<<(unsigned)(n * pieces), FX_GRID_BLOCK, (size_t)smem, stream>>>(xb, ldx, yb, ldy, (int)cols, (int)pieces,
                                                                            (int)seg, mis, sync, work,
                                                                            fx_op_at(op, r0));
        CUDA_CHECK_LAUNCH();
    }
}

/* Rows in batches, as fx_grid_batches, for an operation of two inputs. */
template <class OP>
static void fx_grid2_batches(fx_grid2_fn<OP> k, const float *x, long long ldx, fx_in2 in2, float *y, long long ldy,
                             long long rows, long long cols, long long pieces, long long seg, cudaStream_t stream)
{
    const long long smem = fx_grid_smem(seg, sizeof(float), 2);
    const long long batch_max = INT_MAX / pieces;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        online_md *work = fx_workspace(n * pieces);
        unsigned *sync = fx_sync_counters(n + 1);
        const float *xb = x + r0 * ldx;
        k<<<(unsigned)(n * pieces), FX_GRID_BLOCK, (size_t)smem, stream>>>(
            xb, ldx, in2.x2 + r0 * in2.ldx2, in2.ldx2, y + r0 * ldy, ldy, (int)cols, (int)pieces, (int)seg, fx_mis(xb),
            sync, work);
        CUDA_CHECK_LAUNCH();
    }
}

/* Runs plan p (path 3g) with operation OP on rows of storage type T (in2:
 * the second input of a two-input operation). */
template <class OP, class T>
static void fx_run_grid_op(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                           long long cols, cudaStream_t stream, fx_in2 in2 = fx_in2{nullptr, 0},
                           const OP &op = OP{})
{
    const int mode = fx_is_float<T> ? fx_plan_mode(p) : fx_mode16(p);
    fx_grid_resident_op<OP, T>(mode); /* the kernel's opt-in to 48 KB of shared memory */
    if constexpr (OP::NIN == 2) {
        fx_grid2_batches<OP>(fx_grid2_kernel_op<OP>(mode), x, ldx, in2, y, ldy, rows, cols, p->splits, p->segment,
                             stream);
    } else {
        (void)in2;
        const fx_grid_fn_t<OP, T> k = fx_grid_kernel_op<OP, T>(mode);
        const long long smem = fx_grid_smem(p->segment, sizeof(T), 1);
        if (smem > 48 * 1024) /* fx_grid_resident_op opted in for 48 KB; a plan never asks for more */
            CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        fx_grid_batches<OP, T>(k, fx_is_float<T> && mode == FX_YCUT, smem, x, ldx, y, ldy, rows, cols, p->splits,
                               p->segment, stream, op);
    }
}

#endif
