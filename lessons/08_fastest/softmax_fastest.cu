/* Lesson 8: the fastest softmax: one dispatcher, five kernels (see
 * softmax_fastest.h for the list and README.md for why each exists).
 *
 * One idea runs through every kernel here: each thread first summarises
 * ITS OWN values by a state (m_t, d_t) = (max, sum of exp(v - m_t)),
 * replacing each value by exp(v - m_t) on the way, so exp is computed once
 * per element. The states of all threads of a row (a part of a warp, a
 * block, a cluster of blocks or many blocks) are merged with lesson 6's
 * associative (m, d) merge into the row's (M, D), and each thread writes
 *
 *     y = exp(v - m_t) * exp(m_t - M) / D = exp(v - M) / D,
 *
 * scaling by one per-thread factor. One merge of (m, d) pairs replaces
 * lesson 5's two reductions (max, then sum): one barrier round fewer for a
 * block, one cluster barrier instead of two for a cluster. Within part of
 * a warp, where no barrier is saved, path 1 keeps the two cheap butterflies
 * (see fastest_rows_kernel).
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

/* The cluster path needs cooperative groups and cudaLaunchKernelEx, which
 * the CPU emulator (common/emu, which defines CUDA_EMU) does not have: there
 * it is not compiled at all, and softmax_fastest_has_clusters() says 0. */
#if !defined(CUDA_EMU)
#define FASTEST_CLUSTER_CODE 1
#include <cooperative_groups.h>
#endif

/* ---- moving VEC consecutive floats (VEC = 4: one 16-byte access) ------- */
template <int VEC>
__device__ __forceinline__ void fx_load(const float *p, float *v)
{
    if constexpr (VEC == 4) {
        const float4 q = *reinterpret_cast<const float4 *>(p);
        v[0] = q.x;
        v[1] = q.y;
        v[2] = q.z;
        v[3] = q.w;
    } else {
        v[0] = *p;
    }
}

template <int VEC>
__device__ __forceinline__ void fx_store(float *p, const float *v)
{
    if constexpr (VEC == 4) {
        *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
    } else {
        *p = v[0];
    }
}

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

/* ---- paths 1 and 2: the row in registers ----------------------------------
 * TPR threads per row: 1 ... 32 neighbouring lanes (path 1, BLOCK / TPR
 * rows per block, no barrier at all), or the whole block (path 2). Thread
 * `sub` of a row holds vectors sub, sub + TPR, ...: coalesced, and all
 * FPT / VEC loads are issued before the first use. A grid-stride loop over
 * groups of rows; `first` is uniform over the block, so every thread
 * reaches the barriers of the block merge. cols <= 32768: an int. */
