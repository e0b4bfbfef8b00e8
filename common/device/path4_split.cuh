/* Taught in lesson 8. Path 4 of the row engine (path4_split.cu says what
 * it is for), for any row operation (rows_op.cuh) and storage type: the
 * kernels and their launcher as templates, which path4_split.cu
 * instantiates for the softmax and lesson 10 for its operations. Kernel 1
 * is the same for every operation: it summarises each piece's (m, d). */
#ifndef COMMON_DEVICE_PATH4_SPLIT_CUH
#define COMMON_DEVICE_PATH4_SPLIT_CUH
#include <limits.h>
#include <math.h>

#include "check.h"
#include "cluster_launch.h"
#include "fastest_device.cuh"
#include "fastest_paths.h"

/* ---- path 4: a row split over many blocks (the online-softmax tutorial's block softmax) ------
 * Kernel 1: block b summarises piece b % splits of row b / splits,
 * FX_SPLIT_FPT floats per thread in flight, into work[b]. Kernel 2: every
 * block of a row merges the row's `splits` states (same threads, same
 * order, same tree: the same bits in every block), then reads its piece
 * again and writes operation OP's output (the softmax: exp(x - M) / D).
 * 2 reads + 1 write. Kernel 2 walks the pieces in reverse order: the
 * pieces kernel 1 read last are the likeliest still in L2. On sm_90
 * kernel 2 is a programmatic dependent launch: its blocks take the SMs
 * that kernel 1's last blocks leave, load their first vectors, and only
 * then wait for kernel 1 (fx_run_split_as).
 * A row's positions are 64-bit (one row may hold more than 2^31 floats);
 * a piece's, under 2^30, fit kernel 2's ints. */
/* Path 4 takes exp as ex2.approx for every storage type (fx_ex2_type),
 * as path 3b takes it and for the same reason: the arithmetic between a
 * thread's loads is part of each load's time. Float rows at M = 1 ... 4 run at
 * 63.4-63.6 % of copy against 62.5-63.0 % with expf, H200
 * (docs/experiments/rows-fast-exp.md). Its error is bulk_copy.cuh's: under
 * 7e-6 relative. */

/* 16-bit rows in 16-byte vectors stay in registers as loaded, so that a
 * thread has as many bytes in flight as for float rows (128) in 32
 * registers: widened to 64 floats they cost the kernels their occupancy,
 * and with 32 floats (64 bytes) in flight they took 1.13x the time at
 * M = 1 ... 4, H200 (docs/experiments/rows-bytes-in-flight.md). */
template <int VEC, class T>
inline constexpr bool fx_split_raw = !fx_is_float<T> && VEC == 8;

/* Vectors a thread has in flight in path 4's loops. */
template <int VEC, class T>
__host__ __device__ constexpr int fx_split_u()
{
    return fx_split_raw<VEC, T> ? 2 * FX_SPLIT_FPT / VEC : FX_SPLIT_FPT / VEC;
}

/* U vectors of 8 16-bit elements as words, from vector k0 on (BLOCK
 * apart); past nvec, two -inf a word (exp(-inf - m) = 0). */
template <int U, int BLOCK, class T>
__device__ __forceinline__ void fx_split_words_load(const T *xs, long long k0, long long nvec, unsigned (&w)[U][4])
{
    const unsigned pad = vec16_narrow2(-INFINITY, -INFINITY, xs);
#pragma unroll
    for (int u = 0; u < U; u++) {
        const long long k = k0 + (long long)u * BLOCK;
        if (k < nvec) {
            vec16_load_words<8>(xs + k * 8, w[u]);
        } else {
#pragma unroll
            for (int j = 0; j < 4; j++) w[u][j] = pad;
        }
    }
}

/* Stores vector u of w to p as OP's output of each element (rows_op_raw). */
template <class OP, bool PEEL, int U, class T>
__device__ __forceinline__ void fx_split_words_store(T *p, const unsigned (&w)[U][4], int u, float m,
                                                     typename OP::fin f)
{
    float o[8];
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const float2 v = vec16_widen2(w[u][j], p);
        o[2 * j] = rows_op_raw<OP, fx_ex2_type>(v.x, m, f);
        o[2 * j + 1] = rows_op_raw<OP, fx_ex2_type>(v.y, m, f);
    }
    if constexpr (PEEL) fx_store_peel<8>(p, o);
    else store_vec<8>(p, o);
}

