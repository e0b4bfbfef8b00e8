/* Lesson 9: softmax with 16-bit storage, checked element by element.
 *
 * For each storage type (float16, bfloat16, and float32 through the same
 * entry points) and each entry point (softmax_half_fused, with each of
 * its paths forced, and softmax_half_fastest, with each of lesson 8's
 * paths forced), on rows around every path's boundaries (N = 1 ... 2^20),
 * on views (row strides longer than the row, bases one element past 16
 * bytes: single elements, and lesson 8's peeled rows) and on the special
 * values of docs/special-values.md in 16 bits (rows of only -inf, NaN,
 * +inf, -inf among finite values, 65504 and about 3.39e38, subnormals):
 *
 *   - the input is made in the storage type; the float64 reference runs
 *     on it widened exactly to float (every 16-bit value is a float);
 *   - every element of the output view starts as a NaN pattern, every
 *     element of the buffers outside the views as a marker (x: NaN, so a
 *     stray read poisons a row; y: 0xBEEF / 0xDEADBEEF, which must survive);
 *   - each output element, widened, must be within
 *         atol + (u + r32 (1 + u)) |ref|
 *     of the reference: u is the storage type's rounding of the result
 *     (half an ulp: 2^-11 relative for float16, 2^-8 for bfloat16, 0 for
 *     float32), r32 the float32 arithmetic's error, verify_rtol(cols) as
 *     for lessons 5 and 8, and atol half the spacing of the subnormals
 *     (2^-25 for float16: results below 2^-14 are subnormal, with an
 *     absolute, not relative, spacing of 2^-24; VERIFY_ATOL otherwise);
 *   - a NaN reference needs a NaN output; a NaN output passes nothing else.
 * Then the 16-bit plans: 16-byte vectors, peeled or not, exactly when the
 * rows allow them, and bytes per element counted in 16-bit units. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "f16.h"
#include "harness.h" /* device_sms */
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "../lessons/09_half/softmax_half.h"
#include "../lessons/09_half/half_internal.h" /* half_access */
#include "../tests/test.h"

static int g_have_gpu;

