/* Taught in lesson 8; lesson 10 runs its operations on it. The row engine
 * for any row operation (rows_op.cuh): the dispatcher's plan (rows_plan.cu,
 * fastest_typed.cu), asked of the operation's own kernels, and the run of
 * paths 1, 2, 3, 3g and 4 with them (an operation of two inputs: float
 * rows, paths 1, 2, 3g and 4), and of path 3b for 16-bit rows. Path 2s
 * runs the softmax only, as 3b does float rows: an operation's plan leaves
 * them out, and the rows they would take go to path 3, 3g or 4 as the
 * dispatcher's next rules say. */
#ifndef COMMON_DEVICE_ROWS_RUN_CUH
#define COMMON_DEVICE_ROWS_RUN_CUH
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "path1_2_rows.cuh"
#include "path3_cluster.cuh"
#include "path3_held.cuh"
#include "path3b_bulk.cuh"
#include "path3g_grid.cuh"
#include "path4_split.cuh"

/* No cluster for an operation of two inputs (fx_op_kernels). */
static inline int fx_no_cluster(int mode, long long cols, int *cfg_out, int *c_out)
{
    (void)mode, (void)cols;
    *cfg_out = 0;
    *c_out = 1;
    return 0;
}

static inline int fx_no_cluster_ctas(int mode, int cfg)
{
    (void)mode, (void)cfg;
    return 0;
}

/* Path 3b runs the operations of one input whose rows are out(exp(x - m), f)
 * (the softmax, the classifier): the piece in shared memory holds x. The
 * copy engine's loads serve the classifier as the softmax (float logits at
 * 2048 x 50304: 0.835 of path 3's time, H200). */
template <class OP>
constexpr bool fx_has_bulk = OP::NIN == 1 && OP::OUT && OP::KEEP_EXP;

/* Path 3b's shape for OP's float kernels (fx_op_kernels' bulk_shape) ... */
template <class OP>
static int fx_bulk_shape_f32_op(dtype t, long long cols, int *c_out, long long *seg_out)
{
    return t == DTYPE_F32 && fx_bulk_shape_op<OP, float>(cols, c_out, seg_out);
}

/* ... or NULL where OP has no path 3b (its kernels then never built). */
template <class OP>
static constexpr auto fx_bulk_shape_f32_of(void)
{
    if constexpr (fx_has_bulk<OP>) return &fx_bulk_shape_f32_op<OP>;
    else return (int (*)(dtype, long long, int *, long long *))nullptr;
}

/* Path 3's held class for the float rows of the operations path 3b runs
 * (lesson 10's classifier: 512 x 151936 in 0.95-0.99 of path 3b's time;
 * peeled by its body, 512 x 151937 in 0.940, H200): its shape for OP's
 * kernels (fx_op_kernels' held_shape). */
template <class OP>
static int fx_held_shape_op(dtype t, long long cols, int peel, int *c_out, long long *seg_out, int *items_out)
{
    return t == DTYPE_F32 && fx_held_shape_t<OP, float>(cols, peel, c_out, seg_out, items_out);
}

template <class OP>
static constexpr auto fx_held_shape_of(void)
{
    if constexpr (fx_has_bulk<OP>) return &fx_held_shape_op<OP>;
    else return (int (*)(dtype, long long, int, int *, long long *, int *))nullptr;
}

/* What the plan asks of OP's kernels (fastest_paths.h). */
template <class OP>
static const fx_op_kernels *fx_op_kernels_of(void)
{
    if constexpr (OP::NIN == 2) {
        static const fx_op_kernels k = {fx_no_cluster, fx_no_cluster_ctas, fx_grid_resident_op<OP, float>,
                                        0, 2, 0, nullptr, nullptr, nullptr, nullptr, 0};
        return &k;
    } else {
        static const fx_op_kernels k = {fx_cluster_shape_op<OP, float>, fx_cluster_ctas_per_sm_op<OP, float>,
                                        fx_grid_resident_op<OP, float>, 0, 1, OP::OUT ? 0 : 1, nullptr, nullptr,
                                        fx_bulk_shape_f32_of<OP>(), fx_held_shape_of<OP>(), 1};
        return &k;
    }
}

/* The queries of OP's 16-bit kernels (fx_op_kernels), the storage type
 * picking the instance. */
template <class OP>
static int fx_cluster_shape16_op(dtype t, int mode16, long long cols, int *cfg_out, int *c_out)
{
    return t == DTYPE_BF16 ? fx_cluster_shape_op<OP, __nv_bfloat16>(mode16, cols, cfg_out, c_out)
                           : fx_cluster_shape_op<OP, __half>(mode16, cols, cfg_out, c_out);
}

template <class OP>
static long long fx_grid_resident16_op(dtype t, int mode16)
{
    return t == DTYPE_BF16 ? fx_grid_resident_op<OP, __nv_bfloat16>(mode16) : fx_grid_resident_op<OP, __half>(mode16);
}

