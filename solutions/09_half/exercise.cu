/* Exercise 9, solved: the row is widened on the load and stays float32
 * until the store, which rounds once. */
#include "check.h"
#include "exercise.h"
#include "exercise_util.cuh" /* ex_widen, ex_narrow, ex_block_reduce */

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
