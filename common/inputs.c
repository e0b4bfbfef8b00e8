/* Reproducible inputs (see inputs.h).
 *
 * A counter-based generator: every random number is a hash of
 * (seed, kind, row, counter), so a value depends on nothing generated
 * before it. The same seed gives the same bits on any machine, in any
 * order, and a row can be regenerated on its own. libc rand() gives none of
 * this (its sequence differs between C libraries). */
#include "inputs.h"

#include <float.h>
#include <math.h>

/* The splitmix64 finaliser: a bijection on 64-bit words that mixes every
 * input bit into every output bit. Hashing consecutive counters with it is
 * the SplitMix64 generator, which passes the usual statistical tests. */
static unsigned long long mix64(unsigned long long z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#define GOLDEN 0x9e3779b97f4a7c15ULL /* 2^64 / golden ratio: the SplitMix step */

/* The key of one row: a hash of everything the row depends on. */
static unsigned long long row_key(unsigned long long seed, input_kind kind, long long row)
{
    unsigned long long k = mix64(seed + GOLDEN);
    k = mix64(k ^ ((unsigned long long)kind + 1) * GOLDEN);
    return mix64(k ^ ((unsigned long long)row + 1) * 0xd1b54a32d192ed03ULL);
}

/* The i-th random 64-bit word of a row. */
static unsigned long long bits(unsigned long long key, unsigned long long i)
{
    return mix64(key + (i + 1) * GOLDEN);
}

/* Uniform in [0, 1): the top 53 bits, the resolution of a double. */
static double unit(unsigned long long b) { return (double)(b >> 11) * 0x1.0p-53; }

/* Uniform in [lo, hi). */
static double uniform(unsigned long long key, unsigned long long i, double lo, double hi)
{
    return lo + (hi - lo) * unit(bits(key, i));
}

/* N(0, 1) by Box-Muller: two uniforms give two independent normals,
 * r cos(t) and r sin(t). Element j uses pair j / 2, so each pair of
 * elements costs one log, one sqrt, one sin and one cos. Counters
 * 2^62 and above belong to the other uses of a row's key. */
static void fill_normal(float *x, long long n, unsigned long long key)
{
    const double two_pi = 6.283185307179586;
    for (long long j = 0; j < n; j += 2) {
        unsigned long long p = (unsigned long long)j / 2;
        double u1 = ((double)(bits(key, 2 * p) >> 11) + 1.0) * 0x1.0p-53; /* (0, 1]: log finite */
        double u2 = unit(bits(key, 2 * p + 1));
        double r = sqrt(-2.0 * log(u1)), t = two_pi * u2;
        x[j] = (float)(r * cos(t));
        if (j + 1 < n) x[j + 1] = (float)(r * sin(t));
    }
}

/* Counters for one-off draws of a row (an offset, a position), far from the
 * per-element counters 0 .. 2n. */
#define EXTRA (1ULL << 62)

/* The special rows, cycling by row index. Each one is a trap for a kernel:
 *   0: constant row: every x - max is exactly 0, the answer exactly 1/n;
 *   1: about a third of the entries -inf (masked), never all of them;
 *   2: +FLT_MAX and -FLT_MAX among normal values: x - max overflows in
 *      float32 for the negative one, the answer is one-hot;
 *   3: denormals around 1e-40 of both signs (flushed to 0 by fast math:
 *      the answer is ~1/n either way);
 *   4: an ordinary N(0, 1) row. */
#define NSPECIAL 5

static void fill_special(float *x, long long n, long long row, unsigned long long key)
{
    switch (row % NSPECIAL) {
    case 0: {
        float c = (float)uniform(key, EXTRA, -4.0, 4.0);
        for (long long j = 0; j < n; j++) x[j] = c;
        break;
    }
    case 1: {
        fill_normal(x, n, key);
        long long keep = (long long)(bits(key, EXTRA) % (unsigned long long)n);
        for (long long j = 0; j < n; j++)
            if (j != keep && unit(bits(key, EXTRA + 1 + (unsigned long long)j)) < 1.0 / 3.0)
                x[j] = -INFINITY;
        break;
    }
    case 2: {
        fill_normal(x, n, key);
        long long p = (long long)(bits(key, EXTRA) % (unsigned long long)n);
        x[p] = FLT_MAX;
        if (n > 1) { /* a different position for -FLT_MAX */
            long long q = (long long)(bits(key, EXTRA + 1) % (unsigned long long)(n - 1));
            x[(p + 1 + q) % n] = -FLT_MAX;
        }
        break;
    }
    case 3:
        for (long long j = 0; j < n; j++) {
            unsigned long long b = bits(key, (unsigned long long)j);
            double v = (0.5 + unit(b)) * 1e-40; /* 0.5e-40 .. 1.5e-40: below FLT_MIN */
            x[j] = (float)((b & 1) ? -v : v);
        }
        break;
    default:
        fill_normal(x, n, key);
        break;
    }
}

void inputs_fill(float *x, long long rows, long long cols, input_kind kind,
                 unsigned long long seed)
{
    if (cols < 1) return; /* nothing to fill (and no position to pick) */
    for (long long i = 0; i < rows; i++) {
        float *r = x + i * cols;
        unsigned long long key = row_key(seed, kind, i);
        switch (kind) {
        case INPUT_UNIFORM:
            for (long long j = 0; j < cols; j++) r[j] = (float)uniform(key, (unsigned long long)j, -4.0, 4.0);
            break;
        case INPUT_LARGE: {
            /* One offset c per row, |c| in [100, 3000], either sign, plus
             * U(-10, 10): every |x| > 88.8, so float32 exp(x) overflows to
             * inf (c > 0) or, for c < -104, underflows to 0 and the naive
             * softmax computes 0/0. Beyond |x| ~ 710 even double overflows. */
            unsigned long long b = bits(key, EXTRA);
            double c = 100.0 + 2900.0 * unit(b);
            if (b & 1) c = -c;
            for (long long j = 0; j < cols; j++)
                r[j] = (float)(c + uniform(key, (unsigned long long)j, -10.0, 10.0));
            break;
        }
        case INPUT_SPECIAL:
            fill_special(r, cols, i, key);
            break;
        case INPUT_NORMAL:
        default:
            fill_normal(r, cols, key);
            break;
        }
    }
}
