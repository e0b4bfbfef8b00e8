/* Lesson 10: the fused classifier over 16-bit logits (float logits run on
 * the row engine: classifier.cu, which also holds the small launches and
 * the loss slots' rules this file shares). The last layer's loss and its
 * gradient in one pass over the logits, the gradient written over them:
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
 * while the row fits in registers (16-bit rows of up to 32768 held there
 * as loaded, two elements a register), and while a long row's pieces wait on
 * chip for the row's (m, d) (train_grid.cuh); 12 (2 reads + 1 write) for
 * rows split: kernel 1 writes the pieces' (m, d) and x[t], kernel 2 merges
 * them in each block and writes its piece of the gradient.
 *
 * The reduced loss is finished inside the same kernel when the grid has
 * at most CLS_MAX_BLOCKS blocks: each block adds up the losses it wrote,
 * and the last block to finish adds up the blocks' parts
 * (ce_count_in, ce_total), or for up to CLS_SLOT_ROWS rows in registers and
 * rows on chip in clusters, the last block to start adds up the rows'
 * losses as they come out (ce_slots_total); so it is for up to
 * CLS_ON_CHIP_FINISH_ROWS rows on chip, and for any number in bulk-loaded
 * clusters, where the CTA that wrote a row's loss counts in. Larger
 * grids, more rows on chip and split rows leave the sum to one small
 * launch after the main kernel (launch_classifier and classifier_run say
 * why). The mean needs one more launch before it: the count of rows not
 * ignored, whose inverse scales every gradient. Small launches cost
 * microseconds each, not bytes: at 1024 x 512, where the main kernel
 * takes 7 us, five launches (two stages for the count, two for the sum)
 * took the classifier to 25.5 us, 33 % of its bound (H100). */
#include "check.h"
#include "train_loss.cuh" /* the reduced loss's ends, shared with classifier.cu */
#include "device/bulk_copy.cuh" /* lesson 8's bulk copies and fold (path 3b) */

/* How a launch finishes: the mean's scale (NULL for the sum: dloss = 1),
 * the reduction, where the blocks put their parts of the reduced loss
 * and count themselves done, and the reduced loss (NULL: a later launch
 * adds up the losses). */
typedef struct {
    const classifier_scale *scale;
    train_reduction reduction;
    float *parts;
    unsigned *done;
    float *loss;
    unsigned long long *slots; /* small grids: a row's loss and a flag (ce_slot_put) */
} classifier_finish;

__device__ __forceinline__ float classifier_dloss(const classifier_finish *f) { return f->scale ? f->scale->dloss : 1.0f; }

/* Rows longer than this go on chip across blocks (train_grid.cuh) when
 * their pieces fit, not to a block of 1024 threads in registers: one such
 * block per SM idles through its reductions, where four 256-thread CTAs
 * of the on-chip path hide each other's: 86.1 % of the copy on chip
 * against 81.6 in registers at 4096 x 16384 (H100). At 8192 the two tie
 * (docs/experiments/training-classifier-registers.md). */
#define CLS_ON_CHIP_FROM 8192

/* The small kernels' blocks (threads, and at most this many per grid),
 * and the most blocks of a register kernel that finish the reduced loss
 * themselves. */



/* The gradient of one element and the loss of a row, by the rules of
 * training.h: an ignored row gives 0 and 0, a target out of range NaN. */
__device__ __forceinline__ float classifier_grad(float p, bool is_t, bool ignored, bool bad, float dloss)
{
    if (ignored) return 0.0f;
    if (bad) return __int_as_float(0x7fc00000);
    return (p - (is_t ? 1.0f : 0.0f)) * dloss;
}

/* A row's loss by the rules of training.h: 0 for an ignored row, NaN for
 * a target out of range. */
__device__ __forceinline__ float classifier_row_loss(bool ignored, bool bad, float m, float d, float xt)
{
    return ignored ? 0.0f : bad ? __int_as_float(0x7fc00000) : train_row_loss(m, d, xt);
}

/* The reduced loss's ends (counting in, the total, the loss slots) are
 * train_loss.cuh's, shared with classifier.cu. Counting the blocks in at
 * the end puts trips to L2 in a row after the last stores (the fence,
 * the count, the read of the parts), so small grids take the loss slots
 * instead: 7.1 us against 8.0 at 1024 x 512 (float32, H100;
 * docs/experiments/training-classifier-loss-end.md). The slots follow the
 * two counters in the words that train_sync_counters zeroes once
 * (classifier_run); their kernels are their own template instances
 * (SLOTS), so the kernels of larger grids keep their registers. */

/* The end of a kernel of rows in registers: the block's part of the
 * reduced loss (mine: the losses this thread wrote; any thread may hold a
 * row's), then, with fin->loss, the last block's total. red: 32 floats of
 * shared memory that a slow warp may still be reading. */
template <int BLOCK>
__device__ __forceinline__ void classifier_block_finish(float mine, const classifier_finish *fin, float *red)
{
    __shared__ bool last;
    __syncthreads();
    mine = row_reduce<BLOCK>(mine, red, op_sum());
    if (threadIdx.x == 0) {
        fin->parts[blockIdx.x] = mine;
        if (fin->loss) last = ce_count_in(fin->done, gridDim.x);
    }
    if (!fin->loss) return;
    __syncthreads();
    if (last) ce_total<BLOCK>(fin->parts, gridDim.x, fin->scale, fin->done, fin->loss, red);
}

/* Rows in registers. Per element only what the forward softmax does
 * (widen, max, exp, sum, scale, narrow) and one select: the row's rules
 * (ignored, target out of range) are folded into a scale or a fixed
 * value, x[t] is read from memory by the thread that holds column t, and
 * that thread stores column t a second time, as p - 1, after its vector
 * (its own stores stay in order). Picking x[t] out of the registers and
 * subtracting the one-hot in place cost a compare and a select per
 * element each, which 16-bit logits, half the bytes per element, cannot
 * hide: once per row, float16 rows of 256 ran at 76.8 % of the 16-bit
 * copy against 66.5 per element (H200).
 * PICK: float rows of up to 256 floats keep the per-element way. Their
 * pass is so short that the second, dependent load (x[t] waits for t)
 * lengthens it: 91.4 against 83.2 % of copy at N = 32 (H100). From 512
 * floats on, float rows come within two points either way and take the
 * row-once way, except in the kernels with loss slots (few rows, 16-bit
 * ones too): there the whole kernel is short, and the dependent load
 * costs more than the compares (2 points of float32 at 1024 x 512)
 * (docs/experiments/training-classifier-registers.md).
 *
 * CLS_REG_MIN_BLOCKS: 16-bit rows in 16-byte vectors, 16 floats a
 * thread, in blocks of up to 512 threads, keep 1536 threads per SM (40
 * registers). Left alone, ptxas gave bfloat16's 2048-column class 48
 * registers, 1280 threads per SM: 87.6 % of the copy at 32768 x 2048,
 * 90.6 with the minimum (H100). The 8-float classes (2048 threads) take
 * none: there it cost 1.2 points at N = 32. 0: none (with 1, ptxas gave
 * the float kernels up to 50 % more registers). Aligned 16-bit rows past
 * 1024 elements are held as loaded (classifier_rows16_kernel, below):
 * here the minimum serves the 512-element class and misaligned views. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define CLS_REG_MIN_BLOCKS(T, VEC, FPT, BLOCK) 0 /* measured on sm_90; sm_75 holds only 1024 threads per SM */
