/* The float64 reference checked against itself: the online-softmax tutorial's algorithms
 * (online, block, batch) must give the same softmax as the two-pass
 * definition, and the special values must behave as PyTorch's do.
 * Every kernel is later judged by these functions, so they are tested
 * against each other and against hand-computed values. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "inputs.h"
#include "reference.h"
#include "test.h"

#include "test_reference_cases.h"
#include "test_reference_training.h"

/* ---- the Triton teaching example's worked examples ------------------------ */

static void check_values(const char *name, const float *x, long long n, const double *expect)
{
    double y[8];
    ref_softmax_row(x, y, n);
    for (long long j = 0; j < n; j++) {
        if (!(fabs(y[j] - expect[j]) < 5e-5)) {
            test_fail(name, "y[%lld] = %.6f, want %.4f", j, y[j], expect[j]);
            return;
        }
    }
    test_pass(name);
}

static void test_worked_examples(void)
{
    const float a[4] = {1, 2, 3, 4};
    const double ya[4] = {0.0321, 0.0871, 0.2369, 0.6439};
    check_values("reference: softmax of [1, 2, 3, 4] is 0.0321, 0.0871, 0.2369, 0.6439 (worked example)", a, 4, ya);

    const double yb[3] = {0.0900, 0.2447, 0.6652};
    const float b[3] = {1000, 1001, 1002};
    check_values("reference: softmax of [1000, 1001, 1002] is 0.0900, 0.2447, 0.6652 (worked example)", b, 3, yb);
    const float c[3] = {800, 801, 802};
    check_values("reference: stable softmax of [800, 801, 802] is 0.0900, 0.2447, 0.6652", c, 3, yb);

    /* exp(800) > DBL_MAX (exp(709.78)): inf / inf = NaN. */
    double y[3];
    ref_softmax_naive_row(c, y, 3);
    test_expect(!isfinite(y[0]) && !isfinite(y[1]) && !isfinite(y[2]),
                "reference: naive double softmax is not finite on [800, 801, 802] (exp(800) overflows double)",
                "got [%g, %g, %g]", y[0], y[1], y[2]);
}

static void test_naive_equals_stable(void)
{
    const char *name = "reference: naive and stable softmax agree (1e-12) on N(0,1) rows where naive cannot overflow";
    for (int l = 0; l < NLENGTHS; l++) {
        long long n = LENGTHS[l];
        fill_case(INPUT_NORMAL, n, 11 + l);
        for (int i = 0; i < ROWS; i++) {
            ref_softmax_naive_row(X + i * n, GOT, n);
            long long j = rows_differ(GOT, WANT + i * n, n, TOL);
            if (j >= 0) {
                test_fail(name, "n %lld row %d: y[%lld] = %.17g, want %.17g", n, i, j, GOT[j], WANT[i * n + j]);
                return;
            }
        }
    }
    test_pass(name);
}

static void test_sums_to_one(void)
{
    const char *name = "reference: every softmax row lies in [0, 1] and sums to 1 (1e-12), every input kind";
    for (int k = 0; k < NKINDS; k++)
        for (int l = 0; l < NLENGTHS; l++) {
            long long n = LENGTHS[l];
            fill_case(k, n, 100 + l);
            for (int i = 0; i < ROWS; i++) {
                double sum = 0;
                for (long long j = 0; j < n; j++) {
                    double v = WANT[i * n + j];
                    if (!(v >= 0 && v <= 1)) {
                        test_fail(name, "%s n %lld row %d: y[%lld] = %g", input_kind_name((input_kind)k), n, i, j, v);
                        return;
                    }
                    sum += v;
                }
                if (!(fabs(sum - 1) <= TOL)) {
                    test_fail(name, "%s n %lld row %d: sum %.17g", input_kind_name((input_kind)k), n, i, sum);
                    return;
                }
            }
        }
    test_pass(name);
}

/* ---- the online-softmax tutorial's variants against the definition ----------- */

typedef void (*row_variant)(const float *x, double *y, long long n, long long block);

static void v_online_1d(const float *x, double *y, long long n, long long block)
{
    (void)block;
    ref_online_1d(x, y, n);
}

/* Each variant on every kind, length and block size (a variant without a
 * block size runs once per case). */
