/* 16-bit floating-point storage on the host: IEEE 754 binary16 ("half",
 * float16, CUDA's __half) and bfloat16 (CUDA's __nv_bfloat16), each held as
 * its 16-bit pattern in a uint16_t, converted to and from float.
 *
 * One implementation for the whole course: the host code (inputs, .npy,
 * the float64 reference's exact widening) and the CPU emulator's
 * <cuda_fp16.h> and <cuda_bf16.h> (common/emu/include) all call these, and
 * tests/test_half.cu checks them bit for bit against a GPU's conversions.
 *
 *                 sign  exponent  fraction  largest finite      smallest subnormal
 *   float16        1       5         10     65504   (0x7BFF)    2^-24  (0x0001)
 *   bfloat16       1       8          7     ~3.39e38 (0x7F7F)   2^-133 (0x0001)
 *
 * Widening (16 -> 32 bits) is exact: every float16 and bfloat16 value is a
 * float. Narrowing (32 -> 16 bits) rounds to nearest, ties to even, as the
 * GPU's __float2half_rn and __float2bfloat16_rn do: a value past the
 * largest finite one by half a unit in the last place or more becomes
 * infinity, tiny values become subnormals or a zero of their sign.
 *
 * NaN: a NaN stays a NaN; its payload is not carried. Narrowing gives the
 * one quiet NaN 0x7FFF (sign dropped), as CUDA does; float16 widening gives
 * 0x7FFFFFFF (CUDA's host code does the same); bfloat16 widening is the
 * bit pattern moved up 16 places (the top half of a float), so its NaNs
 * keep sign and payload. */
#ifndef COMMON_F16_H
#define COMMON_F16_H

#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define F16_NAN 0x7FFFu  /* the NaN that narrowing gives (float16 and bfloat16) */
#define F16_INF 0x7C00u  /* float16 +infinity */
#define F16_MAX 0x7BFFu  /* float16 65504 */
#define BF16_INF 0x7F80u /* bfloat16 +infinity */
#define BF16_MAX 0x7F7Fu /* bfloat16 (2 - 2^-7) * 2^127, about 3.39e38 */

/* The storage types of the course's tensors: lessons 1-8 store float32,
 * lesson 9 also float16 and bfloat16 (the arithmetic stays float32). */
typedef enum { DTYPE_F32 = 0, DTYPE_F16, DTYPE_BF16 } dtype;
#define DTYPE_COUNT 3

static inline int dtype_size(dtype t) { return t == DTYPE_F32 ? 4 : 2; } /* bytes per element */
/* "f32", "f16", "bf16": the spelling of --dtype and of the CSV's dtype column. */
static inline const char *dtype_name(dtype t) { return t == DTYPE_F16 ? "f16" : t == DTYPE_BF16 ? "bf16" : "f32"; }
/* Parses one of dtype_name's spellings: 0, or -1 for anything else. */
static inline int dtype_parse(const char *s, dtype *t)
{
    for (int i = 0; i < DTYPE_COUNT; i++)
        if (strcmp(s, dtype_name((dtype)i)) == 0) {
            *t = (dtype)i;
            return 0;
        }
    return -1;
}

float f16_to_float(uint16_t h);    /* exact */
uint16_t f16_from_float(float x);  /* round to nearest even */
float bf16_to_float(uint16_t b);   /* exact */
uint16_t bf16_from_float(float x); /* round to nearest even */
/* The larger of two patterns, as CUDA's __hmax and __hmax2 define it: a
 * NaN loses to a number, two NaNs give F16_NAN, +0 beats -0. Exact: the
 * result is one of its inputs (the emulator's __hmax2; tests/test_half.cu
 * compares it with a GPU's). */
uint16_t f16_max(uint16_t a, uint16_t b);
uint16_t bf16_max(uint16_t a, uint16_t b);

/* A float's 32 bits and back. memcpy, not a union or a pointer cast: the
 * one bit copy C defines (the tests use these too). */
static inline uint32_t f32_bits(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
static inline float f32_from_bits(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

#ifdef __cplusplus
}
#endif
#endif
