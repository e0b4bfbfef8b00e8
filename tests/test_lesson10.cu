/* Lesson 10's kernels: softmax backward, log-softmax, the cross-entropy
 * loss and the fused classifier (lessons/10_training/training.h).
 *
 *   - Every kernel on every element against the float64 reference
 *     (common/reference.h), outputs poisoned with NaN first, on shapes from
 *     1 x 1 to rows longer than 2^18, row lengths on both sides of every
 *     class boundary, aligned (float4) and not; rows past the registers
 *     both on chip across blocks and split (train_set_long_rows), with
 *     pieces all in registers and with a shared-memory part;
 *   - special values: -inf entries, a row of only -inf, NaN, +inf, +-3e38;
 *   - targets: ignore_index rows (default -100, and one inside [0, N)),
 *     targets out of range (the documented NaN loss and NaN gradient row),
 *     every row ignored, both reductions, the gradient in place;
 *   - the gradient's real specification: central differences in float64
 *     of the float64 loss, and of sum(dy * softmax(x)), match the kernels'
 *     gradients;
 *   - the read-only pass that bounds the loss reads every element;
 *   - the 16-bit classifier (float16, bfloat16 logits, gradient in place).
 *
 * Element rule and tolerances: lessons/10_training/train_check.h, shared
 * with the program and the exercise. */
#include <float.h>
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
#include "../lessons/10_training/train_check.h"
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
    double *r = (double *)malloc((size_t)cols * sizeof(double));
    for (long long i = 0; i < rows; i++) {
        ref_softmax_row(x + i * cols, r, cols);
        for (long long j = 0; j < cols; j++) y[i * cols + j] = (float)r[j];
    }
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
    free(r);
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

static void check_loss(const char *name, const float *x, const int *targets, long long rows, long long cols,
                       int ignore_index)
{
    const size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    float *dx = (float *)dev_copy_of(x, bytes), *dloss = (float *)dev_poisoned(rows * sizeof(float));
    int *dt = (int *)dev_copy_of(targets, rows * sizeof(int));
    float *loss = (float *)malloc(rows * sizeof(float));
    cross_entropy_forward(dx, dt, dloss, rows, cols, ignore_index, 0);
    CUDA_CHECK_LAUNCH();
    to_host(loss, dloss, rows * sizeof(float));
    train_report rep;
    train_report_init(&rep);
    train_check_loss(x, targets, loss, rows, cols, ignore_index, &rep);
    report(name, &rep, rows, cols);
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dloss));
    CUDA_CHECK(cudaFree(dt));
    free(loss);
}

/* The fused classifier in storage type st: logits (made in float32, rounded
 * to st; the reference runs on them widened) overwritten by the gradient;
 * losses and the reduced loss poisoned first. */
