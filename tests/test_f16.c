/* float16 and bfloat16 conversions (common/f16.c) against their
 * definitions: known bit patterns, every one of the 65536 patterns of
 * each format, every halfway point between neighbours, and a few million
 * random floats rounded by a slow reference that works from the
 * definition of round-to-nearest-even in double precision. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "f16.h"
#include "test.h"

/* The two formats as numbers: fraction bits, smallest normal exponent,
 * exponent field of infinity, bias. */
typedef struct {
    const char *name;
    int frac, emin, emax_field, bias;
    float (*widen)(uint16_t);
    uint16_t (*narrow)(float);
} format;

static const format F16 = {"f16", 10, -14, 31, 15, f16_to_float, f16_from_float};
static const format BF16 = {"bf16", 7, -126, 255, 127, bf16_to_float, bf16_from_float};

/* The value of a pattern from the definition (sign, exponent, fraction),
 * in double: (2^frac + m) * 2^(e - bias - frac), or m * 2^(emin - frac)
 * for a subnormal. NaN for a NaN pattern. */
static double value_of(const format *f, uint16_t p)
{
    int sign = p >> 15;
    int e = (p >> f->frac) & f->emax_field;
    int m = p & ((1 << f->frac) - 1);
    double v;
    if (e == f->emax_field) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp(m, f->emin - f->frac);
    else v = ldexp((1 << f->frac) + m, e - f->bias - f->frac);
    return sign ? -v : v;
}

static double largest(const format *f) { return value_of(f, (uint16_t)(((f->emax_field << f->frac) - 1))); }

/* The slow reference: x rounded to the format, ties to even, from the
 * definition. The unit in the last place is 2^(exponent of x's leading
 * bit - frac), never below that of the subnormals; x / ulp is then exact
 * in double and nearbyint rounds it to nearest even (the default mode).
 * Past the largest finite value the result is infinite. */
static double reference_round(const format *f, double x)
{
    if (isnan(x) || isinf(x) || x == 0) return x;
    int e;
    frexp(fabs(x), &e); /* |x| = g * 2^e, g in [0.5, 1): leading bit 2^(e-1) */
    int lead = e - 1 < f->emin ? f->emin : e - 1;
    double ulp = ldexp(1.0, lead - f->frac);
    double r = nearbyint(fabs(x) / ulp) * ulp;
    if (r > largest(f)) r = INFINITY;
    return copysign(r, x);
}

/* One narrowing checked: the result is NaN's pattern for a NaN, otherwise
 * a pattern whose value (and sign, for zeros) is the reference's. */
static int narrows_right(const format *f, float x, uint16_t *got, double *want)
{
    *got = f->narrow(x);
    if (isnan(x)) {
        *want = NAN;
        return *got == F16_NAN;
    }
    *want = reference_round(f, x);
    double v = value_of(f, *got);
    return v == *want && !signbit(v) == !signbit(*want);
}

/* ---- known bit patterns --------------------------------------------------- */
static void expect_narrow(const format *f, float x, uint16_t want, const char *name)
{
    uint16_t got = f->narrow(x);
    test_expect(got == want, name, "%s_from_float(%a) = 0x%04X, want 0x%04X", f->name, (double)x, got, want);
}

static void expect_widen(const format *f, uint16_t p, uint32_t want, const char *name)
{
    uint32_t got = f32_bits(f->widen(p));
    test_expect(got == want, name, "%s_to_float(0x%04X) has bits 0x%08X, want 0x%08X", f->name, p, got, want);
}