template <class OP>
static int fx_bulk_shape_typed_op(dtype t, long long cols, int *c_out, long long *seg_out)
{
    return t == DTYPE_BF16  ? fx_bulk_shape_op<OP, __nv_bfloat16>(cols, c_out, seg_out)
           : t == DTYPE_F16 ? fx_bulk_shape_op<OP, __half>(cols, c_out, seg_out)
                            : fx_bulk_shape_f32_op<OP>(t, cols, c_out, seg_out);
}

/* What the plan asks of OP's kernels for float and 16-bit rows (one
 * input): its 16-bit kernels are built only for the operations that ask. */
template <class OP>
static const fx_op_kernels *fx_op_kernels16_of(void)
{
    static_assert(OP::NIN == 1, "16-bit rows: operations of one input");
    static fx_op_kernels k = {};
    if (!k.cluster_shape16) {
        k = *fx_op_kernels_of<OP>();
        k.cluster_shape16 = fx_cluster_shape16_op<OP>;
        k.grid_resident16 = fx_grid_resident16_op<OP>;
        if constexpr (fx_has_bulk<OP>) k.bulk_shape = fx_bulk_shape_typed_op<OP>;
        k.bulk_before_block = 0; /* fx_op_kernels: not for 16-bit rows */
    }
    return &k;
}

/* The plan for OP over rows of storage type t (fx_plan_typed's rules). */
template <class OP>
static fastest_plan fx_plan_typed_op(fastest_path want, dtype t, const void *x, long long ldx, const void *y,
                                     long long ldy, long long rows, long long cols)
{
    return fx_plan_typed_for(fx_op_kernels16_of<OP>(), want, t, x, ldx, y, ldy, rows, cols);
}

/* A plan's accesses, made for x and y, kept for a second input only if
 * its rows are cut where x's are: the same offset from a 16-byte boundary
 * in every row (its base, and its stride in whole float4s, as x's). Else
 * one float per access. */
static inline void fx_plan_in2(fastest_plan *p, const float *x, long long ldx, fx_in2 in2)
{
    const int same = ((uintptr_t)in2.x2 - (uintptr_t)x) % 16 == 0 && (in2.ldx2 - ldx) % 4 == 0;
    if (!same) p->vec4 = p->peel = p->x32 = 0;
}

/* The plan fx_run_op makes, without running it. Queries the device. */
template <class OP>
static fastest_plan fx_plan_op(fastest_path want, const float *x, long long ldx, const float *y, long long ldy,
                               long long rows, long long cols)
{
    return fx_plan_f32_for(fx_op_kernels_of<OP>(), want, x, ldx, y, ldy, rows, cols);
}

/* Runs plan p (fx_plan_op's or fx_plan_typed_op's, for these rows of
 * storage type T) with operation OP. */
template <class OP, class T>
static void fx_run_plan_op(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                           long long cols, cudaStream_t stream, fx_in2 in2, const OP &op)
{
    switch (p->path) {
    case FASTEST_WARP:
    case FASTEST_BLOCK: fx_run_rows_op<OP>(p, x, ldx, y, ldy, rows, cols, stream, in2, op); break;
    case FASTEST_CLUSTER:
        if constexpr (fx_has_bulk<OP> && fx_is_float<T>)
            if (p->held) return fx_run_held_t<OP>(p, x, ldx, y, ldy, rows, cols, stream, op);
        if constexpr (OP::NIN == 1) fx_run_cluster_op<OP>(p, x, ldx, y, ldy, rows, cols, stream, op);
        break;
    case FASTEST_BULK: /* planned for fx_has_bulk's operations only */
        if constexpr (fx_has_bulk<OP>) fx_run_bulk_op<OP>(p, x, ldx, y, ldy, rows, cols, stream, op);
        break;
    case FASTEST_GRID: fx_run_grid_op<OP>(p, x, ldx, y, ldy, rows, cols, stream, in2, op); break;
    default: fx_run_split_op<OP>(p, x, ldx, y, ldy, rows, cols, stream, in2, op); break;
    }
}

/* y = OP(x) over rows x cols floats, as fx_run_typed runs the softmax
 * (rows.h: strides, `want`, the plan it returns). An operation of two
 * inputs reads in2.x2 too. */
template <class OP>
static fastest_plan fx_run_op(fastest_path want, const float *x, long long ldx, float *y, long long ldy,
                              long long rows, long long cols, cudaStream_t stream, fx_in2 in2 = fx_in2{nullptr, 0},
                              const OP &op = OP{})
{
    if (rows > 1 && (ldx < cols || ldy < cols || (OP::NIN == 2 && in2.ldx2 < cols))) {
        fprintf(stderr, "row engine: row strides ldx = %lld, ldy = %lld%s must be >= cols = %lld\n", ldx, ldy,
                OP::NIN == 2 ? " and the second input's" : "", cols);
        exit(2); /* a usage error, as every bad argument in the course */
    }
    fastest_plan p = fx_plan_op<OP>(want, x, ldx, y, ldy, rows, cols);
    if (OP::NIN == 2) fx_plan_in2(&p, x, ldx, in2);
    if (rows < 1 || cols < 1) return p; /* nothing to do; a 0-block grid is an error */
    fx_run_plan_op<OP>(&p, x, ldx, y, ldy, rows, cols, stream, in2, op);
    return p;
}

#endif
