/* Lesson 10: log-softmax, out = x - m - log(d), m = max(x), d = sum exp(x - m).
 *
 * Not log(softmax(x)): softmax underflows to 0 for every x more than about 104 below the max, and log(0) = -inf
 * where the answer is a modest -104.x. Here the only exp is inside d, in [1, N]: nothing that matters overflows or
 * underflows (README.md). One more operation of lesson 8's row engine, which reads each row once and hands each
 * element back for this ending. */
#include "check.h"
#include "train_engine.h"
#include "device/rows_run.cuh" /* the row engine, for any operation */

/* The operation (common/device/rows_op.cuh): (x - m) first, exact or nearly for x near m, where the result is
 * small; m = -inf (a row of only -inf) gives NaN, as lesson 2. */
struct op_log_softmax {
    static constexpr int NIN = 1;
    static constexpr bool ROW = false, OUT = true;
    static constexpr bool KEEP_EXP = false;
    static constexpr int FPT_MIN = 8; /* each thread's log over 8 floats at least (fx_reg_op) */
    struct fin {
        float m, lse;
    };
    static __device__ __forceinline__ fin finish(float m, float d) { return fin{m, logf(d)}; }
    static __device__ __forceinline__ float out(float x, fin f) { return (x - f.m) - f.lse; }
};

fastest_plan log_softmax_plan_at(long long rows, long long cols)
{
    const float *a = TRAIN_PLAN_ADDR;
    return fx_plan_op<op_log_softmax>(train_engine_want(cols), a, cols, (float *)a, cols, rows, cols);
}

void log_softmax_forward(const float *x, float *out, long long rows, long long cols, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    fx_run_op<op_log_softmax>(train_engine_want(cols), x, cols, out, cols, rows, cols, stream);
}
