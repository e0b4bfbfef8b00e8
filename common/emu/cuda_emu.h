/* cuda_emu.h: run CUDA kernels on the CPU, unchanged, for machines without
 * a GPU (CI, a learner's laptop). It stands in for <cuda_runtime.h> and the
 * device built-ins when a .cu file is compiled by g++ instead of nvcc.
 *
 * HOW A .cu FILE GETS HERE. common/emu/rewrite (a small C program) copies
 * each .cu/.h/.cuh file under build/emu/src/ with four changes, each
 * within its own lines so that line numbers stay those of the original:
 *   kernel<<<grid, block[, smem[, stream]]>>>(args)
 *       -> ::emu::launch(::emu::config(__FILE__, __LINE__, "kernel", grid, block, smem, stream),
 *                        <kernel address if knowable>, <lambda calling kernel(args...)>, args)
 *   extern __shared__ T name[];     -> static T *const name = (T *)emu_dynamic_smem();
 *   __shared__ T name[N];           -> static T name[N]; + a call that poisons it
 *                                      in each block (emu_shared_touch)
 *   asm(...)                        -> a call that aborts, naming inline PTX
 * and g++ compiles the copy with -include cuda_emu.h (nvcc includes
 * cuda_runtime.h in every .cu the same way). common/emu/emu.mk has the rules.
 *
 * THE MODEL. One OS thread runs everything; a launch runs when it is
 * issued, so every call is synchronous. Every CUDA thread is a fiber with
 * its own stack (64 KB; EMU_STACK_KB changes it), and the scheduler
 * switches fibers only where a thread must wait for others: __syncthreads,
 * a warp collective (__shfl*_sync, __syncwarp, votes), a cluster barrier,
 * grid.sync(), a spin-wait (__nanosleep, a repeated cuda::atomic_ref poll,
 * a release), or the end of the kernel. A grid's CTAs start one at a time
 * (x fastest; every other launch in reverse), and the next starts when no
 * resident CTA can go on: usually when the last has ended, but a CTA that
 * waits for others stays resident beside it, as many as an H100 holds. The
 * CTAs of a cluster (cudaLaunchKernelEx) start together, and so do all
 * CTAs of a cooperative launch. Each CTA runs as far as it can before the
 * next; each warp runs as far as it can before the next warp starts; even
 * blocks run their warps (and lanes) in order 0, 1, 2..., odd blocks in
 * reverse (EMU_ORDER=forward|reverse|alternate). Shared memory belongs to
 * the running CTA: __shared__ variables are static storage, filled with
 * 0xFF bytes (NaN as floats) in every CTA before first use, dynamic shared
 * memory is one buffer sized by the launch, and a switch between resident
 * CTAs sets one's aside and brings the other's back (map_shared_rank reads
 * the image of a CTA not running). x86-64 switches fibers with a few
 * instructions of assembly; elsewhere with swapcontext (correct, about 10
 * times slower).
 *
 * WHAT IT CATCHES THAT A GPU HIDES (each a failed launch, with a report on
 * stderr naming the kernel, block, thread and source line; the launch then
 * returns cudaErrorLaunchFailure, a sticky error, as a faulting kernel
 * would):
 *   - a __syncthreads not reached by every thread of the block (some
 *     exited, or wait at another __syncthreads): "divergent __syncthreads";
 *   - a warp collective whose mask leaves out the caller, names lanes that
 *     do not exist or have exited (an early return before a full-mask
 *     shuffle), disagrees with the other lanes, or never completes;
 *   - a shuffle that reads a lane outside its mask (undefined on a GPU);
 *   - a missing __syncthreads / __syncwarp: since a warp runs ahead of the
 *     next until it must wait, a read of data another warp has not written
 *     yet gets the previous block's values or the 0xFF poison, every time,
 *     and the reverse order of odd blocks catches the other direction;
 *   - reading shared or cudaMalloc memory nobody wrote (NaN poison);
 *   - out-of-bounds accesses: past the end of a cudaMalloc buffer (a guard
 *     page, plus a canary checked after each launch; precise to the byte
 *     under AddressSanitizer, which CI also runs), past the dynamic shared
 *     memory the launch asked for, a fiber stack overflow, a misaligned
 *     float4: the fault is reported with kernel, block and thread;
 *   - invalid launches: grid and block limits, more than 48 KB of dynamic
 *     shared memory without cudaFuncSetAttribute, a bad stream, bad
 *     cluster sizes, a cooperative grid larger than what is resident;
 *   - a cluster barrier part of the cluster never reaches, grid.sync()
 *     outside a cooperative launch, a spin on a flag nothing will set
 *     (each a deadlock report), a flag released before its data (the
 *     waiting CTAs run at the release), another CTA's shared memory read
 *     before the cluster barrier (NaN);
 *   - copies and memsets outside cudaMalloc buffers.
 *
 * LIMITS (docs/emulator.md has the full list):
 *   - no lockstep warps: lanes run one at a time, so "warp-synchronous"
 *     code without __syncwarp fails here (as it may on Volta and later);
 *   - last-bit differences from a GPU: the CPU's expf/logf are not the
 *     GPU's (a few ulp apart), __expf is emulated as exp2f(x * log2(e))
 *     with the same flush to zero, and g++ does not fuse a * b + c into an
 *     FMA as nvcc does. common/verify.h's tolerances allow a few ulp;
 *   - no timing model: events measure the CPU, and the lessons print no
 *     timings when built for the emulator;
 *   - no __cluster_dims__, tiled partitions, cp.async / pipelines, inline
 *     PTX (asm), tensor cores (wmma), half types, texture/surface objects,
 *     graphs, dynamic parallelism: these fail to compile or abort with a
 *     message naming them;
 *   - a kernel can dereference host memory here (a GPU would fault); a
 *     thread spinning on a plain or volatile read, with no __nanosleep,
 *     atomic load, barrier or shuffle in the loop, runs until the watchdog
 *     (EMU_TIMEOUT, 300 s) stops it; atomics are exact but ordered by the
 *     schedule above, and memory orders and fences order nothing more;
 *   - the emulated device reports an H100's limits (cc 9.0, 132 SMs, 227 KB
 *     of opt-in shared memory, clusters of up to 16 CTAs, cooperative
 *     launch); EMU_MAX_RESIDENT caps the threads resident at once.
 *
 * C++, not C, because CUDA code is C++: templates carry the launch's
 * argument types to the fibers, and the shuffles are templates over the
 * value type as in CUDA. */