static void check_row_variant(const char *name, row_variant f, int uses_block)
{
    for (int k = 0; k < NKINDS; k++)
        for (int l = 0; l < NLENGTHS; l++) {
            long long n = LENGTHS[l];
            fill_case(k, n, 1000 + 10 * k + l);
            for (int b = 0; b < (uses_block ? NBLOCKS : 1); b++)
                for (int i = 0; i < ROWS; i++) {
                    f(X + i * n, GOT, n, BLOCKS[b]);
                    long long j = rows_differ(GOT, WANT + i * n, n, TOL);
                    if (j >= 0) {
                        test_fail(name, "%s n %lld block %lld row %d: y[%lld] = %.17g, want %.17g",
                                  input_kind_name((input_kind)k), n, BLOCKS[b], i, j, GOT[j], WANT[i * n + j]);
                        return;
                    }
                }
        }
    test_pass(name);
}

/* The batch variants take the whole ROWS x n matrix at once. */
static void check_batch_variant(const char *name, int online)
{
    for (int k = 0; k < NKINDS; k++)
        for (int l = 0; l < NLENGTHS; l++) {
            long long n = LENGTHS[l];
            fill_case(k, n, 2000 + 10 * k + l);
            for (int b = 0; b < (online ? NBLOCKS : 1); b++) {
                if (online) ref_online_batch_softmax(X, GOT, ROWS, n, BLOCKS[b]);
                else ref_batch_softmax(X, GOT, ROWS, n);
                long long j = rows_differ(GOT, WANT, ROWS * n, TOL);
                if (j >= 0) {
                    test_fail(name, "%s n %lld block %lld: y[%lld][%lld] = %.17g, want %.17g",
                              input_kind_name((input_kind)k), n, online ? BLOCKS[b] : 0, j / n, j % n, GOT[j], WANT[j]);
                    return;
                }
            }
        }
    test_pass(name);
}

static void test_variants(void)
{
    check_row_variant("reference: online 1-D softmax equals the two-pass definition (1e-12), lengths 1 to 4097, every input kind",
                      v_online_1d, 0);
    check_row_variant("reference: block softmax equals the two-pass definition (1e-12), blocks 1 to 5000 (also > n)",
                      ref_block_softmax, 1);
    check_row_variant("reference: online block softmax equals the two-pass definition (1e-12), blocks 1 to 5000 (also > n)",
                      ref_online_block_softmax, 1);
    check_batch_variant("reference: batch softmax (two halves merged) equals the two-pass definition (1e-12), cols 1 to 4097", 0);
    check_batch_variant("reference: online batch softmax (running M, L) equals the two-pass definition (1e-12), blocks 1 to 5000", 1);
}

/* ---- special values through every variant ----------------------------------- */

/* Runs all six implementations on one row x[0..n-1]; returns the index of
 * the first that does not give all NaN, or -1. */
static int all_nan_everywhere(const float *x, long long n, long long block)
{
    double y[16];
    for (int v = 0; v < 6; v++) {
        switch (v) {
        case 0: ref_softmax_row(x, y, n); break;
        case 1: ref_online_1d(x, y, n); break;
        case 2: ref_block_softmax(x, y, n, block); break;
        case 3: ref_online_block_softmax(x, y, n, block); break;
        case 4: ref_batch_softmax(x, y, 1, n); break;
        default: ref_online_batch_softmax(x, y, 1, n, block); break;
        }
        for (long long j = 0; j < n; j++)
            if (!isnan(y[j])) return v;
    }
    return -1;
}

static void test_special_values(void)
{
    const float ninf = -INFINITY;
    const float allinf[5] = {ninf, ninf, ninf, ninf, ninf};
    int bad = -1;
    long long at = 0;
    for (long long n = 1; n <= 5 && bad < 0; n++)
        for (long long b = 1; b <= 6 && bad < 0; b++) bad = all_nan_everywhere(allinf, n, b), at = n;
    test_expect(bad < 0, "reference: an all -inf row gives NaN everywhere in every variant (as PyTorch)",
                "variant %d on %lld x -inf", bad, at);

    /* NaN at each position, beside -inf and finite values: a block such as
     * [NaN, -inf] must not be mistaken for an all -inf (empty) block. */
    const char *name = "reference: a NaN anywhere in a row gives NaN everywhere in every variant";
    float row[6] = {1, ninf, ninf, 2, 3, ninf};
    for (int p = 0; p < 6; p++) {
        float x[6];
        memcpy(x, row, sizeof x);
        x[p] = NAN;
        for (long long b = 1; b <= 7; b++) {
            int v = all_nan_everywhere(x, 6, b);
            if (v >= 0) {
                test_fail(name, "variant %d, NaN at %d, block %lld", v, p, b);
                return;
            }
        }
    }
    test_pass(name);

    /* -inf entries among finite ones: exactly 0, the others as if absent. */
    const float x[5] = {0.5f, ninf, 2, ninf, -1};
    const float finite[3] = {0.5f, 2, -1};
    double y[5], yf[3];
    ref_softmax_row(x, y, 5);
    ref_softmax_row(finite, yf, 3);
    test_expect(y[1] == 0 && y[3] == 0 && close_to(y[0], yf[0], TOL) && close_to(y[2], yf[1], TOL) &&
                    close_to(y[4], yf[2], TOL),
                "reference: -inf entries get exactly 0, the rest the softmax of the finite entries",
                "got [%g, %g, %g, %g, %g]", y[0], y[1], y[2], y[3], y[4]);
}

