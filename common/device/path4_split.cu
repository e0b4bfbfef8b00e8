/* Taught in lesson 8. Path 4 of the row engine: each row split over many
 * blocks, read twice (the online-softmax tutorial's block softmax; lessons/08_fastest/README.md,
 * "Path 4"). The path for what no other holds: rows longer than the whole
 * GPU keeps on chip (above 8.6 M floats on an H100). 2 reads + 1 write: at
 * most 67 % of copy, a little more with the second read partly served from
 * L2; still far above one block per row, which uses one SM of 132 when
 * M = 1. */
#include "path4_split.cuh"

/* Path 4: about this many blocks per SM over the whole grid, and at least
 * this many floats per block. */
#define FX_SPLIT_BLOCKS_PER_SM 16
#define FX_SPLIT_MIN_SEG 2048

/* Pieces per row: enough blocks for FX_SPLIT_BLOCKS_PER_SM per SM over
 * the grid, pieces of at least FX_SPLIT_MIN_SEG floats and under 2^30, a
 * multiple of 64 floats each (256-byte aligned inside an aligned row). */
void fx_split_shape(long long rows, long long cols, long long *splits, long long *seg)
{
    const long long target = (long long)FX_SPLIT_BLOCKS_PER_SM * fx_sms();
    long long s = (target + rows - 1) / rows;
    const long long most = (cols + FX_SPLIT_MIN_SEG - 1) / FX_SPLIT_MIN_SEG;
    if (s > most) s = most;
    if (s < (cols >> 30) + 1) s = (cols >> 30) + 1; /* kernel 2 counts a piece's vectors in an int */
    long long g = (cols + s - 1) / s;
    g = (g + 63) / 64 * 64;
    *seg = g;
    *splits = (cols + g - 1) / g;
}

void fx_run_split(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                  long long cols, cudaStream_t stream)
{
    fx_run_split_op<rows_op_softmax>(p, x, ldx, y, ldy, rows, cols, stream);
}

/* Lesson 9: 16-bit storage. */
void fx_run_split_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                     long long rows, long long cols, cudaStream_t stream)
{
    if (t == DTYPE_F16)
        fx_run_split_op<rows_op_softmax>(p, (const __half *)x, ldx, (__half *)y, ldy, rows, cols, stream);
    else
        fx_run_split_op<rows_op_softmax>(p, (const __nv_bfloat16 *)x, ldx, (__nv_bfloat16 *)y, ldy, rows, cols,
                                         stream);
}
