/* Lesson 9, step 1: lesson 5's fused row for any storage type.
 *
 * The same three kernels as lessons/05_fused/softmax_fused.cu, with the
 * row's storage type T a template parameter: float, __half or
 * __nv_bfloat16. The arithmetic does not change: each element is widened
 * to float as it is loaded (exact: every 16-bit value is a float), the
 * max, the exps, the sum and the quotient are float32, and each result is
 * rounded once, to nearest even, as it is stored (vec.cuh's load_vec /
 * store_vec for 16-bit types). Only the bytes change: 2 read + 2 written
 * per element instead of 4 + 4.
 *
 * A 16-byte access holds 8 16-bit elements (VEC = 8) where float holds 4:
 * the kernels move 16-byte vectors when both views' rows start 16-byte
 * aligned and hold whole vectors; where the rows of x and y start at the
 * same offset from 16 bytes, they peel each row as lesson 5 does (PEEL:
 * a head up to the row's first 16-byte boundary, or its first 128-byte
 * line in the long-row kernels (HALF_LINE), and a tail of 0-7 elements,
 * one each for the row's first threads, around a body of 16-byte
 * vectors); else 4-byte pairs (VEC = 2) when the views are 4-byte aligned
 * and of even length, single elements otherwise.
 *
 * Where the row lives:
 *   - registers: up to 32768 elements, as in lesson 5 (the registers hold
 *     the widened floats, so the capacity in elements is float's);
 *   - shared memory: beyond, the row kept in its storage type, so twice as
 *     many 16-bit elements fit as floats (115 712 on an H100). Pass 1
 *     copies the row in and takes the max, pass 2 sums the exps, pass 3
 *     writes exp(x - m) / sum, computing each exp a second time: storing
 *     the exps in 16 bits between the passes would round them twice;
 *   - beyond that, the chunked kernel: three reads of the row.
 *
 * Why C++ templates: a register array needs a compile-time size
 * (float v[FPT]) and fully unrolled loops, and the storage type decides
 * at compile time which load and convert instructions the kernel has; the
 * host picks one instance per (type, access width, row class) at run time. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "softmax_half.h"
#include "half_internal.h"
#include "device/vec.cuh"
#include "device/view_cut.cuh"
#include "device/row_reduce.cuh"
#include "check.h"

/* The shared-memory and chunked kernels cut a peeled row at x's first
 * 128-byte line (a head of up to 63 16-bit values or 31 floats, one for
 * each of the row's first threads), the register kernels at 16 bytes
 * (their rows lack a lane for a longer head). Cut at 16 bytes, every
 * other row's body starts half-way into a 32-byte sector, and each warp's
 * accesses share a sector at either end with another warp's: 2048 x 50257
 * float16 takes 0.181 ms cut at lines against 0.192 at 16 bytes, H200
 * (docs/experiments/rows-peeled-views.md). y's rows start at the same
 * offset from 16 bytes as x's, so y's body stays 16-byte aligned. */
#define HALF_LINE 128

/* PEEL: row `row`'s cut, its body's vectors in *nvec and its first
 * element in *body; thread sub's extra (the head, then the tail), or -inf
 * (exp gives 0) for a thread without one. UNIT = VEC: lesson 5's cut at
 * 16 bytes (view_cut.cuh; mis: the base's offset from 16 bytes); a larger
 * UNIT: the head up to the first boundary of UNIT elements of the row at
 * xr. Else the whole row is the body. */
template <bool PEEL, int VEC, int UNIT, class T, class N>
__device__ __forceinline__ float half_cut(const T *xr, long long row, long long ldx, int mis, long long cols, int sub,
                                          view_cut *c, N *nvec, int *body)
{
    if constexpr (!PEEL) {
        *nvec = (N)(cols / VEC); /* the host picks VEC dividing cols */
        *body = 0;
        return -INFINITY;
    } else {
        if constexpr (UNIT == VEC) *c = view_row_cut_v<VEC>(row, ldx, mis, cols);
        else *c = view_cut_head<VEC>((UNIT - (int)((uintptr_t)xr / sizeof(T) & (UNIT - 1))) & (UNIT - 1), cols);
        *nvec = (N)c->nvec;
        *body = c->head;
        return sub < c->nextra ? elem_load(xr + view_extra_at_v<VEC>(*c, sub)) : -INFINITY;
    }
}

