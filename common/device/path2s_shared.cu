/* Taught in lesson 8. Path 2s of the row engine: one row per block in
 * dynamic shared memory, for rows longer than a block's registers hold
 * (1024 threads x 32 floats = 32768) but within the opt-in shared memory:
 * 227 KB per block on an H100, 57 856 floats (lessons/08_fastest/README.md,
 * "Path 2"). It still reads each element once and writes it once, so the
 * dispatcher takes it on GPUs without clusters for 32768 < N <= the opt-in
 * limit, with at least SMs/2 rows. Above 48 KB a kernel must opt in
 * (cudaFuncSetAttribute), or every launch fails. */
#include <math.h>

#include "check.h"
#include "fastest_device.cuh"
#include "fastest_paths.h"

/* A block's own static arrays (red_m, red_d, ...) beside the row. */
#define FX_STATIC_SMEM_RESERVE 1024

/* ---- path 2, shared memory: rows too long for registers -----------------
 * One row per block in dynamic shared memory (above 48 KB after
 * cudaFuncSetAttribute). The single global read streams 64 bytes per
 * thread at a time into shared memory while folding them into the
 * thread's running (m, d) (online_md_push); after the block merge, the row
 * is written from shared memory. Vector k always belongs to thread
 * k % BLOCK: each thread reads back only what it wrote, so the row data
 * needs no barrier. */
template <int VEC, bool PEEL, int BLOCK, class T = float>
__global__ void __launch_bounds__(BLOCK)
fastest_shared_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy,
                      long long rows, int cols, int mis)
{
    constexpr int U = 64 / (VEC * (int)sizeof(T)); /* 64 bytes per thread in flight */
    extern __shared__ float4 fastest_smem[];
    __shared__ float red_m[32], red_d[32];
    float *srow = reinterpret_cast<float *>(fastest_smem);

    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * ldx;
        const view_cut cut = fx_row_cut<VEC, PEEL>(row, ldx, mis, cols); /* extras: threads 0-5, in a register */
        const int nvec = (int)cut.nvec;
        const T *xb = xr + cut.head;
        const float e = view_extra_load(xr, cut, threadIdx.x);
        online_md s = online_md_identity();
        if constexpr (PEEL) s = fx_push<T, 1>(s, &e);
        for (int k0 = threadIdx.x; k0 < nvec; k0 += U * BLOCK) {
            float v[U * VEC];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * BLOCK;
                if (k < nvec) {
                    load_vec<VEC>(xb + (long long)k * VEC, &v[u * VEC]);
                } else {
#pragma unroll
                    for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * BLOCK;
                if (k < nvec) store_vec<VEC>(srow + k * VEC, &v[u * VEC]);
            }
            s = fx_push<T, U * VEC>(s, v);
        }
        s = online_md_row_merge<BLOCK>(s, red_m, red_d);
        const float inv = 1.0f / s.d; /* m = -inf (all -inf): exp(NaN) below */
        T *yr = y + row * ldy;
        T *yb = yr + cut.head;
        for (int k = threadIdx.x; k < nvec; k += BLOCK) {
            float v[VEC];
            load_vec<VEC>(srow + k * VEC, v);
#pragma unroll
            for (int j = 0; j < VEC; j++) v[j] = fx_exp<T>(v[j] - s.m) * inv;
            if constexpr (PEEL) fx_store_peel<VEC>(yb + (long long)k * VEC, v);
            else store_vec<VEC>(yb + (long long)k * VEC, v);
        }
        if constexpr (PEEL)
            if ((int)threadIdx.x < cut.nextra) {
                if constexpr (fx_is_float<T>) yr[view_extra_at(cut, threadIdx.x)] = fx_exp<T>(e - s.m) * inv;
                else elem_store(yr + view16_extra_at(cut, threadIdx.x), fx_exp<T>(e - s.m) * inv);
            }
    }
}

long long softmax_fastest_shared_capacity(void)
{
    int dev, optin;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const long long floats = ((long long)optin - FX_STATIC_SMEM_RESERVE) / (long long)sizeof(float);
    return floats > 0 ? floats / 4 * 4 : 0;
}

/* How many path 2s blocks holding a row of cols floats fit on one SM (the
 * aligned kernel, opted in to the row's shared memory): the dispatcher
 * takes path 2s only where two do (rows_plan.cu). */
int fx_shared_blocks_per_sm(long long cols)
{
    static long long last_cols = -1; /* the last answer: the plan asks before each launch */
    static int last_n = 0;
    if (cols == last_cols) return last_n;
    const long long smem = cols * (long long)sizeof(float);
    void (*kernel)(const float *, long long, float *, long long, long long, int, int) =
        fastest_shared_kernel<4, false, FX_SHARED_BLOCK>;
    if (smem > SMEM_OPT_IN_ABOVE &&
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem) != cudaSuccess) {
        cudaGetLastError(); /* more than a block may have */
        return 0;
    }
    int n = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, FX_SHARED_BLOCK, (size_t)smem));
    last_cols = cols;
    last_n = n;
    return n;
}

template <int VEC, bool PEEL, class T = float>
static void fx_run_shared_as(const T *x, long long ldx, T *y, long long ldy, long long rows,
                             long long cols, long long smem, cudaStream_t stream)
{
    void (*kernel)(const T *, long long, T *, long long, long long, int, int) =
        fastest_shared_kernel<VEC, PEEL, FX_SHARED_BLOCK, T>;
    SMEM_OPT_IN(kernel, smem); /* above the default, a kernel must opt in (common/check.h) */
    kernel<<<fx_grid(rows, 1), FX_SHARED_BLOCK, (size_t)smem, stream>>>(x, ldx, y, ldy, rows, (int)cols, fx_mis(x));
    CUDA_CHECK_LAUNCH();
}

void fx_run_shared(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                   long long cols, cudaStream_t stream)
{
    if (p->peel) fx_run_shared_as<4, true>(x, ldx, y, ldy, rows, cols, p->smem_bytes, stream);
    else if (p->vec4) fx_run_shared_as<4, false>(x, ldx, y, ldy, rows, cols, p->smem_bytes, stream);
    else fx_run_shared_as<1, false>(x, ldx, y, ldy, rows, cols, p->smem_bytes, stream);
}

/* Lesson 9: 16-bit storage; vec4 means 16-byte vectors of 8 elements. The
 * row is held widened, as floats: the capacity in elements is float's. */
template <class T>
static void fx_run_shared_t(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                            long long cols, cudaStream_t stream)
{
    if (p->peel) fx_run_shared_as<8, true>(x, ldx, y, ldy, rows, cols, p->smem_bytes, stream);
    else if (p->vec4) fx_run_shared_as<8, false>(x, ldx, y, ldy, rows, cols, p->smem_bytes, stream);
    else fx_run_shared_as<1, false>(x, ldx, y, ldy, rows, cols, p->smem_bytes, stream);
}

void fx_run_shared_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                      long long rows, long long cols, cudaStream_t stream)
{
    if (t == DTYPE_F16) fx_run_shared_t(p, (const __half *)x, ldx, (__half *)y, ldy, rows, cols, stream);
    else fx_run_shared_t(p, (const __nv_bfloat16 *)x, ldx, (__nv_bfloat16 *)y, ldy, rows, cols, stream);
}
