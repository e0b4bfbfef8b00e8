/* Lesson 5: the fused softmax (the fused-kernel walkthrough's one-row-per-block kernel, in CUDA).
 *
 * Lessons 1-4 read every element of a row several times from global
 * memory: once for the max, once for the sum, once more to write the
 * output. Here the row is read ONCE, kept on chip while the max and the sum
 * are computed, and written ONCE:
 *
 *     global memory traffic = 1 read + 1 write = 8 bytes per element,
 *
 * exactly what a device-to-device copy moves, so a copy is the speed limit.
 *
 * Where "on chip" is depends on the row length (README.md has the table):
 *   - registers (fused_registers_kernel): up to 32768 floats. Each thread
 *     holds FPT floats of its row in an array of registers; short rows are
 *     shared by part of a warp (several rows per warp), long rows by a
 *     whole block;
 *   - shared memory (fused_shared_kernel): up to the device's opt-in limit
 *     (227 KB on an H100, ~57 800 floats), raised above the 48 KB default
 *     with cudaFuncSetAttribute;
 *   - beyond that, nothing on one SM can hold the row: fused_chunked_kernel
 *     reads it three times (max, sum, write), 16 bytes per element. Lesson
 *     6 brings that to 12; lesson 8 splits such rows across SMs.
 *
 * Every kernel takes row strides (ldx, ldy, in elements) so it works on
 * views, and moves 128-bit float4s when the views allow it (VEC = 4),
 * single floats otherwise (VEC = 1): same code, a template parameter.
 * With PEEL (VEC = 4), each row of a misaligned view is cut at its 16-byte
 * boundaries (view_cut.cuh): 0-6 head and tail floats one at a time, the
 * body in float4s. The host peels when every row of x starts at the same
 * offset from 16 bytes as the same row of y.
 *
 * Why C++ templates: a register array must have a size known at compile
 * time (float v[FPT]), and every loop over it must be unrolled completely,
 * or the compiler puts the array in local memory, which is DRAM. Making
 * FPT, VEC, the threads per row and the block size template parameters
 * gives one kernel source and a separate, fully unrolled machine-code
 * kernel for every row length class; the host picks one at run time. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "softmax_fused.h"
#include "device/vec.cuh"
#include "device/view_cut.cuh"
#include "device/row_reduce.cuh"
#include "check.h"

/* load_vec / store_vec<VEC> (vec.cuh): VEC = 4 only where
 * softmax_fused_can_use_float4() or the peeled cut guarantees 16-byte
 * alignment. */

/* ---- path 1: the row in registers --------------------------------------------
 * VEC: floats per access (4 or 1). FPT: floats of the row per thread.
 * TPR: threads per row. BLOCK: threads per block (BLOCK / TPR rows).
 *
 * Thread `sub` of a row holds the vectors sub, sub + TPR, sub + 2 TPR, ...:
 * at each step the row's threads touch consecutive vectors, so the loads
 * are coalesced. All FPT / VEC loads are issued before the first use, so
 * each thread has its whole share of the row in flight at once.
 * Positions past the end of the row hold -inf: they change neither the max
 * nor the sum (exp(-inf - m) = 0) and are never stored. The one exception,
 * m = -inf, is a row of only -inf, whose answer is NaN anyway.
 *
 * cols <= FUSED_MAX_REGISTER_COLS here, so positions inside a row fit an
 * int; row offsets (row * ldx) are 64-bit. */
