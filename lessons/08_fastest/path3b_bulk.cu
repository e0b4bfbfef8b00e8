/* Lesson 8, path 3b: path 3's cluster, one row per cluster of C = 2 ... 8
 * CTAs (sm_90), with each CTA's whole piece in shared memory, copied there
 * by the Tensor Memory Accelerator instead of by the threads (README.md,
 * "Path 3b").
 *
 * In path 3 each thread loads its part of the piece, waits for it, folds it
 * into its (m, d) and only then loads more: the bytes in flight on an SM
 * are what its threads have asked for and not yet used. Here one thread
 * asks for the whole piece at once, as FX_BULK_CHUNKS bulk copies
 * (cp.async.bulk), each signalling an mbarrier when its bytes have landed;
 * the threads fold chunk k as soon as it is there while the copy engine
 * still moves the others. A 64 KB piece is in flight from the CTA's first
 * instruction, and the threads issue no load instructions at all.
 * Measured against path 3 (make bench, 2026-11-26, % of copy, M x N =
 * 2^26; H100, the H200 in brackets): float32 N = 2^16 94.1 -> 96.2
 * (83.5 -> 86.6), 2^17 92.2 -> 94.2 (80.0 -> 83.3); float16 2^16
 * 82.1 -> 93.5 (71.9 -> 81.3), 2^17 79.9 -> 89.8 (67.2 -> 76.4), 2^18
 * 83.2 -> 87.7 (70.8 -> 74.0).
 *
 * Only rows whose every piece is whole 16-byte vectors at 16-byte aligned
 * addresses (aligned views, N a multiple of 4 floats or 8 16-bit values):
 * a bulk copy moves multiples of 16 bytes between 16-byte aligned
 * addresses. Everything else takes path 3. Compiled for sm_90 and up and
 * for the CPU emulator, where the copy is a memcpy by the thread that
 * would have started it; older targets get an empty body, never launched. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "cluster_launch.h"
#include "fastest_device.cuh"
#include "fastest_paths.h"
#include <cooperative_groups.h>

#if FX_CLUSTER_CODE
/* The three steps of a bulk copy, in PTX (no C function exists for them in
 * CUDA 13 short of libcu++'s C++ barriers). An mbarrier is a 64-bit word
 * in shared memory that counts arrivals and bytes; its phase completes
 * when one thread has arrived (the count given at init) and the bytes it
 * announced (expect_tx) have been written by the copy. */
#if !defined(CUDA_EMU)
__device__ __forceinline__ unsigned fx_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}
#endif
/* Thread 0 only, before the block's __syncthreads(): n barriers, each
 * waiting for one arrival; the fence makes them visible to the copy
 * engine (the async proxy) and, after the barrier, to every thread. */
