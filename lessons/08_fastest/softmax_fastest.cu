/* Lesson 8: the float32 softmax on the row engine (common/device/rows.h):
 * the entry points the program, the tests and the benchmark call. */
#include "softmax_fastest.h"

fastest_plan softmax_fastest_plan(fastest_path want, const float *x, long long ldx, const float *y,
                                  long long ldy, long long rows, long long cols)
{
    return fx_plan_typed(want, DTYPE_F32, x, ldx, y, ldy, rows, cols);
}

fastest_plan softmax_fastest_run(fastest_path want, const float *x, long long ldx, float *y, long long ldy,
                                 long long rows, long long cols, cudaStream_t stream)
{
    return fx_run_typed(want, DTYPE_F32, x, ldx, y, ldy, rows, cols, stream);
}

void softmax_fastest_strided(const float *x, long long ldx, float *y, long long ldy, long long rows,
                             long long cols, cudaStream_t stream)
{
    softmax_fastest_run(FASTEST_AUTO, x, ldx, y, ldy, rows, cols, stream);
}

void softmax_fastest(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    softmax_fastest_run(FASTEST_AUTO, x, cols, y, cols, rows, cols, stream);
}

void softmax_fastest_path(const float *x, float *y, long long rows, long long cols, fastest_path path,
                          cudaStream_t stream)
{
    softmax_fastest_run(path, x, cols, y, cols, rows, cols, stream);
}

void softmax_fastest_warp(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_WARP, s);
}
void softmax_fastest_block(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_BLOCK, s);
}
void softmax_fastest_shared(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_SHARED, s);
}
void softmax_fastest_cluster(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_CLUSTER, s);
}
void softmax_fastest_grid(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_GRID, s);
}
void softmax_fastest_split(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_SPLIT, s);
}
void softmax_fastest_bulk(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, FASTEST_BULK, s);
}
