/* Lesson 4: reductions with warp shuffles instead of shared-memory trees.
 *
 * __shfl_xor_sync(0xffffffff, v, k) hands each lane the v of lane
 * (lane ^ k), register to register: no shared memory, no __syncthreads,
 * since the 32 lanes of a warp exchange values inside one instruction.
 * With k = 16, 8, 4, 2, 1 (a butterfly), every lane ends up holding the
 * reduction of all 32 values. Floating-point + is commutative, so lane i
 * and lane i ^ k compute the same sum (a + b and b + a) at every step: all
 * 32 lanes hold bit-identical results, and every thread of the row later
 * normalises with the same max and sum.
 *
 * The full mask 0xffffffff promises that all 32 lanes execute the call.
 * Never call these inside a branch that only some lanes take, or after an
 * early `return` that only some lanes took: the result is undefined.
 *
 * A block is reduced in two levels: every warp reduces its 32 values by
 * shuffles; lane 0 of each warp puts its warp's result in shared memory;
 * one __syncthreads; then every warp reads all the warps' results and
 * reduces them by shuffles again. The attention softmax notes' kernel stops after the first
 * level (softmax_warp.cu). C++ templates because the number of warps must
 * be a compile-time constant. */
#ifndef LESSON04_WARP_REDUCE_H
#define LESSON04_WARP_REDUCE_H

#include <math.h>

#define FULL_MASK 0xffffffffu

static __device__ __forceinline__ float warp_max(float v)
{
    for (int k = 16; k > 0; k >>= 1) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, k));
    return v;
}

static __device__ __forceinline__ float warp_sum(float v)
{
    for (int k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(FULL_MASK, v, k);
    return v;
}

/* Every thread of the block calls these, with BLOCK = blockDim.x (a
 * multiple of 32, at most 1024) and `partial` a shared array of BLOCK / 32
 * floats used by no other reduction of the same kernel run (one array per
 * reduction: then no second barrier is needed to protect it from being
 * overwritten while other warps still read it). Every thread gets the
 * result. */
template <int BLOCK>
__device__ __forceinline__ float block_max_warps(float v, float *partial)
{
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024,
                  "BLOCK must be a multiple of 32, at most 1024");
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_max(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads(); /* every warp's result is in shared memory */
    /* Lanes beyond the number of warps take the identity -inf rather than
     * read past the end of partial (a 256-thread block has 8 warps). The
     * choice is made per lane, then all 32 lanes shuffle. */
    v = lane < BLOCK / 32 ? partial[lane] : -INFINITY;
    return warp_max(v);
}

template <int BLOCK>
__device__ __forceinline__ float block_sum_warps(float v, float *partial)
{
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024,
                  "BLOCK must be a multiple of 32, at most 1024");
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = lane < BLOCK / 32 ? partial[lane] : 0.0f; /* 0, the identity of + */
    return warp_sum(v);
}

#endif
