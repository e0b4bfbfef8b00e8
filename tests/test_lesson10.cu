/* Lesson 10's kernels: softmax backward, log-softmax, the cross-entropy
 * loss and the fused classifier (lessons/10_training/training.h).
 *
 *   - Every kernel on every element against the float64 reference
 *     (common/reference.h), outputs poisoned with NaN first, on shapes from
 *     1 x 1 to rows longer than 2^18, row lengths on both sides of every
 *     class boundary, aligned (float4) and not; rows past the registers
 *     both on chip across blocks and split (train_set_long_rows), with
 *     pieces all in registers and with a shared-memory part;
 *   - special values: -inf entries, a row of only -inf, NaN, +inf, +-3e38,
 *     in rows in registers and in long rows in every long-row mode;
 *   - targets: ignore_index rows (default -100, and one inside [0, N)),
 *     targets out of range (the documented NaN loss and NaN gradient row),
 *     every row ignored, the three reductions (none: the total left as
 *     poisoned), the gradient in place; and on
 *     every path (each long-row mode asserted to take the path it names,
 *     the register paths, every storage type): targets in the first,
 *     middle and last piece, out of range, ignore_index = -100, 0, N - 1
 *     and -7 (tests/test_lesson10_rules.h);
 *   - the gradient's real specification: central differences in float64
 *     of the float64 loss, and of sum(dy * softmax(x)), match the kernels'
 *     gradients;
 *   - the read-only pass that bounds the loss reads every element;
 *   - the 16-bit classifier (float16, bfloat16 logits, gradient in place),
 *     and the classifier's bulk-loaded clusters: tests/test_lesson10_classifier.h;
 *   - the loss and the classifier on peeled rows (odd N, logits off 16
 *     bytes), every path and type: tests/test_lesson10_peel.h.
 *
 * Element rule and tolerances: lessons/10_training/train_check.h, shared
 * with the program and the exercise; how each kernel is run and checked:
 * tests/test_lesson10_checks.h. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "device/fastest_paths.h" /* FX_BULK_MAX_C: path 3b's largest cluster */
#include "../lessons/10_training/training.h"
#include "train_check.h"
#include "../tests/test.h"
#include "test_lesson10_checks.h"     /* running and checking each kernel; special rows */
#include "test_lesson10_classifier.h" /* the classifier's 16-bit and bulk-loaded paths */
#include "test_lesson10_rules.h"      /* the target rules on every path */
#include "test_lesson10_paths.h"      /* each kernel takes the path it should */
#include "test_lesson10_peel.h"       /* the loss and the classifier on peeled rows */

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
             rows, cols, train_path_name(TRAIN_K_BACKWARD, rows, cols, DTYPE_F32));
    check_backward(name, x, dy, rows, cols, 0);
    snprintf(name, sizeof name, "log_softmax_forward matches x - m - log d on every element at %lld x %lld (%s)",
             rows, cols, train_path_name(TRAIN_K_LOG_SOFTMAX, rows, cols, DTYPE_F32));
    check_log_softmax(name, x, rows, cols);
    snprintf(name, sizeof name,
             "cross_entropy_forward gives logsumexp - x[t] per row at %lld x %lld, every 5th row ignored (%s)",
             rows, cols, train_path_name(TRAIN_K_LOSS, rows, cols, DTYPE_F32));
    check_loss(name, x, t, rows, cols, TRAIN_IGNORE_INDEX);
    const char *path = train_path_name(TRAIN_K_CLASSIFIER, rows, cols, DTYPE_F32);
    snprintf(name, sizeof name,
             "classifier_fused (mean) writes (softmax - one_hot) / count over the logits, every element, at %lld x %lld (%s)",
             rows, cols, path);
    check_classifier(name, x, t, rows, cols, TRAIN_IGNORE_INDEX, TRAIN_MEAN, DTYPE_F32);
    if (s % 3 == 0 || cols > TRAIN_REG_MAX_COLS) {
        snprintf(name, sizeof name, "classifier_fused (sum) gives dloss = 1 per row and the summed loss at %lld x %lld (%s)",
                 rows, cols, path);
        check_classifier(name, x, t, rows, cols, TRAIN_IGNORE_INDEX, TRAIN_SUM, DTYPE_F32);
    }
    if (s % 3 == 1 || cols > TRAIN_REG_MAX_COLS) {
        snprintf(name, sizeof name, "classifier_fused (none) gives every row's loss and dloss = 1, no total, at %lld x "
                 "%lld (%s)", rows, cols, path);
        check_classifier(name, x, t, rows, cols, TRAIN_IGNORE_INDEX, TRAIN_NONE, DTYPE_F32);
    }
    if (cols > TRAIN_REG_MAX_COLS && s % 2 == 0) {
        snprintf(name, sizeof name, "classifier_fused_typed (f16 logits) at %lld x %lld (%s)", rows, cols,
                 train_path_name(TRAIN_K_CLASSIFIER, rows, cols, DTYPE_F16));
        check_classifier(name, x, t, rows, cols, TRAIN_IGNORE_INDEX, TRAIN_MEAN, DTYPE_F16);
    }
    free(x);
    free(dy);
    free(t);
}

