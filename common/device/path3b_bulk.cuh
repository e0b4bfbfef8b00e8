/* Taught in lesson 8. Path 3b of the row engine (path3b_bulk.cu says how
 * it works) for any operation that keeps exp(x - m) (rows_op.cuh,
 * KEEP_EXP) and reads one input: the kernel, its fit and its launcher as
 * templates, which path3b_bulk.cu instantiates for the softmax and lesson
 * 10 for its classifier over 16-bit logits. */
#ifndef COMMON_DEVICE_PATH3B_BULK_CUH
#define COMMON_DEVICE_PATH3B_BULK_CUH
#include <math.h>

#include "bulk_copy.cuh"
#include "check.h"
#include "cluster_launch.h"
#include "fastest_paths.h"
#include "path3_cluster.cuh" /* fx_cluster_batches */
#include "path3g_grid.cuh"   /* fx_grid_exchange, fx_grid_batches */
#include <cooperative_groups.h>

/* One row per cluster of C <= FX_BULK_MAX_C CTAs, or (GRID) per P CTAs
 * meeting through global memory as path 3g's do (fx_grid_exchange: a
 * ticket gives each CTA its piece, all of a row's P must be resident);
 * CTA `rank` holds elements [rank x seg, ...) of the row's body, at most
 * seg, all in dynamic shared memory. VEC: elements per 16-byte vector (4
 * floats, 8 16-bit values). mis: x's offset from 16 bytes in elements
 * (PEEL only). A ROW operation's column is picked from the piece in
 * shared memory, so no thread waits on global memory for it; its lead
 * writes the row's value and counts in before its CTA's stores, so that
 * the fence waits for that alone (paths 3 and 3g do the same). */
#if FX_CLUSTER_CODE
/* The way out, as path 3's shared-memory part (fx_piece_write), unrolled
 * so that each thread has several loads from shared memory in flight:
 * 93.4 % of the copy at 1024 x 65536 float16 against 92.0 % rolled, H100. */
template <class OP, int VEC, bool PEEL, bool LIVE = false, class T>
__device__ __forceinline__ void fx_bulk_write(const T *srow, T *yb, int nvec, float shift, typename OP::fin f)
{
    if constexpr (OP::ROW && !LIVE)
        if (!OP::same(f)) return fx_bulk_write<OP, VEC, PEEL, true>(srow, yb, nvec, shift, f);
#pragma unroll 4
    for (int i = threadIdx.x; i < nvec; i += FX_BULK_BLOCK) {
        float w[VEC];
        load_vec<VEC>(srow + i * VEC, w);
#pragma unroll
        for (int j = 0; j < VEC; j++) w[j] = fx_out_exp<OP, LIVE, fx_ex2_type>(w[j] - shift, f);
        if constexpr (PEEL) fx_store_peel<VEC>(yb + i * VEC, w);
        else store_vec<VEC>(yb + i * VEC, w);
    }
}