/* ---- elements of any storage type, on the host ----------------------------- */
static float elem_get(const unsigned char *buf, long long i, dtype t)
{
    if (t == DTYPE_F32) {
        float f;
        memcpy(&f, buf + 4 * i, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, buf + 2 * i, 2);
    return t == DTYPE_F16 ? f16_to_float(h) : bf16_to_float(h);
}
static void elem_put_bits(unsigned char *buf, long long i, dtype t, uint32_t bits)
{
    if (t == DTYPE_F32) {
        memcpy(buf + 4 * i, &bits, 4);
    } else {
        const uint16_t h = (uint16_t)bits;
        memcpy(buf + 2 * i, &h, 2);
    }
}
static uint32_t elem_bits(const unsigned char *buf, long long i, dtype t)
{
    if (t == DTYPE_F32) {
        uint32_t u;
        memcpy(&u, buf + 4 * i, 4);
        return u;
    }
    uint16_t h;
    memcpy(&h, buf + 2 * i, 2);
    return h;
}
/* The storage type's value nearest to v (round to nearest even), as bits. */
static uint32_t narrow_bits(float v, dtype t)
{
    return t == DTYPE_F32 ? f32_bits(v) : t == DTYPE_F16 ? f16_from_float(v) : bf16_from_float(v);
}
static float narrow(float v, dtype t)
{
    const uint32_t b = narrow_bits(v, t);
    return t == DTYPE_F32 ? f32_from_bits(b) : t == DTYPE_F16 ? f16_to_float((uint16_t)b) : bf16_to_float((uint16_t)b);
}

#define POISON_NAN 0xFFFFFFFFu  /* a NaN in all three types (low 16 bits: 0xFFFF) */
#define PAD_BITS 0xDEADBEEFu    /* y outside the view (16-bit: 0xBEEF)            */
#define TAIL 9                  /* poisoned elements after the last row          */

/* ---- the entry points ----------------------------------------------------------- */
typedef struct {
    const char *name;
    int fastest; /* 0: softmax_half_fused_run, 1: softmax_half_fastest_run */
    int path;    /* the path forced (0: the dispatcher's choice) */
} entry;

static void run_entry(const entry *e, const void *x, long long ldx, void *y, long long ldy, long long rows,
                      long long cols, dtype t)
{
    if (e->fastest) softmax_half_fastest_run((fastest_path)e->path, x, ldx, y, ldy, rows, cols, t, 0);
    else softmax_half_fused_run((half_fused_path)e->path, x, ldx, y, ldy, rows, cols, t, 0);
}

/* ---- one run: a view of x and y in larger, poisoned buffers ---------------------- */
typedef struct {
    long long rows, cols, ldx, ldy, xoff, yoff; /* offsets in elements from a 256-byte aligned buffer */
} shape;

/* Makes row r's input (cols floats, exactly representable in t). special:
 * 0 normal values; otherwise the special rows of docs/special-values.md. */
static void make_row(float *x, long long n, int special, long long r, dtype t, unsigned long long seed)
{
    inputs_fill(x, 1, n, INPUT_NORMAL, seed + (unsigned long long)r);
    const float big = t == DTYPE_F16 ? f16_to_float(F16_MAX) : t == DTYPE_BF16 ? bf16_to_float(BF16_MAX) : 3.4028235e38f;
    const float tiny = t == DTYPE_F16 ? f16_to_float(0x0001) : t == DTYPE_BF16 ? bf16_to_float(0x0001) : 1e-45f;
    if (special) switch (r % 12) {
        case 0: for (long long j = 0; j < n; j++) x[j] = -INFINITY; break;            /* only -inf: NaN */
        case 1: x[n / 2] = NAN; break;                                                 /* a NaN: NaN */
        case 2: x[n - 1] = INFINITY; break;                                            /* +inf: NaN */
        case 3: for (long long j = 0; j < n; j += 2) x[j] = -INFINITY; break;          /* -inf among finite: 0 */
        case 4: for (long long j = 0; j < n; j++) x[j] = j % 3 ? big : -big; break;    /* the largest finite */
        case 5: for (long long j = 0; j < n; j++) x[j] = tiny * (float)(j % 7); break; /* subnormals: ~1/N */
        case 6: for (long long j = 0; j < n; j++) x[j] = 7.0f; break;                  /* constant: 1/N */
        case 7: for (long long j = 0; j < n; j++) x[j] = j == n - 1 ? -5.0f : -INFINITY; break;
        case 8: x[n - 1] = 20.0f; break;         /* a max only the last thread sees */
        case 9: x[0] = big; break;               /* one huge value: 1 there, 0 elsewhere */
        case 10: for (long long j = 0; j < n; j++) x[j] = -1000.0f - (float)(j % 5); break;
        default: for (long long j = 0; j < n; j++) x[j] *= 8.0f; break; /* wide range */
        }
    for (long long j = 0; j < n; j++) x[j] = narrow(x[j], t);
}

/* Returns 1 on success; desc says what went wrong. */
static int check_run(const entry *e, dtype t, const shape *s, int special, char *desc, size_t len)
{
    const int es = dtype_size(t);
    const long long nx = s->xoff + (s->rows - 1) * s->ldx + s->cols + TAIL;
    const long long ny = s->yoff + (s->rows - 1) * s->ldy + s->cols + TAIL;
    unsigned char *hx = (unsigned char *)malloc((size_t)(nx * es)), *hx_after = (unsigned char *)malloc((size_t)(nx * es));
    unsigned char *hy = (unsigned char *)malloc((size_t)(ny * es));
    float *row = (float *)malloc((size_t)s->cols * sizeof(float));
    double *ref = (double *)malloc((size_t)s->cols * sizeof(double));
    if (!hx || !hx_after || !hy || !row || !ref) {
        fprintf(stderr, "test_lesson9: out of host memory\n");
        exit(1);
    }
    for (long long i = 0; i < nx; i++) elem_put_bits(hx, i, t, POISON_NAN);
    for (long long i = 0; i < ny; i++) elem_put_bits(hy, i, t, PAD_BITS);
    const unsigned long long seed = (unsigned long long)(s->cols * 7 + s->rows + 1000 * special);
    for (long long r = 0; r < s->rows; r++) {
        make_row(row, s->cols, special, r, t, seed);
        for (long long j = 0; j < s->cols; j++) {
            elem_put_bits(hx, s->xoff + r * s->ldx + j, t, narrow_bits(row[j], t));
            elem_put_bits(hy, s->yoff + r * s->ldy + j, t, POISON_NAN);
        }
    }
    unsigned char *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, (size_t)(nx * es)));
    CUDA_CHECK(cudaMalloc(&dy, (size_t)(ny * es)));
    CUDA_CHECK(cudaMemcpy(dx, hx, (size_t)(nx * es), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, hy, (size_t)(ny * es), cudaMemcpyHostToDevice));
    run_entry(e, dx + s->xoff * es, s->ldx, dy + s->yoff * es, s->ldy, s->rows, s->cols, t);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hy, dy, (size_t)(ny * es), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hx_after, dx, (size_t)(nx * es), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));

    int ok = 1;
    /* The text's tolerance: output rounding plus float32 error. */
    const double rtol = verify_rtol_storage(t, verify_rtol(s->cols)), atol = verify_atol_storage(t);
    double max_rel = 0;
    if (memcmp(hx, hx_after, (size_t)(nx * es)) != 0) {
        ok = 0;
        snprintf(desc, len, "the input buffer changed");
    }
    for (long long r = 0; r < s->rows && ok; r++) {
        for (long long j = 0; j < s->cols; j++) row[j] = elem_get(hx, s->xoff + r * s->ldx + j, t); /* exact */
        ref_softmax_row(row, ref, s->cols);
        for (long long j = 0; j < s->cols; j++) {
            const float got = elem_get(hy, s->yoff + r * s->ldy + j, t);
            if (!verify_element_atol(got, ref[j], rtol, atol)) {
                ok = 0;
                snprintf(desc, len, "row %lld col %lld: got %.9g (bits 0x%X), want %.9g (tolerance %.3g + %.3g rel)", r,
                         j, got, elem_bits(hy, s->yoff + r * s->ldy + j, t), ref[j], atol, rtol);
                break;
            }
            if (isfinite(ref[j]) && ref[j] > 1e-30) {
                const double rel = fabs(got - ref[j]) / ref[j];
                if (rel > max_rel) max_rel = rel;
            }
        }
    }
    /* Nothing outside the output view written: every padding element keeps
     * its marker. */
    for (long long i = 0; i < ny && ok; i++) {
        const long long k = i - s->yoff;
        const long long r = k >= 0 ? k / s->ldy : -1, j = k >= 0 ? k % s->ldy : -1;
        const int inside = k >= 0 && r < s->rows && j < s->cols;
        if (!inside && elem_bits(hy, i, t) != (es == 4 ? PAD_BITS : (PAD_BITS & 0xFFFFu))) {
            ok = 0;
            snprintf(desc, len, "wrote y's element %lld outside the view", i - s->yoff);
        }
    }
    if (ok) snprintf(desc, len, "every element within %.3g relative (max %.3g)", rtol, max_rel);
    free(hx);
    free(hx_after);
    free(hy);
    free(row);
    free(ref);
    return ok;
}

