/* Taught in lesson 8. The device code the row engine's kernels share: each
 * thread's own (m, d) state, the cut of peeled rows, and the piece of a row
 * that a CTA of path 3 or 3g holds on chip. Each path's kernel and launcher
 * are in its own file (path*.cu); rows_plan.cu picks the path.
 *
 * One idea runs through the kernels that stream a row (path 2s) or spread
 * it over several SMs (paths 3, 3g, 4): each thread first summarises ITS
 * OWN values by a state (m_t, d_t) = (max, sum of exp(v - m_t)), replacing
 * each value by exp(v - m_t) on the way, so exp is computed once per
 * element. The states of all threads of a row (a block, a cluster of
 * blocks or many blocks) are merged with lesson 6's associative (m, d)
 * merge into the row's (M, D), and each thread writes
 *
 *     y = exp(v - m_t) * exp(m_t - M) / D = exp(v - M) / D,
 *
 * scaling by one per-thread factor. One merge of (m, d) pairs replaces
 * lesson 5's two reductions (max, then sum): one cluster barrier instead of
 * two for a cluster, one exchange through global memory for path 3g.
 * Paths 1 and 2 (a row in part of a warp, or in one block) keep lesson 5's
 * two cheap reductions, measured faster there (path1_2_rows.cu).
 *
 * Reused from lesson 6 (online_md.cuh, beside this file): online_md, its
 * merge and identity, online_md_push (a chunk into a running state), the
 * warp butterfly and online_md_row_merge (1 ... 32 lanes, or a block).
 *
 * Why C++ templates: a row kept in registers is an array float v[FPT]
 * whose size must be a compile-time constant, with every loop over it
 * unrolled, or the compiler moves it to local memory (DRAM). FPT, the
 * access width VEC, the threads per row and the block size are template
 * parameters: one source, one fully unrolled kernel per row-length class,
 * picked at run time by the host. */
#ifndef COMMON_DEVICE_FASTEST_DEVICE_CUH
#define COMMON_DEVICE_FASTEST_DEVICE_CUH
#include <float.h> /* FLT_MIN: the emulator's flush in fx_ex2 */
#include <math.h>

#include "online_md.cuh" /* lesson 6's (m, d) state and merges */
#include "vec.cuh"        /* lesson 5's load_vec, store_vec      */
#include "view_cut.cuh"   /* lesson 5's cut of misaligned rows  */
#include "row_reduce.cuh" /* lesson 5's row_reduce              */
#include "rows_op.cuh"    /* what a row operation tells the paths */
#include <cooperative_groups.h>

/* Cluster code (path 3) compiles for sm_90 and up and for the CPU
 * emulator; other targets get kernels with empty bodies that the host
 * never launches (cluster_launch.h's fx_can_launch_clusters). */
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900) || defined(CUDA_EMU)
#define FX_CLUSTER_CODE 1
#else
#define FX_CLUSTER_CODE 0
#endif
#include "cluster_exchange.cuh" /* paths 3 and 3b: fx_cluster_open, fx_cluster_exchange */

/* ---- moving VEC consecutive floats (VEC = 4: one 16-byte access) -------
 * Lesson 5's load_vec / store_vec (vec.cuh), in global and shared memory
 * alike; x goes through the read-only path (ld.global.nc) because the
 * compiler can prove from __restrict__ that x is never written. One
 * exception: with the row offsets of peeled views (fx_row_cut) the compiler
 * splits each float4 store of the register part of paths 3 and 3g into
 * 4 + 4 + 8 bytes (83.9 against 91.0 % of copy at 128 x 2^19 on the H100),
 * and one store of each peeled path 1, 2, 2s and 4 kernel. There the PEEL
 * instances (always VEC = 4) store with lesson 5's view_store4: one
 * st.global.v4 in inline PTX. Not __stwb: its "memory" clobber forbids the
 * compiler to move any load across it, and used for every store it
 * serialises the shared-memory write loops (87.9 against 94.2 % at
 * 1024 x 65536, H100). Nothing in these kernels reads y, so no clobber is
 * needed. */

