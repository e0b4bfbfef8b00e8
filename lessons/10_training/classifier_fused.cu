/* Lesson 10: the fused classifier. The last layer's loss and its gradient
 * in one pass over the logits, the gradient written over the logits:
 *
 *     losses[i] = (m - x[t]) + log(d)
 *     x_j      <- (exp(x_j - m) / d - [j == t]) * dloss,
 *
 * dloss = 1 / count for the mean (count = rows not ignored), 1 for the
 * sum. The probabilities softmax(x) are never stored: each one lives in a
 * register between the exp and the store of its gradient. An unfused
 * pipeline (softmax to an M x N tensor, the loss from it, then the
 * gradient) writes and reads that tensor once more: 16 bytes per element
 * and an extra M x N floats of memory, where this kernel moves
 *
 *     1 read + 1 write = 8 bytes per element (4 for 16-bit logits)
 *
 * while the row fits in registers, and 12 (2 reads + 1 write) for longer
 * rows: kernel 1 writes the pieces' (m, d) and x[t], kernel 2 merges them
 * in each block and writes its piece of the gradient.
 *
 * Small launches go with it: the count of rows not ignored (a read of the
 * M targets) before, and the sum of the M losses after, two stages each. */
#include "check.h"
#include "train_row.cuh"

/* The count of rows not ignored and the dloss of such a row (the mean's
 * 1 / count, 0 / 0 and inf when every row is ignored: no row uses it). */
typedef struct {
    unsigned count;
    float dloss;
} classifier_scale;

/* ---- the two small reductions over M values: the count of rows not
 * ignored (before the main kernel: the mean's dloss) and the sum of the M
 * losses (after it). One block reading M values would take as long as the
 * main kernel at small N (M = 2^21 rows of 32), so each is two stages:
 * CLS_PARTS blocks sum fixed slices into the workspace, one block adds the
 * parts. The slices depend on M only: the same bits every run. */
#define CLS_BLOCK 256
#define CLS_MAX_PARTS 1024

static int classifier_parts(long long rows)
{
    const long long g = (rows + 8 * CLS_BLOCK - 1) / (8 * CLS_BLOCK); /* at least 8 values per thread */
    return (int)(g < 1 ? 1 : g > CLS_MAX_PARTS ? CLS_MAX_PARTS : g);
}

/* Part b of the values: [b * slice, (b + 1) * slice), slice = ceil(rows / parts). */
__device__ __forceinline__ void classifier_slice(long long rows, long long *begin, long long *end)
{
    const long long slice = (rows + gridDim.x - 1) / gridDim.x;
    *begin = blockIdx.x * slice;
    *end = *begin + slice < rows ? *begin + slice : rows;
}

__global__ void __launch_bounds__(CLS_BLOCK)
classifier_count_parts_kernel(const int *__restrict__ targets, long long rows, int ignore_index,
                              unsigned *__restrict__ parts)
{
    __shared__ unsigned red[CLS_BLOCK / 32];
    long long begin, end;
    classifier_slice(rows, &begin, &end);
    unsigned c = 0;
    for (long long i = begin + threadIdx.x; i < end; i += CLS_BLOCK) c += targets[i] != ignore_index;
    for (int off = 16; off > 0; off /= 2) c += __shfl_xor_sync(0xffffffffu, c, off);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = c;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned total = 0;
        for (int w = 0; w < CLS_BLOCK / 32; w++) total += red[w];
        parts[blockIdx.x] = total;
    }
}

__global__ void __launch_bounds__(CLS_BLOCK)
classifier_count_final_kernel(const unsigned *__restrict__ parts, int nparts, train_reduction reduction,
                              classifier_scale *__restrict__ out)
{
    if (threadIdx.x != 0) return; /* at most CLS_MAX_PARTS integers */
    unsigned total = 0;
    for (int b = 0; b < nparts; b++) total += parts[b];
    out->count = total;
    out->dloss = reduction == TRAIN_MEAN ? 1.0f / (float)total : 1.0f;
}

__global__ void __launch_bounds__(CLS_BLOCK)
classifier_loss_parts_kernel(const float *__restrict__ losses, long long rows, float *__restrict__ parts)
{
    __shared__ float red[32];
    long long begin, end;
    classifier_slice(rows, &begin, &end);
    float s = 0.0f;
    for (long long i = begin + threadIdx.x; i < end; i += CLS_BLOCK) s += losses[i];
    s = row_reduce<CLS_BLOCK>(s, red, op_sum());
    if (threadIdx.x == 0) parts[blockIdx.x] = s;
}

