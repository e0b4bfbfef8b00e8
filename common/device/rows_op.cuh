/* Taught in lesson 8; lesson 10 adds operations. What a row operation
 * tells the row engine's kernels: the engine loads a row, finds its max m
 * and d = sum exp(x - m), and hands each element back to the operation,
 * which says what it becomes on the way out.
 *
 * An operation is a struct of compile-time answers (C++ because the
 * kernels are templates over it: each operation is its own fully inlined
 * kernel, no call through a pointer per element):
 *
 *   KEEP_EXP  true: after the sum, each register holds exp(x - m) in place
 *             of x (the softmax: the output is one multiply away, and exp
 *             is taken once per element); false: it keeps x.
 *   SCALE_EXP with KEEP_EXP, true where out(e, f) is e * f.scale (the
 *             softmax): an ex2.approx exp then takes the scale into its
 *             exponent (fastest_device.cuh, fx_out_exp); an operation
 *             with out_live (below) says the same of it in SCALE_LIVE,
 *   fin       what the operation needs of the row once m and d are known,
 *   finish(m, d) which makes it, once per thread,
 *   out(v, f) an element's output from what its register holds,
 *   rescale(f, c) with KEEP_EXP, for registers that hold exp(x - m_t) of
 *             their thread's own max m_t (paths 3 and 3g), the fin that
 *             gives their output, c being exp(m_t - m),
 *   FPT_MIN   the fewest floats a thread of paths 1 and 2 holds
 *             (path1_2_rows.cuh's fx_reg_op); fpt_min16(n) the fewest
 *             16-bit elements a thread of path 1's class of rows up to n
 *             holds (operations that run on 16-bit rows),
 *   NIN       1.
 *
 * An operation of two inputs a and b (NIN = 2, float rows: lesson 10's
 * softmax backward) reduces a sum in place of (m, d):
 *
 *   term(a, b)        an element's part of the row's sum (padding is 0),
 *   finish_sum(s)     the fin from the row's sum s,
 *   out2(a, b, f)     an element's output.
 *
 * An operation with rows of its own (ROW = true: lesson 10's loss and
 * classifier, whose rows each have a target) is passed to the kernels as
 * an instance (its pointers: the targets, the losses) and answers, per
 * row, about one column of it, col (the target):
 *
 *   row              the row's context,
 *   begin(i, live)   every thread, before row i's loads (live false: a
 *                    dead lane, whose i is 0 and whose row is ignored),
 *   col(r)           the column, or -1 for none,
 *   pick(&r, v)      v = x[col], given to the thread that holds the column
 *                    (its owner: fx_row_owner), read after its loads,
 *   finish(m, d, r)  the fin, as above, with the row's context,
 *   lead(r, f)       the row's value (the loss) from its col's owner, or
 *                    from thread 0 of the row's first piece if it has
 *                    none; it writes it and returns it,
 *   fix(r, f)        the output of column col, stored by its owner after
 *                    its other stores (the classifier's p - 1),
 *   rows_start(), rows_end<BLOCK>(mine, red, ticket)  path 1 (rows
 *                    sharing a block): every thread at the block's start
 *                    and end (ticket: what rows_start gave it; mine: the
 *                    values it led; red: 32 free floats),
 *   counts(), count_in(), total(red)  paths 2, 3 and 3g (a row per block
 *                    or more), where counts(): the lead counts its row in;
 *                    the block counted in last calls total in all threads,
 *   pick_regs(fpt, tpr, esize)  true: in paths 1 and 2 with rows of tpr
 *                    lanes of fpt elements of esize bytes, x[col] comes
 *                    from the registers (a compare per element, reduced
 *                    with the max) and every element's output is
 *                    out_at(v, f, is_col) (a compare per element) in place
 *                    of pick and fix, which cost a load that waits for the
 *                    target and a second store,
 *   same(f), out_live(v, f)  same: true where every element's output is
 *                    one value (an ignored row's); out_live: out's value
 *                    in the other rows, without out's per-element select.
 *                    Paths 1 (rows of a warp), 2 (16-bit), 3, 3g and 3b
 *                    branch once per row on same and store live rows
 *                    with out_live: one FSEL less per element, 2.5 %
 *                    of the 16-bit classifier's time at 512 x 131072
 *                    (H200),
 *   OUT              false: no element is written, the row's value is all,
 *   PATH1_ONLY       true: run by fx_run_rows_op on path 1's plans only (an
 *                    instance of the operation for small grids alone),
 *   FOLLOWED         true: a programmatic dependent launch may follow
 *                    paths 1 and 2's kernels (lesson 10's sum of the
 *                    losses): they let it start early; false: no trigger.
 *
 * Rows of a ROW operation are peeled as the softmax's are (lesson 5's cut,
 * view_cut.cuh): the owner of a column in the body is found from the order
 * of the body's vectors, offset by the head; a column among the head and
 * tail elements (the extras) belongs to the thread that takes that extra
 * (fx_row_owner_cut).
 *
 * Paths 1, 2, 3, 3g and 4 take any one-input operation (path1_2_rows.cuh,
 * path3_cluster.cuh, path3g_grid.cuh, path4_split.cuh), and path 3b any
 * that keeps exp on 16-bit rows (path3b_bulk.cuh); paths 1, 2, 3g and 4
 * take any two-input one. Path 2s runs the softmax only, as path 3b does
 * float rows and path 3's held class 16-bit ones (path3_held.cuh): the
 * plan of another operation leaves out what it has no kernel for
 * (rows_run.cuh). */