/* ---- storage types (lesson 9) ---------------------------------------------
 * The kernels are templates over the storage type T of x and y too: float
 * (the default, lesson 8 itself), or lesson 9's __half and
 * __nv_bfloat16. Everything between the load and the store is float
 * whatever T is: load_vec widens, store_vec rounds once (vec.cuh). VEC
 * counts elements: 4 floats or 8 16-bit values in one 16-byte access, or
 * 1. Register arrays hold floats, so their capacity in elements does not
 * depend on T; the shared-memory parts of paths 3 and 3g hold T, so the
 * same bytes of shared memory hold twice the 16-bit elements (a 16-bit
 * CTA carries nearly a float CTA's bytes of the row: fx_cl_cap). 16-bit views are peeled too, with lesson 5's
 * view16_row_cut (0-7 head and tail elements, 8-element vectors between);
 * only x32 (YCUT) views are float only. fx_mis: the kernels' `mis`, the
 * base's offset from 16 bytes in elements. fx_store_peel: the peeled
 * kernels' body store, one st.global.v4 whatever the type (see above). */
static inline int fx_mis(const float *x) { return view_mis(x); }
static inline int fx_mis(const __half *x) { return view16_mis(x); }
static inline int fx_mis(const __nv_bfloat16 *x) { return view16_mis(x); }

/* fx_is_float<T>: the peeled kernels store their head and tail elements
 * with `if constexpr (fx_is_float<T>) y[at] = v; else elem_store(...)`:
 * the float instances keep a plain store (a helper function for both,
 * even inlined, lets nvcc schedule the float code differently), the 16-bit
 * ones round explicitly. */
template <class T>
constexpr bool fx_is_float = false;
template <>
constexpr bool fx_is_float<float> = true;

/* Where extra j of a peeled row lies: lesson 5's view_extra_at for float
 * rows, view16_extra_at for 16-bit ones. */
template <class T>
__device__ __forceinline__ long long fx_extra_at(view_cut c, int j)
{
    if constexpr (fx_is_float<T>) return view_extra_at(c, j);
    else return view16_extra_at(c, j);
}

/* The larger of each pair of 16-bit values in two words (__hmax2:
 * VHMNMX on sm_90), exact; of a NaN and a number, the number, as fmaxf.
 * The max of 16-bit rows held as loaded (path1_2_rows.cu, and lesson
 * 10's classifier). */
__device__ __forceinline__ unsigned fx_max2(unsigned a, unsigned b, const __half *)
{
    __half2 r = __hmax2(*reinterpret_cast<const __half2 *>(&a), *reinterpret_cast<const __half2 *>(&b));
    return *reinterpret_cast<const unsigned *>(&r);
}
__device__ __forceinline__ unsigned fx_max2(unsigned a, unsigned b, const __nv_bfloat16 *)
{
    __nv_bfloat162 r =
        __hmax2(*reinterpret_cast<const __nv_bfloat162 *>(&a), *reinterpret_cast<const __nv_bfloat162 *>(&b));
    return *reinterpret_cast<const unsigned *>(&r);
}

/* 2^x as the GPU approximates it (MUFU.EX2; results under 2^-126 flush
 * to 0), on the emulator exp2f with the same flush. */
__device__ __forceinline__ float fx_ex2(float x)
{
#if defined(__CUDA_ARCH__)
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#else /* the CPU emulator */
    const float r = exp2f(x);
    return r < FLT_MIN ? 0.0f : r;
#endif
}

/* exp of one element, and a chunk of elements pushed into a state.
 * float rows: expf and lesson 6's online_md_push. 16-bit rows: __expf's
 * arithmetic (ex2.approx of x log2 e, 2 instructions where expf takes
 * about 10). A 16-bit row has half the bytes per element, so at the copy's
 * speed a kernel does the same work per element in half the time; paths 3
 * and 3g take exp twice per element of their shared-memory part (for the
 * state, then for the output), and with expf their 16-bit kernels are
 * limited by instruction issue, not memory
 * (docs/experiments/lessons-half-long-rows.md). __expf's relative error, about |x| 2^-24 (the rounding of
 * x log2 e) + 2^-22, is under 6e-6 for |x| < 88, far below the 16-bit
 * output's rounding (2^-11, 2^-8).
 * Written as inline PTX ex2.approx.ftz: __expf itself, without nvcc's
 * -ftz=true, compiles to five instructions, the multiply, MUFU.EX2 and
 * three more (FSETP, FMUL, FMUL) that keep results below 2^-126 as
 * subnormals; .ftz flushes those to 0, inside the absolute tolerance, and
 * leaves two: 83.8 % of the 16-bit copy at 256 x 2^18 float16 against
 * 81.9 % with __expf, H100 (docs/experiments/rows-fast-exp.md). */