static const dtype TYPES[] = {DTYPE_F16, DTYPE_BF16, DTYPE_F32};
#define NTYPES 3

/* make sanitize names its tool (tests/sanitize.sh). Under synccheck,
 * clusters of more than 8 CTAs stop the process, as test_lesson8's
 * synccheck_skips says: 1 where such a check skips synccheck. */
static int synccheck_skips(const entry *e, dtype t, const shape *s, const char *name)
{
    const char *tool = getenv("SOFTMAX_SANITIZE_TOOL");
    if (!tool || strcmp(tool, "synccheck") || !e->fastest) return 0;
    const char *a = (const char *)(uintptr_t)256;
    const long long es = (long long)dtype_size(t);
    const fastest_plan p = softmax_half_fastest_plan((fastest_path)e->path, a + s->xoff * es, s->ldx,
                                                     a + s->yoff * es, s->ldy, s->rows, s->cols, t);
    if (p.cluster <= 8) return 0;
    test_skip(name, "synccheck stops in clusters of more than 8 CTAs (docs/experiments/rows-cluster-push.md); "
                    "make test, memcheck and racecheck run this check");
    return 1;
}

static void check_one(const entry *e, dtype t, const shape *s, int special, const char *what)
{
    char name[512], desc[512];
    snprintf(name, sizeof name, "lesson9 %s %s: %lld x %lld (ldx %lld, ldy %lld, x +%lld, y +%lld elements) %s",
             e->name, dtype_name(t), s->rows, s->cols, s->ldx, s->ldy, s->xoff, s->yoff, what);
    if (!g_have_gpu) {
        test_skip(name, "no GPU");
        return;
    }
    /* make sanitize and make test-asan set SOFTMAX_SANITIZE: rows of 2^20
     * take minutes under the tools, and the shorter rows run the same code. */
    if (s->cols > (1LL << 19) && getenv("SOFTMAX_SANITIZE")) {
        test_skip(name, "left out under make sanitize and make test-asan (slow under the tools)");
        return;
    }
    if (synccheck_skips(e, t, s, name)) return;
    const int ok = check_run(e, t, s, special, desc, sizeof desc);
    test_expect(ok, name, "%s", desc);
}

/* Contiguous rows, aligned, with `rows` rows. */
static shape dense(long long rows, long long cols)
{
    shape s = {rows, cols, cols, cols, 0, 0};
    return s;
}

/* Row lengths around every boundary: 8-element 16-byte vectors, warp and
 * block classes (1024, 16384, 32768), and long rows. */
static const long long LENS[] = {1, 2, 7, 8, 9, 33, 1023, 1024, 1025, 16384, 16385, 32768, 32769};
#define NLENS (int)(sizeof LENS / sizeof LENS[0])

static long long rows_for(long long n) { return n <= 64 ? 37 : n <= 1025 ? 9 : 2; }

static void check_entry(const entry *e, const long long *lens, int nlens, int views, int specials)
{
    for (int ti = 0; ti < NTYPES; ti++) {
        const dtype t = TYPES[ti];
        for (int l = 0; l < nlens; l++) {
            const long long n = lens[l];
            shape s = dense(rows_for(n), n);
            check_one(e, t, &s, 0, "normal");
            if (specials) {
                shape sp = dense(12, n);
                check_one(e, t, &sp, 1,
                          "special rows (only -inf, NaN, +inf, -inf among finite, largest finite, subnormals, ...)");
            }
            if (views && n <= 100003) { /* longer rows: the same code, minutes more on the emulator */
                /* Strides longer than the row; both bases one element past
                 * 16 bytes; x and y misaligned against each other. */
                shape v1 = {rows_for(n), n, n + 3, n + 5, 1, 1};
                shape v2 = {rows_for(n), n, n + 8, n + 8, 1, 1};
                shape v3 = {rows_for(n), n, n + 1, n, 1, 0};
                shape v4 = {rows_for(n), n, n + 3, n + 11, 3, 3};
                const long long pad = (n + 7) / 8 * 8 + 8; /* rows padded to whole 16-byte vectors */
                shape v5 = {rows_for(n), n, pad, pad + 8, 0, 0};
                check_one(e, t, &v1, 0, "view: padded strides, bases one element off");
                check_one(e, t, &v2, 0, "view: strides of whole 16-byte vectors, bases one element off");
                check_one(e, t, &v3, 0, "view: x and y misaligned against each other");
                check_one(e, t, &v4, 0, "view: strides 8 apart, bases 3 elements off (the same cut fits both)");
                check_one(e, t, &v5, 0, "view: aligned rows padded to whole 16-byte vectors");
            }
        }
    }
}

/* Rows of exactly 48 KB in shared memory (12288 floats, 24576 16-bit
 * values; path 2s holds 16-bit rows widened, so 12288 of any type),
 * before any other launch asks for shared memory: 48 KB plus a kernel's
 * static arrays is past what a block gets unasked, and an opt-in lasts
 * for the process, so a longer row earlier would hide a launch that
 * forgot it (common/check.h). */