/* *loss = the sum of the parts, divided by count for the mean. */
__global__ void __launch_bounds__(CLS_BLOCK)
classifier_loss_final_kernel(const float *__restrict__ parts, int nparts, train_reduction reduction,
                             const classifier_scale *__restrict__ scale, float *__restrict__ loss)
{
    __shared__ float red[32];
    float s = 0.0f;
    for (int b = threadIdx.x; b < nparts; b += CLS_BLOCK) s += parts[b];
    s = row_reduce<CLS_BLOCK>(s, red, op_sum());
    if (threadIdx.x == 0) *loss = reduction == TRAIN_MEAN ? s / (float)scale->count : s;
}

/* The gradient of one element and the loss of a row, by the rules of
 * training.h: an ignored row gives 0 and 0, a target out of range NaN. */
__device__ __forceinline__ float classifier_grad(float p, bool is_t, bool ignored, bool bad, float dloss)
{
    if (ignored) return 0.0f;
    if (bad) return __int_as_float(0x7fc00000);
    return (p - (is_t ? 1.0f : 0.0f)) * dloss;
}

template <class T, int VEC, int FPT, int TPR, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
classifier_registers_kernel(T *logits, const int *__restrict__ targets, float *__restrict__ losses, long long rows,
                            int cols, int ignore_index, const classifier_scale *__restrict__ scale)
{
    constexpr int ROWS_PER_BLOCK = BLOCK / TPR;
    __shared__ float red_max[32], red_sum[32], red_t[32];
    const int sub = threadIdx.x % TPR;
    const float dloss = scale->dloss;
    for (long long first = (long long)blockIdx.x * ROWS_PER_BLOCK; first < rows;
         first += (long long)gridDim.x * ROWS_PER_BLOCK) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < rows;
        const int t = live ? targets[row] : ignore_index;
        const bool ignored = t == ignore_index, bad = !ignored && (t < 0 || t >= cols);
        const int tc = t >= 0 && t < cols ? t : -1; /* the column to pick up: never a slot past the end */
        T *xr = logits + (live ? row : 0) * cols;
        float v[FPT];
        train_load<VEC, FPT, TPR>(xr, cols, sub, live, v, -INFINITY);
        float xt;
        const float m = train_row_max_pick<VEC, FPT, TPR>(v, sub, tc, red_max, red_t, &xt);
        float d = 0.0f;
#pragma unroll
        for (int p = 0; p < FPT; p++) {
            v[p] = expf(v[p] - m);
            d += v[p];
        }
        d = row_reduce<TPR>(d, red_sum, op_sum());
        const float inv = 1.0f / d;
#pragma unroll
        for (int p = 0; p < FPT; p++)
            v[p] = classifier_grad(v[p] * inv, train_col<VEC, TPR>(p / VEC, p % VEC, sub) == tc, ignored, bad, dloss);
        /* In place: every element was read above, by this same thread. */
        train_store<VEC, FPT, TPR>(xr, cols, sub, live, v);
        if (live && sub == 0) losses[row] = ignored ? 0.0f : bad ? __int_as_float(0x7fc00000) : train_row_loss(m, d, xt);
    }
}

/* One element's gradient (train_split_map's op): col is its column in
 * the piece that starts at column begin. */
struct classifier_op {
    float m, inv, dloss;
    long long begin, t;
    bool ignored, bad;
    __device__ float operator()(float v, long long col) const
    {
        return classifier_grad(expf(v - m) * inv, begin + col == t, ignored, bad, dloss);
    }
};

/* Kernel 2 of the split path: the row's (m, d) from its pieces' states,
 * then this piece's gradient, in place, in vectors of VEC elements; piece
 * 0 writes the row's loss. */
template <class T, int VEC>
__global__ void __launch_bounds__(TRAIN_SPLIT_BLOCK)
classifier_split_write_kernel(T *logits, const int *__restrict__ targets, float *__restrict__ losses, long long cols,
                              long long splits, int ignore_index, const online_md *__restrict__ state,
                              const float *__restrict__ xt, const classifier_scale *__restrict__ scale)
{
    __shared__ float red_m[32], red_d[32];
    long long row, begin, len;
    train_piece(splits, cols, &row, &begin, &len);
    const online_md s = train_merge_pieces<TRAIN_SPLIT_BLOCK>(state + row * splits, splits, red_m, red_d);
    const long long t = targets[row];
    const bool ignored = t == ignore_index, bad = !ignored && (t < 0 || t >= cols);
    const float inv = 1.0f / s.d, dloss = scale->dloss;
    const classifier_op op = {s.m, inv, dloss, begin, t, ignored, bad};
    T *xs = logits + row * cols + begin;
    train_split_map<VEC>(xs, xs, len / VEC, op); /* in place */
    if (begin == 0 && threadIdx.x == 0)
        losses[row] = ignored ? 0.0f : bad ? __int_as_float(0x7fc00000) : train_row_loss(s.m, s.d, xt[row]);
}

