/* Taught in lesson 9 (lessons/09_half/README.md, "Rows of 2, 4 or 8 x
 * 16384 held as loaded"), a class of lesson 8's path 3 (path3_cluster.cu
 * instantiates it). Path 3's held class: a 16-bit softmax row of C x 16384
 * elements (C = 2, 4, 8; aligned rows of whole 16-byte vectors) over a
 * cluster of C CTAs of 256 threads, each thread holding its 8 vectors of
 * the piece in registers exactly as loaded (lesson 9's 16-bit words, 32
 * registers), with no shared-memory part at all.
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

template <int C, class T>
__global__ void __launch_bounds__(FX_HELD_BLOCK, FX_HELD_MIN_CTAS)
fastest_held_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy)
{
#if FX_CLUSTER_CODE
    constexpr int NV = FX_HELD_SEG / 8; /* 16-byte vectors a CTA */
    fx_cluster_open();
    const long long row = (long long)blockIdx.x / C;
    const long long at = (long long)cooperative_groups::this_cluster().block_rank() * FX_HELD_SEG;
    const unsigned pad = vec16_narrow2(-INFINITY, -INFINITY, x);
    unsigned w[FX_HELD_ITEMS][4];
    fx_words16_load<FX_HELD_ITEMS, FX_HELD_BLOCK>(x + row * ldx + at, NV, pad, w, (int)threadIdx.x);
    const float mt = fx_words16_max(w, pad, x);
    const online_md s = {mt, fx_words16_sum_exp(w, online_md_shift(mt), x)};
    const online_md r = fx_cluster_exchange_warps<C, FX_HELD_BLOCK / 32>(s, C);
    const float shift = online_md_shift(r.m);
    const rows_op_softmax::fin f = rows_op_softmax::finish(r.m, r.d);
    T *yr = y + row * ldy + at;
#pragma unroll
    for (int i = 0; i < FX_HELD_ITEMS; i++) { /* every vector whole: no test of fx_words16_store's */
        unsigned o[4];
        fx_words16_out<rows_op_softmax, false>(w[i], shift, f, o, x);
        vec16_store_global(yr + (long long)(i * FX_HELD_BLOCK + (int)threadIdx.x) * 8, o);
    }
#else
    (void)x, (void)ldx, (void)y, (void)ldy;
#endif
}

template <class T>
using fx_held_fn_t = void (*)(const T *, long long, T *, long long);

template <class T>
static fx_held_fn_t<T> fx_held_kernel(int c)
{
    return c == 2 ? fastest_held_kernel<2, T> : c == 4 ? fastest_held_kernel<4, T> : fastest_held_kernel<8, T>;
}

/* 1 and the cluster size where the class takes rows of cols elements of
 * T and its clusters fit this GPU (asked once per size). */
template <class T>
static int fx_held_shape_t(long long cols, int *c_out)
{
    static int fits[FX_HELD_MAX_C + 1]; /* 0: not asked yet; the answer + 1 */
    const long long c = cols / FX_HELD_SEG;
    if (cols % FX_HELD_SEG || (c != 2 && c != 4 && c != 8)) return 0;
    if (!fits[c]) {
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(c * 64), FX_HELD_BLOCK, (int)c, 0, 0, attr);
        int n = 0;
        if (cudaOccupancyMaxActiveClusters(&n, fx_held_kernel<T>((int)c), &lc) != cudaSuccess) {
            cudaGetLastError();
            n = 0;
        }
        fits[c] = 1 + (n >= 1);
    }
    *c_out = (int)c;
    return fits[c] == 2;
}

/* Runs plan p (path 3's held class): rows in batches of at most 2^31 - 1
 * CTAs, as path 3's. */
template <class T>
static void fx_run_held_t(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                          cudaStream_t stream)
{
    const fx_held_fn_t<T> k = fx_held_kernel<T>(p->cluster);
    const long long batch_max = INT_MAX / p->cluster;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        cudaLaunchAttribute attr[1];
        cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(n * p->cluster), FX_HELD_BLOCK, p->cluster, 0, stream,
                                                  attr);
        CUDA_CHECK(cudaLaunchKernelEx(&lc, k, x + r0 * ldx, ldx, y + r0 * ldy, ldy));
        CUDA_CHECK_LAUNCH();
    }
}

#endif