template <int VEC, bool PEEL, int BLOCK, class T = float>
__global__ void __launch_bounds__(BLOCK)
fastest_split_state_kernel(const T *__restrict__ x, long long ldx, long long cols, long long splits,
                           long long seg, int mis, online_md *__restrict__ work)
{
    constexpr int U = fx_split_u<VEC, T>();
    __shared__ float red_m[32], red_d[32];
#if FX_CLUSTER_CODE
    /* Kernel 2 may start on the SMs this grid frees once every block of it
     * has begun; it reads work[] only after this grid has finished. */
    cudaTriggerProgrammaticLaunchCompletion();
#endif
    const long long b = blockIdx.x, row = b / splits, piece = b % splits, begin = piece * seg;
    const T *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, ldx, mis, cols); /* extras: piece 0's threads 0-5 */
    const long long blen = cut.nvec * VEC, len = blen - begin < seg ? blen - begin : seg;
    const long long nvec = len > 0 ? len / VEC : 0;
    const T *xs = xr + cut.head + begin;

    online_md s = online_md_identity();
    if constexpr (PEEL) {
        const float e = piece == 0 ? view_extra_load(xr, cut, threadIdx.x) : -INFINITY;
        s = fx_push<fx_ex2_type, 1>(s, &e);
    }
    for (long long k0 = threadIdx.x; k0 < nvec; k0 += (long long)U * BLOCK) {
        if constexpr (fx_split_raw<VEC, T>) {
            unsigned w[U][4];
            fx_split_words_load<U, BLOCK>(xs, k0, nvec, w);
            s = fx_push_words16(s, w, xs);
        } else {
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
            s = fx_push<fx_ex2_type, U * VEC>(s, v);
        }
    }
    s = online_md_row_merge<BLOCK>(s, red_m, red_d);
    if (threadIdx.x == 0) work[b] = s;
}

/* Where kernel 2 finds row r's states in `work`: count(splits) of them,
 * the i-th at row(work, r, splits)[i], merged in that order. Kernel 1's
 * (fx_split_rows: its pieces'), or another kernel's (lesson 11: the
 * ranks' states of its slice's rows, or each row's merged one). A struct
 * with member functions (C++) because the kernel is a template over it:
 * each such policy is inlined into its own instance. */
struct fx_split_rows {
    __device__ __forceinline__ long long count(long long splits) const { return splits; }
    __device__ __forceinline__ const online_md *row(const online_md *work, long long r, long long splits) const
    {
        return work + r * splits;
    }
};

/* Kernel 2's blocks an SM holds at least: two for 16-bit rows in 16-byte
 * vectors (64 registers at 512 threads, as the softmax's takes anyway);
 * the classifier's took 82 registers, one block an SM, 0.80x the
 * softmax's speed at M = 1 ... 4 (H200). Float and single-element rows:
 * 0, ptxas's own choice (a cap would spill). */
template <int VEC, class T>
__host__ __device__ constexpr int fx_split_write_blocks(int block)
{
    return !fx_is_float<T> && VEC > 1 ? 1024 / block : 0;
}

/* Kernel 2's loads: U vectors from vector k0 on (BLOCK apart), as words
 * (RAW) or widened; past nvec, left as they are (never stored). */
template <bool RAW, int VEC, int U, int BLOCK, class T>
__device__ __forceinline__ void fx_split_load(const T *xs, int k0, int nvec, float *v,
                                              unsigned (*w)[4])
{
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int k = k0 + u * BLOCK;
        if (k >= nvec) continue;
        if constexpr (RAW) vec16_load_words<8>(xs + k * 8, w[u]);
        else load_vec<VEC>(xs + k * VEC, &v[u * VEC]);
    }
}

