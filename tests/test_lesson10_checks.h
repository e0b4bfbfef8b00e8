/* How tests/test_lesson10.cu runs lesson 10's kernels and checks them
 * (one program, with tests/test_lesson10_classifier.h): device buffers,
 * one check per kernel against the float64 reference with the rules of
 * lessons/10_training/train_check.h, outputs poisoned with NaN first, the
 * workspace's sync words left at 0, and the special rows the classifier
 * is run on. */
#ifndef TESTS_TEST_LESSON10_CHECKS_H
#define TESTS_TEST_LESSON10_CHECKS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "f16.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "../lessons/10_training/training.h"
#include "../lessons/10_training/train_engine.h" /* classifier_plan16: the plan for logits at a pointer */
#include "train_check.h"
#include "../tests/test.h"

/* ---- helpers ------------------------------------------------------------- */

static void *dev_alloc(size_t bytes)
{
    void *p;
    CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 4));
    return p;
}

static void *dev_copy_of(const void *h, size_t bytes)
{
    void *p = dev_alloc(bytes);
    CUDA_CHECK(cudaMemcpy(p, h, bytes, cudaMemcpyHostToDevice));
    return p;
}

static void *dev_poisoned(size_t bytes)
{
    void *p = dev_alloc(bytes);
    CUDA_CHECK(cudaMemset(p, 0xFF, bytes ? bytes : 4)); /* NaN until written */
    return p;
}

static void to_host(void *h, const void *d, size_t bytes)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
}

/* Fails `name` if a launch left a synchronisation word of the workspace
 * (a counter, a loss slot) other than 0: the next launch would start
 * from it (training.h, train_sync_words). Silent when they are all 0. */
static void check_sync_words_zero(const char *name)
{
    long long count;
    const unsigned *d = train_sync_words(&count);
    if (!d) return;
    unsigned *h = (unsigned *)malloc((size_t)count * sizeof(unsigned));
    to_host(h, d, (size_t)count * sizeof(unsigned));
    long long first = -1;
    for (long long i = 0; i < count && first < 0; i++)
        if (h[i]) first = i;
    free(h);
    if (first >= 0) {
        char after[400];
        snprintf(after, sizeof after, "the workspace's sync words are left at 0 after: %s", name);
        test_fail(after, "word %lld of %lld is not", first, count);
    }
}

/* PASS, or FAIL with the first bad element; then the sync words, which
 * every kernel of the check must have left at 0. */
static void report(const char *name, const train_report *r, long long rows, long long cols)
{
    char desc[600];
    train_describe(r, rows, cols, desc, sizeof desc);
    if (r->bad == 0 && r->checked > 0) test_pass(name);
    else test_fail(name, "%s", r->checked ? desc : "nothing was compared");
    check_sync_words_zero(name);
}

/* Reproducible targets: row i gets a column from a fixed hash, every
 * `ignore_every`-th row (if > 0) the ignore index. */
static void make_targets(int *t, long long rows, long long cols, unsigned long long seed, int ignore_every,
                         int ignore_index)
{
    unsigned long long z = seed * 0x9E3779B97F4A7C15ULL + 12345;
    for (long long i = 0; i < rows; i++) {
        z = z * 6364136223846793005ULL + 1442695040888963407ULL;
        t[i] = (int)((z >> 33) % (unsigned long long)cols);
        if (ignore_every > 0 && i % ignore_every == ignore_every - 1) t[i] = ignore_index;
    }
}

/* ---- the four kernels against the reference, one shape ------------------- */

/* softmax_backward on y = softmax(x) (the float64 softmax rounded to float,
 * what a forward gives) and dy; dx poisoned. inplace: dx written over dy. */
static void check_backward(const char *name, const float *x, const float *dyh, long long rows, long long cols,
                           int inplace)
{
    const size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(float);
    float *y = (float *)malloc(bytes), *dx = (float *)malloc(bytes);
    train_forward_rows(ref_softmax_row, x, y, rows, cols);
    float *dyv = (float *)dev_copy_of(y, bytes), *ddy = (float *)dev_copy_of(dyh, bytes);
    float *ddx = inplace ? ddy : (float *)dev_poisoned(bytes);
    softmax_backward(dyv, ddy, ddx, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    to_host(dx, ddx, bytes);
    train_report rep;
    train_report_init(&rep);
    train_check_backward(y, dyh, dx, rows, cols, &rep);
    report(name, &rep, rows, cols);
    CUDA_CHECK(cudaFree(dyv));
    CUDA_CHECK(cudaFree(ddy));
    if (!inplace) CUDA_CHECK(cudaFree(ddx));
    free(y);
    free(dx);
}

static void check_log_softmax(const char *name, const float *x, long long rows, long long cols)
{
    const size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    float *out = (float *)malloc(bytes), *dx = (float *)dev_copy_of(x, bytes), *dout = (float *)dev_poisoned(bytes);
    log_softmax_forward(dx, dout, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    to_host(out, dout, bytes);
    train_report rep;
    train_report_init(&rep);
    train_check_log_softmax(x, out, rows, cols, &rep);
    report(name, &rep, rows, cols);
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dout));
    free(out);
}

