/* Taught in lesson 8. A CTA's piece of a row loaded into shared memory by
 * the Tensor Memory Accelerator (bulk copies, sm_90), and folded into the
 * CTA's (m, d) as it lands. Path 3b (path3b_bulk.cu) is built from it, and
 * lesson 10's fused classifier includes it for its long rows.
 *
 * Thread 0 asks for the whole piece at once, as FX_BULK_CHUNKS bulk
 * copies (cp.async.bulk), each completing its own mbarrier when its bytes
 * have landed; every thread folds chunk k as soon as it is there, while
 * the copy engine still moves the others. The threads issue no load
 * instructions from global memory at all. Bulk copies move multiples of
 * 16 bytes between 16-byte aligned addresses: pieces of whole 16-byte
 * vectors of aligned rows only.
 *
 * Compiled for sm_90 and up and for the CPU emulator (FX_CLUSTER_CODE),
 * where the copy is a memcpy by the thread that would have started it. */
#ifndef COMMON_DEVICE_BULK_COPY_CUH
#define COMMON_DEVICE_BULK_COPY_CUH
#include <string.h>

#include "check.h"
#include "cluster_launch.h"
#include "fastest_device.cuh"
#include "fastest_paths.h" /* FX_BULK_MAX_C */
#include "mbarrier.cuh"

/* CTAs of 256 threads holding a piece of at most the shared memory that
 * lets FX_BULK_PER_SM of them share an SM (64 KB on the H100 and the
 * H200), loaded in FX_BULK_CHUNKS bulk copies. Picked from a sweep of
 * piece size, threads and chunks on both GPUs, float16 and float32
 * (docs/experiments/rows-bulk-path.md): 3 CTAs per SM keep DRAM busy
 * through each other's waits, where 128 KB pieces (1 per SM) are 3 to 9
 * points of the copy slower; 32 KB pieces, 512 threads or 16 chunks are
 * slower too.
 * Clusters of at most 8 CTAs (portable sizes): in clusters of 16,
 * compute-sanitizer's synccheck reports "Missing wait" on the first
 * barrier of CTAs of rank 8 and 9, which clusters of 8 never do, and which
 * we have not explained; clusters of 16 are also slower for float rows of
 * 2^18 (89.9 % of copy against path 3's 92.5 %, H100). */
#define FX_BULK_BLOCK 256
#define FX_BULK_CHUNKS 4
#ifndef FX_BULK_PER_SM /* -DFX_BULK_PER_SM=N: tests/ab_flags.sh's experiments */
#define FX_BULK_PER_SM 3
#endif
/* FX_BULK_MAX_C (8) is in fastest_paths.h: the plan asks it too */

/* Path 3b takes the exp of its pieces as fx_exp<fx_ex2_type>
 * (fastest_device.cuh), whatever the storage type: ex2.approx.ftz of
 * (x - m) log2 e, two instructions where expf takes about ten. A CTA's
 * copies start only when the CTA before it on the SM is done, so the
 * threads' arithmetic is part of every piece's time: path 3b, float32, at
 * 1024 x 65536 runs at 96.2 % of the copy with this exp against 95.3 %
 * with expf, H100 (docs/experiments/rows-fast-exp.md). Its error,
 * |x - m| 2^-24 ln 2 + 2^-22, is under 7e-6 relative for every output
 * float can hold as a normal number (|x - m| < 104); smaller outputs flush
 * to 0, inside the absolute tolerance (1e-30). */

#if FX_CLUSTER_CODE
/* Copy `bytes` (a multiple of 16, both addresses 16-byte aligned) from
 * global memory to this CTA's shared memory; bar (mbarrier.cuh) completes
 * when they are there. The emulator copies at once: the threads that wait
 * on bar only start after the __syncthreads() that follows. */