__device__ __forceinline__ void fx_bulk_init(unsigned long long *bar, int n)
{
#if defined(CUDA_EMU)
    (void)bar;
    (void)n;
#else
    for (int i = 0; i < n; i++)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(fx_smem_addr(bar + i)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
/* Copy `bytes` (a multiple of 16, both addresses 16-byte aligned) from
 * global memory to this CTA's shared memory; bar completes when they are
 * there. The emulator copies at once: the threads that wait on bar only
 * start after the __syncthreads() that follows. */
__device__ __forceinline__ void fx_bulk_copy(unsigned long long *bar, void *dst, const void *src, unsigned bytes)
{
#if defined(CUDA_EMU)
    (void)bar;
    memcpy(dst, src, bytes);
#else
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(fx_smem_addr(bar)), "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     fx_smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(fx_smem_addr(bar))
                 : "memory");
#endif
}
/* Every thread: wait until bar's first phase has completed (parity 0). */
__device__ __forceinline__ void fx_bulk_wait(unsigned long long *bar)
{
#if defined(CUDA_EMU)
    (void)bar;
#else
    asm volatile("{\n\t.reg .pred done;\n"
                 "WAIT:\n\t" /* a label local to the braces: each inlined copy has its own */
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n\t"
                 "@!done bra WAIT;\n}" ::"r"(fx_smem_addr(bar))
                 : "memory");
#endif
}
#endif

/* The exp of path 3b, whatever the storage type: the 16-bit rows'
 * fx_exp (fastest_device.cuh), ex2.approx.ftz of (x - m) log2 e, two
 * instructions where expf takes about ten. Here a CTA's copies start only
 * when the CTA before it on the SM is done, so the threads' arithmetic is
 * part of every piece's time: float32 with expf 95.3 and 93.0 % of the
 * copy at 1024 x 65536 and 512 x 131072, with this exp 96.2 and 94.0
 * (H100, 2026-11-26, two runs each, alternating). Its error,
 * |x - m| 2^-24 ln 2 + 2^-22, is under 7e-6 relative for every output
 * float can hold as a normal number (|x - m| < 104; measured: 1.0e-6
 * against expf's 7.5e-7 at 1024 x 65536); smaller outputs flush to 0,
 * inside the absolute tolerance (1e-30). */
typedef __half fx_bulk_exp_type;

/* One row per cluster; CTA `rank` holds elements [rank x seg, ...) of the
 * row, at most seg, all in dynamic shared memory. VEC: elements per
 * 16-byte vector (4 floats, 8 16-bit values). */
template <int VEC, class T>
__global__ void __launch_bounds__(FX_BULK_BLOCK)
fastest_bulk_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, int cols, int seg)
{
#if FX_CLUSTER_CODE
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    /* 128-byte aligned: the copy engine writes shared memory in 128-byte
     * lines. At the 16-byte alignment float4 gives (304 bytes in, after the
     * static arrays) this machine code took 105.6 us at 1024 x 65536
     * float16, against 94.6 us with its buffer 384 bytes in (H100 ncu,
     * 2026-11-26), its L1 busier. */
    extern __shared__ __align__(128) float4 fastest_bulk_smem[];
    T *srow = reinterpret_cast<T *>(fastest_bulk_smem);
    __shared__ unsigned long long landed[FX_BULK_CHUNKS];
    __shared__ float red_m[32], red_d[32];

    const int C = (int)cluster.num_blocks();
    const int rank = (int)cluster.block_rank();
    const long long row = (long long)blockIdx.x / C;
    const int nvec = fx_piece_len(cols, rank, seg) / VEC;
    const int per = (nvec + FX_BULK_CHUNKS - 1) / FX_BULK_CHUNKS; /* vectors per chunk */
    const long long begin = (long long)rank * seg;
    if (threadIdx.x == 0) {
        fx_bulk_init(landed, FX_BULK_CHUNKS);
        for (int k = 0; k < FX_BULK_CHUNKS && k * per < nvec; k++) {
            const int n = nvec - k * per < per ? nvec - k * per : per;
            fx_bulk_copy(&landed[k], srow + k * per * VEC, x + row * ldx + begin + k * per * VEC, (unsigned)n * 16);
        }
    }
    __syncthreads(); /* the barriers are initialised before anyone waits on them */

    /* Fold each chunk as it lands: 16 elements a step, as path 3's
     * stream, then the chunk's last 0 ... U - 1 vectors of this thread one
     * at a time. (Padding the last step with -inf instead put 16 moves and
     * two branches into every step of the sm_90 code.) */
    typedef fx_bulk_exp_type E;
    constexpr int U = 16 / VEC;
    online_md s = online_md_identity();
    for (int k = 0; k < FX_BULK_CHUNKS && k * per < nvec; k++) {
        const int end = (k + 1) * per < nvec ? (k + 1) * per : nvec;
        fx_bulk_wait(&landed[k]);
        int i = k * per + (int)threadIdx.x;
        for (; i + (U - 1) * FX_BULK_BLOCK < end; i += U * FX_BULK_BLOCK) {
            float w[U * VEC];
#pragma unroll
            for (int u = 0; u < U; u++) load_vec<VEC>(srow + (i + u * FX_BULK_BLOCK) * VEC, &w[u * VEC]);
            s = fx_push<E, U * VEC>(s, w);
        }
        for (; i < end; i += FX_BULK_BLOCK) {
            float w[VEC];
            load_vec<VEC>(srow + i * VEC, w);
            s = fx_push<E, VEC>(s, w);
        }
    }
    const online_md r = fx_cluster_exchange(online_md_row_merge<FX_BULK_BLOCK>(s, red_m, red_d), C);

    /* The way out, as path 3's shared-memory part (fx_piece_write),
     * unrolled so that each thread has several loads from shared memory
     * in flight: float16 at 1024 x 65536, 92.0 -> 93.4 % of the copy
     * (H100, 2026-11-26, two runs of the kernel in a standalone program). */
    const float shift = online_md_shift(r.m), inv = 1.0f / r.d;
    T *yr = y + row * ldy + begin;
#pragma unroll 4
    for (int i = threadIdx.x; i < nvec; i += FX_BULK_BLOCK) {
        float w[VEC];
        load_vec<VEC>(srow + i * VEC, w);
#pragma unroll
        for (int j = 0; j < VEC; j++) w[j] = fx_exp<E>(w[j] - shift) * inv;
        store_vec<VEC>(yr + i * VEC, w);
    }
    cluster.barrier_wait(); /* nobody reads this CTA's state any more */
#else
    (void)x;
    (void)ldx;
    (void)y;
    (void)ldy;
    (void)cols;
    (void)seg;
#endif
}

