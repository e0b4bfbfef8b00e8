/* Exercise 8: several rows per warp.
 *
 * For short rows a whole warp per row wastes lanes, and a block per row
 * wastes barriers: path 1 of softmax_fastest gives each row EX_LANES = 8
 * neighbouring lanes, so one warp works on 4 rows at once, and every
 * reduction is a few shuffles with no barrier at all.
 *
 * The starter below is complete but for one thing: its reductions use
 * the butterfly of a whole warp (offsets 16, 8, 4, 2, 1), so lanes of
 * different rows exchange values, and the 4 rows of a warp share one max
 * and one sum. Each row then sums to less than 1 (and a NaN in one row
 * spreads to its neighbours). Make each reduction stay inside its group
 * of EX_LANES lanes. Keep every lane in every shuffle (full mask): lanes
 * whose row is past the end of the matrix still take part.
 *
 * `make exercise8` checks it; solutions/08_fastest/exercise.cu is one answer. */
#include <math.h>

#include "check.h"
#include "exercise.h"

#define EX_BLOCK 128

template <class Op>
__device__ __forceinline__ float ex_row_reduce(float v, Op op)
{
    /* TODO: this mixes the 4 rows of the warp. */
    for (int off = 16; off > 0; off /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

struct ex_max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct ex_sum {
    __device__ float operator()(float a, float b) const { return a + b; }
};

__global__ void __launch_bounds__(EX_BLOCK)
rows_per_warp_kernel(const float *__restrict__ x, float *__restrict__ y, long long rows, int cols)
{
    const long long row = (long long)blockIdx.x * (EX_BLOCK / EX_LANES) + threadIdx.x / EX_LANES;
    const int sub = threadIdx.x % EX_LANES;
    const bool live = row < rows;
    float v[EX_FPT];
    float m = -INFINITY;
    for (int i = 0; i < EX_FPT; i++) {
        const int k = i * EX_LANES + sub; /* the row's lanes read neighbouring floats */
        v[i] = live && k < cols ? x[row * cols + k] : -INFINITY;
        m = fmaxf(m, v[i]);
    }
    m = ex_row_reduce(m, ex_max());
    float s = 0.0f;
    for (int i = 0; i < EX_FPT; i++) {
        v[i] = expf(v[i] - m);
        s += v[i];
    }
    s = ex_row_reduce(s, ex_sum());
    const float inv = 1.0f / s;
    for (int i = 0; i < EX_FPT; i++) {
        const int k = i * EX_LANES + sub;
        if (live && k < cols) y[row * cols + k] = v[i] * inv;
    }
}

void softmax_rows_per_warp(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    if (rows < 1 || cols < 1) return;
    const long long per_block = EX_BLOCK / EX_LANES;
    const unsigned blocks = (unsigned)((rows + per_block - 1) / per_block);
    rows_per_warp_kernel<<<blocks, EX_BLOCK, 0, stream>>>(x, y, rows, (int)cols);
    CUDA_CHECK_LAUNCH();
}