static void known_patterns(void)
{
    expect_narrow(&F16, 1.0f, 0x3C00, "f16: 1.0 is 0x3C00");
    expect_widen(&F16, 0x3C00, 0x3F800000, "f16: 0x3C00 widens to 1.0");
    expect_narrow(&F16, -2.0f, 0xC000, "f16: -2.0 is 0xC000");
    expect_narrow(&F16, 65504.0f, 0x7BFF, "f16: 65504, the largest finite value, is 0x7BFF");
    expect_widen(&F16, 0x7BFF, f32_bits(65504.0f), "f16: 0x7BFF widens to 65504");
    expect_narrow(&F16, 65519.996f, 0x7BFF, "f16: just below 65520 rounds down to 65504");
    expect_narrow(&F16, 65520.0f, 0x7C00, "f16: 65520 (halfway to 65536) rounds to +infinity");
    expect_narrow(&F16, -65520.0f, 0xFC00, "f16: -65520 rounds to -infinity");
    expect_narrow(&F16, 1e30f, 0x7C00, "f16: 1e30 overflows to +infinity");
    expect_narrow(&F16, ldexpf(1, -24), 0x0001, "f16: 2^-24, the smallest subnormal, is 0x0001");
    expect_widen(&F16, 0x0001, f32_bits(ldexpf(1, -24)), "f16: 0x0001 widens to 2^-24");
    expect_widen(&F16, 0x03FF, f32_bits(ldexpf(1023, -24)), "f16: 0x03FF, the largest subnormal, widens exactly");
    expect_narrow(&F16, ldexpf(1, -25), 0x0000, "f16: 2^-25 (halfway to 0) ties to even: +0");
    expect_narrow(&F16, nextafterf(ldexpf(1, -25), 1), 0x0001, "f16: just above 2^-25 rounds up to 0x0001");
    expect_narrow(&F16, ldexpf(3, -25), 0x0002, "f16: 3 * 2^-25 (halfway 0x0001-0x0002) ties to even 0x0002");
    expect_narrow(&F16, ldexpf(2047, -25), 0x0400,
                  "f16: halfway between the largest subnormal and 2^-14 ties to even 0x0400");
    expect_narrow(&F16, 1.0f + ldexpf(1, -11), 0x3C00, "f16: 1 + 2^-11 (halfway) ties to even 1.0");
    expect_narrow(&F16, 1.0f + ldexpf(3, -11), 0x3C02, "f16: 1 + 3 * 2^-11 (halfway) ties to even 0x3C02");
    expect_narrow(&F16, 2048.0f + 1.0f, 0x6800, "f16: 2049 ties to even 2048");
    expect_narrow(&F16, 2048.0f + 3.0f, 0x6802, "f16: 2051 ties to even 2052");
    expect_narrow(&F16, ldexpf(1, -149), 0x0000, "f16: a float subnormal rounds to +0");
    expect_narrow(&F16, -0.0f, 0x8000, "f16: -0 keeps its sign");
    expect_narrow(&F16, -ldexpf(1, -30), 0x8000, "f16: a tiny negative value rounds to -0");
    expect_widen(&F16, 0x8000, 0x80000000, "f16: 0x8000 widens to -0");
    expect_narrow(&F16, INFINITY, 0x7C00, "f16: +infinity is 0x7C00");
    expect_narrow(&F16, -INFINITY, 0xFC00, "f16: -infinity is 0xFC00");
    expect_widen(&F16, 0xFC00, 0xFF800000, "f16: 0xFC00 widens to -infinity");
    expect_narrow(&F16, NAN, 0x7FFF, "f16: NaN narrows to the quiet NaN 0x7FFF");
    expect_narrow(&F16, f32_from_bits(0xFF800001), 0x7FFF, "f16: a negative signalling NaN narrows to 0x7FFF");
    expect_narrow(&F16, f32_from_bits(0x7F801000), 0x7FFF, "f16: a NaN with payload above the kept bits stays NaN");
    expect_widen(&F16, 0x7C01, 0x7FFFFFFF, "f16: a NaN pattern widens to the NaN 0x7FFFFFFF");
    expect_widen(&F16, 0xFE00, 0x7FFFFFFF, "f16: a negative NaN widens to the NaN 0x7FFFFFFF");

    expect_narrow(&BF16, 1.0f, 0x3F80, "bf16: 1.0 is 0x3F80");
    expect_widen(&BF16, 0x3F80, 0x3F800000, "bf16: 0x3F80 widens to 1.0");
    expect_widen(&BF16, 0x7F7F, 0x7F7F0000, "bf16: 0x7F7F, the largest finite value (~3.39e38), widens exactly");
    expect_narrow(&BF16, f32_from_bits(0x7F7F7FFF), 0x7F7F, "bf16: just below halfway past the largest rounds to 0x7F7F");
    expect_narrow(&BF16, f32_from_bits(0x7F7F8000), 0x7F80, "bf16: halfway past the largest ties to even: +infinity");
    expect_narrow(&BF16, 3.4028235e38f, 0x7F80, "bf16: FLT_MAX rounds to +infinity");
    expect_narrow(&BF16, -3.4028235e38f, 0xFF80, "bf16: -FLT_MAX rounds to -infinity");
    expect_narrow(&BF16, 1.0f + ldexpf(1, -8), 0x3F80, "bf16: 1 + 2^-8 (halfway) ties to even 1.0");
    expect_narrow(&BF16, 1.0f + ldexpf(3, -8), 0x3F82, "bf16: 1 + 3 * 2^-8 (halfway) ties to even 0x3F82");
    expect_narrow(&BF16, nextafterf(1.0f + ldexpf(1, -8), 2), 0x3F81, "bf16: just above halfway rounds up");
    expect_narrow(&BF16, ldexpf(1, -133), 0x0001, "bf16: 2^-133, the smallest subnormal, is 0x0001");
    expect_narrow(&BF16, ldexpf(1, -134), 0x0000, "bf16: 2^-134 (halfway to 0) ties to even: +0");
    expect_narrow(&BF16, ldexpf(3, -134), 0x0002, "bf16: 3 * 2^-134 ties to even 0x0002");
    expect_narrow(&BF16, f32_from_bits(0x007FFFFF), 0x0080, "bf16: the largest float subnormal rounds up to 2^-126");
    expect_narrow(&BF16, -0.0f, 0x8000, "bf16: -0 keeps its sign");
    expect_narrow(&BF16, INFINITY, 0x7F80, "bf16: +infinity is 0x7F80");
    expect_narrow(&BF16, -INFINITY, 0xFF80, "bf16: -infinity is 0xFF80");
    expect_narrow(&BF16, NAN, 0x7FFF, "bf16: NaN narrows to the quiet NaN 0x7FFF");
    expect_narrow(&BF16, f32_from_bits(0x7F800001), 0x7FFF,
                  "bf16: a NaN with payload only in the dropped bits stays NaN (not infinity)");
    expect_narrow(&BF16, f32_from_bits(0xFFFFFFFF), 0x7FFF, "bf16: a NaN whose rounding would carry stays 0x7FFF");
    expect_widen(&BF16, 0xFFC1, 0xFFC10000, "bf16: a NaN pattern widens to the float with those top bits");
}