#else
#define CLS_REG_MIN_BLOCKS(T, VEC, FPT, BLOCK) \
    (sizeof(T) == 2 && (VEC) == 8 && (FPT) == 16 && (BLOCK) <= 512 ? 1536 / (BLOCK) : 0)
#endif
template <class T, int VEC, int FPT, int TPR, int BLOCK, bool SLOTS>
__global__ void __launch_bounds__(BLOCK, CLS_REG_MIN_BLOCKS(T, VEC, FPT, BLOCK))
classifier_registers_kernel(T *logits, const int *__restrict__ targets, float *__restrict__ losses, long long rows,
                            int cols, int ignore_index, classifier_finish fin)
{
    constexpr int ROWS_PER_BLOCK = BLOCK / TPR;
    constexpr bool PICK = SLOTS || (sizeof(T) == 4 && FPT <= 8 && TPR <= 32);
    __shared__ float red_max[32], red_sum[32], red_t[32];
#if FX_CLUSTER_CODE
    /* the loss kernel after it may be launched once every block has begun
     * (it waits for this grid's end before it reads) */
    cudaTriggerProgrammaticLaunchCompletion();
#endif
    const int sub = threadIdx.x % TPR;
    const float dloss = classifier_dloss(&fin);
    unsigned ticket = 0;
    if constexpr (SLOTS)
        if (threadIdx.x == 0) ticket = atomicAdd(fin.done, 1u); /* used at the end only: the trip overlaps the row */
    float mine = 0.0f; /* the losses this thread wrote, in the order of its rows */
    for (long long first = (long long)blockIdx.x * ROWS_PER_BLOCK; first < rows;
         first += (long long)gridDim.x * ROWS_PER_BLOCK) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < rows;
        const int t = live ? targets[row] : ignore_index;
        const bool ignored = t == ignore_index, bad = !ignored && (t < 0 || t >= cols), plain = !ignored && !bad;
        /* tc, not `plain ? t : -1`: with that, the compiler issued
         * targets[row] after the row's loads, and 256-float rows ran at
         * 79.5 % of copy against 92.1 (H200; same registers) */
        const int tc = t >= 0 && t < cols ? t : -1; /* the column to pick up: never a slot past the end */
        /* the thread whose vectors hold column t (train_col) */
        const bool owner = live && plain && (t / VEC) % TPR == sub;
        T *xr = logits + (live ? row : 0) * cols;
        float v[FPT];
        train_load<VEC, FPT, TPR>(xr, cols, sub, live, v, -INFINITY);
        float xt = 0.0f, m = -INFINITY;
        if constexpr (PICK) {
            m = train_row_max_pick<VEC, FPT, TPR>(v, sub, tc, red_max, red_t, &xt);
        } else {
            if (owner) xt = elem_load(xr + t); /* after the row's loads, as the on-chip path */
#pragma unroll
            for (int p = 0; p < FPT; p++) m = fmaxf(m, v[p]);
            m = row_reduce<TPR>(m, red_max, op_max());
        }
        float d = 0.0f;
#pragma unroll
        for (int p = 0; p < FPT; p++) {
            v[p] = fx_exp<T>(v[p] - m); /* ex2.approx for 16-bit logits (classifier_op says why) */
            d += v[p];
        }
        d = row_reduce<TPR>(d, red_sum, op_sum());
        const float inv = 1.0f / d, scale = inv * dloss;
        const float fixed = ignored ? 0.0f : __int_as_float(0x7fc00000); /* 0 whatever an ignored row holds */
        const bool writer = live && (plain && !PICK ? owner : sub == 0); /* writes the row's loss */
        const float l = classifier_row_loss(ignored, bad, m, d, xt);
        if constexpr (SLOTS)
            if (writer) ce_slot_put(fin.slots + row, l); /* before the row's gradient */
#pragma unroll
        for (int p = 0; p < FPT; p++) {
            if constexpr (PICK)
                v[p] = classifier_grad(v[p] * inv, train_col<VEC, TPR>(p / VEC, p % VEC, sub) == tc, ignored, bad, dloss);
            else
                v[p] = plain ? v[p] * scale : fixed;
        }
        /* In place: every element was read above, by this same thread. */
        train_store<VEC, FPT, TPR>(xr, cols, sub, live, v);
        if (!PICK && owner) elem_store(xr + t, (fx_exp<T>(xt - m) * inv - 1.0f) * dloss); /* p - 1 first: no cancellation */
        if (writer) {
            losses[row] = l;
            mine += l;
        }
    }
    if constexpr (SLOTS)
        ce_slots_total<BLOCK>(fin.slots, rows, ticket, fin.scale, fin.done, fin.loss, red_sum);
    else
        classifier_block_finish<BLOCK>(mine, &fin, red_sum);
}

/* ---- 16-bit rows held as loaded -------------------------------------------
 * The kernel above widens each element on load, so a 16-bit row takes a
 * float row's registers: 16 floats a thread, 48 KB of row in flight per
 * SM. As lesson 8's fastest_rows16_kernel (common/device/path1_2_rows.cu,
 * lesson 9's path 2), this one keeps the 16-byte words as they came,
 * FPT / 2 registers for FPT elements, and goes over them three times: the
 * max in 16 bits (fx_max2, exact), the sum (widened, exp), the store
 * (widened, exp again, scaled, rounded once). Twice the elements per
 * register, so twice the bytes in flight: float16 rows of 8192 ran at
 * 94.9 % of the 16-bit copy against 87.0 widened (H100;
 * docs/experiments/training-classifier-registers.md). The gradient, the
 * loss and the row's rules are the kernel above's, computed in the same
 * order, so the same bits come out. One row per block; aligned views
 * only (whole 16-byte vectors). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define CLS_ROWS16_MIN_BLOCKS(FPT, BLOCK) 0 /* measured on sm_90, as CLS_REG_MIN_BLOCKS */
