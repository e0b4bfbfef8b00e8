/* Taught in lesson 9 (lessons/09_half/README.md, "Rows held as loaded"),
 * a class of lesson 8's path 3 (path3_cluster.cu instantiates it). Path
 * 3's held class: a softmax row (or a float row of lesson 10's
 * classifier, rows_run.cuh) that fills at least 15/16 of C pieces of
 * 16384 16-bit elements (C = 2, 4, 8; whole 16-byte vectors) over a
 * cluster of C CTAs of 256 threads, each thread holding its 8 vectors of
 * the piece in registers exactly as loaded (lesson 9's 16-bit words, 32
 * registers), with no shared-memory part at all. Float rows take it with
 * 10, 12, 16 or 19 vectors a thread, and 16-bit rows past 8 pieces take
 * 8 or 16 of 10, 12 or 16 vectors (fastest_paths.h). A row whose x and y
 * share their offset from 16 bytes takes it by its body.
 *
 * Why a class of its own: a CTA of path 3b holds a 64 KB piece in shared
 * memory and reads it twice; this one asks for its 32 KB once, all of it
 * in flight from its first instructions, and holds 48 registers a thread,
 * so that five CTAs share an SM and cover each other's reductions,
 * exchange and stores. Each warp pushes its own state into every CTA of
 * the cluster (fx_cluster_exchange_warps: no block merge, no barrier on
 * the row's way). The cluster size is a template argument: read at run
 * time, the merge loop, the block index's division and the slots of the
 * largest cluster kept lesson 9 at 0.988 of path 3b's time at 1024 x
 * 65536, where with C fixed it runs at 0.950 (H200,
 * docs/experiments/rows-cluster-push.md). Its stores are one st.global.v4
 * a vector (vec16_store_global). */
#ifndef COMMON_DEVICE_PATH3_HELD_CUH
#define COMMON_DEVICE_PATH3_HELD_CUH
#include <limits.h>

#include "check.h"
#include "cluster_launch.h"
#include "fastest_device.cuh"
#include "fastest_paths.h" /* FX_HELD_* */
#include <cooperative_groups.h>

/* A thread's 16-byte vectors and a CTA's elements (its piece at most), by
 * T (fastest_paths.h); some rows take FX_HELD32_WIDE_ITEMS,
 * FX_HELD32_LONG_ITEMS or those of FX_HELD16_CLASSES (fx_held_shape_t). */
template <class T>
constexpr int fx_held_items = fx_is_float<T> ? FX_HELD32_ITEMS : FX_HELD_ITEMS;
template <class T, int ITEMS = fx_held_items<T>>
constexpr int fx_held_seg = FX_HELD_BLOCK * ITEMS * (16 / (int)sizeof(T));

/* The CTAs an SM at the registers the held vectors and 16 more take
 * (sm_90: 5 for 8 vectors, 48 registers, no spill). Older targets get an
 * empty body, and 1280 threads would not fit them. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define FX_HELD_MIN_CTAS(items) 1
#else
#define FX_HELD_MIN_CTAS(items) (65536 / (FX_HELD_BLOCK * ((4 * (items) + 16 + 7) / 8 * 8)))
#endif

/* The word past a row: -inf in each element. */
template <class T>
__device__ __forceinline__ unsigned fx_held_pad(const T *tag)
{
    if constexpr (fx_is_float<T>) return __float_as_uint(-INFINITY);
    else return vec16_narrow2(-INFINITY, -INFINITY, tag);
}

/* The largest of a thread's held elements (exact), as float. */
template <int ITEMS, class T>
__device__ __forceinline__ float fx_held_max(const unsigned (&w)[ITEMS][4], unsigned pad, const T *tag)
{
    if constexpr (fx_is_float<T>) {
        float m = __uint_as_float(pad);
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) m = fmaxf(m, __uint_as_float(w[i][j]));
        return m;
    } else return fx_words16_max(w, pad, tag);
}

/* The sum of exp(x - shift) over a thread's held elements; KEEP (float
 * rows, fx_held_keeps_exp): each element becomes its exp.
 * The held rows take exp as fx_exp<fx_ex2_type> (fastest_device.cuh),
 * whatever the storage type: ex2.approx.ftz of (x - shift) log2 e, two
 * instructions where expf takes about ten, with path 3b's error
 * (bulk_copy.cuh). A thread holds up to 76 floats, and their exps lie
 * between its loads and its stores: the classifier's float rows of 512 x
 * 151936 run in 0.927 of the time they take with expf (H200,
 * docs/experiments/rows-held-more-rows.md). */
