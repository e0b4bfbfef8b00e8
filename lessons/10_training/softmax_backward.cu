/* Lesson 10: the softmax backward, dx = y * (dy - <y, dy>) per row.
 *
 * The Jacobian of y = softmax(x) is diag(y) - y y^T (README.md): one dot product per row, then one elementwise
 * pass, never the N x N matrix. Lesson 8's row engine runs it as an operation of two inputs: y and dy read once and
 * dx written once, 12 bytes per element, 1.5 x a copy's 8; a row too long to wait on chip for its sum is split
 * (path 4), y and dy read twice, 20 bytes per element (the second read partly from L2). */
#include "check.h"
#include "train_engine.h"
#include "device/rows_run.cuh" /* the row engine, for any operation */

/* The backward as an operation of the row engine (rows_op.cuh): the row's sum is <y, dy>; padding adds 0 to it. */
struct op_softmax_backward {
    static constexpr int NIN = 2;
    static constexpr bool ROW = false, OUT = true;
    static constexpr bool KEEP_EXP = false;
    static constexpr int FPT_MIN = 4;
    struct fin {
        float dot;
    };
    static __device__ __forceinline__ float term(float y, float dy) { return y * dy; }
    static __device__ __forceinline__ fin finish_sum(float s) { return fin{s}; }
    static __device__ __forceinline__ float out2(float y, float dy, fin f) { return y * (dy - f.dot); }
};

fastest_plan backward_plan_at(long long rows, long long cols)
{
    const float *a = TRAIN_PLAN_ADDR;
    return fx_plan_op<op_softmax_backward>(train_engine_want(cols), a, cols, (float *)a, cols, rows, cols);
}

void softmax_backward(const float *y, const float *dy, float *dx, long long rows, long long cols,
                      cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    fx_run_op<op_softmax_backward>(train_engine_want(cols), y, cols, dx, cols, rows, cols, stream,
                                   fx_in2{dy, cols});
}
