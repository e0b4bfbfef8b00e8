/* Taught in lesson 8. Paths 1 and 2 of the row engine: the row in registers
 * (lessons/08_fastest/README.md, "Path 1" and "Path 2"). One kernel for
 * both: TPR neighbouring lanes of a warp share a row (path 1, N <= 1024:
 * 1 ... 32 lanes, several rows per warp, no barrier at all), or a whole
 * block of 128 ... 1024 threads does (path 2, N <= 32768). Each element is
 * read once and written once with nothing but registers in between, so
 * these paths take every row up to 16384 floats, and up to 32768 with at
 * least SMs/4 rows: at 132 x 32768, 88.7-90.3 % of copy against path 3's
 * 78.6-78.8 %, H100 (docs/experiments/rows-dispatcher.md). The row-length
 * classes are FX_REG (fastest_paths.h), one kernel instance each. Lesson
 * 9's 16-bit rows in path 2's larger classes take a second kernel,
 * fastest_rows16_kernel, that holds the row as loaded (below). */
#include <math.h>

#include "check.h"
#include "path1_2_rows.cuh" /* the kernel and its launchers, for any operation */


/* ---- path 2 for 16-bit rows: the row held as loaded ------------------------
 * The kernel above widens each element on load, so a 16-bit row takes a
 * float row's registers: at N = 16384 (512 threads x 32 floats, 59-64
 * registers) two blocks fit per SM, 64 KB of float16 row in flight where
 * a float row has 128 KB, and at 32768 (1024 x 32) one block. This kernel
 * keeps the 16-byte words as they came, FPT / 2 registers, and goes over
 * them three times:
 *   max:   in 16 bits, two elements per instruction (__hmax2: VHMNMX on
 *          sm_90, three inputs), exact, then one pair widened;
 *   sum:   each pair widened (two cvt), exp, added;
 *   store: widened again, exp again, scaled, rounded once.
 * One more cvt pair and ex2 pair per word than the float kernel, and twice
 * the blocks per SM. The sum and the store compute what the kernel above
 * does, in the same order; the 16-bit max is the same value (both keep
 * the larger of two numbers and the number beside a NaN), so the same
 * bits come out. Aligned views only (VEC 8, no peel), one row per block.
 * The three passes' helpers (fx_words16_*) are in fastest_device.cuh:
 * lesson 10's classifier holds its 16-bit rows the same way. */
/* Blocks per SM the registers are capped for: the words (FPT / 2) and 16
 * more for the row's pointers, m, d and the loop, rounded up to the 8
 * registers a thread is given at a time, within 64K registers and 2048
 * threads an SM. nvcc then fits every class without a spill (ptxas -v,
 * sm_90): 32 registers a thread up to 32 elements, 4 blocks of 512 x 32
 * where the kernel above fits 2. Measured on sm_90 only, so below it no
 * cap (as path 3's FX_CLUSTER_MIN_CTAS; ptxas rejects a cap above what an
 * SM holds, 1024 or 1536 threads on sm_75, sm_86, sm_89). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define FX_ROWS16_MIN_BLOCKS(FPT, BLOCK) 0
#else
#define FX_ROWS16_MIN_BLOCKS(FPT, BLOCK) fx_rows16_min_blocks(FPT, BLOCK, 16) /* fastest_device.cuh */
#endif

template <int FPT, int BLOCK, class T>
__global__ void __launch_bounds__(BLOCK, FX_ROWS16_MIN_BLOCKS(FPT, BLOCK))
fastest_rows16_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, long long rows,
                      int cols)
{
    static_assert(FPT % 8 == 0, "whole 16-byte words per thread");
    constexpr int ITEMS = FPT / 8;
    __shared__ float red_m[32], red_d[32];
    const unsigned pad = vec16_narrow2(-INFINITY, -INFINITY, x); /* exp(pad - m) = 0 */
    const int nvec = cols / 8;

    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const T *xr = x + row * ldx;
        unsigned w[ITEMS][4];
        fx_words16_load<ITEMS, BLOCK>(xr, nvec, pad, w);
        /* all -inf row: NaN below, as the kernel above */
        const float m = row_reduce<BLOCK>(fx_words16_max(w, pad, x), red_m, op_max());
        const float d = row_reduce<BLOCK>(fx_words16_sum_exp(w, m, x), red_d, op_sum());
        const float scale = 1.0f / d;
        fx_words16_store<ITEMS, BLOCK>(y + row * ldy, nvec, w, m, scale, true, 0.0f);
    }
}


