/* Lesson 10: the cross-entropy loss and the fused classifier as one operation of the row engine
 * (common/device/rows_op.cuh), over float logits (classifier.cu) or, the classifier only, 16-bit ones
 * (classifier16.cu). The README teaches its row hooks ("Every kernel is an instance of lesson 8's engine")
 * and where the reduced loss is added up ("The fused classifier"). The loss alone writes no element. */
#ifndef LESSON10_CLASSIFIER_CUH
#define LESSON10_CLASSIFIER_CUH
#include "check.h"
#include "train_engine.h"
#include "train_loss.cuh"
#include "device/rows_run.cuh" /* the row engine, for any operation */

/* A row: its index in the launch, its target, the rules it falls under (training.h), x[t] once picked. */
typedef struct {
    long long i;
    int t;
    bool ignored, bad;
    float xt;
} ce_row;

/* a if p, else b, as one selp the compiler cannot hoist: a `?:` on a row's f.plain, the same in every iteration,
 * became a second copy of each loop, and path 4's kernel 2 lost half its blocks per SM to the registers
 * (docs/experiments/rows-classifier-on-engine.md). */
__device__ __forceinline__ float ce_select(bool p, float a, float b)
{
#if defined(__CUDA_ARCH__)
    float r;
    asm("{.reg .pred q; setp.ne.u32 q, %3, 0; selp.f32 %0, %1, %2, q;}" : "=f"(r) : "f"(a), "f"(b), "r"((unsigned)p));
    return r;
#else
    return p ? a : b;
#endif
}

/* 0 <= t < c in one compare: a negative t wraps past every c; in 32 bits, c taken as at most 2^31 (past every int) */
__device__ __forceinline__ bool ce_in(int t, long long c) { return (size_t)(long long)t < (size_t)c; }
__device__ __forceinline__ bool ce_in32(int t, long long c) { return (unsigned)t < (c >> 31 ? 1u << 31 : (unsigned)c); }

/* The loss and the gradient of a row whose target is out of range. */
__device__ __forceinline__ float ce_nan(void) { return __int_as_float(0x7fc00000); }

/* GRAD: the classifier (else the loss alone). SLOTS: path 1's kernels with the loss slots, as instances of their
 * own (PATH1_ONLY): their wait made the others 15-27 % slower (docs/experiments/rows-classifier-on-engine.md). */
template <bool GRAD, bool SLOTS = false>
struct op_cross_entropy {
    static constexpr int NIN = 1;
    static constexpr bool ROW = true, OUT = GRAD, KEEP_EXP = true, SCALE_EXP = false, SCALE_LIVE = true;
    static constexpr bool PATH1_ONLY = SLOTS, FOLLOWED = GRAD && !SLOTS; /* ce_run's classifier_sum; the loss: none */
    /* 8 floats a lane at least; 16-bit: 16, or 32 held as loaded in rows of 65-128 (3-5 % faster, H200; not SLOTS) */
    static constexpr int FPT_MIN = 8;
    static constexpr int fpt_min16(long long n) { return n == 128 && !SLOTS ? 32 : 16; }
    typedef ce_row row;
    struct fin {
        float scale, fixed, m, d, dloss;
        bool plain;
    };
    const int *targets;
    float *losses;
    long long cols;
    int ignore_index;
    const classifier_scale *scale; /* the mean's (dloss = 1 / count), or NULL: dloss = 1 */
    float *parts, *loss;           /* loss NULL: a launch after adds up the parts or losses */
    unsigned *done;
    const float *all_losses;
    long long all_rows;
    unsigned long long *slots; /* path 1's loss slots, or NULL */

