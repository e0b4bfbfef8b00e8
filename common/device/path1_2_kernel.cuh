/* Taught in lesson 8. Paths 1 and 2's kernel: the row in registers as
 * floats, for any row operation (rows_op.cuh) and storage type (16-bit
 * elements widened on load). path1_2_rows.cuh launches it. */
#ifndef COMMON_DEVICE_PATH1_2_KERNEL_CUH
#define COMMON_DEVICE_PATH1_2_KERNEL_CUH
#include <math.h>

#include "fastest_device.cuh"
#include "fastest_paths.h"
#include "rows_op.cuh"

#ifndef FX_ROWS_LIVE
#define FX_ROWS_LIVE 1 /* -DFX_ROWS_LIVE=0: fx_rows_live never branches (tests/ab_flags.sh's experiments) */
#endif

/* An element's output: OP::out of its register, or with two inputs
 * OP::out2 of both (w: the second input's registers). */
template <class OP>
__device__ __forceinline__ float fx_rows_out(const float *v, const float *w, int p, typename OP::fin f)
{
    if constexpr (OP::NIN == 2) return OP::out2(v[p], w[p], f);
    else {
        (void)w;
        return OP::out(v[p], f);
    }
}

/* Whether a ROW operation takes its column from the registers in rows of
 * tpr lanes of fpt elements of T (rows_op.cuh, pick_regs). */
template <class OP, class T>
__host__ __device__ static constexpr bool fx_pick_regs(int fpt, int tpr)
{
    if constexpr (OP::ROW) return tpr <= 32 && OP::pick_regs(fpt, tpr, (int)sizeof(T));
    else return (void)fpt, (void)tpr, false;
}

/* Class c as operation OP runs it: at least OP::FPT_MIN floats a thread,
 * with proportionally fewer lanes. An operation whose finish costs each
 * thread more than the softmax's one division (log-softmax's log) pays it
 * on fewer threads: at N = 32 on the H200 log-softmax ran 0.6 % slower with
 * path 1's 8 lanes of 4 floats than with 4 lanes of 8. */
static constexpr fx_reg_config fx_reg_op(fx_reg_config c, int fpt_min)
{
    return c.fpt >= fpt_min ? c
                            : fx_reg_config{c.max_cols, c.tpr * c.fpt >= fpt_min ? c.tpr * c.fpt / fpt_min : 1, fpt_min,
                                            c.block};
}

/* Class i's configuration as OP runs it on rows of T in accesses of vec
 * elements: at least OP::FPT_MIN elements a thread (fx_reg_op), and in
 * path 1's classes of 16-bit rows at least OP::fpt_min16 (rows_op.cuh). */
template <class OP, class T>
static constexpr fx_reg_config fx_op_class(int i, int vec)
{
    if constexpr (fx_is_float<T>) return fx_reg_op(fx_reg_for(i, vec), OP::FPT_MIN);
    else return fx_reg_op(fx_reg_for(i, vec), i < FX_NWARP ? OP::fpt_min16(FX_REG[i].max_cols) : OP::FPT_MIN);
}

/* Whether OP runs on path 1 only (a ROW operation's PATH1_ONLY): its
 * kernels of path 2 are then not built. */
template <class OP>
__host__ __device__ static constexpr bool fx_path1_only(void)
{
    if constexpr (OP::ROW) return OP::PATH1_ONLY;
    else return false;
}

/* The blocks per SM paths 1 and 2's kernel caps its registers for: none,
 * but for a ROW operation's 16-bit rows in 16-byte vectors of 16 elements
 * a thread, and for its float rows of 8 floats a thread if it writes them
 * (path 1's classes up to 256), in blocks of up to 512 threads: 1536
 * threads an SM (40 registers; not its PATH1_ONLY kernels, which the cap
 * made spill). Left alone, ptxas gave the classifier's bfloat16 rows of
 * 2048 48 registers, 1280 threads an SM: 87.6 % of the copy at
 * 32768 x 2048 against 90.6 with the cap (H100); its float rows of 32-128
 * 43-46 registers, 1280 threads an SM, 2.5 % slower than with the cap
 * (H200). Measured on sm_90 only. */