template <class OP, int VEC, bool PEEL, bool GRID, class T>
__device__ __forceinline__ void fx_bulk_row(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy,
                                            int cols, int pieces, int seg, int mis, unsigned *sync, online_md *work,
                                            OP op)
{
    static_assert(OP::NIN == 1 && OP::KEEP_EXP, "out(exp(x - m), f) from the piece");
    namespace cg = cooperative_groups;
    /* 128-byte aligned: the copy engine writes shared memory in 128-byte
     * lines. At the 16-byte alignment float4 gives (304 bytes in, after the
     * static arrays) the L1 is busier: 105.6 us at 1024 x 65536 float16
     * against 94.6 us with the buffer 384 bytes in (H100, ncu). */
    extern __shared__ __align__(128) float4 fastest_bulk_smem[];
    T *srow = reinterpret_cast<T *>(fastest_bulk_smem);
    __shared__ unsigned long long landed[FX_BULK_CHUNKS];
    __shared__ float red_m[32], red_d[32];
    __shared__ unsigned ticket; /* GRID: drawn before anything else, so that the CTA's piece is known */
    if constexpr (GRID) {
        if (threadIdx.x == 0) fx_grid_ticket(&sync[0], &ticket);
        __syncthreads();
    } else {
        fx_cluster_open();
    }
    const int C = GRID ? pieces : (int)cg::this_cluster().num_blocks();
    const int rank = GRID ? (int)(ticket % (unsigned)C) : (int)cg::this_cluster().block_rank();
    const long long row = GRID ? (long long)(ticket / (unsigned)C) : (long long)blockIdx.x / C;
    const T *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, ldx, mis, cols);
    const int nvec = fx_piece_len((int)(cut.nvec * VEC), rank, seg) / VEC;
    const long long begin = cut.head + (long long)rank * seg;
    if (threadIdx.x == 0) fx_bulk_start<VEC>(landed, srow, xr + begin, nvec);
    /* PEEL: CTA 0's first threads fold one head or tail element each.
     * Its load goes out before the fold waits for the piece, so that its
     * trip to memory overlaps the bulk copies instead of delaying CTA 0's
     * state, for which every CTA of the row waits. */
    const bool has_extra = PEEL && rank == 0 && (int)threadIdx.x < cut.nextra;
    float extra = -INFINITY;
    if (has_extra) extra = elem_load(xr + fx_extra_at<T>(cut, threadIdx.x));
    fx_row_t<OP> rc{};
    if constexpr (OP::ROW) rc = op.begin(row, true);
    __syncthreads(); /* the barriers are initialised before anyone waits on them */
    online_md s = fx_bulk_fold<VEC>(landed, srow, nvec);
    if (has_extra) s = fx_push<fx_ex2_type, 1>(s, &extra);
    /* ROW: this thread stores the vector that holds column c, or (PEEL) the extra that is c */
    [[maybe_unused]] bool owner = false;
    if constexpr (OP::ROW) {
        const long long c = op.col(rc), end = begin + (long long)nvec * VEC;
        const bool mine = fx_row_owner(c, begin, end, VEC, FX_BULK_BLOCK, (int)threadIdx.x);
        if constexpr (PEEL)
            owner = fx_row_owner_cut(c, cut, VEC, begin, end, FX_BULK_BLOCK, (int)threadIdx.x, rank == 0);
        else owner = mine;
        /* every chunk has landed: the fold waited; an extra's owner holds it */
        if (owner) op.pick(&rc, mine ? elem_load(srow + (c - begin)) : extra);
        if (threadIdx.x == 0) *fx_row_last() = false; /* the merge's barriers come before the lead */
    }
    [[maybe_unused]] unsigned before = 0; /* GRID: for fx_grid_leave */
    online_md r;
    if constexpr (GRID) {
        const online_md b = online_md_row_merge<FX_BULK_BLOCK>(s, red_m, red_d);
        r = fx_grid_exchange<FX_BULK_BLOCK>(b, work + row * C, rank, C, &sync[1 + row], red_m, red_d, &before);
    } else if constexpr (!OP::ROW) { /* a ROW operation's lead needs the block merge's barriers (fx_row_last, above) */
        r = fx_cluster_exchange_warps<FX_BULK_MAX_C, FX_BULK_BLOCK / 32>(s, C);
    } else {
        r = fx_cluster_exchange(online_md_row_merge<FX_BULK_BLOCK>(s, red_m, red_d), C);
    }
    const float shift = online_md_shift(r.m);
    const typename OP::fin f = fx_finish(op, r.m, r.d, rc);
    if constexpr (OP::ROW) fx_row_piece_lead(op, rc, f, owner, rank == 0);

    T *yr = y + row * ldy;
    if constexpr (OP::OUT) fx_bulk_write<OP, VEC, PEEL>(srow, yr + begin, nvec, shift, f);
    if (OP::OUT && has_extra)
        elem_store(yr + fx_extra_at<T>(cut, threadIdx.x), fx_out_exp<OP, false, fx_ex2_type>(extra - shift, f));
    if constexpr (OP::ROW) fx_row_piece_end(op, rc, f, yr, owner, red_m);
    if constexpr (GRID)
        if (threadIdx.x == 0) fx_grid_leave(&sync[1 + row], before, (unsigned)C);
}
#endif