/* Whether log-softmax's rows go to clusters in the long-row mode set now. */
static int clustered_now(long long rows, long long cols)
{
    return train_plan(TRAIN_K_LOG_SOFTMAX, rows, cols, DTYPE_F32).path == FASTEST_CLUSTER;
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
            const int clustered = clustered_now(rows, cols);
            train_set_long_rows(clustered ? TRAIN_LONG_GRID : TRAIN_LONG_CLUSTER);
            if (clustered || clustered_now(rows, cols)) check_shape(s);
            train_set_long_rows(TRAIN_LONG_SPLIT);
            check_shape(s);
            train_set_long_rows(TRAIN_LONG_AUTO);
        }
    }
}

/* ---- special values (the rows: test_lesson10_checks.h) -------------------- */

/* The long-row modes, for special rows on every path of a long row. */
static const train_long_rows SPECIAL_MODES[] = {TRAIN_LONG_AUTO, TRAIN_LONG_SPLIT, TRAIN_LONG_GRID, TRAIN_LONG_CLUSTER};
static const char *SPECIAL_MODE_NAMES[] = {"", ", TRAIN_LONG_SPLIT", ", TRAIN_LONG_GRID", ", TRAIN_LONG_CLUSTER"};

/* Special rows (test_lesson10_checks.h) for every kernel, at N = 20000
 * in every long-row mode. */
static void special_rows_at(long long n, int mode)
{
    char name[256];
    const char *mn = SPECIAL_MODE_NAMES[mode];
    for (int r = 0; r < NSPECIAL; r++) {
        /* 3 rows: the special one between two normal rows, which must not notice it */
        float *x = (float *)malloc(3 * n * sizeof(float)), *dy = (float *)malloc(3 * n * sizeof(float));
        int t[3] = {1, 0, 2};
        inputs_fill(x, 3, n, INPUT_NORMAL, 800 + r);
        inputs_fill(dy, 3, n, INPUT_UNIFORM, 900 + r);
        t[1] = special_row(x + n, n, r);
        snprintf(name, sizeof name, "special values (%s, N = %lld%s): softmax_backward of its softmax is the reference's",
                 SPECIAL_NAMES[r], n, mn);
        check_backward(name, x, dy, 3, n, 0);
        snprintf(name, sizeof name, "special values (%s, N = %lld%s): log_softmax_forward is the reference's",
                 SPECIAL_NAMES[r], n, mn);
        check_log_softmax(name, x, 3, n);
        snprintf(name, sizeof name, "special values (%s, N = %lld%s): cross_entropy_forward is the reference's",
                 SPECIAL_NAMES[r], n, mn);
        check_loss(name, x, t, 3, n, TRAIN_IGNORE_INDEX);
        snprintf(name, sizeof name,
                 "special values (%s, N = %lld%s): classifier_fused's gradient and loss are the reference's",
                 SPECIAL_NAMES[r], n, mn);
        check_classifier(name, x, t, 3, n, TRAIN_IGNORE_INDEX, TRAIN_SUM, DTYPE_F32);
        free(x);
        free(dy);
    }
    /* Special values in dy: +inf, -inf and +inf, NaN (y ordinary) */
    for (int v = 0; v < 3; v++) {
        float *x = (float *)malloc(2 * n * sizeof(float)), *dy = (float *)malloc(2 * n * sizeof(float));
        inputs_fill(x, 2, n, INPUT_NORMAL, 950 + v);
        inputs_fill(dy, 2, n, INPUT_UNIFORM, 960 + v);
        if (v == 0) dy[n + 1] = INFINITY;
        if (v == 1) dy[n + 1] = INFINITY, dy[n + n - 1] = -INFINITY;
        if (v == 2) dy[n + n / 2] = NAN;
        snprintf(name, sizeof name, "softmax_backward with %s in dy (N = %lld%s) gives the reference's infinities and NaN",
                 v == 0 ? "+inf" : v == 1 ? "+inf and -inf" : "a NaN", n, mn);
        check_backward(name, x, dy, 2, n, 0);
        free(x);
        free(dy);
    }
}

