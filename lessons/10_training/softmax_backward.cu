/* Lesson 10: the softmax backward, dx = y * (dy - <y, dy>) per row.
 *
 * The forward y = softmax(x) has the Jacobian dy_i/dx_j = y_i (delta_ij -
 * y_j), so dx_j = sum_i dy_i y_i (delta_ij - y_j) = y_j (dy_j - sum_i y_i
 * dy_i): one dot product per row, then one elementwise pass. Fused, each
 * row of y and dy is read once into registers, the dot product is reduced
 * there, and dx is written once:
 *
 *     2 reads + 1 write = 12 bytes per element (1.5 x a copy's 8),
 *
 * while the row fits in registers (TRAIN_REG_MAX_COLS), and while a
 * longer row's pieces wait on chip for the row's sum (train_grid.cuh).
 * Split, when a row is too long for that: one block per piece sums its
 * part of <y, dy> into the workspace, then a second kernel adds the row's
 * parts and writes its piece: y and dy read twice, 20 bytes per element
 * (the second read partly from L2). */
#include "check.h"
#include "train_grid.cuh"

template <int VEC, int FPT, int TPR, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
backward_registers_kernel(const float *__restrict__ y, const float *dy, float *dx, long long rows, int cols)
{
    constexpr int ROWS_PER_BLOCK = BLOCK / TPR;
    __shared__ float red[32]; /* used only when TPR > 32 */
    const int sub = threadIdx.x % TPR;
    for (long long first = (long long)blockIdx.x * ROWS_PER_BLOCK; first < rows;
         first += (long long)gridDim.x * ROWS_PER_BLOCK) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < rows; /* a dead lane still joins the reduction */
        const long long off = (live ? row : 0) * cols;
        float a[FPT], b[FPT];
        train_load<VEC, FPT, TPR>(y + off, cols, sub, live, a, 0.0f);
        train_load<VEC, FPT, TPR>(dy + off, cols, sub, live, b, 0.0f);
        float s = 0.0f;
#pragma unroll
        for (int p = 0; p < FPT; p++) s += a[p] * b[p];
        s = row_reduce<TPR>(s, red, op_sum());
#pragma unroll
        for (int p = 0; p < FPT; p++) a[p] *= b[p] - s;
        train_store<VEC, FPT, TPR>(dx + off, cols, sub, live, a);
        /* One reduction per row, one shared array: a fast warp's next row
         * must not overwrite red before a slow warp has read this row's
         * (common/device/row_reduce.cuh). Only a grid-stride loop that
         * goes round comes here, and only with a block per row. */
        if constexpr (TPR > 32) __syncthreads();
    }
}

/* Both split kernels' loads: U vectors of y and of dy from vector k0 on
 * (TRAIN_SPLIT_BLOCK apart), zeros past nvec (they add 0 to the dot). */
template <int VEC, int U>
__device__ __forceinline__ void backward_load2(const float *ys, const float *dys, long long k0, long long nvec,
                                               float *a, float *b)
{
#pragma unroll
    for (int u = 0; u < U; u++) {
        const long long k = k0 + (long long)u * TRAIN_SPLIT_BLOCK;
        if (k < nvec) {
            load_vec<VEC>(ys + k * VEC, &a[u * VEC]);
            load_vec<VEC>(dys + k * VEC, &b[u * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) a[u * VEC + j] = b[u * VEC + j] = 0.0f;
        }
    }
}

/* ---- rows longer than TRAIN_REG_MAX_COLS: block b = piece b % splits of
 * row b / splits, vectors of VEC floats. Kernel 1: the piece's part of
 * <y, dy> to part[b], 16 floats of each per thread in flight. */
template <int VEC>
__global__ void __launch_bounds__(TRAIN_SPLIT_BLOCK)
backward_split_dot_kernel(const float *__restrict__ y, const float *__restrict__ dy, long long cols,
                          long long splits, float *__restrict__ part)
{
    constexpr int U = TRAIN_SPLIT_U(VEC);
    __shared__ float red[32];
    long long row, begin, len;
    train_piece(splits, cols, &row, &begin, &len);
    const float *ys = y + row * cols + begin, *dys = dy + row * cols + begin;
    const long long nvec = len / VEC;
    float s = 0.0f;
    for (long long k0 = threadIdx.x; k0 < nvec; k0 += (long long)U * TRAIN_SPLIT_BLOCK) {
        float a[U * VEC], b[U * VEC];
        backward_load2<VEC, U>(ys, dys, k0, nvec, a, b);
#pragma unroll
        for (int p = 0; p < U * VEC; p++) s += a[p] * b[p];
    }
    s = row_reduce<TRAIN_SPLIT_BLOCK>(s, red, op_sum());
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}

/* Kernel 2: every block of a row adds the row's parts (the same sum in
 * each), then writes its piece. */
template <int VEC>
__global__ void __launch_bounds__(TRAIN_SPLIT_BLOCK)
backward_split_write_kernel(const float *__restrict__ y, const float *dy, float *dx, long long cols,
                            long long splits, const float *__restrict__ part)
{
    __shared__ float red[32];
    long long row, begin, len;
    train_piece(splits, cols, &row, &begin, &len);
    const float s = train_sum_pieces<TRAIN_SPLIT_BLOCK>(part + row * splits, splits, red);
    const float *ys = y + row * cols + begin, *dys = dy + row * cols + begin;
    float *dxs = dx + row * cols + begin;
    constexpr int U = TRAIN_SPLIT_U(VEC); /* U vectors of y and of dy in flight, then U stores */
    const long long nvec = len / VEC;
    for (long long k0 = threadIdx.x; k0 < nvec; k0 += (long long)U * TRAIN_SPLIT_BLOCK) {
        float a[U * VEC], b[U * VEC];
        backward_load2<VEC, U>(ys, dys, k0, nvec, a, b);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long k = k0 + (long long)u * TRAIN_SPLIT_BLOCK;
            if (k >= nvec) continue;
#pragma unroll
            for (int j = 0; j < VEC; j++) a[u * VEC + j] *= b[u * VEC + j] - s;
            store_vec<VEC>(dxs + k * VEC, &a[u * VEC]);
        }
    }
}