template <class T>
__device__ __forceinline__ float fx_exp(float x)
{
    if constexpr (fx_is_float<T>) return expf(x);
    else return fx_ex2(x * 1.44269504088896341f);
}

/* fx_exp<fx_ex2_type>: ex2.approx whatever the storage type (paths 3b, 3's
 * held class and 4 say why: bulk_copy.cuh, path3_held.cuh, path4_split.cuh). */
typedef __half fx_ex2_type;

/* log2(x) as lg2.approx (absolute error about 2^-22), log2f on the
 * emulator. Not volatile: the compiler computes it once for a loop. */
__device__ __forceinline__ float fx_lg2(float x)
{
#if defined(__CUDA_ARCH__)
    float r;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
#else /* the CPU emulator */
    return log2f(x);
#endif
}

/* The blocks per SM that a kernel holding 16-bit rows as loaded caps its
 * registers for (__launch_bounds__, sm_90): its FPT / 2 words and `extra`
 * registers more (pointers, m, d, the loop), rounded up to the 8
 * registers a thread is given at a time, within 64K registers and 2048
 * threads an SM. */
static constexpr int fx_rows16_min_blocks(int fpt, int block, int extra)
{
    return 65536 / (block * ((fpt / 2 + extra + 7) / 8 * 8)) < 2048 / block
               ? 65536 / (block * ((fpt / 2 + extra + 7) / 8 * 8))
               : 2048 / block;
}

/* A 16-bit row held as loaded by TPR threads (path1_2_rows16.cuh's
 * fastest_rows16_kernel; path 3's held class, of any T): thread `sub`'s
 * words are 16-byte vectors k = i * TPR + sub of the row's nvec, four
 * 32-bit words (8 16-bit elements) each, and pad past the row. Every load
 * is issued before any word is used. Why C++ references to arrays: the
 * words stay a register array of compile-time size. */
template <int ITEMS, int TPR, class T>
__device__ __forceinline__ void fx_words16_load(const T *r, int nvec, unsigned pad, unsigned (&w)[ITEMS][4], int sub)
{
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * TPR + sub;
        if (k < nvec) {
            vec16_load_words<8>(r + (long long)k * (16 / (int)sizeof(T)), w[i]);
        } else {
#pragma unroll
            for (int j = 0; j < 4; j++) w[i][j] = pad;
        }
    }
}

/* The largest of this thread's words, found in 16 bits (exact), widened. */
template <int ITEMS, class T>
__device__ __forceinline__ float fx_words16_max(const unsigned (&w)[ITEMS][4], unsigned pad, const T *tag)
{
    unsigned mw = pad;
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) mw = fx_max2(mw, w[i][j], tag);
    const float2 mf = vec16_widen2(mw, tag);
    return fmaxf(mf.x, mf.y);
}

/* The sum of exp(x - shift) over this thread's words, each pair widened. */
template <int ITEMS, class T>
__device__ __forceinline__ float fx_words16_sum_exp(const unsigned (&w)[ITEMS][4], float shift, const T *tag)
{
    float d = 0.0f;
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const float2 f = vec16_widen2(w[i][j], tag);
            d += fx_exp<T>(f.x - shift);
            d += fx_exp<T>(f.y - shift);
        }
    return d;
}

/* fx_push for words (paths 3b and 4): their max found in 16 bits (exact,
 * one instruction a pair), then one exp an element from the new shift. */
template <int U, class T>
__device__ __forceinline__ online_md fx_push_words16(online_md s, const unsigned (&w)[U][4], const T *tag)
{
    const unsigned pad = vec16_narrow2(-INFINITY, -INFINITY, tag);
    const float m = fmaxf(s.m, fx_words16_max(w, pad, tag));
    const float shift = online_md_shift(m);
    s.d = s.d * fx_exp<T>(s.m - shift) + fx_words16_sum_exp(w, shift, tag);
    s.m = m;
    return s;
}

/* OP::out, or where LIVE a ROW operation's out_live (its output for a
 * row whose elements are not all one value). */
