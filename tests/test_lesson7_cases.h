/* The cases tests/test_lesson7.cu runs the attention softmax on (one
 * program): reproducible randomness, a case run on the GPU into a
 * poisoned output and checked against its float64 reference on every
 * element (masked outputs exactly 0), and the inputs and masks drawn. */
#ifndef TESTS_TEST_LESSON7_CASES_H
#define TESTS_TEST_LESSON7_CASES_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "inputs.h"
#include "verify.h"
#include "../lessons/07_attention/softmax_attention.h"
#include "../lessons/07_attention/softmax_attention_reference.h"
#include "../tests/test.h"

static int have_gpu; /* set by main: without a GPU every device case is a SKIP */

/* ---- reproducible randomness (splitmix64) --------------------------------- */
static unsigned long long mix(unsigned long long z)
{
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static double unit(unsigned long long seed, unsigned long long i) /* [0, 1) */
{
    return (double)(mix(seed * 0x100000001B3ULL + i) >> 11) / 9007199254740992.0;
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "test_lesson7: out of host memory\n");
        exit(1);
    }
    return p;
}

/* ---- running a case on the GPU ------------------------------------------------
 * x: host, rows x cols (or only `x_floats` of it, see the prefix test).
 * Copies x and the masks to the device, poisons y, runs, copies y back. */