static void check_shared_48k_first(void)
{
    static const entry fused_e = {"fused, shared memory forced, 48 KB of row first", 0, HALF_FUSED_SHARED};
    static const entry fastest_e = {"fastest, path 2s (shared) forced, 48 KB of row first", 1, FASTEST_SHARED};
    static const long long fused_lens[] = {12288, 24576}, fastest_lens[] = {12288};
    check_entry(&fused_e, fused_lens, 2, 0, 0);
    check_entry(&fastest_e, fastest_lens, 1, 0, 0);
}

static void check_fused(void)
{
    static const entry auto_e = {"fused", 0, HALF_FUSED_AUTO};
    static const entry shared_e = {"fused, shared memory forced", 0, HALF_FUSED_SHARED};
    static const entry chunked_e = {"fused, chunked forced", 0, HALF_FUSED_CHUNKED};
    check_entry(&auto_e, LENS, NLENS, 1, 1);
    static const long long long_lens[] = {65536 + 9, 100003};
    check_entry(&auto_e, long_lens, 2, 0, 1);
    static const long long forced_lens[] = {1, 9, 1025, 40003};
    check_entry(&shared_e, forced_lens, 4, 1, 1);
    check_entry(&chunked_e, forced_lens, 4, 1, 1);
    /* Which access: rows whose x and y start at the same offset from 16
     * bytes are peeled past 256 elements; x and y cut differently are not */
    const char *a = (const char *)(uintptr_t)256; /* an aligned address, never dereferenced */
    for (int ti = 0; ti < NTYPES; ti++) {
        const dtype t = TYPES[ti];
        const int es = dtype_size(t);
        const int p1 = half_access(a, 50257, a, 50257, 2048, 50257, t), p2 = half_access(a, 4097, a, 4097, 64, 4097, t);
        const int p3 = half_access(a + es, 4100, a + es, 4100, 64, 4099, t), p4 = half_access(a, 255, a, 255, 64, 255, t);
        const int p5 = half_access(a + es, 4097, a, 4097, 64, 4097, t);
        char name[200];
        snprintf(name, sizeof name,
                 "lesson9 fused peels %s rows of 50257 and 4097, and rows one element past 16 bytes, not rows of 255 "
                 "nor x and y cut differently",
                 dtype_name(t));
        test_expect(p1 == HALF_PEELED && p2 == HALF_PEELED && p3 == HALF_PEELED && p4 != HALF_PEELED &&
                        p5 != HALF_PEELED,
                    name, "accesses %d %d %d %d %d", p1, p2, p3, p4, p5);
    }
    /* Which path the dispatcher takes: registers to 32768, shared memory
     * (the row in its storage type) beyond, chunked past that. */
    if (g_have_gpu) {
        const long long cap16 = half_shared_capacity(DTYPE_F16), cap32 = half_shared_capacity(DTYPE_F32);
        test_expect(cap16 >= 2 * cap32 - 8 && cap32 > 32768,
                    "lesson9 fused: a 16-bit row in shared memory takes twice the elements of a float row",
                    "capacity %lld (f16) against %lld (f32)", cap16, cap32);
    }
}

/* Forcing path p on this shape runs p (else the test would check another
 * path): 1, or a FAIL line and 0. */
static int fastest_runs(fastest_path p, dtype t, long long rows, long long cols, const char *what)
{
    const void *a = (const void *)(uintptr_t)256;
    const fastest_plan plan = softmax_half_fastest_plan(p, a, cols, a, cols, rows, cols, t);
    if (plan.path == p) return 1;
    if ((p == FASTEST_CLUSTER || p == FASTEST_BULK) && !softmax_fastest_has_clusters()) {
        test_skip(what, "this device has no thread-block clusters (sm_90+ only)");
        return 0;
    }
    test_fail(what, "forcing %s on %s %lld x %lld ran %s", fastest_path_name(p), dtype_name(t), rows, cols,
              fastest_path_name(plan.path));
    return 0;
}