    op_cross_entropy at(long long r0) const
    {
        op_cross_entropy o = *this;
        o.targets += r0;
        o.losses += r0;
        return o;
    }
    /* No branch around the target's load (a dead lane reads row 0's): behind one it went out after
     * the row's loads (docs/experiments/rows-classifier-on-engine.md). */
    __device__ row begin(long long i, bool live) const
    {
        const int t0 = targets[i], t = live ? t0 : ignore_index;
        const bool ignored = t == ignore_index, in = GRAD ? ce_in(t, cols) : ce_in32(t, cols); /* col says why */
        return row{i, t, ignored, (bool)(!ignored & !in), 0.0f}; /* &: no branch */
    }
    /* the target's column where it is one (an ignored row's too: fix gives 0 there). The loss tests in 32 bits, 1.3 %
     * faster at N = 64 and 128 (H200). The classifier keeps two 64-bit compares: with 32-bit ones, one compare or
     * `plain ? t : -1`, the compiler issued its target's load late (docs/experiments/training-classifier-registers.md,
     * rows-classifier-on-engine.md) */
    __device__ __forceinline__ long long col(const row &r) const
    {
        return (GRAD ? r.t >= 0 && r.t < cols : ce_in32(r.t, cols)) ? r.t : -1;
    }
    static __device__ __forceinline__ void pick(row *r, float v) { r->xt = v; }
    __device__ fin finish(float m, float d, const row &r) const
    {
        const float dloss = scale ? scale->dloss : 1.0f;
        return fin{dloss / d, r.ignored ? 0.0f : ce_nan(), m, d, dloss, !r.ignored && !r.bad};
    }
    static __device__ __forceinline__ fin rescale(fin f, float c)
    {
        f.scale *= c;
        return f;
    }
    static __device__ __forceinline__ float out(float e, fin f) { return ce_select(f.plain, e * f.scale, f.fixed); }
    /* every element f.fixed (an ignored or bad row); out's value elsewhere, without the select (SCALE_LIVE) */
    static __device__ __forceinline__ bool same(fin f) { return !f.plain; }
    static __device__ __forceinline__ float out_live(float e, fin f) { return e * f.scale; }
    /* (m - x[t]) first: both may be huge, their difference is not; d >= 1. */
    __device__ float lead(const row &r, fin f) const
    {
        const float l = f.plain ? (f.m - r.xt) + logf(f.d) : f.fixed;
        if constexpr (SLOTS) ce_slot_put(slots + r.i, l); /* before the row's gradient */
        losses[r.i] = l;
        return l;
    }
    /* p - 1 from x[t], not from the p stored: no cancellation. */
    static __device__ __forceinline__ float fix(const row &r, fin f)
    {
        return f.plain ? (expf(r.xt - online_md_shift(f.m)) / f.d - 1.0f) * f.dloss : f.fixed;
    }
    /* Float rows of up to 256 take x[t] from the registers, comparing every column with t: a load waiting for the
     * target would lengthen so short a pass (91.4 % of the copy against 83.2 at N = 32). 16-bit rows cannot hide
     * the compares, save the kernels with loss slots (docs/experiments/training-classifier-registers.md). */
    __host__ __device__ static constexpr bool pick_regs(int fpt, int tpr, int esize)
    {
        return esize == 4 ? fpt * tpr <= 256 : SLOTS;
    }
    static __device__ __forceinline__ float out_at(float e, fin f, bool is_t)
    {
        return ce_select(f.plain, is_t ? e * f.scale - f.dloss : e * f.scale, f.fixed);
    }
    /* Path 1's end: a ticket each block draws as it starts, for the slots */
    __device__ unsigned rows_start() const
    {
        if constexpr (SLOTS) return threadIdx.x == 0 ? atomicAdd(done, 1u) : 0u;
        else return 0u;
    }
    template <int BLOCK>
    __device__ void rows_end(float mine, float *red, [[maybe_unused]] unsigned ticket) const
    {
        if constexpr (!GRAD) return; /* the loss alone */
        if constexpr (SLOTS) {
            ce_slots_total<BLOCK>(slots, all_rows, ticket, scale, done, loss, red);
            return;
        }
        if (!parts) return; /* TRAIN_NONE: no total */
        __shared__ bool last;
        __syncthreads(); /* red may still be read by a slow warp */
        const float s = row_reduce<BLOCK>(mine, red, op_sum());
        if (threadIdx.x == 0) {
            parts[blockIdx.x] = s;
            if (loss) last = ce_count_in(done, gridDim.x);
        }
        if (!loss) return;
        __syncthreads();
        if (last) ce_total<BLOCK>(parts, gridDim.x, scale, done, loss, red);
    }
    __device__ bool counts() const { return loss != nullptr; }
    __device__ bool count_in() const { return ce_count_in(done, (unsigned)all_rows); }
    __device__ void total(float *red) const { ce_total(all_losses, all_rows, scale, done, loss, red); }
};

/* ---- the classifier and the loss on the engine ---------------------------- */

/* The path asked of the engine: the classifier's as every operation's; the loss's long rows always
 * split: writing nothing, it reads each element once there too, and streams. */