/* ---- scaled and masked ------------------------------------------------------- */

/* A plain two-pass softmax of doubles, written out here independently. */
static void softmax_doubles(const double *v, double *y, long long n)
{
    double m = -INFINITY, s = 0;
    for (long long j = 0; j < n; j++) m = v[j] > m ? v[j] : m;
    for (long long j = 0; j < n; j++) s += exp(v[j] - m);
    for (long long j = 0; j < n; j++) y[j] = exp(v[j] - m) / s;
}

static void test_scaled(void)
{
    static double V[MAXN];
    static float XS[MAXN];
    int ok1 = 1, ok2 = 1, ok3 = 1;
    long long n1 = 0, n2 = 0, n3 = 0;
    for (int k = 0; k < NKINDS; k++)
        for (int l = 0; l < NLENGTHS; l++) {
            long long n = LENGTHS[l];
            fill_case(k, n, 3000 + l);
            for (int i = 0; i < ROWS; i++) {
                const float *x = X + i * n;
                ref_softmax_scaled_row(x, GOT, n, 1.0);
                if (ok1 && memcmp(GOT, WANT + i * n, (size_t)n * sizeof(double)) != 0) ok1 = 0, n1 = n;
                /* 1/sqrt(80) against an independent double softmax of scale * x */
                double s = 1.0 / sqrt(80.0);
                for (long long j = 0; j < n; j++) V[j] = s * (double)x[j];
                softmax_doubles(V, WANT + i * n, n);
                ref_softmax_scaled_row(x, GOT, n, s);
                if (ok2 && rows_differ(GOT, WANT + i * n, n, TOL) >= 0) ok2 = 0, n2 = n;
                /* 0.125 = 1/sqrt(64): x * 0.125 is exact in float (normal
                 * range), so the pre-scaled float row must give the same bits */
                if (k == INPUT_NORMAL || k == INPUT_UNIFORM) {
                    for (long long j = 0; j < n; j++) XS[j] = x[j] * 0.125f;
                    ref_softmax_row(XS, WANT + i * n, n);
                    ref_softmax_scaled_row(x, GOT, n, 0.125);
                    if (ok3 && memcmp(GOT, WANT + i * n, (size_t)n * sizeof(double)) != 0) ok3 = 0, n3 = n;
                }
            }
        }
    test_expect(ok1, "reference: scaled softmax with scale 1 equals plain softmax (bitwise), every input kind",
                "differs at n %lld", n1);
    test_expect(ok2, "reference: scaled softmax equals a double softmax of scale * x (1e-12), scale 1/sqrt(80)",
                "differs at n %lld", n2);
    test_expect(ok3, "reference: scaled softmax by 0.125 equals plain softmax of the pre-scaled row (bitwise)",
                "differs at n %lld", n3);
}

