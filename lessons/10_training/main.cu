/* Lesson 10 program: the four kernels of a classifier's last layer in
 * training. A worked example on [1, 2, 3] (the chain rule through
 * softmax_backward gives the fused classifier's gradient), log-softmax
 * where log(softmax) fails, then each kernel on the options' shape:
 * checked against the float64 reference on every element (train_check.h),
 * timed, and put against its own bound, measured in the same process:
 *
 *   softmax_backward      12 bytes per element  1.5 x a device-to-device copy
 *   log_softmax_forward    8                    a copy
 *   cross_entropy_forward  4 (reads only)       a read-only pass (harness.h)
 *   classifier_fused       8 (in place)         a copy
 *
 * Options of every lesson, plus --ignore-index N (default -100),
 * --reduction mean|sum (default mean), --target T (every row's target;
 * default: a column drawn from the seed for each row, every 16th row the
 * ignore index), --long-rows on-chip|grid|cluster|bulk|split (how rows past
 * 16384 run) and --logits f32|f16|bf16 (the classifier's logits and
 * gradient in that storage type, timed against a copy of the same bytes;
 * the other three kernels are float32 only).
 * --output writes the log-softmax. The CSV rows (one per
 * kernel) carry each kernel's bound in the copy columns. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "npy.h"
#include "reference.h"
#include "training.h"
#include "train_check.h"

static const lesson LESSON = {
    10, "training",
    "softmax in training: the backward, log-softmax, the loss, and the fused classifier that never stores softmax",
    "per kernel", 8.0, NULL, verify_rtol,
    16384, 4096,
};

/* ---- lesson 10's own options ---------------------------------------------- */

typedef struct {
    int ignore_index;
    train_reduction reduction;
    int target, target_set;
    train_long_rows long_rows;
    dtype logits; /* the classifier's storage type */
} train_options;

static void usage_extra(void)
{
    printf("Lesson 10 also takes:\n"
           "  --ignore-index N    rows whose target is N get loss 0 and gradient 0 (default -100)\n"
           "  --reduction R       mean (divide by the rows not ignored, the default) or sum\n"
           "  --target T          every row's target (0 to cols - 1, or the ignore index); by default\n"
           "                      each row's is drawn from --seed, and every 16th row is ignored\n"
           "  --long-rows L       rows past 16384 floats: on-chip (across blocks, read once, in a cluster\n"
           "                      per row where that pays: the default), grid (on chip, never in clusters),\n"
           "                      cluster (in clusters wherever they fit), bulk (the classifier's clusters\n"
           "                      loaded by bulk copies wherever they fit) or split (read twice), to compare\n"
           "  --logits TYPE       the classifier's logits and gradient: f32 (the default), f16 or bf16\n"
           "                      (lesson 9's storage, float32 arithmetic), timed against a copy of\n"
           "                      the same bytes\n"
           "  --output FILE.npy   holds the log-softmax\n");
}

static void fail_usage(const char *msg, const char *value)
{
    fprintf(stderr, "lesson10: %s%s%s\n", msg, value ? " " : "", value ? value : "");
    exit(2);
}

/* Takes lesson 10's flags out of argv (the rest goes to the common
 * parser); returns the new argc. */