template <int VEC, bool PEEL, int FPT, int TPR, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fused_registers_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y,
                       long long ldy, long long rows, int cols, int mis)
{
    static_assert(FPT % VEC == 0, "whole vectors per thread");
    static_assert(BLOCK % TPR == 0 && (TPR <= 32 || TPR == BLOCK), "a row: part of a warp, or the block");
    static_assert(!PEEL || VEC == 4, "peeling keeps float4 bodies");
    constexpr int ITEMS = FPT / VEC;
    constexpr int ROWS_PER_BLOCK = BLOCK / TPR;
    /* With PEEL, each thread also holds X of the row's (at most 6) head
     * and tail floats: extra sub + e * TPR in v[FPT + e]. */
    constexpr int X = PEEL ? (VIEW_MAX_EXTRAS + TPR - 1) / TPR : 0;
    __shared__ float red_max[32], red_sum[32]; /* used only when TPR > 32 */

    const int sub = threadIdx.x % TPR;
    const int nvec_aligned = cols / VEC; /* without PEEL */

    /* A grid-stride loop over groups of rows; `first` is the same for the
     * whole block, so the barriers inside are reached by all its threads. */
    for (long long first = (long long)blockIdx.x * ROWS_PER_BLOCK; first < rows;
         first += (long long)gridDim.x * ROWS_PER_BLOCK) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < rows; /* a dead lane still joins the shuffles */
        const float *xr = x + (live ? row : 0) * ldx;
        view_cut cut = {0, 0, nvec_aligned};
        if constexpr (PEEL) cut = view_row_cut(live ? row : 0, ldx, mis, cols);
        const int nvec = PEEL ? (int)cut.nvec : nvec_aligned;
        const float *xb = xr + cut.head; /* the body: vectors of VEC floats */

        /* The one read of the row. */
        float v[FPT + X];
        for (int i = 0; i < ITEMS; i++) {
            const int k = i * TPR + sub;
            if (live && k < nvec) {
                load_vec<VEC>(xb + k * VEC, &v[i * VEC]);
            } else {
                for (int j = 0; j < VEC; j++) v[i * VEC + j] = -INFINITY;
            }
        }
        for (int e = 0; e < X; e++) v[FPT + e] = live ? view_extra_load(xr, cut, sub + e * TPR) : -INFINITY;

        /* max: -inf is its identity. fmaxf skips NaN, but a NaN still
         * reaches every output through exp(NaN - m) in the sum. */
        float m = -INFINITY;
        for (int p = 0; p < FPT + X; p++) m = fmaxf(m, v[p]);
        m = row_reduce<TPR>(m, red_max, op_max());

        /* exp once per element, kept in place of x; then the sum. */
        float s = 0.0f;
        for (int p = 0; p < FPT + X; p++) {
            v[p] = expf(v[p] - m);
            s += v[p];
        }
        s = row_reduce<TPR>(s, red_sum, op_sum());

        /* s >= 1 (the max contributes exp(0) = 1) unless the row holds NaN
         * or only -inf; then s is NaN and so is every output. */
        const float inv = 1.0f / s;

        /* The one write of the row. */
        float *yr = y + (live ? row : 0) * ldy;
        float *yb = yr + cut.head;
        for (int i = 0; i < ITEMS; i++) {
            const int k = i * TPR + sub;
            if (live && k < nvec) {
                for (int j = 0; j < VEC; j++) v[i * VEC + j] *= inv;
                if constexpr (PEEL) view_store4(yb + k * VEC, &v[i * VEC]); /* see view_cut.cuh */
                else store_vec<VEC>(yb + k * VEC, &v[i * VEC]);
            }
        }
        for (int e = 0; e < X; e++)
            if (live && sub + e * TPR < cut.nextra) yr[view_extra_at(cut, sub + e * TPR)] = v[FPT + e] * inv;
    }
}

/* ---- path 2: the row in shared memory -----------------------------------------
 * One block per row. Pass 1 copies the row from global memory into the
 * block's dynamic shared memory (64 bytes per thread in flight) and takes
 * the max; pass 2 replaces each element by exp(x - m) in shared memory and
 * sums; pass 3 writes exp * (1 / sum) to global memory. Only pass 1 reads
 * global memory.
 *
 * Element vector k always belongs to thread k % BLOCK, in all three passes
 * and for every row: each thread reads back only what it wrote itself, so
 * the row data needs no barrier (only the two reductions have one). */
