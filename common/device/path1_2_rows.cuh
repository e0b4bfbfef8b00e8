/* Taught in lesson 8. Paths 1 and 2 of the row engine, the row in
 * registers, for any row operation (rows_op.cuh) and storage type: the
 * kernel and its launchers as templates, which path1_2_rows.cu
 * instantiates for the softmax and lesson 10 for its operations. */
#ifndef COMMON_DEVICE_PATH1_2_ROWS_CUH
#define COMMON_DEVICE_PATH1_2_ROWS_CUH
#include <math.h>

#include "check.h"
#include "fastest_device.cuh"
#include "fastest_paths.h"
#include "rows_op.cuh"

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
 * fx_max_pick's). */
template <class OP, int VEC, bool PEEL, int FPT, int TPR, bool PK, class T>
__device__ __forceinline__ void fx_rows_store(T *yr, const view_cut &cut, int sub, bool live, float *v,
                                              const float *w, typename OP::fin f, int cb, int ce)
{
    const int nvec = (int)cut.nvec;
    T *yb = yr + cut.head;
#pragma unroll
    for (int i = 0; i < FPT / VEC; i++) {
        const int k = i * TPR + sub;
        if (live && k < nvec) {
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                if constexpr (PK) v[i * VEC + j] = OP::out_at(v[i * VEC + j], f, k * VEC + j == cb);
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
        if constexpr (OP::OUT) fx_rows_store<OP, VEC, PEEL, FPT, TPR, PK>(yr, cut, sub, live, v, w, f, cb, ce);
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

/* ---- paths 1 and 2 for 16-bit rows: the row held as loaded ---------------
 * The kernel above widens each element on load, so a 16-bit row takes a
 * float row's registers: at N = 16384 (512 threads x 32 floats, 59-64
 * registers) two blocks fit per SM, 64 KB of float16 row in flight where
 * a float row has 128 KB, and at 32768 (1024 x 32) one block. This kernel
 * keeps the 16-byte words as they came, FPT / 2 registers, and goes over
 * them three times (fastest_device.cuh's fx_words16_*):
 *   max:   in 16 bits, two elements per instruction (__hmax2: VHMNMX on
 *          sm_90, three inputs), exact, then one pair widened;
 *   sum:   each pair widened (two cvt), exp, added;
 *   store: widened again, exp again, the operation's out, rounded once.
 * One more cvt pair and ex2 pair per word than the float kernel, and twice
 * the blocks per SM. The sum and the store compute what the kernel above
 * does, in the same order; the 16-bit max is the same value (both keep
 * the larger of two numbers and the number beside a NaN), so the same
 * bits come out. Aligned and peeled views (VEC 8; a peeled row's head and
 * tail elements one a thread, as the kernel above), operations that
 * keep exp(x - m) (KEEP_EXP) and read one input. Path 2 runs every such
 * operation's long rows here, a block per row; path 1 only a ROW
 * operation's rows of 32 elements a lane (fx_rows_held16_warp), TPR lanes
 * a row. A ROW operation's lead, count and fix are those of the kernel
 * above. */
/* Blocks per SM the registers are capped for: the words (FPT / 2) and 16
 * more for the row's pointers, m, d and the loop (24 with a ROW
 * operation's target, x[c] and loss; 28 with path 1's rows, whose lanes
 * also keep their losses' sum), rounded up to the 8 registers a thread is
 * given at a time, within 64K registers and 2048 threads an SM. nvcc then
 * fits every class without a spill (ptxas -v, sm_90), peeled rows too,
 * save a ROW operation's peeled rows of 32 elements a thread (8 bytes): 32 registers a
 * thread up to 32 elements, 4 blocks of 512 x 32 where the kernel above
 * fits 2. Measured on sm_90 only, so below it no cap (as path 3's
 * FX_CLUSTER_MIN_CTAS; ptxas rejects a cap above what an SM holds, 1024
 * or 1536 threads on sm_75, sm_86, sm_89). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define FX_ROWS16_MIN_BLOCKS(FPT, TPR, BLOCK, ROW) 0
#else
#define FX_ROWS16_MIN_BLOCKS(FPT, TPR, BLOCK, ROW) \
    fx_rows16_min_blocks(FPT, BLOCK, !(ROW) ? 16 : (TPR) == (BLOCK) ? 24 : 28)
#endif

template <class OP, bool PEEL, int FPT, int TPR, int BLOCK, class T>
__global__ void __launch_bounds__(BLOCK, FX_ROWS16_MIN_BLOCKS(FPT, TPR, BLOCK, OP::ROW))
fastest_rows16_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, long long rows,
                      int cols, int mis, OP op)
{
    static_assert(FPT % 8 == 0, "whole 16-byte words per thread");
    static_assert(OP::NIN == 1 && OP::KEEP_EXP, "out(exp(x - m), f) from the words");
    static_assert(BLOCK % TPR == 0 && (TPR <= 32 || TPR == BLOCK), "a row: part of a warp, or the block");
    constexpr int ITEMS = FPT / 8, RPB = BLOCK / TPR;
    constexpr bool WHOLE = TPR == BLOCK; /* path 2: a block per row, every thread live */
    __shared__ float red_m[32], red_d[32];
    fx_rows_let_next_start<OP>();
    const unsigned pad = vec16_narrow2(-INFINITY, -INFINITY, x); /* exp(pad - m) = 0 */
    const int sub = WHOLE ? (int)threadIdx.x : (int)threadIdx.x % TPR;
    [[maybe_unused]] float mine = 0.0f;   /* path 1: the losses this thread wrote as its rows' lead */
    [[maybe_unused]] unsigned ticket = 0; /* path 1: op.rows_start's */
    if constexpr (OP::ROW && WHOLE)
        if (threadIdx.x == 0) *fx_row_last() = false; /* before the barriers of the first row */
    if constexpr (OP::ROW && !WHOLE) ticket = op.rows_start();

    for (long long first = (long long)blockIdx.x * RPB; first < rows; first += (long long)gridDim.x * RPB) {
        const long long row = WHOLE ? first : first + threadIdx.x / TPR;
        const bool live = WHOLE || row < rows; /* a dead lane still joins the shuffles */
        const long long at = live ? row : 0; /* a dead lane reads row 0 */
        const T *xr = x + at * ldx;
        /* PEEL: the body's words from its first 16-byte boundary, and one head or tail element (ex) for each of
         * the first threads, as the kernel above */
        const view_cut cut = fx_row_cut<8, PEEL>(at, ldx, mis, cols);
        const int nvec = live ? (int)cut.nvec : 0;
        fx_row_t<OP> r{};
        if constexpr (OP::ROW) r = op.begin(at, live);
        unsigned w[ITEMS][4];
        fx_words16_load<ITEMS, TPR>(xr + cut.head, nvec, pad, w, sub);
        [[maybe_unused]] float ex = -INFINITY;
        if constexpr (PEEL) ex = live ? view_extra_load(xr, cut, sub) : -INFINITY;
        [[maybe_unused]] int c = -1;
        [[maybe_unused]] bool owner = false;
        if constexpr (OP::ROW) {
            c = (int)op.col(r);
            if constexpr (PEEL) {
                const int cb = (int)fx_body_col(c, cut, 8);
                owner = live && (cb >= 0 ? (cb / 8) % TPR == sub : sub == fx_extra_index(c, cut, 8));
            } else {
                owner = live && fx_row_owner(c, 0, cols, 8, TPR, sub);
            }
            if (owner) op.pick(&r, elem_load(xr + c)); /* after the row's loads */
        }
        /* all -inf row: NaN below, as the kernel above */
        const float m = row_reduce<TPR>(fmaxf(fx_words16_max(w, pad, x), ex), red_m, op_max());
        float dt = fx_words16_sum_exp(w, m, x);
        if constexpr (PEEL) dt += fx_exp<T>(ex - m);
        const float d = row_reduce<TPR>(dt, red_d, op_sum());
        const typename OP::fin f = fx_finish(op, m, d, r);
        if constexpr (OP::ROW)
            if (live && (c < 0 ? sub == 0 : owner)) {
                mine += op.lead(r, f);
                if constexpr (WHOLE)
                    if (op.counts() && op.count_in()) *fx_row_last() = true;
            }
        T *yr = y + (live ? row : 0) * ldy;
        if constexpr (OP::OUT) fx_words16_store<OP, ITEMS, TPR>(yr + cut.head, nvec, w, m, f, sub);
        if constexpr (OP::OUT && PEEL)
            if (live && sub < cut.nextra) elem_store(yr + view16_extra_at(cut, sub), OP::out(fx_exp<T>(ex - m), f));
        if constexpr (OP::ROW && OP::OUT)
            if (owner) elem_store(yr + c, op.fix(r, f)); /* after its word or its extra */
    }
    if constexpr (OP::ROW && WHOLE) {
        if (op.counts()) {
            __syncthreads();
            if (*fx_row_last()) op.total(red_d);
        }
    } else if constexpr (OP::ROW) {
        op.template rows_end<BLOCK>(mine, red_d, ticket);
    }
}

/* Path 2's class i as the kernel above runs it for OP: 8-element words;
 * a ROW operation in blocks of at most 512 threads, each holding twice
 * the elements: its 24 registers more leave one block of 1024 an SM, and
 * at N = 32768 float16 the classifier ran at 93.4 % of the copy in 512
 * threads of 64 against 79.7 in 1024 of 32 (H100). */
template <class OP>
static constexpr fx_reg_config fx_rows16_for(int i)
{
    const fx_reg_config c = fx_reg_for(i, 8);
    return OP::ROW && c.block > 512 ? fx_reg_config{c.max_cols, 512, c.fpt * c.block / 512, 512} : c;
}

/* Whether a ROW operation's 16-bit rows of path 1's class i are held as
 * loaded (the kernel above, TPR lanes a row): where a lane holds 32
 * elements, whose widened floats took the classifier 59-61 registers,
 * 8 blocks of 128 an SM; as loaded, 48 and 10 (FX_ROWS16_MIN_BLOCKS). */
template <class OP, class T>
static constexpr bool fx_rows_held16_warp(int i)
{
    return OP::ROW && !fx_path1_only<OP>() && i < FX_NWARP && fx_op_class<OP, T>(i, 8).fpt >= 32;
}

/* Class I as the kernel above runs it: path 1's (fx_op_class) or path 2's
 * (fx_rows16_for). */
template <class OP, class T, int I>
static constexpr fx_reg_config fx_rows16_class = I < FX_NWARP ? fx_op_class<OP, T>(I, 8) : fx_rows16_for<OP>(I);

/* The threads a row of class i takes in the kernel above (a peeled row needs one per extra). */
template <class OP, class T>
static constexpr int fx_rows16_tpr(int i)
{
    return i < FX_NWARP ? fx_op_class<OP, T>(i, 8).tpr : fx_rows16_for<OP>(i).tpr;
}

/* Launches class I of the kernel above (a recursive template, as
 * fx_run_rows_at), from path 1's classes held as loaded, then path 2's. */
template <class OP, bool PEEL, class T, int I = 0>
static void fx_run_rows16_at(int i, const T *x, long long ldx, T *y, long long ldy, long long rows, long long cols,
                             cudaStream_t s, const OP &op)
{
    if constexpr (I < FX_NWARP && !fx_rows_held16_warp<OP, T>(I)) {
        fx_run_rows16_at<OP, PEEL, T, I + 1>(i, x, ldx, y, ldy, rows, cols, s, op);
    } else if constexpr (I < FX_NREG) {
        if (i != I) {
            fx_run_rows16_at<OP, PEEL, T, I + 1>(i, x, ldx, y, ldy, rows, cols, s, op);
            return;
        }
        constexpr fx_reg_config C = fx_rows16_class<OP, T, I>;
        if constexpr (!PEEL || C.tpr >= VIEW16_MAX_EXTRAS) { /* PEEL: a thread per extra (fx_run_rows_op asks) */
            void (*kernel)(const T *, long long, T *, long long, long long, int, int, OP) =
                fastest_rows16_kernel<OP, PEEL, C.fpt, C.tpr, C.block, T>;
            kernel<<<fx_grid(rows, C.block / C.tpr), C.block, 0, s>>>(x, ldx, y, ldy, rows, (int)cols, fx_mis(x), op);
            CUDA_CHECK_LAUNCH();
        }
    } else {
        (void)i, (void)x, (void)ldx, (void)y, (void)ldy, (void)rows, (void)cols, (void)s, (void)op;
    }
}

/* Whether path 2's 16-bit rows of class i are held as loaded: where the
 * widened row leaves an SM at most two blocks (512 threads and up): at
 * N = 24576 float16, 70.5 us against 100 us widened (H200). With four
 * blocks an SM already (N = 8192, 256 threads) holding it as loaded gains
 * nothing (docs/experiments/rows-register-classes.md). A ROW operation's
 * rows always: its registers more leave the widened row fewer blocks. */
template <class OP>
static bool fx_rows_held16(int i)
{
    return OP::ROW || fx_reg_blocks_per_sm(i) <= 2;
}

template <class OP, int VEC, bool PEEL, int I, class T = float>
static void fx_launch_rows(const T *x, long long ldx, T *y, long long ldy, long long rows,
                           long long cols, cudaStream_t stream, fx_in2 in2, const OP &op)
{
    constexpr fx_reg_config C = fx_op_class<OP, T>(I, VEC);
    static_assert(C.fpt % 4 == 0 && C.tpr * C.fpt >= C.max_cols, "capacity holds the class");
    if constexpr (OP::NIN == 2) {
        void (*kernel)(const float *, long long, const float *, long long, float *, long long, long long, int, int) =
            fastest_rows2_kernel<OP, VEC, PEEL, C.fpt, C.tpr, C.block>;
        kernel<<<fx_grid(rows, C.block / C.tpr), C.block, 0, stream>>>(x, ldx, in2.x2, in2.ldx2, y, ldy, rows,
                                                                        (int)cols, fx_mis(x));
    } else {
        (void)in2;
        void (*kernel)(const T *, long long, T *, long long, long long, int, int, OP) =
            fastest_rows_kernel<OP, VEC, PEEL, C.fpt, C.tpr, C.block, T>;
        kernel<<<fx_grid(rows, C.block / C.tpr), C.block, 0, stream>>>(x, ldx, y, ldy, rows, (int)cols, fx_mis(x),
                                                                        op);
    }
    CUDA_CHECK_LAUNCH();
}

/* The classes an operation runs: of two inputs, rows of up to half path
 * 2's floats, two arrays of them in registers; PATH1_ONLY, path 1's. */
template <class OP, int I>
static constexpr bool fx_reg_has =
    (OP::NIN == 1 || FX_REG[I].max_cols <= FASTEST_BLOCK_MAX_COLS / 2) && (I < FX_NWARP || !fx_path1_only<OP>());

/* A peeled row's extras, each of which needs a thread of its row. */
template <class T>
static constexpr int fx_rows_extras = fx_is_float<T> ? VIEW_MAX_EXTRAS : VIEW16_MAX_EXTRAS;

/* Whether class I runs peeled rows of T in accesses of VEC for OP: only
 * with a thread per extra (fx_run_rows_op); the others' peeled kernels are
 * never built. */
template <class OP, class T, int I, int VEC>
static constexpr bool fx_rows_peels = fx_op_class<OP, T>(I, VEC).tpr >= fx_rows_extras<T>;

/* Launches configuration i: a recursive template, because each
 * configuration is its own kernel instance. */
template <class OP, int VEC, bool PEEL, class T = float, int I = 0>
static void fx_run_rows_at(int i, const T *x, long long ldx, T *y, long long ldy, long long rows,
                           long long cols, cudaStream_t s, fx_in2 in2, const OP &op)
{
    if constexpr (I < FX_NREG && fx_reg_has<OP, I>) {
        if (i != I) fx_run_rows_at<OP, VEC, PEEL, T, I + 1>(i, x, ldx, y, ldy, rows, cols, s, in2, op);
        else if constexpr (!PEEL || fx_rows_peels<OP, T, I, VEC>)
            fx_launch_rows<OP, VEC, PEEL, I>(x, ldx, y, ldy, rows, cols, s, in2, op);
    } else {
        (void)i, (void)x, (void)ldx, (void)y, (void)ldy, (void)rows, (void)cols, (void)s, (void)in2, (void)op;
    }
}

/* Runs plan p (path 1 or 2) with operation OP on rows of storage type T:
 * 16-byte vectors (4 floats or 8 16-bit elements) where the plan says
 * vec4, peeled where it says peel, single elements otherwise. in2: the
 * second input of a two-input operation. */
template <class OP, class T>
static void fx_run_rows_op(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                           long long cols, cudaStream_t stream, fx_in2 in2 = fx_in2{nullptr, 0}, const OP &op = OP{})
{
    constexpr int V = fx_is_float<T> ? 4 : 8;
    const int i = fx_reg_index(cols, p->path == FASTEST_WARP ? 0 : FX_NWARP);
    if constexpr (!fx_is_float<T> && OP::NIN == 1 && OP::KEEP_EXP && !fx_path1_only<OP>())
        if (p->vec4 && (!p->peel || fx_rows16_tpr<OP, T>(i) >= VIEW16_MAX_EXTRAS) &&
            (p->path == FASTEST_BLOCK ? fx_rows_held16<OP>(i) : fx_rows_held16_warp<OP, T>(i))) {
            if (p->peel) fx_run_rows16_at<OP, true>(i, x, ldx, y, ldy, rows, cols, stream, op);
            else fx_run_rows16_at<OP, false>(i, x, ldx, y, ldy, rows, cols, stream, op);
            return;
        }
    if (p->peel && fx_op_class<OP, T>(i, V).tpr >= fx_rows_extras<T>) { /* a thread per extra */
        fx_run_rows_at<OP, V, true>(i, x, ldx, y, ldy, rows, cols, stream, in2, op);
        return;
    }
    if (p->peel) fx_run_rows_at<OP, 1, false>(i, x, ldx, y, ldy, rows, cols, stream, in2, op);
    else if (p->vec4) fx_run_rows_at<OP, V, false>(i, x, ldx, y, ldy, rows, cols, stream, in2, op);
    else fx_run_rows_at<OP, 1, false>(i, x, ldx, y, ldy, rows, cols, stream, in2, op);
}

#endif