template <class OP, int VEC, bool PEEL, int BLOCK, class T = float, class RS = fx_split_rows>
__global__ void __launch_bounds__(BLOCK, fx_split_write_blocks<VEC, T>(BLOCK))
fastest_split_write_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy,
                           long long cols, long long splits, long long seg, int mis,
                           const online_md *__restrict__ work, RS rs = RS{}, OP op = OP{})
{
    constexpr int U = fx_split_u<VEC, T>();
    constexpr bool RAW = fx_split_raw<VEC, T>;
    __shared__ float red_m[32], red_d[32];
    const long long b = (long long)gridDim.x - 1 - blockIdx.x; /* reverse: L2 reuse */
    /* An operation that writes no element needs one block per row */
    const long long row = OP::OUT ? b / splits : b, piece = OP::OUT ? b % splits : 0, begin = piece * seg;
    const T *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, ldx, mis, cols);
    const long long blen = cut.nvec * VEC;
    const long long len = !OP::OUT ? blen : blen - begin < seg ? blen - begin : seg;
    /* a piece holds under 2^30 elements (fx_split_shape); !OUT reads none */
    const int nvec = OP::OUT && len > 0 ? (int)(len / VEC) : 0;
    const T *xs = xr + cut.head + begin;

    fx_row_t<OP> r{};
    if constexpr (OP::ROW) r = op.begin(row, true);
    /* The first loads do not depend on kernel 1: they go out before the
     * wait for it (a programmatic dependent launch, sm_90). */
    float v[RAW ? 1 : U * VEC];
    unsigned w[RAW ? U : 1][4];
    int k0 = threadIdx.x;
    if constexpr (OP::OUT) fx_split_load<RAW, VEC, U, BLOCK>(xs, k0, nvec, v, w);
    /* ROW: this thread holds the row's column (no store: thread 0 of the body, or the extra's) */
    [[maybe_unused]] bool owner = false;
    if constexpr (OP::ROW) {
        const long long lo = cut.head + begin; /* the piece's first column */
        owner = fx_row_piece_pick<PEEL>(op, &r, xr, lo, lo + (len > 0 ? len : 0), VEC, OP::OUT ? BLOCK : 1,
                                        (int)threadIdx.x, cut, piece == 0);
    }
#if FX_CLUSTER_CODE
    cudaGridDependencySynchronize(); /* kernel 1 has finished and its work[] is visible */
#endif
    const auto wr = rs.row(work, row, splits);
    online_md s = online_md_identity();
    for (long long i = threadIdx.x; i < rs.count(splits); i += BLOCK) s = online_md_merge(s, wr[i]);
    s = online_md_row_merge<BLOCK>(s, red_m, red_d);
    const typename OP::fin f = fx_finish(op, s.m, s.d, r);
    if constexpr (OP::ROW) fx_row_piece_lead(op, r, f, owner, piece == 0); /* op.counts(): never here */
    if constexpr (!OP::OUT) return;

    T *yr = y + row * ldy;
    if constexpr (PEEL)
        if (piece == 0 && (int)threadIdx.x < cut.nextra) {
            const long long at = fx_extra_at<T>(cut, threadIdx.x);
            if constexpr (fx_is_float<T>) yr[at] = rows_op_raw<OP, fx_ex2_type>(xr[at], s.m, f);
            else elem_store(yr + at, rows_op_raw<OP, fx_ex2_type>(elem_load(xr + at), s.m, f));
        }
    T *ys = yr + cut.head + begin;
    for (;;) {
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int k = k0 + u * BLOCK;
            if (k >= nvec) continue;
            if constexpr (RAW) {
                fx_split_words_store<OP, PEEL>(ys + k * VEC, w, u, s.m, f);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    v[u * VEC + j] = rows_op_raw<OP, fx_ex2_type>(v[u * VEC + j], s.m, f);
                if constexpr (PEEL) fx_store_peel<VEC>(ys + k * VEC, &v[u * VEC]);
                else store_vec<VEC>(ys + k * VEC, &v[u * VEC]);
            }
        }
        k0 += U * BLOCK;
        if (k0 >= nvec) break;
        fx_split_load<RAW, VEC, U, BLOCK>(xs, k0, nvec, v, w);
    }
    if constexpr (OP::ROW) fx_row_piece_end(op, r, f, yr, owner, red_m);
}

