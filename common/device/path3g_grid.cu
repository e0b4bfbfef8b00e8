/* Taught in lesson 8. Path 3g of the row engine: one row over P independent
 * CTAs of up to 64 KB each, held on chip, the CTAs' (m, d) states traded
 * through global memory with a release add and an acquire load
 * (lessons/08_fastest/README.md, "Path 3g"). Any GPU, as long as it holds a
 * row's P CTAs at once (8.6 M floats on an H100). It wins where a cluster
 * stops: rows above 2^19 (89 % of copy at 64 x 2^20 against path 3's 75 %,
 * H100), and rows too few to give every SM a CTA otherwise
 * (docs/experiments/rows-grid-path.md). */
#include "path3g_grid.cuh"

/* The softmax's kernels: the plan's residency, and the run. */
long long fx_grid_resident(int mode) { return fx_grid_resident_op<rows_op_softmax, float>(mode); }

int softmax_fastest_has_grid(void) { return fx_grid_resident(FX_SCALAR) > 0; }

/* Pieces per row: as many full pieces (fx_grid_cap: 64 KB of floats) as
 * the row needs, more (down to FX_GRID_MIN_PIECE floats' bytes) when there
 * are too few rows to give every SM a CTA: 56.8 % of copy at 1 x 2^20 with
 * 128 pieces against 51.5 % with 64 (H100). Each piece a whole number of
 * float4s. */
void fx_grid_shape(long long rows, long long cols, int esize, int nin, long long *pieces, long long *seg)
{
    const long long cap = fx_grid_cap(esize, nin), least = FX_GRID_MIN_PIECE * 4 / esize; /* in bytes as float's */
    long long p = (cols + cap - 1) / cap;
    const long long fill = (fx_sms() + rows - 1) / rows, most = cols / least;
    if (p < fill) p = fill < most ? fill : most;
    if (p < 1) p = 1;
    long long g = (cols + p - 1) / p;
    g = (g + 3) / 4 * 4;
    *seg = g;
    *pieces = (cols + g - 1) / g;
}

long long fx_grid_smem(long long seg, int esize, int nin)
{
    const long long rest = seg - (long long)FX_GRID_BLOCK * FX_GRID_FPT / nin;
    return rest > 0 ? rest * esize * nin : 0;
}

void fx_run_grid(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                 long long cols, cudaStream_t stream)
{
    fx_run_grid_op<rows_op_softmax>(p, x, ldx, y, ldy, rows, cols, stream);
}

/* Lesson 9: 16-bit storage. mode16 (fx_mode16): 0 one element per
 * access, 1 16-byte vectors of 8 elements, 2 the same, peeled; the plan's
 * pieces are then multiples of 8 elements. */
long long fx_grid_resident_16(dtype t, int mode16)
{
    return t == DTYPE_BF16 ? fx_grid_resident_op<rows_op_softmax, __nv_bfloat16>(mode16)
                           : fx_grid_resident_op<rows_op_softmax, __half>(mode16);
}

void fx_run_grid_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                    long long rows, long long cols, cudaStream_t stream)
{
    if (t == DTYPE_F16)
        fx_run_grid_op<rows_op_softmax>(p, (const __half *)x, ldx, (__half *)y, ldy, rows, cols, stream);
    else
        fx_run_grid_op<rows_op_softmax>(p, (const __nv_bfloat16 *)x, ldx, (__nv_bfloat16 *)y, ldy, rows, cols,
                                        stream);
}