template <class T>
using fx_bulk_fn_t = void (*)(const T *, long long, T *, long long, int, int);

template <class T>
static fx_bulk_fn_t<T> fx_bulk_kernel(void)
{
    return fastest_bulk_kernel<(int)(16 / sizeof(T)), T>;
}

/* The largest piece, in bytes, of which FX_BULK_PER_SM CTAs fit on one
 * SM, as the occupancy calculator counts this kernel's shared memory (its
 * own arrays and what the GPU reserves per CTA included), rounded down to
 * a power of two so that rows of 2^k elements split into whole pieces:
 * 64 KB on an H100 and an H200 (74 KB would fit their 228 KB per SM).
 * 0 where even 1 KB pieces do not fit so. Opts kernel k in to it. */
template <class T>
static long long fx_bulk_max_piece(fx_bulk_fn_t<T> k)
{
    int dev = 0, per_sm = 0, optin = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    long long kb = (per_sm / FX_BULK_PER_SM < optin ? per_sm / FX_BULK_PER_SM : optin) / 1024;
    for (; kb >= 1; kb--) {
        int n = 0;
        if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(kb * 1024)) != cudaSuccess ||
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, FX_BULK_BLOCK, (size_t)(kb * 1024)) != cudaSuccess) {
            cudaGetLastError();
            return 0;
        }
        if (n >= FX_BULK_PER_SM) break;
    }
    if (kb < 1) return 0;
    long long piece = 1024;
    while (2 * piece <= kb * 1024) piece *= 2;
    if (cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)piece) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return piece;
}

/* Clusters of c CTAs (c <= 8, a portable size) of kernel k with `smem`
 * bytes each that fit on the GPU at once (0: none). */
template <class T>
static int fx_bulk_clusters(fx_bulk_fn_t<T> k, int c, long long smem)
{
    static_assert(FX_BULK_MAX_C <= 8, "clusters above 8 CTAs need cudaFuncAttributeNonPortableClusterSizeAllowed");
    cudaLaunchAttribute attr[1];
    cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(c * 64), FX_BULK_BLOCK, c, (size_t)smem, 0, attr);
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, k, &lc) != cudaSuccess) {
        cudaGetLastError();
        n = 0;
    }
    return n;
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
    const fx_bulk_fn_t<T> k = fx_bulk_kernel<T>();
    if (piece < 0) piece = fx_bulk_max_piece<T>(k);
    const long long bytes = cols * (long long)sizeof(T);
    const long long c = piece > 0 ? (bytes + piece - 1) / piece : 0;
    if (c < 2 || c > FX_BULK_MAX_C) return 0;
    const int vec = (int)(16 / sizeof(T));
    const long long seg = ((cols + c - 1) / c + vec - 1) / vec * vec;
    if (!fits[c]) fits[c] = 1 + (fx_bulk_clusters<T>(k, (int)c, piece) >= 1);
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
        CUDA_CHECK(cudaLaunchKernelEx(&lc, fx_bulk_kernel<T>(), x + r0 * ldx, ldx, y + r0 * ldy, ldy, (int)cols,
                                      (int)p->segment));
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
