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
 * fastest_rows16_kernel, that holds the row as loaded (path1_2_rows16.cuh). */
#include <math.h>

#include "check.h"
#include "path1_2_rows.cuh" /* the kernels and their launchers, for any operation */

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

/* Lesson 9: the same kernels for 16-bit storage; vec4 means 16-byte
 * vectors of 8 elements, peel that they are cut out of misaligned rows
 * (the plan peels only rows of 16 threads or more: 14 extras). */
void fx_run_rows_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                    long long rows, long long cols, cudaStream_t stream)
{
    if (t == DTYPE_F16)
        fx_run_rows_op<rows_op_softmax>(p, (const __half *)x, ldx, (__half *)y, ldy, rows, cols, stream);
    else
        fx_run_rows_op<rows_op_softmax>(p, (const __nv_bfloat16 *)x, ldx, (__nv_bfloat16 *)y, ldy, rows, cols,
                                        stream);
}
