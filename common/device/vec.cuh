/* Taught in lesson 5. Moving VEC consecutive floats in one access. Lessons
 * 6, 7, 9, 10 and 11 and the row engine (lesson 8) include it too.
 *
 * VEC = 4: one 128-bit instruction (ld.global.v4 / st.global.v4, or their
 * shared-memory forms); the address must be 16-byte aligned, which each
 * caller's host side guarantees (softmax_fused_can_use_float4, a peeled
 * cut, ...). VEC = 1: one float. (VEC = 8 and 2, two float4s and a
 * float2, are for lesson 9's widened 16-bit vectors.) x reaches the
 * read-only path (ld.global.nc) when the kernel's x is
 * `const float *__restrict__`: the compiler can then prove that nothing
 * writes it. */
#ifndef COMMON_DEVICE_VEC_CUH
#define COMMON_DEVICE_VEC_CUH

#include <cuda_bf16.h> /* lesson 9's storage types; brings <cuda_fp16.h> */
#include <cuda_fp16.h>

template <int VEC>
__device__ __forceinline__ void load_vec(const float *p, float *v)
{
    if constexpr (VEC == 4) {
        const float4 q = *reinterpret_cast<const float4 *>(p);
        v[0] = q.x;
        v[1] = q.y;
        v[2] = q.z;
        v[3] = q.w;
    } else if constexpr (VEC == 8) { /* lesson 9's widened 16-bit vectors, in shared memory: two float4s */
        load_vec<4>(p, v);
        load_vec<4>(p + 4, v + 4);
    } else if constexpr (VEC == 2) { /* lesson 9's widened pairs: one float2 */
        const float2 q = *reinterpret_cast<const float2 *>(p);
        v[0] = q.x;
        v[1] = q.y;
    } else {
        static_assert(VEC == 1, "VEC: 1, 2, 4 or 8 floats");
        v[0] = *p;
    }
}

template <int VEC>
__device__ __forceinline__ void store_vec(float *p, const float *v)
{
    if constexpr (VEC == 4) {
        *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
    } else if constexpr (VEC == 8) {
        store_vec<4>(p, v);
        store_vec<4>(p + 4, v + 4);
    } else if constexpr (VEC == 2) {
        *reinterpret_cast<float2 *>(p) = make_float2(v[0], v[1]);
    } else {
        static_assert(VEC == 1, "VEC: 1, 2, 4 or 8 floats");
        *p = v[0];
    }
}

/* ---- 16-bit storage (lesson 9): __half and __nv_bfloat16 --------------
 * The same two calls for a row stored in 16 bits: load_vec widens VEC
 * elements to float (exact), store_vec rounds VEC floats to the storage
 * type, to nearest even (__floats2half2_rn, __floats2bfloat162_rn: one
 * cvt instruction per pair on sm_80 and later). VEC = 8 is one 16-byte
 * access (ld.global.v4.u32), VEC = 2 one 32-bit access (a pair), VEC = 1
 * one element; the address is aligned to VEC * 2 bytes, as the caller's
 * host side guarantees. Overloads, not a template over the storage type:
 * the float versions above stay exactly what lessons 5-8 compile. */
template <int VEC>
__device__ __forceinline__ void vec16_load_words(const void *p, unsigned *w)
{
    static_assert(VEC == 8 || VEC == 2, "16 or 4 bytes");
    if constexpr (VEC == 8) {
        const uint4 q = *reinterpret_cast<const uint4 *>(p);
        w[0] = q.x;
        w[1] = q.y;
        w[2] = q.z;
        w[3] = q.w;
    } else {
        w[0] = *reinterpret_cast<const unsigned *>(p);
    }
}

template <int VEC>
__device__ __forceinline__ void vec16_store_words(void *p, const unsigned *w)
{
    if constexpr (VEC == 8) {
        *reinterpret_cast<uint4 *>(p) = make_uint4(w[0], w[1], w[2], w[3]);
    } else {
        *reinterpret_cast<unsigned *>(p) = w[0];
    }
}

/* Four 32-bit words to global memory in one st.global.v4: through a uint4
 * (vec16_store_words) the front end may write them as four st.global.u32,
 * which cost a held 16-bit row 7 points of the copy
 * (docs/experiments/rows-cluster-push.md). */
