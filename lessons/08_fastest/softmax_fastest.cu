/* Lesson 8: the fastest softmax: one dispatcher, six kernels (see
 * softmax_fastest.h for the list and README.md for why each exists).
 *
 * One idea runs through the kernels that stream a row (path 2s) or spread
 * it over several SMs (paths 3, 3g, 4): each thread first summarises ITS
 * OWN values by a state (m_t, d_t) = (max, sum of exp(v - m_t)), replacing
 * each value by exp(v - m_t) on the way, so exp is computed once per
 * element. The states of all threads of a row (a block, a cluster of
 * blocks or many blocks) are merged with lesson 6's associative (m, d)
 * merge into the row's (M, D), and each thread writes
 *
 *     y = exp(v - m_t) * exp(m_t - M) / D = exp(v - M) / D,
 *
 * scaling by one per-thread factor. One merge of (m, d) pairs replaces
 * lesson 5's two reductions (max, then sum): one cluster barrier instead of
 * two for a cluster, one exchange through global memory for path 3g.
 * Paths 1 and 2 (a row in part of a warp, or in one block) keep lesson 5's
 * two cheap reductions, measured faster there (see fastest_rows_kernel).
 *
 * Reused from lesson 6 (included below by relative path): online_md, its
 * merge and identity, online_md_push (a chunk into a running state), the
 * warp butterfly and online_md_row_merge (1 ... 32 lanes, or a block).
 *
 * Why C++ templates: a row kept in registers is an array float v[FPT]
 * whose size must be a compile-time constant, with every loop over it
 * unrolled, or the compiler moves it to local memory (DRAM). FPT, the
 * access width VEC, the threads per row and the block size are template
 * parameters: one source, one fully unrolled kernel per row-length class,
 * picked at run time by the host. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "softmax_fastest.h"
#include "check.h"
#include "../06_online/online_md.cuh" /* lesson 6's (m, d) state and merges */
#include "../05_fused/vec.cuh"        /* lesson 5's load_vec, store_vec      */
#include "../05_fused/view_cut.cuh"   /* lesson 5's cut of misaligned rows  */
#include "../05_fused/row_reduce.cuh" /* lesson 5's row_reduce              */

/* Paths 3 and 3g are GPU-only. The cluster path needs cooperative groups
 * and cudaLaunchKernelEx, which the CPU emulator (common/emu, which defines
 * CUDA_EMU) does not have; path 3g has CTAs wait for each other, which the
 * emulator's one-block-after-another model cannot run. There neither is
 * compiled, and softmax_fastest_has_clusters() and _has_grid() say 0. */
#if !defined(CUDA_EMU)
#define FASTEST_GPU_CODE 1
#include <cooperative_groups.h>
#endif

/* ---- moving VEC consecutive floats (VEC = 4: one 16-byte access) -------
 * Lesson 5's load_vec / store_vec (vec.cuh), in global and shared memory
 * alike; x goes through the read-only path (ld.global.nc) because the
 * compiler can prove from __restrict__ that x is never written. One
 * exception: with the row offsets of peeled views (fx_row_cut) the compiler
 * split each float4 store of the register part of paths 3 and 3g into
 * 4 + 4 + 8 bytes (83.9 against 91.0 % of copy at 128 x 2^19 on the H100),
 * and one store of each peeled path 1, 2, 2s and 4 kernel. There the PEEL
 * instances (always VEC = 4) store with lesson 5's view_store4: one
 * st.global.v4 in inline PTX. Not __stwb: its "memory" clobber forbids the
 * compiler to move any load across it; used for every store it serialised
 * the shared-memory write loops (87.9 against 94.2 % at 1024 x 65536).
 * Nothing in these kernels reads y, so no clobber is needed. */


/* A thread's own state; v[p] becomes exp(v[p] - m_t). Padding is -inf
 * (exp gives 0). A thread that saw only -inf has (-inf, 0) and zeros; a
 * NaN or +inf makes d_t NaN (exp(NaN), exp(inf - inf)), and NaN survives
 * every merge: that row comes out NaN. */
template <int FPT>
__device__ __forceinline__ online_md fx_thread_state(float *v)
{
    float m = -INFINITY;
#pragma unroll
    for (int p = 0; p < FPT; p++) m = fmaxf(m, v[p]);
    const float shift = online_md_shift(m);
    float d = 0.0f;
#pragma unroll
    for (int p = 0; p < FPT; p++) {
        v[p] = expf(v[p] - shift);
        d += v[p];
    }
    online_md s = {m, d};
    return s;
}

/* The factor turning this thread's exp(v - m_t) into exp(v - M) / D.
 * All -inf row: M = -inf, D = 0: exp(-inf) * inf = NaN, as PyTorch. */
__device__ __forceinline__ float fx_scale(float m_thread, online_md row)
{
    return expf(m_thread - online_md_shift(row.m)) * (1.0f / row.d);
}

/* ---- views: peeling a row to keep 128-bit accesses ----------------------
 * Lesson 5's cut (view_cut.cuh): a head of 0-3 floats, a body of whole
 * float4s, a tail of 0-3 floats, when each row of x starts where the same
 * row of y does; the extras are taken by threads 0-5 of the row's first
 * piece. Without it, 32-bit accesses: 73-80 % of the aligned speed on
 * path 3 on the H100, 95-98 % peeled (README.md, "Measuring one of your
 * own shapes"). The PEEL template instances are separate, so aligned views
 * run exactly the code they ran before peeling existed. */
template <int VEC, bool PEEL>
__device__ __forceinline__ view_cut fx_row_cut(long long row, long long ldx, int mis, long long cols)
{
    if constexpr (VEC == 4 && PEEL) return view_row_cut(row, ldx, mis, cols);
    view_cut c = {0, 0, cols / VEC}; /* without PEEL, VEC = 4 only when cols % 4 == 0 */
    return c;
}

/* ---- paths 1 and 2: the row in registers ----------------------------------
 * TPR threads per row: 1 ... 32 neighbouring lanes (path 1, BLOCK / TPR
 * rows per block, no barrier at all), or the whole block (path 2). Thread
 * `sub` of a row holds vectors sub, sub + TPR, ... of the row's body, and
 * with PEEL one extra (v[FPT]; the host peels only when TPR >= 8, so 6
 * extras find 6 threads): coalesced, and all loads are issued before the
 * first use. A grid-stride loop over groups of rows;
 * `first` is uniform over the block, so every thread reaches the barriers
 * of the block reductions. cols <= 32768: an int.
 * The reductions are lesson 5's: max, then sum (row_reduce). Within part of
 * a warp each step is a shuffle and one cheap operation, where a butterfly
 * of (m, d) merges has two exps, on the critical path of short rows: 6.2
 * against 6.7 us at 1024 x 512. For a block the merge saves one barrier
 * round but still lost: % of copy at M x N = 2^26 (H100, 2026-11-23, three
 * runs each, merge -> two reductions): 2^14 98.5-98.7 -> 98.7-99.0, 2^15
 * 96.2-97.5 -> 97.1-98.4; even (within 0.6) from 2^11 to 2^13. */