/* ---- every pattern ---------------------------------------------------------- */
static void every_pattern(const format *f)
{
    char name[160];
    long bad_widen = 0, bad_round_trip = 0;
    uint32_t first_w = 0, first_r = 0;
    for (uint32_t p = 0; p < 65536; p++) {
        float w = f->widen((uint16_t)p);
        double v = value_of(f, (uint16_t)p);
        int ok = isnan(v) ? isnan(w) : ((double)w == v && !signbit(w) == !signbit(v));
        if (!ok && bad_widen++ == 0) first_w = p;
        uint16_t back = f->narrow(w);
        ok = isnan(v) ? back == F16_NAN : back == p;
        if (!ok && bad_round_trip++ == 0) first_r = p;
    }
    snprintf(name, sizeof name, "%s: each of the 65536 patterns widens to its value from the definition", f->name);
    test_expect(bad_widen == 0, name, "%ld differ, the first 0x%04X", bad_widen, first_w);
    snprintf(name, sizeof name, "%s: each of the 65536 patterns widens and narrows back to itself (a NaN to 0x7FFF)",
             f->name);
    test_expect(bad_round_trip == 0, name, "%ld differ, the first 0x%04X -> 0x%04X", bad_round_trip, first_r,
                bad_round_trip ? f->narrow(f->widen((uint16_t)first_r)) : 0);
}

/* Every halfway point between two neighbouring finite patterns (exact in
 * float: it needs one bit more than the format has) ties to the even one,
 * and the float just below and just above it round to the nearer one. */
static void every_halfway_point(const format *f)
{
    char name[160];
    long bad = 0, ties = 0;
    float first = 0;
    for (uint32_t p = 0; p < 0x8000u; p++) {
        double lo = value_of(f, (uint16_t)p), hi = value_of(f, (uint16_t)(p + 1));
        if (isnan(lo) || isinf(lo) || isnan(hi)) continue;
        if (isinf(hi)) hi = 2 * lo - value_of(f, (uint16_t)(p - 1)); /* where the next one would be */
        for (int s = 0; s < 2; s++) {
            float mid = (float)((lo + hi) / 2);
            if ((double)mid != (lo + hi) / 2) { /* cannot happen for these formats */
                bad++;
                continue;
            }
            if (s) mid = -mid;
            uint16_t even = (uint16_t)((p & 1u) ? p + 1 : p) | (uint16_t)(s << 15);
            uint16_t got = f->narrow(mid);
            int ok = got == even;
            ties++;
            uint16_t g1, g2;
            double w1, w2;
            ok = ok && narrows_right(f, nextafterf(mid, 0), &g1, &w1) &&
                 narrows_right(f, nextafterf(mid, s ? -INFINITY : INFINITY), &g2, &w2);
            if (!ok && bad++ == 0) first = mid;
        }
    }
    snprintf(name, sizeof name,
             "%s: every halfway point ties to the even neighbour, the floats beside it to the nearer one", f->name);
    test_expect(bad == 0 && ties > 60000, name, "%ld of %ld wrong, the first at %a", bad, ties, (double)first);
}

