/* Lesson 10: the reduced loss's building blocks (classifier.cuh). Every total is added in the same
 * order and tree whichever block makes it: the same bits every run. */
#ifndef LESSON10_TRAIN_LOSS_CUH
#define LESSON10_TRAIN_LOSS_CUH

#include "train_engine.h" /* classifier_scale, CLS_SLOT_ROWS */
#include "device/grid_sync.cuh" /* FASTEST_GPU_CODE, <cuda/atomic> for the emulator */
#include "device/row_reduce.cuh"

/* Thread 0 only: counts its block (or row) in at *done and returns true in the last of n to get here. The
 * fence makes its writes before it (a part, a row's loss) visible GPU-wide first (threadFenceReduction's way). */
__device__ __forceinline__ bool ce_count_in(unsigned *done, unsigned n)
{
    __threadfence();
    return atomicAdd(done, 1u) == n - 1;
}

/* Thread 0 gets the sum of every thread's s in a fixed order (shuffles, then the warps' sums one after
 * another); red: 32 values. V: float for the losses, unsigned for the mean's count. */
template <class V>
__device__ __forceinline__ V ce_block_sum(V s, V *red)
{
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    __syncthreads(); /* red may still be read by a slow warp */
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = s;
    __syncthreads();
    V t = 0;
    if (threadIdx.x == 0)
        for (unsigned w = 0; w < (blockDim.x + 31) / 32; w++) t += red[w];
    return t;
}

/* Every thread of one block: *loss = the sum of vals[0 .. n) (from L2, never a stale L1 line), over the
 * count for the mean; *done back to 0. BLOCK: the block's size where the kernel knows it (fewer registers). */
template <int BLOCK = 0>
__device__ __forceinline__ void ce_total(const float *vals, long long n, const classifier_scale *scale,
                                         unsigned *done, float *loss, float *red)
{
    float s = 0.0f;
    const int step = BLOCK ? BLOCK : (int)blockDim.x;
    for (long long k = threadIdx.x; k < n; k += step) s += __ldcg(vals + k);
    if constexpr (BLOCK > 0) s = row_reduce<BLOCK>(s, red, op_sum());
    else s = ce_block_sum(s, red);
    if (threadIdx.x == 0) {
        *loss = scale ? s / (float)scale->count : s;
        *done = 0;
    }
}

/* ---- the loss slots ---------------------------------------------------------
 * A row's loss and a flag in one 8-byte store, with no fence. The block of path 1 with the last ticket reads
 * every slot until it is flagged: every other block has started by then and waits on nothing, so the wait
 * always ends. Written while the gradients are on their way, the slots spare counting in's fence, count and
 * read after the last stores: 7.1 us against 8.0 at 1024 x 512 (docs/experiments/training-classifier-loss-end.md). */
__device__ __forceinline__ void ce_slot_put(unsigned long long *p, float l)
{
    const unsigned long long v = 1ull << 32 | __float_as_uint(l);
#ifdef FASTEST_GPU_CODE
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*p).store(v, cuda::memory_order_relaxed);
#endif
}
__device__ __forceinline__ unsigned long long ce_slot_get(const unsigned long long *p)
{
#ifdef FASTEST_GPU_CODE
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
#else
    return cuda::atomic_ref<const unsigned long long, cuda::thread_scope_device>(*p).load(cuda::memory_order_relaxed);
#endif
}

/* Every thread of a block of BLOCK: in the block whose ticket is the last, *loss from the n slots (each
 * round loads every slot still waited for: one trip to L2). */
template <int BLOCK>
__device__ __forceinline__ void ce_slots_total(unsigned long long *slots, long long n, unsigned ticket,
                                               const classifier_scale *scale, unsigned *done, float *loss, float *red)
{
    constexpr int K = (CLS_SLOT_ROWS + BLOCK - 1) / BLOCK;
    static_assert(K <= 32, "a bit of `waiting` per slot");
    if (!__syncthreads_or(threadIdx.x == 0 && ticket == gridDim.x - 1)) return;
    unsigned long long v[K];
    unsigned waiting = 0;
#pragma unroll
    for (int k = 0; k < K; k++)
        if (threadIdx.x + (long long)k * BLOCK < n) waiting |= 1u << k;
    while (waiting) {
#pragma unroll
        for (int k = 0; k < K; k++)
            if (waiting >> k & 1u) v[k] = ce_slot_get(slots + threadIdx.x + k * BLOCK);
#pragma unroll
        for (int k = 0; k < K; k++)
            if ((waiting >> k & 1u) && (v[k] >> 32) != 0) waiting &= ~(1u << k);
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < K; k++)
        if (threadIdx.x + (long long)k * BLOCK < n) {
            s += __uint_as_float((unsigned)v[k]);
            slots[threadIdx.x + k * BLOCK] = 0; /* for the next launch */
        }
    s = row_reduce<BLOCK>(s, red, op_sum());
    if (threadIdx.x == 0) {
        *loss = scale ? s / (float)scale->count : s;
        *done = 0;
    }
}

#endif