#else /* the words and 24 registers more: pointers, the target, m, d, the loss (lesson 8's rule) */
#define CLS_ROWS16_MIN_BLOCKS(FPT, BLOCK) fx_rows16_min_blocks(FPT, BLOCK, 24)
#endif
template <class T, int FPT, int BLOCK>
__global__ void __launch_bounds__(BLOCK, CLS_ROWS16_MIN_BLOCKS(FPT, BLOCK))
classifier_rows16_kernel(T *logits, const int *__restrict__ targets, float *__restrict__ losses, long long rows,
                         int cols, int ignore_index, classifier_finish fin)
{
    static_assert(FPT % 8 == 0, "whole 16-byte words per thread");
    constexpr int ITEMS = FPT / 8;
    __shared__ float red_max[32], red_sum[32];
#if FX_CLUSTER_CODE
    cudaTriggerProgrammaticLaunchCompletion(); /* as the kernel above */
#endif
    const unsigned pad = vec16_narrow2(-INFINITY, -INFINITY, logits); /* exp(pad - m) = 0 */
    const int nvec = cols / 8;
    const float dloss = classifier_dloss(&fin);
    float mine = 0.0f;
    for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
        const int t = targets[row];
        const bool ignored = t == ignore_index, bad = !ignored && (t < 0 || t >= cols), plain = !ignored && !bad;
        const bool owner = plain && (t / 8) % BLOCK == (int)threadIdx.x; /* its words hold column t */
        T *xr = logits + row * cols;
        unsigned w[ITEMS][4];
        fx_words16_load<ITEMS, BLOCK>(xr, nvec, pad, w); /* lesson 8's three passes (fastest_device.cuh) */
        float xt = 0.0f;
        if (owner) xt = elem_load(xr + t); /* after the row's loads */
        const float m = row_reduce<BLOCK>(fx_words16_max(w, pad, logits), red_max, op_max());
        const float d = row_reduce<BLOCK>(fx_words16_sum_exp(w, m, logits), red_sum, op_sum());
        const float inv = 1.0f / d, scale = inv * dloss;
        const float fixed = ignored ? 0.0f : __int_as_float(0x7fc00000);
        fx_words16_store<ITEMS, BLOCK>(xr, nvec, w, m, scale, plain, fixed); /* in place: the row is in w */
        if (owner) elem_store(xr + t, (fx_exp<T>(xt - m) * inv - 1.0f) * dloss); /* after its word: p - 1 */
        if (plain ? owner : threadIdx.x == 0) {
            const float l = classifier_row_loss(ignored, bad, m, d, xt);
            losses[row] = l;
            mine += l;
        }
    }
    classifier_block_finish<BLOCK>(mine, &fin, red_sum);
}

/* classifier_rows16_kernel's classes: X(class, max_cols, FPT, BLOCK),
 * one row per block, for 16-bit rows past CLS_ROWS16_FROM (rows of 1024
 * already run at 94 % in the kernel above, H100). 32768 in 512 threads
 * of 64 elements: 61 registers, two blocks and 128 KB of row per SM,
 * 93.4 % against 79.7 in 1024 threads of 32 (55 registers, one block).
 * Longer rows keep the bulk-loaded clusters, three 64 KB pieces in flight
 * per SM against two for clusters of these blocks (meeting through lesson
 * 8's fx_cluster_exchange): float16 at 2^16, 89.1 % against 84.0 (H100;
 * docs/experiments/training-classifier-registers.md). */
#define CLS_ROWS16_CLASSES(X) \
    X(0, 2048, 16, 128)       \
    X(1, 4096, 16, 256)       \
    X(2, 8192, 32, 256)       \
    X(3, 16384, 32, 512)      \
    X(4, 32768, 64, 512)
#define CLS_ROWS16_FROM 1024
#define CLS_ROWS16_MAX_COLS 32768

/* The class of 16-bit rows x cols (an aligned view) held as loaded, or -1
 * where they take the other paths: rows past CLS_ON_CHIP_FROM only by
 * default (TRAIN_LONG_AUTO) and only with a row for every SM, the rule
 * of the bulk-loaded clusters (classifier_bulk_shape) they replace. */
static int classifier_rows16_class(long long rows, long long cols)
{
    if (cols <= CLS_ROWS16_FROM || cols > CLS_ROWS16_MAX_COLS) return -1;
    if (cols > CLS_ON_CHIP_FROM && (!train_long_auto() || rows < device_sms())) return -1;
#define CLS_ROWS16_CLASS_OF(c, maxc, fpt, block) \
    if (cols <= (maxc)) return c;
    CLS_ROWS16_CLASSES(CLS_ROWS16_CLASS_OF)
#undef CLS_ROWS16_CLASS_OF
    return -1;
}

int classifier_rows_held(long long rows, long long cols, dtype t)
{
    return t != DTYPE_F32 && cols % 8 == 0 && classifier_rows16_class(rows, cols) >= 0;
}

/* One element's gradient in the split path's kernel 2 (train_split_map's
 * op): col is its column in the piece that starts at column begin. exp as
 * lesson 8's fx_exp: expf for float logits, ex2.approx.ftz for 16-bit
 * ones, whose output rounding hides its error (on the on-chip path, with
 * the (m, d) push's exp too: about 67 % of the 16-bit copy against 60
 * with expf at N = 16384 ... 2^20, H100). */
template <class T>
struct classifier_op {
    float m, inv, dloss;
    long long begin, t;
    bool ignored, bad;
    __device__ float operator()(float v, long long col) const
    {
        return classifier_grad(fx_exp<T>(v - m) * inv, begin + col == t, ignored, bad, dloss);
    }
};

/* Kernel 2 of the split path: the row's (m, d) from its pieces' states,
 * then this piece's gradient, in place, in vectors of VEC elements; piece
 * 0 writes the row's loss. */
template <class T, int VEC>
__global__ void __launch_bounds__(TRAIN_SPLIT_BLOCK)
classifier_split_write_kernel(T *logits, const int *__restrict__ targets, float *__restrict__ losses, long long cols,
                              long long splits, int ignore_index, const online_md *__restrict__ state,
                              const float *__restrict__ xt, classifier_finish fin)
{
    __shared__ float red_m[32], red_d[32];
    long long row, begin, len;
    train_piece(splits, cols, &row, &begin, &len);
    const online_md s = train_merge_pieces<TRAIN_SPLIT_BLOCK>(state + row * splits, splits, red_m, red_d);
    const long long t = targets[row];
    const bool ignored = t == ignore_index, bad = !ignored && (t < 0 || t >= cols);
    const float inv = 1.0f / s.d, dloss = classifier_dloss(&fin);
    const classifier_op<T> op = {s.m, inv, dloss, begin, t, ignored, bad};
    T *xs = logits + row * cols + begin;
    train_split_map<VEC>(xs, xs, len / VEC, op); /* in place */
    if (begin == 0 && threadIdx.x == 0)
        losses[row] = ignored ? 0.0f : bad ? __int_as_float(0x7fc00000) : train_row_loss(s.m, s.d, xt[row]);
}

/* The gradient from an exp kept on chip: p times dloss is one multiply
 * (scale). */
struct classifier_kept_op {
    float scale, fixed;
    bool plain;
    __device__ float operator()(float e, long long) const { return plain ? e * scale : fixed; }
};

/* The shared part's gradient from raw values (16-bit rows, or float rows
 * not in float4s): p = exp(x - shift) / D, times dloss (inv_d). */
template <class T>
struct classifier_raw_op {
    float shift, inv_d, fixed;
    bool plain;
    __device__ float operator()(float v, long long) const { return plain ? fx_exp<T>(v - shift) * inv_d : fixed; }
};

/* The on-chip path's gradient of a piece, written in place: from v, the
 * register part as exp(x - m_regs) (train_onchip_load with KEEP_EXP), and
 * from srow, the shared part as raw values. Against classifier_op: no exp
 * for the register part (lesson 8's fx_scale turns exp(x - m_regs) into
 * p), and per element one multiply and one select, as the register
 * kernel: the owner of column t (the thread that stored its vector,
 * owner_t) stores it again as p - 1. Ignored rows write 0, targets out of
 * range NaN (training.h).
 *
 * The shared part stays raw for float rows too: kept as exps (each chunk
 * of 4 float4s a thread as exp(x - its running max), its shift kept
 * beside it), it takes one multiply per element on the way out instead
 * of an exp, yet ran slower: 87.5 % of the copy against 89.5 at
 * 64 x 2^20 (H100; docs/experiments/training-classifier-long-rows.md). */
