/* Taught in lesson 8. Path 3 of the row engine (path3_cluster.cu says
 * what it is for), for any row operation (rows_op.cuh) and storage type:
 * the kernel, its occupancy and its launcher as templates, which
 * path3_cluster.cu instantiates for the softmax and lesson 10 for its
 * operations. Each operation's kernel has its own registers, so the plan
 * asks which clusters fit of that kernel (fx_cluster_shape_op). */
#ifndef COMMON_DEVICE_PATH3_CLUSTER_CUH
#define COMMON_DEVICE_PATH3_CLUSTER_CUH
#include <limits.h>
#include <math.h>

#include "check.h"
#include "cluster_launch.h"
#include "fastest_device.cuh"
#include "fastest_paths.h"
#include <cooperative_groups.h>

/* Path 3: one row per thread-block cluster (sm_90). The grid is rows x C
 * CTAs in clusters of C: cluster r is row r, CTA `rank` of it holds piece
 * `rank`. Each CTA merges its threads' states, and the CTAs push theirs
 * into each other's shared memory (fx_cluster_exchange in
 * cluster_exchange.cuh): every CTA gets the row's (M, D), bit for bit the
 * same.
 * Compiled only for sm_90 and up (and for the CPU emulator, which runs a
 * cluster's CTAs together); on older targets the body is empty and the
 * host never launches it (softmax_fastest_has_clusters checks the
 * binary's version). */
/* CTAs per SM the registers must leave room for: 3 x 512 threads with 8
 * floats each in registers, 2 x 512 with 16. Left alone, the compiler
 * takes 49 registers for <8 floats, 512 threads>, two CTAs per SM instead
 * of three: 86.7 against 92.7 % of copy at 512 x 2^17 (H100). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define FX_CLUSTER_MIN_CTAS(FPT, BLOCK) 1 /* no clusters (the body is empty); 1536 threads would not fit */
#else
#define FX_CLUSTER_MIN_CTAS(FPT, BLOCK) (((FPT) <= 8 ? 1536 : 1024) / (BLOCK)) /* BLOCK <= 1024: at least 1 */
#endif
template <class OP, int VEC, bool PEEL, int FPT, int BLOCK, bool XS, class T = float>
__global__ void __launch_bounds__(BLOCK, FX_CLUSTER_MIN_CTAS(FPT, BLOCK))
fastest_cluster_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy,
                       int cols, int seg, int mis, OP op)
{
#if FX_CLUSTER_CODE
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    extern __shared__ float4 fastest_cluster_smem[];
    T *srow = reinterpret_cast<T *>(fastest_cluster_smem);
    __shared__ float red_m[32], red_d[32];

    fx_cluster_open();
    const int C = (int)cluster.num_blocks();
    const int rank = (int)cluster.block_rank();
    const long long row = (long long)blockIdx.x / C;
    const T *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, XS ? ldy : ldx, mis, cols); /* XS: mis is y's */
    const int len = fx_piece_len((int)(cut.nvec * VEC), rank, seg);
    const int begin = cut.head + rank * seg; /* cols < 2^31 */
    const bool has_extra = PEEL && rank == 0 && (int)threadIdx.x < cut.nextra;

    fx_row_t<OP> rc{};
    if constexpr (OP::ROW) rc = op.begin(row, true);
    float v[FPT + (PEEL ? 1 : 0)], m_regs;
    const online_md t = fx_piece_read<OP, VEC, PEEL, FPT, BLOCK, XS>(
        xr + begin, len, has_extra ? view_extra_load(xr, cut, threadIdx.x) : -INFINITY, v, srow, &m_regs);
    [[maybe_unused]] bool owner = false; /* ROW: this thread holds the row's column */
    if constexpr (OP::ROW)
        owner = fx_row_piece_pick<PEEL>(op, &rc, xr, begin, begin + len, VEC, BLOCK, (int)threadIdx.x, cut, rank == 0);
    const online_md r = fx_cluster_exchange(online_md_row_merge<BLOCK>(t, red_m, red_d), C);
    T *yr = y + row * ldy;
    [[maybe_unused]] const typename OP::fin f = fx_finish(op, r.m, r.d, rc);
    if constexpr (OP::ROW) fx_row_piece_lead(op, rc, f, owner, rank == 0);
    if constexpr (OP::OUT)
        fx_piece_write<OP, VEC, PEEL, FPT, BLOCK>(yr + begin, len, v, srow, m_regs, r,
                                                  has_extra ? yr + fx_extra_at<T>(cut, threadIdx.x) : nullptr, f);
    if constexpr (OP::ROW) fx_row_piece_end(op, rc, f, yr, owner, red_m);