/* ---- the row in registers ---------------------------------------------------
 * Lesson 5's fused_registers_kernel for storage type T. VEC: elements per
 * access, FPT: elements per thread, TPR: threads per row (1-32: part of a
 * warp; more: the block). All loads are issued before the first use;
 * positions past the row hold -inf and are never stored. */
template <class T, int VEC, int FPT, int TPR, int BLOCK, bool PEEL>
__global__ void __launch_bounds__(BLOCK)
half_registers_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, long long rows,
                      int cols, int mis)
{
    static_assert(FPT % VEC == 0, "whole vectors per thread");
    static_assert(BLOCK % TPR == 0 && (TPR <= 32 || TPR == BLOCK), "a row: part of a warp, or the block");
    static_assert(!PEEL || TPR >= 2 * (VEC - 1), "a lane for each extra");
    constexpr int ITEMS = FPT / VEC;
    constexpr int RPB = BLOCK / TPR;
    __shared__ float red_max[32], red_sum[32]; /* TPR > 32 only */
    const int sub = threadIdx.x % TPR;

    for (long long first = (long long)blockIdx.x * RPB; first < rows; first += (long long)gridDim.x * RPB) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < rows; /* a dead lane still joins the shuffles */
        const T *xr = x + (live ? row : 0) * ldx;
        view_cut c;
        int nvec, body;
        float ex = half_cut<PEEL, VEC, VEC>(xr, live ? row : 0, ldx, mis, cols, live ? sub : TPR, &c, &nvec, &body);
        xr += body;
        float v[FPT];
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int k = i * TPR + sub;
            if (live && k < nvec) {
                load_vec<VEC>(xr + (long long)k * VEC, &v[i * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[i * VEC + j] = -INFINITY;
            }
        }
        float m = ex; /* -inf without PEEL */
#pragma unroll
        for (int p = 0; p < FPT; p++) m = fmaxf(m, v[p]);
        m = row_reduce<TPR>(m, red_max, op_max());
        float s = 0.0f;
        if constexpr (PEEL) s = ex = expf(ex - m);
#pragma unroll
        for (int p = 0; p < FPT; p++) {
            v[p] = expf(v[p] - m);
            s += v[p];
        }
        s = row_reduce<TPR>(s, red_sum, op_sum());
        const float inv = 1.0f / s; /* NaN for a row of NaN, +inf or only -inf */
        T *yr = y + (live ? row : 0) * ldy;
        if constexpr (PEEL)
            if (live && sub < c.nextra) elem_store(yr + view_extra_at_v<VEC>(c, sub), ex * inv);
        yr += body;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const int k = i * TPR + sub;
            if (live && k < nvec) {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[i * VEC + j] *= inv;
                store_vec<VEC>(yr + (long long)k * VEC, &v[i * VEC]); /* the one rounding */
            }
        }
    }
}

/* ---- the row in shared memory, in its storage type ----------------------------
 * One block per row; vector k belongs to thread k % BLOCK in all three
 * passes, so each thread reads back only what it wrote (no barrier for the
 * row, only for the reductions). U vectors per thread in flight: 64 bytes
 * for float4s, 64 bytes for 16-bit 8-vectors too (U = 4). */