#ifndef COMMON_EMU_CUDA_EMU_H
#define COMMON_EMU_CUDA_EMU_H

#ifndef __cplusplus
#error "cuda_emu.h is for C++: .cu files are built with g++ after common/emu/rewrite"
#endif

#define CUDA_EMU 1

/* What nvcc makes visible to every .cu file without an #include. */
#include <assert.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmath>
#include <tuple>
#include <type_traits>
#include <utility>

#include "emu_runtime.h"

/* ---- qualifiers --------------------------------------------------------------
 * Host and device code are one program here, so the space qualifiers mean
 * nothing; __shared__ is normally replaced by the rewriter, and this
 * definition only serves a __shared__ that comes from a macro (such a
 * variable is not poisoned before each block). */
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __maxnreg__(n)
#define __shared__ static
#define __cluster_dims__(...) \
    _Pragma("GCC error \"thread block clusters (__cluster_dims__) are not supported by the CPU emulator (common/emu): this code needs a GPU\"")

/* ---- the thread's place in the grid ------------------------------------------ */
#define threadIdx emu_thread_idx
#define blockIdx emu_block_idx
#define blockDim emu_block_dim
#define gridDim emu_grid_dim
static constexpr int warpSize = 32;

/* ---- barriers and warp collectives -------------------------------------------
 * The default arguments __builtin_FILE/LINE take the caller's position, so
 * a report names the line of the __syncthreads or shuffle in the lesson. */
#define EMU_HERE const char *emu_file_ = __builtin_FILE(), int emu_line_ = __builtin_LINE()