template <class OP, bool LIVE>
__device__ __forceinline__ float fx_out_as(float e, typename OP::fin f)
{
    if constexpr (LIVE) return OP::out_live(e, f);
    else return OP::out(e, f);
}

/* OP's output of exp(t), t = x - shift, with E's exp (fx_exp<E>). Where
 * OP::SCALE_EXP (the softmax: out(e, f) = e f.scale), or where LIVE
 * OP::SCALE_LIVE (the classifier's out_live), and E's exp is ex2.approx,
 * the scale goes into the exponent: exp2(t log2 e + log2 f.scale), one
 * FFMA where the exp's multiply and out's would be two.
 * Its error adds |log2 f.scale| 2^-24 (under 2e-6 for rows of up to 2^26
 * elements, 4e-6 for the classifier's mean over 2^26 rows) and the lg2's
 * 2^-22 to the exp's; an all -inf row (d = 0,
 * t = -inf) still comes out NaN, as PyTorch. */
template <class OP, bool LIVE>
struct fx_scale_exp {
    static constexpr bool value = OP::SCALE_EXP;
};
template <class OP>
struct fx_scale_exp<OP, true> {
    static constexpr bool value = OP::SCALE_LIVE;
};
template <class OP, bool LIVE, class E>
__device__ __forceinline__ float fx_out_exp(float t, typename OP::fin f)
{
    if constexpr (fx_scale_exp<OP, LIVE>::value && !fx_is_float<E>)
        return fx_ex2(fmaf(t, 1.44269504088896341f, fx_lg2(f.scale)));
    else return fx_out_as<OP, LIVE>(fx_exp<E>(t), f);
}

/* One loaded vector's words w as OP::out(exp(x - shift), f), each
 * rounded once to T, into o (the softmax: exp(x - m) / d). */
template <class OP, bool LIVE, class T>
__device__ __forceinline__ void fx_words16_out(const unsigned (&w)[4], float shift, typename OP::fin f,
                                               unsigned (&o)[4], const T *tag)
{
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const float2 v = vec16_widen2(w[j], tag);
        o[j] = vec16_narrow2(fx_out_exp<OP, LIVE, T>(v.x - shift, f), fx_out_exp<OP, LIVE, T>(v.y - shift, f), tag);
    }
}

/* Stores thread sub's words (fx_words16_load's) to row r, each vector
 * as fx_words16_out makes it. */
template <class OP, int ITEMS, int TPR, bool LIVE = false, class T>
__device__ __forceinline__ void fx_words16_store(T *r, int nvec, const unsigned (&w)[ITEMS][4], float shift,
                                                 typename OP::fin f, int sub)
{
    if constexpr (OP::ROW && !LIVE)
        if (!OP::same(f)) return fx_words16_store<OP, ITEMS, TPR, true>(r, nvec, w, shift, f, sub);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * TPR + sub;
        if (k < nvec) {
            unsigned o[4];
            fx_words16_out<OP, LIVE>(w[i], shift, f, o, r);
            vec16_store_words<8>(r + (long long)k * 8, o);
        }
    }
}
template <class T, int N>
__device__ __forceinline__ online_md fx_push(online_md s, const float *v)
{
    if constexpr (fx_is_float<T>) {
        return online_md_push<N>(s, v);
    } else { /* online_md_push with fx_exp */
        float cm = -INFINITY;
#pragma unroll
        for (int i = 0; i < N; i++) cm = fmaxf(cm, v[i]);
        const float m = fmaxf(s.m, cm);
        const float shift = online_md_shift(m);
        float acc = 0.0f;
#pragma unroll
        for (int i = 0; i < N; i++) acc += fx_exp<T>(v[i] - shift);
        s.d = s.d * fx_exp<T>(s.m - shift) + acc;
        s.m = m;
        return s;
    }
}

template <int VEC>
__device__ __forceinline__ void fx_store_peel(float *p, const float *v)
{
    view_store4(p, v);
}
template <int VEC, class H>
__device__ __forceinline__ void fx_store_peel(H *p, const float *v)
{
    static_assert(VEC == 8, "16-byte vectors of 16-bit elements");
    unsigned w[4];
    for (int i = 0; i < 4; i++) w[i] = vec16_narrow2(v[2 * i], v[2 * i + 1], p);
    vec16_store_global(p, w);
}