static void check_fastest(void)
{
    static const entry auto_e = {"fastest", 1, FASTEST_AUTO};
    check_entry(&auto_e, LENS, NLENS, 1, 1);
    static const long long long_lens[] = {65536 + 8, 100003};
    check_entry(&auto_e, long_lens, 2, 1, 1);
    static const long long longest[] = {1LL << 20};
    check_entry(&auto_e, longest, 1, 0, 0);

    /* Each 16-bit path forced, around its boundaries. */
    static const fastest_path paths[] = {FASTEST_WARP, FASTEST_BLOCK, FASTEST_SHARED, FASTEST_CLUSTER,
                                         FASTEST_GRID, FASTEST_SPLIT,  FASTEST_BULK};
    static const char *names[] = {"fastest, path 1 (warp) forced",    "fastest, path 2 (block) forced",
                                  "fastest, path 2s (shared) forced", "fastest, path 3 (cluster) forced",
                                  "fastest, path 3g (grid) forced",   "fastest, path 4 (split) forced",
                                  "fastest, path 3b (bulk) forced"};
    /* Path 3b: whole 8-element vectors in 2 ... 8 CTAs of at most 64 KB:
     * 32776 just past one piece, 100000 on 4 CTAs (2^18 below); peeled
     * (N % 8 != 0, heads and tails of 0 ... 7): 32777, 50257, 100003. */
    static const long long lens[7][8] = {
        {1, 7, 8, 9, 33, 129, 1000, 1024},
        {1, 9, 1025, 16385, 20480, 20483, 32768, 0},
        {1, 9, 1025, 40003, 0},
        {1, 9, 16387, 65544, 100003, 0},
        {1, 9, 16387, 65544, 100003, 0},
        {1, 9, 1000, 65537, 100003, (1LL << 20) + 3, 0},
        {32776, 32777, 50257, 65536, 100000, 100003, 0},
    };
    for (int p = 0; p < 7; p++) {
        int n = 0;
        while (n < 8 && lens[p][n]) n++;
        if (g_have_gpu) {
            int ok = 1;
            for (int i = 0; i < n && ok; i++)
                for (int ti = 0; ti < NTYPES && ok; ti++)
                    ok = fastest_runs(paths[p], TYPES[ti], rows_for(lens[p][i]), lens[p][i], names[p]);
            if (!ok) continue;
        }
        const entry e = {names[p], 1, paths[p]};
        check_entry(&e, lens[p], n, 1, lens[p][n - 1] <= 100003);
    }
    /* Path 3's held class (path 3 forced on rows that fill 15/16 or all of
     * 2, 4, 8 pieces of 16384, or past 8 pieces the classes of
     * check_held_classes_plan): each piece in registers as loaded, the
     * last vectors of a part-filled piece padded and not stored (32000,
     * 61440, 131064: a short last piece; 143360, 151936, 180224, 212992,
     * 250000, 360448, 450000 fill 8 or 16 pieces in part, 163840, 196608,
     * 262144, 393216, 2^19 whole); contiguous rows of odd length peeled
     * (32769, 65537, 128257, 151937, 196609, 262145, 2^19 - 7: the head and
     * tail elements held by the first CTA); views cut apart take path 3's
     * classes. */
    static const entry held_e = {"fastest, path 3's held class (path 3 forced on rows filling 2, 4, 8 pieces of "
                                 "16384, or 15/16 of them, or past 8 pieces the first class that holds them)",
                                 1, FASTEST_CLUSTER};
    static const long long held_lens[] = {32000,  32768,  32769,  61440,  65536,  65537,  128257, 131064,
                                          131072, 143360, 151936, 151937, 163840, 180224, 196608, 196609,
                                          212992, 250000, 262144, 262145, 360448, 393216, 450000, (1 << 19) - 7,
                                          1 << 19};
    check_entry(&held_e, held_lens, (int)(sizeof held_lens / sizeof held_lens[0]), 1, 1);
    /* Path 3b's longest 16-bit rows: 8 CTAs of 64 KB. */
    static const entry bulk_e = {"fastest, path 3b (bulk) forced", 1, FASTEST_BULK};
    static const long long bulk_longest[] = {1LL << 18};
    if (!g_have_gpu || fastest_runs(FASTEST_BULK, DTYPE_F16, rows_for(1LL << 18), 1LL << 18, bulk_e.name))
        check_entry(&bulk_e, bulk_longest, 1, 0, 0);
    /* Past a cluster's 8 CTAs, path 3b's CTAs meet through global memory:
     * 9 CTAs of whole vectors (2^18 + 8, with special rows), and peeled
     * (2^18 + 11: its body in 9). */
    static const long long past_aligned[] = {(1LL << 18) + 8}, past_peeled[] = {(1LL << 18) + 11};
    if (!g_have_gpu || fastest_runs(FASTEST_BULK, DTYPE_F16, rows_for(past_peeled[0]), past_peeled[0], bulk_e.name)) {
        check_entry(&bulk_e, past_aligned, 1, 0, 1);
        check_entry(&bulk_e, past_peeled, 1, 0, 0);
    }
}

/* The 16-bit plan: the paths that take 16-bit rows, 16-byte vectors
 * whenever the rows allow them, bytes per element in 16-bit units. */