static inline void __syncthreads(EMU_HERE) { emu_barrier(0, 0, emu_file_, emu_line_); }
static inline int __syncthreads_count(int pred, EMU_HERE) { return emu_barrier(1, pred, emu_file_, emu_line_); }
static inline int __syncthreads_and(int pred, EMU_HERE) { return emu_barrier(2, pred, emu_file_, emu_line_); }
static inline int __syncthreads_or(int pred, EMU_HERE) { return emu_barrier(3, pred, emu_file_, emu_line_); }

static inline void __syncwarp(unsigned mask = 0xffffffffu, EMU_HERE)
{
    emu_warp_op(EMU_OP_SYNCWARP, mask, 0, 0, 32, 0, emu_file_, emu_line_);
}

namespace emu {
template <class T> inline unsigned long long to_bits(T v)
{
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value,
                  "shuffles move values of at most 8 bytes");
    unsigned long long b = 0;
    memcpy(&b, &v, sizeof v);
    return b;
}
template <class T> inline T from_bits(unsigned long long b)
{
    T v;
    memcpy(&v, &b, sizeof v);
    return v;
}
} // namespace emu

template <class T>
static inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32, EMU_HERE)
{
    return emu::from_bits<T>(emu_warp_op(EMU_OP_SHFL_IDX, mask, emu::to_bits(var), src_lane, width,
                                         0, emu_file_, emu_line_));
}
template <class T>
static inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32, EMU_HERE)
{
    return emu::from_bits<T>(emu_warp_op(EMU_OP_SHFL_UP, mask, emu::to_bits(var), (int)delta, width,
                                         0, emu_file_, emu_line_));
}
template <class T>
static inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32, EMU_HERE)
{
    return emu::from_bits<T>(emu_warp_op(EMU_OP_SHFL_DOWN, mask, emu::to_bits(var), (int)delta,
                                         width, 0, emu_file_, emu_line_));
}
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32, EMU_HERE)
{
    return emu::from_bits<T>(emu_warp_op(EMU_OP_SHFL_XOR, mask, emu::to_bits(var), lane_mask, width,
                                         0, emu_file_, emu_line_));
}

static inline unsigned __ballot_sync(unsigned mask, int pred, EMU_HERE)
{
    return (unsigned)emu_warp_op(EMU_OP_BALLOT, mask, pred != 0, 0, 32, 0, emu_file_, emu_line_);
}
static inline int __any_sync(unsigned mask, int pred, EMU_HERE)
{
    return (int)emu_warp_op(EMU_OP_ANY, mask, pred != 0, 0, 32, 0, emu_file_, emu_line_);
}
static inline int __all_sync(unsigned mask, int pred, EMU_HERE)
{
    return (int)emu_warp_op(EMU_OP_ALL, mask, pred != 0, 0, 32, 0, emu_file_, emu_line_);
}
static inline unsigned __activemask(void) { return emu_activemask(); }

#define EMU_REDUCE(name, op, T, is_signed)                                                     \
    static inline T name(unsigned mask, T value, EMU_HERE)                                     \
    {                                                                                          \
        return (T)emu_warp_op(op, mask, (unsigned)value, 0, 32, is_signed, emu_file_, emu_line_); \
    }
EMU_REDUCE(__reduce_add_sync, EMU_OP_REDUCE_ADD, unsigned, 0)
EMU_REDUCE(__reduce_add_sync, EMU_OP_REDUCE_ADD, int, 1)
EMU_REDUCE(__reduce_min_sync, EMU_OP_REDUCE_MIN, unsigned, 0)
EMU_REDUCE(__reduce_min_sync, EMU_OP_REDUCE_MIN, int, 1)
EMU_REDUCE(__reduce_max_sync, EMU_OP_REDUCE_MAX, unsigned, 0)
EMU_REDUCE(__reduce_max_sync, EMU_OP_REDUCE_MAX, int, 1)
EMU_REDUCE(__reduce_and_sync, EMU_OP_REDUCE_AND, unsigned, 0)
EMU_REDUCE(__reduce_or_sync, EMU_OP_REDUCE_OR, unsigned, 0)
EMU_REDUCE(__reduce_xor_sync, EMU_OP_REDUCE_XOR, unsigned, 0)
#undef EMU_REDUCE