#ifndef COMMON_DEVICE_ROWS_OP_CUH
#define COMMON_DEVICE_ROWS_OP_CUH
#include "vec.cuh"      /* elem_load, elem_store */
#include "view_cut.cuh" /* view_cut: a peeled row's head, body and tail */

/* The context of a row for an operation without rows of its own. */
struct fx_no_row {};

/* OP::row for ROW operations, fx_no_row for the others (a partial
 * specialisation: C++ picks the type at compile time). */
template <class OP, bool R = OP::ROW>
struct fx_row_of {
    typedef fx_no_row type;
};
template <class OP>
struct fx_row_of<OP, true> {
    typedef typename OP::row type;
};
template <class OP>
using fx_row_t = typename fx_row_of<OP>::type;

/* The fin of a one-input operation, from the row's context if it has one. */
template <class OP>
__device__ __forceinline__ typename OP::fin fx_finish(const OP &op, float m, float d, const fx_row_t<OP> &r)
{
    if constexpr (OP::ROW) return op.finish(m, d, r);
    else {
        (void)op, (void)r;
        return OP::finish(m, d);
    }
}

/* The operation for the batch of rows that starts at row r0 (the host
 * launches long rows in batches): a ROW operation's pointers move on. */
template <class OP>
static inline OP fx_op_at(const OP &op, long long r0)
{
    if constexpr (OP::ROW) return op.at(r0);
    else {
        (void)r0;
        return op;
    }
}

/* Whether this thread holds column c of a piece [lo, hi) whose vectors of
 * vec elements go to `stride` threads in turn (every path deals them out
 * so: lane k holds vectors k, k + stride, ...). */
__device__ __forceinline__ bool fx_row_owner(long long c, long long lo, long long hi, int vec, int stride, int lane)
{
    return c >= lo && c < hi && ((c - lo) / vec) % stride == lane;
}

/* A peeled row (view_cut: a head, nvec vectors of vec elements, a tail):
 * column c's place in the body (0 ... vec * nvec - 1), or -1 where c is a
 * head or tail element, or no column (-1). */
__device__ __forceinline__ long long fx_body_col(long long c, const view_cut &cut, int vec)
{
    const long long b = c - cut.head;
    return b >= 0 && b < cut.nvec * vec ? b : -1;
}

/* ... and which extra c is, in the order the paths deal the extras out
 * (view_extra_at: the head's, then the tail's), or -1 where c is in the
 * body or is -1. */
__device__ __forceinline__ int fx_extra_index(long long c, const view_cut &cut, int vec)
{
    const long long b = c - cut.head, bend = cut.nvec * vec;
    return c < 0 || (b >= 0 && b < bend) ? -1 : (int)(b < 0 ? c : c - bend);
}

/* fx_row_owner for a peeled row: a column of the body belongs to the
 * thread that holds its vector (this thread's: those of the piece [lo, hi)
 * of the row's columns, dealt out as fx_row_owner says); extra j to lane j
 * of the first piece (first: this thread is in it), as every path deals
 * the extras out. */