static void check_fastest_plan(void)
{
    if (!g_have_gpu) {
        test_skip("lesson9 fastest plans", "no GPU");
        return;
    }
    static const struct {
        long long rows, cols;
    } C[] = {{1 << 16, 32}, {1 << 14, 1024}, {4096, 4096}, {2048, 16384}, {1024, 32768},
             {16, 32768},   {64, 65536},     {64, 1 << 20}, {1, 1 << 24}};
    const char *a = (const char *)(uintptr_t)256;
    for (int ti = 0; ti < 2; ti++) {
        const dtype t = TYPES[ti];
        for (int i = 0; i < (int)(sizeof C / sizeof C[0]); i++) {
            char name[256];
            const long long r = C[i].rows, n = C[i].cols;
            const fastest_plan p = softmax_half_fastest_plan(FASTEST_AUTO, a, n, a, n, r, n, t);
            const int takes = p.path > FASTEST_AUTO && p.path < FASTEST_NPATHS;
            const double bytes = p.path == FASTEST_SPLIT ? 6.0 : 4.0;
            snprintf(name, sizeof name, "lesson9 fastest %s plan for %lld x %lld: 16-byte vectors, %g bytes per element",
                     dtype_name(t), r, n, bytes);
            test_expect(takes && p.vec4 && p.bytes_per_elem == bytes && (p.segment % 8 == 0),
                        name, "%s, vec4 %d, %g bytes per element, segment %lld", fastest_path_name(p.path), p.vec4,
                        p.bytes_per_elem, p.segment);
        }
        /* Path 3b (bulk copies) for aligned and peeled long rows: twice a
         * float row's elements per 64 KB piece, in clusters of up to 8 CTAs
         * (2^18), past them in CTAs meeting through global memory (2^19:
         * 16, 2^20: 32) while a row's CTAs fit on the GPU at once (not
         * past 4 of 64 KB an SM); not for x and y misaligned against each
         * other. */
        if (softmax_fastest_has_clusters()) {
            const fastest_plan b1 = softmax_half_fastest_plan(FASTEST_AUTO, a, 65536, a, 65536, 1024, 65536, t);
            const fastest_plan b2 = softmax_half_fastest_plan(FASTEST_AUTO, a, 1 << 18, a, 1 << 18, 256, 1 << 18, t);
            const fastest_plan b5 = softmax_half_fastest_plan(FASTEST_AUTO, a, 1 << 19, a, 1 << 19, 128, 1 << 19, t);
            const fastest_plan b3 = softmax_half_fastest_plan(FASTEST_AUTO, a + 2, 65536, a + 2, 65536, 1024, 65536, t);
            const fastest_plan b4 = softmax_half_fastest_plan(FASTEST_AUTO, a, 1 << 20, a, 1 << 20, 64, 1 << 20, t);
            const fastest_plan b6 = softmax_half_fastest_plan(FASTEST_AUTO, a + 2, 65536, a + 4, 65536, 1024, 65536, t);
            /* peeled, sized by its body: 262145 elements in 8 pieces of 32768 */
            const fastest_plan b7 = softmax_half_fastest_plan(FASTEST_AUTO, a, 262145, a, 262145, 255, 262145, t);
            const long long most = (4LL * device_sms() + 1) * 32768; /* more 64 KB CTAs than the GPU holds */
            const fastest_plan b8 = softmax_half_fastest_plan(FASTEST_AUTO, a, most, a, most, 1, most, t);
            char bname[400];
            snprintf(bname, sizeof bname,
                     "lesson9 fastest %s plan: bulk path for aligned and peeled rows of 2^16 (a cluster of 2) to 2^18 "
                     "(8) and 2^18 + 1 peeled (8: its body), 2^19 and 2^20 (16 and 32 CTAs through global memory), "
                     "each but 2^20 path 3's held class where DRAM outpaces it (below: 2^18 in 8 pieces of 32768, "
                     "2^19 in 16), not for x and y misaligned against each other or rows of more CTAs than the GPU "
                     "holds",
                     dtype_name(t));
            /* where DRAM outpaces path 3b: the held class, 4 CTAs of 16384, 8 of 32768 (16 vectors a
             * thread) where 16 of 16384 would do, 16 of 32768 past them */
            const int dram = softmax_fastest_held_dram();
            const int bulk1 = dram ? b1.held && b1.cluster == 4 && b1.segment == 16384
                                   : b1.path == FASTEST_BULK && b1.cluster == 2 && !b1.splits &&
                                         b1.segment == 32768 && b1.smem_bytes == 65536;
            const int bulk2 = dram ? b2.held && b2.cluster == 8 && b2.segment == 32768 && b2.floats_per_thread == 128
                                   : b2.path == FASTEST_BULK && b2.cluster == 8 && !b2.splits;
            const int bulk3 = dram ? b3.held && b3.peel && b3.cluster == 4 : b3.path == FASTEST_BULK && b3.peel;
            const int bulk5 = dram ? b5.held && b5.cluster == 16 && b5.segment == 32768 && b5.floats_per_thread == 128
                                   : b5.path == FASTEST_BULK && b5.splits == 16 && b5.segment == 32768 &&
                                         b5.smem_bytes == 65536;
            const int bulk7 = dram ? b7.held && b7.peel && b7.cluster == 8 && b7.segment == 32768
                                   : b7.path == FASTEST_BULK && b7.peel && b7.cluster == 8 && b7.segment == 32768;
            test_expect(bulk1 && bulk2 && bulk3 && b4.path == FASTEST_BULK && b4.splits == 32 && b4.cluster == 1 &&
                            bulk5 && b6.path != FASTEST_BULK && bulk7 && b8.path != FASTEST_BULK,
                        bname,
                        "2^16: %s, %d CTAs x %lld, %lld bytes; 2^18: %s, %d CTAs; bases + 2 bytes: %s (peel %d); "
                        "2^19: %s, %lld pieces x %lld; 2^20: %s, %lld pieces; x + 2 and y + 4 bytes: %s; "
                        "2^18 + 1: %s, peel %d, %d CTAs x %lld; %lld: %s",
                        fastest_path_name(b1.path), b1.cluster, b1.segment, b1.smem_bytes, fastest_path_name(b2.path),
                        b2.cluster, fastest_path_name(b3.path), b3.peel, fastest_path_name(b5.path), b5.splits,
                        b5.segment, fastest_path_name(b4.path), b4.splits, fastest_path_name(b6.path),
                        fastest_path_name(b7.path), b7.peel, b7.cluster, b7.segment, most, fastest_path_name(b8.path));
        }
        /* Path 3's held class: aligned rows that fill 15/16 or all of 2, 4,
         * 8 pieces of 16384 (8 vectors a thread) or 8 of 32768 (16 vectors:
         * 2^18, not 16 pieces of 16384) when path 3 is forced, and by the
         * dispatcher (2048 x 32768, 1024 x 65536, 512 x 131072, 256 x 2^18)
         * where DRAM outpaces path 3b; 256 threads a CTA, nothing in shared
         * memory; not 65544 or 3 x 16384 (half and 3/4 of their pieces),
         * 2048 x 50304 (3/4). Peeled rows by their body (65536 two
         * elements in, 1024 x 128257 under AUTO), not rows whose x and y
         * are cut apart. */
        if (softmax_fastest_has_clusters()) {
            char hname[400];
            int ok = 1;
            for (int c = 2; c <= 16; c *= 2) {
                const long long n = c * 16384LL, seg = c == 16 ? 32768 : 16384;
                const fastest_plan h = softmax_half_fastest_plan(FASTEST_CLUSTER, a, n, a, n, 1024, n, t);
                ok &= h.path == FASTEST_CLUSTER && h.held && h.cluster == n / seg && h.block == 256 &&
                      h.segment == seg && h.floats_per_thread == seg / 256 && h.smem_bytes == 0 && h.vec4 && !h.peel;
            }
            const fastest_plan p2 = softmax_half_fastest_plan(FASTEST_CLUSTER, a, 32000, a, 32000, 1024, 32000, t);
            const fastest_plan p8 = softmax_half_fastest_plan(FASTEST_CLUSTER, a, 128256, a, 128256, 64, 128256, t);
            ok &= p2.held && p2.cluster == 2 && p2.segment == 16000 && p8.held && p8.cluster == 8 &&
                  p8.segment == 16032;
            const int dram = softmax_fastest_held_dram();
            static const long long auto_rc[4][2] = {{2048, 32768}, {1024, 65536}, {512, 131072}, {256, 1 << 18}};
            int auto_ok = 1, auto_held = 0;
            for (int i = 0; i < 4; i++) {
                const long long r = auto_rc[i][0], n = auto_rc[i][1];
                const fastest_plan h = softmax_half_fastest_plan(FASTEST_AUTO, a, n, a, n, r, n, t);
                auto_held += h.held;
                auto_ok &= dram ? h.held && h.cluster == (i < 3 ? n / 16384 : 8)
                                : !h.held && h.path == (i ? FASTEST_BULK : FASTEST_BLOCK);
            }
            const fastest_plan o = softmax_half_fastest_plan(FASTEST_CLUSTER, a, 65544, a, 65544, 1024, 65544, t);
            const fastest_plan e =
                softmax_half_fastest_plan(FASTEST_CLUSTER, a + 2, 65536, a + 2, 65536, 1024, 65536, t);
            const fastest_plan q =
                softmax_half_fastest_plan(FASTEST_CLUSTER, a + 2, 65536, a + 4, 65536, 1024, 65536, t);
            const fastest_plan u = softmax_half_fastest_plan(FASTEST_AUTO, a, 128257, a, 128257, 1024, 128257, t);
            const int peel_ok = e.held && e.peel && e.cluster == 4 && !q.held &&
                                (dram ? u.held && u.peel && u.cluster == 8 : !u.held);
            const fastest_plan f = softmax_half_fastest_plan(FASTEST_CLUSTER, a, 49152, a, 49152, 1024, 49152, t);
            const fastest_plan v = softmax_half_fastest_plan(FASTEST_AUTO, a, 50304, a, 50304, 2048, 50304, t);
            snprintf(hname, sizeof hname,
                     "lesson9 fastest %s plan: path 3 forced on aligned rows filling 2, 4, 8 pieces of 16384 (or "
                     "15/16 of them: 32000, 128256) or 8 of 32768 (2^18) takes its held class (256 threads a CTA, no "
                     "shared memory), and "
                     "so does the dispatcher where DRAM delivers 16 bytes per SM a cycle; peeled rows by their body "
                     "(65536 two elements in, 1024 x 128257); not 65544, 3 x 16384, 50304 or x and y cut apart",
                     dtype_name(t));
            test_expect(ok && auto_ok && peel_ok && !o.held && !f.held && !v.held, hname,
                        "forced: %s; 32000: %d CTAs of %lld, 128256: %d CTAs of %lld; DRAM fast %d: %d of 4 rows "
                        "held under AUTO; held: 65544 %d, peeled 65536 %d (peel %d, %d CTAs), cut apart %d, 128257 "
                        "%d (peel %d, %d CTAs), 3 x 16384 %d, 50304 %d",
                        ok ? "held" : "NOT held", p2.cluster, p2.segment, p8.cluster, p8.segment, dram, auto_held,
                        o.held, e.held, e.peel, e.cluster, q.held, u.held, u.peel, u.cluster, f.held, v.held);
        }
        /* 16-byte vectors throughout when every row starts 16-byte aligned;
         * peeled (0-7 head and tail elements one at a time) when each row
         * of x starts where the same row of y does and a row has 16
         * threads for the 14 extras; one element per access otherwise. */
        const fastest_plan pad = softmax_half_fastest_plan(FASTEST_AUTO, a, 1032, a, 1040, 64, 1024, t);
        const fastest_plan odd = softmax_half_fastest_plan(FASTEST_AUTO, a, 1025, a, 1025, 64, 1025, t);
        const fastest_plan off = softmax_half_fastest_plan(FASTEST_AUTO, a + 2, 1024, a + 2, 1024, 64, 1024, t);
        const fastest_plan lng = softmax_half_fastest_plan(FASTEST_AUTO, a + 6, 100003, a + 6, 100003, 64, 100003, t);
        const fastest_plan rel = softmax_half_fastest_plan(FASTEST_AUTO, a + 2, 1024, a, 1024, 64, 1024, t);
        const fastest_plan str = softmax_half_fastest_plan(FASTEST_AUTO, a, 1025, a, 1027, 64, 1024, t);
        const fastest_plan few = softmax_half_fastest_plan(FASTEST_AUTO, a, 33, a, 33, 64, 33, t); /* 4 lanes */
        char name[256];
        snprintf(name, sizeof name,
                 "lesson9 fastest %s plan: 16-byte vectors when rows are aligned, peeled when x and y rows share "
                 "their misalignment, single elements otherwise",
                 dtype_name(t));
        test_expect(pad.vec4 && !pad.peel && odd.peel && off.peel && lng.peel && !rel.vec4 && !str.vec4 && !few.vec4,
                    name,
                    "vec4/peel: aligned %d/%d (1/0), N = 1025 %d/%d (1/1), bases + 2 bytes %d/%d (1/1), N = 100003 "
                    "bases + 6 bytes %d/%d (1/1), x + 2 bytes only %d (0), strides 1025/1027 %d (0), N = 33 %d (0)",
                    pad.vec4, pad.peel, odd.vec4, odd.peel, off.vec4, off.peel, lng.vec4, lng.peel, rel.vec4,
                    str.vec4, few.vec4);
    }
}