/* Fences order memory between threads on a GPU; here only the compiler
 * could reorder, and a signal fence stops it. */
static inline void __threadfence(void) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
/* A pause is where a spin-wait lets the other threads and CTAs run. */
static inline void __nanosleep(unsigned ns, EMU_HERE)
{
    (void)ns;
    emu_nap(emu_file_, emu_line_);
}
/* Programmatic dependent launch (sm_90): a kernel launched with
 * cudaLaunchAttributeProgrammaticStreamSerialization may start before the
 * kernel ahead of it has finished, and waits for it (its completion and
 * its memory) in cudaGridDependencySynchronize. Here a stream runs its
 * launches one after another, which is one of the orders the GPU may
 * take: the wait has nothing left to wait for, and the trigger nothing to
 * let start. */
static inline void cudaGridDependencySynchronize(void) {}
static inline void cudaTriggerProgrammaticLaunchCompletion(void) {}
static inline long long clock64(void) { return (long long)clock(); }
[[noreturn]] static inline void __trap(EMU_HERE) { emu_unsupported(emu_file_, emu_line_, "__trap() was called"); }

/* ---- atomics -------------------------------------------------------------------
 * One OS thread and no switch inside an atomic: a plain read-modify-write
 * is atomic. The GPU's order of concurrent atomics is unspecified; here it
 * is the schedule's (so float atomicAdd sums may differ in the last bits). */
#define EMU_ATOMIC(name, T, expr)                 \
    static inline T name(T *address, T val)       \
    {                                             \
        T old = *address;                         \
        *address = (expr);                        \
        emu_atomic_ops++;                         \
        return old;                               \
    }
#define EMU_ATOMIC_ALL(name, expr)                          \
    EMU_ATOMIC(name, int, expr)                             \
    EMU_ATOMIC(name, unsigned int, expr)                    \
    EMU_ATOMIC(name, unsigned long long, expr)
EMU_ATOMIC_ALL(atomicAdd, old + val)
EMU_ATOMIC(atomicAdd, float, old + val)
EMU_ATOMIC(atomicAdd, double, old + val)
EMU_ATOMIC(atomicSub, int, old - val)
EMU_ATOMIC(atomicSub, unsigned int, old - val)
EMU_ATOMIC_ALL(atomicExch, val)
EMU_ATOMIC(atomicExch, float, val)
EMU_ATOMIC_ALL(atomicMin, val < old ? val : old)
EMU_ATOMIC(atomicMin, long long, val < old ? val : old)
EMU_ATOMIC_ALL(atomicMax, val > old ? val : old)
EMU_ATOMIC(atomicMax, long long, val > old ? val : old)
EMU_ATOMIC_ALL(atomicAnd, old & val)
EMU_ATOMIC_ALL(atomicOr, old | val)
EMU_ATOMIC_ALL(atomicXor, old ^ val)
EMU_ATOMIC(atomicInc, unsigned int, old >= val ? 0u : old + 1)
EMU_ATOMIC(atomicDec, unsigned int, (old == 0 || old > val) ? val : old - 1)
#undef EMU_ATOMIC_ALL
#undef EMU_ATOMIC
#define EMU_CAS(T)                                           \
    static inline T atomicCAS(T *address, T compare, T val)  \
    {                                                        \
        T old = *address;                                    \
        if (old == compare) *address = val;                  \
        emu_atomic_ops++;                                    \
        return old;                                          \
    }
EMU_CAS(int)
EMU_CAS(unsigned int)
EMU_CAS(unsigned long long)
EMU_CAS(unsigned short)
#undef EMU_CAS
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicMax_block atomicMax
#define atomicMin_block atomicMin
#define atomicExch_block atomicExch
#define atomicCAS_block atomicCAS

