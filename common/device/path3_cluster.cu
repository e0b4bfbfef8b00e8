/* Taught in lesson 8. Path 3 of the row engine: one row per thread-block
 * cluster of C = 4 ... 16 CTAs on C SMs (sm_90), each CTA's piece of the
 * row held on chip in registers and shared memory, the CTAs' (m, d) states
 * exchanged through distributed shared memory (lessons/08_fastest/README.md,
 * "Path 3"). It wins where a row is too long for one SM to stream fast
 * enough, 16384 < N <= 2^19, with enough rows (M x C >= SMs/2): 91.5 % of
 * copy or more up to 2^19 at M x N = 2^26 on the H100. At 2^20 one 256 KB
 * CTA per SM leaves DRAM idle through every wait, and path 3g takes over
 * (docs/experiments/rows-cluster-classes.md). */
#include <limits.h>
#include <math.h>

#include "check.h"
#include "cluster_launch.h"
#include "fastest_device.cuh"
#include "fastest_paths.h"
#include <cooperative_groups.h>

/* Path 3: one row per thread-block cluster (sm_90). The grid is rows x C
 * CTAs in clusters of C: cluster r is row r, CTA `rank` of it holds piece
 * `rank`. Each CTA merges its threads' states, and the CTAs exchange
 * theirs through distributed shared memory (fx_cluster_exchange in
 * fastest_device.cuh): every CTA gets the row's (M, D), bit for bit the
 * same. A CTA must not exit while another may still read its shared
 * memory: barrier_arrive after the reads, barrier_wait after the stores,
 * so the wait overlaps the writes.
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
template <int VEC, bool PEEL, int FPT, int BLOCK, bool XS, class T = float>
__global__ void __launch_bounds__(BLOCK, FX_CLUSTER_MIN_CTAS(FPT, BLOCK))
fastest_cluster_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy,
                       int cols, int seg, int mis)
{
#if FX_CLUSTER_CODE
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    extern __shared__ float4 fastest_cluster_smem[];
    T *srow = reinterpret_cast<T *>(fastest_cluster_smem);
    __shared__ float red_m[32], red_d[32];

    const int C = (int)cluster.num_blocks();
    const int rank = (int)cluster.block_rank();
    const long long row = (long long)blockIdx.x / C;
    const T *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, XS ? ldy : ldx, mis, cols); /* XS: mis is y's */
    const int len = fx_piece_len((int)(cut.nvec * VEC), rank, seg);
    const int begin = cut.head + rank * seg; /* cols < 2^31 */
    const bool has_extra = PEEL && rank == 0 && (int)threadIdx.x < cut.nextra;

    float v[FPT + (PEEL ? 1 : 0)], m_regs;
    const online_md t = fx_piece_read<VEC, PEEL, FPT, BLOCK, XS>(
        xr + begin, len, has_extra ? view_extra_load(xr, cut, threadIdx.x) : -INFINITY, v, srow, &m_regs);
    const online_md r = fx_cluster_exchange(online_md_row_merge<BLOCK>(t, red_m, red_d), C);
    T *yr = y + row * ldy;
    fx_piece_write<VEC, PEEL, FPT, BLOCK>(yr + begin, len, v, srow, m_regs, r,
                                          has_extra ? yr + fx_extra_at<T>(cut, threadIdx.x) : nullptr);
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

long long fx_cluster_smem(int cfg, long long seg, int esize)
{
    const long long rest = seg - (long long)FX_CL[cfg].block * FX_CL[cfg].fpt;
    return rest > 0 ? rest * esize : 0;
}

/* A path 3 kernel over storage type T (float: lesson 8; 16-bit: lesson 9). */
template <class T>
using fx_cluster_fn_t = void (*)(const T *, long long, T *, long long, int, int, int);
typedef fx_cluster_fn_t<float> fx_cluster_fn;

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

/* Opts configuration cfg's kernel k in to its largest shared memory and
 * (C > 8) to non-portable cluster sizes, and returns how many of its
 * clusters fit on the GPU at once (cudaOccupancyMaxActiveClusters); 0 when
 * they do not fit. F: the kernel's pointer type (float or 16-bit rows). */
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
    if (*slot < 0) *slot = fx_cluster_fit(fx_cluster_kernel(mode, cfg), cfg);
    return *slot;
}

int softmax_fastest_has_clusters(void)
{
    static int has = -1;
    if (has < 0) has = fx_can_launch_clusters((const void *)fx_cluster_kernel(FX_ALIGNED, 0));
    return has;
}

/* Path 3's CTA shape and cluster size for cols: the first configuration
 * of FX_CL whose CTAs hold the row in at most its own c of them, with
 * C = ceil(cols / capacity) CTAs, not c: a row a float4 past a class's
 * top takes one CTA more of the same shape, not twice as many half-empty
 * ones (C = 5 of 8192-float CTAs at N = 32772, not 8 of 4097). At each
 * class's top, C = c. 0 if no configuration holds the row on this GPU.
 * For a peeled view cols is the row's body (fx_body_cols). */
int fx_cluster_shape(int mode, long long cols, int *cfg_out, int *c_out)
{
    for (int cfg = 0; cfg < FX_NCL; cfg++) {
        const long long cap = fx_cl_cap(cfg, sizeof(float)); /* floats per CTA */
        const long long c = (cols + cap - 1) / cap;
        if (c <= FX_CL[cfg].c && fx_active_clusters(mode, cfg) >= 1) {
            *cfg_out = cfg;
            *c_out = (int)(c < 1 ? 1 : c);
            return 1;
        }
    }
    *cfg_out = 0;
    *c_out = 1;
    return 0;
}