template <int VEC, int FPT, int TPR, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_rows_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y, long long ldy,
                    long long rows, int cols)
{
    static_assert(FPT % VEC == 0, "whole vectors per thread");
    static_assert(BLOCK % TPR == 0 && (TPR <= 32 || TPR == BLOCK), "a row: part of a warp, or the block");
    constexpr int ITEMS = FPT / VEC;
    constexpr int RPB = BLOCK / TPR;
    __shared__ float red_m[32], red_d[32]; /* TPR > 32 only */
    const int sub = threadIdx.x % TPR;
    const int nvec = cols / VEC;

    for (long long first = (long long)blockIdx.x * RPB; first < rows; first += (long long)gridDim.x * RPB) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < rows; /* a dead lane still joins the shuffles */
        const float *xr = x + (live ? row : 0) * ldx;
        float v[FPT];
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int k = i * TPR + sub;
            if (live && k < nvec) {
                fx_load<VEC>(xr + (long long)k * VEC, &v[i * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[i * VEC + j] = -INFINITY;
            }
        }
        float scale;
        if constexpr (TPR <= 32) {
            /* Part of a warp: a max butterfly, then a sum butterfly. Their
             * steps are a shuffle and one cheap operation; a butterfly of
             * (m, d) merges has two exps in each, on the critical path of
             * short rows: 6.2 against 6.7 us at 1024 x 512 on the H100.
             * All -inf row: exp(-inf - (-inf)) = NaN, as PyTorch. */
            float m = -INFINITY;
#pragma unroll
            for (int p = 0; p < FPT; p++) m = fmaxf(m, v[p]);
#pragma unroll
            for (int off = TPR / 2; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
            float d = 0.0f;
#pragma unroll
            for (int p = 0; p < FPT; p++) {
                v[p] = expf(v[p] - m);
                d += v[p];
            }
#pragma unroll
            for (int off = TPR / 2; off > 0; off /= 2) d += __shfl_xor_sync(0xffffffffu, d, off);
            scale = 1.0f / d;
        } else {
            const online_md t = fx_thread_state<FPT>(v);
            scale = fx_scale(t.m, online_md_row_merge<TPR>(t, red_m, red_d));
        }
        float *yr = y + (live ? row : 0) * ldy;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int k = i * TPR + sub;
            if (live && k < nvec) {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[i * VEC + j] *= scale;
                fx_store<VEC>(yr + (long long)k * VEC, &v[i * VEC]);
            }
        }
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
template <int VEC, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_shared_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y, long long ldy,
                      long long rows, int cols)
{
    constexpr int U = 16 / VEC;
    extern __shared__ float4 fastest_smem[];
    __shared__ float red_m[32], red_d[32];
    float *srow = reinterpret_cast<float *>(fastest_smem);
    const int nvec = cols / VEC;

    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const float *xr = x + row * ldx;
        online_md s = online_md_identity();
        for (int k0 = threadIdx.x; k0 < nvec; k0 += U * BLOCK) {
            float v[U * VEC];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * BLOCK;
                if (k < nvec) {
                    fx_load<VEC>(xr + (long long)k * VEC, &v[u * VEC]);
                } else {
#pragma unroll
                    for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * BLOCK;
                if (k < nvec) fx_store<VEC>(srow + k * VEC, &v[u * VEC]);
            }
            s = online_md_push<U * VEC>(s, v);
        }
        s = online_md_row_merge<BLOCK>(s, red_m, red_d);
        const float inv = 1.0f / s.d; /* m = -inf (all -inf): exp(NaN) below */
        float *yr = y + row * ldy;
        for (int k = threadIdx.x; k < nvec; k += BLOCK) {
            float v[VEC];
            fx_load<VEC>(srow + k * VEC, v);
#pragma unroll
            for (int j = 0; j < VEC; j++) v[j] = expf(v[j] - s.m) * inv;
            fx_store<VEC>(yr + (long long)k * VEC, v);
        }
    }
}

/* ---- path 3: one row per thread-block cluster (sm_90) ---------------------
 * The grid is rows x C CTAs in clusters of C: cluster r is row r, CTA
 * `rank` of it holds floats [rank * seg, (rank + 1) * seg) of the row:
 * the first BLOCK x FPT in registers, the rest in dynamic shared memory
 * (streamed in 64 bytes per thread at a time and folded into the thread's
 * state on the way, as path 2s does). Each CTA merges its threads' states;
 * thread 0 puts the CTA's state in its shared memory; after cluster.sync()
 * warp 0 of EVERY CTA reads the C states through distributed shared memory
 * (map_shared_rank), lane i the state of rank i (identity beyond C), and
 * merges them with a butterfly: every CTA gets the row's (M, D), bit for
 * bit the same. A CTA must not exit while another may still read its
 * shared memory: barrier_arrive after the reads, barrier_wait after the
 * stores, so the wait overlaps the writes.
 * Why registers AND shared memory: a CTA is one row's piece from its load
 * to its last store, and while it waits at the cluster barrier its SM
 * moves no bytes unless another CTA is resident there. Small register
 * parts (FPT = 8 or 16) and the rest in shared memory leave room for 2 or
 * more CTAs per SM, which keep DRAM busy through each other's barriers:
 * at 256 x 262144 on the H100, 92.8 % of copy against 83.3 % with the
 * segment in 1024 threads' registers (README.md, "Path 3").
 * Compiled only for sm_90 and up; on older targets the body is empty and
 * the host never launches it (softmax_fastest_has_clusters checks the
 * binary's version). */