/* ---- path 4 for an operation of two inputs (NIN = 2, float rows) -------
 * Kernel 1: each block's part of the row's sum of OP::term, in work[b].m.
 * Kernel 2: every block of a row adds the row's parts (the same sum in
 * each), then reads its piece of both inputs again and writes OP::out2:
 * 2 + 2 reads + 1 write. 16 floats of each input per thread in flight. */
/* Both kernels' loads: U vectors of each input from vector k0 on (BLOCK
 * apart); past nvec, 0 with FILL (it adds nothing to the sum), else left
 * as they are (never stored). */
template <int VEC, int U, int BLOCK, bool FILL>
__device__ __forceinline__ void fx_split2_load(const float *xs, const float *x2s, long long k0, long long nvec,
                                               float *u, float *w)
{
#pragma unroll
    for (int i = 0; i < U; i++) {
        const long long k = k0 + (long long)i * BLOCK;
        if (k < nvec) {
            load_vec<VEC>(xs + k * VEC, &u[i * VEC]);
            load_vec<VEC>(x2s + k * VEC, &w[i * VEC]);
        } else if constexpr (FILL) {
#pragma unroll
            for (int j = 0; j < VEC; j++) u[i * VEC + j] = w[i * VEC + j] = 0.0f;
        }
    }
}

template <class OP, int VEC, bool PEEL, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_split2_sum_kernel(const float *__restrict__ x, long long ldx, const float *__restrict__ x2, long long ldx2,
                          long long cols, long long splits, long long seg, int mis, online_md *__restrict__ work)
{
    constexpr int U = FX_SPLIT_FPT / 2 / VEC;
    __shared__ float red[32];
#if FX_CLUSTER_CODE
    cudaTriggerProgrammaticLaunchCompletion(); /* as fastest_split_state_kernel */
#endif
    const long long b = blockIdx.x, row = b / splits, piece = b % splits, begin = piece * seg;
    const float *xr = x + row * ldx, *x2r = x2 + row * ldx2;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, ldx, mis, cols);
    const long long blen = cut.nvec * VEC, len = blen - begin < seg ? blen - begin : seg;
    const long long nvec = len > 0 ? len / VEC : 0;
    const float *xs = xr + cut.head + begin, *x2s = x2r + cut.head + begin;
    float s = 0.0f;
    if (PEEL && piece == 0 && (int)threadIdx.x < cut.nextra)
        s = OP::term(view_extra_load(xr, cut, threadIdx.x), view_extra_load(x2r, cut, threadIdx.x));
    for (long long k0 = threadIdx.x; k0 < nvec; k0 += (long long)U * BLOCK) {
        float u[U * VEC], w[U * VEC];
        fx_split2_load<VEC, U, BLOCK, true>(xs, x2s, k0, nvec, u, w);
#pragma unroll
        for (int p = 0; p < U * VEC; p++) s += OP::term(u[p], w[p]);
    }
    s = row_reduce<BLOCK>(s, red, op_sum());
    if (threadIdx.x == 0) work[b] = online_md{s, 0.0f};
}

/* y may be x2 (lesson 10's dx = dy): a block writes only its own piece,
 * after reading it, and after kernel 1 has read everything. */
template <class OP, int VEC, bool PEEL, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_split2_write_kernel(const float *__restrict__ x, long long ldx, const float *x2, long long ldx2, float *y,
                            long long ldy, long long cols, long long splits, long long seg, int mis,
                            const online_md *__restrict__ work)
{
    constexpr int U = FX_SPLIT_FPT / 2 / VEC;
    __shared__ float red[32];
    const long long b = (long long)gridDim.x - 1 - blockIdx.x; /* reverse: L2 reuse */
    const long long row = b / splits, piece = b % splits, begin = piece * seg;
    const float *xr = x + row * ldx, *x2r = x2 + row * ldx2;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, ldx, mis, cols);
    const long long blen = cut.nvec * VEC, len = blen - begin < seg ? blen - begin : seg;
    const long long nvec = len > 0 ? len / VEC : 0;
    const float *xs = xr + cut.head + begin, *x2s = x2r + cut.head + begin;