template <bool GRAD>
static fastest_path ce_want(long long cols)
{
    return GRAD || cols <= TRAIN_REG_MAX_COLS ? train_engine_want(cols) : FASTEST_SPLIT;
}

/* classifier.cu: the mean's count into *out; the sum of n values after the launch before into *loss, over
 * mean->count where mean is not NULL. parts: CLS_MAX_PARTS words; done: a counter at 0, left at 0. */
void classifier_count(const int *targets, long long rows, int ignore_index, unsigned *parts, unsigned *done,
                      classifier_scale *out, cudaStream_t stream);
void classifier_sum(const float *vals, long long n, float *parts, unsigned *done, const classifier_scale *mean,
                    float *loss, cudaStream_t stream);

/* The blocks of path 1 for plan p (0 on the other paths). */
static inline long long ce_row_blocks(const fastest_plan *p, long long rows, long long cols, dtype t)
{
    if (p->path != FASTEST_WARP) return 0;
    typedef op_cross_entropy<true> OP;
    const int i = fx_reg_index(cols, 0), vec = !p->vec4 ? 1 : t == DTYPE_F32 ? 4 : 8;
    const fx_reg_config c = t == DTYPE_F32 ? fx_op_class<OP, float>(i, vec) : fx_op_class<OP, __half>(i, vec);
    return fx_grid(rows, c.block / c.tpr);
}

/* The workspace: the scale, the count's parts, the sum's parts, then one float per block of path 1. */
#define CE_HEAD (256 + 2 * CLS_MAX_PARTS * 4)

/* Plan p (the engine's, for these rows) with the operation; T: float, __half or __nv_bfloat16 (t says which). */
template <bool GRAD, class T>
static void ce_run(const fastest_plan &p, T *x, const int *targets, float *losses, float *loss, long long rows,
                   long long cols, int ignore_index, train_reduction reduction, dtype t, cudaStream_t stream)
{
    if (rows <= 0 || cols <= 0) return;
    const long long blocks = ce_row_blocks(&p, rows, cols, t);
    char *w = (char *)train_workspace(CE_HEAD + (size_t)blocks * sizeof(float));
    unsigned *done = train_sync_counters(2 + 2 * CLS_SLOT_ROWS); /* the count's and the sum's, then the slots */
    classifier_scale *scale = (classifier_scale *)w;
    float *sum_parts = (float *)(w + 256 + CLS_MAX_PARTS * 4), *block_parts = (float *)(w + CE_HEAD);
    const bool mean = GRAD && reduction == TRAIN_MEAN, total = GRAD && reduction != TRAIN_NONE;
    if (mean) classifier_count(targets, rows, ignore_index, (unsigned *)(w + 256), &done[0], scale, stream);
    /* path 1 adds up its blocks' parts; paths 2, 3, 3b and 3g count rows in */
    const bool on_chip = p.path == FASTEST_CLUSTER || p.path == FASTEST_GRID;
    const bool inside = blocks                     ? blocks <= CLS_MAX_BLOCKS
                        : p.path == FASTEST_BLOCK ? rows <= CLS_MAX_BLOCKS
                        : p.path == FASTEST_BULK  ? true /* the CTA that wrote a row's loss counts in */
                                                   : on_chip && rows <= CLS_ON_CHIP_FINISH_ROWS;
    if constexpr (GRAD) {
        if (blocks && rows <= CLS_SLOT_ROWS && total) { /* path 1 with the slots: its own kernels */
            const op_cross_entropy<true, true> so = {targets, losses, cols, ignore_index, mean ? scale : nullptr,
                                                     nullptr, loss, &done[1], losses, rows,
                                                     (unsigned long long *)(done + 2)};
            fx_run_rows_op<op_cross_entropy<true, true>>(&p, (const T *)x, cols, x, cols, rows, cols, stream,
                                                         fx_in2{nullptr, 0}, so);
            return;
        }
    }
    const op_cross_entropy<GRAD> op = {targets, losses, cols, ignore_index, mean ? scale : nullptr,
                                       total && blocks ? block_parts : nullptr, total && inside ? loss : nullptr,
                                       &done[1], losses, rows, nullptr};
    fx_run_plan_op<op_cross_entropy<GRAD>>(&p, (const T *)x, cols, x, cols, rows, cols, stream, fx_in2{nullptr, 0}, op);
    if (total && !inside)
        classifier_sum(blocks ? block_parts : losses, blocks ? blocks : rows, sum_parts, &done[1],
                       mean ? scale : nullptr, loss, stream);
}

#endif