template <int VEC, int FPT, class T, int B = TRAIN_GRID_BLOCK>
__device__ __forceinline__ void classifier_onchip_store(T *dst, int len, const float *v, const T *srow, float m_regs,
                                                        online_md R, float dloss, bool ignored, bool bad)
{
    constexpr int RCAP = B * FPT;
    const int rlen = len < RCAP ? len : RCAP;
    const bool plain = !ignored && !bad;
    const float fixed = ignored ? 0.0f : __int_as_float(0x7fc00000);
    const float shift = online_md_shift(R.m), inv = 1.0f / R.d;
    const float scale = fx_scale(m_regs, R) * dloss, inv_d = inv * dloss;
    const classifier_kept_op rop = {scale, fixed, plain};
    train_onchip_store_regs<VEC, FPT, T, classifier_kept_op, B>(dst, rlen / VEC, v, rop);
    const classifier_raw_op<T> op = {shift, inv_d, fixed, plain};
    train_onchip_store_shared<VEC, T, classifier_raw_op<T>, B>(dst + RCAP, (len - rlen) / VEC, srow, RCAP, op);
}

/* Whether this thread stores the vector that holds column tl of a piece
 * (classifier_onchip_store): the register part's vectors and the shared
 * part's both go to threads in turn, and RCAP is a whole number of turns. */
template <int VEC, int B = TRAIN_GRID_BLOCK>
__device__ __forceinline__ bool owner_t(long long tl, int len)
{
    return tl >= 0 && tl < len && (int)((tl / VEC) % B) == (int)threadIdx.x;
}

/* Long rows on chip: a CTA's piece, its (m, d), the row's from the
 * exchange through the workspace (train_grid.cuh), then the gradient, in
 * place (classifier_onchip_store). The owner of column t reads x[t] first
 * (no CTA writes column t before the exchange), stores p - 1 there after
 * the piece, and writes the row's loss; thread 0 of piece 0 writes it for
 * an ignored row or a target out of range. With fin.loss (one launch of
 * all_rows rows), the thread that writes a row's loss counts in and the
 * last CTA adds up the all_rows losses (all_losses). It counts in before
 * the piece's gradient, as classifier_bulk_kernel does, so that its fence
 * waits for the loss alone, not for thread 0's share of the stores
 * (docs/experiments/training-classifier-loss-grid.md). A minimum of CTAs
 * per SM in __launch_bounds__ for one element per access only, 0 (none)
 * for vectors (train_grid.cuh, TRAIN_GRID_MIN_CTAS). */
template <class T, int VEC>
__global__ void __launch_bounds__(TRAIN_GRID_BLOCK, VEC == 1 ? TRAIN_GRID_MIN_CTAS : 0)
classifier_grid_kernel(T *logits, const int *__restrict__ targets, float *__restrict__ losses, long long cols,
                       int pieces, int seg, int ignore_index, classifier_finish fin, unsigned *sync, online_md *work,
                       const float *all_losses, long long all_rows)
{
    constexpr int B = TRAIN_GRID_BLOCK;
    extern __shared__ float4 train_grid_smem[];
    T *srow = reinterpret_cast<T *>(train_grid_smem);
    __shared__ float red_m[32], red_d[32];
    long long row, begin;
    int piece, len;
    train_onchip_take(sync, pieces, seg, cols, &row, &piece, &begin, &len);
    const long long t = targets[row];
    const bool ignored = t == ignore_index, bad = !ignored && (t < 0 || t >= cols);
    T *xs = logits + row * cols + begin;
    float v[TRAIN_GRID_FPT], m_regs;
    online_md s = train_onchip_load<VEC, TRAIN_GRID_FPT, true, T, true, B>(xs, len, v, srow, -INFINITY, &m_regs);
    /* x[t] after the piece's loads, not before: warp 0 then issues its share
     * of the row without first waiting for targets[row] (H100: +0.4 to +1.2
     * points of copy at N = 16384 ... 2^20). */
    const bool owner = !ignored && !bad && owner_t<VEC, B>(t - begin, len);
    const float xt = owner ? elem_load(xs + (t - begin)) : 0.0f;
    s = online_md_row_merge<B>(s, red_m, red_d);
    unsigned before = 0;
    const online_md r = train_grid_exchange(s, work + row * pieces, piece, pieces, &sync[1 + row], red_m, red_d,
                                            &before);
    const float dloss = classifier_dloss(&fin);
    /* the row's loss: from the owner of column t, or from thread 0 of
     * piece 0 for an ignored row or a target out of range */
    const bool writer = owner || ((ignored || bad) && piece == 0 && threadIdx.x == 0);
    const float l = owner ? train_row_loss(r.m, r.d, xt) : ignored ? 0.0f : __int_as_float(0x7fc00000);
    __shared__ bool last;
    if (writer) {
        losses[row] = l;
        if (fin.loss) last = ce_count_in(fin.done, (unsigned)all_rows);
    }
    classifier_onchip_store<VEC, TRAIN_GRID_FPT, T, B>(xs, len, v, srow, m_regs, r, dloss, ignored, bad);
    if (owner) /* p - 1 first: no cancellation */
        elem_store(xs + (t - begin), (fx_exp<T>(xt - online_md_shift(r.m)) * (1.0f / r.d) - 1.0f) * dloss);
    /* the CTA that wrote a row's loss counted in */
    const bool loss_cta = ignored || bad ? piece == 0 : t >= begin && t < begin + len; /* the same in all threads */
    if (fin.loss && loss_cta) {
        __syncthreads(); /* the writer's `last` */
        if (last) {
            ce_total<B>(all_losses, all_rows, fin.scale, fin.done, fin.loss, red_m);
        }
    }
    train_onchip_leave(&sync[1 + row], before, pieces);
}

/* A bulk-loaded CTA's piece: its row and its rank among the row's C CTAs,
 * from its ticket (TICKET) or its place in its cluster (clusters of C
 * consecutive blocks). */
typedef struct {
    long long row;
    int rank;
} classifier_piece;
#if FX_CLUSTER_CODE
template <bool TICKET>
__device__ __forceinline__ classifier_piece classifier_bulk_piece(unsigned ticket, int C)
{
    const unsigned id = TICKET ? ticket : blockIdx.x;
    const int rank = TICKET ? (int)(id % (unsigned)C) : (int)cooperative_groups::this_cluster().block_rank();
    return {(long long)(id / (unsigned)C), rank};
}
#endif

