/* Taught in lesson 9. Paths 1 and 2 for 16-bit rows held in registers as
 * loaded, and the classes that run them; path1_2_rows.cuh launches it
 * where the plan allows. */
#ifndef COMMON_DEVICE_PATH1_2_ROWS16_CUH
#define COMMON_DEVICE_PATH1_2_ROWS16_CUH
#include <math.h>

#include "check.h"
#include "path1_2_kernel.cuh" /* the float kernel it mirrors, and its helpers */

/* ---- paths 1 and 2 for 16-bit rows: the row held as loaded ---------------
 * The float kernel (path1_2_kernel.cuh) widens each element on load, so a 16-bit row takes a
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
 * the blocks per SM. The sum and the store compute what the float kernel
 * does, in the same order; the 16-bit max is the same value (both keep
 * the larger of two numbers and the number beside a NaN), so the same
 * bits come out. Aligned and peeled views (VEC 8; a peeled row's head and
 * tail elements one a thread, as the float kernel), operations that
 * keep exp(x - m) (KEEP_EXP) and read one input. Path 2 runs every such
 * operation's long rows here, a block per row; path 1 only a ROW
 * operation's rows of 32 elements a lane (fx_rows_held16_warp), TPR lanes
 * a row. A ROW operation's lead, count and fix are those of the float
 * kernel. */
/* Blocks per SM the registers are capped for: the words (FPT / 2) and 16
 * more for the row's pointers, m, d and the loop (24 with a ROW
 * operation's target, x[c] and loss; 28 with path 1's rows, whose lanes
 * also keep their losses' sum), rounded up to the 8 registers a thread is
 * given at a time, within 64K registers and 2048 threads an SM. nvcc then
 * fits every class without a spill (ptxas -v, sm_90), peeled rows too,
 * save a ROW operation's peeled rows of 32 elements a thread (8 bytes): 32 registers a
 * thread up to 32 elements, 4 blocks of 512 x 32 where the float kernel
 * fits 2. Measured on sm_90 only, so below it no cap (as path 3's
 * FX_CLUSTER_MIN_CTAS; ptxas rejects a cap above what an SM holds, 1024
 * or 1536 threads on sm_75, sm_86, sm_89). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define FX_ROWS16_MIN_BLOCKS(FPT, TPR, BLOCK, ROW) 0
#else
#define FX_ROWS16_MIN_BLOCKS(FPT, TPR, BLOCK, ROW) \
    fx_rows16_min_blocks(FPT, BLOCK, !(ROW) ? 16 : (TPR) == (BLOCK) ? 24 : 28)
#endif

/* Element col of a row held as fx_words16_load loads it, taken from the
 * words of the lane that holds it (its vector col / 8 is that lane's k-th). */
template <int ITEMS, int TPR, class T>
__device__ __forceinline__ float fx_words16_at(const unsigned (&w)[ITEMS][4], int col, const T *type)
{
    const int k = col / 8 / TPR, j = col % 8 / 2;
    unsigned u = 0;
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
#pragma unroll
        for (int q = 0; q < 4; q++) u = i == k && q == j ? w[i][q] : u;
    const float2 p = vec16_widen2(u, type);
    return col & 1 ? p.y : p.x;
}

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
         * the first threads, as the float kernel */
        const view_cut cut = fx_row_cut<8, PEEL>(at, ldx, mis, cols);
        const int nvec = live ? (int)cut.nvec : 0;
        fx_row_t<OP> r{};
        if constexpr (OP::ROW) r = op.begin(at, live);
        unsigned w[ITEMS][4];
        fx_words16_load<ITEMS, TPR>(xr + cut.head, nvec, pad, w, sub);
        [[maybe_unused]] float ex = -INFINITY;
        if constexpr (PEEL) ex = live ? view_extra_load(xr, cut, sub) : -INFINITY;
        [[maybe_unused]] int c = -1, cb = -1;
        [[maybe_unused]] bool owner = false;
        if constexpr (OP::ROW) {
            c = (int)op.col(r);
            cb = c;
            if constexpr (PEEL) {
                cb = (int)fx_body_col(c, cut, 8);
                owner = live && (cb >= 0 ? (cb / 8) % TPR == sub : sub == fx_extra_index(c, cut, 8));
            } else {
                owner = live && fx_row_owner(c, 0, cols, 8, TPR, sub);
            }
            /* A block's row (WHOLE) reads x[c] through a volatile pointer: issued here, beside the row's
             * loads, where a plain load is sunk past the two reductions' barriers and waited for after them
             * (the 16-bit classifier at 4096 x 16384 takes 2.5 % less time, H200). Rows of a warp's lanes
             * take it from the owner's words, no load waiting for the target's (the classifier at
             * 65536 x 1024 in 0.993-0.995 of the time of that load, H200). */
            if (owner) {
                if constexpr (WHOLE) {
                    const unsigned short b = *(const volatile unsigned short *)(xr + c);
                    op.pick(&r, elem_load((const T *)&b));
                } else {
                    op.pick(&r, PEEL && cb < 0 ? ex : fx_words16_at<ITEMS, TPR>(w, cb, x));
                }
            }
        }
        /* all -inf row: NaN below, as the float kernel */
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
            if (live && sub < cut.nextra) elem_store(yr + view16_extra_at(cut, sub), fx_out_exp<OP, false, T>(ex - m, f));
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

#endif