/* The register configuration for cols, from `from` on (0: path 1 first,
 * FX_NWARP: block configurations only); -1 if none holds it. */
int fx_reg_index(long long cols, int from)
{
    for (int i = from; i < FX_NREG; i++)
        if (cols <= FX_REG[i].max_cols) return i;
    return -1;
}

/* How many blocks of register configuration i fit on one SM (its aligned
 * kernel: the class's own shape). The dispatcher gives path 2 every row of
 * a class that fits at least twice (rows_plan.cu). A recursive
 * template, because each configuration is its own kernel instance. */
template <int I>
static int fx_reg_blocks_at(int i)
{
    if constexpr (I < FX_NREG) {
        if (i != I) return fx_reg_blocks_at<I + 1>(i);
        constexpr fx_reg_config C = FX_REG[I];
        int n = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, fastest_rows_kernel<rows_op_softmax, 4, false, C.fpt, C.tpr, C.block>,
                                                                 C.block, 0));
        return n;
    } else {
        (void)i;
        return 0;
    }
}

int fx_reg_blocks_per_sm(int i)
{
    static int cache[FX_NREG];
    if (i < 0 || i >= FX_NREG) return 0;
    if (!cache[i]) cache[i] = fx_reg_blocks_at<0>(i);
    return cache[i];
}

void fx_run_rows(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                 long long cols, cudaStream_t stream)
{
    fx_run_rows_op<rows_op_softmax>(p, x, ldx, y, ldy, rows, cols, stream);
}

/* Launches the 16-bit kernel of register configuration I (a recursive
 * template, as fx_run_rows_at). */
template <int I, class T>
static void fx_launch_rows16(const T *x, long long ldx, T *y, long long ldy, long long rows, long long cols,
                             cudaStream_t stream)
{
    constexpr fx_reg_config C = fx_reg_for(I, 8);
    static_assert(C.tpr == C.block, "path 2's classes: one row per block");
    void (*kernel)(const T *, long long, T *, long long, long long, int) =
        fastest_rows16_kernel<C.fpt, C.block, T>;
    kernel<<<fx_grid(rows, 1), C.block, 0, stream>>>(x, ldx, y, ldy, rows, (int)cols);
    CUDA_CHECK_LAUNCH();
}

template <class T, int I = FX_NWARP>
static void fx_run_rows16_at(int i, const T *x, long long ldx, T *y, long long ldy, long long rows, long long cols,
                             cudaStream_t s)
{
    if constexpr (I < FX_NREG) {
        if (i == I) fx_launch_rows16<I>(x, ldx, y, ldy, rows, cols, s);
        else fx_run_rows16_at<T, I + 1>(i, x, ldx, y, ldy, rows, cols, s);
    } else {
        (void)i, (void)x, (void)ldx, (void)y, (void)ldy, (void)rows, (void)cols, (void)s;
    }
}

/* Lesson 9: the same kernels for 16-bit storage; vec4 means 16-byte
 * vectors of 8 elements, peel that they are cut out of misaligned rows
 * (the plan peels only rows of 16 threads or more: 14 extras). */
template <class T>
static void fx_run_rows_t(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                          long long cols, cudaStream_t stream)
{
    const int i = fx_reg_index(cols, p->path == FASTEST_WARP ? 0 : FX_NWARP);
    /* The row held as loaded where the widened row leaves an SM at most
     * two blocks (512 threads and up): at N = 24576 float16, 70.5 us
     * against 100 us widened (H200). With four blocks an SM already (N =
     * 8192, 256 threads) holding it as loaded gains nothing
     * (docs/experiments/rows-register-classes.md). */
    if (p->path == FASTEST_BLOCK && p->vec4 && !p->peel && fx_reg_blocks_per_sm(i) <= 2) {
        fx_run_rows16_at(i, x, ldx, y, ldy, rows, cols, stream);
        return;
    }
    fx_run_rows_op<rows_op_softmax>(p, x, ldx, y, ldy, rows, cols, stream);
}

void fx_run_rows_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                    long long rows, long long cols, cudaStream_t stream)
{
    if (t == DTYPE_F16) fx_run_rows_t(p, (const __half *)x, ldx, (__half *)y, ldy, rows, cols, stream);
    else fx_run_rows_t(p, (const __nv_bfloat16 *)x, ldx, (__nv_bfloat16 *)y, ldy, rows, cols, stream);
}