/* Long rows of aligned logits, each CTA's piece loaded by bulk copies
 * (lesson 8's path 3b, common/device/bulk_copy.cuh): one row per
 * cluster of C = 1 ... FX_BULK_MAX_C CTAs, each piece wholly in shared
 * memory, its chunks folded as they land; the row's (m, d) through the
 * cluster (fx_cluster_exchange); then the gradient from shared memory,
 * written in place. TICKET: 16-bit rows of more than FX_BULK_MAX_C
 * pieces, one CTA each, meet through the workspace instead, as the
 * on-chip path's (a ticket for the piece, then train_grid_exchange):
 * still no load instruction, which is what 16-bit rows lack: float16 at
 * 128 x 2^19 ran at 82.2 % of the 16-bit copy against 79.8 with the
 * threads' pieces (H100). Float rows run slower this way and keep the
 * threads' pieces (docs/experiments/training-classifier-long-rows.md). x[t]
 * is read from the piece in shared memory, so no thread waits on global
 * memory for it. The CTA that holds column t writes the row's loss (rank
 * 0 for an ignored row or a target out of range) and, with fin.loss,
 * counts in, both by thread 0 before it stores any gradient, so that its
 * fence waits for the loss alone; the last CTA to count in adds up the M
 * losses after its way out. Counted after the way out, the fence would
 * wait for the whole piece's stores while the CTA holds its SM slot:
 * float16 1024 x 65536 ran at 87.5 % of the copy that way against 89.6
 * (H100). In the way out every element is compared with t (one compare
 * and one select): with the target's vector picked by a run-time index
 * instead, w[] went to local memory and the kernel ran at 59.5 % of the
 * copy against 92.6 (float16 1024 x 65536, H100). Rows without a target
 * have a loop of their own: one expression for the three kinds of row
 * made the compiler branch around each element's exp, 83.0 against
 * 87.2 % at the same shape. */
template <class T, int VEC, bool TICKET>
__global__ void __launch_bounds__(FX_BULK_BLOCK)
classifier_bulk_kernel(T *logits, const int *__restrict__ targets, float *__restrict__ losses, int cols, int seg,
                       int ignore_index, classifier_finish fin, const float *all_losses, long long all_rows,
                       int pieces, unsigned *sync, online_md *work)
{
#if FX_CLUSTER_CODE
    static_assert(FX_BULK_BLOCK == TRAIN_GRID_BLOCK, "train_grid_exchange's block");
    extern __shared__ __align__(128) float4 classifier_bulk_smem[]; /* 128 bytes: path3b_bulk.cu says why */
    T *srow = reinterpret_cast<T *>(classifier_bulk_smem);
    __shared__ unsigned long long landed[FX_BULK_CHUNKS];
    __shared__ float red_m[32], red_d[32];
    /* the piece: the ticket's (thread 0 draws it and starts the copies;
     * the others read it after the barrier), or the cluster rank */
    __shared__ unsigned ticket;
    const int C = TICKET ? pieces : (int)cooperative_groups::this_cluster().num_blocks();
    if (threadIdx.x == 0) {
        if constexpr (TICKET) fx_grid_ticket(&sync[0], &ticket);
        const classifier_piece q = classifier_bulk_piece<TICKET>(ticket, C);
        fx_bulk_start<VEC>(landed, srow, logits + q.row * cols + (long long)q.rank * seg,
                           fx_piece_len(cols, q.rank, seg) / VEC);
    }
    __syncthreads(); /* the barriers are initialised before anyone waits on them, and the ticket is there */
    const classifier_piece q = classifier_bulk_piece<TICKET>(ticket, C);
    const long long row = q.row;
    const int rank = q.rank;
    const int begin = rank * seg, len = fx_piece_len(cols, rank, seg), nvec = len / VEC;
    T *xs = logits + row * cols + begin;
    const long long t = targets[row];
    const bool ignored = t == ignore_index, bad = !ignored && (t < 0 || t >= cols);
    const online_md s = fx_bulk_fold<VEC>(landed, srow, nvec);
    const online_md b = online_md_row_merge<FX_BULK_BLOCK>(s, red_m, red_d);
    unsigned before = 0;
    const online_md r = TICKET ? train_grid_exchange(b, work + row * C, rank, C, &sync[1 + row], red_m, red_d, &before)
                               : fx_cluster_exchange(b, C);

    typedef fx_bulk_exp_type E;
    const bool plain = !ignored && !bad, here = plain && t >= begin && t < begin + len;
    const int tl = here ? (int)(t - begin) : -1;
    const float xt = here ? elem_load(srow + tl) : 0.0f;
    const float fixed = ignored ? 0.0f : __int_as_float(0x7fc00000);
    const float shift = online_md_shift(r.m), inv = 1.0f / r.d, dloss = classifier_dloss(&fin), inv_d = inv * dloss;
    const float pt = (fx_exp<E>(xt - shift) * inv - 1.0f) * dloss; /* p - 1 first: no cancellation */
    /* The CTA holding x[t] (rank 0 for a row without a target) writes the
     * loss and, with fin.loss, counts in, all from thread 0 and before
     * its gradient: the fence then waits for the loss alone, and only
     * warp 0 waits on it. */
    __shared__ bool last;
    const bool loss_cta = plain ? here : rank == 0; /* the same in all threads */
    if (loss_cta && threadIdx.x == 0) {
        losses[row] = plain ? train_row_loss(r.m, r.d, xt) : fixed;
        if (fin.loss) last = ce_count_in(fin.done, (unsigned)all_rows);
    }
    if (plain) {
#pragma unroll 4
        for (int i = threadIdx.x; i < nvec; i += FX_BULK_BLOCK) {
            float w[VEC];
            load_vec<VEC>(srow + i * VEC, w);
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                const float p = fx_exp<E>(w[j] - shift) * inv_d;
                w[j] = i * VEC + j == tl ? pt : p;
            }
            store_vec<VEC>(xs + i * VEC, w);
        }
    } else {
        for (int i = threadIdx.x; i < nvec; i += FX_BULK_BLOCK) {
            float w[VEC];
#pragma unroll
            for (int j = 0; j < VEC; j++) w[j] = fixed;
            store_vec<VEC>(xs + i * VEC, w);
        }
    }
    if (fin.loss && loss_cta) {
        __syncthreads(); /* thread 0's `last` */
        if (last) {
            ce_total<FX_BULK_BLOCK>(all_losses, all_rows, fin.scale, fin.done, fin.loss, red_m);
        }
    }
    if constexpr (TICKET) train_onchip_leave(&sync[1 + row], before, C);
    else cooperative_groups::this_cluster().barrier_wait(); /* nobody reads this CTA's state any more */
#else
    (void)pieces;
    (void)sync;
    (void)work;
    (void)logits;
    (void)targets;
    (void)losses;
    (void)cols;
    (void)seg;
    (void)ignore_index;
    (void)fin;
    (void)all_losses;
    (void)all_rows;
#endif
}

long long classifier_bulk_seg(long long cols, int c, dtype t)
{
    const long long vec = 16 / dtype_size(t);
    return ((cols + c - 1) / c + vec - 1) / vec * vec;
}

