/* Exercise 9's device helpers, shared by the starter (exercise.cu) and the
 * solution: widening, narrowing, and a block's max or sum. */
#ifndef LESSON09_EXERCISE_UTIL_CUH
#define LESSON09_EXERCISE_UTIL_CUH
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>

#include "exercise.h"

/* Widening is exact: every 16-bit value is a float. */
__device__ __forceinline__ float ex_widen(float v) { return v; }
__device__ __forceinline__ float ex_widen(__half v) { return __half2float(v); }
__device__ __forceinline__ float ex_widen(__nv_bfloat16 v) { return __bfloat162float(v); }

/* Narrowing rounds to nearest, ties to even: one rounding, half an ulp. */
__device__ __forceinline__ void ex_narrow(float v, float *out) { *out = v; }
__device__ __forceinline__ void ex_narrow(float v, __half *out) { *out = __float2half_rn(v); }
__device__ __forceinline__ void ex_narrow(float v, __nv_bfloat16 *out) { *out = __float2bfloat16_rn(v); }

/* The block's max or sum: a warp butterfly, then the warps' results
 * through shared memory (lesson 4). */
template <bool MAX>
__device__ float ex_block_reduce(float v)
{
    __shared__ float part[EX_BLOCK / 32];
    for (int off = 16; off > 0; off /= 2) {
        const float o = __shfl_xor_sync(0xffffffffu, v, off);
        v = MAX ? fmaxf(v, o) : v + o;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) part[warp] = v;
    __syncthreads();
    v = part[0];
    for (int w = 1; w < EX_BLOCK / 32; w++) v = MAX ? fmaxf(v, part[w]) : v + part[w];
    __syncthreads(); /* part is reused by the next reduction */
    return v;
}

#endif