template <class OP, class T>
static constexpr int fx_rows_min_blocks(int vec, int fpt, int block)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    return (void)vec, (void)fpt, (void)block, 0;
#else
    const bool capped = fx_is_float<T> ? OP::OUT && fpt == 8 : vec == 8 && fpt == 16;
    return OP::ROW && !fx_path1_only<OP>() && capped && block <= 512 ? 1536 / block : 0;
#endif
}

/* Whether paths 1 and 2's stores branch once a row on OP::same (PK: the
 * column from the registers, whose out_at has its own compare): on path
 * 1's rows of a whole warp, where the branch is the same for every lane,
 * in vectors: the 16-bit classifier 1.5-1.9 % faster at N = 512, the float
 * one 0.5-1 % at N = 1024 (H200). Not on path 2: with 1024 threads of 64
 * registers the second loop made the float classifier 3 % slower at
 * 4096 x 32000 and spill at 32001; nor on rows of fewer lanes, where some
 * kernels under the register cap spilled
 * (docs/experiments/training-classifier-registers.md). */
template <class OP>
__host__ __device__ static constexpr bool fx_rows_live(int vec, int tpr, bool pk)
{
    if constexpr (OP::ROW) return FX_ROWS_LIVE && !pk && tpr == 32 && vec > 1;
    else return (void)vec, (void)tpr, (void)pk, false;
}

/* A ROW operation's column taken from the registers: the row's max and
 * x[c] reduced together over its TPR <= 32 lanes (the lane that holds
 * column c adds it to a sum to which every other lane adds 0: exact), x[c]
 * given to every lane's context. cb: c's place in the body (PEEL: past the
 * head; -1 where c is an extra or none), ce: which extra c is (PEEL; -1:
 * none), held in v[FPT] by lane ce. Returns the max. */
template <class OP, int VEC, bool PEEL, int FPT, int TPR>
__device__ __forceinline__ float fx_max_pick(const OP &op, typename OP::row *r, float m, const float *v, int cb,
                                             int ce, int sub)
{
    float xc = 0.0f;
#pragma unroll
    for (int p = 0; p < FPT; p++)
        if (((p / VEC) * TPR + sub) * VEC + p % VEC == cb) xc = v[p];
    if constexpr (PEEL) {
        if (sub == ce) xc = v[FPT];
    } else {
        (void)ce;
    }
    for (int off = TPR / 2; off > 0; off /= 2) {
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
        xc += __shfl_xor_sync(0xffffffffu, xc, off);
    }
    op.pick(r, xc);
    return m;
}

/* A ROW operation's launch after paths 1 and 2 (OP::FOLLOWED: lesson
 * 10's sum of the losses, a programmatic dependent: classifier.cu) may
 * begin as soon as every block of this grid has; it waits for this grid's
 * end before it reads. Without the trigger it would start only after the
 * last block. Only where a launch follows: the trigger in every block of
 * the loss alone made it 8 % slower at N = 32 ... 256 (H200). */
template <class OP>
__device__ __forceinline__ void fx_rows_let_next_start(void)
{
#if FX_CLUSTER_CODE
    if constexpr (OP::ROW) {
        if constexpr (OP::FOLLOWED) cudaTriggerProgrammaticLaunchCompletion();
    }
#endif
}

/* Paths 1 and 2: thread `sub` of a row loads its vectors of the row's
 * body (xr, cut by `cut`; PEEL: its extra too) into v, and with two inputs
 * the second's into w; past the row, padding that the reduction ignores. */