/* The bulk-loaded clusters' shape for rows x cols of aligned logits of
 * type T: c = the fewest CTAs whose pieces of at most fx_bulk_max_piece
 * bytes hold the row (1 ... FX_BULK_MAX_C), seg elements each (whole
 * 16-byte vectors). Rows past CLS_ON_CHIP_FROM, on sm_90
 * (train_long_bulk); with TRAIN_LONG_BULK wherever such a cluster fits.
 * By default only where they pay against the path they replace
 * (docs/experiments/training-classifier-long-rows.md):
 *   - rows x c give every SM a CTA;
 *   - float rows of fewer than FX_BULK_MAX_C pieces: at 8 pieces the
 *     threads' clusters are the faster (92.9 % of the copy against 91.7
 *     at 512 x 131072, H100), where bulk copies win on shorter rows.
 *     16-bit rows take them at every length (float16 4096 x 16384: 88.4
 *     against 75.0); but rows of one piece (up to 32768) with a row per
 *     SM are held as loaded in registers instead
 *     (classifier_rows16_kernel).
 * Longer 16-bit rows take more CTAs than a cluster holds, meeting
 * through the workspace (classifier_bulk_kernel's TICKET), while all of
 * a row's pieces fit on the GPU at once. */
template <class T>
static int classifier_bulk_shape(long long rows, long long cols, long long *seg)
{
    constexpr int VEC = 16 / (int)sizeof(T);
    static long long piece = -1, resident = -1;
    static int fits[FX_BULK_MAX_C + 1]; /* 0: not asked yet; the answer + 1 */
    const int mode = train_long_bulk();
    if (!mode || cols <= CLS_ON_CHIP_FROM || (sizeof(T) == 2 && classifier_rows16_class(rows, cols) >= 0)) return 0;
    const auto k = classifier_bulk_kernel<T, VEC, false>;
    if (piece < 0) piece = fx_bulk_max_piece(k);
    const long long bytes = cols * (long long)sizeof(T), c = piece > 0 ? (bytes + piece - 1) / piece : 0;
    if (sizeof(T) == 2 && c > FX_BULK_MAX_C) { /* 16-bit rows past a cluster: through the workspace */
        if (resident < 0) {
            const auto kt = classifier_bulk_kernel<T, VEC, true>;
            int n = 0;
            if (fx_bulk_max_piece(kt) >= piece) /* opts kt in to pieces of that size */
                CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kt, FX_BULK_BLOCK, (size_t)piece));
            resident = (long long)n * device_sms();
        }
        if (c > resident || (mode == 1 && rows * c < device_sms())) return 0;
        *seg = classifier_bulk_seg(cols, (int)c, DTYPE_F16); /* by element size */
        return (int)c;
    }
    if (c < 1 || c > FX_BULK_MAX_C) return 0;
    if (mode == 1 && (rows * c < device_sms() || (sizeof(T) == 4 && c == FX_BULK_MAX_C))) return 0;
    if (!fits[c]) fits[c] = 1 + (fx_bulk_clusters(k, (int)c, piece) >= 1);
    if (fits[c] != 2) return 0;
    *seg = classifier_bulk_seg(cols, (int)c, sizeof(T) == 4 ? DTYPE_F32 : DTYPE_F16); /* by element size */
    return (int)c;
}

/* Rows in batches of at most 2^30 CTAs, in clusters of c, or past
 * FX_BULK_MAX_C through the workspace: sync, its counters (the ticket's,
 * then one per row of a batch), and work, c states per row. */
template <class T>
static void classifier_bulk(int c, long long seg, T *logits, const int *targets, float *losses, long long rows,
                            long long cols, int ignore_index, classifier_finish fin, unsigned *sync, online_md *work,
                            cudaStream_t stream)
{
    const long long batch = train_grid_batch(c);
    for (long long r0 = 0; r0 < rows; r0 += batch) {
        const long long n = rows - r0 < batch ? rows - r0 : batch;
        if (c > FX_BULK_MAX_C) { /* through the workspace */
            classifier_bulk_kernel<T, 16 / (int)sizeof(T), true><<<(unsigned)(n * c), FX_BULK_BLOCK,
                                                                   (size_t)seg * sizeof(T), stream>>>(
                logits + r0 * cols, targets + r0, losses + r0, (int)cols, (int)seg, ignore_index, fin,
                (const float *)losses, rows, c, sync, work);
            CUDA_CHECK_LAUNCH();
            continue;
        }
        cudaLaunchAttribute attr[1];
        const cudaLaunchConfig_t lc = fx_cluster_config((unsigned)(n * c), FX_BULK_BLOCK, c,
                                                        (size_t)seg * sizeof(T), stream, attr);
        CUDA_CHECK(cudaLaunchKernelEx(&lc, classifier_bulk_kernel<T, 16 / (int)sizeof(T), false>, logits + r0 * cols,
                                      targets + r0, losses + r0, (int)cols, (int)seg, ignore_index, fin,
                                      (const float *)losses, rows, c, (unsigned *)nullptr, (online_md *)nullptr));
        CUDA_CHECK_LAUNCH();
    }
}

/* Whether rows x cols of 16-bit logits go on chip (rows past
 * CLS_ON_CHIP_FROM whose pieces fit), and their plan: never in the
 * threads' clusters (train_grid.cuh says why). */
template <class T, int VEC>
static bool classifier_grid_plan(long long rows, long long cols, train_grid_plan *p)
{
    constexpr int ES = (int)sizeof(T);
    constexpr long long RCAP = TRAIN_GRID_BLOCK * TRAIN_GRID_FPT, CAP = RCAP + TRAIN_GRID_SMEM / ES;
    if (cols <= CLS_ON_CHIP_FROM || !train_long_on_chip() ||
        !train_grid_make_plan(rows, cols, CAP, RCAP, 1, ES,
                              train_grid_resident((const void *)classifier_grid_kernel<T, VEC>), p))
        return false;
    return true;
}

/* Float logits run on the row engine (classifier.cu): none of this
 * file's paths. */
int classifier_bulk_size(long long rows, long long cols, dtype t)
{
    long long seg;
    if (t == DTYPE_F32 || cols % (16 / dtype_size(t)) != 0) return 0; /* no aligned view */
    return t == DTYPE_F16 ? classifier_bulk_shape<__half>(rows, cols, &seg)
                          : classifier_bulk_shape<__nv_bfloat16>(rows, cols, &seg);
}

int classifier_on_chip(long long rows, long long cols, dtype t)
{
    if (t == DTYPE_F32) return 0;
    if (classifier_rows_held(rows, cols, t)) return 1; /* one block per row */
    const int bulk = classifier_bulk_size(rows, cols, t);
    if (bulk) return bulk;
    train_grid_plan p;
    const bool on = t == DTYPE_F16 ? classifier_grid_plan<__half, 8>(rows, cols, &p)
                                   : classifier_grid_plan<__nv_bfloat16, 8>(rows, cols, &p);
    return on ? 1 : 0;
}

/* Plan p's launches, in batches of `batch` rows; work: batch x pieces
 * states; sync: batch + 1 counters. */
template <class T, int VEC>
static void classifier_grid(const train_grid_plan *p, long long batch, T *logits, const int *targets, float *losses,
                            long long rows, long long cols, int ignore_index, classifier_finish fin, online_md *work,
                            unsigned *sync, cudaStream_t stream)
{
    for (long long r0 = 0; r0 < rows; r0 += batch) {
        const long long n = rows - r0 < batch ? rows - r0 : batch;
        const auto k = classifier_grid_kernel<T, VEC>;
        train_onchip_launch(p, n, stream, k, logits + r0 * cols, targets + r0, losses + r0, cols, (int)p->pieces, (int)p->seg,
                            ignore_index, fin, sync, work, (const float *)losses, rows);
    }
}