/* Path 3's held class, 16-bit rows past 8 pieces of 16384 (path 3
 * forced): the first class of FX_HELD16_CLASSES that holds them, {pieces,
 * elements a thread (vectors x 8), fill}: 8 of 80 to 14/16 (143360 ...
 * 163840, 151936 Qwen's vocabulary), 8 of 96 to 14/16 (172032 ...
 * 196608), 8 of 128 to 12/16 (196616 ... 2^18), 16 of 96 to 14/16 (344064
 * ... 393216), 16 of 128 to 12/16 (393224 ... 2^19); a peeled row by its
 * body (151937); none a vector short of them (143352, 172024, 344056) nor
 * past 2^19. The dispatcher takes the class at 512 x 151936 where DRAM
 * delivers 16 bytes per SM a cycle. */
static void check_held_classes_plan(void)
{
    if (!g_have_gpu || !softmax_fastest_has_clusters()) {
        test_skip("lesson9 held plan of 16-bit rows past 8 pieces", g_have_gpu ? "no clusters" : "no GPU");
        return;
    }
    static const struct {
        long long cols;
        int cluster, segment, per_thread; /* cluster 0: not held */
    } H[] = {{143352, 0, 0, 0},          {143360, 8, 17920, 80},     {151936, 8, 18992, 80},
             {163840, 8, 20480, 80},     {172024, 0, 0, 0},          {172032, 8, 21504, 96},
             {196608, 8, 24576, 96},     {196616, 8, 24584, 128},    {262144, 8, 32768, 128},
             {344056, 0, 0, 0},          {344064, 16, 21504, 96},    {393216, 16, 24576, 96},
             {450000, 16, 28128, 128},   {524288, 16, 32768, 128},   {524296, 0, 0, 0}};
    const char *a = (const char *)(uintptr_t)256;
    const int dram = softmax_fastest_held_dram();
    for (int ti = 0; ti < 2; ti++) {
        const dtype t = TYPES[ti];
        int bad = -1;
        fastest_plan q = {};
        for (int i = 0; i < (int)(sizeof H / sizeof H[0]) && bad < 0; i++) {
            const long long n = H[i].cols;
            q = softmax_half_fastest_plan(FASTEST_CLUSTER, a, n, a, n, 512, n, t);
            if (H[i].cluster ? !q.held || q.peel || q.cluster != H[i].cluster || q.segment != H[i].segment ||
                                   q.floats_per_thread != H[i].per_thread
                             : q.held)
                bad = i;
        }
        const fastest_plan e = softmax_half_fastest_plan(FASTEST_CLUSTER, a, 151937, a, 151937, 512, 151937, t);
        const fastest_plan u = softmax_half_fastest_plan(FASTEST_AUTO, a, 151936, a, 151936, 512, 151936, t);
        const int ok = bad < 0 && e.held && e.peel && e.cluster == 8 && e.segment == 18992 &&
                       (dram ? u.held && u.cluster == 8 : !u.held);
        char name[300];
        snprintf(name, sizeof name,
                 "lesson9 fastest %s plan: path 3 forced on rows past 8 pieces takes the first held class that "
                 "holds them (8 of 80, 96 or 128 elements a thread, then 16 of 96 or 128; 151937 peeled), none "
                 "short of them or past 2^19; the dispatcher at 512 x 151936 where DRAM delivers 16 bytes per SM a "
                 "cycle",
                 dtype_name(t));
        test_expect(ok, name,
                    "first wrong: %lld (held %d, peel %d, %d CTAs of %lld, %d a thread); 151937: held %d, peel %d, "
                    "%d CTAs of %lld; DRAM fast %d, 512 x 151936 held %d",
                    bad < 0 ? 0 : H[bad].cols, q.held, q.peel, q.cluster, q.segment, q.floats_per_thread, e.held,
                    e.peel, e.cluster, e.segment, dram, u.held);
    }
}

int main(void)
{
    int count = 0;
    g_have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError(); /* clear the no-device error, if any */
    check_shared_48k_first();
    check_fused();
    check_fastest();
    check_fastest_plan();
    check_held_classes_plan();
    if (g_have_gpu) softmax_fastest_release(); /* memcheck's leak check: nothing left */
    return test_exit_status();
}
