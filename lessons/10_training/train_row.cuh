/* Lesson 10: what the four kernel families share on the device. A row
 * held in registers (lesson 5's path 1), its row-length classes, the
 * split of long rows, and the workspace. Not part of the API (training.h).
 *
 * Row-length classes (TRAIN_CLASSES): a class is (FPT floats per thread,
 * TPR threads per row, BLOCK threads per block) and holds rows of up to
 * FPT * TPR floats. Short rows share a warp (TPR = 8 or 32 lanes), longer
 * ones get a whole block (TPR = BLOCK). Thread `sub` of a row holds the
 * vectors sub, sub + TPR, sub + 2 TPR, ...: at each step the row's threads
 * touch consecutive vectors, so every load and store is coalesced.
 *
 * Why templates: a register array needs a compile-time size (float
 * v[FPT]) and fully unrolled loops, or it lands in local memory (DRAM).
 * FPT, TPR, BLOCK and VEC are therefore template parameters, and each
 * family's host code picks the instance for the row length at run time.
 * The storage type T (float, __half, __nv_bfloat16) is one too, for the
 * 16-bit classifier; everything is computed in float. */
#ifndef LESSON10_TRAIN_ROW_CUH
#define LESSON10_TRAIN_ROW_CUH

#include <math.h>
#include <stddef.h>

#include "check.h"
#include "training.h"
#include "device/vec.cuh"        /* load_vec / store_vec, float and 16-bit */
#include "device/row_reduce.cuh" /* row_reduce<TPR>: part of a warp or a block */
#include "device/online_md.cuh" /* the (m, d) state and its merges */
#include "device/fastest_device.cuh" /* fx_exp, fx_push: ex2.approx for 16-bit rows */

/* X(class, max_cols, FPT, TPR, BLOCK). FPT is a multiple of 8 so that a
 * 16-bit row moves in 16-byte vectors of 8 elements (VEC 8) and a float
 * row in float4s (VEC 4). One class per power of two: a row that fills
 * half of its class's slots leaves half the registers it occupies idle,
 * and fewer bytes in flight per SM: with classes two powers of two
 * apart, the rows that half filled theirs ran the loss as low as 62 % of
 * its bound, where full classes ran at 93 % or more (H100;
 * docs/experiments/training-row-classes.md). 32 floats per thread in a
 * warp (<= 1024) leaves room for the backward's two arrays; 16 per thread
 * for the block classes keeps 1024-thread blocks within 64 registers per
 * thread. From 2048 on a row's block doubles with N (lesson 5's table),
 * and an SM keeps 32 KB or more of rows in flight. */
#define TRAIN_CLASSES(X)                 \
    X(0, 32, 8, 4, 128)                  \
    X(1, 64, 8, 8, 128)                  \
    X(2, 128, 8, 16, 128)                \
    X(3, 256, 8, 32, 128)                \
    X(4, 512, 16, 32, 128)               \
    X(5, 1024, 32, 32, 128)              \
    X(6, 2048, 16, 128, 128)             \
    X(7, 4096, 16, 256, 256)             \
    X(8, 8192, 16, 512, 512)             \
    X(9, TRAIN_REG_MAX_COLS, 16, 1024, 1024)

/* The class of a row length, or -1 past TRAIN_REG_MAX_COLS (split). */
static inline int train_class(long long cols)
{
#define TRAIN_CLASS_OF(c, maxc, fpt, tpr, block) \
    if (cols <= (maxc)) return c;
    TRAIN_CLASSES(TRAIN_CLASS_OF)
#undef TRAIN_CLASS_OF
    return -1;
}

/* Blocks for `rows` rows at BLOCK / TPR rows per block; the kernels loop
 * over the rest (grid-stride), so the grid stays below 2^31. */
static inline unsigned train_grid(long long rows, int rows_per_block)
{
    long long g = (rows + rows_per_block - 1) / rows_per_block;
    return (unsigned)(g < (1LL << 30) ? g : (1LL << 30));
}

/* Whether float4 (or 8 x 16-bit) accesses are safe: every row starts on
 * 16 bytes (cols a multiple of the vector) and so does each base. */
static inline bool train_aligned(const void *p, long long cols, int vec)
{
    return cols % vec == 0 && ((size_t)p % 16) == 0;
}

/* The workspace of the split paths (train_work.cu), at least `bytes`. */
void *train_workspace(size_t bytes);

/* Column of register v[i * VEC + j] of thread `sub`. */
template <int VEC, int TPR>
__device__ __forceinline__ int train_col(int i, int j, int sub)
{
    return (i * TPR + sub) * VEC + j;
}

/* The row's FPT floats of this thread, `fill` where past the end (or the
 * whole row for a dead lane, which still joins the reductions). */
