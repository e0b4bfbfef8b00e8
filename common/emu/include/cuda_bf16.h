/* Stand-in for CUDA's <cuda_bf16.h> in the CPU emulator build: bfloat16 as
 * 16-bit storage. The types hold the bit pattern; every conversion calls
 * common/f16.c, the one bfloat16 implementation of the course, which
 * tests/test_half.cu checks bit for bit against a GPU's conversions
 * (round to nearest even; NaN gives the NaN 0x7FFF, see common/f16.h).
 * As CUDA's does, this header brings <cuda_fp16.h> with it.
 *
 * Here, with CUDA's names, types and meanings (CUDA Math API, "Bfloat16
 * Precision Intrinsics"):
 *   __nv_bfloat16 (2 bytes, aligned 2), __nv_bfloat162 (.x, .y; 4 bytes,
 *   aligned 4), __nv_bfloat16_raw, __nv_bfloat162_raw
 *   float -> bf16: __float2bfloat16, __float2bfloat16_rn,
 *                  __float2bfloat162_rn, __floats2bfloat162_rn,
 *                  __float22bfloat162_rn, and __nv_bfloat16(float)
 *   bf16 -> float: __bfloat162float, __low2float, __high2float,
 *                  __bfloat1622float2, and the conversion to float
 *   moving halves: __low2bfloat16, __high2bfloat16, __halves2bfloat162,
 *                  __bfloat162bfloat162, __lows2bfloat162, __highs2bfloat162
 *   bits:          __ushort_as_bfloat16, __bfloat16_as_ushort
 *   comparing:     __hmax2 (exact: it picks one of its inputs)
 *   constants:     CUDART_INF_BF16, CUDART_NAN_BF16, CUDART_MAX_NORMAL_BF16,
 *                  CUDART_MIN_DENORM_BF16, CUDART_ZERO_BF16,
 *                  CUDART_NEG_ZERO_BF16, CUDART_ONE_BF16
 * __CUDA_NO_BFLOAT16_CONVERSIONS__ removes the implicit conversions.
 *
 * Not here: bfloat16 arithmetic (__hadd on bfloat16, __hmul2, hexp, ...),
 * the other rounding modes and integer conversions: a compile error naming
 * the function. `a + b` on two __nv_bfloat16 values is a compile error too
 * (deleted operators, as in <cuda_fp16.h>): on a GPU it rounds to
 * bfloat16 after every step, which a fall-back to float would not.
 * C++ because CUDA's __nv_bfloat16 is a class. */
#ifndef COMMON_EMU_CUDA_BF16_H
#define COMMON_EMU_CUDA_BF16_H
#include "cuda_fp16.h"

typedef struct __align__(2) {
    unsigned short x;
} __nv_bfloat16_raw;

typedef struct __align__(4) {
    unsigned short x;
    unsigned short y;
} __nv_bfloat162_raw;

struct __align__(2) __nv_bfloat16 {
    __nv_bfloat16() = default; /* uninitialised, like a float */
    __nv_bfloat16(const __nv_bfloat16_raw &r) : bits_(r.x) {}
    operator __nv_bfloat16_raw() const
    {
        __nv_bfloat16_raw r;
        r.x = bits_;
        return r;
    }
#ifndef __CUDA_NO_BFLOAT16_CONVERSIONS__
    __nv_bfloat16(float f) : bits_(bf16_from_float(f)) {}
    operator float() const { return bf16_to_float(bits_); }
#endif

private:
    unsigned short bits_;
};

struct __align__(4) __nv_bfloat162 {
    __nv_bfloat16 x, y; /* x is the low half of the 32-bit word, as in CUDA */
    __nv_bfloat162() = default;
    __nv_bfloat162(const __nv_bfloat16 &a, const __nv_bfloat16 &b) : x(a), y(b) {}
    __nv_bfloat162(const __nv_bfloat162_raw &r)
    {
        __nv_bfloat16_raw lo, hi;
        lo.x = r.x;
        hi.x = r.y;
        x = lo;
        y = hi;
    }
    operator __nv_bfloat162_raw() const
    {
        __nv_bfloat162_raw r;
        r.x = __nv_bfloat16_raw(x).x;
        r.y = __nv_bfloat16_raw(y).x;
        return r;
    }
};

static_assert(sizeof(__nv_bfloat16) == 2 && alignof(__nv_bfloat16) == 2,
              "__nv_bfloat16 is 2 bytes, aligned to 2, as in CUDA");
static_assert(sizeof(__nv_bfloat162) == 4 && alignof(__nv_bfloat162) == 4,
              "__nv_bfloat162 is 4 bytes, aligned to 4, as in CUDA");