/* ---- math intrinsics -------------------------------------------------------------
 * The _rn forms are IEEE operations, exactly what the CPU does. The fast
 * approximations are emulated the way the GPU computes them (the rounding
 * of x * log2(e) dominates __expf's error for large |x|) rather than with
 * the exact function, so that a tolerance too tight for the GPU is also
 * too tight here. Results can still differ from a GPU in the last bits. */
/* glibc declares __expf, __logf, __sinf, ... as its own (exact) functions,
 * so the CUDA names are macros for emulator functions. */
static inline float emu_expf(float x)
{
    float r = exp2f(x * 1.44269504088896341f); /* ex2.approx.ftz(x * log2 e) */
    return r < FLT_MIN ? 0.0f : r;             /* .ftz: no subnormal results */
}
static inline float emu_exp10f(float x) { return emu_expf(x * 2.30258509299404568f); }
static inline float emu_logf(float x) { return logf(x); }
static inline float emu_log2f(float x) { return log2f(x); }
static inline float emu_log10f(float x) { return log10f(x); }
static inline float emu_powf(float x, float y) { return exp2f(y * log2f(x)); }
static inline float emu_sinf(float x) { return sinf(x); }
static inline float emu_cosf(float x) { return cosf(x); }
static inline float emu_tanf(float x) { return tanf(x); }
static inline void emu_sincosf(float x, float *s, float *c) { *s = sinf(x); *c = cosf(x); }
#define __expf emu_expf
#define __exp10f emu_exp10f
#define __logf emu_logf
#define __log2f emu_log2f
#define __log10f emu_log10f
#define __powf emu_powf
#define __sinf emu_sinf
#define __cosf emu_cosf
#define __tanf emu_tanf
#define __sincosf emu_sincosf
/* x * (1 / y), and 0 for 2^126 < |y| < 2^128, as documented for the GPU. */
static inline float __fdividef(float x, float y)
{
    if (fabsf(y) > 8.50705917e37f && isfinite(y)) return isinf(x) ? NAN : 0.0f;
    return x * (1.0f / y);
}
static inline float fdividef(float x, float y) { return __fdividef(x, y); }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
static inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

static inline int __float_as_int(float x) { return emu::from_bits<int>(emu::to_bits(x)); }
static inline unsigned __float_as_uint(float x) { return emu::from_bits<unsigned>(emu::to_bits(x)); }
static inline float __int_as_float(int x) { return emu::from_bits<float>(emu::to_bits(x)); }
static inline float __uint_as_float(unsigned x) { return emu::from_bits<float>(emu::to_bits(x)); }
static inline long long __double_as_longlong(double x) { return emu::from_bits<long long>(emu::to_bits(x)); }
static inline double __longlong_as_double(long long x) { return emu::from_bits<double>(emu::to_bits(x)); }
static inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
static inline int __float2int_rz(float x) { return (int)x; }
static inline int __float2int_rd(float x) { return (int)floorf(x); }
static inline int __float2int_ru(float x) { return (int)ceilf(x); }
static inline unsigned __float2uint_rn(float x) { return (unsigned)nearbyintf(x); }
static inline long long __float2ll_rn(float x) { return (long long)nearbyintf(x); }
static inline float __int2float_rn(int x) { return (float)x; }
static inline float __uint2float_rn(unsigned x) { return (float)x; }
static inline float __ll2float_rn(long long x) { return (float)x; }

static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x)
{
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
    return r;
}
static inline int __mul24(int a, int b) { return (int)((long long)(a << 8 >> 8) * (b << 8 >> 8)); }
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
static inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s)
{
    s &= 31;
    return s ? (hi << s) | (lo >> (32 - s)) : hi;
}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s)
{
    s &= 31;
    return s ? (lo >> s) | (hi << (32 - s)) : lo;
}