template <bool KEEP, int ITEMS, class T>
__device__ __forceinline__ float fx_held_sum_exp(unsigned (&w)[ITEMS][4], float shift, const T *tag)
{
    if constexpr (fx_is_float<T>) {
        float d = 0.0f;
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const float e = fx_exp<fx_ex2_type>(__uint_as_float(w[i][j]) - shift);
                if constexpr (KEEP) w[i][j] = __float_as_uint(e);
                d += e;
            }
        return d;
    } else {
        static_assert(!KEEP, "16-bit words are held as loaded");
        return fx_words16_sum_exp(w, shift, tag);
    }
}

/* Float softmax rows keep exp(x - m_t) in place of x, m_t being their
 * thread's max, and take exp once per element: 512 x 151936 in 0.973 of
 * the time of taking it for the sum and again for the output (H200). Not
 * the classifier's kernels, which hold its row's context as well, nor
 * part-filled or peeled rows in 16 pieces of 12 or 16 vectors: those
 * spill with it. */
template <class OP, class T, bool PART, int ITEMS>
constexpr bool fx_held_keeps_exp =
    fx_is_float<T> && OP::KEEP_EXP && !OP::ROW &&
    !(PART && (ITEMS == FX_HELD32_LONG_ITEMS || ITEMS == FX_HELD32_MID_ITEMS));

/* One held vector's words w as OP's output (LIVE: out_live, rows_op.cuh),
 * into o: from the exp they hold where KEEP (fx_held_keeps_exp; f
 * rescaled to their thread's max), else of exp(x - shift). */
template <class OP, bool LIVE, bool KEEP, class T>
__device__ __forceinline__ void fx_held_out(const unsigned (&w)[4], float shift, typename OP::fin f,
                                            unsigned (&o)[4], const T *tag)
{
    if constexpr (KEEP) {
#pragma unroll
        for (int j = 0; j < 4; j++) o[j] = __float_as_uint(fx_out_as<OP, LIVE>(__uint_as_float(w[j]), f));
    } else if constexpr (fx_is_float<T>) {
#pragma unroll
        for (int j = 0; j < 4; j++)
            o[j] = __float_as_uint(fx_out_exp<OP, LIVE, fx_ex2_type>(__uint_as_float(w[j]) - shift, f));
    } else fx_words16_out<OP, LIVE>(w, shift, f, o, tag);
}

/* The way out: a thread's held vectors of its piece (yr: the piece), each
 * one st.global.v4 (vec16_store_global), those past nv vectors (PART) not
 * stored. A ROW operation's rows whose outputs are not all one value
 * store out_live's (fx_words16_store's branch). */
template <class OP, bool PART, bool LIVE = false, int ITEMS, class T>
__device__ __forceinline__ void fx_held_store(T *yr, int nv, const unsigned (&w)[ITEMS][4], float shift,
                                              typename OP::fin f)
{
    if constexpr (OP::ROW && !LIVE)
        if (!OP::same(f)) return fx_held_store<OP, PART, true>(yr, nv, w, shift, f);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * FX_HELD_BLOCK + (int)threadIdx.x;
        unsigned o[4];
        fx_held_out<OP, LIVE, fx_held_keeps_exp<OP, T, PART, ITEMS>>(w[i], shift, f, o, yr);
        if (!PART || k < nv) vec16_store_global(yr + (long long)k * (16 / (int)sizeof(T)), o);
    }
}

/* PART: the row fills its C pieces of seg elements (whole vectors) only in
 * part; a piece's last vectors are padded on the load and not stored.
 * PEEL (with PART): rows whose x and y start at the same offset from 16
 * bytes (lesson 5's cut, lesson 9's view16_row_cut; mis: x's base's
 * offset), the pieces cut from the body of whole vectors, the 0-6 (float)
 * or 0-14 head and tail elements one a thread of the first CTA. */