template <class T>
__device__ __forceinline__ void vec16_store_global(T *p, const unsigned (&w)[4])
{
#if defined(__CUDA_ARCH__)
    asm("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]));
#else /* the CPU emulator */
    vec16_store_words<8>(p, w);
#endif
}

/* A pair's 32 bits hold element 0 in the low 16 bits (little-endian
 * memory), as __half2's .x. */
__device__ __forceinline__ float2 vec16_widen2(unsigned w, const __half *)
{
    return __half22float2(__halves2half2(__ushort_as_half((unsigned short)(w & 0xFFFFu)),
                                         __ushort_as_half((unsigned short)(w >> 16))));
}
/* A bfloat16 is the upper half of a float: a shift and a mask widen a
 * pair in two instructions (__bfloat1622float2 takes three on sm_90). In
 * inline PTX, because as plain C the compiler reuses (x - m) log2 e between
 * a kernel's sum and store passes and spills at path 2's register cap; not
 * volatile, because a volatile asm may touch memory as far as the compiler
 * knows, and lesson 9's peeled kernels then lose the read-only path
 * (ld.global.nc) for x (docs/experiments/lessons-bf16-widen.md). */
__device__ __forceinline__ float2 vec16_widen2(unsigned w, const __nv_bfloat16 *)
{
#if defined(__CUDA_ARCH__)
    unsigned lo, hi;
    asm("shl.b32 %0, %1, 16;" : "=r"(lo) : "r"(w));
    asm("and.b32 %0, %1, 0xFFFF0000;" : "=r"(hi) : "r"(w));
    return make_float2(__uint_as_float(lo), __uint_as_float(hi));
#else /* the emulator has no PTX: the same bits */
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xFFFF0000u));
#endif
}
__device__ __forceinline__ unsigned vec16_narrow2(float a, float b, const __half *)
{
    const __half2 h = __floats2half2_rn(a, b);
    return (unsigned)__half_as_ushort(__low2half(h)) | (unsigned)__half_as_ushort(__high2half(h)) << 16;
}
__device__ __forceinline__ unsigned vec16_narrow2(float a, float b, const __nv_bfloat16 *)
{
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return (unsigned)__bfloat16_as_ushort(__low2bfloat16(h)) | (unsigned)__bfloat16_as_ushort(__high2bfloat16(h)) << 16;
}

/* One element, widened or rounded; the float overloads make it usable
 * for any storage type. */
__device__ __forceinline__ float elem_load(const float *p) { return *p; }
__device__ __forceinline__ float elem_load(const __half *p) { return __half2float(*p); }
__device__ __forceinline__ float elem_load(const __nv_bfloat16 *p) { return __bfloat162float(*p); }
__device__ __forceinline__ void elem_store(float *p, float v) { *p = v; }
__device__ __forceinline__ void elem_store(__half *p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void elem_store(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }

/* VEC elements held as loaded (VEC / 2 words, vec16_load_words), widened
 * to float; the pointer only names the storage type. */
template <int VEC, class H>
__device__ __forceinline__ void vec16_widen_words(const unsigned *w, float *v, const H *type)
{
#pragma unroll
    for (int i = 0; i < VEC / 2; i++) {
        const float2 f = vec16_widen2(w[i], type);
        v[2 * i] = f.x;
        v[2 * i + 1] = f.y;
    }
}

template <int VEC, class H> /* H: __half or __nv_bfloat16 */
__device__ __forceinline__ void vec16_load(const H *p, float *v)
{
    if constexpr (VEC == 1) {
        v[0] = elem_load(p);
    } else {
        unsigned w[VEC / 2];
        vec16_load_words<VEC>(p, w);
        vec16_widen_words<VEC>(w, v, p);
    }
}

template <int VEC, class H>
__device__ __forceinline__ void vec16_store(H *p, const float *v)
{
    if constexpr (VEC == 1) {
        elem_store(p, v[0]);
    } else {
        unsigned w[VEC / 2];
        for (int i = 0; i < VEC / 2; i++) w[i] = vec16_narrow2(v[2 * i], v[2 * i + 1], p);
        vec16_store_words<VEC>(p, w);
    }
}

template <int VEC>
__device__ __forceinline__ void load_vec(const __half *p, float *v) { vec16_load<VEC>(p, v); }
template <int VEC>
__device__ __forceinline__ void load_vec(const __nv_bfloat16 *p, float *v) { vec16_load<VEC>(p, v); }
template <int VEC>
__device__ __forceinline__ void store_vec(__half *p, const float *v) { vec16_store<VEC>(p, v); }
template <int VEC>
__device__ __forceinline__ void store_vec(__nv_bfloat16 *p, const float *v) { vec16_store<VEC>(p, v); }

#endif