template <int VEC, bool PEEL, int FPT, int TPR, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_rows_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y, long long ldy,
                    long long rows, int cols, int mis)
{
    static_assert(FPT % VEC == 0, "whole vectors per thread");
    static_assert(BLOCK % TPR == 0 && (TPR <= 32 || TPR == BLOCK), "a row: part of a warp, or the block");
    constexpr int ITEMS = FPT / VEC;
    constexpr int RPB = BLOCK / TPR;
    constexpr int X = PEEL ? 1 : 0; /* the extra's register */
    __shared__ float red_m[32], red_d[32]; /* TPR > 32 only: max, sum */
    const int sub = threadIdx.x % TPR;

    for (long long first = (long long)blockIdx.x * RPB; first < rows; first += (long long)gridDim.x * RPB) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < rows; /* a dead lane still joins the shuffles */
        const float *xr = x + (live ? row : 0) * ldx;
        const view_cut cut = fx_row_cut<VEC, PEEL>(live ? row : 0, ldx, mis, cols);
        const int nvec = (int)cut.nvec;
        const float *xb = xr + cut.head;
        float v[FPT + X];
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int k = i * TPR + sub;
            if (live && k < nvec) {
                load_vec<VEC>(xb + (long long)k * VEC, &v[i * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[i * VEC + j] = -INFINITY;
            }
        }
        if constexpr (X) v[FPT] = live ? view_extra_load(xr, cut, sub) : -INFINITY;
        /* All -inf row: exp(-inf - (-inf)) = NaN, as PyTorch. */
        float m = -INFINITY;
#pragma unroll
        for (int p = 0; p < FPT + X; p++) m = fmaxf(m, v[p]);
        m = row_reduce<TPR>(m, red_m, op_max());
        float d = 0.0f;
#pragma unroll
        for (int p = 0; p < FPT + X; p++) {
            v[p] = expf(v[p] - m);
            d += v[p];
        }
        d = row_reduce<TPR>(d, red_d, op_sum());
        const float scale = 1.0f / d;
        float *yr = y + (live ? row : 0) * ldy;
        float *yb = yr + cut.head;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int k = i * TPR + sub;
            if (live && k < nvec) {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[i * VEC + j] *= scale;
                /* PEEL: one st.global.v4 even where it costs <32 floats, 512
                 * threads> a 4-byte spill: 97.7 against 95.1 % of the aligned
                 * speed with the split store, 4096 x 16384 (H100). */
                if constexpr (PEEL) view_store4(yb + (long long)k * VEC, &v[i * VEC]);
                else store_vec<VEC>(yb + (long long)k * VEC, &v[i * VEC]);
            }
        }
        if constexpr (X)
            if (live && sub < cut.nextra) yr[view_extra_at(cut, sub)] = v[FPT] * scale;
    }
}

/* ---- path 2, shared memory: rows too long for registers -----------------
 * One row per block in dynamic shared memory (above 48 KB after
 * cudaFuncSetAttribute). The single global read streams 64 bytes per
 * thread at a time into shared memory while folding them into the
 * thread's running (m, d) (online_md_push); after the block merge, the row
 * is written from shared memory. Vector k always belongs to thread
 * k % BLOCK: each thread reads back only what it wrote, so the row data
 * needs no barrier. */
template <int VEC, bool PEEL, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_shared_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y, long long ldy,
                      long long rows, int cols, int mis)
{
    constexpr int U = 16 / VEC;
    extern __shared__ float4 fastest_smem[];
    __shared__ float red_m[32], red_d[32];
    float *srow = reinterpret_cast<float *>(fastest_smem);

    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const float *xr = x + row * ldx;
        const view_cut cut = fx_row_cut<VEC, PEEL>(row, ldx, mis, cols); /* extras: threads 0-5, in a register */
        const int nvec = (int)cut.nvec;
        const float *xb = xr + cut.head;
        const float e = view_extra_load(xr, cut, threadIdx.x);
        online_md s = online_md_identity();
        if constexpr (PEEL) s = online_md_push<1>(s, &e);
        for (int k0 = threadIdx.x; k0 < nvec; k0 += U * BLOCK) {
            float v[U * VEC];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * BLOCK;
                if (k < nvec) {
                    load_vec<VEC>(xb + (long long)k * VEC, &v[u * VEC]);
                } else {
#pragma unroll
                    for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * BLOCK;
                if (k < nvec) store_vec<VEC>(srow + k * VEC, &v[u * VEC]);
            }
            s = online_md_push<U * VEC>(s, v);
        }
        s = online_md_row_merge<BLOCK>(s, red_m, red_d);
        const float inv = 1.0f / s.d; /* m = -inf (all -inf): exp(NaN) below */
        float *yr = y + row * ldy;
        float *yb = yr + cut.head;
        for (int k = threadIdx.x; k < nvec; k += BLOCK) {
            float v[VEC];
            load_vec<VEC>(srow + k * VEC, v);
#pragma unroll
            for (int j = 0; j < VEC; j++) v[j] = expf(v[j] - s.m) * inv;
            if constexpr (PEEL) view_store4(yb + (long long)k * VEC, v);
            else store_vec<VEC>(yb + (long long)k * VEC, v);
        }
        if (PEEL && (int)threadIdx.x < cut.nextra) yr[view_extra_at(cut, threadIdx.x)] = expf(e - s.m) * inv;
    }
}

/* ---- paths 3 and 3g: a row's piece per CTA, held on chip ------------------
 * Both paths cut a row into pieces of `seg` floats, one per CTA, and keep
 * each piece on chip from its load to its store: the first BLOCK x FPT
 * floats in registers, the rest in dynamic shared memory (streamed in 64
 * bytes per thread at a time and folded into the thread's state on the
 * way, as path 2s does). They differ only in how the CTAs of a row trade
 * their (m, d) states: distributed shared memory inside a cluster (path
 * 3), or global memory between independent CTAs (path 3g).
 * Why registers AND shared memory: a CTA is one row's piece from its load
 * to its last store, and while it waits for the row's other CTAs its SM
 * moves no bytes unless another CTA is resident there. Small register
 * parts (FPT = 8 or 16) and the rest in shared memory leave room for 2 or
 * more CTAs per SM, which keep DRAM busy through each other's waits: at
 * 256 x 262144 on the H100, 92.8 % of copy against 83.3 % with the
 * segment in 1024 threads' registers (README.md, "Path 3"). */

/* Reads the piece at xr (len floats of the row's body) into v (registers)
 * and srow (shared memory), and `extra` (one of the row's head and tail
 * floats, or -inf) into v[FPT]. Returns this thread's state of all of it;
 * v holds exp(v - *m_regs), srow the raw values. Vector k of the shared
 * part always belongs to thread k % BLOCK: each thread reads back only
 * what it wrote, so the piece needs no barrier. v: FPT + 1 floats. XS:
 * the row was cut at y's boundaries, so x's floats are read one at a time
 * (lesson 5's view_load_x); everything after the load, shared memory
 * included, stays float4. */