static_assert(std::is_trivially_copyable<__nv_bfloat16>::value &&
                  std::is_trivially_copyable<__nv_bfloat162>::value,
              "__nv_bfloat16 and __nv_bfloat162 are copied as bytes (cudaMemcpy)");

/* bfloat16 arithmetic is not emulated: see the top of this file. */
__nv_bfloat16 operator+(const __nv_bfloat16 &, const __nv_bfloat16 &) = delete; /* not emulated (common/emu) */
__nv_bfloat16 operator-(const __nv_bfloat16 &, const __nv_bfloat16 &) = delete; /* not emulated (common/emu) */
__nv_bfloat16 operator*(const __nv_bfloat16 &, const __nv_bfloat16 &) = delete; /* not emulated (common/emu) */
__nv_bfloat16 operator/(const __nv_bfloat16 &, const __nv_bfloat16 &) = delete; /* not emulated (common/emu) */
__nv_bfloat16 &operator+=(__nv_bfloat16 &, const __nv_bfloat16 &) = delete;     /* not emulated (common/emu) */
__nv_bfloat16 &operator-=(__nv_bfloat16 &, const __nv_bfloat16 &) = delete;     /* not emulated (common/emu) */
__nv_bfloat16 &operator*=(__nv_bfloat16 &, const __nv_bfloat16 &) = delete;     /* not emulated (common/emu) */
__nv_bfloat16 &operator/=(__nv_bfloat16 &, const __nv_bfloat16 &) = delete;     /* not emulated (common/emu) */
__nv_bfloat16 operator-(const __nv_bfloat16 &) = delete;                         /* not emulated (common/emu) */

static inline __nv_bfloat16 __ushort_as_bfloat16(const unsigned short int i)
{
    __nv_bfloat16_raw r;
    r.x = i;
    return __nv_bfloat16(r);
}
static inline unsigned short int __bfloat16_as_ushort(const __nv_bfloat16 h) { return __nv_bfloat16_raw(h).x; }

static inline __nv_bfloat16 __float2bfloat16_rn(const float a) { return __ushort_as_bfloat16(bf16_from_float(a)); }
static inline __nv_bfloat16 __float2bfloat16(const float a) { return __float2bfloat16_rn(a); } /* nearest even too */
static inline float __bfloat162float(const __nv_bfloat16 a) { return bf16_to_float(__bfloat16_as_ushort(a)); }

static inline __nv_bfloat162 __halves2bfloat162(const __nv_bfloat16 a, const __nv_bfloat16 b)
{
    return __nv_bfloat162(a, b);
}
static inline __nv_bfloat162 __bfloat162bfloat162(const __nv_bfloat16 a) { return __nv_bfloat162(a, a); }
static inline __nv_bfloat16 __low2bfloat16(const __nv_bfloat162 a) { return a.x; }
static inline __nv_bfloat16 __high2bfloat16(const __nv_bfloat162 a) { return a.y; }
static inline __nv_bfloat162 __lows2bfloat162(const __nv_bfloat162 a, const __nv_bfloat162 b)
{
    return __nv_bfloat162(a.x, b.x);
}
static inline __nv_bfloat162 __highs2bfloat162(const __nv_bfloat162 a, const __nv_bfloat162 b)
{
    return __nv_bfloat162(a.y, b.y);
}

static inline __nv_bfloat162 __float2bfloat162_rn(const float a) { return __bfloat162bfloat162(__float2bfloat16_rn(a)); }
static inline __nv_bfloat162 __floats2bfloat162_rn(const float a, const float b)
{
    return __nv_bfloat162(__float2bfloat16_rn(a), __float2bfloat16_rn(b));
}
static inline __nv_bfloat162 __float22bfloat162_rn(const float2 a) { return __floats2bfloat162_rn(a.x, a.y); }
/* Overloads of <cuda_fp16.h>'s __low2float and __high2float, as in CUDA. */
static inline float __low2float(const __nv_bfloat162 a) { return __bfloat162float(a.x); }
static inline float __high2float(const __nv_bfloat162 a) { return __bfloat162float(a.y); }
static inline float2 __bfloat1622float2(const __nv_bfloat162 a)
{
    return make_float2(__low2float(a), __high2float(a));
}

/* __hmax2: the larger of each pair of halves, as CUDA defines it
 * (common/f16.c's bf16_max). */
static inline __nv_bfloat162 __hmax2(const __nv_bfloat162 a, const __nv_bfloat162 b)
{
    return __nv_bfloat162(__ushort_as_bfloat16(bf16_max(__bfloat16_as_ushort(a.x), __bfloat16_as_ushort(b.x))),
                          __ushort_as_bfloat16(bf16_max(__bfloat16_as_ushort(a.y), __bfloat16_as_ushort(b.y))));
}

#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)

#endif
