/* Stand-in for CUDA's <cuda_fp16.h> in the CPU emulator build: float16 as
 * 16-bit storage. The types hold the bit pattern; every conversion calls
 * common/f16.c, the one float16 implementation of the course, which
 * tests/test_half.cu checks bit for bit against a GPU's conversions
 * (round to nearest even; NaN gives the NaN 0x7FFF, see common/f16.h).
 *
 * Here, with CUDA's names, types and meanings (CUDA Math API, "Half
 * Precision Intrinsics"):
 *   __half (2 bytes, aligned 2), __half2 (.x, .y; 4 bytes, aligned 4),
 *   __half_raw, __half2_raw (the bits, for static initialisation)
 *   float -> half: __float2half, __float2half_rn, __float2half2_rn,
 *                  __floats2half2_rn, __float22half2_rn, and __half(float)
 *   half -> float: __half2float, __low2float, __high2float, __half22float2,
 *                  and __half's conversion to float
 *   moving halves: __low2half, __high2half, __halves2half2, __half2half2,
 *                  __lows2half2, __highs2half2
 *   bits:          __ushort_as_half, __half_as_ushort
 *   comparing:     __hmax2 (exact: it picks one of its inputs)
 *   constants:     CUDART_INF_FP16, CUDART_NAN_FP16, CUDART_MAX_NORMAL_FP16,
 *                  CUDART_MIN_DENORM_FP16, CUDART_ZERO_FP16,
 *                  CUDART_NEG_ZERO_FP16, CUDART_ONE_FP16
 * __CUDA_NO_HALF_CONVERSIONS__ removes the implicit conversions, as in CUDA.
 *
 * Not here: half arithmetic (__hadd, __hmul2, hexp, __hmax, ...; __hmax2 is here) and the
 * other rounding modes (_rz, _rd, _ru) and integer conversions. Calling one
 * is a compile error naming it ("was not declared"). `a + b` on two
 * __half values is a compile error too (the deleted operators below): on
 * a GPU it is a float16 operation, rounded to float16 after every step,
 * and letting it fall back to float here would compute something else.
 * Comparisons (a < b) go through float, which is exact and gives what
 * the GPU's gives. C++ because CUDA's __half is a class. */
#ifndef COMMON_EMU_CUDA_FP16_H
#define COMMON_EMU_CUDA_FP16_H
#include "../cuda_emu.h"
#include "../../f16.h"

#include <type_traits>

typedef struct __align__(2) {
    unsigned short x;
} __half_raw;

typedef struct __align__(4) {
    unsigned short x;
    unsigned short y;
} __half2_raw;

struct __align__(2) __half {
    __half() = default; /* uninitialised, like a float: __shared__ arrays of it stay trivial */
    __half(const __half_raw &r) : bits_(r.x) {}
    operator __half_raw() const
    {
        __half_raw r;
        r.x = bits_;
        return r;
    }
#ifndef __CUDA_NO_HALF_CONVERSIONS__
    __half(float f) : bits_(f16_from_float(f)) {}
    operator float() const { return f16_to_float(bits_); }
#endif

private:
    unsigned short bits_;
};

struct __align__(4) __half2 {
    __half x, y; /* x is the low half (bits 0-15 of the 32-bit word), as in CUDA */
    __half2() = default;
    __half2(const __half &a, const __half &b) : x(a), y(b) {}
    __half2(const __half2_raw &r)
    {
        __half_raw lo, hi;
        lo.x = r.x;
        hi.x = r.y;
        x = lo;
        y = hi;
    }
    operator __half2_raw() const
    {
        __half2_raw r;
        r.x = __half_raw(x).x;
        r.y = __half_raw(y).x;
        return r;
    }
};

/* The layout a kernel relies on when it loads a __half2 as one 32-bit
 * word, or casts a __half array to __half2 *. */
static_assert(sizeof(__half) == 2 && alignof(__half) == 2, "__half is 2 bytes, aligned to 2, as in CUDA");
static_assert(sizeof(__half2) == 4 && alignof(__half2) == 4, "__half2 is 4 bytes, aligned to 4, as in CUDA");
static_assert(std::is_trivially_copyable<__half>::value && std::is_trivially_copyable<__half2>::value,
              "__half and __half2 are copied as bytes (cudaMemcpy)");

/* Half arithmetic is not emulated: see the top of this file. */
__half operator+(const __half &, const __half &) = delete; /* float16 arithmetic is not emulated (common/emu) */
__half operator-(const __half &, const __half &) = delete; /* float16 arithmetic is not emulated (common/emu) */
__half operator*(const __half &, const __half &) = delete; /* float16 arithmetic is not emulated (common/emu) */
__half operator/(const __half &, const __half &) = delete; /* float16 arithmetic is not emulated (common/emu) */
__half &operator+=(__half &, const __half &) = delete;     /* float16 arithmetic is not emulated (common/emu) */
__half &operator-=(__half &, const __half &) = delete;     /* float16 arithmetic is not emulated (common/emu) */
__half &operator*=(__half &, const __half &) = delete;     /* float16 arithmetic is not emulated (common/emu) */
__half &operator/=(__half &, const __half &) = delete;     /* float16 arithmetic is not emulated (common/emu) */
__half operator-(const __half &) = delete;                 /* float16 arithmetic is not emulated (common/emu) */

static inline __half __ushort_as_half(const unsigned short int i)
{
    __half_raw r;
    r.x = i;
    return __half(r);
}
static inline unsigned short int __half_as_ushort(const __half h) { return __half_raw(h).x; }

static inline __half __float2half_rn(const float a) { return __ushort_as_half(f16_from_float(a)); }
static inline __half __float2half(const float a) { return __float2half_rn(a); } /* CUDA: rounds to nearest even too */
static inline float __half2float(const __half a) { return f16_to_float(__half_as_ushort(a)); }

static inline __half2 __halves2half2(const __half a, const __half b) { return __half2(a, b); }
static inline __half2 __half2half2(const __half a) { return __half2(a, a); }
static inline __half __low2half(const __half2 a) { return a.x; }
static inline __half __high2half(const __half2 a) { return a.y; }
static inline __half2 __lows2half2(const __half2 a, const __half2 b) { return __half2(a.x, b.x); }
static inline __half2 __highs2half2(const __half2 a, const __half2 b) { return __half2(a.y, b.y); }

static inline __half2 __float2half2_rn(const float a) { return __half2half2(__float2half_rn(a)); }
static inline __half2 __floats2half2_rn(const float a, const float b)
{
    return __half2(__float2half_rn(a), __float2half_rn(b));
}
static inline __half2 __float22half2_rn(const float2 a) { return __floats2half2_rn(a.x, a.y); }
static inline float __low2float(const __half2 a) { return __half2float(a.x); }
static inline float __high2float(const __half2 a) { return __half2float(a.y); }
static inline float2 __half22float2(const __half2 a) { return make_float2(__low2float(a), __high2float(a)); }

/* __hmax2: the larger of each pair of halves, as CUDA defines it
 * (common/f16.c's f16_max). */
static inline __half2 __hmax2(const __half2 a, const __half2 b)
{
    return __half2(__ushort_as_half(f16_max(__half_as_ushort(a.x), __half_as_ushort(b.x))),
                   __ushort_as_half(f16_max(__half_as_ushort(a.y), __half_as_ushort(b.y))));
}

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)

#endif