/* Both kernels of the split path, for n rows. */
template <int VEC>
static void backward_split(const float *y, const float *dy, float *dx, long long n, long long cols, long long splits,
                           float *part, cudaStream_t stream)
{
    backward_split_dot_kernel<VEC><<<(unsigned)(n * splits), TRAIN_SPLIT_BLOCK, 0, stream>>>(y, dy, cols, splits, part);
    CUDA_CHECK_LAUNCH();
    backward_split_write_kernel<VEC><<<(unsigned)(n * splits), TRAIN_SPLIT_BLOCK, 0, stream>>>(y, dy, dx, cols, splits,
                                                                                               part);
    CUDA_CHECK_LAUNCH();
}

/* Long rows on chip: y and dy of a CTA's piece, half of its 64 KB each
 * (8 floats a thread in registers, 24 KB in shared memory), the piece's
 * part of <y, dy>, the row's sum from the exchange, then dx. */
#define BACKWARD_GRID_FPT (TRAIN_GRID_FPT / 2)
#define BACKWARD_GRID_RCAP (TRAIN_GRID_BLOCK * BACKWARD_GRID_FPT)
template <int VEC>
__global__ void __launch_bounds__(TRAIN_GRID_BLOCK) /* no minimum: train_grid.cuh, TRAIN_GRID_MIN_CTAS */
backward_grid_kernel(const float *__restrict__ y, const float *dy, float *dx, long long cols, int pieces, int seg,
                     unsigned *sync, float *work)
{
    extern __shared__ float4 train_grid_smem[];
    __shared__ float red[32];
    long long row, begin;
    int piece, len;
    train_onchip_take<false>(sync, pieces, seg, cols, &row, &piece, &begin, &len);
    const long long off = row * cols + begin;
    const int nvec_s = len > BACKWARD_GRID_RCAP ? (len - BACKWARD_GRID_RCAP) / VEC : 0;
    float *sy = reinterpret_cast<float *>(train_grid_smem);
    float *sdy = sy + (seg > BACKWARD_GRID_RCAP ? seg - BACKWARD_GRID_RCAP : 0);
    float a[BACKWARD_GRID_FPT], b[BACKWARD_GRID_FPT];
    train_onchip_load<VEC, BACKWARD_GRID_FPT, false>(y + off, len, a, sy, 0.0f);
    train_onchip_load<VEC, BACKWARD_GRID_FPT, false>(dy + off, len, b, sdy, 0.0f);
    float s = 0.0f;
#pragma unroll
    for (int p = 0; p < BACKWARD_GRID_FPT; p++) s += a[p] * b[p];
    for (int k = threadIdx.x; k < nvec_s; k += TRAIN_GRID_BLOCK) {
        float u[VEC], w[VEC];
        load_vec<VEC>(sy + k * VEC, u);
        load_vec<VEC>(sdy + k * VEC, w);
#pragma unroll
        for (int j = 0; j < VEC; j++) s += u[j] * w[j];
    }
    s = row_reduce<TRAIN_GRID_BLOCK>(s, red, op_sum());
    unsigned before = 0;
    const float S = train_grid_exchange_sum(s, work + row * pieces, piece, pieces, &sync[1 + row], red, &before);
    /* dx may be dy: this CTA read its whole piece of dy before the exchange */
    const int nvec_r = (len < BACKWARD_GRID_RCAP ? len : BACKWARD_GRID_RCAP) / VEC;
#pragma unroll
    for (int i = 0; i < BACKWARD_GRID_FPT / VEC; i++) {
        const int k = i * TRAIN_GRID_BLOCK + (int)threadIdx.x;
        if (k < nvec_r) {
#pragma unroll
            for (int j = 0; j < VEC; j++) a[i * VEC + j] *= b[i * VEC + j] - S;
            store_vec<VEC>(dx + off + k * VEC, &a[i * VEC]);
        }
    }
    float *ds = dx + off + BACKWARD_GRID_RCAP;
    for (int k = threadIdx.x; k < nvec_s; k += TRAIN_GRID_BLOCK) {
        float u[VEC], w[VEC];
        load_vec<VEC>(sy + k * VEC, u);
        load_vec<VEC>(sdy + k * VEC, w);
#pragma unroll
        for (int j = 0; j < VEC; j++) u[j] *= w[j] - S;
        store_vec<VEC>(ds + k * VEC, u);
    }
    train_onchip_leave<false>(&sync[1 + row], before, pieces);
}