static attn_path run_case(attn_path path, const attn_ref_case *c, const float *x, size_t x_floats,
                          float *y, long long rows, long long cols)
{
    const size_t ny = (size_t)rows * (size_t)cols;
    float *dx, *dy, *dbias = NULL;
    unsigned char *dkeep = NULL;
    CUDA_CHECK(cudaMalloc(&dx, x_floats * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, ny * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, x, x_floats * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, ny * sizeof(float))); /* NaN until written */
    const size_t nm = (size_t)c->mask_rows * (size_t)cols;
    if (c->kind == ATTN_BYTE_MASK) {
        CUDA_CHECK(cudaMalloc(&dkeep, nm));
        CUDA_CHECK(cudaMemcpy(dkeep, c->keep, nm, cudaMemcpyHostToDevice));
    }
    if (c->kind == ATTN_ADD_MASK) {
        CUDA_CHECK(cudaMalloc(&dbias, nm * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(dbias, c->bias, nm * sizeof(float), cudaMemcpyHostToDevice));
    }
    attn_spec spec = {c->kind, (float)c->scale, dkeep, dbias, c->mask_rows};
    attn_path ran = softmax_attention_run(path, &spec, dx, dy, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(y, dy, ny * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    if (dkeep) CUDA_CHECK(cudaFree(dkeep));
    if (dbias) CUDA_CHECK(cudaFree(dbias));
    return ran;
}

/* Every masked position (value -inf) of a row that is not NaN must be
 * exactly 0.0f, not merely below the verifier's 1e-30. Returns the count
 * of those that are not; *checked counts the positions looked at. */
static long long masked_not_zero(const attn_ref_case *c, const float *x, const float *y, long long rows,
                                 long long cols, long long *checked)
{
    long long bad = 0;
    *checked = 0;
    double *want = (double *)xmalloc((size_t)cols * sizeof(double));
    for (long long r = 0; r < rows; r++) {
        attn_ref_row(x + r * cols, want, cols, c);
        if (isnan(want[0])) continue;
        for (long long j = 0; j < cols; j++)
            if (attn_ref_value(c, r, j, x[r * cols + j]) == -INFINITY) {
                (*checked)++;
                if (y[r * cols + j] != 0.0f) bad++;
            }
    }
    free(want);
    return bad;
}

static const attn_path PATHS[] = {ATTN_PATH_REGISTERS, ATTN_PATH_ONLINE};
static const char *path_label(attn_path p) { return p == ATTN_PATH_ONLINE ? "online path" : "registers path"; }

/* Runs case c on x (rows x cols, host) on `path`, checks every element
 * against the reference and every masked output for an exact 0. */
static void check_case(const char *what, attn_path path, const attn_ref_case *c, const float *x,
                       long long rows, long long cols)
{
    char name[512], desc[512];
    if (path == ATTN_PATH_REGISTERS && cols > ATTN_MAX_REGISTER_COLS) return; /* online anyway */
    snprintf(name, sizeof name, "lesson7 %s: %lldx%lld (%s)", what, rows, cols, path_label(path));
    if (!have_gpu) {
        test_skip(name, "no GPU");
        return;
    }
    float *y = (float *)xmalloc((size_t)rows * (size_t)cols * sizeof(float));
    attn_ref_case cc = *c;
    cc.x0 = x;
    cc.cols = cols;
    run_case(path, &cc, x, (size_t)rows * (size_t)cols, y, rows, cols);
    verify_report rep;
    int ok = verify_softmax(x, y, rows, cols, attn_ref_row, &cc, verify_rtol(cols), &rep);
    verify_describe(&rep, desc, sizeof desc);
    long long checked = 0, nonzero = masked_not_zero(&cc, x, y, rows, cols, &checked);
    if (ok && nonzero) {
        test_fail(name, "%lld of %lld masked outputs are not exactly 0", nonzero, checked);
    } else {
        test_expect(ok, name, "%s", desc);
    }
    free(y);
}

/* ---- inputs and masks ------------------------------------------------------- */

typedef enum { IN_NORMAL, IN_LARGE, IN_SPECIAL, IN_NEGINF } in_kind;
static const char *in_name(in_kind k)
{
    switch (k) {
    case IN_LARGE: return "large-magnitude";
    case IN_SPECIAL: return "special-value";
    case IN_NEGINF: return "-inf-holding";
    default: return "normal";
    }
}

static float *make_x(long long rows, long long cols, in_kind k, unsigned long long seed)
{
    float *x = (float *)xmalloc((size_t)rows * (size_t)cols * sizeof(float));
    switch (k) {
    case IN_LARGE: inputs_fill(x, rows, cols, INPUT_LARGE, seed); break;
    case IN_SPECIAL: inputs_fill(x, rows, cols, INPUT_SPECIAL, seed); break;
    default: inputs_fill(x, rows, cols, INPUT_NORMAL, seed); break;
    }
    if (k == IN_NEGINF) /* a third of the scores -inf, never column 0 */
        for (size_t i = 0; i < (size_t)rows * (size_t)cols; i++)
            if (i % (size_t)cols % 3 == 1) x[i] = -INFINITY;
    return x;
}

/* A byte mask: ~70 % kept; mask row 1 keeps nothing (a fully masked row),
 * mask row 2 keeps only its last position. */
static unsigned char *make_keep(long long mrows, long long cols, unsigned long long seed)
{
    unsigned char *m = (unsigned char *)xmalloc((size_t)(mrows * cols));
    for (long long r = 0; r < mrows; r++)
        for (long long j = 0; j < cols; j++) {
            unsigned char keep = unit(seed, (unsigned long long)(r * cols + j)) < 0.7;
            if (r == 1) keep = 0;
            if (r == 2) keep = j == cols - 1;
            /* any nonzero byte keeps, not only 1 */
            m[r * cols + j] = keep ? (unsigned char)(1 + (j % 3) * 100) : 0;
        }
    return m;
}

/* An additive mask: 0 (half), -inf (a quarter), else a bias in [-3, 1];
 * mask row 1 is all -inf (fully masked), mask row 2 an ALiBi-like
 * -0.25 |r - j| slope. */
static float *make_bias(long long mrows, long long cols, unsigned long long seed)
{
    float *b = (float *)xmalloc((size_t)(mrows * cols) * sizeof(float));
    for (long long r = 0; r < mrows; r++)
        for (long long j = 0; j < cols; j++) {
            const double u = unit(seed, (unsigned long long)(r * cols + j));
            float v = u < 0.5 ? 0.0f : u < 0.75 ? -INFINITY : (float)(-3.0 + 16.0 * (u - 0.75));
            if (r == 1) v = -INFINITY;
            if (r == 2) v = -0.25f * (float)llabs(r - j);
            b[r * cols + j] = v;
        }
    return b;
}

#endif