template <int VEC, bool PEEL, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fused_shared_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y,
                    long long ldy, long long rows, int cols, int mis)
{
    static_assert(!PEEL || VEC == 4, "peeling keeps float4 bodies");
    constexpr int U = 16 / VEC; /* 64 bytes per thread in flight */
    extern __shared__ float4 fused_smem[]; /* float4: 16-byte aligned for VEC = 4 */
    __shared__ float red_max[32], red_sum[32];
    float *srow = reinterpret_cast<float *>(fused_smem);
    const int nvec_aligned = cols / VEC; /* without PEEL; cols <= the shared-memory capacity: an int */

    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const float *xr = x + row * ldx;
        view_cut cut = {0, 0, nvec_aligned};
        if constexpr (PEEL) cut = view_row_cut(row, ldx, mis, cols);
        const int nvec = PEEL ? (int)cut.nvec : nvec_aligned;
        const float *xb = xr + cut.head;
        /* PEEL: threads 0-5 hold the head and tail floats in a register. */
        const float e = PEEL ? view_extra_load(xr, cut, threadIdx.x) : -INFINITY;
        float m = e;
        for (int k0 = threadIdx.x; k0 < nvec; k0 += U * BLOCK) {
            float v[U * VEC];
            for (int u = 0; u < U; u++) { /* U loads in flight, then U stores */
                const int k = k0 + u * BLOCK;
                if (k < nvec) {
                    load_vec<VEC>(xb + (long long)k * VEC, &v[u * VEC]);
                } else {
                    for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
                }
            }
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * BLOCK;
                if (k < nvec) store_vec<VEC>(srow + k * VEC, &v[u * VEC]);
            }
            for (int p = 0; p < U * VEC; p++) m = fmaxf(m, v[p]);
        }
        m = row_reduce<BLOCK>(m, red_max, op_max());

        float s = PEEL ? expf(e - m) : 0.0f; /* 0 for -inf, unless m = -inf too: then NaN, as it should */
        for (int k = threadIdx.x; k < nvec; k += BLOCK) {
            float v[VEC];
            load_vec<VEC>(srow + k * VEC, v);
            for (int j = 0; j < VEC; j++) {
                v[j] = expf(v[j] - m);
                s += v[j];
            }
            store_vec<VEC>(srow + k * VEC, v);
        }
        s = row_reduce<BLOCK>(s, red_sum, op_sum());
        const float inv = 1.0f / s;

        float *yr = y + row * ldy;
        float *yb = yr + cut.head;
        for (int k = threadIdx.x; k < nvec; k += BLOCK) {
            float v[VEC];
            load_vec<VEC>(srow + k * VEC, v);
            for (int j = 0; j < VEC; j++) v[j] *= inv;
            if constexpr (PEEL) view_store4(yb + (long long)k * VEC, v);
            else store_vec<VEC>(yb + (long long)k * VEC, v);
        }
        if (PEEL && (int)threadIdx.x < cut.nextra) yr[view_extra_at(cut, threadIdx.x)] = expf(e - m) * inv;
    }
}

/* ---- path 3: the row does not fit: three passes over global memory ----------
 * One block per row, 64 bytes per thread in flight in each pass. Reads
 * the row three times (max; sum of exp; exp / sum written): 16 bytes per
 * element, unless re-reads hit in L2. Any cols, including more than 2^31:
 * every position is 64-bit. */