/* The kernel in clusters (path 3's arguments, fx_cluster_batches) ... */
template <class OP, int VEC, bool PEEL, class T>
__global__ void __launch_bounds__(FX_BULK_BLOCK)
fastest_bulk_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, int cols, int seg,
                    int mis, OP op)
{
#if FX_CLUSTER_CODE
    fx_bulk_row<OP, VEC, PEEL, false>(x, ldx, y, ldy, cols, 1, seg, mis, nullptr, nullptr, op);
#else
    (void)x, (void)ldx, (void)y, (void)ldy, (void)cols, (void)seg, (void)mis, (void)op;
#endif
}

/* ... and past a cluster's size (path 3g's arguments, fx_grid_batches). */
template <class OP, int VEC, bool PEEL, class T>
__global__ void __launch_bounds__(FX_BULK_BLOCK)
fastest_bulk_grid_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, int cols,
                         int pieces, int seg, int mis, unsigned *sync, online_md *work, OP op)
{
#if FX_CLUSTER_CODE
    fx_bulk_row<OP, VEC, PEEL, true>(x, ldx, y, ldy, cols, pieces, seg, mis, sync, work, op);
#else
    (void)x, (void)ldx, (void)y, (void)ldy, (void)cols, (void)pieces, (void)seg, (void)mis, (void)sync, (void)work;
    (void)op;
#endif
}

template <class OP, class T>
using fx_bulk_fn_t = void (*)(const T *, long long, T *, long long, int, int, int, OP);

template <class OP, class T>
static fx_bulk_fn_t<OP, T> fx_bulk_kernel_op(bool peel)
{
    constexpr int VEC = (int)(16 / sizeof(T));
    return peel ? fastest_bulk_kernel<OP, VEC, true, T> : fastest_bulk_kernel<OP, VEC, false, T>;
}

template <class OP, class T>
static fx_grid_fn_t<OP, T> fx_bulk_grid_kernel_op(bool peel)
{
    constexpr int VEC = (int)(16 / sizeof(T));
    return peel ? fastest_bulk_grid_kernel<OP, VEC, true, T> : fastest_bulk_grid_kernel<OP, VEC, false, T>;
}

/* How many CTAs of kernel k with pieces of `piece` bytes the GPU holds at
 * once (its occupancy; fx_bulk_max_piece opted it in), 0 where that piece
 * does not fit it. */
template <class K>
static long long fx_bulk_resident(K k, long long piece)
{
    int n = 0;
    if (fx_bulk_max_piece(k) < piece) return 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, FX_BULK_BLOCK, (size_t)piece));
    return (long long)n * fx_sms();
}

/* The elements of each of n CTAs of a row of cols: whole 16-byte vectors
 * of vec elements. */
static inline long long fx_bulk_seg(long long cols, long long n, int vec)
{
    return ((cols + n - 1) / n + vec - 1) / vec * vec;
}

/* Of c ... min(2c, FX_BULK_MAX_C) CTAs a row of cols elements (c the
 * fewest that hold it), the count whose clusters hold the most rows on the
 * GPU at once, as the occupancy calculator counts them (a cluster's CTAs
 * share one GPC, so five CTAs at three an SM leave slots idle), where that
 * is at least a sixth more rows than c's: smaller CTAs cost their own
 * starts and syncs. On the H200, 1024 x 73728 floats in 8 CTAs rather
 * than 5 (92 rows at once against 69) ran at 0.94 of the time
 * (docs/experiments/rows-cluster-classes.md). Cached for the last
 * length: the plan runs before every launch. */