#define RUN_PAD 24 /* elements after the logits (NaN) that no kernel may write; before them, the offset's */

/* Runs cross_entropy_forward on logits `off` elements past a 256-byte
 * aligned allocation, NaN around them; the M losses on the host
 * (malloc'd), the output poisoned with NaN first. *same (unless NULL): the
 * whole buffer as it was (the loss writes no element). */
static float *run_loss_at(const float *x, const int *targets, long long rows, long long cols, long long off,
                          int ignore_index, int *same)
{
    const size_t n = (size_t)rows * (size_t)cols, bytes = ((size_t)off + n + RUN_PAD) * sizeof(float);
    float *h = (float *)malloc(bytes), *after = (float *)malloc(bytes), *loss = (float *)malloc(rows * sizeof(float));
    memset(h, 0xFF, bytes);
    memcpy(h + off, x, n * sizeof(float));
    float *d = (float *)dev_copy_of(h, bytes), *dloss = (float *)dev_poisoned(rows * sizeof(float));
    int *dt = (int *)dev_copy_of(targets, rows * sizeof(int));
    cross_entropy_forward(d + off, dt, dloss, rows, cols, ignore_index, 0);
    CUDA_CHECK_LAUNCH();
    to_host(after, d, bytes);
    to_host(loss, dloss, rows * sizeof(float));
    if (same) *same = memcmp(after, h, bytes) == 0;
    CUDA_CHECK(cudaFree(d));
    CUDA_CHECK(cudaFree(dloss));
    CUDA_CHECK(cudaFree(dt));
    free(h);
    free(after);
    return loss;
}

static float *run_loss(const float *x, const int *targets, long long rows, long long cols, int ignore_index)
{
    return run_loss_at(x, targets, rows, cols, 0, ignore_index, NULL);
}

static void check_loss(const char *name, const float *x, const int *targets, long long rows, long long cols,
                       int ignore_index)
{
    float *loss = run_loss(x, targets, rows, cols, ignore_index);
    train_report rep;
    train_report_init(&rep);
    train_check_loss(x, targets, loss, rows, cols, ignore_index, &rep);
    report(name, &rep, rows, cols);
    free(loss);
}

/* The fused classifier's outputs on the host, widened to float: xw the
 * logits the kernel read, g its gradient, losses (M) and loss (1). */
typedef struct {
    float *xw, *g, *losses, loss;
} classifier_out;

static void classifier_out_free(classifier_out *o)
{
    free(o->xw);
    free(o->g);
    free(o->losses);
}

/* Runs the fused classifier in storage type st on logits `off` elements
 * past a 256-byte aligned allocation, NaN around them: the logits (made in
 * float32, rounded to st; the reference runs on them widened) overwritten
 * by the gradient; losses and the reduced loss poisoned first. Unless
 * NULL, *plan: the plan for those logits; *around_ok: the elements around
 * them as they were. */
static classifier_out run_classifier_at(const float *x32, const int *targets, long long rows, long long cols,
                                        long long off, int ignore_index, train_reduction red, dtype st,
                                        fastest_plan *plan, int *around_ok)
{
    const size_t n = (size_t)rows * (size_t)cols, sz = (size_t)dtype_size(st), all = (size_t)off + n + RUN_PAD;
    classifier_out o;
    unsigned char *h = (unsigned char *)malloc(all * sz), *after = (unsigned char *)malloc(all * sz);
    o.xw = (float *)malloc(n * sizeof(float));
    o.g = (float *)malloc(n * sizeof(float));
    o.losses = (float *)malloc(rows * sizeof(float));
    memset(h, 0xFF, all * sz); /* NaN in every type */
    storage_narrow(x32, h + off * sz, n, st);
    storage_widen(h + off * sz, o.xw, n, st); /* what the kernel reads, exactly */
    unsigned char *d = (unsigned char *)dev_copy_of(h, all * sz);
    int *dt = (int *)dev_copy_of(targets, rows * sizeof(int));
    float *dlosses = (float *)dev_poisoned(rows * sizeof(float)), *dloss = (float *)dev_poisoned(sizeof(float));
    if (plan) *plan = classifier_plan16(d + off * sz, rows, cols, st);
    classifier_fused_typed(d + off * sz, dt, dlosses, dloss, rows, cols, ignore_index, red, st, 0);
    CUDA_CHECK_LAUNCH();
    to_host(after, d, all * sz);
    if (around_ok)
        *around_ok = memcmp(after, h, (size_t)off * sz) == 0 &&
                     memcmp(after + (off + n) * sz, h + (off + n) * sz, RUN_PAD * sz) == 0;
    storage_widen(after + off * sz, o.g, n, st);
    to_host(o.losses, dlosses, rows * sizeof(float));
    to_host(&o.loss, dloss, sizeof(float));
    CUDA_CHECK(cudaFree(d));
    CUDA_CHECK(cudaFree(dt));
    CUDA_CHECK(cudaFree(dlosses));
    CUDA_CHECK(cudaFree(dloss));
    free(h);
    free(after);
    return o;
}