#else
    (void)x;
    (void)ldx;
    (void)y;
    (void)ldy;
    (void)cols;
    (void)seg;
    (void)mis;
    (void)op;
#endif
}

template <class OP, class T>
using fx_cluster_fn_t = void (*)(const T *, long long, T *, long long, int, int, int, OP);

/* Operation OP's kernel of configuration I for storage T: float rows by
 * the plan's mode (fx_plan_mode), 16-bit rows by fx_mode16's. */
template <class OP, class T, int I>
static fx_cluster_fn_t<OP, T> fx_cluster_kernel_at(int mode)
{
    constexpr int F = FX_CL[I].fpt, B = FX_CL[I].block;
    if constexpr (fx_is_float<T>) {
        if (mode == FX_ALIGNED) return fastest_cluster_kernel<OP, 4, false, F, B, false>;
        if (mode == FX_PEELED) return fastest_cluster_kernel<OP, 4, true, F, B, false>;
        if (mode == FX_YCUT) return fastest_cluster_kernel<OP, 4, true, F, B, true>;
        return fastest_cluster_kernel<OP, 1, false, F, B, false>;
    } else {
        if (mode == 2) return fastest_cluster_kernel<OP, 8, true, F, B, false, T>;
        if (mode == 1) return fastest_cluster_kernel<OP, 8, false, F, B, false, T>;
        return fastest_cluster_kernel<OP, 1, false, F, B, false, T>;
    }
}

template <class OP, class T>
static fx_cluster_fn_t<OP, T> fx_cluster_kernel_op(int mode, int cfg)
{
    static_assert(FX_NCL == 8, "fx_cluster_kernel_op has one case per configuration");
    switch (cfg) {
    case 0: return fx_cluster_kernel_at<OP, T, 0>(mode);
    case 1: return fx_cluster_kernel_at<OP, T, 1>(mode);
    case 2: return fx_cluster_kernel_at<OP, T, 2>(mode);
    case 3: return fx_cluster_kernel_at<OP, T, 3>(mode);
    case 4: return fx_cluster_kernel_at<OP, T, 4>(mode);
    case 5: return fx_cluster_kernel_at<OP, T, 5>(mode);
    case 6: return fx_cluster_kernel_at<OP, T, 6>(mode);
    default: return fx_cluster_kernel_at<OP, T, 7>(mode);
    }
}

template <class F>
static int fx_cluster_fit(F k, int cfg)
{
    const fx_cluster_cfg C = FX_CL[cfg];
    const long long smem = fx_cluster_smem(cfg, C.max_cols / C.c, sizeof(float)); /* the same bytes for 16-bit CTAs */
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
    return n;
}

/* Once per (mode, configuration): fx_cluster_fit of its kernel. */
/* How many clusters of OP's kernel for mode and configuration cfg fit
 * on this GPU at once (0: none), asked once per process. */