template <int VEC, bool PEEL, int FPT, int BLOCK, bool XS>
__device__ __forceinline__ online_md fx_piece_read(const float *__restrict__ xr, int len, float extra, float *v,
                                                   float *srow, float *m_regs)
{
    constexpr int ITEMS = FPT / VEC;
    constexpr int RCAP = BLOCK * FPT; /* floats of the piece in registers */
    constexpr int U = 16 / VEC;
    const int rlen = len < RCAP ? len : RCAP;
    const int nvec_r = rlen / VEC, nvec_s = (len - rlen) / VEC;
    const float *xs = xr + RCAP;
    /* All register loads are issued first; their latency overlaps the
     * shared-memory part's loop. */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * BLOCK + (int)threadIdx.x;
        if (k < nvec_r) {
            view_load_x<VEC, XS>(xr + k * VEC, &v[i * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[i * VEC + j] = -INFINITY;
        }
    }
    online_md s = online_md_identity();
    for (int k0 = threadIdx.x; k0 < nvec_s; k0 += U * BLOCK) {
        float w[U * VEC];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int k = k0 + u * BLOCK;
            if (k < nvec_s) {
                view_load_x<VEC, XS>(xs + k * VEC, &w[u * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) w[u * VEC + j] = -INFINITY;
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int k = k0 + u * BLOCK;
            if (k < nvec_s) store_vec<VEC>(srow + k * VEC, &w[u * VEC]);
        }
        s = online_md_push<U * VEC>(s, w);
    }
    constexpr int X = PEEL ? 1 : 0;
    if constexpr (PEEL) v[FPT] = extra;
    else (void)extra;
    const online_md t = fx_thread_state<FPT + X>(v);
    *m_regs = t.m;
    return online_md_merge(t, s);
}

/* Writes the piece as exp(x - R.m) / R.d, given the row's state R, and
 * the extra to *yextra (when not null). All -inf row: R.m = -inf, shift
 * 0, exp(-inf) * (1 / 0) = NaN in both parts, as PyTorch. */
template <int VEC, bool PEEL, int FPT, int BLOCK>
__device__ __forceinline__ void fx_piece_write(float *__restrict__ yr, int len, float *v, const float *srow,
                                               float m_regs, online_md R, float *yextra)
{
    constexpr int ITEMS = FPT / VEC;
    constexpr int RCAP = BLOCK * FPT;
    const int rlen = len < RCAP ? len : RCAP;
    const int nvec_r = rlen / VEC, nvec_s = (len - rlen) / VEC;
    const float scale = fx_scale(m_regs, R);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * BLOCK + (int)threadIdx.x;
        if (k < nvec_r) {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[i * VEC + j] *= scale;
            if constexpr (PEEL) view_store4(yr + k * VEC, &v[i * VEC]);
            else store_vec<VEC>(yr + k * VEC, &v[i * VEC]);
        }
    }
    if constexpr (PEEL)
        if (yextra) *yextra = v[FPT] * scale;
    const float shift = online_md_shift(R.m), inv = 1.0f / R.d;
    float *ys = yr + RCAP;
    for (int k = threadIdx.x; k < nvec_s; k += BLOCK) {
        float w[VEC];
        load_vec<VEC>(srow + k * VEC, w);
#pragma unroll
        for (int j = 0; j < VEC; j++) w[j] = expf(w[j] - shift) * inv;
        store_vec<VEC>(ys + k * VEC, w);
    }
}

/* Floats of piece `piece` of a row of `cols` (0 for the empty last pieces
 * of a short row). */
__device__ __forceinline__ int fx_piece_len(int cols, int piece, int seg)
{
    const int len = cols - piece * seg;
    return len < 0 ? 0 : (len < seg ? len : seg);
}

/* Path 3: one row per thread-block cluster (sm_90). The grid is rows x C
 * CTAs in clusters of C: cluster r is row r, CTA `rank` of it holds piece
 * `rank`. Each CTA merges its threads' states; thread 0 puts the CTA's
 * state in its shared memory; after cluster.sync() warp 0 of EVERY CTA
 * reads the C states through distributed shared memory (map_shared_rank),
 * lane i the state of rank i (identity beyond C), and merges them with a
 * butterfly: every CTA gets the row's (M, D), bit for bit the same. A CTA
 * must not exit while another may still read its shared memory:
 * barrier_arrive after the reads, barrier_wait after the stores, so the
 * wait overlaps the writes.
 * Compiled only for sm_90 and up; on older targets the body is empty and
 * the host never launches it (softmax_fastest_has_clusters checks the
 * binary's version). */
#ifdef FASTEST_GPU_CODE
/* CTAs per SM the registers must leave room for: 3 x 512 threads with 8
 * floats each in registers, 2 x 512 with 16. Left alone, the compiler took
 * 49 registers for <8 floats, 512 threads> (40 before the views' peeling
 * arrived), two CTAs per SM instead of three: 86.7 against 92.7 % of copy
 * at 512 x 2^17 (H100). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define FX_CLUSTER_MIN_CTAS(FPT, BLOCK) 1 /* no clusters (the body is empty); 1536 threads would not fit */
#else
#define FX_CLUSTER_MIN_CTAS(FPT, BLOCK) (((FPT) <= 8 ? 1536 : 1024) / (BLOCK)) /* BLOCK <= 1024: at least 1 */
#endif
template <int VEC, bool PEEL, int FPT, int BLOCK, bool XS>
__global__ void __launch_bounds__(BLOCK, FX_CLUSTER_MIN_CTAS(FPT, BLOCK))
fastest_cluster_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y, long long ldy,
                       int cols, int seg, int mis)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    extern __shared__ float4 fastest_cluster_smem[];
    float *srow = reinterpret_cast<float *>(fastest_cluster_smem);
    __shared__ float red_m[32], red_d[32];
    __shared__ online_md cta_state, row_state;

    const int C = (int)cluster.num_blocks();
    const int rank = (int)cluster.block_rank();
    const long long row = (long long)blockIdx.x / C;
    const float *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, XS ? ldy : ldx, mis, cols); /* XS: mis is y's */
    const int len = fx_piece_len((int)(cut.nvec * VEC), rank, seg);
    const int begin = cut.head + rank * seg; /* cols < 2^31 */
    const bool has_extra = PEEL && rank == 0 && (int)threadIdx.x < cut.nextra;

    float v[FPT + (PEEL ? 1 : 0)], m_regs;
    const online_md t = fx_piece_read<VEC, PEEL, FPT, BLOCK, XS>(
        xr + begin, len, has_extra ? view_extra_load(xr, cut, threadIdx.x) : -INFINITY, v, srow, &m_regs);
    const online_md b = online_md_row_merge<BLOCK>(t, red_m, red_d);
    if (threadIdx.x == 0) cta_state = b;
    cluster.sync(); /* every CTA's state is written and visible cluster-wide */
    if (threadIdx.x < 32) {
        online_md q = online_md_identity();
        if ((int)threadIdx.x < C) q = *cluster.map_shared_rank(&cta_state, threadIdx.x);
        for (int off = 16; off > 0; off /= 2) q = online_md_butterfly_step(q, off);
        if (threadIdx.x == 0) row_state = q;
    }
    __syncthreads();
    cluster.barrier_arrive(); /* this CTA has finished reading the others */
    float *yr = y + row * ldy;
    fx_piece_write<VEC, PEEL, FPT, BLOCK>(yr + begin, len, v, srow, m_regs, row_state,
                                          has_extra ? yr + view_extra_at(cut, threadIdx.x) : nullptr);
    cluster.barrier_wait(); /* ... and nobody reads this CTA's state any more */
#else
    (void)x;
    (void)ldx;
    (void)y;
    (void)ldy;
    (void)cols;
    (void)seg;
    (void)mis;
#endif
}

/* A release add and an acquire load at GPU scope (sm_70 and up): the
 * writer's state is visible before its count, and whoever sees the count
 * sees the state, without a full __threadfence on either side. % of copy
 * (H100, 2026-11-23, four runs each, fences -> release/acquire):
 *   64 x 2^20 88.6 -> 89.9   32 x 2^21 86.0 -> 87.4
 *   16 x 2^22 80.5 -> 82.7    8 x 2^23 73.5 -> 74.3
 * Every warp merging all P states itself (no second block-wide merge)
 * cost 2^20 half a point (89.1-89.5 %): not done. */
__device__ __forceinline__ void fx_add_release(unsigned *p, unsigned v)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ unsigned fx_load_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* Path 3g: one row over P independent CTAs (any GPU of the last decade, not
 * the CPU emulator, whose blocks run one after another: a CTA waiting for
 * a later one would wait forever). Clusters stop at 16 CTAs; a 4 MiB row
 * then needs 256 KB per CTA, one CTA per SM, and DRAM idles through every
 * wait (75 % of copy at 64 x 2^20 on the H100). Spread over P = 32 ... 64
 * CTAs of 64-128 KB, two to four share an SM and hide each other's waits.
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
 * before each launch did the same and cost 1 us or so: at 64 x 2^20 88.1
 * against 88.7 % of copy, at 1 x 2^20 54.6 against 57.7 % (H100,
 * 2026-11-23, three runs each). */