template <int VEC, bool PEEL, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fused_chunked_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y,
                     long long ldy, long long rows, long long cols, int mis)
{
    static_assert(!PEEL || VEC == 4, "peeling keeps float4 bodies");
    constexpr int U = 16 / VEC; /* 64 bytes per thread in flight */
    constexpr long long STEP = (long long)U * BLOCK;
    __shared__ float red_max[32], red_sum[32];
    const long long nvec_aligned = cols / VEC; /* without PEEL */

    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const float *xr = x + row * ldx;
        float *yr = y + row * ldy;
        view_cut cut = {0, 0, nvec_aligned};
        if constexpr (PEEL) cut = view_row_cut(row, ldx, mis, cols);
        const long long nvec = PEEL ? cut.nvec : nvec_aligned;
        const float *xb = xr + cut.head;
        float *yb = yr + cut.head;
        /* PEEL: threads 0-5 hold the head and tail floats in a register. */
        const float e = PEEL ? view_extra_load(xr, cut, threadIdx.x) : -INFINITY;

        float m = e; /* read 1 */
        for (long long k0 = threadIdx.x; k0 < nvec; k0 += STEP) {
            float v[U * VEC];
            for (int u = 0; u < U; u++) {
                const long long k = k0 + (long long)u * BLOCK;
                if (k < nvec) {
                    load_vec<VEC>(xb + k * VEC, &v[u * VEC]);
                } else {
                    for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
                }
            }
            for (int p = 0; p < U * VEC; p++) m = fmaxf(m, v[p]);
        }
        m = row_reduce<BLOCK>(m, red_max, op_max());

        float s = PEEL ? expf(e - m) : 0.0f; /* read 2 */
        for (long long k0 = threadIdx.x; k0 < nvec; k0 += STEP) {
            float v[U * VEC];
            for (int u = 0; u < U; u++) {
                const long long k = k0 + (long long)u * BLOCK;
                if (k < nvec) {
                    load_vec<VEC>(xb + k * VEC, &v[u * VEC]);
                } else {
                    for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
                }
            }
            for (int p = 0; p < U * VEC; p++) s += expf(v[p] - m);
        }
        s = row_reduce<BLOCK>(s, red_sum, op_sum());
        const float inv = 1.0f / s;

        for (long long k0 = threadIdx.x; k0 < nvec; k0 += STEP) { /* read 3, write */
            float v[U * VEC];
            for (int u = 0; u < U; u++) {
                const long long k = k0 + (long long)u * BLOCK;
                if (k < nvec) load_vec<VEC>(xb + k * VEC, &v[u * VEC]);
            }
            for (int u = 0; u < U; u++) {
                const long long k = k0 + (long long)u * BLOCK;
                if (k < nvec) {
                    for (int j = 0; j < VEC; j++) v[u * VEC + j] = expf(v[u * VEC + j] - m) * inv;
                    if constexpr (PEEL) view_store4(yb + k * VEC, &v[u * VEC]);
                    else store_vec<VEC>(yb + k * VEC, &v[u * VEC]);
                }
            }
        }
        if (PEEL && (int)threadIdx.x < cut.nextra) yr[view_extra_at(cut, threadIdx.x)] = expf(e - m) * inv;
    }
}

/* ---- the host side: choosing and launching ---------------------------------- */

/* The register configurations, shortest rows first: the first whose
 * capacity (threads per row x floats per thread) holds the row is used.
 * The same table serves VEC = 4 and VEC = 1 (then each thread makes 4x as
 * many 32-bit accesses for the same FPT).
 *   - up to 1024 floats, a row is shared by 1 ... 32 lanes of a warp, so a
 *     warp holds 32 / TPR rows and no reduction needs a barrier;
 *   - above, a block per row; FPT stays at 16-32 floats (8-24 more
 *     registers for indices and pointers), so that a 1024-thread block
 *     fits in the 64 registers per thread it may have, and smaller blocks
 *     leave room for several blocks per SM, whose loads overlap each
 *     other's reductions. */
struct reg_config {
    int max_cols, tpr, fpt, block;
};
static constexpr reg_config REG[] = {
    {4, 1, 4, 128},        {8, 1, 8, 128},        {16, 2, 8, 128},     {32, 4, 8, 128},
    {64, 8, 8, 128},       {128, 16, 8, 128},     {256, 32, 8, 128},   {512, 32, 16, 128},
    {1024, 32, 32, 128},   {2048, 128, 16, 128},  {4096, 256, 16, 256}, {8192, 256, 32, 256},
    {16384, 512, 32, 512}, {32768, 1024, 32, 1024},
};
#define NREG (int)(sizeof REG / sizeof REG[0])
static_assert(REG[NREG - 1].max_cols == FUSED_MAX_REGISTER_COLS, "the table covers the register path");

/* Views that are not 16-byte aligned (peeled, or 32-bit): rows of 5 to
 * 128 floats get 4 floats per lane (one float4 when peeled), twice the
 * lanes of REG. At N = 32, 8 lanes, and 6 of them take the row's at most
 * 6 head and tail floats, one each: the peeled view ran at 98.0 % of the
 * aligned speed, against 82.7 % with REG's 4 lanes of 8 floats
 * (2097152 x 32, both bases one float past 16 bytes, H100). More lanes
 * still do worse: with 1 float a lane, each thread has only 4 bytes in
 * flight (docs/experiments/lessons-misaligned-views.md). */