/* A thread's own state; v[p] becomes exp(v[p] - m_t). Padding is -inf
 * (exp gives 0). A thread that saw only -inf has (-inf, 0) and zeros; a
 * NaN or +inf makes d_t NaN (exp(NaN), exp(inf - inf)), and NaN survives
 * every merge: that row comes out NaN. */
template <int FPT, class T = float>
__device__ __forceinline__ online_md fx_thread_state(float *v)
{
    float m = -INFINITY;
#pragma unroll
    for (int p = 0; p < FPT; p++) m = fmaxf(m, v[p]);
    const float shift = online_md_shift(m);
    float d = 0.0f;
#pragma unroll
    for (int p = 0; p < FPT; p++) {
        v[p] = fx_exp<T>(v[p] - shift);
        d += v[p];
    }
    online_md s = {m, d};
    return s;
}

/* The factor turning this thread's exp(v - m_t) into exp(v - M) / D.
 * All -inf row: M = -inf, D = 0: exp(-inf) * inf = NaN, as PyTorch. */
__device__ __forceinline__ float fx_scale(float m_thread, online_md row)
{
    return expf(m_thread - online_md_shift(row.m)) * (1.0f / row.d);
}

/* The output of an element that was kept raw (x), given the row's max m
 * (or its shift, 0 for an all -inf row) and the row's fin: exp(x - m)
 * first with KEEP_EXP, E's exp (fx_exp<E>: expf for float, ex2.approx for
 * 16-bit storage). */
template <class OP, class E, bool LIVE = false>
__device__ __forceinline__ float rows_op_raw(float x, float m, typename OP::fin f)
{
    if constexpr (OP::KEEP_EXP) return fx_out_exp<OP, LIVE, E>(x - m, f);
    else return fx_out_as<OP, LIVE>(x, f);
}

/* ---- views: peeling a row to keep 128-bit accesses ----------------------
 * Lesson 5's cut (view_cut.cuh): a head of 0-3 floats, a body of whole
 * float4s, a tail of 0-3 floats, when each row of x starts where the same
 * row of y does; the extras are taken by threads 0-5 of the row's first
 * piece. Without it, 32-bit accesses: 73-80 % of the aligned speed on
 * path 3 on the H100, 95-98 % peeled (docs/lesson8-paths.md, "Views").
 * The PEEL template instances are separate, so aligned views run code
 * with no peeling in it (docs/experiments/rows-peeled-views.md). */
template <int VEC, bool PEEL>
__device__ __forceinline__ view_cut fx_row_cut(long long row, long long ldx, int mis, long long cols)
{
    if constexpr (VEC == 4 && PEEL) return view_row_cut(row, ldx, mis, cols);
    if constexpr (VEC == 8 && PEEL) return view16_row_cut(row, ldx, mis, cols); /* lesson 9's 16-bit rows */
    view_cut c = {0, 0, cols / VEC}; /* without PEEL, VEC = 4 only when cols % 4 == 0 */
    return c;
}

/* ---- paths 3 and 3g: a row's piece per CTA, held on chip ------------------
 * Both paths cut a row into pieces of `seg` floats, one per CTA, and keep
 * each piece on chip from its load to its store: the first BLOCK x FPT
 * floats in registers, the rest in dynamic shared memory (streamed in 64
 * bytes per thread at a time and folded into the thread's state on the
 * way, as path 2s does). They differ only in how the CTAs of a row trade
 * their (m, d) states: distributed shared memory inside a cluster (path
 * 3), or global memory between independent CTAs (path 3g).
 * Why registers AND shared memory: a CTA is one row's piece from its load
 * to its last store, and while it waits for the row's other CTAs its SM
 * moves no bytes unless another CTA is resident there. Small register
 * parts (FPT = 16) and the rest in shared memory leave room for 2 or
 * more CTAs per SM, which keep DRAM busy through each other's waits: at
 * 256 x 262144 on the H100, 92.8 % of copy against 83.3 % with the
 * segment in 1024 threads' registers (lessons/08_fastest/README.md,
 * "Path 3"). */

/* The 16-bit shared-memory stream of fx_piece_read, a chunk at a time:
 * U16 vectors of this thread (vector k0 + u * BLOCK, those below nvec_s)
 * loaded as raw words, then stored to srow as they came and widened one
 * vector at a time into the state s. */