/* Rows in registers. Up to CLS_MAX_BLOCKS blocks the kernel finishes
 * the reduced loss itself; past that, every block only writes its part
 * (block_parts: one float per block) and classifier_loss_kernel adds them
 * up after it. The alternatives cost more: a grid capped at 4096 blocks
 * looping over the rows makes a block's next rows wait for its last
 * (85.7 % of the copy against 94.3 at 2097152 x 32, H200); every block
 * counting in at one word makes the adds to one address take their
 * turns; counting in by groups of 64 blocks spreads the adds but keeps a
 * fence, an atomic and a barrier at the end of every short block
 * (docs/experiments/training-classifier-loss-grid.md). 16-bit logits take
 * this branch too, with the loss kernel launched as a programmatic
 * dependent (below). */
/* The row kernels' pointer type (an alias template: it depends on the
 * storage type T). */
template <class T>
using classifier_rows_fn = void (*)(T *, const int *, float *, long long, int, int, classifier_finish);

/* classifier_registers_kernel for `rows` rows: with the loss slots up to
 * CLS_SLOT_ROWS of them. */
template <class T, int VEC, int FPT, int TPR, int BLOCK>
static classifier_rows_fn<T> classifier_registers(long long rows)
{
    return rows <= CLS_SLOT_ROWS ? classifier_registers_kernel<T, VEC, FPT, TPR, BLOCK, true>
                                 : classifier_registers_kernel<T, VEC, FPT, TPR, BLOCK, false>;
}

/* kernel: an instance of classifier_registers_kernel or
 * classifier_rows16_kernel, of `block` threads and block / tpr rows a
 * block. */
template <class T>
static void launch_classifier(classifier_rows_fn<T> kernel, int block, int tpr, T *logits, const int *targets,
                              float *losses, long long rows, long long cols, int ignore_index, classifier_finish fin,
                              float *block_parts, float *loss_parts, cudaStream_t stream)
{
    const unsigned grid = train_grid(rows, block / tpr);
    if (grid <= CLS_MAX_BLOCKS) { /* finished in the kernel */
        kernel<<<grid, block, 0, stream>>>(logits, targets, losses, rows, (int)cols, ignore_index, fin);
        CUDA_CHECK_LAUNCH();
        return;
    }
    classifier_finish own = fin;
    own.parts = block_parts;
    own.loss = nullptr;
    kernel<<<grid, block, 0, stream>>>(logits, targets, losses, rows, (int)cols, ignore_index, own);
    CUDA_CHECK_LAUNCH();
    classifier_sum(block_parts, grid, loss_parts, fin.done, fin.scale, fin.loss, stream);
}

/* Class c of classifier_rows16_kernel on 16-bit logits. */
template <class T>
static void classifier_rows16(int c, T *logits, const int *targets, float *losses, long long rows, long long cols,
                              int ignore_index, classifier_finish fin, float *block_parts, float *loss_parts,
                              cudaStream_t stream)
{
    switch (c) {
#define CLS_ROWS16_CASE(c, maxc, fpt, block)                                                                      \
    case c:                                                                                                       \
        launch_classifier<T>(classifier_rows16_kernel<T, fpt, block>, block, block, logits, targets, losses, rows, \
                             cols, ignore_index, fin, block_parts, loss_parts, stream);                           \
        break;
        CLS_ROWS16_CLASSES(CLS_ROWS16_CASE)
#undef CLS_ROWS16_CASE
    }
}

/* 16-bit rows of up to 256 elements: classifier_registers_kernel with
 * more elements a thread than TRAIN_CLASSES gives them. There a thread
 * holds 8 elements: two float4s of a float row, but one 16-byte vector of
 * a 16-bit row, half the bytes in flight per SM. X(class, max_cols, FPT,
 * TPR, BLOCK). Each length takes the best of 8, 16 and 32 elements a
 * thread on the H200 (each step halves the lanes of a row): float16 rows
 * of 64 ran at 82 % of the 16-bit copy with 16 against 69 with 8
 * (docs/experiments/training-classifier-registers.md). */
#define CLS_SHORT16_CLASSES(X)  \
    X(0, 32, 16, 2, 128)        \
    X(1, 64, 16, 4, 128)        \
    X(2, 128, 32, 4, 128)       \
    X(3, 256, 16, 16, 128)

static int cls_short16_class(long long cols)
{
#define CLS_SHORT16_OF(c, maxc, fpt, tpr, block) \
    if (cols <= (maxc)) return c;
    CLS_SHORT16_CLASSES(CLS_SHORT16_OF)
#undef CLS_SHORT16_OF
    return -1;
}

template <class T>
static void classifier_short16(int c, bool vec, T *logits, const int *targets, float *losses, long long rows,
                               long long cols, int ignore_index, classifier_finish fin, float *block_parts,
                               float *loss_parts, cudaStream_t stream)
{
    switch (c) {
#define CLS_SHORT16_CASE(c, maxc, fpt, tpr, block)                                                                 \
    case c:                                                                                                       \
        static_assert((fpt) * (tpr) >= (maxc) && (block) % (tpr) == 0, "a class holds its longest row");           \
        launch_classifier<T>(vec ? classifier_registers_kernel<T, 8, fpt, tpr, block, false>                      \
                                 : classifier_registers_kernel<T, 1, fpt, tpr, block, false>,                     \
                             block, tpr, logits, targets, losses, rows, cols, ignore_index, fin, block_parts,     \
                             loss_parts, stream);                                                                 \
        break;
        CLS_SHORT16_CLASSES(CLS_SHORT16_CASE)
#undef CLS_SHORT16_CASE
    }
}

/* The path name of the classifier's 16-bit-only paths at rows x cols
 * (train_path_name_typed), or NULL where 16-bit rows take a path that
 * float rows take too. */
const char *classifier_path16(long long rows, long long cols, dtype t)
{
    static char name[128];
    if (t == DTYPE_F32) return NULL;
    switch (cls_short16_class(cols)) {
#define CLS_SHORT16_NAME(c, maxc, fpt, tpr, block)                                                                 \
    case c:                                                                                                       \
        snprintf(name, sizeof name, "registers, %d lanes per row, %d elements each", tpr, fpt);                   \
        return name;
        CLS_SHORT16_CLASSES(CLS_SHORT16_NAME)
#undef CLS_SHORT16_NAME
    }
    if (classifier_rows_held(rows, cols, t)) {
        switch (classifier_rows16_class(rows, cols)) {
#define CLS_ROWS16_NAME(c, maxc, fpt, block)                                                                       \
    case c:                                                                                                       \
        snprintf(name, sizeof name, "registers as loaded (two elements a register), one block of %d threads per row, " \
                 "%d elements each", block, fpt);                                                                 \
        return name;
            CLS_ROWS16_CLASSES(CLS_ROWS16_NAME)
#undef CLS_ROWS16_NAME
        }
    }
    return NULL;
}