template <class OP, int C, bool PART, bool PEEL, int ITEMS, class T>
__global__ void __launch_bounds__(FX_HELD_BLOCK, FX_HELD_MIN_CTAS(ITEMS))
fastest_held_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, int cols, int seg,
                    int mis, OP op)
{
#if FX_CLUSTER_CODE
    constexpr int EPV = 16 / (int)sizeof(T), SEG = fx_held_seg<T, ITEMS>;
    const int rank = (int)cooperative_groups::this_cluster().block_rank();
    const long long row = (long long)blockIdx.x / C;
    const view_cut cut = fx_row_cut<EPV, PEEL>(row, ldx, mis, cols);
    const int nv = PART ? fx_piece_len((int)cut.nvec * EPV, rank, seg) / EPV : SEG / EPV; /* 16-byte vectors */
    fx_cluster_open();
    const long long at = cut.head + (long long)rank * (PART ? seg : SEG);
    const unsigned pad = fx_held_pad(x);
    const bool has_extra = PEEL && rank == 0 && (int)threadIdx.x < cut.nextra;
    fx_row_t<OP> rc{};
    if constexpr (OP::ROW) rc = op.begin(row, true);
    unsigned w[ITEMS][4];
    fx_words16_load<ITEMS, FX_HELD_BLOCK>(x + row * ldx + at, nv, pad, w, (int)threadIdx.x);
    const float e = has_extra ? view_extra_load(x + row * ldx, cut, (int)threadIdx.x) : -INFINITY;
    /* Thread 0's mbarrier.init before the other threads' waits, in an
     * order compute-sanitizer's racecheck sees (it does not count the
     * cluster barrier), while the loads are in flight. */
    __syncthreads();
    [[maybe_unused]] bool owner = false; /* ROW: this thread holds the row's column */
    if constexpr (OP::ROW) {
        owner = fx_row_piece_pick<PEEL>(op, &rc, x + row * ldx, at, at + (long long)nv * EPV, EPV, FX_HELD_BLOCK,
                                        (int)threadIdx.x, cut, rank == 0);
        __syncthreads(); /* thread 0's fx_row_last before the lead's */
    }
    const float mt = fmaxf(fx_held_max(w, pad, x), e);
    constexpr bool KEEP = fx_held_keeps_exp<OP, T, PART, ITEMS>;
    float dt = fx_held_sum_exp<KEEP>(w, online_md_shift(mt), x);
    if (has_extra) dt += fx_exp<fx_ex2_type>(e - online_md_shift(mt));
    const online_md r = fx_cluster_exchange_warps<C, FX_HELD_BLOCK / 32>({mt, dt}, C);
    const float shift = online_md_shift(r.m);
    const typename OP::fin f = fx_finish(op, r.m, r.d, rc);
    if constexpr (OP::ROW) fx_row_piece_lead(op, rc, f, owner, rank == 0);
    T *yr = y + row * ldy;
    typename OP::fin fw = f; /* kept exps: exp(m_t - m) turns them into exp(x - m), 0 where m_t = -inf */
    if constexpr (KEEP) fw = OP::rescale(f, expf(mt - shift));
    fx_held_store<OP, PART>(yr + at, nv, w, shift, fw);
    if (has_extra)
        elem_store(yr + fx_extra_at<T>(cut, (int)threadIdx.x), fx_out_exp<OP, false, fx_ex2_type>(e - shift, f));
    if constexpr (OP::ROW) {
        __shared__ float red[32];
        fx_row_piece_end(op, rc, f, yr, owner, red);
    }
#else
    (void)x, (void)ldx, (void)y, (void)ldy, (void)cols, (void)seg, (void)mis, (void)op;
#endif
}

template <class OP, class T>
using fx_held_fn_t = void (*)(const T *, long long, T *, long long, int, int, int, OP);

/* Kinds: 0 rows of whole pieces, 1 part-filled, 2 peeled. */
template <class OP, int C, class T, int ITEMS = fx_held_items<T>>
static fx_held_fn_t<OP, T> fx_held_kernel_c(int kind)
{
    if (kind == 2) return fastest_held_kernel<OP, C, true, true, ITEMS, T>;
    return kind == 1 ? fastest_held_kernel<OP, C, true, false, ITEMS, T>
                     : fastest_held_kernel<OP, C, false, false, ITEMS, T>;
}

/* items: a thread's vectors (fx_held_shape_t's; the wide float ones and
 * the 16-bit mid ones come in clusters of 8 only, the mid and long float
 * ones in 16). */
