/* Taught in lesson 8. Path 3b of the row engine: path 3's cluster, one row
 * per cluster of C = 2 ... 8 CTAs (sm_90), with each CTA's whole piece in
 * shared memory, copied there by the Tensor Memory Accelerator instead of
 * by the threads (lessons/08_fastest/README.md, "Path 3b").
 *
 * In path 3 each thread loads its part of the piece, waits for it, folds it
 * into its (m, d) and only then loads more: the bytes in flight on an SM
 * are what its threads have asked for and not yet used. Here one thread
 * asks for the whole piece at once, as FX_BULK_CHUNKS bulk copies
 * (cp.async.bulk), each signalling an mbarrier when its bytes have landed;
 * the threads fold chunk k as soon as it is there while the copy engine
 * still moves the others. A 64 KB piece is in flight from the CTA's first
 * instruction, and the threads issue no load instructions at all: float16
 * rows of 2^16 run at 93.5 % of the copy against path 3's 82.1 % on the
 * H100 (docs/experiments/rows-bulk-path.md has float32 and the H200).
 *
 * A bulk copy moves multiples of 16 bytes between 16-byte aligned
 * addresses, so the pieces are whole 16-byte vectors. Aligned views cut
 * their rows into pieces as they are; peeled views (PEEL: each row of x
 * starts where the same row of y does, N of any length) cut the row's body
 * of whole vectors (lesson 5's view_cut) into pieces, and CTA 0's first
 * threads take the head and tail, at most 6 floats or 14 16-bit values,
 * one element each, as path 3 does: float32 rows of 50257 (GPT-2's
 * vocabulary) run at 93.9 % of copy against 88.3 % without bulk copies,
 * H100 (lessons/08_fastest/README.md, "Path 3b"). Views whose x and y rows
 * are misaligned against each other take path 3. Compiled for sm_90 and up
 * and for the CPU emulator, where the copy is a memcpy by the thread that
 * would have started it; older targets get an empty body, never launched.
 * The copies and the fold are bulk_copy.cuh's, shared with lesson 10. */
#include <limits.h>
#include <math.h>

#include "bulk_copy.cuh"
#include "check.h"
#include "cluster_launch.h"
#include "fastest_paths.h"
#include <cooperative_groups.h>

/* One row per cluster; CTA `rank` holds elements [rank x seg, ...) of the
 * row's body, at most seg, all in dynamic shared memory. VEC: elements per
 * 16-byte vector (4 floats, 8 16-bit values). mis: x's offset from 16
 * bytes in elements (PEEL only). */
template <int VEC, bool PEEL, class T>
__global__ void __launch_bounds__(FX_BULK_BLOCK)
fastest_bulk_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, int cols, int seg,
                    int mis)
{
#if FX_CLUSTER_CODE
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    /* 128-byte aligned: the copy engine writes shared memory in 128-byte
     * lines. At the 16-byte alignment float4 gives (304 bytes in, after the
     * static arrays) the L1 is busier: 105.6 us at 1024 x 65536 float16
     * against 94.6 us with the buffer 384 bytes in (H100, ncu). */
    extern __shared__ __align__(128) float4 fastest_bulk_smem[];
    T *srow = reinterpret_cast<T *>(fastest_bulk_smem);
    __shared__ unsigned long long landed[FX_BULK_CHUNKS];
    __shared__ float red_m[32], red_d[32];

    const int C = (int)cluster.num_blocks();
    const int rank = (int)cluster.block_rank();
    const long long row = (long long)blockIdx.x / C;
    const T *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, ldx, mis, cols);
    const int nvec = fx_piece_len((int)(cut.nvec * VEC), rank, seg) / VEC;
    const long long begin = cut.head + (long long)rank * seg;
    if (threadIdx.x == 0) fx_bulk_start<VEC>(landed, srow, xr + begin, nvec);
    __syncthreads(); /* the barriers are initialised before anyone waits on them */
    online_md s = fx_bulk_fold<VEC>(landed, srow, nvec);
    /* PEEL: CTA 0's first threads fold one head or tail element each. */
    const bool has_extra = PEEL && rank == 0 && (int)threadIdx.x < cut.nextra;
    float extra = -INFINITY;
    if (has_extra) {
        extra = elem_load(xr + fx_extra_at<T>(cut, threadIdx.x));
        s = fx_push<fx_bulk_exp_type, 1>(s, &extra);
    }
    const online_md r = fx_cluster_exchange(online_md_row_merge<FX_BULK_BLOCK>(s, red_m, red_d), C);

    /* The way out, as path 3's shared-memory part (fx_piece_write),
     * unrolled so that each thread has several loads from shared memory
     * in flight: 93.4 % of the copy at 1024 x 65536 float16 against 92.0 %
     * rolled, H100. */
    const float shift = online_md_shift(r.m), inv = 1.0f / r.d;
    T *yr = y + row * ldy;
    T *yb = yr + begin;
