/* Taught in lesson 8. Paths 1 and 2 of the row engine, the row in
 * registers, for any row operation (rows_op.cuh) and storage type: the
 * launchers of its two kernels as templates, which path1_2_rows.cu
 * instantiates for the softmax and lesson 10 for its operations. */
#ifndef COMMON_DEVICE_PATH1_2_ROWS_CUH
#define COMMON_DEVICE_PATH1_2_ROWS_CUH
#include <math.h>

#include "check.h"
#include "path1_2_kernel.cuh" /* the row as floats      */
#include "path1_2_rows16.cuh" /* 16-bit rows as loaded */

template <class OP, int VEC, bool PEEL, int I, class T = float>
static void fx_launch_rows(const T *x, long long ldx, T *y, long long ldy, long long rows,
                           long long cols, cudaStream_t stream, fx_in2 in2, const OP &op)
{
    constexpr fx_reg_config C = fx_op_class<OP, T>(I, VEC);
    static_assert(C.fpt % 4 == 0 && C.tpr * C.fpt >= C.max_cols, "capacity holds the class");
    if constexpr (OP::NIN == 2) {
        void (*kernel)(const float *, long long, const float *, long long, float *, long long, long long, int, int) =
            fastest_rows2_kernel<OP, VEC, PEEL, C.fpt, C.tpr, C.block>;
        kernel<<<fx_grid(rows, C.block / C.tpr), C.block, 0, stream>>>(x, ldx, in2.x2, in2.ldx2, y, ldy, rows,
                                                                        (int)cols, fx_mis(x));
    } else {
        (void)in2;
        void (*kernel)(const T *, long long, T *, long long, long long, int, int, OP) =
            fastest_rows_kernel<OP, VEC, PEEL, C.fpt, C.tpr, C.block, T>;
        kernel<<<fx_grid(rows, C.block / C.tpr), C.block, 0, stream>>>(x, ldx, y, ldy, rows, (int)cols, fx_mis(x),
                                                                        op);
    }
    CUDA_CHECK_LAUNCH();
}

/* The classes an operation runs: of two inputs, rows of up to half path
 * 2's floats, two arrays of them in registers; PATH1_ONLY, path 1's. */
template <class OP, int I>
static constexpr bool fx_reg_has =
    (OP::NIN == 1 || FX_REG[I].max_cols <= FASTEST_BLOCK_MAX_COLS / 2) && (I < FX_NWARP || !fx_path1_only<OP>());

/* A peeled row's extras, each of which needs a thread of its row. */
template <class T>
static constexpr int fx_rows_extras = fx_is_float<T> ? VIEW_MAX_EXTRAS : VIEW16_MAX_EXTRAS;

/* Whether class I runs peeled rows of T in accesses of VEC for OP: only
 * with a thread per extra (fx_run_rows_op); the others' peeled kernels are
 * never built. */
template <class OP, class T, int I, int VEC>
static constexpr bool fx_rows_peels = fx_op_class<OP, T>(I, VEC).tpr >= fx_rows_extras<T>;

/* Launches configuration i: a recursive template, because each
 * configuration is its own kernel instance. */
template <class OP, int VEC, bool PEEL, class T = float, int I = 0>
static void fx_run_rows_at(int i, const T *x, long long ldx, T *y, long long ldy, long long rows,
                           long long cols, cudaStream_t s, fx_in2 in2, const OP &op)
{
    if constexpr (I < FX_NREG && fx_reg_has<OP, I>) {
        if (i != I) fx_run_rows_at<OP, VEC, PEEL, T, I + 1>(i, x, ldx, y, ldy, rows, cols, s, in2, op);
        else if constexpr (!PEEL || fx_rows_peels<OP, T, I, VEC>)
            fx_launch_rows<OP, VEC, PEEL, I>(x, ldx, y, ldy, rows, cols, s, in2, op);
    } else {
        (void)i, (void)x, (void)ldx, (void)y, (void)ldy, (void)rows, (void)cols, (void)s, (void)in2, (void)op;
    }
}

/* Runs plan p (path 1 or 2) with operation OP on rows of storage type T:
 * 16-byte vectors (4 floats or 8 16-bit elements) where the plan says
 * vec4, peeled where it says peel, single elements otherwise. in2: the
 * second input of a two-input operation. */
template <class OP, class T>
static void fx_run_rows_op(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                           long long cols, cudaStream_t stream, fx_in2 in2 = fx_in2{nullptr, 0}, const OP &op = OP{})
{
    constexpr int V = fx_is_float<T> ? 4 : 8;
    const int i = fx_reg_index(fx_reg_cols(cols, p->peel, V), p->path == FASTEST_WARP ? 0 : FX_NWARP);
    if constexpr (!fx_is_float<T> && OP::NIN == 1 && OP::KEEP_EXP && !fx_path1_only<OP>())
        if (p->vec4 && (!p->peel || fx_rows16_tpr<OP, T>(i) >= VIEW16_MAX_EXTRAS) &&
            (p->path == FASTEST_BLOCK ? fx_rows_held16<OP>(i) : fx_rows_held16_warp<OP, T>(i))) {
            if (p->peel) fx_run_rows16_at<OP, true>(i, x, ldx, y, ldy, rows, cols, stream, op);
            else fx_run_rows16_at<OP, false>(i, x, ldx, y, ldy, rows, cols, stream, op);
            return;
        }
    if (p->peel && fx_op_class<OP, T>(i, V).tpr >= fx_rows_extras<T>) { /* a thread per extra */
        fx_run_rows_at<OP, V, true>(i, x, ldx, y, ldy, rows, cols, stream, in2, op);
        return;
    }
    if (p->peel) fx_run_rows_at<OP, 1, false>(i, x, ldx, y, ldy, rows, cols, stream, in2, op);
    else if (p->vec4) fx_run_rows_at<OP, V, false>(i, x, ldx, y, ldy, rows, cols, stream, in2, op);
    else fx_run_rows_at<OP, 1, false>(i, x, ldx, y, ldy, rows, cols, stream, in2, op);
}

#endif