template <int VEC, bool PEEL, int FPT, int BLOCK, bool XS>
__global__ void __launch_bounds__(BLOCK)
fastest_grid_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y, long long ldy, int cols,
                    int pieces, int seg, int mis, unsigned *sync, online_md *work)
{
    extern __shared__ float4 fastest_grid_smem[];
    float *srow = reinterpret_cast<float *>(fastest_grid_smem);
    __shared__ float red_m[32], red_d[32];
    __shared__ unsigned ticket;

    if (threadIdx.x == 0) {
        ticket = atomicAdd(&sync[0], 1u);
        if (ticket == gridDim.x - 1) sync[0] = 0; /* every other ticket is drawn */
    }
    __syncthreads();
    const long long row = ticket / (unsigned)pieces;
    const int piece = (int)(ticket % (unsigned)pieces);
    const float *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, XS ? ldy : ldx, mis, cols); /* XS: mis is y's */
    const int len = fx_piece_len((int)(cut.nvec * VEC), piece, seg);
    const int begin = cut.head + piece * seg;
    const bool has_extra = PEEL && piece == 0 && (int)threadIdx.x < cut.nextra;

    float v[FPT + (PEEL ? 1 : 0)], m_regs;
    const online_md t = fx_piece_read<VEC, PEEL, FPT, BLOCK, XS>(
        xr + begin, len, has_extra ? view_extra_load(xr, cut, threadIdx.x) : -INFINITY, v, srow, &m_regs);
    const online_md b = online_md_row_merge<BLOCK>(t, red_m, red_d);
    online_md *wr = work + row * pieces;
    if (threadIdx.x == 0) {
        wr[piece] = b;
        fx_add_release(&sync[1 + row], 1u); /* the state is visible GPU-wide before the count */
        while (fx_load_acquire(&sync[1 + row]) < (unsigned)pieces) __nanosleep(32);
        /* Past the wait: count out. The last of the row's P leaves the
         * counter at 0, when no CTA of the row is still reading it. */
        if (atomicAdd(&sync[1 + row], 1u) == 2u * (unsigned)pieces - 1u) sync[1 + row] = 0;
    }
    __syncthreads(); /* thread 0's acquire covers the block's reads after the barrier */
    online_md q = online_md_identity();
    for (int i = threadIdx.x; i < pieces; i += BLOCK) {
        const float2 w = __ldcg(reinterpret_cast<const float2 *>(wr + i)); /* from L2, never a stale L1 line */
        const online_md o = {w.x, w.y};
        q = online_md_merge(q, o);
    }
    const online_md R = online_md_row_merge<BLOCK>(q, red_m, red_d);
    float *yr = y + row * ldy;
    fx_piece_write<VEC, PEEL, FPT, BLOCK>(yr + begin, len, v, srow, m_regs, R,
                                          has_extra ? yr + view_extra_at(cut, threadIdx.x) : nullptr);
}
#endif
/* ---- path 4: a row split over many blocks (seed 002's block softmax) ------
 * Kernel 1: block b summarises piece b % splits of row b / splits, 64
 * bytes per thread in flight, into work[b]. Kernel 2: every block of a row
 * merges the row's `splits` states (same threads, same order, same tree:
 * the same bits in every block), then reads its piece again and writes
 * exp(x - M) / D. 2 reads + 1 write. Kernel 2 walks the pieces in reverse
 * order: the pieces kernel 1 read last are the likeliest still in L2.
 * Positions are 64-bit: one row may hold more than 2^31 floats. */
template <int VEC, bool PEEL, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_split_state_kernel(const float *__restrict__ x, long long ldx, long long cols, long long splits,
                           long long seg, int mis, online_md *__restrict__ work)
{
    constexpr int U = 16 / VEC;
    __shared__ float red_m[32], red_d[32];
    const long long b = blockIdx.x, row = b / splits, piece = b % splits, begin = piece * seg;
    const float *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, ldx, mis, cols); /* extras: piece 0's threads 0-5 */
    const long long blen = cut.nvec * VEC, len = blen - begin < seg ? blen - begin : seg;
    const long long nvec = len > 0 ? len / VEC : 0;
    const float *xs = xr + cut.head + begin;

    online_md s = online_md_identity();
    if constexpr (PEEL) {
        const float e = piece == 0 ? view_extra_load(xr, cut, threadIdx.x) : -INFINITY;
        s = online_md_push<1>(s, &e);
    }
    for (long long k0 = threadIdx.x; k0 < nvec; k0 += (long long)U * BLOCK) {
        float v[U * VEC];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long k = k0 + (long long)u * BLOCK;
            if (k < nvec) {
                load_vec<VEC>(xs + k * VEC, &v[u * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
            }
        }
        s = online_md_push<U * VEC>(s, v);
    }
    s = online_md_row_merge<BLOCK>(s, red_m, red_d);
    if (threadIdx.x == 0) work[b] = s;
}

template <int VEC, bool PEEL, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_split_write_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y, long long ldy,
                           long long cols, long long splits, long long seg,
                           int mis, const online_md *__restrict__ work)
{
    constexpr int U = 16 / VEC;
    __shared__ float red_m[32], red_d[32];
    const long long b = (long long)gridDim.x - 1 - blockIdx.x; /* reverse: L2 reuse */
    const long long row = b / splits, piece = b % splits, begin = piece * seg;
    const float *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, ldx, mis, cols);
    const long long blen = cut.nvec * VEC, len = blen - begin < seg ? blen - begin : seg;
    const long long nvec = len > 0 ? len / VEC : 0;

    const online_md *wr = work + row * splits;
    online_md s = online_md_identity();
    for (long long i = threadIdx.x; i < splits; i += BLOCK) s = online_md_merge(s, wr[i]);
    s = online_md_row_merge<BLOCK>(s, red_m, red_d);
    const float inv = 1.0f / s.d;

    float *yr = y + row * ldy;
    if (PEEL && piece == 0 && (int)threadIdx.x < cut.nextra) {
        const long long at = view_extra_at(cut, threadIdx.x);
        yr[at] = expf(xr[at] - s.m) * inv;
    }
    const float *xs = xr + cut.head + begin;
    float *ys = yr + cut.head + begin;
    for (long long k0 = threadIdx.x; k0 < nvec; k0 += (long long)U * BLOCK) {
        float v[U * VEC];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long k = k0 + (long long)u * BLOCK;
            if (k < nvec) load_vec<VEC>(xs + k * VEC, &v[u * VEC]);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long k = k0 + (long long)u * BLOCK;
            if (k < nvec) {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[u * VEC + j] = expf(v[u * VEC + j] - s.m) * inv;
                if constexpr (PEEL) view_store4(ys + k * VEC, &v[u * VEC]);
                else store_vec<VEC>(ys + k * VEC, &v[u * VEC]);
            }
        }
    }
}

/* ---- the host side ------------------------------------------------------ */

/* Register configurations (paths 1 and 2), shortest rows first: the first
 * whose capacity tpr x fpt holds the row. Up to 1024 floats a row is
 * shared by part of a warp; above, by a block. */
struct fx_reg_config {
    int max_cols, tpr, fpt, block;
};
/* Up to 128 floats, one float4 per lane (fpt 4) and more lanes per row:
 * 99.9 % of copy at N = 32, 64, 128 on the H100, against 99.1-99.5 % with
 * two float4 per lane (README.md, "Path 1"; H100, 2026-11-22).
 * Rows just past 16384 floats left the 1024 x 32 class more than half
 * empty: 92.2-92.4 % of copy at N = 16388, 97.5-97.6 % with 1024 x 20
 * (M x N = 2^26, H100, 2026-11-23, two runs). Every other ragged length
 * tried from 1028 to 30000 ran at 97.3-101.3 % in its power-of-two class. */
static constexpr fx_reg_config FX_REG[] = {
    {4, 1, 4, 128},       {8, 2, 4, 128},       {16, 4, 4, 128},        {32, 8, 4, 128},
    {64, 16, 4, 128},     {128, 32, 4, 128},    {256, 32, 8, 128},      {512, 32, 16, 128},
    {1024, 32, 32, 128},  {2048, 128, 16, 128}, {4096, 256, 16, 256},   {8192, 256, 32, 256},
    {16384, 512, 32, 512}, {20480, 1024, 20, 1024}, {32768, 1024, 32, 1024},
};
#define FX_NREG (int)(sizeof FX_REG / sizeof FX_REG[0])
#define FX_NWARP 9 /* the first 9 are path 1 */
static_assert(FX_REG[FX_NWARP - 1].max_cols == FASTEST_WARP_MAX_COLS, "path 1 ends at 1024");
static_assert(FX_REG[FX_NREG - 1].max_cols == FASTEST_BLOCK_MAX_COLS, "path 2 ends at 32768");