/* How many CTAs of configuration cfg fit on one SM, full, in mode's
 * kernel: the dispatcher keeps path 3 to CTAs that fit at least twice
 * (rows_plan.cu). */
int fx_cluster_ctas_per_sm(int mode, int cfg)
{
    static int cache[FX_NMODES][FX_NCL]; /* 0: not asked yet; the answer + 1 */
    int *slot = &cache[mode][cfg];
    if (!*slot) {
        const fx_cluster_cfg C = FX_CL[cfg];
        int n = 0;
        if (fx_active_clusters(mode, cfg) >= 1) /* also opts the kernel in to its shared memory */
            CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fx_cluster_kernel(mode, cfg), C.block,
                                                                     (size_t)fx_cluster_smem(cfg, C.max_cols / C.c, sizeof(float))));
        *slot = n + 1;
    }
    return *slot - 1;
}

/* The configuration plan p was made for: the first of FX_CL with its CTA
 * shape (block, floats per thread), which is all that picks the kernel
 * and its shared memory (classes 0 and 1 share both). */
static int fx_cluster_cfg_of(const fastest_plan *p)
{
    int cfg = 0;
    while (cfg < FX_NCL - 1 && (FX_CL[cfg].block != p->block || FX_CL[cfg].fpt != p->floats_per_thread)) cfg++;
    return cfg;
}

/* Rows in batches so that one grid stays within 2^31 - 1 CTAs. cut_at_y:
 * the rows are cut at y's 16-byte boundaries (the plan's x32). */
template <class T>
static void fx_cluster_batches(fx_cluster_fn_t<T> k, const fastest_plan *p, const T *x, long long ldx, T *y,
                               long long ldy, long long rows, long long cols, cudaStream_t stream)
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
        CUDA_CHECK(cudaLaunchKernelEx(&lc, k, xb, ldx, yb, ldy, (int)cols, (int)p->segment, mis));
        CUDA_CHECK_LAUNCH();
    }
}

void fx_run_cluster(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                    long long cols, cudaStream_t stream)
{
    /* the plan's kernel, opted in to its shared memory when the plan asked */
    fx_cluster_batches(fx_cluster_kernel(fx_plan_mode(p), fx_cluster_cfg_of(p)), p, x, ldx, y, ldy, rows, cols,
                       stream);
}

/* Lesson 9: 16-bit storage. mode16 (fx_mode16): 0 one element per
 * access, 1 16-byte vectors of 8 elements, 2 the same, peeled; the plan's
 * segments are then multiples of 8 elements. */
template <class T, int I>
static fx_cluster_fn_t<T> fx_cluster_kernel_t_at(int mode16)
{
    if (mode16 == 2) return fastest_cluster_kernel<8, true, FX_CL[I].fpt, FX_CL[I].block, false, T>;
    if (mode16 == 1) return fastest_cluster_kernel<8, false, FX_CL[I].fpt, FX_CL[I].block, false, T>;
    return fastest_cluster_kernel<1, false, FX_CL[I].fpt, FX_CL[I].block, false, T>;
}

template <class T>
static fx_cluster_fn_t<T> fx_cluster_kernel_t(int mode16, int cfg)
{
    switch (cfg) {
    case 0: return fx_cluster_kernel_t_at<T, 0>(mode16);
    case 1: return fx_cluster_kernel_t_at<T, 1>(mode16);
    case 2: return fx_cluster_kernel_t_at<T, 2>(mode16);
    case 3: return fx_cluster_kernel_t_at<T, 3>(mode16);
    case 4: return fx_cluster_kernel_t_at<T, 4>(mode16);
    default: return fx_cluster_kernel_t_at<T, 5>(mode16);
    }
}

/* As fx_cluster_shape, with the 16-bit kernels' own occupancy and
 * capacity (fx_cl_cap). */
int fx_cluster_shape_16(dtype t, int mode16, long long cols, int *cfg_out, int *c_out)
{
    static int cache[2][3][FX_NCL];
    static int filled = 0;
    if (!filled) {
        for (int i = 0; i < 2 * 3 * FX_NCL; i++) (&cache[0][0][0])[i] = -1;
        filled = 1;
    }
    for (int cfg = 0; cfg < FX_NCL; cfg++) {
        const long long cap = fx_cl_cap(cfg, 2), c = (cols + cap - 1) / cap; /* 16-bit elements per CTA */
        if (c > FX_CL[cfg].c) continue;
        int *slot = &cache[t == DTYPE_BF16][mode16][cfg];
        if (*slot < 0)
            *slot = t == DTYPE_BF16 ? fx_cluster_fit(fx_cluster_kernel_t<__nv_bfloat16>(mode16, cfg), cfg)
                                    : fx_cluster_fit(fx_cluster_kernel_t<__half>(mode16, cfg), cfg);
        if (*slot >= 1) {
            *cfg_out = cfg;
            *c_out = (int)(c < 1 ? 1 : c);
            return 1;
        }
    }
    *cfg_out = 0;
    *c_out = 1;
    return 0;
}

template <class T>
static void fx_run_cluster_t(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                             long long cols, cudaStream_t stream)
{
    /* the plan's kernel, as fx_run_cluster */
    fx_cluster_batches(fx_cluster_kernel_t<T>(fx_mode16(p), fx_cluster_cfg_of(p)), p, x, ldx, y, ldy, rows, cols,
                       stream);
}

void fx_run_cluster_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                       long long rows, long long cols, cudaStream_t stream)
{
    if (t == DTYPE_F16) fx_run_cluster_t(p, (const __half *)x, ldx, (__half *)y, ldy, rows, cols, stream);
    else fx_run_cluster_t(p, (const __nv_bfloat16 *)x, ldx, (__nv_bfloat16 *)y, ldy, rows, cols, stream);
}