template <class K>
static int fx_bulk_most_rows(K k, long long cols, int c, int vec, int esize)
{
    static long long last_cols = -1;
    static int last_n = 0;
    if (cols == last_cols) return last_n;
    long long rows[FX_BULK_MAX_C] = {0};
    int n = c;
    for (; n <= 2 * c && n <= FX_BULK_MAX_C; n++)
        rows[n - c] = fx_bulk_clusters(k, n, fx_bulk_seg(cols, n, vec) * esize);
    last_cols = cols;
    last_n = c + fx_bulk_pick(rows, n - c);
    return last_n;
}

/* Path 3b's CTAs for a row of cols elements of type T: c = the fewest
 * CTAs whose pieces of at most fx_bulk_max_piece bytes hold the row (in a
 * cluster, more where fx_bulk_most_rows says), and seg elements per CTA
 * (whole 16-byte vectors). Clusters of 2 ...
 * FX_BULK_MAX_C CTAs; past that, for 16-bit rows, CTAs meeting through
 * global memory (fastest_bulk_grid_kernel), as many as the GPU holds at
 * once. 0 where neither fits this GPU. Cached per element size and c: the
 * plan runs before every launch. Float rows past a cluster keep paths 3
 * and 3g: their threads' loads keep up with DRAM (a float byte carries
 * half the elements to fold), and bulk-loaded pieces lost 3-6 points of
 * the copy there (docs/experiments/lessons-half-long-rows.md). */
template <class OP, class T>
static int fx_bulk_shape_op(long long cols, int *c_out, long long *seg_out)
{
    static long long piece = -1, resident = -1;
    static int fits[FX_BULK_MAX_C + 1]; /* 0: not asked yet; the answer + 1 */
    const fx_bulk_fn_t<OP, T> k = fx_bulk_kernel_op<OP, T>(false);
    if (piece < 0) {
        piece = fx_bulk_max_piece(k);
        /* The peeled kernels: the same shared memory, and the same fit
         * (their registers do not limit 3 CTAs of 256 threads an SM). */
        if (piece > 0) {
            CUDA_CHECK(cudaFuncSetAttribute(fx_bulk_kernel_op<OP, T>(true),
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, (int)piece));
            resident = 0;
            if constexpr (!fx_is_float<T>) {
                resident = fx_bulk_resident(fx_bulk_grid_kernel_op<OP, T>(false), piece);
                if (resident > 0)
                    CUDA_CHECK(cudaFuncSetAttribute(fx_bulk_grid_kernel_op<OP, T>(true),
                                                    cudaFuncAttributeMaxDynamicSharedMemorySize, (int)piece));
            }
        }
    }
    const long long bytes = cols * (long long)sizeof(T);
    long long c = piece > 0 ? (bytes + piece - 1) / piece : 0;
    if (c < 2 || (c > FX_BULK_MAX_C && c > resident)) return 0;
    const int vec = (int)(16 / sizeof(T));
    if (c <= FX_BULK_MAX_C) {
        if (!fits[c]) fits[c] = 1 + (fx_bulk_clusters(k, (int)c, piece) >= 1);
        if (fits[c] != 2) return 0;
        c = fx_bulk_most_rows(k, cols, (int)c, vec, (int)sizeof(T));
    }
    *c_out = (int)c;
    *seg_out = fx_bulk_seg(cols, c, vec);
    return 1;
}

/* Runs plan p (path 3b) with operation OP: in clusters, path 3's batches
 * (fx_cluster_batches); past them, path 3g's (fx_grid_batches), whose
 * kernels take the same arguments. */
template <class OP, class T>
static void fx_run_bulk_op(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                           long long cols, cudaStream_t stream, const OP &op = OP{})
{
    if constexpr (!fx_is_float<T>) {
        if (p->splits) {
            fx_grid_batches<OP, T>(fx_bulk_grid_kernel_op<OP, T>(p->peel), false, p->smem_bytes, x, ldx, y, ldy, rows,
                                   cols, p->splits, p->segment, stream, op);
            return;
        }
    }
    fx_cluster_batches<OP, T>(fx_bulk_kernel_op<OP, T>(p->peel), p, x, ldx, y, ldy, rows, cols, stream, op);
}

#endif