static constexpr reg_config REG_VIEW[] = {
    {4, 1, 4, 128},        {8, 2, 4, 128},        {16, 4, 4, 128},     {32, 8, 4, 128},
    {64, 16, 4, 128},      {128, 32, 4, 128},     {256, 32, 8, 128},   {512, 32, 16, 128},
    {1024, 32, 32, 128},   {2048, 128, 16, 128},  {4096, 256, 16, 256}, {8192, 256, 32, 256},
    {16384, 512, 32, 512}, {32768, 1024, 32, 1024},
};
static_assert(sizeof REG_VIEW == sizeof REG, "one configuration per row class");

/* The shared-memory and chunked kernels: one block of 1024 threads per row
 * (the dispatcher gives them only rows of more than 32768 floats). Shorter
 * rows reach them only when a test forces the path: those get 256 threads,
 * which tests the same code with 8 warps instead of 32 and spares the CPU
 * emulator 768 idle fibers per row. */
#define BIG_BLOCK 1024
#define SMALL_BLOCK 256
#define SMALL_BLOCK_MAX_COLS 8192
static int block_for(long long cols) { return cols <= SMALL_BLOCK_MAX_COLS ? SMALL_BLOCK : BIG_BLOCK; }
/* Bytes of shared memory the kernels declare statically (red_max, red_sum),
 * rounded up: the dynamic part may use the rest of the per-block limit. */
#define STATIC_SMEM_RESERVE 1024

/* Blocks for a grid-stride loop over `rows` rows, `per_block` at a time:
 * one block per group of rows, at most INT_MAX (the grid's x limit). */
static unsigned grid_for(long long rows, int per_block)
{
    long long blocks = (rows + per_block - 1) / per_block;
    return (unsigned)(blocks < INT_MAX ? blocks : INT_MAX);
}

template <int VEC, bool PEEL, int I>
static void launch_registers(const float *x, long long ldx, float *y, long long ldy,
                             long long rows, long long cols, cudaStream_t stream)
{
    constexpr reg_config C = PEEL || VEC == 1 ? REG_VIEW[I] : REG[I];
    static_assert(C.max_cols <= C.tpr * C.fpt && C.max_cols == REG[I].max_cols, "capacity holds the row class");
    void (*kernel)(const float *, long long, float *, long long, long long, int, int) =
        fused_registers_kernel<VEC, PEEL, C.fpt, C.tpr, C.block>;
    kernel<<<grid_for(rows, C.block / C.tpr), C.block, 0, stream>>>(x, ldx, y, ldy, rows, (int)cols,
                                                                      view_mis(x));
    CUDA_CHECK_LAUNCH();
}

template <int VEC, bool PEEL>
static void run_registers(int index, const float *x, long long ldx, float *y, long long ldy,
                          long long rows, long long cols, cudaStream_t stream)
{
    switch (index) {
    case 0: launch_registers<VEC, PEEL, 0>(x, ldx, y, ldy, rows, cols, stream); break;
    case 1: launch_registers<VEC, PEEL, 1>(x, ldx, y, ldy, rows, cols, stream); break;
    case 2: launch_registers<VEC, PEEL, 2>(x, ldx, y, ldy, rows, cols, stream); break;
    case 3: launch_registers<VEC, PEEL, 3>(x, ldx, y, ldy, rows, cols, stream); break;
    case 4: launch_registers<VEC, PEEL, 4>(x, ldx, y, ldy, rows, cols, stream); break;
    case 5: launch_registers<VEC, PEEL, 5>(x, ldx, y, ldy, rows, cols, stream); break;
    case 6: launch_registers<VEC, PEEL, 6>(x, ldx, y, ldy, rows, cols, stream); break;
    case 7: launch_registers<VEC, PEEL, 7>(x, ldx, y, ldy, rows, cols, stream); break;
    case 8: launch_registers<VEC, PEEL, 8>(x, ldx, y, ldy, rows, cols, stream); break;
    case 9: launch_registers<VEC, PEEL, 9>(x, ldx, y, ldy, rows, cols, stream); break;
    case 10: launch_registers<VEC, PEEL, 10>(x, ldx, y, ldy, rows, cols, stream); break;
    case 11: launch_registers<VEC, PEEL, 11>(x, ldx, y, ldy, rows, cols, stream); break;
    case 12: launch_registers<VEC, PEEL, 12>(x, ldx, y, ldy, rows, cols, stream); break;
    default: launch_registers<VEC, PEEL, 13>(x, ldx, y, ldy, rows, cols, stream); break;
    }
}
static_assert(NREG == 14, "run_registers has one case per configuration");