static void test_special_values(void)
{
    static const long long LENS[] = {8, 100, 5000, 20000};
    for (int l = 0; l < 4; l++) {
        const int modes = LENS[l] > TRAIN_REG_MAX_COLS ? 4 : 1;
        for (int m = 0; m < modes; m++) {
            train_set_long_rows(SPECIAL_MODES[m]);
            special_rows_at(LENS[l], m);
        }
        train_set_long_rows(TRAIN_LONG_AUTO);
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
        for (int red = 0; red < 3; red++) {
            snprintf(name, sizeof name,
                     "every row ignored (%s): gradient 0 everywhere (NaN logits too), reduced loss %s (N = %lld)",
                     RED_NAME[red], red == 2 ? "not written" : red ? "0" : "NaN = 0 / 0, as PyTorch", n);
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
        for (int red = 0; red < 3; red++) {
            snprintf(name, sizeof name,
                     "classifier_fused (%s) at %lld x 5: the count of rows not ignored and the loss sum over many parts",
                     RED_NAME[red], rows);
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
    /* 16-bit rows in registers finish the reduced loss through the loss
     * slots up to 2048 rows (CLS_SLOT_ROWS), and by the last block to
     * count in past it; float rows by the last block always; both with
     * warps of one row (N = 100) and with blocks of one row (N = 1100),
     * every reduction. */
    const long long slot_rows[2] = {2048, 2049}, slot_cols[2] = {100, 1100};
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 2; c++) {
            const long long rows = slot_rows[k], ns = slot_cols[c];
            float *x = (float *)malloc(rows * ns * sizeof(float));
            int *tm = (int *)malloc(rows * sizeof(int));
            inputs_fill(x, rows, ns, INPUT_NORMAL, 1060 + 2 * k + c);
            make_targets(tm, rows, ns, 1064 + 2 * k + c, 3, TRAIN_IGNORE_INDEX);
            for (int red = 0; red < 3; red++) {
                snprintf(name, sizeof name, "classifier_fused (%s) at %lld x %lld: every row and the reduced loss, %s",
                         RED_NAME[red], rows, ns, "added up by the last block to count in");
                check_classifier(name, x, tm, rows, ns, TRAIN_IGNORE_INDEX, (train_reduction)red, DTYPE_F32);
            }
            snprintf(name, sizeof name, "classifier_fused_typed (f16 logits, sum) at %lld x %lld: the reduced loss %s",
                     rows, ns, k ? "added up by the last block to count in" : "through the loss slots");
            check_classifier(name, x, tm, rows, ns, TRAIN_IGNORE_INDEX, TRAIN_SUM, DTYPE_F16);
            free(x);
            free(tm);
        }
    /* Float rows in registers finish the reduced loss in the kernel up to
     * CLS_MAX_BLOCKS blocks and in a second launch over the blocks' parts
     * past it: blocks of one row (N = 1040), 4096 and 4097 of them, both
     * reductions, every fourth row ignored. (Rows on chip, counted in
     * row by row, are the long-row rules' cases: tests/test_lesson10_rules.h.) */
    const long long nc = 1040, block_rows[2] = {4096, 4097};
    for (int k = 0; k < 2; k++)
        for (int red = 0; red < 3; red++) {
            const long long rows = block_rows[k];
            snprintf(name, sizeof name, "classifier_fused (%s) at %lld x %lld: every row and the reduced loss, "
                     "finished %s (%s)", RED_NAME[red], rows, nc, k ? "by a second launch" : "in the kernel",
                     train_path_name(TRAIN_K_CLASSIFIER, rows, nc, DTYPE_F32));
            check_classifier_drawn(name, rows, nc, 1054 + k, 4, (train_reduction)red, DTYPE_F32);
        }
    /* Rows sharing path 1's blocks, past 4096 of them (600000 rows of 4:
     * 128 a block): the blocks' parts, added up by a second launch. */
    for (int red = 0; red < 3; red++) {
        snprintf(name, sizeof name, "classifier_fused (%s) at 600000 x 4: every row and the reduced loss over 4688 "
                 "blocks' parts (%s)", RED_NAME[red], train_path_name(TRAIN_K_CLASSIFIER, 600000, 4, DTYPE_F32));
        check_classifier_drawn(name, 600000, 4, 1058, 4, (train_reduction)red, DTYPE_F32);
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
        double *xd = (double *)malloc(n * sizeof(double));
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
                const double fd = train_central(fd_loss, &c, xd, e), err = fabs((double)g[e] - fd);
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

        train_forward_rows(ref_softmax_row, x, y, rows, cols);
        float *dyd = (float *)dev_copy_of(y, n * sizeof(float)), *ddy = (float *)dev_copy_of(dy, n * sizeof(float));
        float *ddx = (float *)dev_poisoned(n * sizeof(float));
        softmax_backward(dyd, ddy, ddx, rows, cols, 0);
        CUDA_CHECK_LAUNCH();
        to_host(g, ddx, n * sizeof(float));
        const fd_ctx c = {t, dy, rows, cols, 0};
        double worst = 0.0;
        int ok = 1;
        for (size_t e = 0; e < n; e += step) {
            const double fd = train_central(fd_dot, &c, xd, e), err = fabs((double)g[e] - fd);
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

int main(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        test_skip("lesson 10's kernels", "no GPU");
        return 0;
    }
    test_shapes();
    test_ops_engine_paths();
    test_ops_peeled_plans();
    test_classifier_held_plans();
    test_backward_engine_paths();
    test_special_values();
    test_targets();
    test_target_rules();
    test_finite_differences();
    test_in_place_and_read_pass();
    test_16bit();
    test_short16();
    test_rows_held();
    test_rows_held_warp();
    test_classifier_bulk();
    test_peeled_rows();
    train_release(); /* memcheck's leak check: nothing left allocated */
    return test_exit_status();
}
