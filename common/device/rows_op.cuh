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
 *   fin       what the operation needs of the row once m and d are known,
 *   finish(m, d) which makes it, once per thread,
 *   out(v, f) an element's output from what its register holds,
 *   rescale(f, c) with KEEP_EXP, for registers that hold exp(x - m_t) of
 *             their thread's own max m_t (paths 3 and 3g), the fin that
 *             gives their output, c being exp(m_t - m),
 *   FPT_MIN   the fewest floats a thread of paths 1 and 2 holds
 *             (path1_2_rows.cuh's fx_reg_op),
 *   NIN       1.
 *
 * An operation of two inputs a and b (NIN = 2, float rows: lesson 10's
 * softmax backward) reduces a sum in place of (m, d):
 *
 *   term(a, b)        an element's part of the row's sum (padding is 0),
 *   finish_sum(s)     the fin from the row's sum s,
 *   out2(a, b, f)     an element's output.
 *
 * Paths 1, 2, 3, 3g and 4 take any one-input operation (path1_2_rows.cuh,
 * path3_cluster.cuh, path3g_grid.cuh, path4_split.cuh), paths 1, 2, 3g
 * and 4 any two-input one; paths 2s and 3b run the softmax only, and the
 * plan of another operation leaves out what it has no kernel for
 * (rows_run.cuh). */
#ifndef COMMON_DEVICE_ROWS_OP_CUH
#define COMMON_DEVICE_ROWS_OP_CUH

/* y = exp(x - m) / d (lesson 8). All -inf row: m = -inf and every
 * exp(-inf - (-inf)) is NaN, so the row comes out NaN, as PyTorch. */
struct rows_op_softmax {
    static constexpr int NIN = 1;
    static constexpr bool KEEP_EXP = true;
    static constexpr int FPT_MIN = 4; /* every class of FX_REG as it is */
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