/* Cluster configurations (path 3), shortest rows first: the first whose
 * max_cols holds the row. C CTAs of `block` threads, each holding
 * block x fpt floats of its segment in registers and the rest (up to
 * max_cols / C - block x fpt floats) in shared memory. Picked from a sweep
 * of C, block and fpt on the H100 (2026-11-22, M x N = 2^26; % of copy,
 * against the first version's 1024-thread, register-only CTAs):
 *   2^15 96.1 (94.4)   2^16 94.4 (91.8)   2^17 92.6 (89.0)
 *   2^18 92.8 (83.3)   2^19 91.5 (72.3)   2^20 75.1 (62.6, path 4)
 * Clusters above 8 CTAs are non-portable (the H100 allows 16). */
struct fx_cluster_cfg {
    long long max_cols;
    int c, block, fpt;
};
static constexpr fx_cluster_cfg FX_CL[] = {
    {32768, 4, 256, 8},    {65536, 8, 256, 8},     {131072, 8, 512, 8},
    {262144, 16, 256, 16}, {524288, 16, 512, 16}, {1048576, 16, 1024, 16},
};
#define FX_NCL (int)(sizeof FX_CL / sizeof FX_CL[0])
static_assert(FX_CL[FX_NCL - 1].max_cols == FASTEST_CLUSTER_MAX_COLS, "path 3 ends at 2^20");
/* ... but the dispatcher stops at 2^19: at 64 x 2^20, one 256 KB CTA per
 * SM gives 75 % of copy, path 3g 89 % (H100, 2026-11-23). At 2^19 path 3
 * leads, 91.5 against 90.7 %. */
#define FX_CLUSTER_AUTO_MAX_COLS 524288

/* Shared memory of a path 3 CTA for a segment of seg floats. */
static long long fx_cluster_smem(int cfg, long long seg)
{
    const long long rest = seg - (long long)FX_CL[cfg].block * FX_CL[cfg].fpt;
    return rest > 0 ? rest * (long long)sizeof(float) : 0;
}

#define FX_SHARED_BLOCK 1024
#define FX_SPLIT_BLOCK 512
#define FX_STATIC_SMEM_RESERVE 1024
/* Path 4: about this many blocks per SM over the whole grid, and at least
 * this many floats per block. */
#define FX_SPLIT_BLOCKS_PER_SM 16
#define FX_SPLIT_MIN_SEG 2048

/* How a plan moves data (fx_alignment): 32-bit accesses; float4 bodies with
 * peeled heads and tails (PEEL kernels); float4 throughout. Separate
 * kernels for the last two keep the aligned case exactly as fast as
 * before peeling existed: one kernel for both lost 6-8 % of copy on
 * paths 3 and 3g (H100, at 2^15 ... 2^17). */
#define FX_SCALAR 0
#define FX_PEELED 1
#define FX_ALIGNED 2
#define FX_YCUT 3 /* paths 3 and 3g: rows of x and y misaligned against each other */
#define FX_NMODES 4

static unsigned fx_grid(long long rows, int per_block)
{
    const long long blocks = (rows + per_block - 1) / per_block;
    return (unsigned)(blocks < INT_MAX ? blocks : INT_MAX);
}

static int fx_sms(void)
{
    static int sms = 0;
    if (!sms) {
        int dev;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    }
    return sms;
}

long long softmax_fastest_shared_capacity(void)
{
    int dev, optin;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const long long floats = ((long long)optin - FX_STATIC_SMEM_RESERVE) / (long long)sizeof(float);
    return floats > 0 ? floats / 4 * 4 : 0;
}

const char *fastest_path_name(fastest_path p)
{
    switch (p) {
    case FASTEST_WARP: return "1 warp (rows in registers, several rows per warp)";
    case FASTEST_BLOCK: return "2 block (row in registers)";
    case FASTEST_SHARED: return "2s block (row in shared memory)";
    case FASTEST_CLUSTER: return "3 cluster (row across SMs, distributed shared memory)";
    case FASTEST_GRID: return "3g grid (row across SMs, (m, d) via global memory)";
    case FASTEST_SPLIT: return "4 split (row across blocks, (m, d) merge, 2R+1W)";
    default: return "auto";
    }
}

/* ---- path 1 / 2 launches ---- */
template <int VEC, bool PEEL, int I>
static void fx_launch_rows(const float *x, long long ldx, float *y, long long ldy, long long rows,
                           long long cols, cudaStream_t stream)
{
    constexpr fx_reg_config C = FX_REG[I];
    static_assert(C.fpt % 4 == 0 && C.tpr * C.fpt >= C.max_cols, "capacity holds the class");
    void (*kernel)(const float *, long long, float *, long long, long long, int, int) =
        fastest_rows_kernel<VEC, PEEL, C.fpt, C.tpr, C.block>;
    kernel<<<fx_grid(rows, C.block / C.tpr), C.block, 0, stream>>>(x, ldx, y, ldy, rows, (int)cols, view_mis(x));
    CUDA_CHECK_LAUNCH();
}

template <int VEC, bool PEEL>
static void fx_run_rows(int i, const float *x, long long ldx, float *y, long long ldy, long long rows,
                        long long cols, cudaStream_t s)
{
    switch (i) {
    case 0: fx_launch_rows<VEC, PEEL, 0>(x, ldx, y, ldy, rows, cols, s); break;
    case 1: fx_launch_rows<VEC, PEEL, 1>(x, ldx, y, ldy, rows, cols, s); break;
    case 2: fx_launch_rows<VEC, PEEL, 2>(x, ldx, y, ldy, rows, cols, s); break;
    case 3: fx_launch_rows<VEC, PEEL, 3>(x, ldx, y, ldy, rows, cols, s); break;
    case 4: fx_launch_rows<VEC, PEEL, 4>(x, ldx, y, ldy, rows, cols, s); break;
    case 5: fx_launch_rows<VEC, PEEL, 5>(x, ldx, y, ldy, rows, cols, s); break;
    case 6: fx_launch_rows<VEC, PEEL, 6>(x, ldx, y, ldy, rows, cols, s); break;
    case 7: fx_launch_rows<VEC, PEEL, 7>(x, ldx, y, ldy, rows, cols, s); break;
    case 8: fx_launch_rows<VEC, PEEL, 8>(x, ldx, y, ldy, rows, cols, s); break;
    case 9: fx_launch_rows<VEC, PEEL, 9>(x, ldx, y, ldy, rows, cols, s); break;
    case 10: fx_launch_rows<VEC, PEEL, 10>(x, ldx, y, ldy, rows, cols, s); break;
    case 11: fx_launch_rows<VEC, PEEL, 11>(x, ldx, y, ldy, rows, cols, s); break;
    case 12: fx_launch_rows<VEC, PEEL, 12>(x, ldx, y, ldy, rows, cols, s); break;
    case 13: fx_launch_rows<VEC, PEEL, 13>(x, ldx, y, ldy, rows, cols, s); break;
    default: fx_launch_rows<VEC, PEEL, 14>(x, ldx, y, ldy, rows, cols, s); break;
    }
}
static_assert(FX_NREG == 15, "fx_run_rows has one case per configuration");

/* The register configuration for cols, from `from` on (0: path 1 first,
 * FX_NWARP: block configurations only); -1 if none holds it. */
static int fx_reg_index(long long cols, int from)
{
    for (int i = from; i < FX_NREG; i++)
        if (cols <= FX_REG[i].max_cols) return i;
    return -1;
}

/* ---- path 2s ---- */
template <int VEC, bool PEEL>
static void fx_run_shared(const float *x, long long ldx, float *y, long long ldy, long long rows,
                          long long cols, long long smem, cudaStream_t stream)
{
    void (*kernel)(const float *, long long, float *, long long, long long, int, int) =
        fastest_shared_kernel<VEC, PEEL, FX_SHARED_BLOCK>;
    if (smem > 48 * 1024) /* above the default, a kernel must opt in */
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    kernel<<<fx_grid(rows, 1), FX_SHARED_BLOCK, (size_t)smem, stream>>>(x, ldx, y, ldy, rows, (int)cols, view_mis(x));
    CUDA_CHECK_LAUNCH();
}