static void test_masked(void)
{
    static unsigned char keep[MAXN];
    static float kept[MAXN];
    static double yk[MAXN];
    const double scale = 0.3;
    int ok_all = 1, ok_mask = 1;
    long long n_all = 0, n_mask = 0;
    for (int l = 0; l < NLENGTHS; l++) {
        long long n = LENGTHS[l];
        fill_case(INPUT_NORMAL, n, 4000 + l);
        const float *x = X; /* an N(0,1) row: ROWS rows all normal, take the first */
        /* everything kept: the scaled softmax, to the bit */
        memset(keep, 1, (size_t)n);
        ref_softmax_masked_row(x, keep, GOT, n, scale);
        ref_softmax_scaled_row(x, WANT, n, scale);
        if (memcmp(GOT, WANT, (size_t)n * sizeof(double)) != 0) ok_all = 0, n_all = n;
        /* a pseudo-random mask that keeps element 0 at least */
        long long nk = 0;
        for (long long j = 0; j < n; j++) {
            keep[j] = j == 0 || (j * 7919) % 3 != 0;
            if (keep[j]) kept[nk++] = x[j];
        }
        ref_softmax_masked_row(x, keep, GOT, n, scale);
        ref_softmax_scaled_row(kept, yk, nk, scale);
        for (long long j = 0, t = 0; j < n && ok_mask; j++) {
            if (!keep[j] ? GOT[j] != 0.0 : !close_to(GOT[j], yk[t++], TOL)) ok_mask = 0, n_mask = n;
        }
    }
    test_expect(ok_all, "reference: masked softmax keeping everything equals scaled softmax (bitwise)",
                "differs at n %lld", n_all);
    test_expect(ok_mask,
                "reference: masked-out entries are exactly 0, kept ones the softmax of the kept values (1e-12)",
                "differs at n %lld", n_mask);

    const float x[4] = {1, 2, 3, 4};
    const unsigned char none[4] = {0, 0, 0, 0};
    double y[4];
    ref_softmax_masked_row(x, none, y, 4, 1.0);
    test_expect(isnan(y[0]) && isnan(y[1]) && isnan(y[2]) && isnan(y[3]),
                "reference: masked softmax with nothing kept gives NaN everywhere (as PyTorch)",
                "got [%g, %g, %g, %g]", y[0], y[1], y[2], y[3]);

    const float xn[4] = {1, NAN, 3, 4};
    const unsigned char k3[4] = {1, 0, 1, 1};
    const float x3[3] = {1, 3, 4};
    double y3[3];
    ref_softmax_masked_row(xn, k3, y, 4, 1.0);
    ref_softmax_row(x3, y3, 3);
    test_expect(y[1] == 0.0 && close_to(y[0], y3[0], TOL) && close_to(y[2], y3[1], TOL) && close_to(y[3], y3[2], TOL),
                "reference: a masked-out NaN is ignored (where() puts -inf in its place)",
                "got [%g, %g, %g, %g]", y[0], y[1], y[2], y[3]);
}

/* ---- logsumexp ------------------------------------------------------------------ */

static void test_logsumexp(void)
{
    const char *name = "reference: logsumexp equals log(sum(exp(x))) (1e-12) on N(0,1) rows";
    const char *name2 = "reference: softmax equals exp(x - logsumexp(x)) (1e-12), every input kind";
    int ok1 = 1, ok2 = 1;
    for (int k = 0; k < NKINDS; k++)
        for (int l = 0; l < NLENGTHS; l++) {
            long long n = LENGTHS[l];
            fill_case(k, n, 5000 + l);
            for (int i = 0; i < ROWS; i++) {
                const float *x = X + i * n;
                double lse = ref_logsumexp_row(x, n);
                if (k == INPUT_NORMAL) {
                    double s = 0;
                    for (long long j = 0; j < n; j++) s += exp((double)x[j]);
                    if (!close_to(lse, log(s), TOL)) ok1 = 0;
                }
                for (long long j = 0; j < n; j++)
                    if (!close_to(exp((double)x[j] - lse), WANT[i * n + j], 1e-11)) ok2 = 0;
            }
        }
    test_expect(ok1, name, "differs");
    /* exp(x - lse) amplifies lse's rounding by |lse| (up to ~3000 for the
     * large kind): 1e-11 rather than 1e-12 */
    test_expect(ok2, name2, "differs");

    const float big[3] = {800, 801, 802};
    double lse = ref_logsumexp_row(big, 3);
    double naive = log(exp(800.0) + exp(801.0) + exp(802.0));
    test_expect(fabs(lse - 802.40760596444) < 1e-9 && isinf(naive),
                "reference: logsumexp of [800, 801, 802] is 802.4076, where log(sum(exp(x))) overflows to inf",
                "got %.12g (naive %g)", lse, naive);

    const float ninf[2] = {-INFINITY, -INFINITY}, withnan[3] = {1, NAN, 2};
    double a = ref_logsumexp_row(ninf, 2), b = ref_logsumexp_row(withnan, 3);
    test_expect(a == -INFINITY && isnan(b), "reference: logsumexp of all -inf is -inf; with a NaN it is NaN",
                "got %g and %g", a, b);
}

