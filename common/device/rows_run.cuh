/* Taught in lesson 8; lesson 10 runs its operations on it. The row engine
 * for any row operation (rows_op.cuh) on float rows: the dispatcher's plan
 * (rows_plan.cu), asked of the operation's own kernels, and the run of
 * paths 1, 2, 3, 3g and 4 with them. Paths 2s and 3b run the softmax only:
 * an operation's plan leaves them out, and the rows they would take go to
 * path 3, 3g or 4 as the dispatcher's next rules say. */
#ifndef COMMON_DEVICE_ROWS_RUN_CUH
#define COMMON_DEVICE_ROWS_RUN_CUH
#include <stdio.h>
#include <stdlib.h>

#include "path1_2_rows.cuh"
#include "path3_cluster.cuh"
#include "path3g_grid.cuh"
#include "path4_split.cuh"

/* What the plan asks of OP's kernels (fastest_paths.h). */
template <class OP>
static const fx_op_kernels *fx_op_kernels_of(void)
{
    static const fx_op_kernels k = {fx_cluster_shape_op<OP, float>, fx_cluster_ctas_per_sm_op<OP, float>,
                                    fx_grid_resident_op<OP, float>, 0};
    return &k;
}

/* The plan fx_run_op makes, without running it. Queries the device. */
template <class OP>
static fastest_plan fx_plan_op(fastest_path want, const float *x, long long ldx, const float *y, long long ldy,
                               long long rows, long long cols)
{
    return fx_plan_f32_for(fx_op_kernels_of<OP>(), want, x, ldx, y, ldy, rows, cols);
}

/* y = OP(x) over rows x cols floats, as fx_run_typed runs the softmax
 * (rows.h: strides, `want`, the plan it returns). */
template <class OP>
static fastest_plan fx_run_op(fastest_path want, const float *x, long long ldx, float *y, long long ldy,
                              long long rows, long long cols, cudaStream_t stream)
{
    if (rows > 1 && (ldx < cols || ldy < cols)) {
        fprintf(stderr, "row engine: row strides ldx = %lld, ldy = %lld must be >= cols = %lld\n", ldx, ldy, cols);
        exit(2); /* a usage error, as every bad argument in the course */
    }
    const fastest_plan p = fx_plan_op<OP>(want, x, ldx, y, ldy, rows, cols);
    if (rows < 1 || cols < 1) return p; /* nothing to do; a 0-block grid is an error */
    switch (p.path) {
    case FASTEST_WARP:
    case FASTEST_BLOCK: fx_run_rows_op<OP>(&p, x, ldx, y, ldy, rows, cols, stream); break;
    case FASTEST_CLUSTER: fx_run_cluster_op<OP>(&p, x, ldx, y, ldy, rows, cols, stream); break;
    case FASTEST_GRID: fx_run_grid_op<OP>(&p, x, ldx, y, ldy, rows, cols, stream); break;
    default: fx_run_split_op<OP>(&p, x, ldx, y, ldy, rows, cols, stream); break;
    }
    return p;
}

#endif