template <class T, int VEC, int BLOCK, bool PEEL>
__global__ void __launch_bounds__(BLOCK)
half_shared_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, long long rows, int cols,
                   int mis)
{
    constexpr int U = VEC == 1 ? 16 : 64 / (VEC * (int)sizeof(T)); /* VEC * sizeof(T) <= 16 */
    extern __shared__ uint4 half_smem[]; /* uint4: 16-byte aligned */
    __shared__ float red_max[32], red_sum[32];
    T *srow = reinterpret_cast<T *>(half_smem);

    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * ldx;
        view_cut c;
        int nvec, body;
        float ex = half_cut<PEEL, VEC, HALF_LINE / sizeof(T)>(xr, row, ldx, mis, cols, (int)threadIdx.x, &c, &nvec,
                                                             &body);
        xr += body;
        float m = ex; /* -inf without PEEL */
        for (int k0 = threadIdx.x; k0 < nvec; k0 += U * BLOCK) {
            float v[U * VEC];
#pragma unroll
            for (int u = 0; u < U; u++) { /* U loads in flight, then U stores */
                const int k = k0 + u * BLOCK;
                if (k < nvec) {
                    load_vec<VEC>(xr + (long long)k * VEC, &v[u * VEC]);
                } else {
#pragma unroll
                    for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * BLOCK;
                /* Exact: the values came from T, so storing them as T
                 * rounds nothing. */
                if (k < nvec) store_vec<VEC>(srow + k * VEC, &v[u * VEC]);
            }
#pragma unroll
            for (int p = 0; p < U * VEC; p++) m = fmaxf(m, v[p]);
        }
        m = row_reduce<BLOCK>(m, red_max, op_max());

        float s = 0.0f;
        if constexpr (PEEL) s = ex = expf(ex - m);
        for (int k = threadIdx.x; k < nvec; k += BLOCK) {
            float v[VEC];
            load_vec<VEC>(srow + k * VEC, v);
#pragma unroll
            for (int j = 0; j < VEC; j++) s += expf(v[j] - m);
        }
        s = row_reduce<BLOCK>(s, red_sum, op_sum());
        const float inv = 1.0f / s;

        T *yr = y + row * ldy;
        if constexpr (PEEL)
            if ((int)threadIdx.x < c.nextra) elem_store(yr + view_extra_at_v<VEC>(c, threadIdx.x), ex * inv);
        yr += body;
        for (int k = threadIdx.x; k < nvec; k += BLOCK) {
            float v[VEC];
            load_vec<VEC>(srow + k * VEC, v);
#pragma unroll
            for (int j = 0; j < VEC; j++) v[j] = expf(v[j] - m) * inv;
            store_vec<VEC>(yr + (long long)k * VEC, v);
        }
    }
}

/* ---- the row does not fit: three passes over global memory ----------------------
 * Any cols, 64-bit positions. */

/* U vectors of the row from vector k0 on, BLOCK apart, widened into v;
 * past the row's end, -inf (exp gives 0). Reads 1 and 2 share it. A whole
 * chunk, every chunk of the row but the last, takes loads with no test:
 * the compiler then issues the U loads together, where with a test on
 * each it may issue read 2's second load after the first vector's exps
 * (41.9 against 47.7 % of the copy at 1024 x 128257, bfloat16). */