#ifdef FASTEST_CLUSTER_CODE
template <int VEC, int FPT, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_cluster_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y, long long ldy,
                       int cols, int seg)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    constexpr int ITEMS = FPT / VEC;
    constexpr int RCAP = BLOCK * FPT; /* floats of the segment in registers */
    constexpr int U = 16 / VEC;
    extern __shared__ float4 fastest_cluster_smem[];
    float *srow = reinterpret_cast<float *>(fastest_cluster_smem);
    __shared__ float red_m[32], red_d[32];
    __shared__ online_md cta_state, row_state;

    const int C = (int)cluster.num_blocks();
    const int rank = (int)cluster.block_rank();
    const long long row = (long long)blockIdx.x / C;
    const int begin = rank * seg;
    int len = cols - begin < seg ? cols - begin : seg;
    if (len < 0) len = 0; /* a short row leaves the last CTAs empty */
    const int rlen = len < RCAP ? len : RCAP;
    const int nvec_r = rlen / VEC, nvec_s = (len - rlen) / VEC;
    const float *xr = x + row * ldx + begin;
    const float *xs = xr + RCAP;

    /* All register loads are issued first; their latency overlaps the
     * shared-memory part's loop. */
    float v[FPT];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * BLOCK + (int)threadIdx.x;
        if (k < nvec_r) {
            fx_load<VEC>(xr + k * VEC, &v[i * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[i * VEC + j] = -INFINITY;
        }
    }
    /* Vector k of the shared part always belongs to thread k % BLOCK: each
     * thread reads back only what it wrote, no barrier needed for it. */
    online_md s = online_md_identity();
    for (int k0 = threadIdx.x; k0 < nvec_s; k0 += U * BLOCK) {
        float w[U * VEC];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int k = k0 + u * BLOCK;
            if (k < nvec_s) {
                fx_load<VEC>(xs + k * VEC, &w[u * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) w[u * VEC + j] = -INFINITY;
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int k = k0 + u * BLOCK;
            if (k < nvec_s) fx_store<VEC>(srow + k * VEC, &w[u * VEC]);
        }
        s = online_md_push<U * VEC>(s, w);
    }
    const online_md t = fx_thread_state<FPT>(v);
    const online_md b = online_md_row_merge<BLOCK>(online_md_merge(t, s), red_m, red_d);
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
    const online_md R = row_state;
    const float scale = fx_scale(t.m, R);
    float *yr = y + row * ldy + begin;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * BLOCK + (int)threadIdx.x;
        if (k < nvec_r) {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[i * VEC + j] *= scale;
            fx_store<VEC>(yr + k * VEC, &v[i * VEC]);
        }
    }
    /* All -inf row: R.m = -inf, shift 0, exp(-inf) * (1 / 0) = NaN, as the
     * register part gives. */
    const float shift = online_md_shift(R.m), inv = 1.0f / R.d;
    float *ys = yr + RCAP;
    for (int k = threadIdx.x; k < nvec_s; k += BLOCK) {
        float w[VEC];
        fx_load<VEC>(srow + k * VEC, w);
#pragma unroll
        for (int j = 0; j < VEC; j++) w[j] = expf(w[j] - shift) * inv;
        fx_store<VEC>(ys + k * VEC, w);
    }
    cluster.barrier_wait(); /* ... and nobody reads this CTA's state any more */
#else
    (void)x;
    (void)ldx;
    (void)y;
    (void)ldy;
    (void)cols;
    (void)seg;
#endif
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
template <int VEC, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_split_state_kernel(const float *__restrict__ x, long long ldx, long long cols, long long splits,
                           long long seg, online_md *__restrict__ work)
{
    constexpr int U = 16 / VEC;
    __shared__ float red_m[32], red_d[32];
    const long long b = blockIdx.x, row = b / splits, begin = (b % splits) * seg;
    const long long len = cols - begin < seg ? cols - begin : seg;
    const long long nvec = len > 0 ? len / VEC : 0;
    const float *xs = x + row * ldx + begin;

    online_md s = online_md_identity();
    for (long long k0 = threadIdx.x; k0 < nvec; k0 += (long long)U * BLOCK) {
        float v[U * VEC];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long k = k0 + (long long)u * BLOCK;
            if (k < nvec) {
                fx_load<VEC>(xs + k * VEC, &v[u * VEC]);
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

template <int VEC, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_split_write_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y, long long ldy,
                           long long cols, long long splits, long long seg,
                           const online_md *__restrict__ work)
{
    constexpr int U = 16 / VEC;
    __shared__ float red_m[32], red_d[32];
    const long long b = (long long)gridDim.x - 1 - blockIdx.x; /* reverse: L2 reuse */
    const long long row = b / splits, begin = (b % splits) * seg;
    const long long len = cols - begin < seg ? cols - begin : seg;
    const long long nvec = len > 0 ? len / VEC : 0;

    const online_md *wr = work + row * splits;
    online_md s = online_md_identity();
    for (long long i = threadIdx.x; i < splits; i += BLOCK) s = online_md_merge(s, wr[i]);
    s = online_md_row_merge<BLOCK>(s, red_m, red_d);
    const float inv = 1.0f / s.d;

    const float *xs = x + row * ldx + begin;
    float *ys = y + row * ldy + begin;
    for (long long k0 = threadIdx.x; k0 < nvec; k0 += (long long)U * BLOCK) {
        float v[U * VEC];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long k = k0 + (long long)u * BLOCK;
            if (k < nvec) fx_load<VEC>(xs + k * VEC, &v[u * VEC]);
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long k = k0 + (long long)u * BLOCK;
            if (k < nvec) {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[u * VEC + j] = expf(v[u * VEC + j] - s.m) * inv;
                fx_store<VEC>(ys + k * VEC, &v[u * VEC]);
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
 * two float4 per lane (README.md, "Path 1"; H100, 2026-11-22). */
static constexpr fx_reg_config FX_REG[] = {
    {4, 1, 4, 128},       {8, 2, 4, 128},       {16, 4, 4, 128},        {32, 8, 4, 128},
    {64, 16, 4, 128},     {128, 32, 4, 128},    {256, 32, 8, 128},      {512, 32, 16, 128},
    {1024, 32, 32, 128},  {2048, 128, 16, 128}, {4096, 256, 16, 256},   {8192, 256, 32, 256},
    {16384, 512, 32, 512}, {32768, 1024, 32, 1024},
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
    case FASTEST_SPLIT: return "4 split (row across blocks, (m, d) merge, 2R+1W)";
    default: return "auto";
    }
}

/* ---- path 1 / 2 launches ---- */
template <int VEC, int I>
static void fx_launch_rows(const float *x, long long ldx, float *y, long long ldy, long long rows,
                           long long cols, cudaStream_t stream)
{
    constexpr fx_reg_config C = FX_REG[I];
    static_assert(C.fpt % 4 == 0 && C.tpr * C.fpt >= C.max_cols, "capacity holds the class");
    void (*kernel)(const float *, long long, float *, long long, long long, int) =
        fastest_rows_kernel<VEC, C.fpt, C.tpr, C.block>;
    kernel<<<fx_grid(rows, C.block / C.tpr), C.block, 0, stream>>>(x, ldx, y, ldy, rows, (int)cols);
    CUDA_CHECK_LAUNCH();
}

template <int VEC>
static void fx_run_rows(int i, const float *x, long long ldx, float *y, long long ldy, long long rows,
                        long long cols, cudaStream_t s)
{
    switch (i) {
    case 0: fx_launch_rows<VEC, 0>(x, ldx, y, ldy, rows, cols, s); break;
    case 1: fx_launch_rows<VEC, 1>(x, ldx, y, ldy, rows, cols, s); break;
    case 2: fx_launch_rows<VEC, 2>(x, ldx, y, ldy, rows, cols, s); break;
    case 3: fx_launch_rows<VEC, 3>(x, ldx, y, ldy, rows, cols, s); break;
    case 4: fx_launch_rows<VEC, 4>(x, ldx, y, ldy, rows, cols, s); break;
    case 5: fx_launch_rows<VEC, 5>(x, ldx, y, ldy, rows, cols, s); break;
    case 6: fx_launch_rows<VEC, 6>(x, ldx, y, ldy, rows, cols, s); break;
    case 7: fx_launch_rows<VEC, 7>(x, ldx, y, ldy, rows, cols, s); break;
    case 8: fx_launch_rows<VEC, 8>(x, ldx, y, ldy, rows, cols, s); break;
    case 9: fx_launch_rows<VEC, 9>(x, ldx, y, ldy, rows, cols, s); break;
    case 10: fx_launch_rows<VEC, 10>(x, ldx, y, ldy, rows, cols, s); break;
    case 11: fx_launch_rows<VEC, 11>(x, ldx, y, ldy, rows, cols, s); break;
    case 12: fx_launch_rows<VEC, 12>(x, ldx, y, ldy, rows, cols, s); break;
    default: fx_launch_rows<VEC, 13>(x, ldx, y, ldy, rows, cols, s); break;
    }
}
static_assert(FX_NREG == 14, "fx_run_rows has one case per configuration");

/* The register configuration for cols, from `from` on (0: path 1 first,
 * FX_NWARP: block configurations only); -1 if none holds it. */
static int fx_reg_index(long long cols, int from)
{
    for (int i = from; i < FX_NREG; i++)
        if (cols <= FX_REG[i].max_cols) return i;
    return -1;
}

/* ---- path 2s ---- */
template <int VEC>
static void fx_run_shared(const float *x, long long ldx, float *y, long long ldy, long long rows,
                          long long cols, long long smem, cudaStream_t stream)
{
    void (*kernel)(const float *, long long, float *, long long, long long, int) =
        fastest_shared_kernel<VEC, FX_SHARED_BLOCK>;
    if (smem > 48 * 1024) /* above the default, a kernel must opt in */
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    kernel<<<fx_grid(rows, 1), FX_SHARED_BLOCK, (size_t)smem, stream>>>(x, ldx, y, ldy, rows, (int)cols);
    CUDA_CHECK_LAUNCH();
}

/* ---- path 4 ---- */
static online_md *fx_work = nullptr;
static long long fx_work_bytes = 0;

long long softmax_fastest_workspace_bytes(void) { return fx_work_bytes; }

void softmax_fastest_release(void)
{
    if (fx_work) CUDA_CHECK(cudaFree(fx_work)); /* synchronises: no kernel still uses it */
    fx_work = nullptr;
    fx_work_bytes = 0;
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

template <int VEC>
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
        void (*k1)(const float *, long long, long long, long long, long long, online_md *) =
            fastest_split_state_kernel<VEC, FX_SPLIT_BLOCK>;
        void (*k2)(const float *, long long, float *, long long, long long, long long, long long,
                   const online_md *) = fastest_split_write_kernel<VEC, FX_SPLIT_BLOCK>;
        k1<<<blocks, FX_SPLIT_BLOCK, 0, stream>>>(xb, ldx, cols, splits, seg, work);
        CUDA_CHECK_LAUNCH();
        k2<<<blocks, FX_SPLIT_BLOCK, 0, stream>>>(xb, ldx, yb, ldy, cols, splits, seg, work);
        CUDA_CHECK_LAUNCH();
    }
}

/* ---- path 3 host side ---- */
#ifdef FASTEST_CLUSTER_CODE
typedef void (*fx_cluster_fn)(const float *, long long, float *, long long, int, int);

template <int VEC, int I>
static fx_cluster_fn fx_cluster_kernel_at(void)
{
    return fastest_cluster_kernel<VEC, FX_CL[I].fpt, FX_CL[I].block>;
}

static fx_cluster_fn fx_cluster_kernel(int vec4, int cfg)
{
    static_assert(FX_NCL == 6, "fx_cluster_kernel has one case per configuration");
    switch (cfg) {
    case 0: return vec4 ? fx_cluster_kernel_at<4, 0>() : fx_cluster_kernel_at<1, 0>();
    case 1: return vec4 ? fx_cluster_kernel_at<4, 1>() : fx_cluster_kernel_at<1, 1>();
    case 2: return vec4 ? fx_cluster_kernel_at<4, 2>() : fx_cluster_kernel_at<1, 2>();
    case 3: return vec4 ? fx_cluster_kernel_at<4, 3>() : fx_cluster_kernel_at<1, 3>();
    case 4: return vec4 ? fx_cluster_kernel_at<4, 4>() : fx_cluster_kernel_at<1, 4>();
    default: return vec4 ? fx_cluster_kernel_at<4, 5>() : fx_cluster_kernel_at<1, 5>();
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
static int fx_active_clusters(int vec4, int cfg)
{
    static int cache[2][FX_NCL];
    static int filled = 0;
    if (!filled) {
        for (int v = 0; v < 2; v++)
            for (int i = 0; i < FX_NCL; i++) cache[v][i] = -1;
        filled = 1;
    }
    int *slot = &cache[vec4 ? 1 : 0][cfg];
    if (*slot < 0) {
        const fx_cluster_cfg C = FX_CL[cfg];
        const fx_cluster_fn k = fx_cluster_kernel(vec4, cfg);
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
#ifdef FASTEST_CLUSTER_CODE
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
            if (cudaFuncGetAttributes(&fa, fx_cluster_kernel(1, 0)) == cudaSuccess)
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
static int fx_cluster_shape(int vec4, long long cols, int *cfg_out)
{
#ifdef FASTEST_CLUSTER_CODE
    for (int cfg = 0; cfg < FX_NCL; cfg++)
        if (cols <= FX_CL[cfg].max_cols && fx_active_clusters(vec4, cfg) >= 1) {
            *cfg_out = cfg;
            return 1;
        }
#else
    (void)vec4;
    (void)cols;
#endif
    *cfg_out = 0;
    return 0;
}

static int fx_can_vec4(const float *x, long long ldx, const float *y, long long ldy, long long cols)
{
    return (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0 && cols % 4 == 0 && ldx % 4 == 0 && ldy % 4 == 0;
}

fastest_plan softmax_fastest_plan(fastest_path want, const float *x, long long ldx, const float *y,
                                  long long ldy, long long rows, long long cols)
{
    fastest_plan p = {};
    p.vec4 = fx_can_vec4(x, ldx, y, ldy, cols);
    p.bytes_per_elem = 8.0;
    if (cols < 1) cols = 1;
    if (rows < 1) rows = 1;
    const int sms = fx_sms();

    /* Does the shape fit each path? */
    const int fits_warp = cols <= FASTEST_WARP_MAX_COLS;
    const int fits_block = cols <= FASTEST_BLOCK_MAX_COLS;
    int ccfg = 0;
    const int fits_cluster = (want == FASTEST_CLUSTER || want == FASTEST_AUTO) && cols <= FASTEST_CLUSTER_MAX_COLS &&
                             softmax_fastest_has_clusters() && fx_cluster_shape(p.vec4, cols, &ccfg);
    const int csize = FX_CL[ccfg].c;
    const int fits_shared = (want == FASTEST_SHARED || (want == FASTEST_AUTO && cols > 16384)) &&
                            cols <= softmax_fastest_shared_capacity();

    fastest_path path = want;
    if ((want == FASTEST_WARP && !fits_warp) || (want == FASTEST_BLOCK && !fits_block) ||
        (want == FASTEST_CLUSTER && !fits_cluster) || (want == FASTEST_SHARED && !fits_shared) ||
        want <= FASTEST_AUTO || want >= FASTEST_NPATHS)
        path = FASTEST_AUTO;

    if (path == FASTEST_AUTO) {
        /* The dispatcher (README.md, "The dispatcher"). */
        if (fits_warp) path = FASTEST_WARP;
        else if (cols <= 16384) path = FASTEST_BLOCK;
        else if (fits_cluster && rows * csize >= sms / 2) path = FASTEST_CLUSTER;
        else if (fits_block && rows >= sms / 2) path = FASTEST_BLOCK;
        else if (fits_shared && rows >= sms / 2) path = FASTEST_SHARED;
        else path = FASTEST_SPLIT;
    }
    p.path = path;

    switch (path) {
    case FASTEST_WARP:
    case FASTEST_BLOCK: {
        const int i = fx_reg_index(cols, path == FASTEST_WARP ? 0 : FX_NWARP);
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
    default:
        p.path = FASTEST_SPLIT;
        p.block = FX_SPLIT_BLOCK;
        fx_split_shape(rows, cols, &p.splits, &p.segment);
        p.bytes_per_elem = 12.0;
        break;
    }
    return p;
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
        if (p.vec4) fx_run_rows<4>(i, x, ldx, y, ldy, rows, cols, stream);
        else fx_run_rows<1>(i, x, ldx, y, ldy, rows, cols, stream);
        break;
    }
    case FASTEST_SHARED:
        if (p.vec4) fx_run_shared<4>(x, ldx, y, ldy, rows, cols, p.smem_bytes, stream);
        else fx_run_shared<1>(x, ldx, y, ldy, rows, cols, p.smem_bytes, stream);
        break;
    case FASTEST_CLUSTER: {
#ifdef FASTEST_CLUSTER_CODE
        int cfg = 0;
        fx_cluster_shape(p.vec4, cols, &cfg); /* the plan's; its kernel has opted in */
        fx_cluster_fn k = fx_cluster_kernel(p.vec4, cfg);
        const long long batch_max = INT_MAX / p.cluster;
        for (long long r0 = 0; r0 < rows; r0 += batch_max) {
            const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
            cudaLaunchAttribute attr[1];
            cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(n * p.cluster), p.block, p.cluster,
                                                      (size_t)p.smem_bytes, stream, attr);
            CUDA_CHECK(cudaLaunchKernelEx(&lc, k, x + r0 * ldx, ldx, y + r0 * ldy, ldy, (int)cols,
                                          (int)p.segment));
            CUDA_CHECK_LAUNCH();
        }
#endif
        break;
    }
    default:
        if (p.vec4) fx_run_split<4>(x, ldx, y, ldy, rows, cols, p.splits, p.segment, stream);
        else fx_run_split<1>(x, ldx, y, ldy, rows, cols, p.splits, p.segment, stream);
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
void softmax_fastest_split(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_SPLIT, s);
}