static classifier_out run_classifier(const float *x32, const int *targets, long long rows, long long cols,
                                     int ignore_index, train_reduction red, dtype st)
{
    return run_classifier_at(x32, targets, rows, cols, 0, ignore_index, red, st, NULL, NULL);
}

/* The fused classifier against the reference on every element; reduction
 * none leaves the reduced loss as poisoned. */
static const char *const RED_NAME[3] = {"mean", "sum", "none"}; /* train_reduction's order */
static void check_classifier(const char *name, const float *x32, const int *targets, long long rows, long long cols,
                             int ignore_index, train_reduction red, dtype st)
{
    classifier_out o = run_classifier(x32, targets, rows, cols, ignore_index, red, st);
    train_report rep;
    train_report_init(&rep);
    const int none = red == TRAIN_NONE;
    train_check_classifier(o.xw, targets, o.g, o.losses, o.loss, rows, cols, ignore_index,
                           none ? -1 : red == TRAIN_MEAN, st, &rep);
    unsigned loss_bits;
    memcpy(&loss_bits, &o.loss, sizeof loss_bits);
    if (none && loss_bits != 0xFFFFFFFFu) test_fail(name, "reduction none wrote the reduced loss (%g)", o.loss);
    else report(name, &rep, rows, cols);
    classifier_out_free(&o);
}

/* check_classifier on rows x cols of normal logits (seed) and targets
 * (seed + 100, every ignore_every-th row ignored). */
static void check_classifier_drawn(const char *name, long long rows, long long cols, unsigned long long seed,
                                   int ignore_every, train_reduction red, dtype st)
{
    float *x = (float *)malloc((size_t)(rows * cols) * sizeof(float));
    int *t = (int *)malloc((size_t)rows * sizeof(int));
    inputs_fill(x, rows, cols, INPUT_NORMAL, seed);
    make_targets(t, rows, cols, seed + 100, ignore_every, TRAIN_IGNORE_INDEX);
    check_classifier(name, x, t, rows, cols, TRAIN_IGNORE_INDEX, red, st);
    free(x);
    free(t);
}

/* ---- special values ------------------------------------------------------ */

#define NSPECIAL 9
static const char *SPECIAL_NAMES[NSPECIAL] = {
    "-inf entries",  "only -inf",  "a NaN",           "+inf",      "+-3e38",
    "all equal",     "one finite among -inf", "the max last", "very negative"};

/* Row r of the special set (n >= 4), and a target that exercises it. */
static int special_row(float *x, long long n, int r)
{
    inputs_fill(x, 1, n, INPUT_NORMAL, 700 + (unsigned long long)r);
    switch (r) {
    case 0: for (long long j = 0; j < n; j += 3) x[j] = -INFINITY; return 3; /* the target is -inf: loss +inf */
    case 1: for (long long j = 0; j < n; j++) x[j] = -INFINITY; return 1;
    case 2: x[n / 2] = NAN; return 0;
    case 3: x[n - 1] = INFINITY; return 0;
    case 4: for (long long j = 0; j < n; j++) x[j] = j % 2 ? 3e38f : -3e38f; return 0; /* the target at -3e38 */
    case 5: for (long long j = 0; j < n; j++) x[j] = 7.0f; return (int)(n - 1);
    case 6: for (long long j = 0; j < n; j++) x[j] = j == n - 2 ? -5.0f : -INFINITY; return (int)(n - 2);
    case 7: x[n - 1] = 100.0f; return (int)(n - 1);
    default: for (long long j = 0; j < n; j++) x[j] = -1000.0f - (float)(j % 5); return 2;
    }
}

/* The classifier on 3 rows of n logits of type t, special row r (with
 * its target) between two normal rows (seed), summed; `where` names the
 * path the caller has set up ("held as loaded"). */
static void check_classifier_special(const char *where, long long n, int r, unsigned long long seed, dtype t)
{
    char name[300];
    float *x = (float *)malloc(3 * n * sizeof(float));
    int tg[3] = {1, 0, (int)(n - 3)};
    inputs_fill(x, 3, n, INPUT_NORMAL, seed);
    tg[1] = special_row(x + n, n, r);
    snprintf(name, sizeof name,
             "special values (%s, N = %lld, %s) %s: the classifier's gradient and loss are the reference's",
             SPECIAL_NAMES[r], n, dtype_name(t), where);
    check_classifier(name, x, tg, 3, n, TRAIN_IGNORE_INDEX, TRAIN_SUM, t);
    free(x);
}

#endif
