/* Taught in lesson 8. Paths 3 and 3b's exchange of a row's (m, d) states
 * inside its cluster of C CTAs, by pushed stores:
 *   fx_cluster_open      on entry, every thread, before any other cluster
 *                        barrier: thread 0 makes the CTA's mbarrier (one
 *                        arrival and a count of bytes to come), and every
 *                        thread arrives at the cluster barrier without
 *                        waiting;
 *   fx_cluster_exchange  (its stores: fx_cluster_push) thread 0 says how
 *                        many bytes will come (C states); every thread
 *                        waits at the cluster barrier, long since reached
 *                        by every CTA (so every CTA's mbarrier exists);
 *                        then, in a cluster of C > 1 CTAs, threads t < C
 *                        store the CTA's state into slot `rank` of CTA t
 *                        with st.async, which counts its bytes on CTA t's
 *                        mbarrier; every thread waits on its own mbarrier
 *                        until the C states have landed, then each warp
 *                        merges them in the same order (every CTA gets the
 *                        same bits).
 *   fx_cluster_exchange_warps  the same from each warp's state (path
 *                        3b's softmax).
 * Nothing waits at the end: every store into a CTA's shared memory has
 * landed before that CTA reads its slots, so a CTA may exit at once.
 * Reading the others' states through distributed shared memory after a
 * cluster.sync() instead, with a cluster barrier at the exit that keeps
 * each CTA's state readable, ran at 79.6 against 88.7 % of the copy at
 * 1024 x 65536 bfloat16 (H200, docs/experiments/rows-cluster-push.md).
 * The CPU emulator has no inline PTX: there the stores are plain stores
 * through map_shared_rank and a cluster.sync() stands for the mbarrier.
 * sm_90 PTX: mbarrier.*, barrier.cluster.*, mapa, st.async. */
#ifndef COMMON_DEVICE_CLUSTER_EXCHANGE_CUH
#define COMMON_DEVICE_CLUSTER_EXCHANGE_CUH

#include "mbarrier.cuh"
#include "online_md.cuh"
#include <cooperative_groups.h>

#ifndef FX_CLUSTER_CODE
#error "cluster_exchange.cuh: include fastest_device.cuh, which defines FX_CLUSTER_CODE"
#endif
#if FX_CLUSTER_CODE
#define FX_EXCHANGE_MAX_C 16 /* the largest cluster (non-portable) */

typedef struct {
    online_md slot[FX_EXCHANGE_MAX_C]; /* slot r: CTA r's state */
    unsigned long long bar;            /* the mbarrier (GPU only) */
} fx_exchange_box;

__device__ __forceinline__ fx_exchange_box *fx_exchange_smem(void)
{
    __shared__ __align__(8) fx_exchange_box box;
    return &box;
}

#if !defined(CUDA_EMU)
/* s into *at of CTA `rank` of the cluster, its 8 bytes counted on that CTA's *bar. */
__device__ __forceinline__ void fx_push_md(online_md *at, unsigned long long *bar, unsigned rank, online_md s)
{
    unsigned ra, rb;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(fx_smem_addr(at)), "r"(rank));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rb) : "r"(fx_smem_addr(bar)), "r"(rank));
    const unsigned long long v =
        (unsigned long long)__float_as_uint(s.m) | ((unsigned long long)__float_as_uint(s.d) << 32);
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];" ::"r"(ra), "l"(v),
                 "r"(rb)
                 : "memory");
}
#endif

/* On entry, every thread of the CTA, before any other cluster barrier. */
__device__ __forceinline__ void fx_cluster_open(void)
{
#if defined(CUDA_EMU)
    cooperative_groups::this_cluster().barrier_arrive();
#else
    if (threadIdx.x == 0) fx_mbar_init(&fx_exchange_smem()->bar, 1);
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
}

/* Every thread, after fx_cluster_open: the wait at its cluster barrier,
 * after which every CTA's mbarrier exists. */
__device__ __forceinline__ void fx_cluster_wait_open(void)
{
#if defined(CUDA_EMU)
    cooperative_groups::this_cluster().barrier_wait();
#else
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
#endif
}

/* Every thread, after fx_cluster_open, in a cluster of 2 or more CTAs
 * (st.async): where `pusher`, s into *at of CTA `to`; returns once the n
 * states this CTA expects have landed in its own shared memory. */
__device__ __forceinline__ void fx_cluster_push(online_md *at, unsigned n, bool pusher, unsigned to, online_md s)
{
#if defined(CUDA_EMU)
    (void)n;
    fx_cluster_wait_open();
    if (pusher) *cooperative_groups::this_cluster().map_shared_rank(at, to) = s;
    cooperative_groups::this_cluster().sync();
#else
    unsigned long long *bar = &fx_exchange_smem()->bar;
    if (threadIdx.x == 0) fx_mbar_expect(bar, n * (unsigned)sizeof(online_md));
    fx_cluster_wait_open();
    if (pusher) fx_push_md(at, bar, to, s);
    fx_mbar_wait(bar);
#endif
}

/* The row's state from each of the C CTAs' state b (the same in every
 * thread of a CTA); every thread, after fx_cluster_open. */
__device__ __forceinline__ online_md fx_cluster_exchange(online_md b, int C)
{
    fx_exchange_box *box = fx_exchange_smem();
    if (C == 1) { /* st.async needs a cluster of 2 or more (compute-sanitizer) */
        fx_cluster_wait_open();
        return b;
    }
    const unsigned rank = cooperative_groups::this_cluster().block_rank();
    fx_cluster_push(&box->slot[rank], (unsigned)C, (int)threadIdx.x < C, threadIdx.x, b);
    const int lane = (int)threadIdx.x % 32;
    online_md q = lane < C ? box->slot[lane] : online_md_identity();
    for (int off = 16; off > 0; off /= 2) q = online_md_butterfly_step(q, off);
    return q;
}

/* As fx_cluster_exchange, but from each warp's state s, with no merge of
 * the CTA's warps first (path 3b's softmax): each warp's state, after its
 * butterfly, goes into slot rank * WARPS + warp of every CTA, and each warp
 * merges the C x WARPS states in the same order (lane l: slots l, l + 32,
 * ...), so every CTA gets the same bits. The block merge's two barriers
 * leave the critical path: bfloat16 rows of 131072 took 0.974 of the time
 * (H200). The slots are this function's own shared memory, in the kernels
 * that call it only. Clusters of 2 ... MAX_C CTAs. */
template <int MAX_C, int WARPS>
__device__ __forceinline__ online_md fx_cluster_exchange_warps(online_md s, int C)
{
    __shared__ __align__(8) online_md slot[MAX_C * WARPS];
    const unsigned rank = cooperative_groups::this_cluster().block_rank();
    const int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
    for (int off = 16; off > 0; off /= 2) s = online_md_butterfly_step(s, off);
    fx_cluster_push(&slot[rank * WARPS + warp], (unsigned)(C * WARPS), lane < C, (unsigned)lane, s);
    online_md q = online_md_identity();
    for (int k = lane; k < C * WARPS; k += 32) q = online_md_merge(q, slot[k]);
    for (int off = 16; off > 0; off /= 2) q = online_md_butterfly_step(q, off);
    return q;
}
#endif

#endif