static int parse_train_options(int argc, char **argv, train_options *t)
{
    static const char *const FLAGS[] = {"--ignore-index", "--reduction", "--target", "--long-rows", "--logits"};
    static const char *const REDUCTIONS[] = {"mean", "sum"}; /* train_reduction's order */
    static const char *const LONG[] = {"on-chip", "split", "grid", "cluster", "bulk"}; /* train_long_rows' */
    static const char *const LOGITS[] = {"f32", "f16", "bf16"};                         /* dtype's */
    *t = (train_options){TRAIN_IGNORE_INDEX, TRAIN_MEAN, 0, 0, TRAIN_LONG_AUTO, DTYPE_F32};
    char err[200];
    int out = 1, k = 0;
    for (int i = 1; i < argc; i++) {
        const char *value;
        /* a negative number is a value here (--ignore-index -100), another flag is not */
        const int f = options_take(argc, argv, &i, FLAGS, 5, &value);
        if (f < 0) {
            argv[out++] = argv[i];
            continue;
        }
        if (!value) fail_usage(FLAGS[f], "needs a value");
        const int bad = f == 0   ? options_int(FLAGS[f], value, INT_MIN, INT_MAX, &t->ignore_index, err, sizeof err)
                        : f == 2 ? options_int(FLAGS[f], value, INT_MIN, INT_MAX, &t->target, err, sizeof err)
                        : f == 1 ? (k = options_choice(FLAGS[f], value, REDUCTIONS, 2, err, sizeof err)) < 0
                        : f == 3 ? (k = options_choice(FLAGS[f], value, LONG, 5, err, sizeof err)) < 0
                                 : (k = options_choice(FLAGS[f], value, LOGITS, 3, err, sizeof err)) < 0;
        if (bad) fail_usage(err, NULL);
        if (f == 1) t->reduction = (train_reduction)k;
        if (f == 2) t->target_set = 1;
        if (f == 3) t->long_rows = (train_long_rows)k;
        if (f == 4) t->logits = (dtype)k;
    }
    argv[out] = NULL;
    return out;
}

/* Row i's target: --target, or train_make_targets' (a column from a hash
 * of (seed, i), every 16th row the ignore index). */
static void make_targets(int *t, long long rows, long long cols, const options *o, const train_options *to)
{
    train_make_targets(t, rows, cols, o->seed, to->ignore_index);
    if (to->target_set)
        for (long long i = 0; i < rows; i++) t[i] = to->target;
}

/* ---- the worked example ---------------------------------------------------- */