static void check_classifier(const char *name, const float *x32, const int *targets, long long rows, long long cols,
                             int ignore_index, train_reduction red, dtype st)
{
    const size_t n = (size_t)rows * (size_t)cols, sz = (size_t)dtype_size(st);
    void *h = malloc(n * sz);
    float *xw = (float *)malloc(n * sizeof(float)), *g = (float *)malloc(n * sizeof(float));
    storage_narrow(x32, h, n, st);
    storage_widen(h, xw, n, st); /* what the kernel reads, exactly */
    void *dl = dev_copy_of(h, n * sz);
    int *dt = (int *)dev_copy_of(targets, rows * sizeof(int));
    float *dlosses = (float *)dev_poisoned(rows * sizeof(float)), *dloss = (float *)dev_poisoned(sizeof(float));
    classifier_fused_typed(dl, dt, dlosses, dloss, rows, cols, ignore_index, red, st, 0);
    CUDA_CHECK_LAUNCH();
    to_host(h, dl, n * sz);
    storage_widen(h, g, n, st);
    float *losses = (float *)malloc(rows * sizeof(float)), loss;
    to_host(losses, dlosses, rows * sizeof(float));
    to_host(&loss, dloss, sizeof(float));
    train_report rep;
    train_report_init(&rep);
    train_check_classifier(xw, targets, g, losses, loss, rows, cols, ignore_index, red, st, &rep);
    report(name, &rep, rows, cols);
    CUDA_CHECK(cudaFree(dl));
    CUDA_CHECK(cudaFree(dt));
    CUDA_CHECK(cudaFree(dlosses));
    CUDA_CHECK(cudaFree(dloss));
    free(h);
    free(xw);
    free(g);
    free(losses);
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

/* ---- shapes ------------------------------------------------------------ */

static const long long SHAPES[][2] = {
    {1, 1},    {1, 2},    {5, 3},    {37, 7},   {33, 31},   {17, 64},  {9, 65},   {50, 100},
    {7, 255},  {5, 256},  {3, 257},  {13, 1000}, {4, 1024}, {3, 1025}, {3, 2048}, {2, 2049},
    {2, 4096}, {3, 4097}, {2, 5000}, {2, 8192}, {1, 8193}, {1, 16384}, {2, 16385}, {1, 100003},
    {2, 70001}, {2, 65536 + 4}, {66, 20000}, {8, 300000}, {5, 262147}, {3, 200003},
};
#define NSHAPES (int)(sizeof SHAPES / sizeof SHAPES[0])

/* Every kernel on shape s, in the long-row mode set now. */
static void check_shape(int s)
{
    char name[320];
    const long long rows = SHAPES[s][0], cols = SHAPES[s][1];
    const size_t n = (size_t)rows * (size_t)cols;
    float *x = (float *)malloc(n * sizeof(float)), *dy = (float *)malloc(n * sizeof(float));
    int *t = (int *)malloc(rows * sizeof(int));
    inputs_fill(x, rows, cols, INPUT_NORMAL, 100 + s);
    inputs_fill(dy, rows, cols, INPUT_UNIFORM, 200 + s);
    make_targets(t, rows, cols, 300 + s, 5, TRAIN_IGNORE_INDEX);
    snprintf(name, sizeof name, "softmax_backward matches y * (dy - <y, dy>) on every element at %lld x %lld (%s)",
             rows, cols, train_path_name(TRAIN_K_BACKWARD, rows, cols));
    check_backward(name, x, dy, rows, cols, 0);
    snprintf(name, sizeof name, "log_softmax_forward matches x - m - log d on every element at %lld x %lld (%s)",
             rows, cols, train_path_name(TRAIN_K_LOG_SOFTMAX, rows, cols));
    check_log_softmax(name, x, rows, cols);
    snprintf(name, sizeof name,
             "cross_entropy_forward gives logsumexp - x[t] per row at %lld x %lld, every 5th row ignored (%s)",
             rows, cols, train_path_name(TRAIN_K_LOSS, rows, cols));
    check_loss(name, x, t, rows, cols, TRAIN_IGNORE_INDEX);
    const char *path = train_path_name(TRAIN_K_CLASSIFIER, rows, cols);
    snprintf(name, sizeof name,
             "classifier_fused (mean) writes (softmax - one_hot) / count over the logits, every element, at %lld x %lld (%s)",
             rows, cols, path);
    check_classifier(name, x, t, rows, cols, TRAIN_IGNORE_INDEX, TRAIN_MEAN, DTYPE_F32);
    if (s % 3 == 0 || cols > TRAIN_REG_MAX_COLS) {
        snprintf(name, sizeof name, "classifier_fused (sum) gives dloss = 1 per row and the summed loss at %lld x %lld (%s)",
                 rows, cols, path);
        check_classifier(name, x, t, rows, cols, TRAIN_IGNORE_INDEX, TRAIN_SUM, DTYPE_F32);
    }
    if (cols > TRAIN_REG_MAX_COLS && s % 2 == 0) {
        snprintf(name, sizeof name, "classifier_fused_typed (f16 logits) at %lld x %lld (%s)", rows, cols,
                 train_path_name_typed(TRAIN_K_CLASSIFIER, rows, cols, DTYPE_F16));
        check_classifier(name, x, t, rows, cols, TRAIN_IGNORE_INDEX, TRAIN_MEAN, DTYPE_F16);
    }
    free(x);
    free(dy);
    free(t);
}

/* Rows past the registers run every way there is: the default (on chip,
 * in clusters where they pay); on chip the other way (TRAIN_LONG_GRID
 * where the default took clusters, TRAIN_LONG_CLUSTER where it did not
 * and a cluster holds the row); split. */
static void test_shapes(void)
{
    for (int s = 0; s < NSHAPES; s++) {
        const long long rows = SHAPES[s][0], cols = SHAPES[s][1];
        check_shape(s);
        if (cols > TRAIN_REG_MAX_COLS) {
            const int clustered = train_cluster_size(TRAIN_K_LOG_SOFTMAX, rows, cols) > 0;
            train_set_long_rows(clustered ? TRAIN_LONG_GRID : TRAIN_LONG_CLUSTER);
            if (clustered || train_cluster_size(TRAIN_K_LOG_SOFTMAX, rows, cols) > 0) check_shape(s);
            train_set_long_rows(TRAIN_LONG_SPLIT);
            check_shape(s);
            train_set_long_rows(TRAIN_LONG_AUTO);
        }
    }
}

/* The long-row modes take the paths they name: on sm_90 and up, float
 * rows of 2 to 16 pieces in a cluster of that many blocks, by default
 * where every SM gets a block. */
static void test_long_row_modes(void)
{
    int dev, major = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    const train_kernel K[2] = {TRAIN_K_LOG_SOFTMAX, TRAIN_K_CLASSIFIER};
    for (int i = 0; i < 2; i++) {
        const char *kn = i ? "classifier_fused" : "log_softmax_forward";
        char name[200];
        snprintf(name, sizeof name, "%s: by default, rows of 2^15 floats in clusters of 2 at 4096 rows, none at 1 row", kn);
        const int many = train_cluster_size(K[i], 4096, 1 << 15), one = train_cluster_size(K[i], 1, 1 << 15);
        if (major < 9) test_skip(name, "no clusters before sm_90");
        else test_expect(many == 2 && one == 0, name, "clusters of %d and %d", many, one);
        /* 2^18: 8 CTAs of 128 KB (TRAIN_BIG_BLOCK) for both */
        snprintf(name, sizeof name, "%s: by default, rows of 2^18 floats at 256 rows in clusters of 8", kn);
        const int eight = train_cluster_size(K[i], 256, 1 << 18);
        if (major < 9) test_skip(name, "no clusters before sm_90");
        else test_expect(eight == 8, name, "clusters of %d", eight);
        /* 2^19, log-softmax: 16 CTAs of 128 KB; the classifier: 32 of 64 KB, more than a cluster */
        snprintf(name, sizeof name, "%s: by default, rows of 2^19 floats at 128 rows in %s", kn,
                 i ? "no cluster" : "clusters of 16");
        const int big = train_cluster_size(K[i], 128, 1 << 19);
        if (major < 9) test_skip(name, "no clusters before sm_90");
        else test_expect(big == (i ? 0 : 16), name, "clusters of %d", big);
        train_set_long_rows(TRAIN_LONG_CLUSTER);
        snprintf(name, sizeof name, "%s: TRAIN_LONG_CLUSTER puts a row of 70001 floats in a cluster of 5, of 17 x 32768 in none", kn);
        const int five = train_cluster_size(K[i], 2, 70001), none = train_cluster_size(K[i], 2, 17 * 32768);
        if (major < 9) test_skip(name, "no clusters before sm_90");
        else test_expect(five == 5 && none == 0, name, "clusters of %d and %d", five, none);
        train_set_long_rows(TRAIN_LONG_GRID);
        snprintf(name, sizeof name, "%s: TRAIN_LONG_GRID never takes clusters, and still goes on chip", kn);
        const int grid = train_cluster_size(K[i], 4096, 1 << 15);
        test_expect(grid == 0 && train_reads_once(K[i], 4096, 1 << 15, DTYPE_F32), name, "clusters of %d", grid);
        train_set_long_rows(TRAIN_LONG_AUTO);
    }
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

static void test_special_values(void)
{
    static const long long LENS[] = {8, 100, 5000, 20000};
    char name[256];
    for (int l = 0; l < 4; l++) {
        const long long n = LENS[l];
        for (int r = 0; r < NSPECIAL; r++) {
            /* 3 rows: the special one between two normal rows, which must not notice it */
            float *x = (float *)malloc(3 * n * sizeof(float)), *dy = (float *)malloc(3 * n * sizeof(float));
            int t[3] = {1, 0, 2};
            inputs_fill(x, 3, n, INPUT_NORMAL, 800 + r);
            inputs_fill(dy, 3, n, INPUT_UNIFORM, 900 + r);
            t[1] = special_row(x + n, n, r);
            snprintf(name, sizeof name, "special values (%s, N = %lld): softmax_backward of its softmax is the reference's",
                     SPECIAL_NAMES[r], n);
            check_backward(name, x, dy, 3, n, 0);
            snprintf(name, sizeof name, "special values (%s, N = %lld): log_softmax_forward is the reference's",
                     SPECIAL_NAMES[r], n);
            check_log_softmax(name, x, 3, n);
            snprintf(name, sizeof name, "special values (%s, N = %lld): cross_entropy_forward is the reference's",
                     SPECIAL_NAMES[r], n);
            check_loss(name, x, t, 3, n, TRAIN_IGNORE_INDEX);
            snprintf(name, sizeof name, "special values (%s, N = %lld): classifier_fused's gradient and loss are the reference's",
                     SPECIAL_NAMES[r], n);
            check_classifier(name, x, t, 3, n, TRAIN_IGNORE_INDEX, TRAIN_SUM, DTYPE_F32);
            free(x);
            free(dy);
        }
    }
    /* Special values in dy: +inf, -inf and +inf, NaN (y ordinary) */
    for (int l = 0; l < 4; l++) {
        const long long n = LENS[l];
        for (int v = 0; v < 3; v++) {
            float *x = (float *)malloc(2 * n * sizeof(float)), *dy = (float *)malloc(2 * n * sizeof(float));
            inputs_fill(x, 2, n, INPUT_NORMAL, 950 + v);
            inputs_fill(dy, 2, n, INPUT_UNIFORM, 960 + v);
            if (v == 0) dy[n + 1] = INFINITY;
            if (v == 1) dy[n + 1] = INFINITY, dy[n + n - 1] = -INFINITY;
            if (v == 2) dy[n + n / 2] = NAN;
            snprintf(name, sizeof name, "softmax_backward with %s in dy (N = %lld) gives the reference's infinities and NaN",
                     v == 0 ? "+inf" : v == 1 ? "+inf and -inf" : "a NaN", n);
            check_backward(name, x, dy, 2, n, 0);
            free(x);
            free(dy);
        }
    }

    /* The stability claim in numbers: log(softmax) would give -inf here. */
    const float far[3] = {0.0f, -200.0f, -1e4f};
    float *d = (float *)dev_copy_of(far, sizeof far), *o = (float *)dev_poisoned(sizeof far), out[3];
    log_softmax_forward(d, o, 1, 3, 0);
    CUDA_CHECK_LAUNCH();
    to_host(out, o, sizeof out);
    test_expect(out[0] == 0.0f && fabsf(out[1] + 200.0f) < 1e-4f && out[2] == -1e4f,
                "log_softmax_forward of [0, -200, -1e4] is [0, -200, -1e4], where log(softmax) underflows to -inf",
                "got [%g, %g, %g]", out[0], out[1], out[2]);
    CUDA_CHECK(cudaFree(d));
    CUDA_CHECK(cudaFree(o));
}

/* ---- targets: out of range, ignored, every row ignored ------------------- */

static void test_targets(void)
{
    static const long long LENS[] = {10, 1000, 20000};
    char name[256];
    for (int l = 0; l < 3; l++) {
        const long long rows = 6, n = LENS[l];
        float *x = (float *)malloc(rows * n * sizeof(float));
        inputs_fill(x, rows, n, INPUT_NORMAL, 1000 + l);
        /* rows 1 and 4 out of range (N and -1), row 2 ignored */
        const int t[6] = {0, (int)n, TRAIN_IGNORE_INDEX, (int)(n - 1), -1, 3};
        snprintf(name, sizeof name,
                 "a target out of range (N, -1) gives a NaN loss, an ignored row 0, the others exact (cross_entropy_forward, N = %lld)", n);
        check_loss(name, x, t, rows, n, TRAIN_IGNORE_INDEX);
        snprintf(name, sizeof name,
                 "a target out of range gives a NaN loss and a NaN gradient row, the reduced loss NaN, other rows exact (classifier_fused, N = %lld)", n);
        check_classifier(name, x, t, rows, n, TRAIN_IGNORE_INDEX, TRAIN_MEAN, DTYPE_F32);

        /* ignore_index inside [0, N): rows whose target is 0 are ignored */
        const int t0[6] = {0, 1, 0, 2, 0, 5};
        snprintf(name, sizeof name,
                 "ignore_index = 0 (inside the row): those rows get loss 0 and gradient 0, the mean divides by 3 (N = %lld)", n);
        check_classifier(name, x, t0, rows, n, 0, TRAIN_MEAN, DTYPE_F32);

        /* every row ignored, even one holding NaN */
        x[3] = NAN;
        const int ti[6] = {-100, -100, -100, -100, -100, -100};
        for (int red = 0; red < 2; red++) {
            snprintf(name, sizeof name,
                     "every row ignored (%s): gradient 0 everywhere (NaN logits too), reduced loss %s (N = %lld)",
                     red ? "sum" : "mean", red ? "0" : "NaN = 0 / 0, as PyTorch", n);
            check_classifier(name, x, ti, rows, n, TRAIN_IGNORE_INDEX, (train_reduction)red, DTYPE_F32);
        }
        free(x);
    }

    /* Many rows: the count and the loss sum run in several parts. 40000
     * rows of 5 take 1250 blocks, which finish the loss in the kernel;
     * 140000 take 4375, past the 4096 that do: the blocks' parts are
     * added up by a second kernel (a programmatic dependent on sm_90). */
    const long long many[2] = {40000, 140000}, n = 5;
    for (int k = 0; k < 2; k++) {
        const long long rows = many[k];
        float *x = (float *)malloc(rows * n * sizeof(float));
        int *tm = (int *)malloc(rows * sizeof(int));
        inputs_fill(x, rows, n, INPUT_NORMAL, 1050);
        make_targets(tm, rows, n, 1051, 3, TRAIN_IGNORE_INDEX);
        for (int red = 0; red < 2; red++) {
            snprintf(name, sizeof name,
                     "classifier_fused (%s) at %lld x 5: the count of rows not ignored and the loss sum over many parts",
                     red ? "sum" : "mean", rows);
            check_classifier(name, x, tm, rows, n, TRAIN_IGNORE_INDEX, (train_reduction)red, DTYPE_F32);
        }
        snprintf(name, sizeof name, "classifier_fused_typed (f16 logits, mean) at %lld x 5: the loss over many parts",
                 rows);
        check_classifier(name, x, tm, rows, n, TRAIN_IGNORE_INDEX, TRAIN_MEAN, DTYPE_F16);
        free(x);
        free(tm);
        /* rows of 8: 16-byte vectors, and 140000 rows take 4375 groups of
         * 32, past the 4096 blocks that finish the loss themselves */
        const long long n8 = 8;
        x = (float *)malloc(rows * n8 * sizeof(float));
        tm = (int *)malloc(rows * sizeof(int));
        inputs_fill(x, rows, n8, INPUT_NORMAL, 1052);
        make_targets(tm, rows, n8, 1053, 3, TRAIN_IGNORE_INDEX);
        snprintf(name, sizeof name,
                 "classifier_fused_typed (bf16 logits, sum) at %lld x 8: 16-byte vectors, every row and the loss", rows);
        check_classifier(name, x, tm, rows, n8, TRAIN_IGNORE_INDEX, TRAIN_SUM, DTYPE_BF16);
        free(x);
        free(tm);
    }
    /* Rows in registers finish the reduced loss through the loss slots up
     * to 2048 rows (CLS_SLOT_ROWS), and by the last block to count in
     * past it; both with warps of one row (N = 100) and with blocks of
     * one row (N = 1100), both reductions, and 16-bit logits. */
    const long long slot_rows[2] = {2048, 2049}, slot_cols[2] = {100, 1100};
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 2; c++) {
            const long long rows = slot_rows[k], ns = slot_cols[c];
            float *x = (float *)malloc(rows * ns * sizeof(float));
            int *tm = (int *)malloc(rows * sizeof(int));
            inputs_fill(x, rows, ns, INPUT_NORMAL, 1060 + 2 * k + c);
            make_targets(tm, rows, ns, 1064 + 2 * k + c, 3, TRAIN_IGNORE_INDEX);
            for (int red = 0; red < 2; red++) {
                snprintf(name, sizeof name, "classifier_fused (%s) at %lld x %lld: every row and the reduced loss, %s",
                         red ? "sum" : "mean", rows, ns,
                         k ? "added up by the last block to count in" : "through the loss slots");
                check_classifier(name, x, tm, rows, ns, TRAIN_IGNORE_INDEX, (train_reduction)red, DTYPE_F32);
            }
            snprintf(name, sizeof name, "classifier_fused_typed (f16 logits, sum) at %lld x %lld: the reduced loss %s",
                     rows, ns, k ? "added up by the last block to count in" : "through the loss slots");
            check_classifier(name, x, tm, rows, ns, TRAIN_IGNORE_INDEX, TRAIN_SUM, DTYPE_F16);
            free(x);
            free(tm);
        }
    /* Rows on chip finish the reduced loss in the kernel up to 2048 rows
     * (CLS_ON_CHIP_FINISH_ROWS) and in a second launch past it: the first
     * averaged, the second summed, every third row ignored. */
    const long long nc = 8200, chip_rows[2] = {2048, 2049};
    for (int k = 0; k < 2; k++) {
        const long long rows = chip_rows[k];
        float *x = (float *)malloc(rows * nc * sizeof(float));
        int *tm = (int *)malloc(rows * sizeof(int));
        inputs_fill(x, rows, nc, INPUT_NORMAL, 1054 + k);
        make_targets(tm, rows, nc, 1056 + k, 3, TRAIN_IGNORE_INDEX);
        snprintf(name, sizeof name, "classifier_fused (%s) at %lld x %lld on chip: every row and the reduced loss, "
                 "finished %s (%s)", k ? "sum" : "mean", rows, nc, k ? "by a second launch" : "in the kernel",
                 train_path_name(TRAIN_K_CLASSIFIER, rows, nc));
        if (!train_reads_once(TRAIN_K_CLASSIFIER, rows, nc, DTYPE_F32))
            test_fail(name, "the rows do not go on chip here");
        else
            check_classifier(name, x, tm, rows, nc, TRAIN_IGNORE_INDEX, k ? TRAIN_SUM : TRAIN_MEAN, DTYPE_F32);
        free(x);
        free(tm);
    }
}

/* ---- the gradient's specification: central differences in float64 ------ */

/* The reduced loss of float64 logits (what ref_classifier computes, on
 * doubles). */
static double loss64(const double *x, const int *t, long long rows, long long cols, int mean)
{
    double total = 0.0;
    long long count = 0;
    for (long long i = 0; i < rows; i++) {
        if (t[i] == TRAIN_IGNORE_INDEX) continue;
        count++;
        const double *r = x + i * cols;
        total += train_logsumexp64(r, cols) - r[t[i]];
    }
    return mean ? total / (double)count : total;
}

/* sum_j dy_j softmax(x)_j over all rows, in float64. */
static double dot_softmax64(const double *x, const float *dy, long long rows, long long cols)
{
    double total = 0.0;
    for (long long i = 0; i < rows; i++) {
        const double *r = x + i * cols;
        const double lse = train_logsumexp64(r, cols);
        for (long long j = 0; j < cols; j++) total += dy[i * cols + j] * exp(r[j] - lse);
    }
    return total;
}

/* Central difference at element e of x (float64 copy xd, restored after). */
static double central(double (*f)(const double *, const void *), const void *ctx, double *xd, size_t e)
{
    const double h = 1e-5, keep = xd[e];
    xd[e] = keep + h;
    const double up = f(xd, ctx);
    xd[e] = keep - h;
    const double down = f(xd, ctx);
    xd[e] = keep;
    return (up - down) / (2.0 * h);
}

typedef struct {
    const int *t;
    const float *dy;
    long long rows, cols;
    int mean;
} fd_ctx;
static double fd_loss(const double *x, const void *c)
{
    const fd_ctx *k = (const fd_ctx *)c;
    return loss64(x, k->t, k->rows, k->cols, k->mean);
}
static double fd_dot(const double *x, const void *c)
{
    const fd_ctx *k = (const fd_ctx *)c;
    return dot_softmax64(x, k->dy, k->rows, k->cols);
}

static void test_finite_differences(void)
{
    static const long long FD[][2] = {{1, 1}, {3, 5}, {4, 17}, {2, 33}, {5, 64}, {1, 300}, {1, 20000}};
    char name[256];
    for (int s = 0; s < 7; s++) {
        const long long rows = FD[s][0], cols = FD[s][1];
        const size_t n = (size_t)rows * (size_t)cols;
        float *x = (float *)malloc(n * sizeof(float)), *dy = (float *)malloc(n * sizeof(float));
        float *g = (float *)malloc(n * sizeof(float)), *y = (float *)malloc(n * sizeof(float));
        double *xd = (double *)malloc(n * sizeof(double)), *r = (double *)malloc(cols * sizeof(double));
        int *t = (int *)malloc(rows * sizeof(int));
        inputs_fill(x, rows, cols, INPUT_NORMAL, 1100 + s);
        inputs_fill(dy, rows, cols, INPUT_UNIFORM, 1200 + s);
        make_targets(t, rows, cols, 1300 + s, rows > 2 ? 3 : 0, TRAIN_IGNORE_INDEX);
        for (size_t e = 0; e < n; e++) xd[e] = x[e];
        /* every element of small shapes, 40 spread over a long row */
        const size_t step = n > 400 ? n / 40 : 1;

        for (int mean = 1; mean >= 0; mean--) {
            float *dl = (float *)dev_copy_of(x, n * sizeof(float)), *dls = (float *)dev_poisoned(rows * sizeof(float));
            float *dlo = (float *)dev_poisoned(sizeof(float));
            int *dt = (int *)dev_copy_of(t, rows * sizeof(int));
            classifier_fused(dl, dt, dls, dlo, rows, cols, TRAIN_IGNORE_INDEX, mean ? TRAIN_MEAN : TRAIN_SUM, 0);
            CUDA_CHECK_LAUNCH();
            to_host(g, dl, n * sizeof(float));
            const fd_ctx c = {t, dy, rows, cols, mean};
            double worst = 0.0;
            int ok = 1;
            for (size_t e = 0; e < n; e += step) {
                const double fd = central(fd_loss, &c, xd, e), err = fabs((double)g[e] - fd);
                if (!(err <= 1e-6 + 2e-5 * fabs(fd))) ok = 0; /* NaN fails */
                if (err > worst || err != err) worst = err;
            }
            snprintf(name, sizeof name,
                     "classifier_fused's gradient equals the central difference of the float64 %s loss at %lld x %lld",
                     mean ? "mean" : "sum", rows, cols);
            test_expect(ok, name, "largest |gradient - difference| %.3g", worst);
            CUDA_CHECK(cudaFree(dl));
            CUDA_CHECK(cudaFree(dls));
            CUDA_CHECK(cudaFree(dlo));
            CUDA_CHECK(cudaFree(dt));
        }

        for (long long i = 0; i < rows; i++) {
            ref_softmax_row(x + i * cols, r, cols);
            for (long long j = 0; j < cols; j++) y[i * cols + j] = (float)r[j];
        }
        float *dyd = (float *)dev_copy_of(y, n * sizeof(float)), *ddy = (float *)dev_copy_of(dy, n * sizeof(float));
        float *ddx = (float *)dev_poisoned(n * sizeof(float));
        softmax_backward(dyd, ddy, ddx, rows, cols, 0);
        CUDA_CHECK_LAUNCH();
        to_host(g, ddx, n * sizeof(float));
        const fd_ctx c = {t, dy, rows, cols, 0};
        double worst = 0.0;
        int ok = 1;
        for (size_t e = 0; e < n; e += step) {
            const double fd = central(fd_dot, &c, xd, e), err = fabs((double)g[e] - fd);
            if (!(err <= 1e-6 + 2e-5 * fabs(fd))) ok = 0;
            if (err > worst || err != err) worst = err;
        }
        snprintf(name, sizeof name,
                 "softmax_backward's dx equals the central difference of sum(dy * softmax(x)) in float64 at %lld x %lld",
                 rows, cols);
        test_expect(ok, name, "largest |dx - difference| %.3g", worst);
        CUDA_CHECK(cudaFree(dyd));
        CUDA_CHECK(cudaFree(ddy));
        CUDA_CHECK(cudaFree(ddx));
        free(x);
        free(dy);
        free(g);
        free(y);
        free(xd);
        free(r);
        free(t);
    }
}

/* ---- in place, aliasing, the read pass ----------------------------------- */

static void test_in_place_and_read_pass(void)
{
    const long long rows = 7, cols = 1000;
    const size_t n = rows * cols;
    float *x = (float *)malloc(n * sizeof(float)), *dy = (float *)malloc(n * sizeof(float));
    inputs_fill(x, rows, cols, INPUT_NORMAL, 1400);
    inputs_fill(dy, rows, cols, INPUT_UNIFORM, 1401);
    check_backward("softmax_backward may write dx over dy (in place), every element still exact", x, dy, rows, cols, 1);
    free(x);
    free(dy);
    x = (float *)malloc(2 * 20001 * sizeof(float));
    dy = (float *)malloc(2 * 20001 * sizeof(float));
    inputs_fill(x, 2, 20001, INPUT_NORMAL, 1402);
    inputs_fill(dy, 2, 20001, INPUT_UNIFORM, 1403);
    check_backward("softmax_backward may write dx over dy on chip across blocks too (2 x 20001)", x, dy, 2, 20001, 1);
    train_set_long_rows(TRAIN_LONG_SPLIT);
    check_backward("softmax_backward may write dx over dy on the split path too (2 x 20001)", x, dy, 2, 20001, 1);
    train_set_long_rows(TRAIN_LONG_AUTO);
    free(x);
    free(dy);

    /* the read-only bound really reads every element: block sums add up */
    static const long long NS[] = {1, 3, 4, 1027, 1 << 20, 3 * (1 << 21) + 7}; /* the last: 4 loads in flight per thread */
    for (int k = 0; k < 6; k++) {
        const long long m = NS[k];
        float *h = (float *)malloc(m * sizeof(float));
        double want = 0.0;
        for (long long i = 0; i < m; i++) want += (h[i] = (float)(i % 7) - 3.0f + 0.25f);
        float *d = (float *)dev_copy_of(h, m * sizeof(float));
        const int nb = read_pass_blocks(m);
        float *dp = (float *)dev_poisoned(nb * sizeof(float)), *p = (float *)malloc(nb * sizeof(float));
        read_pass(d, dp, m, 0);
        CUDA_CHECK_LAUNCH();
        to_host(p, dp, nb * sizeof(float));
        double got = 0.0;
        for (int b = 0; b < nb; b++) got += p[b];
        char name[160];
        snprintf(name, sizeof name, "read_pass (the loss's bound) reads each of %lld floats once: its %d block sums add up", m, nb);
        test_expect(fabs(got - want) <= 1e-6 * (double)m + 1e-9, name, "sum %.9g, want %.9g", got, want);
        CUDA_CHECK(cudaFree(d));
        CUDA_CHECK(cudaFree(dp));
        free(h);
        free(p);
    }
}

/* ---- 16-bit logits -------------------------------------------------------- */

static void test_16bit(void)
{
    static const long long S[][2] = {{37, 7}, {9, 64}, {5, 1000}, {3, 4096}, {2, 5000}, {2, 20000}};
    char name[256];
    for (int tt = 0; tt < 2; tt++) {
        const dtype st = tt ? DTYPE_BF16 : DTYPE_F16;
        for (int s = 0; s < 6; s++) {
            const long long rows = S[s][0], cols = S[s][1];
            snprintf(name, sizeof name,
                     "classifier_fused_typed (%s logits): the gradient, rounded once, in place, and the loss at %lld x %lld",
                     dtype_name(st), rows, cols);
            check_classifier_drawn(name, rows, cols, 1500 + s, 4, s % 2 ? TRAIN_SUM : TRAIN_MEAN, st);
        }
        /* special rows in 16 bits: -inf, NaN, a value past float16's range (inf there) */
        float x[3 * 64];
        int t[3] = {0, 5, 3};
        inputs_fill(x, 3, 64, INPUT_NORMAL, 1700);
        for (int j = 0; j < 64; j += 4) x[j] = -INFINITY;
        x[64 + 9] = NAN;
        x[128 + 1] = 1e5f; /* float16: +inf, the row NaN; bfloat16: a large finite max */
        snprintf(name, sizeof name, "classifier_fused_typed (%s logits) on -inf (target -inf: loss +inf), NaN and 1e5",
                 dtype_name(st));
        check_classifier(name, x, t, 3, 64, TRAIN_IGNORE_INDEX, TRAIN_SUM, st);
    }
}

/* 16-bit rows of up to 256 elements take classes of their own, with 16
 * or 32 elements a thread (CLS_SHORT16_CLASSES): every class, rows that
 * fill it and rows that fill part of it, in 16-byte vectors and not, many
 * rows per block; the program's path name says which class ran. */
static void test_short16(void)
{
    static const long long S[][2] = {{300, 32}, {300, 31}, {200, 64}, {200, 57}, {150, 128},
                                     {150, 100}, {100, 256}, {100, 250}, {70, 129}};
    char name[300];
    for (int tt = 0; tt < 2; tt++) {
        const dtype st = tt ? DTYPE_BF16 : DTYPE_F16;
        for (int s = 0; s < 9; s++) {
            const long long rows = S[s][0], cols = S[s][1];
            const char *path = train_path_name_typed(TRAIN_K_CLASSIFIER, rows, cols, st);
            snprintf(name, sizeof name, "classifier_fused_typed (%s logits) at %lld x %lld, a short class (%s)",
                     dtype_name(st), rows, cols, path);
            if (!strstr(path, "16 elements each") && !strstr(path, "32 elements each"))
                test_fail(name, "the path is not one of the short 16-bit classes");
            else
                check_classifier_drawn(name, rows, cols, 1800 + s, 5, s % 2 ? TRAIN_SUM : TRAIN_MEAN, st);
        }
    }
}

/* ---- 16-bit rows held as loaded ------------------------------------------ */

/* float16 and bfloat16 rows of 1025 to 32768 elements in an aligned view
 * take classifier_rows16_kernel (past 8192 only with a row per SM): every
 * class, rows that fill part of their class's last word column, targets
 * first, last, between, ignored and out of range, ignore_index inside the
 * row, the mean and the sum, special rows, and more blocks than finish
 * the loss themselves. */
static void test_rows_held(void)
{
    char name[300];
    const long long sms = device_sms();
    /* the plan: held where it pays, never for float32 or a misaligned row */
    const int h[8] = {classifier_rows_held(2, 1032, DTYPE_F16),      classifier_rows_held(sms, 8200, DTYPE_BF16),
                      classifier_rows_held(sms, 32768, DTYPE_F16),   classifier_rows_held(2, 8192, DTYPE_F16),
                      classifier_rows_held(sms, 1024, DTYPE_F16),    classifier_rows_held(sms, 32776, DTYPE_F16),
                      classifier_rows_held(sms - 1, 8200, DTYPE_F16), classifier_rows_held(sms, 4096, DTYPE_F32)};
    snprintf(name, sizeof name,
             "16-bit rows are held as loaded at 2 x 1032, %lld x 8200, %lld x 32768 and 2 x 8192; not at 1024, 32776, "
             "%lld rows of 8200, or in float32",
             sms, sms, sms - 1);
    test_expect(h[0] && h[1] && h[2] && h[3] && !h[4] && !h[5] && !h[6] && !h[7], name,
                "%d %d %d %d / %d %d %d %d", h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]);
    snprintf(name, sizeof name, "float16 rows of 1036 (no aligned view) are not held as loaded");
    test_expect(!classifier_rows_held(sms, 1036, DTYPE_F16), name, "held");
    const int bulk_held = classifier_bulk_size(sms, 8200, DTYPE_F16), bulk_past = classifier_bulk_size(sms, 32776, DTYPE_F16);
    snprintf(name, sizeof name, "%lld float16 rows of 8200 take no bulk-loaded clusters (held), of 32776 clusters of 2",
             sms);
    int dev, major = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else test_expect(bulk_held == 0 && bulk_past == 2, name, "%d and %d", bulk_held, bulk_past);

    /* one length per class, and rows that end inside a thread's words */
    static const long long LENS[] = {1032, 2048, 3000, 4096, 8192, 12296, 32768};
    for (int st = 0; st < 2; st++) {
        const dtype t = st ? DTYPE_BF16 : DTYPE_F16;
        for (int l = 0; l < 7; l++) {
            const long long n = LENS[l], rows = n > 8192 ? sms : 7;
            float *x = (float *)malloc(rows * n * sizeof(float));
            int *tg = (int *)malloc(rows * sizeof(int));
            inputs_fill(x, rows, n, INPUT_NORMAL, 2400 + l);
            make_targets(tg, rows, n, 2450 + l, 5, TRAIN_IGNORE_INDEX);
            /* the target first, last, between, out of range (N, -1), ignored */
            tg[0] = 0, tg[1] = (int)(n - 1), tg[2] = (int)(n / 2 + 3), tg[3] = (int)n, tg[4] = -1;
            tg[5] = TRAIN_IGNORE_INDEX;
            snprintf(name, sizeof name, "%s rows at %lld x %lld are held as loaded", dtype_name(t), rows, n);
            test_expect(classifier_rows_held(rows, n, t), name, "not held");
            for (int red = 0; red < 2; red++) {
                snprintf(name, sizeof name,
                         "classifier_fused_typed held as loaded (%s, %s) at %lld x %lld: targets first, last, between, "
                         "ignored and out of range",
                         dtype_name(t), red ? "sum" : "mean", rows, n);
                check_classifier(name, x, tg, rows, n, TRAIN_IGNORE_INDEX, (train_reduction)red, t);
            }
            for (long long i = 0; i < rows; i++) tg[i] = (int)(i % 3 ? i % n : 0);
            snprintf(name, sizeof name,
                     "classifier_fused_typed held as loaded (%s) at %lld x %lld: ignore_index = 0, inside the row",
                     dtype_name(t), rows, n);
            check_classifier(name, x, tg, rows, n, 0, TRAIN_MEAN, t);
            free(x);
            free(tg);
        }
        /* special rows, each with the target that exercises it */
        const long long n = 2056;
        snprintf(name, sizeof name, "%s rows at 3 x %lld are held as loaded", dtype_name(t), n);
        test_expect(classifier_rows_held(3, n, t), name, "not held");
        for (int r = 0; r < NSPECIAL; r++) check_classifier_special("held as loaded", n, r, 2500 + r, t);
    }
    /* 4100 rows: 4100 blocks, past the 4096 that finish the loss
     * themselves (their parts go to the loss kernel after) */
    const long long rows = 4100, n = 1040;
    test_expect(classifier_rows_held(rows, n, DTYPE_F16), "f16 rows at 4100 x 1040 are held as loaded", "not held");
    for (int red = 0; red < 2; red++) {
        snprintf(name, sizeof name,
                 "classifier_fused_typed held as loaded (f16, %s) at %lld x %lld: the loss over 4100 blocks' parts",
                 red ? "sum" : "mean", rows, n);
        check_classifier_drawn(name, rows, n, 2600, 4, (train_reduction)red, DTYPE_F16);
    }
}