template <class OP, int VEC, bool PEEL, int FPT, int TPR, class T>
__device__ __forceinline__ void fx_rows_load(const T *xr, const T *x2r, const view_cut &cut, int sub, bool live,
                                             float *v, float *w)
{
    constexpr bool TWO = OP::NIN == 2;           /* a second input, and a sum in place of (m, d) */
    constexpr float PAD = TWO ? 0.0f : -INFINITY;
    const int nvec = (int)cut.nvec;
#pragma unroll
    for (int i = 0; i < FPT / VEC; i++) {
        const int k = i * TPR + sub;
        if (live && k < nvec) {
            load_vec<VEC>(xr + cut.head + (long long)k * VEC, &v[i * VEC]);
            if constexpr (TWO) load_vec<VEC>(x2r + cut.head + (long long)k * VEC, &w[i * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[i * VEC + j] = PAD;
            if constexpr (TWO)
                for (int j = 0; j < VEC; j++) w[i * VEC + j] = PAD;
        }
    }
    if constexpr (PEEL) {
        v[FPT] = live ? view_extra_load(xr, cut, sub) : -INFINITY;
        if constexpr (TWO) {
            const bool has = live && sub < cut.nextra;
            v[FPT] = has ? v[FPT] : 0.0f;
            w[FPT] = has ? view_extra_load(x2r, cut, sub) : 0.0f;
        }
    }
}

/* Paths 1 and 2: thread `sub` stores its elements' outputs to row yr (PK:
 * a ROW operation's column by a compare per element, out_at: cb and ce as
 * fx_max_pick's). BR: a ROW operation's rows branch once on same(f), as
 * paths 3 and 3b: LIVE rows store out_live, without out's select per
 * element (fx_rows_live says where). */
template <class OP, int VEC, bool PEEL, int FPT, int TPR, bool PK, bool BR, class T, bool LIVE = false>
__device__ __forceinline__ void fx_rows_store(T *yr, const view_cut &cut, int sub, bool live, float *v,
                                              const float *w, typename OP::fin f, int cb, int ce)
{
    if constexpr (BR && !LIVE)
        if (!OP::same(f))
            return fx_rows_store<OP, VEC, PEEL, FPT, TPR, PK, BR, T, true>(yr, cut, sub, live, v, w, f, cb, ce);
    const int nvec = (int)cut.nvec;
    T *yb = yr + cut.head;
#pragma unroll
    for (int i = 0; i < FPT / VEC; i++) {
        const int k = i * TPR + sub;
        if (live && k < nvec) {
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                if constexpr (PK) v[i * VEC + j] = OP::out_at(v[i * VEC + j], f, k * VEC + j == cb);
                else if constexpr (LIVE) v[i * VEC + j] = OP::out_live(v[i * VEC + j], f);
                else v[i * VEC + j] = fx_rows_out<OP>(v, w, i * VEC + j, f);
            }
            /* PEEL: one st.global.v4 even where it costs <32 floats, 512
             * threads> a 4-byte spill: 97.7 against 95.1 % of the aligned
             * speed with the split store, 4096 x 16384 (H100). */
            if constexpr (PEEL) fx_store_peel<VEC>(yb + (long long)k * VEC, &v[i * VEC]);
            else store_vec<VEC>(yb + (long long)k * VEC, &v[i * VEC]);
        }
    }
    if constexpr (PEEL) {
        if (live && sub < cut.nextra) {
            float o;
            if constexpr (PK) o = OP::out_at(v[FPT], f, sub == ce);
            else if constexpr (LIVE) o = OP::out_live(v[FPT], f);
            else o = fx_rows_out<OP>(v, w, FPT, f);
            if constexpr (fx_is_float<T>) yr[view_extra_at(cut, sub)] = o;
            else elem_store(yr + view16_extra_at(cut, sub), o);
        }
    } else {
        (void)ce;
    }
}

/* ---- paths 1 and 2: the row in registers ----------------------------------
 * TPR threads per row: 1 ... 32 neighbouring lanes (path 1, BLOCK / TPR
 * rows per block, no barrier at all), or the whole block (path 2). Thread
 * `sub` of a row holds vectors sub, sub + TPR, ... of the row's body, and
 * with PEEL one extra (v[FPT]; the host peels only when TPR >= 8, so 6
 * extras find 6 threads): coalesced, and all loads are issued before the
 * first use. A grid-stride loop over groups of rows;
 * `first` is uniform over the block, so every thread reaches the barriers
 * of the block reductions. cols <= 32768: an int.
 * The reductions are lesson 5's: max, then sum (row_reduce). Within part of
 * a warp each step is a shuffle and one cheap operation, where a butterfly
 * of (m, d) merges has two exps, on the critical path of short rows: 6.2
 * against 6.7 us at 1024 x 512 on the H100. For a block the merge saves one
 * barrier round but is still no faster
 * (docs/experiments/rows-register-classes.md). */
template <class OP, int VEC, bool PEEL, int FPT, int TPR, int BLOCK, class T>
__device__ __forceinline__ void fx_rows_body(const T *__restrict__ x, long long ldx, const T *x2, long long ldx2,
                                             T *y, long long ldy, long long rows, int cols, int mis,
                                             const OP &op)
{
    static_assert(FPT % VEC == 0, "whole vectors per thread");
    static_assert(BLOCK % TPR == 0 && (TPR <= 32 || TPR == BLOCK), "a row: part of a warp, or the block");
    constexpr int RPB = BLOCK / TPR;
    constexpr int X = PEEL ? 1 : 0;    /* the extra's register */
    constexpr bool TWO = OP::NIN == 2; /* a second input, and a sum in place of (m, d) */
    __shared__ float red_m[32], red_d[32]; /* TPR > 32 only: max, sum */
    fx_rows_let_next_start<OP>();
    const int sub = threadIdx.x % TPR;
    float mine = 0.0f; /* ROW: the values this thread wrote as its rows' lead */
    if constexpr (OP::ROW && TPR == BLOCK)
        if (threadIdx.x == 0) *fx_row_last() = false; /* a block's barriers come before any lead sets it */
    [[maybe_unused]] unsigned ticket = 0; /* ROW, rows sharing a block: op.rows_start's */
    if constexpr (OP::ROW && TPR < BLOCK) ticket = op.rows_start();

    for (long long first = (long long)blockIdx.x * RPB; first < rows; first += (long long)gridDim.x * RPB) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < rows; /* a dead lane still joins the shuffles */
        const long long at = live ? row : 0; /* a dead lane reads row 0 */
        const T *xr = x + at * ldx;
        const T *x2r = TWO ? x2 + at * ldx2 : nullptr;
        const view_cut cut = fx_row_cut<VEC, PEEL>(at, ldx, mis, cols);
        float v[FPT + X], w[TWO ? FPT + X : 1];
        fx_row_t<OP> r{};
        if constexpr (OP::ROW) r = op.begin(at, live); /* before the loads: their latencies overlap */
        fx_rows_load<OP, VEC, PEEL, FPT, TPR>(xr, x2r, cut, sub, live, v, w);
        /* ROW: the row's column c, and whether this thread holds it; PEEL:
         * its place in the body (cb) or among the extras (ce) */
        constexpr bool PK = fx_pick_regs<OP, T>(FPT, TPR);
        [[maybe_unused]] int c = -1, cb = -1, ce = -1; /* cols <= 32768 here */
        [[maybe_unused]] bool owner = false;
        if constexpr (OP::ROW) {
            c = (int)op.col(r);
            if constexpr (PEEL) {
                cb = (int)fx_body_col(c, cut, VEC);
                ce = fx_extra_index(c, cut, VEC);
                owner = live && (cb >= 0 ? (cb / VEC) % TPR == sub : sub == ce);
            } else {
                cb = c;
                owner = live && fx_row_owner(c, 0, cols, VEC, TPR, sub);
            }
            if (!PK && owner) op.pick(&r, elem_load(xr + c)); /* after the loads: it waits for the target */
        }
        typename OP::fin f;
        if constexpr (TWO) {
            float s = 0.0f;
#pragma unroll
            for (int p = 0; p < FPT + X; p++) s += OP::term(v[p], w[p]);
            f = OP::finish_sum(row_reduce<TPR>(s, red_d, op_sum()));
        } else {
            /* All -inf row: exp(-inf - (-inf)) = NaN, as PyTorch. */
            float m = -INFINITY;
#pragma unroll
            for (int p = 0; p < FPT + X; p++) m = fmaxf(m, v[p]);
            if constexpr (PK) m = fx_max_pick<OP, VEC, PEEL, FPT, TPR>(op, &r, m, v, cb, ce, sub);
            else m = row_reduce<TPR>(m, red_m, op_max());
            float d = 0.0f;
#pragma unroll
            for (int p = 0; p < FPT + X; p++) {
                const float e = fx_exp<T>(v[p] - m);
                if constexpr (OP::KEEP_EXP) v[p] = e;
                d += e;
            }
            d = row_reduce<TPR>(d, red_d, op_sum());
            f = fx_finish(op, m, d, r);
        }
        if constexpr (OP::ROW)
            if (live && (PK || c < 0 ? sub == 0 : owner)) {
                mine += op.lead(r, f);
                /* a block per row: the lead counts its row in, as paths 3 and 3g */
                if constexpr (TPR == BLOCK)
                    if (op.counts() && op.count_in()) *fx_row_last() = true;
            }
        /* 16-bit rows: column c's output made before the stores, so that
         * the row's state it needs is dead during them: bfloat16 rows of
         * 32 ran 11 % faster so; float rows of 512, 4 % slower (H200). */
        constexpr bool FIX_EARLY = OP::ROW && OP::OUT && !PK && !fx_is_float<T>;
        [[maybe_unused]] float fixv = 0.0f;
        if constexpr (FIX_EARLY)
            if (owner) fixv = op.fix(r, f);
        T *yr = y + (live ? row : 0) * ldy;
        constexpr bool BR = fx_rows_live<OP>(VEC, TPR, PK);
        if constexpr (OP::OUT) fx_rows_store<OP, VEC, PEEL, FPT, TPR, PK, BR>(yr, cut, sub, live, v, w, f, cb, ce);
        /* Two-input operations reduce once per row into one shared array:
         * a fast warp's next row must not overwrite red_d before a slow
         * warp has read this row's (row_reduce.cuh). Only a grid-stride
         * loop that goes round comes here, and only with a block per row. */
        if constexpr (TWO && TPR > 32) __syncthreads();
        if constexpr (OP::ROW && OP::OUT && !PK)
            if (owner) elem_store(yr + c, FIX_EARLY ? fixv : op.fix(r, f)); /* after its vector's store */
    }
    if constexpr (OP::ROW && TPR == BLOCK) {
        if (op.counts()) {
            __syncthreads();
            if (*fx_row_last()) op.total(red_d);
        }
    } else if constexpr (OP::ROW) {
        op.template rows_end<BLOCK>(mine, red_d, ticket);
    } else {
        (void)mine;
    }
}

/* Paths 1 and 2's kernels: one input (x), or two (x and x2, NIN = 2; y
 * may be x2, as lesson 10's backward allows dx = dy: every element is read
 * before its thread writes it, and x2 and y are not __restrict__). */
template <class OP, int VEC, bool PEEL, int FPT, int TPR, int BLOCK, class T = float>
__global__ void __launch_bounds__(BLOCK, (fx_rows_min_blocks<OP, T>(VEC, FPT, BLOCK)))
fastest_rows_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy,
                    long long rows, int cols, int mis, OP op)
{
    fx_rows_body<OP, VEC, PEEL, FPT, TPR, BLOCK, T>(x, ldx, nullptr, 0, y, ldy, rows, cols, mis, op);
}
template <class OP, int VEC, bool PEEL, int FPT, int TPR, int BLOCK>
__global__ void __launch_bounds__(BLOCK)
fastest_rows2_kernel(const float *__restrict__ x, long long ldx, const float *x2, long long ldx2, float *y,
                     long long ldy, long long rows, int cols, int mis)
{
    fx_rows_body<OP, VEC, PEEL, FPT, TPR, BLOCK, float>(x, ldx, x2, ldx2, y, ldy, rows, cols, mis, OP{});
}

#endif
