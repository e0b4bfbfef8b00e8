/* Taught in lesson 6. The online softmax state (m, d) and its merge.
 *
 * Any set of values v is summarised by two floats:
 *     m = max(v),   d = sum over v of exp(v - m).
 * The softmax of an element x of the row is then exp(x - m) / d. Two
 * summaries of disjoint sets A and B combine into the summary of A u B:
 *     m = max(mA, mB)
 *     d = dA exp(mA - m) + dB exp(mB - m)
 * (each sum is rescaled from its own max to the common one:
 * exp(v - mA) exp(mA - m) = exp(v - m)). lessons/06_online/README.md shows
 * that this merge is associative and commutative, with identity (-inf, 0):
 * the pieces of a row may be summarised by any threads, warps or blocks and
 * combined in any order or grouping. The float64 twin is md_merge in
 * common/reference.h.
 *
 * The one trap is -inf. A state with m = -inf summarises only -inf values
 * (or none): d = 0. Merging two of them with the formula above computes
 * exp(-inf - (-inf)) = exp(NaN) = NaN, and 0 * NaN = NaN: a row whose
 * first chunks are masked out (-inf, as attention masks do) would turn
 * into NaN. So the exponent is taken against a `shift` that is the max
 * when it is finite and 0 when it is -inf: then every exp is exp(-inf) = 0
 * and d stays 0. NaN inputs still propagate: they never become m (fmaxf
 * skips NaN) but exp(NaN - shift) = NaN makes d NaN, and NaN survives
 * every later merge (NaN * 0 = NaN).
 *
 * __host__ __device__: the same code runs in kernels and in the tests on
 * the CPU. The warp and block merges at the end are device only. C++
 * templates (online_md_push<N>, online_md_row_merge<TPR>) because the
 * chunk length and the threads per row must be compile-time constants:
 * the loops then unroll and the chunk stays in registers. */
#ifndef COMMON_DEVICE_ONLINE_MD_CUH
#define COMMON_DEVICE_ONLINE_MD_CUH

#include <math.h>

typedef struct {
    float m; /* running max; -inf while only -inf (or nothing) was seen */
    float d; /* sum of exp(v - m) over the values seen                  */
} online_md;

/* The summary of nothing: merging it changes nothing, bit for bit. */
__host__ __device__ inline online_md online_md_identity(void)
{
    online_md s = {-INFINITY, 0.0f};
    return s;
}

/* What to subtract before exp when the max is m (see the -inf trap above). */
__host__ __device__ inline float online_md_shift(float m) { return m == -INFINITY ? 0.0f : m; }

/* The summary of A u B from those of A and B. Commutative and associative
 * in exact arithmetic; in floats only up to rounding. Even the operand order
 * can change the last bit: the compiler fuses one product with the
 * addition into an FMA (one rounding fewer), and which one depends on the
 * order. Code that needs identical bits must fix the order (see below). */
__host__ __device__ inline online_md online_md_merge(online_md a, online_md b)
{
    online_md r;
    r.m = fmaxf(a.m, b.m);
    const float shift = online_md_shift(r.m);
    r.d = a.d * expf(a.m - shift) + b.d * expf(b.m - shift);
    return r;
}

/* Folds N values into s: the merge of s with the chunk's own summary,
 * written with one rescale of s.d and one exp per value, where pushing the
 * values one at a time would rescale after each (2 exps per value). */
template <int N>
__host__ __device__ inline online_md online_md_push(online_md s, const float *v)
{
    float cm = -INFINITY;
    for (int i = 0; i < N; i++) cm = fmaxf(cm, v[i]);
    const float m = fmaxf(s.m, cm);
    const float shift = online_md_shift(m);
    float acc = 0.0f;
    for (int i = 0; i < N; i++) acc += expf(v[i] - shift);
    s.d = s.d * expf(s.m - shift) + acc;
    s.m = m;
    return s;
}

/* One step of a xor butterfly: this lane's state s and its partner's,
 * `off` lanes away. The merge's bits depend on the operand order (FMA, see
 * above), so both partners put the state of the lower lane first: they then
 * compute exactly the same thing, and after the last step every lane holds
 * identical bits. */
__device__ __forceinline__ online_md online_md_butterfly_step(online_md s, int off)
{
    online_md o;
    o.m = __shfl_xor_sync(0xffffffffu, s.m, off);
    o.d = __shfl_xor_sync(0xffffffffu, s.d, off);
    const bool upper = (threadIdx.x & off) != 0; /* the partner is the lower lane */
    return upper ? online_md_merge(o, s) : online_md_merge(s, o);
}

/* Merges the states of the TPR threads that share a row; every one of them
 * gets the row's state, bit for bit the same.
 *   TPR <= 32: the row's threads are TPR neighbouring lanes of a warp; a
 *     xor butterfly with offsets TPR/2 ... 1 stays inside each group of
 *     TPR lanes. All 32 lanes must call (full-mask shuffles), including
 *     lanes whose row is past the end of the matrix.
 *   TPR > 32 (TPR == the block): butterfly in each warp, lane 0 of each
 *     warp stores its state in red_m/red_d[warp], barrier, then EVERY warp
 *     merges all the warps' states again (lane l reads entry l % WARPS, so
 *     each group of WARPS lanes holds a full set, in the same order in
 *     every warp), and a second barrier keeps the next call from
 *     overwriting red_m/red_d before every warp has read them. All threads
 *     of the block must call.
 * red_m and red_d: 32 floats each in shared memory. */
template <int TPR>
__device__ __forceinline__ online_md online_md_row_merge(online_md s, float *red_m, float *red_d)
{
    static_assert(TPR >= 1 && TPR <= 1024 && (TPR & (TPR - 1)) == 0, "TPR: a power of two");
    constexpr int W = TPR < 32 ? TPR : 32;
    for (int off = W / 2; off > 0; off /= 2) s = online_md_butterfly_step(s, off);
    if constexpr (TPR > 32) {
        constexpr int WARPS = TPR / 32;
        const int lane = threadIdx.x % 32;
        if (lane == 0) {
            red_m[threadIdx.x / 32] = s.m;
            red_d[threadIdx.x / 32] = s.d;
        }
        __syncthreads();
        s.m = red_m[lane % WARPS]; /* never past the WARPS entries written */
        s.d = red_d[lane % WARPS];
        __syncthreads();
        for (int off = WARPS / 2; off > 0; off /= 2) s = online_md_butterfly_step(s, off);
    }
    return s;
}

#endif