#if FX_CLUSTER_CODE
    cudaGridDependencySynchronize(); /* kernel 1 has finished and its work[] is visible */
#endif
    const online_md *wr = work + row * splits;
    float q = 0.0f;
    for (long long i = threadIdx.x; i < splits; i += BLOCK) q += wr[i].m;
    const typename OP::fin f = OP::finish_sum(row_reduce<BLOCK>(q, red, op_sum()));
    float *yr = y + row * ldy;
    if (PEEL && piece == 0 && (int)threadIdx.x < cut.nextra) {
        const long long at = view_extra_at(cut, threadIdx.x);
        yr[at] = OP::out2(xr[at], x2r[at], f);
    }
    float *ys = yr + cut.head + begin;
    for (long long k0 = threadIdx.x; k0 < nvec; k0 += (long long)U * BLOCK) {
        float u[U * VEC], w[U * VEC];
        fx_split2_load<VEC, U, BLOCK, false>(xs, x2s, k0, nvec, u, w);
#pragma unroll
        for (int i = 0; i < U; i++) {
            const long long k = k0 + (long long)i * BLOCK;
            if (k < nvec) {
#pragma unroll
                for (int j = 0; j < VEC; j++) u[i * VEC + j] = OP::out2(u[i * VEC + j], w[i * VEC + j], f);
                if constexpr (PEEL) fx_store_peel<VEC>(ys + k * VEC, &u[i * VEC]);
                else store_vec<VEC>(ys + k * VEC, &u[i * VEC]);
            }
        }
    }
}

/* Kernel 2 as a programmatic dependent of kernel 1 where the GPU and the
 * build have it (sm_90: the same test as for clusters), else an ordinary
 * launch after it. Asked once per kernel, as the other paths ask their
 * occupancy: one kind of GPU per process. */
template <class K>
static cudaLaunchConfig_t fx_split_second(K k2, unsigned blocks, int block, cudaStream_t stream,
                                          cudaLaunchAttribute *attr)
{
    static int dependent = -1;
    if (dependent < 0) dependent = fx_can_launch_clusters((const void *)k2);
    return fx_dependent_config(blocks, block, stream, attr, dependent);
}

template <class OP, int VEC, bool PEEL, class T = float>
static void fx_run_split_as(const T *x, long long ldx, T *y, long long ldy, long long rows,
                            long long cols, long long splits, long long seg, cudaStream_t stream, fx_in2 in2,
                            const OP &op)
{
    /* Rows in batches so that one grid stays within 2^31 - 1 blocks. */
    const long long batch_max = INT_MAX / splits;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        online_md *work = fx_workspace(n * splits);
        const T *xb = x + r0 * ldx;
        T *yb = y + r0 * ldy;
        const unsigned blocks = (unsigned)(n * splits);
        cudaLaunchAttribute attr[1];
        if constexpr (OP::NIN == 2) {
            const float *x2b = in2.x2 + r0 * in2.ldx2;
            fastest_split2_sum_kernel<OP, VEC, PEEL, FX_SPLIT_BLOCK><<<blocks, FX_SPLIT_BLOCK, 0, stream>>>(
                xb, ldx, x2b, in2.ldx2, cols, splits, seg, fx_mis(xb), work);
            CUDA_CHECK_LAUNCH();
            void (*k2)(const float *, long long, const float *, long long, float *, long long, long long, long long,
                       long long, int, const online_md *) = fastest_split2_write_kernel<OP, VEC, PEEL, FX_SPLIT_BLOCK>;
            const cudaLaunchConfig_t lc = fx_split_second(k2, blocks, FX_SPLIT_BLOCK, stream, attr);
            CUDA_CHECK(cudaLaunchKernelEx(&lc, k2, xb, ldx, x2b, in2.ldx2, yb, ldy, cols, splits, seg, fx_mis(xb),
                                          (const online_md *)work));
        } else {
            (void)in2;
            /* a read pass: FX_READ_SEG says why; then a warp merges a row's states */
            constexpr int B1 = OP::OUT ? FX_SPLIT_BLOCK : FX_READ_BLOCK, B2 = OP::OUT ? FX_SPLIT_BLOCK : 32;
            void (*k1)(const T *, long long, long long, long long, long long, int, online_md *) =
                fastest_split_state_kernel<VEC, PEEL, B1, T>;
            void (*k2)(const T *, long long, T *, long long, long long, long long, long long, int, const online_md *,
                       fx_split_rows, OP) = fastest_split_write_kernel<OP, VEC, PEEL, B2, T>;
            k1<<<blocks, B1, 0, stream>>>(xb, ldx, cols, splits, seg, fx_mis(xb), work);
            CUDA_CHECK_LAUNCH();
            /* an operation that writes no element: a warp per row */
            const cudaLaunchConfig_t lc = fx_split_second(k2, OP::OUT ? blocks : (unsigned)n, B2, stream, attr);
            CUDA_CHECK(cudaLaunchKernelEx(&lc, k2, xb, ldx, yb, ldy, cols, splits, seg, fx_mis(xb),
                                          (const online_md *)work, fx_split_rows{}, fx_op_at(op, r0)));
        }
        CUDA_CHECK_LAUNCH();
    }
}