template <int U, int VEC, int BLOCK, class T>
__device__ __forceinline__ void chunk_load(const T *__restrict__ xr, long long k0, long long nvec, float *v)
{
    if (k0 + (long long)(U - 1) * BLOCK < nvec) {
#pragma unroll
        for (int u = 0; u < U; u++) load_vec<VEC>(xr + (k0 + (long long)u * BLOCK) * VEC, &v[u * VEC]);
        return;
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        const long long k = k0 + (long long)u * BLOCK;
        if (k < nvec) {
            load_vec<VEC>(xr + k * VEC, &v[u * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
        }
    }
}
template <class T, int VEC, int BLOCK, bool PEEL>
__global__ void __launch_bounds__(BLOCK)
half_chunked_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, long long rows,
                    long long cols, int mis)
{
    /* 16 elements per thread in flight (64 bytes of float, 32 of 16-bit):
     * 32 16-bit elements spilled at 1024 threads' 64 registers. */
    constexpr int U = VEC == 1 ? 16 : 16 / VEC;
    constexpr long long STEP = (long long)U * BLOCK;
    __shared__ float red_max[32], red_sum[32];

    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * ldx;
        T *yr = y + row * ldy;
        view_cut c;
        long long nvec;
        int body;
        float ex = half_cut<PEEL, VEC, HALF_LINE / sizeof(T)>(xr, row, ldx, mis, cols, (int)threadIdx.x, &c, &nvec,
                                                             &body);
        xr += body;
        float m = ex; /* read 1; -inf without PEEL */
        for (long long k0 = threadIdx.x; k0 < nvec; k0 += STEP) {
            float v[U * VEC];
            chunk_load<U, VEC, BLOCK>(xr, k0, nvec, v);
#pragma unroll
            for (int p = 0; p < U * VEC; p++) m = fmaxf(m, v[p]);
        }
        m = row_reduce<BLOCK>(m, red_max, op_max());

        float s = 0.0f; /* read 2 */
        if constexpr (PEEL) s = ex = expf(ex - m);
        for (long long k0 = threadIdx.x; k0 < nvec; k0 += STEP) {
            float v[U * VEC];
            chunk_load<U, VEC, BLOCK>(xr, k0, nvec, v);
#pragma unroll
            for (int p = 0; p < U * VEC; p++) s += expf(v[p] - m);
        }
        s = row_reduce<BLOCK>(s, red_sum, op_sum());
        const float inv = 1.0f / s;
        if constexpr (PEEL)
            if ((int)threadIdx.x < c.nextra) elem_store(yr + view_extra_at_v<VEC>(c, threadIdx.x), ex * inv);
        yr += body;

        for (long long k0 = threadIdx.x; k0 < nvec; k0 += STEP) { /* read 3, write */
            float v[U * VEC];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const long long k = k0 + (long long)u * BLOCK;
                if (k < nvec) load_vec<VEC>(xr + k * VEC, &v[u * VEC]);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const long long k = k0 + (long long)u * BLOCK;
                if (k < nvec) {
#pragma unroll
                    for (int j = 0; j < VEC; j++) v[u * VEC + j] = expf(v[u * VEC + j] - m) * inv;
                    store_vec<VEC>(yr + k * VEC, &v[u * VEC]);
                }
            }
        }
    }
}

/* ---- the host side ----------------------------------------------------------------
 * Register classes, shortest rows first, in elements (lesson 5's table;
 * the registers hold floats whatever the storage, so capacities stay).
 * Every fpt is a multiple of 8, a whole number of 16-bit 16-byte vectors. */
struct half_reg_config {
    int max_cols, tpr, fpt, block;
};
static constexpr half_reg_config HREG[] = {
    {8, 1, 8, 128},        {16, 2, 8, 128},       {32, 4, 8, 128},       {64, 8, 8, 128},
    {128, 16, 8, 128},     {256, 32, 8, 128},     {512, 32, 16, 128},    {1024, 32, 32, 128},
    {2048, 128, 16, 128},  {4096, 256, 16, 256},  {8192, 256, 32, 256},  {16384, 512, 32, 512},
    {32768, 1024, 32, 1024},
};
#define HNREG (int)(sizeof HREG / sizeof HREG[0])
static_assert(HREG[HNREG - 1].max_cols == HALF_MAX_REGISTER_COLS, "the table covers the register path");

#define HALF_BIG_BLOCK 1024
#define HALF_STATIC_SMEM_RESERVE 1024

static unsigned half_grid(long long rows, int per_block)
{
    const long long blocks = (rows + per_block - 1) / per_block;
    return (unsigned)(blocks < INT_MAX ? blocks : INT_MAX);
}

/* PEEL: the classes of rows past HALF_PEEL_MIN_COLS only (their rows have
 * a lane for each extra); half_access peels no shorter row. */
#define HALF_PEEL_MIN_COLS 256
#define HALF_PEEL_CLASS 6 /* the first class past HALF_PEEL_MIN_COLS */
static_assert(HREG[HALF_PEEL_CLASS - 1].max_cols == HALF_PEEL_MIN_COLS, "the classes that peel");