template <class OP, class T>
static fx_held_fn_t<OP, T> fx_held_kernel(int c, int kind, int items)
{
    if constexpr (fx_is_float<T>) {
        if (items == FX_HELD32_WIDE_ITEMS) return fx_held_kernel_c<OP, 8, float, FX_HELD32_WIDE_ITEMS>(kind);
        if (items == FX_HELD32_LONG_ITEMS) return fx_held_kernel_c<OP, 16, float, FX_HELD32_LONG_ITEMS>(kind);
        if (items == FX_HELD32_MID_ITEMS) return fx_held_kernel_c<OP, 16, float, FX_HELD32_MID_ITEMS>(kind);
        if (c == 16) return fx_held_kernel_c<OP, 16, float>(kind);
    } else if (items == FX_HELD16_WIDE_ITEMS) {
        return c == 8 ? fx_held_kernel_c<OP, 8, T, FX_HELD16_WIDE_ITEMS>(kind)
                      : fx_held_kernel_c<OP, 16, T, FX_HELD16_WIDE_ITEMS>(kind);
    } else if (items == FX_HELD16_TALL_ITEMS) {
        return c == 8 ? fx_held_kernel_c<OP, 8, T, FX_HELD16_TALL_ITEMS>(kind)
                      : fx_held_kernel_c<OP, 16, T, FX_HELD16_TALL_ITEMS>(kind);
    } else if (items == FX_HELD16_MID_ITEMS) {
        return fx_held_kernel_c<OP, 8, T, FX_HELD16_MID_ITEMS>(kind);
    }
    return c == 2   ? fx_held_kernel_c<OP, 2, T>(kind)
           : c == 4 ? fx_held_kernel_c<OP, 4, T>(kind)
                    : fx_held_kernel_c<OP, 8, T>(kind);
}

/* The kernel's kind for a row of cols in c pieces of seg elements. */
static inline int fx_held_kind(int peel, long long cols, long long c, long long seg)
{
    return peel ? 2 : cols != c * seg;
}

/* Whether clusters of c CTAs of the held kernel of this kind and items
 * run on this GPU (asked once per kernel; clusters of 16 are
 * non-portable). */
template <class OP, class T>
static int fx_held_fits(int c, int kind, int items)
{
    static_assert(FX_HELD32_WIDE_ITEMS >= FX_HELD32_LONG_ITEMS && FX_HELD32_WIDE_ITEMS >= FX_HELD32_ITEMS &&
                      FX_HELD32_WIDE_ITEMS >= FX_HELD_ITEMS && FX_HELD32_WIDE_ITEMS >= FX_HELD16_WIDE_ITEMS &&
                      FX_HELD32_WIDE_ITEMS >= FX_HELD16_MID_ITEMS && FX_HELD32_WIDE_ITEMS >= FX_HELD32_MID_ITEMS &&
                      FX_HELD32_WIDE_ITEMS >= FX_HELD16_TALL_ITEMS,
                  "the most vectors a thread");
    static int fits[FX_HELD32_WIDE_ITEMS + 1][3][FX_HELD_MAX_C + 1]; /* 0: not asked yet; the answer + 1 */
    int *f = &fits[items][kind][c];
    if (!*f) {
        const fx_held_fn_t<OP, T> k = fx_held_kernel<OP, T>(c, kind, items);
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(c * 64), FX_HELD_BLOCK, c, 0, 0, attr);
        int n = 0;
        if ((c > 8 && cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) ||
            cudaOccupancyMaxActiveClusters(&n, k, &lc) != cudaSuccess) {
            cudaGetLastError(); /* this GPU cannot: no other error is cleared */
            n = 0;
        }
        *f = 1 + (n >= 1);
    }
    return *f == 2;
}

/* Whether c pieces of seg elements hold cols, filled to fill sixteenths. */
static inline int fx_held_fills(long long cols, long long c, long long seg, int fill)
{
    return cols <= c * seg && cols * 16 >= c * seg * fill;
}

/* 1 and the class of 16-bit rows past 8 pieces of fx_held_seg: the first
 * of FX_HELD16_CLASSES ({pieces, vectors a thread, fill}) that holds
 * cols; 0 where none does. */
