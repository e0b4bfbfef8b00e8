/* Taught in lesson 9 (lessons/09_half/README.md, "Rows held as loaded"),
 * a class of lesson 8's path 3 (path3_cluster.cu instantiates it). Path
 * 3's held class: an aligned 16-bit softmax row that fills at least 15/16
 * of C pieces of 16384 elements (C = 2, 4, 8, 16; whole 16-byte vectors)
 * over a cluster of C CTAs of 256 threads, each thread holding its 8
 * vectors of the piece in registers exactly as loaded (lesson 9's 16-bit
 * words, 32 registers), with no shared-memory part at all.
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

/* Five CTAs an SM: at most 51 registers a thread (48, no spill, sm_90).
 * Older targets get an empty body, and 1280 threads would not fit them. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define FX_HELD_MIN_CTAS 1
#else
#define FX_HELD_MIN_CTAS 5
#endif

/* PART: the row fills its C pieces of seg elements (whole vectors) only in
 * part; a piece's last vectors are padded on the load and not stored. */
template <int C, bool PART, class T>
__global__ void __launch_bounds__(FX_HELD_BLOCK, FX_HELD_MIN_CTAS)
fastest_held_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, int cols, int seg)
{
#if FX_CLUSTER_CODE
    const int rank = (int)cooperative_groups::this_cluster().block_rank();
    const int nv = PART ? fx_piece_len(cols, rank, seg) / 8 : FX_HELD_SEG / 8; /* 16-byte vectors a CTA */
    fx_cluster_open();
    const long long row = (long long)blockIdx.x / C;
    const long long at = (long long)rank * (PART ? seg : FX_HELD_SEG);
    const unsigned pad = vec16_narrow2(-INFINITY, -INFINITY, x);
    unsigned w[FX_HELD_ITEMS][4];
    fx_words16_load<FX_HELD_ITEMS, FX_HELD_BLOCK>(x + row * ldx + at, nv, pad, w, (int)threadIdx.x);
    /* Thread 0's mbarrier.init before the other threads' waits, in an
     * order compute-sanitizer's racecheck sees (it does not count the
     * cluster barrier), while the loads are in flight. */
    __syncthreads();
    const float mt = fx_words16_max(w, pad, x);
    const online_md s = {mt, fx_words16_sum_exp(w, online_md_shift(mt), x)};
    const online_md r = fx_cluster_exchange_warps<C, FX_HELD_BLOCK / 32>(s, C);
    const float shift = online_md_shift(r.m);
    const rows_op_softmax::fin f = rows_op_softmax::finish(r.m, r.d);
    T *yr = y + row * ldy + at;
#pragma unroll
    for (int i = 0; i < FX_HELD_ITEMS; i++) { /* fx_words16_store's loop, each store one st.global.v4 */
        const int k = i * FX_HELD_BLOCK + (int)threadIdx.x;
        unsigned o[4];
        fx_words16_out<rows_op_softmax, false>(w[i], shift, f, o, x);
        if (!PART || k < nv) vec16_store_global(yr + (long long)k * 8, o);
    }
#else
    (void)x, (void)ldx, (void)y, (void)ldy, (void)cols, (void)seg;
#endif
}

template <class T>
using fx_held_fn_t = void (*)(const T *, long long, T *, long long, int, int);

template <int C, class T>
static fx_held_fn_t<T> fx_held_kernel_c(bool part)
{
    return part ? fastest_held_kernel<C, true, T> : fastest_held_kernel<C, false, T>;
}

template <class T>
static fx_held_fn_t<T> fx_held_kernel(int c, bool part)
{
    return c == 2   ? fx_held_kernel_c<2, T>(part)
           : c == 4 ? fx_held_kernel_c<4, T>(part)
           : c == 8 ? fx_held_kernel_c<8, T>(part)
                    : fx_held_kernel_c<16, T>(part);
}

/* 1, the cluster size and the piece where the class takes rows of cols
 * elements of T: the fewest pieces of FX_HELD_SEG that hold the row, filled
 * to at least FX_HELD_FILL sixteenths, in clusters that fit this GPU (asked
 * once per size; clusters of 16 are non-portable). */
template <class T>
static int fx_held_shape_t(long long cols, int *c_out, long long *seg_out)
{
    static int fits[2][FX_HELD_MAX_C + 1]; /* 0: not asked yet; the answer + 1 */
    long long c = 2;
    while (c < FX_HELD_MAX_C && c * FX_HELD_SEG < cols) c *= 2;
    const bool part = cols != c * FX_HELD_SEG; /* the kernel's PART (fx_run_held_t asks the same) */
    if (cols % 8 || cols > c * FX_HELD_SEG || cols * 16 < c * FX_HELD_SEG * FX_HELD_FILL) return 0;
    if (!fits[part][c]) {
        const fx_held_fn_t<T> k = fx_held_kernel<T>((int)c, part);
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(c * 64), FX_HELD_BLOCK, (int)c, 0, 0, attr);
        int n = 0;
        if ((c > 8 && cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess) ||
            cudaOccupancyMaxActiveClusters(&n, k, &lc) != cudaSuccess) {
            cudaGetLastError(); /* this GPU cannot: no other error is cleared */
            n = 0;
        }
        fits[part][c] = 1 + (n >= 1);
    }
    *c_out = (int)c;
    *seg_out = ((cols + c - 1) / c + 7) / 8 * 8;
    return fits[part][c] == 2;
}

/* Runs plan p (path 3's held class): rows in batches of at most 2^31 - 1
 * CTAs, as path 3's. */
template <class T>
static void fx_run_held_t(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                          long long cols, cudaStream_t stream)
{
    const fx_held_fn_t<T> k = fx_held_kernel<T>(p->cluster, (long long)p->cluster * FX_HELD_SEG != cols);
    const long long batch_max = INT_MAX / p->cluster;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(n * p->cluster), FX_HELD_BLOCK, p->cluster, 0, stream,
                                                  attr);
        CUDA_CHECK(cudaLaunchKernelEx(&lc, k, x + r0 * ldx, ldx, y + r0 * ldy, ldy, (int)cols, (int)p->segment));
        CUDA_CHECK_LAUNCH();
    }
}

#endif