/* Cache-hinted loads and stores: plain accesses on the CPU. */
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }
template <class T> static inline T __ldca(const T *p) { return *p; }
template <class T> static inline T __ldcs(const T *p) { return *p; }
template <class T> static inline T __ldlu(const T *p) { return *p; }
template <class T> static inline T __ldcv(const T *p) { return *p; }
template <class T> static inline void __stcg(T *p, T v) { *p = v; }
template <class T> static inline void __stcs(T *p, T v) { *p = v; }
template <class T> static inline void __stwb(T *p, T v) { *p = v; }
template <class T> static inline void __stwt(T *p, T v) { *p = v; }

/* min and max as CUDA declares them for host and device: same-type
 * overloads (non-templates, so that they win over std::min under `using
 * namespace std`), and the usual arithmetic conversions for mixed types. */
#define EMU_MINMAX(T)                                           \
    static inline T min(T a, T b) { return b < a ? b : a; }     \
    static inline T max(T a, T b) { return a < b ? b : a; }
EMU_MINMAX(int)
EMU_MINMAX(unsigned int)
EMU_MINMAX(long)
EMU_MINMAX(unsigned long)
EMU_MINMAX(long long)
EMU_MINMAX(unsigned long long)
#undef EMU_MINMAX
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
template <class A, class B,
          class = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value &&
                                          !std::is_same<A, B>::value>::type>
static inline typename std::common_type<A, B>::type min(A a, B b)
{
    typedef typename std::common_type<A, B>::type C;
    return min((C)a, (C)b);
}
template <class A, class B,
          class = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value &&
                                          !std::is_same<A, B>::value>::type>
static inline typename std::common_type<A, B>::type max(A a, B b)
{
    typedef typename std::common_type<A, B>::type C;
    return max((C)a, (C)b);
}

/* ---- the launch ---------------------------------------------------------------------
 * The rewriter turns k<<<g, b, s, st>>>(a...) into
 *     ::emu::launch(::emu::config(__FILE__, __LINE__, "k", g, b, s, st),
 *                   ::emu::kernel_address(<probe>), [&](auto &...p) { k(p...); }, a...);
 * The arguments are evaluated once, here, and copied into a tuple; every
 * CUDA thread calls the kernel with its own copies of them (kernels may
 * modify their parameters). The lambda calls k by name, so templates
 * deduce from the arguments and overloads resolve exactly as under nvcc.
 * The probe yields k's address when k names one function (for the
 * cudaFuncSetAttribute check), and nothing for a template that needs its
 * arguments to be deduced. */
namespace emu {
inline emu_launch_config config(const char *file, int line, const char *kernel, dim3 grid,
                                dim3 block, size_t smem = 0, cudaStream_t stream = 0)
{
    emu_launch_config c;
    c.file = file;
    c.line = line;
    c.kernel = kernel;
    c.func = nullptr;
    c.grid = grid;
    c.block = block;
    c.smem = smem;
    c.stream = stream;
    c.cluster = dim3(1, 1, 1);
    c.cooperative = 0;
    return c;
}

template <class... P> inline const void *kaddr(int, void (*f)(P...)) { return (const void *)f; }

template <class Probe> inline const void *kernel_address(Probe probe)
{
    if constexpr (std::is_invocable<Probe, int>::value) return probe(0);
    else return nullptr;
}

template <class K, class... A>
inline cudaError_t launch(emu_launch_config c, const void *func, K kernel, A &&...args)
{
    typedef std::tuple<typename std::decay<A>::type...> values_t;
    struct ctx_t {
        K *kernel;
        values_t *values;
    };
    values_t values(std::forward<A>(args)...);
    ctx_t ctx = {&kernel, &values};
    c.func = func;
    return emu_launch(&c, [](void *p) {
        ctx_t *x = static_cast<ctx_t *>(p);
        std::apply(*x->kernel, *x->values);
    }, &ctx);
}

/* cudaLaunchKernelEx(config, kernel, args...): as CUDA's template, the
 * arguments are converted to the kernel's parameter types. The macro
 * below passes the call's position and text; the kernel's name in
 * reports is the call's second argument. */
template <class... P, class... A>
inline cudaError_t launch_ex(const char *file, int line, const char *text, const cudaLaunchConfig_t *lc,
                             void (*kernel)(P...), A &&...args)
{
    static_assert(sizeof...(P) == sizeof...(A), "cudaLaunchKernelEx: wrong number of kernel arguments");
    char name[160];
    const char *k = strchr(text, ',');
    k = k ? k + 1 : text;
    while (*k == ' ') k++;
    size_t n = strcspn(k, ",");
    if (n >= sizeof name) n = sizeof name - 1;
    memcpy(name, k, n);
    name[n] = 0;
    if (!lc) return cudaErrorInvalidValue;
    emu_launch_config c = config(file, line, name, lc->gridDim, lc->blockDim, lc->dynamicSmemBytes, lc->stream);
    for (unsigned i = 0; lc->attrs && i < lc->numAttrs; i++) {
        const cudaLaunchAttribute &a = lc->attrs[i];
        if (a.id == cudaLaunchAttributeClusterDimension)
            c.cluster = dim3(a.val.clusterDim.x, a.val.clusterDim.y, a.val.clusterDim.z);
        else if (a.id == cudaLaunchAttributeCooperative)
            c.cooperative = a.val.cooperative != 0;
    }
    return launch(c, (const void *)kernel, [kernel](auto &...a) { kernel(a...); },
                  static_cast<P>(std::forward<A>(args))...);
}
} // namespace emu
#define cudaLaunchKernelEx(...) ::emu::launch_ex(__FILE__, __LINE__, #__VA_ARGS__, __VA_ARGS__)

