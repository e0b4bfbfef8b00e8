/* Exercise 9, solved: the row is widened on the load and stays float32
 * until the store, which rounds once. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>

#include "check.h"
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

/* T is the storage type: one kernel body for float, __half and
 * __nv_bfloat16 (a C++ template: the only way CUDA C writes a kernel once
 * for several element types). */
template <class T>
__global__ void __launch_bounds__(EX_BLOCK) half_row_kernel(const T *__restrict__ x, T *__restrict__ y, int cols)
{
    const T *xr = x + (long long)blockIdx.x * cols;
    T *yr = y + (long long)blockIdx.x * cols;
    /* Widened on the load, exactly; from here on everything is float32. */
    float v[EX_PER_THREAD];
    float m = -INFINITY;
    for (int i = 0; i < EX_PER_THREAD; i++) {
        const int k = i * EX_BLOCK + threadIdx.x;
        v[i] = k < cols ? ex_widen(xr[k]) : -INFINITY;
        m = fmaxf(m, v[i]);
    }
    m = ex_block_reduce<true>(m);
    float s = 0.0f;
    for (int i = 0; i < EX_PER_THREAD; i++) {
        const int k = i * EX_BLOCK + threadIdx.x;
        v[i] = k < cols ? expf(v[i] - m) : 0.0f; /* stays float: no rounding yet */
        s += v[i];
    }
    s = ex_block_reduce<false>(s);
    const float inv = 1.0f / s;
    for (int i = 0; i < EX_PER_THREAD; i++) {
        const int k = i * EX_BLOCK + threadIdx.x;
        if (k < cols) ex_narrow(v[i] * inv, &yr[k]); /* the one rounding */
    }
}

void softmax_half_row(const void *x, void *y, long long rows, long long cols, dtype t, cudaStream_t stream)
{
    if (rows < 1 || cols < 1) return;
    const unsigned blocks = (unsigned)rows;
    if (t == DTYPE_F16)
        half_row_kernel<<<blocks, EX_BLOCK, 0, stream>>>((const __half *)x, (__half *)y, (int)cols);
    else if (t == DTYPE_BF16)
        half_row_kernel<<<blocks, EX_BLOCK, 0, stream>>>((const __nv_bfloat16 *)x, (__nv_bfloat16 *)y, (int)cols);
    else
        half_row_kernel<<<blocks, EX_BLOCK, 0, stream>>>((const float *)x, (float *)y, (int)cols);
    CUDA_CHECK_LAUNCH();
}