/* The on-chip plan for rows x cols (false: the pieces do not fit). */
template <int VEC>
static bool backward_grid_plan(long long rows, long long cols, train_grid_plan *p)
{
    return train_grid_make_plan(rows, cols, BACKWARD_GRID_RCAP + TRAIN_GRID_SMEM / 8, BACKWARD_GRID_RCAP, 2, 4,
                                train_grid_resident((const void *)backward_grid_kernel<VEC>), p);
}

int backward_on_chip(long long rows, long long cols)
{
    train_grid_plan p;
    return backward_grid_plan<4>(rows, cols, &p);
}

/* The on-chip path for all rows, if their pieces fit on the GPU at once. */
template <int VEC>
static bool backward_grid(const float *y, const float *dy, float *dx, long long rows, long long cols,
                          cudaStream_t stream)
{
    train_grid_plan p;
    if (!backward_grid_plan<VEC>(rows, cols, &p)) return false;
    const long long batch = train_grid_batch(p.pieces);
    float *work = (float *)train_workspace((size_t)((batch < rows ? batch : rows) * p.pieces) * sizeof(float));
    for (long long r0 = 0; r0 < rows; r0 += batch) {
        const long long n = rows - r0 < batch ? rows - r0 : batch, o = r0 * cols;
        unsigned *sync = train_sync_counters(n + 1);
        train_onchip_launch(&p, n, stream, backward_grid_kernel<VEC>, y + o, dy + o, dx + o, cols, (int)p.pieces,
                            (int)p.seg, sync, work);
    }
    return true;
}

/* One instance's launch (templates: the class's sizes, see train_row.cuh). */
template <int VEC, int FPT, int TPR, int BLOCK>
static void launch_backward(const float *y, const float *dy, float *dx, long long rows, long long cols,
                            cudaStream_t stream)
{
    backward_registers_kernel<VEC, FPT, TPR, BLOCK><<<train_grid(rows, BLOCK / TPR), BLOCK, 0, stream>>>(
        y, dy, dx, rows, (int)cols);
    CUDA_CHECK_LAUNCH();
}

void softmax_backward(const float *y, const float *dy, float *dx, long long rows, long long cols,
                      cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    const bool v4 = train_aligned(y, cols, 4) && train_aligned(dy, cols, 4) && train_aligned(dx, cols, 4);
    switch (train_class(cols)) {
#define BACKWARD_CASE(c, maxc, fpt, tpr, block)                             \
    case c:                                                                 \
        if (v4) launch_backward<4, fpt, tpr, block>(y, dy, dx, rows, cols, stream); \
        else launch_backward<1, fpt, tpr, block>(y, dy, dx, rows, cols, stream);    \
        return;
        TRAIN_CLASSES(BACKWARD_CASE)
#undef BACKWARD_CASE
    default: {
        if (train_long_on_chip() && (v4 ? backward_grid<4>(y, dy, dx, rows, cols, stream)
                                        : backward_grid<1>(y, dy, dx, rows, cols, stream)))
            return;
        const long long splits = train_splits(cols), batch = train_split_batch(splits);
        float *part = (float *)train_workspace((size_t)(batch < rows ? batch : rows) * splits * sizeof(float));
        for (long long r0 = 0; r0 < rows; r0 += batch) {
            const long long n = rows - r0 < batch ? rows - r0 : batch, o = r0 * cols;
            if (v4) backward_split<4>(y + o, dy + o, dx + o, n, cols, splits, part, stream);
            else backward_split<1>(y + o, dy + o, dx + o, n, cols, splits, part, stream);
        }
    }
    }
}