/* ---- the classifier's bulk-loaded clusters ------------------------------- */

/* TRAIN_LONG_BULK puts every aligned row of 1 to 8 pieces of 64 KB past
 * 8192 columns in clusters whose pieces are loaded by bulk copies (sm_90):
 * in every storage type, the gradient and the loss on every element, with
 * the target in the first piece, the last and between; ignored rows,
 * targets out of range and ignore_index inside the row; special rows;
 * the mean and the sum, finished in the kernel. By default, only where
 * rows x pieces give every SM a block, and never a misaligned view. */
static void test_classifier_bulk(void)
{
    int dev, major = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    char name[300];
    /* pieces of 64 KB: floats 8196 (1 piece), 16388 (2), 32768 (2), 65544 (5), 100000 (7), 131072 (8);
     * 16-bit 8200 (1), 32768 (1), 32776 (2), 100000 (4), 262144 (8), 300000 (10: past a cluster,
     * meeting in the workspace) */
    static const long long LENS[2][7] = {{8196, 16388, 32768, 65544, 100000, 131072, 0},
                                         {8200, 32768, 32776, 100000, 262144, 300000, 0}};
    static const int PIECES[2][7] = {{1, 2, 2, 5, 7, 8, 0}, {1, 1, 2, 4, 8, 10, 0}};
    train_set_long_rows(TRAIN_LONG_BULK);
    for (int st = 0; st < 3; st++) {
        const dtype t = st == 0 ? DTYPE_F32 : st == 1 ? DTYPE_F16 : DTYPE_BF16;
        for (int l = 0; l < 7 && LENS[st > 0][l]; l++) {
            const long long n = LENS[st > 0][l], rows = 6;
            const int c = classifier_bulk_size(rows, n, t);
            snprintf(name, sizeof name, "TRAIN_LONG_BULK takes %d bulk-loaded block%s per row of %lld %s logits", PIECES[st > 0][l],
                     PIECES[st > 0][l] > 1 ? "s" : "", n, dtype_name(t));
            if (major < 9) {
                test_skip(name, "no clusters before sm_90");
                continue;
            }
            test_expect(c == PIECES[st > 0][l], name, "%d blocks", c);
            float *x = (float *)malloc(rows * n * sizeof(float));
            inputs_fill(x, rows, n, INPUT_NORMAL, 2000 + l);
            /* the target first, last, in the middle; ignored; out of range (N, -1) */
            const int tg[6] = {0, (int)(n - 1), (int)(n / 2 + 3), TRAIN_IGNORE_INDEX, (int)n, -1};
            const char *where = PIECES[st > 0][l] > 8 ? "bulk-loaded blocks meeting in the workspace" : "bulk-loaded clusters";
            for (int red = 0; red < 2; red++) {
                snprintf(name, sizeof name,
                         "classifier_fused_typed in %s (%s, %s) at 6 x %lld: targets first, last, "
                         "between, ignored and out of range",
                         where, dtype_name(t), red ? "sum" : "mean", n);
                check_classifier(name, x, tg, rows, n, TRAIN_IGNORE_INDEX, (train_reduction)red, t);
            }
            const int t0[6] = {0, 1, 0, (int)(n - 2), 0, 5};
            snprintf(name, sizeof name,
                     "classifier_fused_typed in %s (%s) at 6 x %lld: ignore_index = 0, inside the row", where,
                     dtype_name(t), n);
            check_classifier(name, x, t0, rows, n, 0, TRAIN_MEAN, t);
            free(x);
        }
    }
    for (int st = 0; st < 2 && major >= 9; st++) {
        const long long n = st ? 32776 : 32768; /* 2 pieces of floats, or of float16 values */
        const dtype t16 = st ? DTYPE_F16 : DTYPE_F32;
        for (int r = 0; r < NSPECIAL; r++) check_classifier_special("in bulk-loaded clusters", n, r, 2100 + r, t16);
    }
    if (major >= 9) /* 10 pieces of float16 */
        for (int r = 0; r < NSPECIAL; r++)
            check_classifier_special("in bulk-loaded blocks meeting in the workspace", 300000, r, 2150 + r, DTYPE_F16);
    train_set_long_rows(TRAIN_LONG_AUTO);
    /* the default: where every SM gets a block; aligned views only */
    const int sms = device_sms();
    const int many = classifier_bulk_size(sms, 65536, DTYPE_F32), few = classifier_bulk_size(sms / 8, 65536, DTYPE_F32);
    snprintf(name, sizeof name,
             "by default, rows of 65536 floats take bulk-loaded clusters of 4 at %d rows (one block per SM), none at %d", sms,
             sms / 8);
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else test_expect(many == 4 && few == 0, name, "clusters of %d and %d", many, few);
    const int f8 = classifier_bulk_size(4 * sms, 1 << 17, DTYPE_F32), h8 = classifier_bulk_size(4 * sms, 1 << 18, DTYPE_F16);
    snprintf(name, sizeof name,
             "by default, rows of 8 pieces take bulk-loaded clusters in float16 (2^18), not in float32 (2^17)");
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else test_expect(f8 == 0 && h8 == 8, name, "float32 %d, float16 %d", f8, h8);
    snprintf(name, sizeof name, "rows of 65538 floats (no aligned view) never take bulk-loaded clusters");
    test_expect(classifier_bulk_size(sms, 65538, DTYPE_F32) == 0, name, "clusters of %d",
                classifier_bulk_size(sms, 65538, DTYPE_F32));
    const int h32 = classifier_bulk_size(64, 1 << 20, DTYPE_F16), f64 = classifier_bulk_size(64, 1 << 20, DTYPE_F32);
    snprintf(name, sizeof name,
             "by default, 64 rows of 2^20 take 32 bulk-loaded blocks meeting in the workspace in float16, none in float32");
    if (major < 9) test_skip(name, "no bulk copies before sm_90");
    else test_expect(h32 == 32 && f64 == 0, name, "float16 %d, float32 %d", h32, f64);
    snprintf(name, sizeof name, "rows of 2^18 floats (16 pieces of 64 KB) never take bulk-loaded clusters");
    test_expect(classifier_bulk_size(4 * sms, 1 << 18, DTYPE_F32) == 0, name, "clusters of %d",
                classifier_bulk_size(4 * sms, 1 << 18, DTYPE_F32));
}

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        test_skip("lesson 10's kernels", "no GPU");
        return 0;
    }
    test_shapes();
    test_long_row_modes();
    test_special_values();
    test_targets();
    test_finite_differences();
    test_in_place_and_read_pass();
    test_16bit();
    test_short16();
    test_rows_held();
    test_classifier_bulk();
    train_release(); /* memcheck's leak check: nothing left allocated */
    return test_exit_status();
}