/* ---- random floats against the reference ----------------------------------- */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t next_u32(void) /* xorshift64*: fast, fixed seed, plenty for test inputs */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

static void random_floats(const format *f, long n)
{
    char name[160];
    long bad = 0;
    float first = 0;
    uint16_t got = 0;
    double want = 0;
    /* Half of the floats are any 32-bit pattern (NaNs and infinities
     * among them); half have an exponent in and around the format's range,
     * where the rounding work is. */
    int lo_e = f->emin - f->frac - 3 + 127, hi_e = f->emin + 127 + 2 * (-f->emin) + 4;
    if (lo_e < 0) lo_e = 0;
    if (hi_e > 255) hi_e = 255;
    for (long i = 0; i < n; i++) {
        uint32_t u = next_u32();
        if (i & 1) u = (u & 0x807FFFFFu) | (uint32_t)(lo_e + (int)(next_u32() % (uint32_t)(hi_e - lo_e + 1))) << 23;
        float x = f32_from_bits(u);
        uint16_t g;
        double w;
        if (!narrows_right(f, x, &g, &w) && bad++ == 0) first = x, got = g, want = w;
    }
    snprintf(name, sizeof name, "%s: narrowing agrees with round-to-nearest-even from the definition on %ld random floats",
             f->name, n);
    test_expect(bad == 0, name, "%ld differ, the first %a -> 0x%04X, want %a", bad, (double)first, got, want);
}

/* f16_max and bf16_max, CUDA's __hmax rule, on the cases that define it. */
static void known_maxima(void)
{
    static const struct {
        uint16_t a, b, want_f16, want_bf16;
        const char *what;
    } C[] = {
        {0x3C00, 0x4000, 0x4000, 0x4000, "the larger of two numbers"},
        {0xC000, 0xBC00, 0xBC00, 0xBC00, "the larger of two negative numbers"},
        {0x0000, 0x8000, 0x0000, 0x0000, "+0 over -0"},
        {0x8000, 0x0000, 0x0000, 0x0000, "+0 over -0, either order"},
        {0x7E00, 0xBC00, 0xBC00, 0x7E00, "a number over a NaN (0x7E00 is a float16 NaN, a bfloat16 number)"},
        {0xFF80, 0x7FC0, 0x7FFF, 0xFF80, "two NaNs give the canonical NaN (float16); -inf beats a NaN (bfloat16)"},
        {0x7C00, 0x7BFF, 0x7C00, 0x7C00, "+inf over the largest finite"},
        {0xFC00, 0x0001, 0x0001, 0x0001, "the smallest subnormal over -inf (float16), over -2^121 (bfloat16)"},
    };
    for (int i = 0; i < (int)(sizeof C / sizeof C[0]); i++) {
        const uint16_t gf = f16_max(C[i].a, C[i].b), gb = bf16_max(C[i].a, C[i].b);
        char name[160];
        snprintf(name, sizeof name, "f16_max and bf16_max: %s", C[i].what);
        test_expect(gf == C[i].want_f16 && gb == C[i].want_bf16, name,
                    "max(0x%04X, 0x%04X): float16 0x%04X (want 0x%04X), bfloat16 0x%04X (want 0x%04X)", C[i].a,
                    C[i].b, gf, C[i].want_f16, gb, C[i].want_bf16);
    }
}

int main(void)
{
    known_patterns();
    known_maxima();
    every_pattern(&F16);
    every_pattern(&BF16);
    every_halfway_point(&F16);
    every_halfway_point(&BF16);
    random_floats(&F16, 2000000);
    random_floats(&BF16, 2000000);
    return test_exit_status();
}