__device__ __forceinline__ bool fx_row_owner_cut(long long c, const view_cut &cut, int vec, long long lo,
                                                 long long hi, int stride, int lane, bool first)
{
    if (fx_body_col(c, cut, vec) >= 0) return fx_row_owner(c, lo, hi, vec, stride, lane);
    return first && lane == fx_extra_index(c, cut, vec);
}

/* Paths 2, 3 and 3g, ROW operations: the block that counts in last, told from
 * its lead (fx_row_piece_lead) to all its threads (fx_row_piece_end). */
__device__ __forceinline__ bool *fx_row_last(void)
{
    __shared__ bool last;
    return &last;
}

/* Paths 3, 3g and 4 for a ROW operation, every thread of a piece [lo, hi)
 * of `vec`-element vectors dealt out to `stride` threads (the block's,
 * lane: this thread's place among them): after its loads (xr: the row),
 * the owner of col picks x[col]; returns whether this thread is it.
 * PEEL: the pieces cut the body of a peeled row (cut), whose extras go to
 * the first piece's first threads (first: this is the first piece). */
template <bool PEEL, class OP, class T>
__device__ __forceinline__ bool fx_row_piece_pick(const OP &op, typename OP::row *r, const T *xr, long long lo,
                                                  long long hi, int vec, int stride, int lane, const view_cut &cut,
                                                  bool first)
{
    bool owner;
    if constexpr (PEEL) {
        owner = fx_row_owner_cut(op.col(*r), cut, vec, lo, hi, stride, lane, first);
    } else {
        (void)cut, (void)first;
        owner = fx_row_owner(op.col(*r), lo, hi, vec, stride, lane);
    }
    if (owner) op.pick(r, elem_load(xr + op.col(*r)));
    if (threadIdx.x == 0) *fx_row_last() = false; /* the lead may set it after the piece's barriers */
    return owner;
}

/* Before the piece's stores: the lead writes the row's value and, where
 * the operation counts rows in (paths 3 and 3g), counts its row in. */
template <class OP>
__device__ __forceinline__ void fx_row_piece_lead(const OP &op, const typename OP::row &r, const typename OP::fin &f,
                                                  bool owner, bool first)
{
    const bool lead = op.col(r) >= 0 ? owner : first && threadIdx.x == 0;
    if (lead) {
        op.lead(r, f);
        if (op.counts()) *fx_row_last() = op.count_in();
    }
}

/* After the piece's stores: the owner's column, then, where the operation
 * counts rows in, the total in the CTA that counted in last (red: 32
 * floats of shared memory free to use). */
template <class OP, class T>
__device__ __forceinline__ void fx_row_piece_end(const OP &op, const typename OP::row &r, const typename OP::fin &f,
                                                 T *yr, bool owner, float *red)
{
    if constexpr (OP::OUT)
        if (owner) elem_store(yr + op.col(r), op.fix(r, f));
    if (!op.counts()) return;
    __syncthreads();
    if (*fx_row_last()) op.total(red);
}

/* y = exp(x - m) / d (lesson 8). All -inf row: m = -inf and every
 * exp(-inf - (-inf)) is NaN, so the row comes out NaN, as PyTorch. */
struct rows_op_softmax {
    static constexpr int NIN = 1;
    static constexpr bool ROW = false, OUT = true;
    static constexpr bool KEEP_EXP = true, SCALE_EXP = true;
    static constexpr int FPT_MIN = 4; /* every class of FX_REG as it is */
    static constexpr int fpt_min16(long long) { return 4; }
    struct fin {
        float scale;
    };
    static __device__ __forceinline__ fin finish(float m, float d)
    {
        (void)m;
        return fin{1.0f / d};
    }
    static __device__ __forceinline__ fin rescale(fin f, float c) { return fin{c * f.scale}; }
    static __device__ __forceinline__ float out(float e, fin f) { return e * f.scale; }
};

/* The rows' second input, for operations of two (NIN = 2): float rows,
 * row i at x2 + i * ldx2, cut where x is (the plan checks that it can be). */
typedef struct {
    const float *x2;
    long long ldx2;
} fx_in2;

#endif