/* T: float, __half or __nv_bfloat16. VW: the elements of a 16-byte vector
 * (4 floats, 8 16-bit values). */
template <class T>
static void classifier_run(T *logits, const int *targets, float *losses, float *loss, long long rows, long long cols,
                           int ignore_index, train_reduction reduction, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    constexpr int VW = 16 / (int)sizeof(T);
    const bool vec = train_aligned(logits, cols, VW);
    /* a long row: in bulk-loaded clusters, on chip (pieces states) if its
     * pieces fit, else split */
    long long bseg = 0;
    const int held = sizeof(T) == 2 && vec ? classifier_rows16_class(rows, cols) : -1; /* 16-bit, as loaded */
    const int bulk = vec ? classifier_bulk_shape<T>(rows, cols, &bseg) : 0;
    train_grid_plan gp = {0, 0, 0};
    const bool on_chip = held < 0 && !bulk && (vec ? classifier_grid_plan<T, VW>(rows, cols, &gp)
                                                   : classifier_grid_plan<T, 1>(rows, cols, &gp));
    const bool bulk_grid = bulk > FX_BULK_MAX_C; /* bulk-loaded CTAs meeting through the workspace */
    const long long splits = on_chip     ? gp.pieces
                             : bulk_grid ? bulk
                             : held >= 0 || bulk || cols <= TRAIN_REG_MAX_COLS ? 0
                                                                           : train_splits(cols);
    const long long batch =
        !splits ? rows : on_chip || bulk_grid ? train_grid_batch(splits) : train_split_batch(splits);
    const long long nb = batch < rows ? batch : rows;
    /* workspace: the scale, the parts of the count and of the reduced loss
     * (HEAD bytes), then (long rows) nb x splits states and nb floats: the
     * split path's x[t], or the parts of a register kernel's blocks.
     * Counters: the count's and the loss's blocks done, then the on-chip
     * path's. */
    constexpr size_t HEAD = 256 + (CLS_MAX_PARTS + CLS_MAX_BLOCKS) * sizeof(float);
    char *w = (char *)train_workspace(HEAD + (size_t)nb * splits * sizeof(online_md) + (size_t)nb * sizeof(float));
    /* two counters, the slots (8-byte aligned after the two), then the on-chip path's counters */
    unsigned *done = train_sync_counters(2 + 2 * CLS_SLOT_ROWS + (on_chip || bulk_grid ? nb + 1 : 0));
    classifier_scale *scale = (classifier_scale *)w;
    unsigned *count_parts = (unsigned *)(w + 256);
    float *loss_parts = (float *)(w + 256 + CLS_MAX_PARTS * sizeof(unsigned));
    online_md *state = (online_md *)(w + HEAD);
    float *xt = (float *)(state + nb * splits);

    /* The sum needs no count (dloss = 1); the mean counts first. */
    if (reduction == TRAIN_MEAN) classifier_count(targets, rows, ignore_index, count_parts, &done[0], scale, stream);
    /* Split rows, and more than CLS_ON_CHIP_FINISH_ROWS rows on chip,
     * leave the reduced loss to classifier_loss_kernel, over their M
     * losses; rows in registers finish it in the main kernel, or over its
     * blocks' parts (in the split path's x[t] floats, which rows in
     * registers do not use: launch_classifier). On chip, the CTA that
     * writes a row's loss counts in and the last adds up the M losses
     * (classifier_grid_kernel): 87.5 % of the copy against 86.1 with the
     * launch after at 64 x 2^20 (float32, H100), but about a point less
     * at 4096 x 16384, so more rows keep the launch
     * (docs/experiments/training-classifier-loss-grid.md). */
    /* Rows in bulk-loaded clusters finish in the kernel at any count
     * (classifier_bulk_kernel says how): there it costs nothing against
     * the launch after (float16 at 4096 x 16384, H100). */
    const bool finish_after = !bulk && splits != 0 && !(on_chip && rows <= CLS_ON_CHIP_FINISH_ROWS && rows <= batch); /* one launch */
    const classifier_finish fin = {reduction == TRAIN_MEAN ? scale : nullptr, reduction, loss_parts, &done[1],
                                   finish_after ? nullptr : loss, (unsigned long long *)(done + 2)};
    const int short16 = sizeof(T) == 2 ? cls_short16_class(cols) : -1;
    switch (short16 >= 0 || held >= 0 || on_chip || bulk ? -1 : train_class(cols)) {
#define CLS_CASE(c, maxc, fpt, tpr, block)                                                                        \
    case c:                                                                                                       \
        launch_classifier<T>(vec ? classifier_registers<T, VW, fpt, tpr, block>(rows)                             \
                                 : classifier_registers<T, 1, fpt, tpr, block>(rows),                             \
                             block, tpr, logits, targets, losses, rows, cols, ignore_index, fin, xt, loss_parts, stream); \
        break;
        TRAIN_CLASSES(CLS_CASE)
#undef CLS_CASE
    default:
        if constexpr (sizeof(T) == 2) {
            if (short16 >= 0) {
                classifier_short16<T>(short16, vec, logits, targets, losses, rows, cols, ignore_index, fin, xt,
                                      loss_parts, stream);
                break;
            }
            if (held >= 0) {
                classifier_rows16<T>(held, logits, targets, losses, rows, cols, ignore_index, fin, xt, loss_parts, stream);
                break;
            }
        }
        if (bulk) {
            classifier_bulk<T>(bulk, bseg, logits, targets, losses, rows, cols, ignore_index, fin,
                               done + 2 + 2 * CLS_SLOT_ROWS, state, stream);
            break;
        }
        if (on_chip) {
            if (vec) classifier_grid<T, VW>(&gp, batch, logits, targets, losses, rows, cols, ignore_index, fin, state, done + 2 + 2 * CLS_SLOT_ROWS, stream);
            else classifier_grid<T, 1>(&gp, batch, logits, targets, losses, rows, cols, ignore_index, fin, state, done + 2 + 2 * CLS_SLOT_ROWS, stream);
            break;
        }
        for (long long r0 = 0; r0 < rows; r0 += batch) {
            const long long n = rows - r0 < batch ? rows - r0 : batch, o = r0 * cols;
            train_split_states<T>(logits + o, n, cols, splits, targets + r0, state, xt, vec, stream);
            if (vec)
                classifier_split_write_kernel<T, VW><<<(unsigned)(n * splits), TRAIN_SPLIT_BLOCK, 0, stream>>>(
                    logits + o, targets + r0, losses + r0, cols, splits, ignore_index, state, xt, fin);
            else
                classifier_split_write_kernel<T, 1><<<(unsigned)(n * splits), TRAIN_SPLIT_BLOCK, 0, stream>>>(
                    logits + o, targets + r0, losses + r0, cols, splits, ignore_index, state, xt, fin);
            CUDA_CHECK_LAUNCH();
        }
    }
    if (finish_after)
        classifier_sum(losses, rows, loss_parts, &done[1], reduction == TRAIN_MEAN ? scale : nullptr, loss, stream);
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
        classifier_fused((float *)logits, targets, losses, loss, rows, cols, ignore_index, reduction, stream);
}