template <class OP, class T>
static int fx_active_clusters_op(int mode, int cfg)
{
    static int cache[FX_NMODES][FX_NCL];
    static int filled = 0;
    if (!filled) {
        for (int v = 0; v < FX_NMODES; v++)
            for (int i = 0; i < FX_NCL; i++) cache[v][i] = -1;
        filled = 1;
    }
    int *slot = &cache[mode][cfg];
    if (*slot < 0) *slot = fx_cluster_fit(fx_cluster_kernel_op<OP, T>(mode, cfg), cfg);
    return *slot;
}

/* The first configuration whose cluster holds a row of cols elements and
 * fits on this GPU: its index and cluster size (0 when none does). */
template <class OP, class T>
static int fx_cluster_shape_op(int mode, long long cols, int *cfg_out, int *c_out)
{
    for (int cfg = 0; cfg < FX_NCL; cfg++) {
        const long long cap = fx_cl_cap(cfg, sizeof(T)); /* elements per CTA */
        const long long c = (cols + cap - 1) / cap;
        if (c <= FX_CL[cfg].c && fx_active_clusters_op<OP, T>(mode, cfg) >= 1) {
            *cfg_out = cfg;
            *c_out = (int)(c < 1 ? 1 : c);
            return 1;
        }
    }
    *cfg_out = 0;
    *c_out = 1;
    return 0;
}

/* CTAs of OP's kernel per SM, for mode and configuration cfg. */
template <class OP, class T>
static int fx_cluster_ctas_per_sm_op(int mode, int cfg)
{
    static int cache[FX_NMODES][FX_NCL]; /* 0: not asked yet; the answer + 1 */
    int *slot = &cache[mode][cfg];
    if (!*slot) {
        const fx_cluster_cfg C = FX_CL[cfg];
        int n = 0;
        const size_t smem = (size_t)fx_cluster_smem(cfg, C.max_cols / C.c, sizeof(float));
        if (fx_active_clusters_op<OP, T>(mode, cfg) >= 1) /* also opts the kernel in to its shared memory */
            CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fx_cluster_kernel_op<OP, T>(mode, cfg),
                                                                     C.block, smem));
        *slot = n + 1;
    }
    return *slot - 1;
}

static int fx_cluster_cfg_of(const fastest_plan *p)
{
    int cfg = 0;
    while (cfg < FX_NCL - 1 && (FX_CL[cfg].block != p->block || FX_CL[cfg].fpt != p->floats_per_thread)) cfg++;
    return cfg;
}

/* Rows in batches so that one grid stays within 2^31 - 1 CTAs. cut_at_y:
 * the rows are cut at y's 16-byte boundaries (the plan's x32). */
template <class OP, class T>
static void fx_cluster_batches(fx_cluster_fn_t<OP, T> k, const fastest_plan *p, const T *x, long long ldx, T *y,
                               long long ldy, long long rows, long long cols, cudaStream_t stream, const OP &op)
{
    const long long batch_max = INT_MAX / p->cluster;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(n * p->cluster), p->block, p->cluster,
                                                  (size_t)p->smem_bytes, stream, attr);
        const T *xb = x + r0 * ldx;
        T *yb = y + r0 * ldy;
        const int mis = p->x32 ? fx_mis(yb) : fx_mis(xb); /* where the rows are cut */
        CUDA_CHECK(cudaLaunchKernelEx(&lc, k, xb, ldx, yb, ldy, (int)cols, (int)p->segment, mis, fx_op_at(op, r0)));
        CUDA_CHECK_LAUNCH();
    }
}

/* Runs plan p (path 3) with operation OP on rows of storage type T: the
 * plan's kernel, opted in to its shared memory when the plan asked. */
template <class OP, class T>
static void fx_run_cluster_op(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                              long long cols, cudaStream_t stream, const OP &op = OP{})
{
    const int mode = fx_is_float<T> ? fx_plan_mode(p) : fx_mode16(p);
    fx_cluster_batches<OP, T>(fx_cluster_kernel_op<OP, T>(mode, fx_cluster_cfg_of(p)), p, x, ldx, y, ldy, rows, cols,
                              stream, op);
}

#endif