template <int U16, int BLOCK, class T>
__device__ __forceinline__ void fx_chunk16_load(const T *xs, int k0, int nvec_s, unsigned (*raw)[4])
{
#pragma unroll
    for (int u = 0; u < U16; u++) {
        const int k = k0 + u * BLOCK;
        if (k < nvec_s) vec16_load_words<8>(xs + k * 8, raw[u]);
    }
}
template <int U16, int BLOCK, class T>
__device__ __forceinline__ online_md fx_chunk16_fold(online_md s, const T *xs, T *srow, int k0, int nvec_s,
                                                     unsigned (*raw)[4])
{
#pragma unroll
    for (int u = 0; u < U16; u++) {
        const int k = k0 + u * BLOCK;
        if (k < nvec_s) {
            vec16_store_words<8>(srow + k * 8, raw[u]);
            float w[8];
            vec16_widen_words<8>(raw[u], w, xs);
            s = fx_push<T, 8>(s, w);
        }
    }
    return s;
}

/* Reads the piece at xr (len elements of the row's body) into v
 * (registers, widened) and srow (shared memory, in the storage type: a
 * widened 16-bit value rounds back to itself exactly), and `extra` (one of
 * the row's head and tail elements, or -inf) into v[FPT]. Returns this
 * thread's state of all of it; with OP::KEEP_EXP v holds exp(v - *m_regs)
 * (else the raw values), srow the raw values. Vector k of the shared
 * part always belongs to thread k % BLOCK: each thread reads back only
 * what it wrote, so the piece needs no barrier. v: FPT + 1 floats. XS:
 * the row was cut at y's boundaries, so x's floats are read one at a time
 * (lesson 5's view_load_x); everything after the load, shared memory
 * included, stays float4. */
template <class OP, int VEC, bool PEEL, int FPT, int BLOCK, bool XS, class T = float>
__device__ __forceinline__ online_md fx_piece_read(const T *__restrict__ xr, int len, float extra, float *v,
                                                   T *srow, float *m_regs)
{
    constexpr int ITEMS = FPT / VEC;
    constexpr int RCAP = BLOCK * FPT; /* floats of the piece in registers */
    /* 64 bytes per thread in flight: 16 floats, or 32 16-bit elements
     * (below). 128 (U = 32 / VEC) is slower for every row of paths 3 and
     * 3g from 2^18 to 2^23 on the H200, with the same CTAs per SM
     * (docs/experiments/rows-bytes-in-flight.md). */
    constexpr int U = 16 / VEC;
    const int rlen = len < RCAP ? len : RCAP;
    const int nvec_r = rlen / VEC, nvec_s = (len - rlen) / VEC;
    const T *xs = xr + RCAP;
    /* All register loads are issued first; their latency overlaps the
     * shared-memory part's loop. 16-bit vectors stay as loaded until that
     * loop is done: widened here, they would hold the loop's first loads
     * back until they arrive and take 6-8 registers more (the peeled
     * 8-element classes spilled). The time is the same within 0.6 % at
     * 2^19-2^21 (H200): it is the registers that this saves. */
    constexpr bool WORDS = !fx_is_float<T> && VEC == 8;
    unsigned raw_r[WORDS ? ITEMS : 1][4];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * BLOCK + (int)threadIdx.x;
        if (k < nvec_r) {
            if constexpr (WORDS) vec16_load_words<8>(xr + k * VEC, raw_r[i]);
            else view_load_x<VEC, XS>(xr + k * VEC, &v[i * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[i * VEC + j] = -INFINITY;
        }
    }
    online_md s = online_md_identity();
    if constexpr (!fx_is_float<T> && VEC == 8) {
        /* 16-bit vectors: 64 bytes in flight per thread, as float's, kept
         * as loaded (32 widened floats would spill with three 512-thread
         * CTAs per SM, 40 registers a thread): 82.0 % of the 16-bit copy
         * at 256 x 2^18 against 75.9 % with 32 bytes, H100
         * (docs/experiments/rows-bytes-in-flight.md). */
        constexpr int U16 = 4;
        for (int k0 = threadIdx.x; k0 < nvec_s; k0 += U16 * BLOCK) {
            unsigned raw[U16][4];
            fx_chunk16_load<U16, BLOCK>(xs, k0, nvec_s, raw);
            s = fx_chunk16_fold<U16, BLOCK>(s, xs, srow, k0, nvec_s, raw);
        }
    } else {
        for (int k0 = threadIdx.x; k0 < nvec_s; k0 += U * BLOCK) {
            float w[U * VEC];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * BLOCK;
                if (k < nvec_s) {
                    view_load_x<VEC, XS>(xs + k * VEC, &w[u * VEC]);
                } else {
#pragma unroll
                    for (int j = 0; j < VEC; j++) w[u * VEC + j] = -INFINITY;
                }
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * BLOCK;
                if (k < nvec_s) store_vec<VEC>(srow + k * VEC, &w[u * VEC]);
            }
            s = fx_push<T, U * VEC>(s, w);
        }
    }
    if constexpr (WORDS) {
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
            if (i * BLOCK + (int)threadIdx.x < nvec_r) vec16_widen_words<8>(raw_r[i], &v[i * VEC], xr);
    }
    constexpr int X = PEEL ? 1 : 0;
    if constexpr (PEEL) v[FPT] = extra;
    else (void)extra;
    if constexpr (OP::KEEP_EXP) {
        const online_md t = fx_thread_state<FPT + X, T>(v);
        *m_regs = t.m;
        return online_md_merge(t, s);
    } else { /* v stays raw */
        const online_md t = fx_push<T, FPT + X>(online_md_identity(), v);
        *m_regs = t.m;
        return online_md_merge(t, s);
    }
}