template <int VEC, int FPT, int TPR, class T>
__device__ __forceinline__ void train_load(const T *r, int cols, int sub, bool live, float *v, float fill)
{
    const int nvec = cols / VEC;
    if constexpr (sizeof(T) == 2 && VEC > 1) {
        /* 16-bit vectors: every load issued before any widening. Widened
         * inside each guarded branch, bfloat16's loads went one after the
         * other (the second 16-byte load behind the first's branch in
         * SASS; float16's were predicated and issued together), and its
         * classifier ran at 79.4 % of the copy at 8192 x 8192 against
         * float16's 87.2 (H100). fill (0 or -inf) is exact in 16 bits. */
        unsigned w[FPT / VEC][VEC / 2];
        const unsigned fw = vec16_narrow2(fill, fill, r);
#pragma unroll
        for (int i = 0; i < FPT / VEC; i++) {
            const int k = i * TPR + sub;
            if (live && k < nvec) {
                vec16_load_words<VEC>(r + k * VEC, w[i]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC / 2; j++) w[i][j] = fw;
            }
        }
#pragma unroll
        for (int i = 0; i < FPT / VEC; i++) vec16_widen_words<VEC>(w[i], &v[i * VEC], r);
    } else {
#pragma unroll
        for (int i = 0; i < FPT / VEC; i++) {
            const int k = i * TPR + sub;
            if (live && k < nvec) {
                load_vec<VEC>(r + k * VEC, &v[i * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[i * VEC + j] = fill;
            }
        }
    }
}

template <int VEC, int FPT, int TPR, class T>
__device__ __forceinline__ void train_store(T *r, int cols, int sub, bool live, const float *v)
{
    const int nvec = cols / VEC;
#pragma unroll
    for (int i = 0; i < FPT / VEC; i++) {
        const int k = i * TPR + sub;
        if (live && k < nvec) store_vec<VEC>(r + k * VEC, &v[i * VEC]);
    }
}

/* The row's max and x[tc], the logit of the target column (tc = -1: none),
 * for the loss and the classifier: the thread that holds column tc
 * contributes it to a sum to which every other thread adds 0 (exact).
 * Both reduced together, as lesson 5's row_reduce does one value: a block
 * per row then waits at one barrier for the two, not at two. */
template <int VEC, int FPT, int TPR>
__device__ __forceinline__ float train_row_max_pick(const float *v, int sub, int tc, float *red_max, float *red_t,
                                                    float *xt)
{
    float m = -INFINITY, x = 0.0f;
#pragma unroll
    for (int p = 0; p < FPT; p++) {
        m = fmaxf(m, v[p]);
        if (train_col<VEC, TPR>(p / VEC, p % VEC, sub) == tc) x = v[p];
    }
    constexpr int W = TPR < 32 ? TPR : 32;
    for (int off = W / 2; off > 0; off /= 2) {
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
        x += __shfl_xor_sync(0xffffffffu, x, off);
    }
    if constexpr (TPR > 32) {
        constexpr int WARPS = TPR / 32;
        const int lane = threadIdx.x % 32;
        if (lane == 0) {
            red_max[threadIdx.x / 32] = m;
            red_t[threadIdx.x / 32] = x;
        }
        __syncthreads();
        m = red_max[lane % WARPS];
        x = red_t[lane % WARPS];
        for (int off = WARPS / 2; off > 0; off /= 2) {
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
            x += __shfl_xor_sync(0xffffffffu, x, off);
        }
    }
    *xt = x;
    return m;
}

/* The (m, d) of a row from its `splits` pieces' states, in every thread
 * of the block, bit for bit the same in every block of the row (same
 * loads, same order, same tree). */
template <int BLOCK>
__device__ __forceinline__ online_md train_merge_pieces(const online_md *part, long long splits, float *red_m,
                                                        float *red_d)
{
    online_md s = online_md_identity();
    for (long long k = threadIdx.x; k < splits; k += BLOCK) s = online_md_merge(s, part[k]);
    return online_md_row_merge<BLOCK>(s, red_m, red_d);
}

/* The loss of a row from its (m, d) and x[t]: (m - x[t]) + log(d). m - x[t]
 * first: both may be huge (3e38), their difference is not; d >= 1 for a
 * row with a finite max, so log(d) >= 0 and no cancellation is left. */
__device__ __forceinline__ float train_row_loss(float m, float d, float xt)
{
    return (m - xt) + logf(d);
}

/* Pieces of TRAIN_SPLIT_SEG floats per long row, and their block. The
 * loss, whose long rows always take kernel 1 (one read is all it needs),
 * ran at 92 % of the read pass in blocks of 256 threads against 71 in
 * blocks of 512 (M x N = 2^26, H100); blocks of 1024 are one load deep
 * (docs/experiments/training-row-classes.md). */
#define TRAIN_SPLIT_BLOCK 256
static inline long long train_splits(long long cols) { return (cols + TRAIN_SPLIT_SEG - 1) / TRAIN_SPLIT_SEG; }

/* Vectors in flight per thread in the split paths' loops: 16 floats. */
#define TRAIN_SPLIT_U(VEC) (16 / (VEC) < 1 ? 1 : 16 / (VEC))

/* The write loop of the split paths' second kernels (the classifier): U vectors of `in` loaded (16 elements per thread in
 * flight), then each element replaced by op(value, its column in the
 * piece) and the vector stored to `out`. out may be in (the classifier
 * writes in place): every element is read before the same thread writes
 * it. op is a small struct with a __device__ operator(), as row_reduce's
 * op_max: a template parameter, so the call is inlined. */
template <int VEC, class T, class Op>
__device__ __forceinline__ void train_split_map(const T *in, T *out, long long nvec, Op op)
{
    constexpr int U = TRAIN_SPLIT_U(VEC); /* U loads in flight, then U stores */
    for (long long k0 = threadIdx.x; k0 < nvec; k0 += (long long)U * TRAIN_SPLIT_BLOCK) {
        float v[U * VEC];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long k = k0 + (long long)u * TRAIN_SPLIT_BLOCK;
            if (k < nvec) load_vec<VEC>(in + k * VEC, &v[u * VEC]);
            else for (int j = 0; j < VEC; j++) v[u * VEC + j] = 0.0f;
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long k = k0 + (long long)u * TRAIN_SPLIT_BLOCK;
            if (k >= nvec) continue;
#pragma unroll
            for (int j = 0; j < VEC; j++) v[u * VEC + j] = op(v[u * VEC + j], k * VEC + j);
            store_vec<VEC>(out + k * VEC, &v[u * VEC]);
        }
    }
}

/* Piece b % splits of row b / splits: its row, first column and length
 * (the last piece of a row may be shorter). Pieces start at multiples of
 * TRAIN_SPLIT_SEG, so a row that starts on 16 bytes has pieces that do. */
__device__ __forceinline__ void train_piece(long long splits, long long cols, long long *row, long long *begin,
                                            long long *len)
{
    const long long b = blockIdx.x;
    *row = b / splits;
    *begin = (b % splits) * TRAIN_SPLIT_SEG;
    *len = cols - *begin < TRAIN_SPLIT_SEG ? cols - *begin : TRAIN_SPLIT_SEG;
}

/* Kernel 1 of every (m, d) split path (loss, classifier):
 * block b summarises piece b % splits of row b / splits into state[b].
 * With targets (not NULL), the thread that meets column t = targets[row]
 * stores x[t] in xt[row]: the loss needs it, and the classifier must have
 * it before its second kernel overwrites the row. Each element is read
 * once, in vectors of VEC elements (16 bytes, or 1 element when the rows
 * are not aligned), 16 elements per thread in flight. */
template <class T, int VEC>
__global__ void __launch_bounds__(TRAIN_SPLIT_BLOCK)
train_split_state_kernel(const T *__restrict__ x, long long cols, long long splits, const int *__restrict__ targets,
                         online_md *__restrict__ state, float *__restrict__ xt)
{
    constexpr int U = TRAIN_SPLIT_U(VEC);
    __shared__ float red_m[32], red_d[32];
    long long row, begin, len;
    train_piece(splits, cols, &row, &begin, &len);
    const long long nvec = len / VEC; /* VEC > 1 only when cols % VEC == 0 */
    const T *xs = x + row * cols + begin;
    const long long t = targets ? targets[row] - begin : -1; /* the target's place in this piece */
    online_md s = online_md_identity();
    for (long long k0 = threadIdx.x; k0 < nvec; k0 += (long long)U * TRAIN_SPLIT_BLOCK) {
        float v[U * VEC];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const long long k = k0 + (long long)u * TRAIN_SPLIT_BLOCK;
            if (k < nvec) {
                load_vec<VEC>(xs + k * VEC, &v[u * VEC]);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
            }
        }
        /* x[t] after all U loads are issued: picked up between them, the
         * loads went one at a time */
        if (t >= k0 * VEC && t < (k0 + (long long)U * TRAIN_SPLIT_BLOCK) * VEC) {
#pragma unroll
            for (int u = 0; u < U; u++)
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    if ((k0 + (long long)u * TRAIN_SPLIT_BLOCK) * VEC + j == t) xt[row] = v[u * VEC + j];
        }
        s = fx_push<T, U * VEC>(s, v);
    }
    s = online_md_row_merge<TRAIN_SPLIT_BLOCK>(s, red_m, red_d);
    if (threadIdx.x == 0) state[blockIdx.x] = s;
}

/* Launches kernel 1 with 16-byte vectors when `vec` (rows aligned). */
template <class T>
static void train_split_states(const T *x, long long n, long long cols, long long splits, const int *targets,
                               online_md *state, float *xt, bool vec, cudaStream_t stream)
{
    if (vec)
        train_split_state_kernel<T, (int)(16 / sizeof(T))><<<(unsigned)(n * splits), TRAIN_SPLIT_BLOCK, 0, stream>>>(
            x, cols, splits, targets, state, xt);
    else
        train_split_state_kernel<T, 1><<<(unsigned)(n * splits), TRAIN_SPLIT_BLOCK, 0, stream>>>(x, cols, splits,
                                                                                               targets, state, xt);
    CUDA_CHECK_LAUNCH();
}

/* Rows per launch of a split path: at most 2^30 blocks. */
static inline long long train_split_batch(long long splits)
{
    const long long b = (1LL << 30) / splits;
    return b > 0 ? b : 1;
}

#endif