/* ---- the (m, d) algebra ---------------------------------------------------------- */

#define NSTATES 64

/* Random genuine states: the (m, d) of short random rows, plus the identity
 * and some with equal maxima. */
static void random_states(md_state *s)
{
    float v[NSTATES * 8];
    inputs_fill(v, NSTATES, 8, INPUT_UNIFORM, 77);
    for (int i = 0; i < NSTATES; i++) {
        s[i] = md_identity();
        for (int j = 0; j < 1 + i % 8; j++) s[i] = md_push(s[i], 10.0 * v[i * 8 + j]);
    }
    s[0] = md_identity();
    s[1] = s[2];
}

static int same_state(md_state a, md_state b, double tol)
{
    return a.m == b.m && close_to(a.d, b.d, tol);
}

static void test_md_algebra(void)
{
    md_state s[NSTATES];
    random_states(s);
    md_state id = md_identity();

    int ok = 1;
    for (int i = 0; i < NSTATES; i++) {
        md_state l = md_merge(id, s[i]), r = md_merge(s[i], id);
        if (!same_state(l, s[i], 0) || !same_state(r, s[i], 0)) ok = 0;
    }
    test_expect(ok, "reference: md_merge with the identity (-inf, 0) returns the other state exactly, either side",
                "changed a state");

    md_state ii = md_merge(id, id);
    test_expect(ii.m == -INFINITY && ii.d == 0,
                "reference: md_merge of two identities is the identity (no NaN from -inf - -inf)",
                "got (%g, %g)", ii.m, ii.d);

    ok = 1;
    for (int i = 0; i < NSTATES; i++)
        for (int j = 0; j < NSTATES; j++)
            if (!same_state(md_merge(s[i], s[j]), md_merge(s[j], s[i]), 0)) ok = 0;
    test_expect(ok, "reference: md_merge is commutative (exactly) on random states", "a != b");

    ok = 1;
    for (int i = 0; i < NSTATES; i++)
        for (int j = 0; j < NSTATES; j++)
            for (int k = 0; k < NSTATES; k += 7) {
                md_state l = md_merge(md_merge(s[i], s[j]), s[k]);
                md_state r = md_merge(s[i], md_merge(s[j], s[k]));
                if (!same_state(l, r, TOL)) ok = 0;
            }
    test_expect(ok, "reference: md_merge is associative (1e-12) on random states", "(a.b).c != a.(b.c)");

    md_state p = md_push(s[5], -INFINITY), q = md_push(id, 3.5), z = md_push(id, -INFINITY);
    test_expect(same_state(p, s[5], 0) && q.m == 3.5 && q.d == 1 && z.m == -INFINITY && z.d == 0,
                "reference: md_push of -inf leaves the state unchanged; x onto the identity gives (x, 1)",
                "got (%g, %g), (%g, %g), (%g, %g)", p.m, p.d, q.m, q.d, z.m, z.d);

    md_state n1 = md_push(s[5], NAN), n2 = md_merge(n1, s[6]), n3 = md_merge(id, n1);
    test_expect(isnan(n1.m) && isnan(n2.m) && isnan(n2.d) && isnan(n3.m),
                "reference: md_push of NaN gives a NaN state, and merging keeps it NaN", "got m %g, %g, %g", n1.m,
                n2.m, n3.m);

    /* The state of a row pushed one by one equals local two-pass (m, d). */
    ok = 1;
    for (int l = 0; l < NLENGTHS && ok; l++) {
        long long n = LENGTHS[l];
        fill_case(INPUT_LARGE, n, 6000 + l);
        md_state a = md_identity();
        double m = -INFINITY, d = 0;
        for (long long j = 0; j < n; j++) a = md_push(a, X[j]), m = X[j] > m ? X[j] : m;
        for (long long j = 0; j < n; j++) d += exp((double)X[j] - m);
        if (a.m != m || !close_to(a.d, d, TOL)) ok = 0;
    }
    test_expect(ok, "reference: pushing a row element by element gives its max and sum of exp(x - max) (1e-12)",
                "differs");
}

int main(void)
{
    test_worked_examples();
    test_naive_equals_stable();
    test_sums_to_one();
    test_variants();
    test_special_values();
    test_scaled();
    test_masked();
    test_logsumexp();
    test_md_algebra();
    test_training();
    return test_exit_status();
}