/* Writes the piece as operation OP's output (the softmax: exp(x - R.m) /
 * R.d), given the row's state R and what fx_finish made of it, f, and the
 * extra to *yextra (when not null). All -inf row: R.m = -inf, shift 0,
 * and the softmax's exp(-inf) * (1 / 0) = NaN in both parts, as PyTorch. */
template <class OP, int VEC, bool PEEL, int FPT, int BLOCK, class T = float, bool LIVE = false>
__device__ __forceinline__ void fx_piece_write(T *__restrict__ yr, int len, float *v, const T *srow,
                                               float m_regs, online_md R, T *yextra, typename OP::fin f)
{
    if constexpr (OP::ROW && !LIVE)
        if (!OP::same(f))
            return fx_piece_write<OP, VEC, PEEL, FPT, BLOCK, T, true>(yr, len, v, srow, m_regs, R, yextra, f);
    constexpr int ITEMS = FPT / VEC;
    constexpr int RCAP = BLOCK * FPT;
    const int rlen = len < RCAP ? len : RCAP;
    const int nvec_r = rlen / VEC, nvec_s = (len - rlen) / VEC;
    const float shift = online_md_shift(R.m);
    const float c = OP::KEEP_EXP ? expf(m_regs - shift) : 1.0f; /* exp(m_t - M): the registers' factor */
    typename OP::fin fr = f; /* the registers' */
    if constexpr (OP::KEEP_EXP) fr = OP::rescale(f, c);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * BLOCK + (int)threadIdx.x;
        if (k < nvec_r) {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[i * VEC + j] = fx_out_as<OP, LIVE>(v[i * VEC + j], fr);
            if constexpr (PEEL) fx_store_peel<VEC>(yr + k * VEC, &v[i * VEC]);
            else store_vec<VEC>(yr + k * VEC, &v[i * VEC]);
        }
    }
    if constexpr (PEEL)
        if (yextra) elem_store(yextra, fx_out_as<OP, LIVE>(v[FPT], fr));
    T *ys = yr + RCAP;
    for (int k = threadIdx.x; k < nvec_s; k += BLOCK) {
        float w[VEC];
        load_vec<VEC>(srow + k * VEC, w);
#pragma unroll
        for (int j = 0; j < VEC; j++) w[j] = rows_op_raw<OP, T, LIVE>(w[j], shift, f);
        store_vec<VEC>(ys + k * VEC, w);
    }
}

/* Floats of piece `piece` of a row of `cols` (0 for the empty last pieces
 * of a short row). */
__device__ __forceinline__ int fx_piece_len(int cols, int piece, int seg)
{
    const int len = cols - piece * seg;
    return len < 0 ? 0 : (len < seg ? len : seg);
}

#endif
