/* Lesson 10 program: a worked example on [1, 2, 3] (the chain rule through softmax_backward gives the
 * fused classifier's gradient), log-softmax where log(softmax) fails, then each of the four kernels on
 * the options' shape, checked against float64 (train_check.h) and timed against its own bound (K below).
 * The CSV rows (one per kernel) carry each kernel's bound in the copy columns. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

/* Lesson 10's options and the targets on the device, for the kernels' wrappers below. */
static int g_ignore = TRAIN_IGNORE_INDEX;
static train_reduction g_reduction = TRAIN_MEAN;
static int *g_targets;

static void usage_extra(void)
{
    printf("Lesson 10 also takes:\n"
           "  --ignore-index N    rows whose target is N get loss 0 and gradient 0 (default -100)\n"
           "  --reduction R       mean (divide by the rows not ignored, the default), sum or none (no total)\n"
           "  --output FILE.npy   holds the log-softmax\n");
}

static const char *const FLAGS[] = {"--ignore-index", "--reduction"}; /* for lesson_take_flags */
static int take_flag(int f, const char *value, void *, char *err, size_t len)
{
    static const char *const REDUCTIONS[] = {"mean", "sum", "none"}; /* train_reduction's order */
    if (f == 0) return options_int(FLAGS[f], value, INT_MIN, INT_MAX, &g_ignore, err, len);
    const int k = options_choice(FLAGS[f], value, REDUCTIONS, 3, err, len);
    if (k >= 0) g_reduction = (train_reduction)k;
    return k < 0;
}

/* ---- the worked example ---------------------------------------------------- */

