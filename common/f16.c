/* float16 and bfloat16 <-> float (see f16.h). Integer arithmetic on the
 * bit patterns only: no floating-point operation can round, flush a
 * subnormal or raise a flag here, so the result does not depend on the
 * compiler's or the CPU's floating-point settings. */
#include "f16.h"

#include <math.h>
#include <string.h>

/* Shifts m right by s (1 <= s <= 31), rounding to nearest, ties to even:
 * the bits shifted out are compared with one half of the last kept bit. */
static uint32_t shift_right_rne(uint32_t m, unsigned s)
{
    uint32_t kept = m >> s;
    uint32_t rest = m & ((1u << s) - 1u);
    uint32_t half = 1u << (s - 1u);
    if (rest > half || (rest == half && (kept & 1u))) kept++;
    return kept;
}

float f16_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu;
    uint32_t m = h & 0x3FFu;
    if (e == 0x1Fu) /* infinity keeps its sign; every NaN becomes the one CUDA gives */
        return f32_from_bits(m ? 0x7FFFFFFFu : sign | 0x7F800000u);
    if (e == 0) {
        if (m == 0) return f32_from_bits(sign); /* +-0 */
        /* A subnormal m * 2^-24 is a normal float: shift the leading 1 of m
         * up to the implicit bit's place (bit 10), lowering the exponent
         * once per shift (a 1 already in bit 10 would be 2^-14, whose float
         * exponent field is 113); the leading 1 then becomes implicit. */
        uint32_t fe = 113;
        while (!(m & 0x400u)) {
            m <<= 1;
            fe--;
        }
        return f32_from_bits(sign | fe << 23 | (m & 0x3FFu) << 13);
    }
    /* Normal: the exponent bias goes from 15 to 127 (+112), the 10
     * fraction bits become the top of float's 23. */
    return f32_from_bits(sign | (e + 112u) << 23 | m << 13);
}

uint16_t f16_from_float(float x)
{
    uint32_t u = f32_bits(x);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7FFFFFFFu; /* |x|; the order of floats is the order of these integers */
    if (a > 0x7F800000u) return F16_NAN;
    /* 65520 = 0x477FF000 is halfway between 65504 and 65536 (which would be
     * the next float16 if the format went on); the tie goes to 65536's
     * even pattern, so from there on (infinity too) the result is infinite. */
    if (a >= 0x477FF000u) return sign | F16_INF;
    if (a >= 0x38800000u) {
        /* Normal float16 (|x| >= 2^-14): take 112 off the exponent and round
         * the 23-bit fraction to 10 bits. A carry out of the fraction
         * moves into the exponent field, which is the right next value. */
        return sign | (uint16_t)shift_right_rne(a - (112u << 23), 13);
    }
    /* Subnormal float16 or zero: the result is |x| / 2^-24 rounded to an
     * integer. |x| = M * 2^(E - 150) with M the 24-bit significand and E
     * the exponent field, so |x| / 2^-24 = M >> (126 - E). Below 2^-25
     * (E < 102) it rounds to 0; at 2^-25 itself it is a tie, which goes to
     * even (0) in the shift. A rounding up to 0x400 is 2^-14, the smallest
     * normal float16, correctly encoded. Float subnormals (E = 0) land here. */
    uint32_t e = a >> 23;
    if (e < 102u) return sign;
    return sign | (uint16_t)shift_right_rne((a & 0x7FFFFFu) | 0x800000u, 126u - e);
}

float bf16_to_float(uint16_t b)
{
    /* bfloat16 is the top half of a float: same sign, exponent and bias. */
    return f32_from_bits((uint32_t)b << 16);
}

uint16_t bf16_from_float(float x)
{
    uint32_t u = f32_bits(x);
    /* A NaN whose payload lies only in the low 16 bits would round to
     * infinity or carry further: it is caught first. */
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return F16_NAN;
    /* Round the low 16 bits away, ties to even. The largest float rounds
     * up to infinity (0x7F7FFFFF + 0x8000 = 0x7F807FFF), the correct
     * result; infinity itself stays; the sign bit is never reached. */
    return (uint16_t)(shift_right_rne(u & 0x7FFFFFFFu, 16) | ((u >> 16) & 0x8000u));
}

static uint16_t max16(uint16_t a, uint16_t b, float (*widen)(uint16_t))
{
    const float fa = widen(a), fb = widen(b);
    if (isnan(fa)) return isnan(fb) ? F16_NAN : b;
    if (isnan(fb)) return a;
    if (fa == fb) return signbit(fa) ? b : a; /* +0 against -0 */
    return fa > fb ? a : b;
}

uint16_t f16_max(uint16_t a, uint16_t b) { return max16(a, b, f16_to_float); }
uint16_t bf16_max(uint16_t a, uint16_t b) { return max16(a, b, bf16_to_float); }