template <int VEC, bool PEEL, int BLOCK>
static void run_shared(const float *x, long long ldx, float *y, long long ldy, long long rows,
                       long long cols, long long smem_bytes, cudaStream_t stream)
{
    void (*kernel)(const float *, long long, float *, long long, long long, int, int) =
        fused_shared_kernel<VEC, PEEL, BLOCK>;
    /* Above 48 KB of shared memory, static and dynamic together, a kernel
     * must opt in; the launch fails with "invalid argument" otherwise
     * (common/check.h). */
    SMEM_OPT_IN(kernel, smem_bytes);
    kernel<<<grid_for(rows, 1), BLOCK, (size_t)smem_bytes, stream>>>(x, ldx, y, ldy, rows, (int)cols,
                                                                    view_mis(x));
    CUDA_CHECK_LAUNCH();
}

template <int VEC, bool PEEL, int BLOCK>
static void run_chunked(const float *x, long long ldx, float *y, long long ldy, long long rows,
                        long long cols, cudaStream_t stream)
{
    void (*kernel)(const float *, long long, float *, long long, long long, long long, int) =
        fused_chunked_kernel<VEC, PEEL, BLOCK>;
    kernel<<<grid_for(rows, 1), BLOCK, 0, stream>>>(x, ldx, y, ldy, rows, cols, view_mis(x));
    CUDA_CHECK_LAUNCH();
}

long long softmax_fused_shared_capacity(void)
{
    int dev, optin;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    long long floats = ((long long)optin - STATIC_SMEM_RESERVE) / (long long)sizeof(float);
    return floats > 0 ? floats / 4 * 4 : 0; /* whole float4s */
}