static void worked_example(void)
{
    /* managed memory: the GPU writes it, the host reads it after a sync */
    float *m, loss;
    int *t;
    CUDA_CHECK(cudaMallocManaged(&m, 17 * sizeof(float)));
    CUDA_CHECK(cudaMallocManaged(&t, sizeof(int)));
    float *x = m, *ls = m + 3, *y = m + 6, *dy = m + 9, *dx = m + 12, *l = m + 15;
    const float x0[3] = {1.0f, 2.0f, 3.0f};
    memcpy(x, x0, sizeof x0);
    *t = 2;
    log_softmax_forward(x, ls, 1, 3, 0);
    cross_entropy_forward(x, t, l, 1, 3, TRAIN_IGNORE_INDEX, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    loss = *l;
    /* the chain rule by hand: L = -log y[t], so dL/dy = -1/y[t] at t, 0 elsewhere */
    for (int j = 0; j < 3; j++) y[j] = expf(ls[j]);
    for (int j = 0; j < 3; j++) dy[j] = j == *t ? -1.0f / y[*t] : 0.0f;
    softmax_backward(y, dy, dx, 1, 3, 0);
    classifier_fused(x, t, l, l + 1, 1, 3, TRAIN_IGNORE_INDEX, TRAIN_SUM, 0); /* over x, in place */
    CUDA_CHECK(cudaDeviceSynchronize());

    printf("The last layer of a classifier on x = [1, 2, 3], target 2\n");
    print_row("log_softmax_forward", ls, 3);
    print_row("softmax = exp of it", y, 3);
    printf("  %-22s %.4f  (= log(e + e^2 + e^3) - 3)\n", "cross_entropy_forward", loss);
    print_row("dL/dy = -1/y[t] at t", dy, 3);
    print_row("softmax_backward", dx, 3);
    print_row("classifier_fused", x, 3);
    printf("  %-22s %.4f\n", "  and its loss", *l);
    printf("  The chain rule through softmax_backward and the fused gradient softmax - one_hot agree;\n"
           "  the fused kernel never forms y, dL/dy or 1/y[t].\n\n");

    /* log(softmax) against log-softmax where exp underflows */
    x[0] = 0.0f, x[1] = -200.0f;
    log_softmax_forward(x, ls, 1, 2, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    const float naive1 = logf(expf(-200.0f) / (1.0f + expf(-200.0f)));
    printf("x = [0, -200]: log(softmax) in float32 gives [0, %g] (exp(-200) underflows to 0);\n"
           "log_softmax_forward gives [%g, %g].\n\n", naive1, ls[0], ls[1]);
    CUDA_CHECK(cudaFree(m));
    CUDA_CHECK(cudaFree(t));
}

/* ---- measuring ------------------------------------------------------------------
 * time_runs (common/harness.h) times a softmax_fn(x, y, rows, cols) over
 * rotated buffer sets; each kernel is wrapped into that shape. Buffer set
 * s: A[s] holds 2 M N floats (the backward's y then dy; the others' input
 * in its first half), B[s] M N floats (an output), S[s] small (losses and
 * the reduced loss, or the read pass's block sums). */
static const int *g_targets; /* device, one set: M ints */
static float **g_small;      /* S[s], picked by the A[s] pointer below */
static float **g_a;
static int g_sets;
static train_options g_to;

static float *small_of(const float *a)
{
    for (int s = 0; s < g_sets; s++)
        if (g_a[s] == a) return g_small[s];
    return g_small[0];
}

static void run_backward(const float *a, float *b, long long rows, long long cols, cudaStream_t st)
{
    softmax_backward(a, a + rows * cols, b, rows, cols, st);
}
static void run_log_softmax(const float *a, float *b, long long rows, long long cols, cudaStream_t st)
{
    log_softmax_forward(a, b, rows, cols, st);
}
static void run_loss(const float *a, float *b, long long rows, long long cols, cudaStream_t st)
{
    (void)b;
    cross_entropy_forward(a, g_targets, small_of(a), rows, cols, g_to.ignore_index, st);
}
static void run_classifier(const float *a, float *b, long long rows, long long cols, cudaStream_t st)
{
    (void)b;
    float *s = small_of(a);
    classifier_fused((float *)a, g_targets, s, s + rows, rows, cols, g_to.ignore_index, g_to.reduction, st);
}

/* The classifier on 16-bit logits (--logits f16 or bf16): A[s] holds them
 * as stored; b, the output buffer of the copy it is timed against, is
 * not used. */
static void run_classifier16(const void *a, long long lda, void *b, long long ldb, long long rows, long long cols,
                             dtype t, cudaStream_t st)
{
    (void)lda;
    (void)b;
    (void)ldb;
    float *s = small_of((const float *)a);
    classifier_fused_typed((void *)a, g_targets, s, s + rows, rows, cols, g_to.ignore_index, g_to.reduction, t, st);
}

typedef struct {
    const char *name, *what;
    softmax_fn run;
    double least_bytes;  /* bytes per element any such kernel moves */
    double design_bytes; /* what this one moves at this N           */
    const char *traffic, *bound;
    double bound_scale;  /* the bound's time = bound_scale x (copy or read pass) */
    int read_bound;      /* 1: the read pass, 0: the copy          */
} kernel_row;

/* What main sets up once for the four kernels: the inputs on the host and
 * the device buffer sets A, B and S (see "measuring" above). */
typedef struct {
    long long rows, cols;
    size_t n, bytes;           /* M N, and M N floats' bytes                     */
    float *x, *ydy, *out;      /* input; the backward's y, then dy; an output    */
    float *small_h;            /* the M losses and the reduced loss              */
    int *targets, *dt;         /* on the host, on the device                     */
    dtype lt;                  /* the classifier's logits (--logits)             */
    void *h16;                 /* 16-bit logits: x as stored (rounded once), and */
    float *hw;                 /* the same widened back, exactly                 */
    int sets, nsmall;          /* buffer sets; floats of each S[s]               */
    float *A[64], *B[64], *S[64];
} train_run;

/* The inputs on the host: x (generated or --input), the backward's y and
 * dy, the targets, and for --logits f16 / bf16 the classifier's input as
 * stored with its widened copy. */
static void make_host_inputs(train_run *r, const options *o, const train_options *to)
{
    const long long rows = o->rows, cols = o->cols;
    const size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(float);
    r->rows = rows, r->cols = cols, r->n = n, r->bytes = bytes;
    r->x = NULL;
    r->ydy = (float *)malloc(2 * bytes);
    r->out = (float *)malloc(bytes);
    r->targets = (int *)malloc((size_t)rows * sizeof(int));
    r->small_h = (float *)malloc(((size_t)rows + 1) * sizeof(float));
    if (!r->ydy || !r->out || !r->targets || !r->small_h) fail_usage("out of host memory for this shape", NULL);
    if (o->input_path) {
        char err[512];
        long long r2, c2;
        if (npy_read(o->input_path, &r->x, &r2, &c2, err, sizeof err) != 0) fail_usage(err, NULL);
    } else {
        r->x = (float *)malloc(bytes);
        if (!r->x) fail_usage("out of host memory for this shape", NULL);
        inputs_fill(r->x, rows, cols, o->kind, o->seed);
    }
    /* the backward's y = softmax(x) (float64, rounded: what a forward
     * gives) and dy uniform in [-4, 4] */
    double *ref = (double *)malloc((size_t)cols * sizeof(double));
    for (long long i = 0; i < rows; i++) {
        ref_softmax_row(r->x + i * cols, ref, cols);
        for (long long j = 0; j < cols; j++) r->ydy[i * cols + j] = (float)ref[j];
    }
    free(ref);
    inputs_fill(r->ydy + n, rows, cols, INPUT_UNIFORM, o->seed + 1);
    make_targets(r->targets, rows, cols, o, to);
    /* --logits f16 / bf16: the classifier's input as stored (x rounded
     * once), and the same widened back, exactly, for its check */
    r->lt = to->logits;
    r->h16 = NULL;
    r->hw = NULL;
    if (r->lt != DTYPE_F32) {
        r->h16 = malloc(n * dtype_size(r->lt));
        r->hw = (float *)malloc(bytes);
        if (!r->h16 || !r->hw) fail_usage("out of host memory for this shape", NULL);
        storage_narrow(r->x, r->h16, n, r->lt);
        storage_widen(r->h16, r->hw, n, r->lt);
    }
}

/* The buffer sets on the device (one on the CPU emulator, which times
 * nothing), and the targets; the wrappers above find them through g_*. */
static void make_device_buffers(train_run *r)
{
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
#ifdef CUDA_EMU
    r->sets = 1;
#else
    r->sets = rotation_sets(r->bytes + r->bytes / 2, free_b); /* 3 M N floats a set */
#endif
    const int blocks = read_pass_blocks((long long)r->n);
    r->nsmall = (int)(r->rows + 1 > blocks ? r->rows + 1 : blocks);
    for (int s = 0; s < r->sets; s++) {
        CUDA_CHECK(cudaMalloc(&r->A[s], 2 * r->bytes));
        CUDA_CHECK(cudaMalloc(&r->B[s], r->bytes));
        CUDA_CHECK(cudaMalloc(&r->S[s], (size_t)r->nsmall * sizeof(float)));
    }
    CUDA_CHECK(cudaMalloc(&r->dt, (size_t)r->rows * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(r->dt, r->targets, (size_t)r->rows * sizeof(int), cudaMemcpyHostToDevice));
    g_targets = r->dt;
    g_small = r->S;
    g_a = r->A;
    g_sets = r->sets;
}

static void free_run(train_run *r)
{
    for (int s = 0; s < r->sets; s++) {
        CUDA_CHECK(cudaFree(r->A[s]));
        CUDA_CHECK(cudaFree(r->B[s]));
        CUDA_CHECK(cudaFree(r->S[s]));
    }
    CUDA_CHECK(cudaFree(r->dt));
    train_release();
    free(r->h16);
    free(r->hw);
    free(r->x);
    free(r->ydy);
    free(r->out);
    free(r->targets);
    free(r->small_h);
}

static void print_header(const train_run *r, const options *o, const train_options *to, const provenance *p)
{
    printf("Lesson %d, %s: %s\n", LESSON.number, LESSON.name, LESSON.shows);
#ifdef CUDA_EMU
    printf("  device         %s\n", p->gpu);
#else
    printf("  GPU            %s (%d SMs, %d MB L2), CUDA %s\n", p->gpu, p->sms, p->l2_bytes >> 20, p->runtime);
#endif
    printf("  shape          %lld x %lld floats, input %s%s; targets %s, ignore index %d, reduction %s\n", r->rows,
           r->cols, o->input_path ? o->input_path : input_kind_name(o->kind),
           r->sets > 1 ? ", rotated over buffer sets so L2 starts cold" : "",
           to->target_set ? "all the same (--target)" : "from the seed, every 16th row ignored", to->ignore_index,
           to->reduction == TRAIN_MEAN ? "mean" : "sum");
    if (r->lt != DTYPE_F32)
        printf("  logits         the classifier's in %s (x rounded once; its check runs on them widened)\n",
               r->lt == DTYPE_F16 ? "float16" : "bfloat16");
}

/* Kernel k once: its inputs into every set, outputs poisoned (NaN), one
 * run on set 0, then (unless --no-check) its output against the float64
 * reference on every element. check: the report's line. Returns 1 if it
 * passed. */
static int run_and_check(const train_run *r, const kernel_row *K, int k, const options *o, const train_options *to,
                         char *check, size_t check_len)
{
    const long long rows = r->rows, cols = r->cols;
    const size_t n = r->n, bytes = r->bytes;
    const dtype lt = r->lt;
    const int typed = k == 3 && lt != DTYPE_F32; /* the classifier on 16-bit logits */
    for (int s = 0; s < r->sets; s++) {
        if (typed) CUDA_CHECK(cudaMemcpy(r->A[s], r->h16, n * dtype_size(lt), cudaMemcpyHostToDevice));
        else CUDA_CHECK(cudaMemcpy(r->A[s], k == 0 ? r->ydy : r->x, k == 0 ? 2 * bytes : bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(r->B[s], 0xFF, bytes));
        CUDA_CHECK(cudaMemset(r->S[s], 0xFF, (size_t)r->nsmall * sizeof(float)));
    }
    if (typed) run_classifier16(r->A[0], cols, r->B[0], cols, rows, cols, lt, 0);
    else K[k].run(r->A[0], r->B[0], rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    if (!o->check) {
        snprintf(check, check_len, "not checked (--no-check)");
        return 1;
    }
    train_report rep;
    train_report_init(&rep);
    int pass;
    if (k == 0) {
        CUDA_CHECK(cudaMemcpy(r->out, r->B[0], bytes, cudaMemcpyDeviceToHost));
        pass = train_check_backward(r->ydy, r->ydy + n, r->out, rows, cols, &rep);
    } else if (k == 1) {
        CUDA_CHECK(cudaMemcpy(r->out, r->B[0], bytes, cudaMemcpyDeviceToHost));
        pass = train_check_log_softmax(r->x, r->out, rows, cols, &rep);
    } else if (k == 2) {
        CUDA_CHECK(cudaMemcpy(r->small_h, r->S[0], (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost));
        pass = train_check_loss(r->x, r->targets, r->small_h, rows, cols, to->ignore_index, &rep);
    } else {
        if (typed) { /* the gradient as stored, widened exactly */
            CUDA_CHECK(cudaMemcpy(r->h16, r->A[0], n * dtype_size(lt), cudaMemcpyDeviceToHost));
            storage_widen(r->h16, r->out, n, lt);
        } else {
            CUDA_CHECK(cudaMemcpy(r->out, r->A[0], bytes, cudaMemcpyDeviceToHost));
        }
        CUDA_CHECK(cudaMemcpy(r->small_h, r->S[0], ((size_t)rows + 1) * sizeof(float), cudaMemcpyDeviceToHost));
        pass = train_check_classifier(typed ? r->hw : r->x, r->targets, r->out, r->small_h, r->small_h[rows], rows,
                                      cols, to->ignore_index, to->reduction == TRAIN_MEAN, lt, &rep);
    }
    char desc[600];
    train_describe(&rep, rows, cols, desc, sizeof desc);
    snprintf(check, check_len, "%s (%s)", pass ? "PASS" : "FAIL", desc);
    return pass;
}

#ifndef CUDA_EMU
/* Kernel k timed against its bound (copy or readp, scaled; for 16-bit
 * logits a copy of the same 16-bit bytes, timed here): the report's lines
 * and the CSV row. *t: its time; returns the bound's. */
static timing time_kernel(train_run *r, const kernel_row *K, int k, const options *o, timing copy, timing readp,
                          const char *verified, const provenance *p, timing *t)
{
    const long long rows = r->rows, cols = r->cols;
    const int typed = k == 3 && r->lt != DTYPE_F32;
    timing bound = K[k].read_bound ? readp : copy;
    void **A16 = (void **)r->A, **B16 = (void **)r->B;
    if (typed) { /* against a copy of the same 16-bit bytes, timed here */
        bound = time_runs_typed(NULL, r->lt, A16, B16, r->sets, rows, cols, o->warmup, o->iters);
        *t = time_runs_typed(run_classifier16, r->lt, A16, B16, r->sets, rows, cols, o->warmup, o->iters);
    } else {
        *t = time_runs(K[k].run, r->A, r->B, r->sets, rows, cols, o->warmup, o->iters);
    }
    bound.median_ms *= K[k].bound_scale;
    bound.min_ms *= K[k].bound_scale;
    bound.max_ms *= K[k].bound_scale;
    printf("  time           %.4f ms median (min %.4f, max %.4f, %d runs after %d warm-up)\n", t->median_ms,
           t->min_ms, t->max_ms, t->runs, o->warmup);
    printf("  effective      %.1f GB/s  (%g bytes per element / time: the least such a kernel moves)\n",
           K[k].least_bytes * r->n / (t->median_ms * 1e6), K[k].least_bytes);
    printf("  bound          %.4f ms  (%s, same process)\n", bound.median_ms, K[k].bound);
    printf("  %% of bound     %.1f %%\n", 100.0 * bound.median_ms / t->median_ms);
    if (o->csv_path)
        csv_append_typed(o->csv_path, 10, K[k].name, rows, cols, t, &bound, K[k].design_bytes, verified, p,
                         typed ? r->lt : DTYPE_F32);
    return bound;
}
#endif

int main(int argc, char **argv)
{
    train_options to;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            atexit(usage_extra); /* printed after the common usage, which lesson_init prints before it exits */
            break;
        }
    argc = parse_train_options(argc, argv, &to);
    options o;
    lesson_init(&LESSON, &o, argc, argv);
    train_set_long_rows(to.long_rows);
    g_to = to;

    const long long rows = o.rows, cols = o.cols;
    if (to.target_set && to.target != to.ignore_index && (to.target < 0 || to.target >= cols)) {
        char buf[200];
        snprintf(buf, sizeof buf, "--target %d is out of range for %lld columns (0 to %lld, or the ignore index %d)",
                 to.target, cols, cols - 1, to.ignore_index);
        fail_usage(buf, NULL);
    }

    worked_example();

    train_run r;
    make_host_inputs(&r, &o, &to);
    make_device_buffers(&r);

    provenance p;
    get_provenance(&p);
    print_header(&r, &o, &to, &p);

    /* ---- the bounds, measured in this process ---- */
    timing copy, readp;
    memset(&copy, 0, sizeof copy);
    memset(&readp, 0, sizeof readp);
#ifndef CUDA_EMU
    copy = time_runs(NULL, r.A, r.B, r.sets, rows, cols, o.warmup, o.iters);
    readp = time_read_pass(r.A, r.S, r.sets, (long long)r.n, o.warmup, o.iters);
    printf("  copy           %.4f ms (cudaMemcpy device to device of M x N floats: 8 bytes per element), %.1f GB/s\n",
           copy.median_ms, 8.0 * r.n / (copy.median_ms * 1e6));
    printf("  read pass      %.4f ms (each float read once, one float per block written: 4 bytes per element), %.1f GB/s\n",
           readp.median_ms, 4.0 * r.n / (readp.median_ms * 1e6));
#endif

    /* once: the row in registers or on chip across blocks; else split */
    const dtype lt = r.lt;
    const int once_b = train_reads_once(TRAIN_K_BACKWARD, rows, cols, DTYPE_F32);
    const int once_l = train_reads_once(TRAIN_K_LOG_SOFTMAX, rows, cols, DTYPE_F32);
    const int once_c = train_reads_once(TRAIN_K_CLASSIFIER, rows, cols, lt);
    const double es = (double)dtype_size(lt); /* the classifier's bytes per element read or written */
    kernel_row K[4] = {
        {"softmax_backward", "dx = y * (dy - <y, dy>)", run_backward, 12.0, once_b ? 12.0 : 20.0,
         once_b ? "2 reads + 1 write" : "4 reads (y and dy twice) + 1 write (split)", "1.5 x copy", 1.5, 0},
        {"log_softmax_forward", "x - m - log(d)", run_log_softmax, 8.0, once_l ? 8.0 : 12.0,
         once_l ? "1 read + 1 write" : "2 reads + 1 write (split)", "copy", 1.0, 0},
        {"cross_entropy_forward", "(m - x[t]) + log(d) per row", run_loss, 4.0, 4.0, "1 read, M floats out",
         "read pass", 1.0, 1},
        {"classifier_fused",
         lt == DTYPE_F32 ? "loss, and (softmax - one_hot) * dloss over the logits"
                         : "loss, and (softmax - one_hot) * dloss over the 16-bit logits",
         run_classifier, 2.0 * es, (once_c ? 2.0 : 3.0) * es,
         once_c ? "1 read + 1 write, in place" : "2 reads + 1 write, in place (split)",
         lt == DTYPE_F32 ? "copy" : "16-bit copy", 1.0, 0},
    };
    int status = 0;
    timing T[4], Bd[4]; /* each kernel's time and its bound's */
    char check[4][700];
    memset(Bd, 0, sizeof Bd);
    for (int k = 0; k < 4; k++) {
        const int pass = run_and_check(&r, K, k, &o, &to, check[k], sizeof check[k]);
        if (!pass) status = 1;
        if (k == 1 && o.output_path) { /* the log-softmax, checked or not */
            char err[512];
            CUDA_CHECK(cudaMemcpy(r.out, r.B[0], r.bytes, cudaMemcpyDeviceToHost));
            if (npy_write(o.output_path, r.out, rows, cols, err, sizeof err) != 0) fail_usage(err, NULL);
        }

        printf("\n  kernel         %s: %s\n", K[k].name, K[k].what);
        printf("  path           %s\n", train_path_name_typed((train_kernel)k, rows, cols, lt)); /* K[] is in train_kernel's order */
        printf("  design traffic %s = %g bytes per element\n", K[k].traffic, K[k].design_bytes);
        memset(&T[k], 0, sizeof T[k]);
#ifdef CUDA_EMU
        printf("  time           not measured: the kernel ran on the CPU emulator, where timings are "
               "not meaningful (run on a GPU for them)\n");
#else
        Bd[k] = time_kernel(&r, K, k, &o, copy, readp, o.check ? (pass ? "yes" : "FAILED") : "no", &p, &T[k]);
#endif
        printf("  check          %s\n", check[k]);
    }
#ifndef CUDA_EMU
    printf("\n  %-22s %6s %10s %9s %-12s %10s  %s\n", "kernel", "B/elem", "time (ms)", "GB/s", "bound", "% of bound",
           "check");
    for (int k = 0; k < 4; k++) {
        const double bms = Bd[k].median_ms;
        printf("  %-22s %6g %10.4f %9.1f %-12s %9.1f %%  %s\n", K[k].name, K[k].design_bytes, T[k].median_ms,
               K[k].least_bytes * r.n / (T[k].median_ms * 1e6), K[k].bound, 100.0 * bms / T[k].median_ms,
               strncmp(check[k], "PASS", 4) == 0 ? "PASS" : strncmp(check[k], "FAIL", 4) == 0 ? "FAIL" : "-");
    }
#endif
    free_run(&r);
    return status;
}
