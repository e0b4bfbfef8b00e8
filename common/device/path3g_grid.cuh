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
 * (docs/experiments/rows-grid-path.md). */
template <class OP, int VEC, bool PEEL, int FPT, int BLOCK, bool XS, class T = float>
__global__ void __launch_bounds__(BLOCK)
fastest_grid_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, int cols,
                    int pieces, int seg, int mis, unsigned *sync, online_md *work)
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

    float v[FPT + (PEEL ? 1 : 0)], m_regs;
    const online_md t = fx_piece_read<OP, VEC, PEEL, FPT, BLOCK, XS>(
        xr + begin, len, has_extra ? view_extra_load(xr, cut, threadIdx.x) : -INFINITY, v, srow, &m_regs);
    const online_md b = online_md_row_merge<BLOCK>(t, red_m, red_d);
    online_md *wr = work + row * pieces;
    if (threadIdx.x == 0) {
        wr[piece] = b;
        fx_grid_arrive_wait(&sync[1 + row], (unsigned)pieces); /* count in, wait for the row */
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
    const unsigned before = threadIdx.x == 0 ? fx_grid_count_out(&sync[1 + row]) : 0u;
    T *yr = y + row * ldy;
    fx_piece_write<OP, VEC, PEEL, FPT, BLOCK>(yr + begin, len, v, srow, m_regs, R,
                                          has_extra ? yr + fx_extra_at<T>(cut, threadIdx.x) : nullptr);
    if (threadIdx.x == 0) fx_grid_leave(&sync[1 + row], before, (unsigned)pieces);
}

/* A path 3g kernel over storage type T (float: lesson 8; 16-bit: lesson 9). */
template <class T>
using fx_grid_fn_t = void (*)(const T *, long long, T *, long long, int, int, int, int, unsigned *, online_md *);

/* Operation OP's kernel for storage T: float rows by the plan's mode
 * (fx_plan_mode), 16-bit rows by fx_mode16's. */
template <class OP, class T>
static fx_grid_fn_t<T> fx_grid_kernel_op(int mode)
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

/* How many CTAs of kernel k with full pieces the GPU holds at once (its
 * registers, so its occupancy, are its own). A row's pieces must all fit:
 * a CTA waits for its row's others. Opts k in to its shared memory: 48 KB
 * of dynamic shared memory, plus the kernel's static arrays, is above the
 * 48 KB a block gets without opting in. */
template <class T>
static long long fx_grid_resident_of(fx_grid_fn_t<T> k)
{
    const size_t smem = (size_t)fx_grid_smem(FX_GRID_PIECE, sizeof(float)); /* 48 KB, 16-bit CTAs too */
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
    if (*slot < 0) *slot = fx_grid_resident_of(fx_grid_kernel_op<OP, T>(mode));
    return *slot;
}

/* Rows in batches of at most INT_MAX CTAs. The workspace holds the batch's
 * states; the counters are sync[0], the ticket, and sync[1 + r], row r's.
 * cut_at_y: the rows are cut at y's 16-byte boundaries (FX_YCUT). */
template <class T>
static void fx_grid_batches(fx_grid_fn_t<T> k, bool cut_at_y, const T *x, long long ldx, T *y, long long ldy,
                            long long rows, long long cols, long long pieces, long long seg, cudaStream_t stream)
{
    const long long smem = fx_grid_smem(seg, sizeof(T));
    const long long batch_max = INT_MAX / pieces;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        online_md *work = fx_workspace(n * pieces);
        unsigned *sync = fx_sync_counters(n + 1);
        const T *xb = x + r0 * ldx;
        T *yb = y + r0 * ldy;
        const int mis = cut_at_y ? fx_mis(yb) : fx_mis(xb); /* where the rows are cut */
        k<<<(unsigned)(n * pieces), FX_GRID_BLOCK, (size_t)smem, stream>>>(xb, ldx, yb, ldy, (int)cols, (int)pieces,
                                                                            (int)seg, mis, sync, work);
        CUDA_CHECK_LAUNCH();
    }
}

/* Runs plan p (path 3g) with operation OP on rows of storage type T. */
template <class OP, class T>
static void fx_run_grid_op(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                           long long cols, cudaStream_t stream)
{
    const int mode = fx_is_float<T> ? fx_plan_mode(p) : fx_mode16(p);
    fx_grid_resident_op<OP, T>(mode); /* the kernel's opt-in to 48 KB of shared memory */
    const fx_grid_fn_t<T> k = fx_grid_kernel_op<OP, T>(mode);
    const long long smem = fx_grid_smem(p->segment, sizeof(T));
    if (smem > 48 * 1024) /* fx_grid_resident_op opted in for 48 KB; a plan never asks for more */
        CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    fx_grid_batches(k, fx_is_float<T> && mode == FX_YCUT, x, ldx, y, ldy, rows, cols, p->splits, p->segment, stream);
}

#endif