#pragma unroll 4
    for (int i = threadIdx.x; i < nvec; i += FX_BULK_BLOCK) {
        float w[VEC];
        load_vec<VEC>(srow + i * VEC, w);
#pragma unroll
        for (int j = 0; j < VEC; j++) w[j] = fx_exp<fx_bulk_exp_type>(w[j] - shift) * inv;
        if constexpr (PEEL) fx_store_peel<VEC>(yb + i * VEC, w);
        else store_vec<VEC>(yb + i * VEC, w);
    }
    if (has_extra) elem_store(yr + fx_extra_at<T>(cut, threadIdx.x), fx_exp<fx_bulk_exp_type>(extra - shift) * inv);
    cluster.barrier_wait(); /* nobody reads this CTA's state any more */
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

template <class T>
using fx_bulk_fn_t = void (*)(const T *, long long, T *, long long, int, int, int);

template <class T>
static fx_bulk_fn_t<T> fx_bulk_kernel(bool peel)
{
    constexpr int VEC = (int)(16 / sizeof(T));
    return peel ? fastest_bulk_kernel<VEC, true, T> : fastest_bulk_kernel<VEC, false, T>;
}

/* Path 3b's cluster for a row of cols elements of type T: c = the fewest
 * CTAs whose pieces of at most fx_bulk_max_piece bytes hold the row,
 * 2 <= c <= FX_BULK_MAX_C, and seg elements per CTA (whole 16-byte
 * vectors). 0 where no such cluster fits this GPU. Cached per element
 * size and c: the plan runs before every launch. */
template <class T>
static int fx_bulk_shape_t(long long cols, int *c_out, long long *seg_out)
{
    static long long piece = -1;
    static int fits[FX_BULK_MAX_C + 1]; /* 0: not asked yet; the answer + 1 */
    const fx_bulk_fn_t<T> k = fx_bulk_kernel<T>(false);
    if (piece < 0) {
        piece = fx_bulk_max_piece(k);
        /* The peeled kernel: the same shared memory, and the same fit
         * (its registers do not limit 3 CTAs of 256 threads an SM). */
        if (piece > 0)
            CUDA_CHECK(cudaFuncSetAttribute(fx_bulk_kernel<T>(true), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            (int)piece));
    }
    const long long bytes = cols * (long long)sizeof(T);
    const long long c = piece > 0 ? (bytes + piece - 1) / piece : 0;
    if (c < 2 || c > FX_BULK_MAX_C) return 0;
    const int vec = (int)(16 / sizeof(T));
    const long long seg = ((cols + c - 1) / c + vec - 1) / vec * vec;
    if (!fits[c]) fits[c] = 1 + (fx_bulk_clusters(k, (int)c, piece) >= 1);
    if (fits[c] != 2) return 0;
    *c_out = (int)c;
    *seg_out = seg;
    return 1;
}

void fx_bulk_plan(fastest_plan *p, int c, long long seg, int esize)
{
    p->block = p->threads_per_row = FX_BULK_BLOCK;
    p->cluster = c;
    p->segment = seg;
    p->smem_bytes = seg * esize; /* the whole piece, in the storage type */
}

int fx_bulk_shape(dtype t, long long cols, int *c_out, long long *seg_out)
{
    if (t == DTYPE_F16) return fx_bulk_shape_t<__half>(cols, c_out, seg_out);
    if (t == DTYPE_BF16) return fx_bulk_shape_t<__nv_bfloat16>(cols, c_out, seg_out);
    return fx_bulk_shape_t<float>(cols, c_out, seg_out);
}

/* Rows in batches so that one grid stays within 2^31 - 1 CTAs. */
template <class T>
static void fx_run_bulk_t(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                          long long cols, cudaStream_t stream)
{
    const long long batch_max = INT_MAX / p->cluster;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(n * p->cluster), p->block, p->cluster,
                                                  (size_t)p->smem_bytes, stream, attr);
        CUDA_CHECK(cudaLaunchKernelEx(&lc, fx_bulk_kernel<T>(p->peel), x + r0 * ldx, ldx, y + r0 * ldy, ldy,
                                      (int)cols, (int)p->segment, fx_mis(x + r0 * ldx)));
        CUDA_CHECK_LAUNCH();
    }
}

void fx_run_bulk(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                 long long rows, long long cols, cudaStream_t stream)
{
    if (t == DTYPE_F16) fx_run_bulk_t(p, (const __half *)x, ldx, (__half *)y, ldy, rows, cols, stream);
    else if (t == DTYPE_BF16)
        fx_run_bulk_t(p, (const __nv_bfloat16 *)x, ldx, (__nv_bfloat16 *)y, ldy, rows, cols, stream);
    else fx_run_bulk_t(p, (const float *)x, ldx, (float *)y, ldy, rows, cols, stream);
}