template <class T, int VEC, int FPT, int TPR, int BLOCK>
static void launch_classifier(T *logits, const int *targets, float *losses, long long rows, long long cols,
                              int ignore_index, const classifier_scale *scale, cudaStream_t stream)
{
    classifier_registers_kernel<T, VEC, FPT, TPR, BLOCK><<<train_grid(rows, BLOCK / TPR), BLOCK, 0, stream>>>(
        logits, targets, losses, rows, (int)cols, ignore_index, scale);
    CUDA_CHECK_LAUNCH();
}

/* T: float, __half or __nv_bfloat16. VW: the elements of a 16-byte vector
 * (4 floats, 8 16-bit values). */
template <class T>
static void classifier_run(T *logits, const int *targets, float *losses, float *loss, long long rows, long long cols,
                           int ignore_index, train_reduction reduction, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    constexpr int VW = 16 / (int)sizeof(T);
    const long long splits = cols > TRAIN_REG_MAX_COLS ? train_splits(cols) : 0;
    const long long batch = splits ? train_split_batch(splits) : rows, nb = batch < rows ? batch : rows;
    /* workspace: the scale, the parts of the two reductions (HEAD bytes), then
     * (split path) nb x splits states and nb floats of x[t] */
    constexpr size_t HEAD = 256 + 2 * CLS_MAX_PARTS * sizeof(float);
    char *w = (char *)train_workspace(HEAD + (size_t)nb * splits * sizeof(online_md) + (size_t)nb * sizeof(float));
    classifier_scale *scale = (classifier_scale *)w;
    unsigned *count_parts = (unsigned *)(w + 256);
    float *loss_parts = (float *)(w + 256 + CLS_MAX_PARTS * sizeof(unsigned));
    online_md *state = (online_md *)(w + HEAD);
    float *xt = (float *)(state + nb * splits);
    const int nparts = classifier_parts(rows);

    classifier_count_parts_kernel<<<nparts, CLS_BLOCK, 0, stream>>>(targets, rows, ignore_index, count_parts);
    CUDA_CHECK_LAUNCH();
    classifier_count_final_kernel<<<1, CLS_BLOCK, 0, stream>>>(count_parts, nparts, reduction, scale);
    CUDA_CHECK_LAUNCH();
    const bool vec = train_aligned(logits, cols, VW);
    switch (train_class(cols)) {
#define CLS_CASE(c, maxc, fpt, tpr, block)                                                                        \
    case c:                                                                                                       \
        if (vec) launch_classifier<T, VW, fpt, tpr, block>(logits, targets, losses, rows, cols, ignore_index, scale, stream); \
        else launch_classifier<T, 1, fpt, tpr, block>(logits, targets, losses, rows, cols, ignore_index, scale, stream);      \
        break;
        TRAIN_CLASSES(CLS_CASE)
#undef CLS_CASE
    default:
        for (long long r0 = 0; r0 < rows; r0 += batch) {
            const long long n = rows - r0 < batch ? rows - r0 : batch, o = r0 * cols;
            train_split_states<T>(logits + o, n, cols, splits, targets + r0, state, xt, vec, stream);
            if (vec)
                classifier_split_write_kernel<T, VW><<<(unsigned)(n * splits), TRAIN_SPLIT_BLOCK, 0, stream>>>(
                    logits + o, targets + r0, losses + r0, cols, splits, ignore_index, state, xt, scale);
            else
                classifier_split_write_kernel<T, 1><<<(unsigned)(n * splits), TRAIN_SPLIT_BLOCK, 0, stream>>>(
                    logits + o, targets + r0, losses + r0, cols, splits, ignore_index, state, xt, scale);
            CUDA_CHECK_LAUNCH();
        }
    }
    classifier_loss_parts_kernel<<<nparts, CLS_BLOCK, 0, stream>>>(losses, rows, loss_parts);
    CUDA_CHECK_LAUNCH();
    classifier_loss_final_kernel<<<1, CLS_BLOCK, 0, stream>>>(loss_parts, nparts, reduction, scale, loss);
    CUDA_CHECK_LAUNCH();
}

void classifier_fused(float *logits, const int *targets, float *losses, float *loss, long long rows, long long cols,
                      int ignore_index, train_reduction reduction, cudaStream_t stream)
{
    classifier_run<float>(logits, targets, losses, loss, rows, cols, ignore_index, reduction, stream);
}

void classifier_fused_typed(void *logits, const int *targets, float *losses, float *loss, long long rows,
                            long long cols, int ignore_index, train_reduction reduction, dtype t, cudaStream_t stream)
{
    if (t == DTYPE_F16)
        classifier_run<__half>((__half *)logits, targets, losses, loss, rows, cols, ignore_index, reduction, stream);
    else if (t == DTYPE_BF16)
        classifier_run<__nv_bfloat16>((__nv_bfloat16 *)logits, targets, losses, loss, rows, cols, ignore_index,
                                      reduction, stream);
    else
        classifier_run<float>((float *)logits, targets, losses, loss, rows, cols, ignore_index, reduction, stream);
}