/* ---- path 4 ---- */
static online_md *fx_work = nullptr;
static long long fx_work_bytes = 0;
static unsigned *fx_sync = nullptr; /* path 3g's counters */
static long long fx_sync_count = 0;

long long softmax_fastest_workspace_bytes(void) { return fx_work_bytes + fx_sync_count * (long long)sizeof(unsigned); }

void softmax_fastest_release(void)
{
    if (fx_work) CUDA_CHECK(cudaFree(fx_work)); /* synchronises: no kernel still uses it */
    if (fx_sync) CUDA_CHECK(cudaFree(fx_sync));
    fx_work = nullptr;
    fx_work_bytes = 0;
    fx_sync = nullptr;
    fx_sync_count = 0;
}

/* Path 3g's counters: zeroed here, once, and left at 0 by each launch. */
static unsigned *fx_sync_counters(long long count)
{
    if (count > fx_sync_count) {
        if (fx_sync) CUDA_CHECK(cudaFree(fx_sync)); /* synchronises: no kernel still uses it */
        CUDA_CHECK(cudaMalloc(&fx_sync, (size_t)count * sizeof(unsigned)));
        CUDA_CHECK(cudaMemset(fx_sync, 0, (size_t)count * sizeof(unsigned)));
        CUDA_CHECK(cudaDeviceSynchronize()); /* zero before any stream's launch, blocking or not */
        fx_sync_count = count;
    }
    return fx_sync;
}

static online_md *fx_workspace(long long states)
{
    const long long bytes = states * (long long)sizeof(online_md);
    if (bytes > fx_work_bytes) {
        if (fx_work) CUDA_CHECK(cudaFree(fx_work)); /* synchronises: no kernel still uses it */
        CUDA_CHECK(cudaMalloc(&fx_work, (size_t)bytes));
        fx_work_bytes = bytes;
    }
    return fx_work;
}

/* Pieces per row: enough blocks for FX_SPLIT_BLOCKS_PER_SM per SM over
 * the grid, pieces of at least FX_SPLIT_MIN_SEG floats, a multiple of 64
 * floats each (256-byte aligned inside an aligned row). */
static void fx_split_shape(long long rows, long long cols, long long *splits, long long *seg)
{
    const long long target = (long long)FX_SPLIT_BLOCKS_PER_SM * fx_sms();
    long long s = (target + rows - 1) / rows;
    const long long most = (cols + FX_SPLIT_MIN_SEG - 1) / FX_SPLIT_MIN_SEG;
    if (s > most) s = most;
    if (s < 1) s = 1;
    long long g = (cols + s - 1) / s;
    g = (g + 63) / 64 * 64;
    *seg = g;
    *splits = (cols + g - 1) / g;
}

template <int VEC, bool PEEL>
static void fx_run_split(const float *x, long long ldx, float *y, long long ldy, long long rows,
                         long long cols, long long splits, long long seg, cudaStream_t stream)
{
    /* Rows in batches so that one grid stays within 2^31 - 1 blocks. */
    const long long batch_max = INT_MAX / splits;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        online_md *work = fx_workspace(n * splits);
        const float *xb = x + r0 * ldx;
        float *yb = y + r0 * ldy;
        const unsigned blocks = (unsigned)(n * splits);
        void (*k1)(const float *, long long, long long, long long, long long, int, online_md *) =
            fastest_split_state_kernel<VEC, PEEL, FX_SPLIT_BLOCK>;
        void (*k2)(const float *, long long, float *, long long, long long, long long, long long, int,
                   const online_md *) = fastest_split_write_kernel<VEC, PEEL, FX_SPLIT_BLOCK>;
        k1<<<blocks, FX_SPLIT_BLOCK, 0, stream>>>(xb, ldx, cols, splits, seg, view_mis(xb), work);
        CUDA_CHECK_LAUNCH();
        k2<<<blocks, FX_SPLIT_BLOCK, 0, stream>>>(xb, ldx, yb, ldy, cols, splits, seg, view_mis(xb), work);
        CUDA_CHECK_LAUNCH();
    }
}

/* ---- path 3 host side ---- */
#ifdef FASTEST_GPU_CODE
typedef void (*fx_cluster_fn)(const float *, long long, float *, long long, int, int, int);

template <int I>
static fx_cluster_fn fx_cluster_kernel_at(int mode)
{
    if (mode == FX_ALIGNED) return fastest_cluster_kernel<4, false, FX_CL[I].fpt, FX_CL[I].block, false>;
    if (mode == FX_PEELED) return fastest_cluster_kernel<4, true, FX_CL[I].fpt, FX_CL[I].block, false>;
    if (mode == FX_YCUT) return fastest_cluster_kernel<4, true, FX_CL[I].fpt, FX_CL[I].block, true>;
    return fastest_cluster_kernel<1, false, FX_CL[I].fpt, FX_CL[I].block, false>;
}

static fx_cluster_fn fx_cluster_kernel(int mode, int cfg)
{
    static_assert(FX_NCL == 6, "fx_cluster_kernel has one case per configuration");
    switch (cfg) {
    case 0: return fx_cluster_kernel_at<0>(mode);
    case 1: return fx_cluster_kernel_at<1>(mode);
    case 2: return fx_cluster_kernel_at<2>(mode);
    case 3: return fx_cluster_kernel_at<3>(mode);
    case 4: return fx_cluster_kernel_at<4>(mode);
    default: return fx_cluster_kernel_at<5>(mode);
    }
}

static cudaLaunchConfig_t fx_cluster_config(unsigned grid, int block, int c, size_t smem,
                                            cudaStream_t stream, cudaLaunchAttribute *attr)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid, 1, 1);
    cfg.blockDim = dim3((unsigned)block, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)c;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

/* Opts configuration cfg's kernel in to its largest shared memory and (C >
 * 8) to non-portable cluster sizes, once, and returns how many of its
 * clusters fit on the GPU at once (cudaOccupancyMaxActiveClusters); 0 when
 * they do not fit. */
static int fx_active_clusters(int mode, int cfg)
{
    static int cache[FX_NMODES][FX_NCL];
    static int filled = 0;
    if (!filled) {
        for (int v = 0; v < FX_NMODES; v++)
            for (int i = 0; i < FX_NCL; i++) cache[v][i] = -1;
        filled = 1;
    }
    int *slot = &cache[mode][cfg];
    if (*slot < 0) {
        const fx_cluster_cfg C = FX_CL[cfg];
        const fx_cluster_fn k = fx_cluster_kernel(mode, cfg);
        const long long smem = fx_cluster_smem(cfg, C.max_cols / C.c);
        *slot = 0;
        if (C.c > 8 && cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) {
            cudaGetLastError();
            return 0;
        }
        if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess) {
            cudaGetLastError(); /* more than this GPU's shared memory */
            return 0;
        }
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(C.c * 64), C.block, C.c, (size_t)smem, 0, attr);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, k, &lc) != cudaSuccess) {
            cudaGetLastError();
            n = 0;
        }
        *slot = n;
    }
    return *slot;
}
#endif

int softmax_fastest_has_clusters(void)
{
#ifdef FASTEST_GPU_CODE
    static int has = -1;
    if (has < 0) {
        int dev, major = 0, launch = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&launch, cudaDevAttrClusterLaunch, dev));
        has = 0;
        if (major >= 9 && launch) {
            /* The kernel must have been built for sm_90 or later (not only
             * for an older target whose body is empty). */
            cudaFuncAttributes fa;
            if (cudaFuncGetAttributes(&fa, fx_cluster_kernel(FX_ALIGNED, 0)) == cudaSuccess)
                has = fa.binaryVersion >= 90 || fa.ptxVersion >= 90;
            cudaGetLastError();
        }
    }
    return has;
#else
    return 0;
#endif
}

/* Path 3's configuration for cols: the first of FX_CL that holds the row
 * and whose clusters fit on this GPU; 0 if none. */