template <class T, int VEC, int I, bool PEEL>
static void half_launch_registers(const void *x, long long ldx, void *y, long long ldy, long long rows,
                                  long long cols, int mis, cudaStream_t stream)
{
    constexpr half_reg_config C = HREG[I];
    static_assert(C.tpr * C.fpt >= C.max_cols && C.fpt % 8 == 0, "capacity holds the class");
    constexpr bool P = PEEL && I >= HALF_PEEL_CLASS;
    void (*kernel)(const T *, long long, T *, long long, long long, int, int) =
        half_registers_kernel<T, VEC, C.fpt, C.tpr, C.block, P>;
    kernel<<<half_grid(rows, C.block / C.tpr), C.block, 0, stream>>>((const T *)x, ldx, (T *)y, ldy, rows, (int)cols,
                                                                     mis);
    CUDA_CHECK_LAUNCH();
}

/* Class i's instance, found at compile time: one per class of HREG. */
template <class T, int VEC, bool PEEL, int I = 0>
static void half_run_registers(int i, const void *x, long long ldx, void *y, long long ldy, long long rows,
                               long long cols, int mis, cudaStream_t s)
{
    if constexpr (I == HNREG - 1) half_launch_registers<T, VEC, I, PEEL>(x, ldx, y, ldy, rows, cols, mis, s);
    else if (i == I) half_launch_registers<T, VEC, I, PEEL>(x, ldx, y, ldy, rows, cols, mis, s);
    else half_run_registers<T, VEC, PEEL, I + 1>(i, x, ldx, y, ldy, rows, cols, mis, s);
}

long long half_shared_capacity(dtype t)
{
    int dev, optin;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    const long long n = ((long long)optin - HALF_STATIC_SMEM_RESERVE) / dtype_size(t);
    return n > 0 ? n / 8 * 8 : 0; /* whole 16-byte vectors */
}

int half_access(const void *x, long long ldx, const void *y, long long ldy, long long rows, long long cols, dtype t)
{
    const uintptr_t ax = (uintptr_t)x, ay = (uintptr_t)y;
    const long long e16 = 16 / dtype_size(t); /* elements per 16 bytes */
    /* One row: its stride is never used, so it cannot misalign anything. */
    const long long sx = rows > 1 ? ldx : 0, sy = rows > 1 ? ldy : 0;
    if (ax % 16 == 0 && ay % 16 == 0 && cols % e16 == 0 && sx % e16 == 0 && sy % e16 == 0) return HALF_VEC16;
    const int same_cut = t == DTYPE_F32 ? view_can_peel((const float *)x, ldx, (const float *)y, ldy, rows)
                                        : view16_can_peel(x, ldx, y, ldy, rows);
    if (same_cut && cols > HALF_PEEL_MIN_COLS) return HALF_PEELED;
    if (dtype_size(t) == 2 && ax % 4 == 0 && ay % 4 == 0 && cols % 2 == 0 && sx % 2 == 0 && sy % 2 == 0)
        return HALF_VEC4;
    return HALF_SCALAR;
}

static int half_reg_index(long long cols)
{
    for (int i = 0; i < HNREG; i++)
        if (cols <= HREG[i].max_cols) return i;
    return -1;
}