static inline int fx_held16_class(long long cols, int *c, int *items, int *fill)
{
    static const int K[][3] = FX_HELD16_CLASSES;
    for (int i = 0; i < (int)(sizeof K / sizeof K[0]); i++)
        if (fx_held_fills(cols, K[i][0], (long long)FX_HELD_BLOCK * K[i][1] * 8, K[i][2])) {
            *c = K[i][0], *items = K[i][1], *fill = K[i][2];
            return 1;
        }
    return 0;
}

/* 1, the cluster size, the piece and a thread's vectors where the class
 * takes rows of cols elements of T (a peeled row's body, peel: 1): the
 * fewest pieces of fx_held_seg<T> that hold the row, filled to at least
 * FX_HELD_FILL (float: FX_HELD32_FILL) sixteenths, in clusters that fit
 * this GPU. Float rows: where that is 16 pieces and 8 of
 * FX_HELD32_WIDE_ITEMS vectors hold the row as well, those (512 x 151936
 * in 0.976-0.978 of the time of 16, H200); past 16 pieces, 16 of
 * FX_HELD32_MID_ITEMS vectors where those are full enough (372 x 180224
 * in 0.857 of the time of the path they replace), else 16 of
 * FX_HELD32_LONG_ITEMS filled to FX_HELD32_LONG_FILL. 16-bit rows past
 * 8 pieces take the first class of FX_HELD16_CLASSES that holds them
 * (fx_held16_class). Peeled float rows: 512 x 151937 in 0.901 of path
 * 3b's time, 256 x 262145 in 0.924 of path 3's (H200). */
template <class OP, class T>
static int fx_held_shape_t(long long cols, int peel, int *c_out, long long *seg_out, int *items_out)
{
    constexpr long long SEG = fx_held_seg<T>, EPV = 16 / sizeof(T);
    int c = 2, items = fx_held_items<T>, fill = fx_is_float<T> ? FX_HELD32_FILL : FX_HELD_FILL;
    while (c < FX_HELD_MAX_C && c * SEG < cols) c *= 2;
    if (cols % EPV) return 0;
    if constexpr (fx_is_float<T>) {
        if (c == 16 && fx_held_fills(cols, 16, SEG, fill) &&
            fx_held_fills(cols, 8, fx_held_seg<T, FX_HELD32_WIDE_ITEMS>, fill))
            c = 8, items = FX_HELD32_WIDE_ITEMS;
        else if (cols > 16 * SEG && fx_held_fills(cols, 16, fx_held_seg<T, FX_HELD32_MID_ITEMS>, fill))
            items = FX_HELD32_MID_ITEMS;
        else if (cols > 16 * SEG)
            items = FX_HELD32_LONG_ITEMS, fill = FX_HELD32_LONG_FILL;
    } else if (c == 16 && !fx_held16_class(cols, &c, &items, &fill)) {
        return 0;
    }
    const long long seg = (long long)FX_HELD_BLOCK * items * EPV;
    if (!fx_held_fills(cols, c, seg, fill) || !fx_held_fits<OP, T>(c, fx_held_kind(peel, cols, c, seg), items))
        return 0;
    *c_out = c;
    *seg_out = ((cols + c - 1) / c + EPV - 1) / EPV * EPV;
    *items_out = items;
    return 1;
}

/* Runs plan p (path 3's held class) with operation OP: rows in batches of
 * at most 2^31 - 1 CTAs, as path 3's. */
template <class OP, class T>
static void fx_run_held_t(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                          long long cols, cudaStream_t stream, const OP &op = OP{})
{
    const int items = p->floats_per_thread * (int)sizeof(T) / 16; /* fx_held_plan's elements a thread */
    const int kind = fx_held_kind(p->peel, cols, p->cluster, (long long)FX_HELD_BLOCK * p->floats_per_thread);
    const fx_held_fn_t<OP, T> k = fx_held_kernel<OP, T>(p->cluster, kind, items);
    const long long batch_max = INT_MAX / p->cluster;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(n * p->cluster), FX_HELD_BLOCK, p->cluster, 0, stream,
                                                  attr);
        CUDA_CHECK(cudaLaunchKernelEx(&lc, k, x + r0 * ldx, ldx, y + r0 * ldy, ldy, (int)cols, (int)p->segment,
                                      fx_mis(x + r0 * ldx), fx_op_at(op, r0)));
        CUDA_CHECK_LAUNCH();
    }
}

#endif