static int fx_cluster_shape(int mode, long long cols, int *cfg_out)
{
#ifdef FASTEST_GPU_CODE
    for (int cfg = 0; cfg < FX_NCL; cfg++)
        if (cols <= FX_CL[cfg].max_cols && fx_active_clusters(mode, cfg) >= 1) {
            *cfg_out = cfg;
            return 1;
        }
#else
    (void)mode;
    (void)cols;
#endif
    *cfg_out = 0;
    return 0;
}

/* ---- path 3g host side ----
 * 256 threads x 16 floats in registers + up to 48 KB of shared memory:
 * 64 KB pieces, four CTAs per SM on an H100. From a sweep of block (256,
 * 512, 1024), registers (8 ... 32 floats) and pieces per row on the H100
 * (2026-11-23, exp at 64 x 2^20, % of copy): 89.4 with 64 KB pieces, 4 per
 * SM; 87.3 with 128 KB pieces of 512 threads, 2 per SM; 84.1 with 48 KB
 * pieces, 5 per SM; 70-73 with one CTA per SM (as path 3 at 2^20, 75). */
#define FX_GRID_BLOCK 256
#define FX_GRID_FPT 16
#define FX_GRID_PIECE 16384    /* floats per CTA at most */
#define FX_GRID_MIN_PIECE 2048 /* ... and at least, when few rows ask for more CTAs */

#ifdef FASTEST_GPU_CODE
typedef void (*fx_grid_fn)(const float *, long long, float *, long long, int, int, int, int, unsigned *,
                           online_md *);

static fx_grid_fn fx_grid_kernel(int mode)
{
    if (mode == FX_ALIGNED) return fastest_grid_kernel<4, false, FX_GRID_FPT, FX_GRID_BLOCK, false>;
    if (mode == FX_PEELED) return fastest_grid_kernel<4, true, FX_GRID_FPT, FX_GRID_BLOCK, false>;
    if (mode == FX_YCUT) return fastest_grid_kernel<4, true, FX_GRID_FPT, FX_GRID_BLOCK, true>;
    return fastest_grid_kernel<1, false, FX_GRID_FPT, FX_GRID_BLOCK, false>;
}
#endif

/* How many path 3g CTAs with full pieces the GPU holds at once (0 on the
 * emulator). A row's pieces must all fit: a CTA waits for its row's others. */
static long long fx_grid_resident(int mode)
{
#ifdef FASTEST_GPU_CODE
    static long long cache[FX_NMODES] = {-1, -1, -1, -1};
    long long *slot = &cache[mode];
    if (*slot < 0) {
        /* 48 KB of dynamic shared memory, plus the kernel's static arrays:
         * above the 48 KB a block gets without opting in. */
        const size_t smem = (size_t)(FX_GRID_PIECE - FX_GRID_BLOCK * FX_GRID_FPT) * sizeof(float);
        const fx_grid_fn k = fx_grid_kernel(mode);
        int per_sm = 0;
        CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, FX_GRID_BLOCK, smem));
        *slot = (long long)per_sm * fx_sms();
    }
    return *slot;
#else
    (void)mode;
    return 0;
#endif
}

int softmax_fastest_has_grid(void) { return fx_grid_resident(FX_SCALAR) > 0; }

/* Pieces per row: as many 64 KB pieces as the row needs, more (down to
 * FX_GRID_MIN_PIECE floats) when there are too few rows to give every SM a
 * CTA: 56.8 % of copy at 1 x 2^20 with 128 pieces, 51.5 % with 64 (H100).
 * Each piece a whole number of float4s. */
static void fx_grid_shape(long long rows, long long cols, long long *pieces, long long *seg)
{
    long long p = (cols + FX_GRID_PIECE - 1) / FX_GRID_PIECE;
    const long long fill = (fx_sms() + rows - 1) / rows, most = cols / FX_GRID_MIN_PIECE;
    if (p < fill) p = fill < most ? fill : most;
    if (p < 1) p = 1;
    long long g = (cols + p - 1) / p;
    g = (g + 3) / 4 * 4;
    *seg = g;
    *pieces = (cols + g - 1) / g;
}

static long long fx_grid_smem(long long seg)
{
    const long long rest = seg - (long long)FX_GRID_BLOCK * FX_GRID_FPT;
    return rest > 0 ? rest * (long long)sizeof(float) : 0;
}

/* Rows in batches of at most INT_MAX CTAs. The workspace holds the batch's
 * states; the counters are sync[0], the ticket, and sync[1 + r], row r's. */
static void fx_run_grid(int mode, const float *x, long long ldx, float *y, long long ldy, long long rows,
                        long long cols, long long pieces, long long seg, cudaStream_t stream)
{
#ifdef FASTEST_GPU_CODE
    const fx_grid_fn k = fx_grid_kernel(mode);
    const long long smem = fx_grid_smem(seg);
    const long long batch_max = INT_MAX / pieces;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        online_md *work = fx_workspace(n * pieces);
        unsigned *sync = fx_sync_counters(n + 1);
        const float *xb = x + r0 * ldx;
        float *yb = y + r0 * ldy;
        const int mis = view_mis(mode == FX_YCUT ? yb : xb); /* where the rows are cut */
        k<<<(unsigned)(n * pieces), FX_GRID_BLOCK, (size_t)smem, stream>>>(xb, ldx, yb, ldy, (int)cols, (int)pieces,
                                                                            (int)seg, mis, sync, work);
        CUDA_CHECK_LAUNCH();
    }
#else
    (void)mode, (void)x, (void)ldx, (void)y, (void)ldy, (void)rows, (void)cols, (void)pieces, (void)seg,
        (void)stream;
#endif
}

/* FX_ALIGNED: every row of both views starts 16-byte aligned and N % 4 ==
 * 0; FX_PEELED: each row of x starts at the same offset from a 16-byte
 * boundary as that row of y; FX_YCUT: not, but both are 4-byte aligned
 * (the plan keeps it for paths 3 and 3g only); FX_SCALAR: none. */
static int fx_alignment(const float *x, long long ldx, const float *y, long long ldy, long long rows,
                        long long cols)
{
    const uintptr_t ax = (uintptr_t)x, ay = (uintptr_t)y;
    if (ax % 16 == 0 && ay % 16 == 0 && cols % 4 == 0 && ldx % 4 == 0 && ldy % 4 == 0) return FX_ALIGNED;
    if (view_can_peel(x, ldx, y, ldy, rows)) return FX_PEELED;
    return ax % 4 == 0 && ay % 4 == 0 ? FX_YCUT : FX_SCALAR;
}