/* PEEL: mis is the base's offset from 16 bytes, in elements. */
template <class T, int VEC, bool PEEL = false>
static half_fused_path half_launch(half_fused_path want, const void *x, long long ldx, void *y, long long ldy,
                                   long long rows, long long cols, dtype t, cudaStream_t stream, int mis = 0)
{
    const int reg = half_reg_index(cols);
    if (reg >= 0 && (want == HALF_FUSED_AUTO || want == HALF_FUSED_REGISTERS)) {
        half_run_registers<T, VEC, PEEL>(reg, x, ldx, y, ldy, rows, cols, mis, stream);
        return HALF_FUSED_REGISTERS;
    }
    if (want != HALF_FUSED_CHUNKED && cols <= half_shared_capacity(t)) {
        const long long smem = cols * (long long)sizeof(T);
        void (*kernel)(const T *, long long, T *, long long, long long, int, int) =
            half_shared_kernel<T, VEC, HALF_BIG_BLOCK, PEEL>;
        SMEM_OPT_IN(kernel, smem); /* above 48 KB a kernel must opt in (common/check.h) */
        kernel<<<half_grid(rows, 1), HALF_BIG_BLOCK, (size_t)smem, stream>>>((const T *)x, ldx, (T *)y, ldy, rows,
                                                                             (int)cols, mis);
        CUDA_CHECK_LAUNCH();
        return HALF_FUSED_SHARED;
    }
    void (*chunked)(const T *, long long, T *, long long, long long, long long, int) =
        half_chunked_kernel<T, VEC, HALF_BIG_BLOCK, PEEL>;
    chunked<<<half_grid(rows, 1), HALF_BIG_BLOCK, 0, stream>>>((const T *)x, ldx, (T *)y, ldy, rows, cols, mis);
    CUDA_CHECK_LAUNCH();
    return HALF_FUSED_CHUNKED;
}

template <class T>
static half_fused_path half_launch_access(half_fused_path want, int access, const void *x, long long ldx, void *y,
                                          long long ldy, long long rows, long long cols, dtype t, cudaStream_t s)
{
    if (access == HALF_VEC16) return half_launch<T, 16 / sizeof(T)>(want, x, ldx, y, ldy, rows, cols, t, s);
    if (access == HALF_PEELED) {
        const int mis = sizeof(T) == 4 ? view_mis((const float *)x) : view16_mis(x);
        return half_launch<T, 16 / sizeof(T), true>(want, x, ldx, y, ldy, rows, cols, t, s, mis);
    }
    if constexpr (sizeof(T) == 2)
        if (access == HALF_VEC4) return half_launch<T, 2>(want, x, ldx, y, ldy, rows, cols, t, s);
    return half_launch<T, 1>(want, x, ldx, y, ldy, rows, cols, t, s);
}

void half_check_args(const char *who, long long ldx, long long ldy, long long rows, long long cols, dtype t)
{
    if (t != DTYPE_F32 && t != DTYPE_F16 && t != DTYPE_BF16) {
        fprintf(stderr, "%s: unknown storage type %d\n", who, (int)t);
        exit(2);
    }
    if (rows > 1 && (ldx < cols || ldy < cols)) {
        fprintf(stderr, "%s: row strides ldx = %lld, ldy = %lld must be >= cols = %lld\n", who, ldx, ldy, cols);
        exit(2);
    }
}

half_fused_path softmax_half_fused_run(half_fused_path want, const void *x, long long ldx, void *y, long long ldy,
                                       long long rows, long long cols, dtype t, cudaStream_t stream)
{
    half_check_args("softmax_half_fused", ldx, ldy, rows, cols, t);
    if (rows < 1 || cols < 1) return HALF_FUSED_AUTO; /* nothing to do; a 0-block grid is an error */
    const int access = half_access(x, ldx, y, ldy, rows, cols, t);
    switch (t) {
    case DTYPE_F16: return half_launch_access<__half>(want, access, x, ldx, y, ldy, rows, cols, t, stream);
    case DTYPE_BF16: return half_launch_access<__nv_bfloat16>(want, access, x, ldx, y, ldy, rows, cols, t, stream);
    default: return half_launch_access<float>(want, access, x, ldx, y, ldy, rows, cols, t, stream);
    }
}

void softmax_half_fused(const void *x, long long ldx, void *y, long long ldy, long long rows, long long cols, dtype t,
                        cudaStream_t stream)
{
    softmax_half_fused_run(HALF_FUSED_AUTO, x, ldx, y, ldy, rows, cols, t, stream);
}

const char *half_fused_path_name(half_fused_path p)
{
    switch (p) {
    case HALF_FUSED_REGISTERS: return "registers";
    case HALF_FUSED_SHARED: return "shared memory";
    case HALF_FUSED_CHUNKED: return "chunked (3 reads + 1 write)";
    default: return "auto";
    }
}