/* Path 4's kernels one at a time, for a lesson that merges the pieces'
 * states itself between them (lesson 11, across GPUs): float rows,
 * VEC = 4 where they start on 16 bytes and cols % 4 == 0, else 1; at
 * most INT_MAX blocks (rows x splits). Kernel 1: work[r * splits + p] =
 * the (m, d) of piece p of row r. */
template <int VEC>
static void fx_split_states(const float *x, long long ldx, long long rows, long long cols, long long splits,
                            long long seg, online_md *work, cudaStream_t stream)
{
    void (*k1)(const float *, long long, long long, long long, long long, int, online_md *) =
        fastest_split_state_kernel<VEC, false, FX_SPLIT_BLOCK>;
    k1<<<(unsigned)(rows * splits), FX_SPLIT_BLOCK, 0, stream>>>(x, ldx, cols, splits, seg, 0, work);
    CUDA_CHECK_LAUNCH();
}

/* Kernel 2: y = OP(x) from each row's state, found in work by rs (as
 * fx_split_rows). */
template <class OP, int VEC, class RS>
static void fx_split_write(const float *x, long long ldx, float *y, long long ldy, long long rows, long long cols,
                           long long splits, long long seg, const online_md *work, RS rs, cudaStream_t stream)
{
    void (*k2)(const float *, long long, float *, long long, long long, long long, long long, int, const online_md *,
               RS, OP) = fastest_split_write_kernel<OP, VEC, false, FX_SPLIT_BLOCK, float, RS>;
    k2<<<(unsigned)(rows * splits), FX_SPLIT_BLOCK, 0, stream>>>(x, ldx, y, ldy, cols, splits, seg, 0, work, rs,
                                                                 OP{});
    CUDA_CHECK_LAUNCH();
}

/* Runs plan p (path 4) with operation OP on rows of storage type T:
 * vectors of 16 bytes (4 floats or 8 16-bit elements) where the plan says
 * vec4, peeled where it says peel, single elements otherwise. The plan's
 * pieces are whole 64-element multiples: 16-byte aligned in an aligned row
 * of either width. */
template <class OP, class T>
static void fx_run_split_op(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                            long long cols, cudaStream_t stream, fx_in2 in2 = fx_in2{nullptr, 0},
                            const OP &op = OP{})
{
    constexpr int V = fx_is_float<T> ? 4 : 8;
    const long long n = p->splits, sg = p->segment;
    if (p->peel) fx_run_split_as<OP, V, true>(x, ldx, y, ldy, rows, cols, n, sg, stream, in2, op);
    else if (p->vec4) fx_run_split_as<OP, V, false>(x, ldx, y, ldy, rows, cols, n, sg, stream, in2, op);
    else fx_run_split_as<OP, 1, false>(x, ldx, y, ldy, rows, cols, n, sg, stream, in2, op);
}

#endif
