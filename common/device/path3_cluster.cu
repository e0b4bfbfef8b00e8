/* Taught in lesson 8. Path 3 of the row engine: one row per thread-block
 * cluster of C = 4 ... 16 CTAs on C SMs (sm_90), each CTA's piece of the
 * row held on chip in registers and shared memory, the CTAs' (m, d) states
 * exchanged through distributed shared memory (lessons/08_fastest/README.md,
 * "Path 3"). It wins where a row is too long for one SM to stream fast
 * enough, 16384 < N <= 2^19, with enough rows (M x C >= SMs/2): 91.5 % of
 * copy or more up to 2^19 at M x N = 2^26 on the H100. At 2^20 one 256 KB
 * CTA per SM leaves DRAM idle through every wait, and path 3g takes over
 * (docs/experiments/rows-cluster-classes.md). */
#include "path3_cluster.cuh"
#include "path3_held.cuh"

long long fx_cluster_smem(int cfg, long long seg, int esize)
{
    const long long rest = seg - (long long)FX_CL[cfg].block * FX_CL[cfg].fpt;
    return rest > 0 ? rest * esize : 0;
}

/* A path 3 kernel over storage type T (float: lesson 8; 16-bit: lesson 9). */
/* The softmax's kernels: what the plan asks of them, and the run. */
int fx_cluster_shape(int mode, long long cols, int *cfg_out, int *c_out)
{
    return fx_cluster_shape_op<rows_op_softmax, float>(mode, cols, cfg_out, c_out);
}

int fx_cluster_ctas_per_sm(int mode, int cfg) { return fx_cluster_ctas_per_sm_op<rows_op_softmax, float>(mode, cfg); }

int softmax_fastest_has_clusters(void)
{
    static int has = -1;
    if (has < 0)
        has = fx_can_launch_clusters((const void *)fx_cluster_kernel_op<rows_op_softmax, float>(FX_ALIGNED, 0));
    return has;
}

void fx_run_cluster(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                    long long cols, cudaStream_t stream)
{
    if (p->held) fx_run_held_t<rows_op_softmax>(p, x, ldx, y, ldy, rows, cols, stream);
    else fx_run_cluster_op<rows_op_softmax>(p, x, ldx, y, ldy, rows, cols, stream);
}

/* Lesson 9: 16-bit storage (mode16: fx_mode16). */
int fx_cluster_shape_16(dtype t, int mode16, long long cols, int *cfg_out, int *c_out)
{
    return t == DTYPE_BF16 ? fx_cluster_shape_op<rows_op_softmax, __nv_bfloat16>(mode16, cols, cfg_out, c_out)
                           : fx_cluster_shape_op<rows_op_softmax, __half>(mode16, cols, cfg_out, c_out);
}

int fx_held_shape(dtype t, long long cols, int peel, int *c_out, long long *seg_out, int *items_out)
{
    if (t == DTYPE_F32) return fx_held_shape_t<rows_op_softmax, float>(cols, peel, c_out, seg_out, items_out);
    if (t == DTYPE_F16) return fx_held_shape_t<rows_op_softmax, __half>(cols, peel, c_out, seg_out, items_out);
    return t == DTYPE_BF16 && fx_held_shape_t<rows_op_softmax, __nv_bfloat16>(cols, peel, c_out, seg_out, items_out);
}

void fx_run_cluster_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                       long long rows, long long cols, cudaStream_t stream)
{
    if (p->held && t == DTYPE_F16)
        fx_run_held_t<rows_op_softmax>(p, (const __half *)x, ldx, (__half *)y, ldy, rows, cols, stream);
    else if (p->held)
        fx_run_held_t<rows_op_softmax>(p, (const __nv_bfloat16 *)x, ldx, (__nv_bfloat16 *)y, ldy, rows, cols,
                                       stream);
    else if (t == DTYPE_F16)
        fx_run_cluster_op<rows_op_softmax>(p, (const __half *)x, ldx, (__half *)y, ldy, rows, cols, stream);
    else
        fx_run_cluster_op<rows_op_softmax>(p, (const __nv_bfloat16 *)x, ldx, (__nv_bfloat16 *)y, ldy, rows, cols,
                                           stream);
}