int softmax_fused_can_use_float4(const float *x, long long ldx, const float *y, long long ldy,
                                 long long cols)
{
    return (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0 && cols % 4 == 0 && ldx % 4 == 0 &&
           ldy % 4 == 0;
}

int softmax_fused_can_peel(const float *x, long long ldx, const float *y, long long ldy, long long rows)
{
    return view_can_peel(x, ldx, y, ldy, rows);
}

int softmax_fused_access(const float *x, long long ldx, const float *y, long long ldy, long long rows,
                         long long cols)
{
    if (softmax_fused_can_use_float4(x, ldx, y, ldy, cols)) return FUSED_FLOAT4;
    if (softmax_fused_can_peel(x, ldx, y, ldy, rows) && !view_y_holes_short(ldy, rows, cols)) return FUSED_PEELED;
    return FUSED_32BIT;
}

const char *fused_path_name(fused_path p)
{
    switch (p) {
    case FUSED_REGISTERS: return "registers";
    case FUSED_SHARED: return "shared memory";
    case FUSED_CHUNKED: return "chunked (3 reads + 1 write)";
    default: return "auto";
    }
}

static int register_index(long long cols)
{
    for (int i = 0; i < NREG; i++)
        if (cols <= REG[i].max_cols) return i;
    return -1;
}

fused_plan softmax_fused_plan(fused_path want, int access, long long cols)
{
    const int big = block_for(cols);
    fused_plan p = {FUSED_CHUNKED, access != FUSED_32BIT, access == FUSED_PEELED, big, 0, big, 1, 0};
    const int reg = register_index(cols);
    const int fits_registers = reg >= 0;
    /* Ask the device only when the answer matters. */
    const int fits_shared = (want == FUSED_SHARED || (want == FUSED_AUTO && !fits_registers)) &&
                            cols <= softmax_fused_shared_capacity();

    if (fits_registers && (want == FUSED_AUTO || want == FUSED_REGISTERS)) {
        p.path = FUSED_REGISTERS;
        const reg_config *T = access == FUSED_FLOAT4 ? REG : REG_VIEW;
        p.threads_per_row = T[reg].tpr;
        p.floats_per_thread = T[reg].fpt;
        p.block = T[reg].block;
        p.rows_per_block = T[reg].block / T[reg].tpr;
    } else if (fits_shared && want != FUSED_CHUNKED) {
        p.path = FUSED_SHARED;
        p.threads_per_row = p.block = big;
        p.smem_bytes = cols * (long long)sizeof(float);
    } else if (want == FUSED_REGISTERS || want == FUSED_SHARED) {
        return softmax_fused_plan(FUSED_AUTO, access, cols); /* does not fit that path */
    }
    return p;
}

template <int VEC, bool PEEL>
static void launch_plan(const fused_plan *p, const float *x, long long ldx, float *y, long long ldy,
                        long long rows, long long cols, cudaStream_t stream)
{
    switch (p->path) {
    case FUSED_REGISTERS:
        run_registers<VEC, PEEL>(register_index(cols), x, ldx, y, ldy, rows, cols, stream);
        break;
    case FUSED_SHARED:
        if (p->block == BIG_BLOCK) run_shared<VEC, PEEL, BIG_BLOCK>(x, ldx, y, ldy, rows, cols, p->smem_bytes, stream);
        else run_shared<VEC, PEEL, SMALL_BLOCK>(x, ldx, y, ldy, rows, cols, p->smem_bytes, stream);
        break;
    default:
        if (p->block == BIG_BLOCK) run_chunked<VEC, PEEL, BIG_BLOCK>(x, ldx, y, ldy, rows, cols, stream);
        else run_chunked<VEC, PEEL, SMALL_BLOCK>(x, ldx, y, ldy, rows, cols, stream);
        break;
    }
}

fused_plan softmax_fused_run(fused_path want, const float *x, long long ldx, float *y,
                             long long ldy, long long rows, long long cols, cudaStream_t stream)
{
    if (rows > 1 && (ldx < cols || ldy < cols)) {
        fprintf(stderr, "softmax_fused: row strides ldx = %lld, ldy = %lld must be >= cols = %lld\n",
                ldx, ldy, cols);
        exit(2); /* a usage error, as every bad argument in the course */
    }
    const int access = softmax_fused_access(x, ldx, y, ldy, rows, cols);
    const fused_plan p = softmax_fused_plan(want, access, cols);
    if (rows < 1 || cols < 1) return p; /* nothing to do; a 0-block grid is an error */

    if (access == FUSED_FLOAT4) launch_plan<4, false>(&p, x, ldx, y, ldy, rows, cols, stream);
    else if (access == FUSED_PEELED) launch_plan<4, true>(&p, x, ldx, y, ldy, rows, cols, stream);
    else launch_plan<1, false>(&p, x, ldx, y, ldy, rows, cols, stream);
    return p;
}

void softmax_fused_strided(const float *x, long long ldx, float *y, long long ldy,
                           long long rows, long long cols, cudaStream_t stream)
{
    softmax_fused_run(FUSED_AUTO, x, ldx, y, ldy, rows, cols, stream);
}

void softmax_fused(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    softmax_fused_run(FUSED_AUTO, x, cols, y, cols, rows, cols, stream);
}

void softmax_fused_shared(const float *x, float *y, long long rows, long long cols,
                          cudaStream_t stream)
{
    softmax_fused_run(FUSED_SHARED, x, cols, y, cols, rows, cols, stream);
}

void softmax_fused_chunked(const float *x, float *y, long long rows, long long cols,
                           cudaStream_t stream)
{
    softmax_fused_run(FUSED_CHUNKED, x, cols, y, cols, rows, cols, stream);
}