static void worked_example(void)
{
    /* managed memory: the GPU writes it, the host reads it after a sync */
    float *m;
    int *t;
    CUDA_CHECK(cudaMallocManaged(&m, 17 * sizeof(float)));
    CUDA_CHECK(cudaMallocManaged(&t, sizeof(int)));
    float *x = m, *ls = m + 3, *y = m + 6, *dy = m + 9, *dx = m + 12, *l = m + 15;
    x[0] = 1.0f, x[1] = 2.0f, x[2] = 3.0f;
    *t = 2;
    log_softmax_forward(x, ls, 1, 3, 0);
    cross_entropy_forward(x, t, l, 1, 3, TRAIN_IGNORE_INDEX, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    const float loss = *l;
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
 * time_runs (common/harness.h) times a softmax_fn(a, b, rows, cols) over rotated buffer sets, each kernel wrapped
 * into that shape. a: 2 M N floats (the backward's y, then dy; the others' input first); b: M N floats and a few
 * more (an output; the losses, then the reduced loss; the read pass's block sums). */
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
    cross_entropy_forward(a, g_targets, b, rows, cols, g_ignore, st);
}
static void run_classifier(const float *a, float *b, long long rows, long long cols, cudaStream_t st)
{
    classifier_fused((float *)a, g_targets, b, b + rows, rows, cols, g_ignore, g_reduction, st); /* in place */
}

/* The four in train_kernel's order; bytes per element. */
static const struct {
    const char *name, *what, *traffic, *bound;
    softmax_fn run;
    double least, once, split; /* the least any such kernel moves; this one, read once or split */
    double scale;              /* the bound's time: scale x the copy or the read pass */
} K[4] = {
    {"softmax_backward", "dx = y * (dy - <y, dy>)", "2 reads + 1 write", "1.5 x copy", run_backward, 12, 12, 20, 1.5},
    {"log_softmax_forward", "x - m - log(d)", "1 read + 1 write", "copy", run_log_softmax, 8, 8, 12, 1.0},
    {"cross_entropy_forward", "(m - x[t]) + log(d) per row", "1 read, M floats out", "read pass", run_loss, 4, 4, 4,
     1.0},
    {"classifier_fused", "loss, and (softmax - one_hot) * dloss over the logits", "1 read + 1 write, in place",
     "copy", run_classifier, 8, 8, 12, 1.0},
};

/* On the host: x (generated or --input), the backward's y = softmax(x) (float64, rounded: what a forward
 * gives) then dy uniform in [-4, 4], the targets (every 16th row ignored), and room for what comes back. */
typedef struct {
    long long rows, cols;
    size_t n;
    float *x, *ydy, *out, *losses; /* ydy: 2 M N, out: M N, losses: M then the reduced loss; one block */
    int *targets;
} inputs;

static void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (!p) lesson_fail_usage(&LESSON, "out of host memory for this shape");
    return p;
}

static void make_inputs(inputs *in, const options *o)
{
    const long long rows = o->rows, cols = o->cols;
    const size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(float);
    char err[512];
    in->rows = rows, in->cols = cols, in->n = n;
    if (o->input_path && npy_read(o->input_path, &in->x, &in->rows, &in->cols, err, sizeof err) != 0)
        lesson_fail_usage(&LESSON, err);
    if (!o->input_path) {
        in->x = (float *)host_alloc(bytes);
        inputs_fill(in->x, rows, cols, o->kind, o->seed);
    }
    in->ydy = (float *)host_alloc(3 * bytes + ((size_t)rows + 1) * sizeof(float));
    in->out = in->ydy + 2 * n;
    in->losses = in->out + n;
    in->targets = (int *)host_alloc((size_t)rows * sizeof(int));
    train_forward_rows(ref_softmax_row, in->x, in->ydy, rows, cols);
    inputs_fill(in->ydy + n, rows, cols, INPUT_UNIFORM, o->seed + 1);
    train_make_targets(in->targets, rows, cols, o->seed, g_ignore);
}

/* Kernel k: its input into every buffer set, the outputs poisoned, one run on set 0, its outputs back and
 * checked (unless --no-check), then, off the emulator, timed against its bound. Returns 1 if it passed. */
static int measure(int k, inputs *in, buffer_sets *bs, const options *o, const provenance *p)
{
    const long long rows = in->rows, cols = in->cols;
    const size_t bytes = in->n * sizeof(float);
    buffer_sets_run_once(bs, K[k].run, k == 0 ? in->ydy : in->x, k == 0 ? 2 * bytes : bytes, rows, cols);
    CUDA_CHECK(cudaMemcpy(in->out, k == 3 ? bs->a[0] : bs->b[0], bytes, cudaMemcpyDeviceToHost)); /* in place */
    CUDA_CHECK(cudaMemcpy(in->losses, bs->b[0], ((size_t)rows + 1) * sizeof(float), cudaMemcpyDeviceToHost));
    train_report rep; /* against the float64 reference, unless --no-check */
    train_report_init(&rep);
    int pass = 1;
    if (o->check && k == 0) pass = train_check_backward(in->ydy, in->ydy + in->n, in->out, rows, cols, &rep);
    else if (o->check && k == 1) pass = train_check_log_softmax(in->x, in->out, rows, cols, &rep);
    else if (o->check && k == 2) pass = train_check_loss(in->x, in->targets, in->losses, rows, cols, g_ignore, &rep);
    else if (o->check)
        pass = train_check_classifier(in->x, in->targets, in->out, in->losses, in->losses[rows], rows, cols, g_ignore,
                                      g_reduction == TRAIN_NONE ? -1 : g_reduction == TRAIN_MEAN, DTYPE_F32, &rep);
    char check[700], desc[600], err[512];
    train_describe(&rep, rows, cols, desc, sizeof desc);
    if (o->check) snprintf(check, sizeof check, "%s (%s)", pass ? "PASS" : "FAIL", desc);
    else snprintf(check, sizeof check, "not checked (--no-check)");
    if (k == 1 && o->output_path && npy_write(o->output_path, in->out, rows, cols, err, sizeof err) != 0)
        lesson_fail_usage(&LESSON, err);

    const int once = train_reads_once((train_kernel)k, rows, cols, DTYPE_F32);
    const double design = once ? K[k].once : K[k].split;
    printf("\n  kernel         %s: %s\n", K[k].name, K[k].what);
    printf("  path           %s\n", train_path_name((train_kernel)k, rows, cols, DTYPE_F32));
    printf("  design traffic %s = %g bytes per element\n", once ? K[k].traffic : "inputs read twice (split)", design);
    timing t = {0, 0, 0, 0}, bound = t; /* on the CPU emulator the CSV row leaves them out */
#ifdef CUDA_EMU
    printf("  time           not measured: the kernel ran on the CPU emulator, where timings are "
           "not meaningful (run on a GPU for them)\n");
#else
    t = time_runs(K[k].run, bs->a, bs->b, bs->sets, rows, cols, o->warmup, o->iters);
    const timing base = k == 2 ? time_read_pass(bs->a, bs->b, bs->sets, (long long)in->n, o->warmup, o->iters)
                               : time_runs(NULL, bs->a, bs->b, bs->sets, rows, cols, o->warmup, o->iters);
    bound = timing_scaled(base, K[k].scale);
    printf("  time           %.4f ms median (min %.4f, max %.4f, %d runs after %d warm-up)\n", t.median_ms, t.min_ms,
           t.max_ms, t.runs, o->warmup);
    printf("  effective      %.1f GB/s  (%g bytes per element / time: the least such a kernel moves)\n",
           K[k].least * in->n / (t.median_ms * 1e6), K[k].least);
    printf("  bound          %.4f ms  (%s, same process)\n", bound.median_ms, K[k].bound);
    printf("  %% of bound     %.1f %%\n", 100.0 * bound.median_ms / t.median_ms);
#endif
    if (o->csv_path)
        csv_append(o->csv_path, 10, K[k].name, rows, cols, &t, &bound, design,
                   o->check ? (pass ? "yes" : "FAILED") : "no", p);
    printf("  check          %s\n", check);
    return pass;
}

int main(int argc, char **argv)
{
    argc = lesson_take_flags(&LESSON, argc, argv, FLAGS, 2, take_flag, NULL, usage_extra);
    options o;
    lesson_init(&LESSON, &o, argc, argv);
    worked_example();

    inputs in;
    make_inputs(&in, &o);
    /* the buffer sets as "measuring" says (rotated as for 1.5 M N floats a tensor), and the targets */
    buffer_sets bs;
    buffer_sets_open(&bs, 2 * in.n * sizeof(float),
                     (in.n + (size_t)in.rows + 1 + (size_t)read_pass_blocks((long long)in.n)) * sizeof(float),
                     in.n * sizeof(float) * 3 / 2);
    CUDA_CHECK(cudaMalloc(&g_targets, (size_t)in.rows * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(g_targets, in.targets, (size_t)in.rows * sizeof(int), cudaMemcpyHostToDevice));

    provenance p;
    get_provenance(&p);
    lesson_print_header(&LESSON, &o, &p, DTYPE_F32, bs.sets);
    printf("  targets        from the seed, every 16th row the ignore index %d; reduction %s\n", g_ignore,
           g_reduction == TRAIN_MEAN ? "mean" : "sum");
    int status = 0;
    for (int k = 0; k < 4; k++)
        if (!measure(k, &in, &bs, &o, &p)) status = 1;

    buffer_sets_close(&bs);
    CUDA_CHECK(cudaFree(g_targets));
    train_release();
    free(in.x);
    free(in.ydy);
    free(in.targets);
    return status;
}