/* ---- runtime API: the C++ conveniences of cuda_runtime.h ---------------------------- */
template <class T> static inline cudaError_t cudaMalloc(T **p, size_t n) { return cudaMalloc((void **)p, n); }
template <class T> static inline cudaError_t cudaMallocHost(T **p, size_t n) { return cudaMallocHost((void **)p, n); }
template <class T> static inline cudaError_t cudaHostAlloc(T **p, size_t n, unsigned flags)
{
    return cudaHostAlloc((void **)p, n, flags);
}
template <class T>
static inline cudaError_t cudaMallocManaged(T **p, size_t n, unsigned flags = cudaMemAttachGlobal)
{
    return cudaMallocManaged((void **)p, n, flags);
}
static inline cudaError_t cudaEventCreate(cudaEvent_t *e, unsigned flags) { return cudaEventCreateWithFlags(e, flags); }
template <class T> static inline cudaError_t cudaFuncSetAttribute(T *f, cudaFuncAttribute a, int v)
{
    return cudaFuncSetAttribute((const void *)f, a, v);
}
template <class T> static inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, T *f)
{
    return cudaFuncGetAttributes(a, (const void *)f);
}
template <class T> static inline cudaError_t cudaFuncSetCacheConfig(T *f, cudaFuncCache c)
{
    return cudaFuncSetCacheConfig((const void *)f, c);
}
template <class T>
static inline cudaError_t cudaOccupancyMaxActiveClusters(int *n, T *f, const cudaLaunchConfig_t *config)
{
    return cudaOccupancyMaxActiveClusters(n, (const void *)f, config);
}
template <class T>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, T *f, int block,
                                                                       size_t smem)
{
    return cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, (const void *)f, block, smem);
}
/* __constant__ and __device__ variables are ordinary variables here. */
template <class T>
static inline cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src, size_t n,
                                             size_t offset = 0,
                                             cudaMemcpyKind kind = cudaMemcpyHostToDevice)
{
    (void)kind;
    memcpy((char *)&symbol + offset, src, n);
    return cudaSuccess;
}
template <class T>
static inline cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t n, size_t offset = 0,
                                               cudaMemcpyKind kind = cudaMemcpyDeviceToHost)
{
    (void)kind;
    memcpy(dst, (const char *)&symbol + offset, n);
    return cudaSuccess;
}
template <class T> static inline cudaError_t cudaGetSymbolAddress(void **p, const T &symbol)
{
    *p = (void *)&symbol;
    return cudaSuccess;
}

#endif