__device__ __forceinline__ void fx_bulk_copy(unsigned long long *bar, void *dst, const void *src, unsigned bytes)
{
#if defined(CUDA_EMU)
    (void)bar;
    memcpy(dst, src, bytes);
#else
    fx_mbar_expect(bar, bytes);
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     fx_smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(fx_smem_addr(bar))
                 : "memory");
#endif
}

/* Vectors per chunk of a piece of nvec 16-byte vectors. */
__device__ __forceinline__ int fx_bulk_per_chunk(int nvec)
{
    return (nvec + FX_BULK_CHUNKS - 1) / FX_BULK_CHUNKS;
}

/* Thread 0 only, before the block's __syncthreads(): the piece's nvec
 * vectors of VEC elements from src to srow, chunk k completing landed[k]. */
template <int VEC, class T>
__device__ __forceinline__ void fx_bulk_start(unsigned long long *landed, T *srow, const T *src, int nvec)
{
    const int per = fx_bulk_per_chunk(nvec);
    fx_mbar_init(landed, FX_BULK_CHUNKS);
    for (int k = 0; k < FX_BULK_CHUNKS && k * per < nvec; k++) {
        const int n = nvec - k * per < per ? nvec - k * per : per;
        fx_bulk_copy(&landed[k], srow + k * per * VEC, src + k * per * VEC, (unsigned)n * 16);
    }
}

/* Every thread, after that __syncthreads(): its (m, d) of the piece, each
 * chunk folded as it lands, 16 elements a step as path 3's stream (16-bit
 * ones as loaded words, their max taken in pairs: fx_push_words16), then
 * the chunk's last 0 ... U - 1 vectors of this thread one at a time.
 * (Padding the last step with -inf instead put 16 moves and two branches
 * into every step of the sm_90 code.) */
template <int VEC, class T>
__device__ __forceinline__ online_md fx_bulk_fold(unsigned long long *landed, const T *srow, int nvec)
{
    typedef fx_ex2_type E;
    constexpr int U = 16 / VEC;
    const int per = fx_bulk_per_chunk(nvec);
    online_md s = online_md_identity();
    for (int k = 0; k < FX_BULK_CHUNKS && k * per < nvec; k++) {
        const int end = (k + 1) * per < nvec ? (k + 1) * per : nvec;
        fx_mbar_wait(&landed[k]);
        int i = k * per + (int)threadIdx.x;
        for (; i + (U - 1) * FX_BULK_BLOCK < end; i += U * FX_BULK_BLOCK) {
            if constexpr (fx_is_float<T>) {
                float w[U * VEC];
#pragma unroll
                for (int u = 0; u < U; u++) load_vec<VEC>(srow + (i + u * FX_BULK_BLOCK) * VEC, &w[u * VEC]);
                s = fx_push<E, U * VEC>(s, w);
            } else {
                unsigned w[U][4];
#pragma unroll
                for (int u = 0; u < U; u++) vec16_load_words<8>(srow + (i + u * FX_BULK_BLOCK) * VEC, w[u]);
                s = fx_push_words16(s, w, srow);
            }
        }
        for (; i < end; i += FX_BULK_BLOCK) {
            float w[VEC];
            load_vec<VEC>(srow + i * VEC, w);
            s = fx_push<E, VEC>(s, w);
        }
    }
    return s;
}
#endif

/* The largest piece, in bytes, of which FX_BULK_PER_SM CTAs of kernel k
 * (FX_BULK_BLOCK threads) fit on one SM, as the occupancy calculator
 * counts its shared memory (its own arrays and what the GPU reserves per
 * CTA included), rounded down to a power of two so that rows of 2^k
 * elements split into whole pieces: 64 KB on an H100 and an H200 (74 KB
 * would fit their 228 KB per SM). 0 where even 1 KB pieces do not fit
 * so. Opts k in to it. (A template: any kernel's function pointer.) */
template <class K>
static long long fx_bulk_max_piece(K k)
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
template <class K>
static int fx_bulk_clusters(K k, int c, long long smem)
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

#endif