fastest_plan softmax_fastest_plan(fastest_path want, const float *x, long long ldx, const float *y,
                                  long long ldy, long long rows, long long cols)
{
    fastest_plan p = {};
    const int align = fx_alignment(x, ldx, y, ldy, rows, cols);
    int mode = align; /* paths 1 and 2 below may fall back to FX_SCALAR */
    p.bytes_per_elem = 8.0;
    if (cols < 1) cols = 1;
    if (rows < 1) rows = 1;
    const int sms = fx_sms();

    /* Does the shape fit each path? */
    const int fits_warp = cols <= FASTEST_WARP_MAX_COLS;
    const int fits_block = cols <= FASTEST_BLOCK_MAX_COLS;
    int ccfg = 0;
    const int fits_cluster = (want == FASTEST_CLUSTER || want == FASTEST_AUTO) && cols <= FASTEST_CLUSTER_MAX_COLS &&
                             softmax_fastest_has_clusters() && fx_cluster_shape(mode, cols, &ccfg);
    const int csize = FX_CL[ccfg].c;
    const int fits_shared = (want == FASTEST_SHARED || (want == FASTEST_AUTO && cols > 16384)) &&
                            cols <= softmax_fastest_shared_capacity();
    long long gpieces = 0, gseg = 0;
    fx_grid_shape(rows, cols, &gpieces, &gseg);
    const int fits_grid = (want == FASTEST_GRID || want == FASTEST_AUTO) && gpieces <= fx_grid_resident(mode);

    fastest_path path = want;
    if ((want == FASTEST_WARP && !fits_warp) || (want == FASTEST_BLOCK && !fits_block) ||
        (want == FASTEST_CLUSTER && !fits_cluster) || (want == FASTEST_SHARED && !fits_shared) ||
        (want == FASTEST_GRID && !fits_grid) || want <= FASTEST_AUTO || want >= FASTEST_NPATHS)
        path = FASTEST_AUTO;

    if (path == FASTEST_AUTO) {
        /* The dispatcher (README.md, "The dispatcher"). */
        if (fits_warp) path = FASTEST_WARP;
        else if (cols <= 16384) path = FASTEST_BLOCK;
        /* Rows of 16K-32K floats: path 2 beats path 3 from M = SMs/4 up
         * (% of copy, H100, 2026-11-23, two runs, block against cluster):
         * N = 32768: M = 33 72.6-73.6 / 70.8-71.3, 132 88.7-90.3 / 78.6-78.8,
         * 2048 97.1-97.4 / 95.5-96.1; N = 16388: M = 2048 87.7-89.1 /
         * 82.3-83.2. Below, the two tie (M = 16) and the rule further down
         * decides. */
        else if (fits_block && rows >= sms / 4) path = FASTEST_BLOCK;
        else if (fits_cluster && cols <= FX_CLUSTER_AUTO_MAX_COLS && rows * csize >= sms / 2) path = FASTEST_CLUSTER;
        else if (fits_shared && rows >= sms / 2) path = FASTEST_SHARED;
        else if (fits_grid) path = FASTEST_GRID;
        else path = FASTEST_SPLIT;
    }
    p.path = path;
    if (path != FASTEST_CLUSTER && path != FASTEST_GRID && mode == FX_YCUT) mode = FX_SCALAR;

    switch (path) {
    case FASTEST_WARP:
    case FASTEST_BLOCK: {
        const int i = fx_reg_index(cols, path == FASTEST_WARP ? 0 : FX_NWARP);
        if (mode == FX_PEELED && FX_REG[i].tpr < 8) mode = FX_SCALAR; /* 6 extras need 6 threads */
        if (mode == FX_PEELED && view_y_holes_short(ldy, rows, cols)) mode = FX_SCALAR; /* lesson 5's rule */
        p.threads_per_row = FX_REG[i].tpr;
        p.floats_per_thread = FX_REG[i].fpt;
        p.block = FX_REG[i].block;
        break;
    }
    case FASTEST_SHARED:
        p.threads_per_row = p.block = FX_SHARED_BLOCK;
        p.smem_bytes = cols * (long long)sizeof(float);
        break;
    case FASTEST_CLUSTER: {
        p.block = p.threads_per_row = FX_CL[ccfg].block;
        p.floats_per_thread = FX_CL[ccfg].fpt;
        p.cluster = csize;
        long long seg = (cols + csize - 1) / csize;
        p.segment = (seg + 3) / 4 * 4; /* whole float4s: every CTA starts 16-byte aligned */
        p.smem_bytes = fx_cluster_smem(ccfg, p.segment);
        break;
    }
    case FASTEST_GRID:
        p.block = p.threads_per_row = FX_GRID_BLOCK;
        p.floats_per_thread = FX_GRID_FPT;
        p.splits = gpieces;
        p.segment = gseg;
        p.smem_bytes = fx_grid_smem(gseg);
        break;
    default:
        p.path = FASTEST_SPLIT;
        p.block = FX_SPLIT_BLOCK;
        fx_split_shape(rows, cols, &p.splits, &p.segment);
        p.bytes_per_elem = 12.0;
        break;
    }
    p.vec4 = mode != FX_SCALAR;
    p.peel = mode == FX_PEELED || mode == FX_YCUT;
    p.x32 = mode == FX_YCUT;
    return p;
}

static int fx_plan_mode(const fastest_plan *p)
{
    if (p->x32) return FX_YCUT;
    return p->peel ? FX_PEELED : (p->vec4 ? FX_ALIGNED : FX_SCALAR);
}

fastest_plan softmax_fastest_run(fastest_path want, const float *x, long long ldx, float *y, long long ldy,
                                 long long rows, long long cols, cudaStream_t stream)
{
    if (rows > 1 && (ldx < cols || ldy < cols)) {
        fprintf(stderr, "softmax_fastest: row strides ldx = %lld, ldy = %lld must be >= cols = %lld\n", ldx,
                ldy, cols);
        exit(1);
    }
    const fastest_plan p = softmax_fastest_plan(want, x, ldx, y, ldy, rows, cols);
    if (rows < 1 || cols < 1) return p; /* nothing to do; a 0-block grid is an error */

    switch (p.path) {
    case FASTEST_WARP:
    case FASTEST_BLOCK: {
        const int i = fx_reg_index(cols, p.path == FASTEST_WARP ? 0 : FX_NWARP);
        if (p.peel) fx_run_rows<4, true>(i, x, ldx, y, ldy, rows, cols, stream);
        else if (p.vec4) fx_run_rows<4, false>(i, x, ldx, y, ldy, rows, cols, stream);
        else fx_run_rows<1, false>(i, x, ldx, y, ldy, rows, cols, stream);
        break;
    }
    case FASTEST_SHARED:
        if (p.peel) fx_run_shared<4, true>(x, ldx, y, ldy, rows, cols, p.smem_bytes, stream);
        else if (p.vec4) fx_run_shared<4, false>(x, ldx, y, ldy, rows, cols, p.smem_bytes, stream);
        else fx_run_shared<1, false>(x, ldx, y, ldy, rows, cols, p.smem_bytes, stream);
        break;
    case FASTEST_CLUSTER: {
#ifdef FASTEST_GPU_CODE
        int cfg = 0;
        fx_cluster_shape(fx_plan_mode(&p), cols, &cfg); /* the plan's; its kernel has opted in */
        fx_cluster_fn k = fx_cluster_kernel(fx_plan_mode(&p), cfg);
        const long long batch_max = INT_MAX / p.cluster;
        for (long long r0 = 0; r0 < rows; r0 += batch_max) {
            const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
            cudaLaunchAttribute attr[1];
            cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(n * p.cluster), p.block, p.cluster,
                                                      (size_t)p.smem_bytes, stream, attr);
            const float *xb = x + r0 * ldx;
            float *yb = y + r0 * ldy;
            const int mis = view_mis(p.x32 ? yb : xb); /* where the rows are cut */
            CUDA_CHECK(cudaLaunchKernelEx(&lc, k, xb, ldx, yb, ldy, (int)cols, (int)p.segment, mis));
            CUDA_CHECK_LAUNCH();
        }
#endif
        break;
    }
    case FASTEST_GRID:
        fx_run_grid(fx_plan_mode(&p), x, ldx, y, ldy, rows, cols, p.splits, p.segment, stream);
        break;
    default:
        if (p.peel) fx_run_split<4, true>(x, ldx, y, ldy, rows, cols, p.splits, p.segment, stream);
        else if (p.vec4) fx_run_split<4, false>(x, ldx, y, ldy, rows, cols, p.splits, p.segment, stream);
        else fx_run_split<1, false>(x, ldx, y, ldy, rows, cols, p.splits, p.segment, stream);
        break;
    }
    return p;
}

void softmax_fastest_strided(const float *x, long long ldx, float *y, long long ldy, long long rows,
                             long long cols, cudaStream_t stream)
{
    softmax_fastest_run(FASTEST_AUTO, x, ldx, y, ldy, rows, cols, stream);
}

void softmax_fastest(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    softmax_fastest_run(FASTEST_AUTO, x, cols, y, cols, rows, cols, stream);
}

void softmax_fastest_path(const float *x, float *y, long long rows, long long cols, fastest_path path,
                          cudaStream_t stream)
{
    softmax_fastest_run(path, x, cols, y, cols, rows, cols, stream);
}

void softmax_fastest_warp(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_WARP, s);
}
void softmax_fastest_block(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_BLOCK, s);
}
void softmax_fastest_shared(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_SHARED, s);
}
void softmax_fastest_cluster(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_CLUSTER, s);
}
void softmax_fastest_grid(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_GRID, s);
}
void softmax_fastest_split(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_SPLIT, s);
}
