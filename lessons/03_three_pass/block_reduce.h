/* Lesson 3: reducing one value per thread to one value per block, through
 * shared memory, as a tree with sequential addressing.
 *
 * Step s (s = BLOCK/2, BLOCK/4, ..., 1): thread t < s combines buf[t] with
 * buf[t + s]. Why this shape:
 *   - the active threads are always the first s: whole warps are either all
 *     busy or all idle until s < 32, so no warp splits into two paths;
 *   - the 32 threads of a warp touch 32 consecutive words, one per bank, at
 *     every step: no bank conflicts (the "interleaved" tree, t % (2 s) == 0,
 *     has both problems);
 *   - each step halves the work: log2(BLOCK) steps, each ending in a
 *     __syncthreads, because step s + 1 reads what other warps wrote in
 *     step s.
 *
 * C++ templates because BLOCK must be a compile-time constant: the loop
 * then unrolls completely and the array has a fixed size. */
#ifndef LESSON03_BLOCK_REDUCE_H
#define LESSON03_BLOCK_REDUCE_H

#include <math.h>

/* Every thread of the block must call these (each contains __syncthreads)
 * with the same buf of BLOCK floats in shared memory; every thread gets
 * the result. BLOCK is a power of two, 32 to 1024. */
template <int BLOCK>
__device__ __forceinline__ float block_reduce_max(float v, float *buf)
{
    static_assert(BLOCK >= 32 && BLOCK <= 1024 && (BLOCK & (BLOCK - 1)) == 0,
                  "BLOCK must be a power of two between 32 and 1024");
    const int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        /* fmaxf(a, NaN) = a: a NaN never becomes the max. The NaN still
         * reaches the output through exp(NaN - max) in the sum. */
        if (t < s) buf[t] = fmaxf(buf[t], buf[t + s]);
        __syncthreads();
    }
    v = buf[0];
    /* Without this barrier, a fast thread could start the next reduction
     * and overwrite buf[0] before a slow one has read it. */
    __syncthreads();
    return v;
}

template <int BLOCK>
__device__ __forceinline__ float block_reduce_sum(float v, float *buf)
{
    static_assert(BLOCK >= 32 && BLOCK <= 1024 && (BLOCK & (BLOCK - 1)) == 0,
                  "BLOCK must be a power of two between 32 and 1024");
    const int t = threadIdx.x;
    buf[t] = v;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    v = buf[0];
    __syncthreads(); /* as above: buf[0] is read by all before it is reused */
    return v;
}

#endif
