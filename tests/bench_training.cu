/* make bench, lesson 10: the training kernels, each against its own bound.
 * On each power-of-two shape: the read-only pass (the loss's bound, a CSV
 * row of lesson 0 named "read"), then the backward (against 1.5 x the
 * copy), log-softmax and the fused classifier (the copy), the loss (the
 * read pass), and the classifier on float16 and bfloat16 logits (the copy
 * of the same 16-bit bytes). In their CSV rows the copy columns hold that
 * bound, so pct_of_copy is the % of the kernel's own bound (as lesson 10's
 * program writes them). Targets as the program's (every 16th row ignored);
 * the classifier sums its loss (TRAIN_SUM: each row's gradient then
 * depends on its row alone), and again as classifier_none without the
 * total (TRAIN_NONE: what QuACK's cross-entropy with its gradient
 * returns, the per-row losses and dx). Checked first on the first rows (at most
 * 2^22 elements, as bench.cu's checked runs) with the rules of lessons/10_training/
 * train_check.h: every row's loss and gradient of those rows; `make test`
 * checks the reduced loss and every element. The classifier's timed runs
 * overwrite their logits with the gradient, as in training. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "bench.h"
#include "../lessons/08_fastest/softmax_fastest.h"
#include "../lessons/10_training/training.h"
#include "train_check.h"

static const int *tr_targets; /* device: M ints */
static train_reduction tr_red = TRAIN_SUM; /* the classifier's: TRAIN_SUM, or TRAIN_NONE for classifier_none */

static void tr_backward(const float *a, float *b, long long rows, long long cols, cudaStream_t st)
{
    softmax_backward(a, a + rows * cols, b, rows, cols, st); /* a: y, then dy */
}
static void tr_log_softmax(const float *a, float *b, long long rows, long long cols, cudaStream_t st)
{
    log_softmax_forward(a, b, rows, cols, st);
}
static void tr_loss(const float *a, float *b, long long rows, long long cols, cudaStream_t st)
{
    cross_entropy_forward(a, tr_targets, b, rows, cols, TRAIN_IGNORE_INDEX, st); /* b: the M losses */
}
static void tr_classifier(const float *a, float *b, long long rows, long long cols, cudaStream_t st)
{
    classifier_fused((float *)a, tr_targets, b, b + rows, rows, cols, TRAIN_IGNORE_INDEX, tr_red, st);
}
static void tr_classifier_16(const void *a, long long lda, void *b, long long ldb, long long rows, long long cols,
                             dtype t, cudaStream_t st)
{
    (void)lda;
    (void)ldb;
    classifier_fused_typed((void *)a, tr_targets, (float *)b, (float *)b + rows, rows, cols, TRAIN_IGNORE_INDEX,
                           tr_red, t, st);
}

/* One kernel: checked by `check` (NULL: the caller checked), timed on the
 * sets, reported against bound (scaled by `scale`), one CSV row. */
static void tr_report(const char *label, const char *name, dtype t, long long rows, long long cols, const timing *tm,
                      const timing *base, double scale, double least, double design, int ok, const char *csv,
                      const provenance *p)
{
    const timing bound = timing_scaled(*base, scale);
    char what[160];
    snprintf(what, sizeof what, "%9.4f ms %8.1f GB/s %6.1f %% of its bound  %s", tm->median_ms,
             least * (double)rows * (double)cols / (tm->median_ms * 1e6), 100.0 * bound.median_ms / tm->median_ms,
             ok ? "checked" : "FAILED the check");
    print_line(label, rows, cols, what);
    csv_append_typed(csv, 10, name, rows, cols, tm, &bound, design, ok ? "yes" : "FAILED", p, t);
}

/* One shape's buffers. Host: the targets, and room for the checked rows
 * (the first crows) as the kernels give them back. Device: the targets
 * and the buffer sets (harness.h), a (y then dy: 2 M N floats; the other
 * kernels' input in its first half) and b (M N floats: an output). */
typedef struct {
    long long rows, cols, crows;
    size_t n, bytes, cn; /* M N, its bytes as floats, crows N */
    int *ht, *dt;
    float *hdy, *hy, *hout, *hl, *hw;
    unsigned short *h16;
    buffer_sets s;
    int warmup, iters;
    const char *csv;
    const provenance *p;
} train_bench;

static void train_bench_open(train_bench *b, long long rows, long long cols, int warmup, int iters, const char *csv,
                             const provenance *p)
{
    b->rows = rows;
    b->cols = cols;
    b->n = (size_t)rows * (size_t)cols;
    b->bytes = b->n * sizeof(float);
    b->crows = BENCH_CHECK_ELEMS / cols;
    if (b->crows > BENCH_CHECK_ROWS) b->crows = BENCH_CHECK_ROWS;
    if (b->crows < 2) b->crows = 2;
    if (b->crows > rows) b->crows = rows;
    b->cn = (size_t)b->crows * (size_t)cols;
    b->warmup = warmup;
    b->iters = iters;
    b->csv = csv;
    b->p = p;
    b->ht = (int *)malloc((size_t)rows * sizeof(int));
    b->hdy = (float *)malloc(b->cn * sizeof(float));
    b->hy = (float *)malloc(b->cn * sizeof(float));
    b->hout = (float *)malloc(b->cn * sizeof(float));
    b->hl = (float *)malloc((size_t)rows * sizeof(float));
    b->h16 = (unsigned short *)malloc(b->n * 2);
    b->hw = (float *)malloc(b->cn * sizeof(float));
    if (!b->ht || !b->hdy || !b->hy || !b->hout || !b->hl || !b->h16 || !b->hw) {
        fprintf(stderr, "bench: out of host memory\n");
        exit(1);
    }
    train_make_targets(b->ht, rows, cols, 1, TRAIN_IGNORE_INDEX);
    CUDA_CHECK(cudaMalloc(&b->dt, (size_t)rows * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(b->dt, b->ht, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice));
    tr_targets = b->dt;
    buffer_sets_open(&b->s, 2 * b->bytes, b->bytes, 2 * b->bytes); /* a set: y and dy (2 M N floats), then dx */
}

static void train_bench_close(train_bench *b)
{
    buffer_sets_close(&b->s);
    CUDA_CHECK(cudaFree(b->dt));
    train_release();
    free(b->ht);
    free(b->hdy);
    free(b->hy);
    free(b->hout);
    free(b->hl);
    free(b->h16);
    free(b->hw);
}

/* The backward against 1.5 x the copy. Every set's inputs: y = softmax(x)
 * (lesson 8 on the GPU) and dy uniform in [-4, 4]. */
static void bench_backward(train_bench *b, const float *hx, const timing *copy)
{
    const long long rows = b->rows, cols = b->cols;
    float *hdy_all = (float *)malloc(b->bytes);
    if (!hdy_all) {
        fprintf(stderr, "bench: out of host memory\n");
        exit(1);
    }
    inputs_fill(hdy_all, rows, cols, INPUT_UNIFORM, 2);
    memcpy(b->hdy, hdy_all, b->cn * sizeof(float));
    for (int k = 0; k < b->s.sets; k++) {
        CUDA_CHECK(cudaMemcpy(b->s.b[k], hx, b->bytes, cudaMemcpyHostToDevice));
        softmax_fastest(b->s.b[k], b->s.a[k], rows, cols, 0);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpy(b->s.a[k] + b->n, hdy_all, b->bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(b->s.b[k], 0xFF, b->bytes));
    }
    free(hdy_all);
    tr_backward(b->s.a[0], b->s.b[0], rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(b->hy, b->s.a[0], b->cn * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(b->hout, b->s.b[0], b->cn * sizeof(float), cudaMemcpyDeviceToHost));
    train_report r;
    train_report_init(&r);
    const int ok = train_check_backward(b->hy, b->hdy, b->hout, b->crows, cols, &r);
    const timing tm = time_runs(tr_backward, b->s.a, b->s.b, b->s.sets, rows, cols, b->warmup, b->iters);
    const int once = train_reads_once(TRAIN_K_BACKWARD, rows, cols, DTYPE_F32);
    tr_report("lesson10 softmax_backward", "softmax_backward", DTYPE_F32, rows, cols, &tm, copy, 1.5, 12.0,
              once ? 12.0 : 20.0, ok, b->csv, b->p);
}

/* Log-softmax and the classifier against the copy, the loss against the
 * read pass: the three kernels that read x. */
static void bench_reads_x(train_bench *b, const float *hx, const timing *copy, const timing *readp)
{
    const long long rows = b->rows, cols = b->cols, crows = b->crows;
    const int once_l = train_reads_once(TRAIN_K_LOG_SOFTMAX, rows, cols, DTYPE_F32);
    const int once_c = train_reads_once(TRAIN_K_CLASSIFIER, rows, cols, DTYPE_F32);
    const softmax_fn fn[4] = {tr_log_softmax, tr_loss, tr_classifier, tr_classifier};
    const char *names[4] = {"log_softmax_forward", "cross_entropy_forward", "classifier_fused", "classifier_none"};
    char label[64];
    for (int f = 0; f < 4; f++) {
        tr_red = f == 3 ? TRAIN_NONE : TRAIN_SUM;
        buffer_sets_run_once(&b->s, fn[f], hx, b->bytes, rows, cols);
        train_report r;
        train_report_init(&r);
        int ok;
        if (f == 0) {
            CUDA_CHECK(cudaMemcpy(b->hout, b->s.b[0], b->cn * sizeof(float), cudaMemcpyDeviceToHost));
            ok = train_check_log_softmax(hx, b->hout, crows, cols, &r);
        } else {
            CUDA_CHECK(cudaMemcpy(b->hl, b->s.b[0], (size_t)crows * sizeof(float), cudaMemcpyDeviceToHost));
            if (f == 1) {
                ok = train_check_loss(hx, b->ht, b->hl, crows, cols, TRAIN_IGNORE_INDEX, &r);
            } else { /* its rows' losses summed as the reduced loss: the sum over all rows is make test's */
                double sum = 0.0;
                for (long long i = 0; i < crows; i++) sum += b->hl[i];
                CUDA_CHECK(cudaMemcpy(b->hout, b->s.a[0], b->cn * sizeof(float), cudaMemcpyDeviceToHost));
                ok = train_check_classifier(hx, b->ht, b->hout, b->hl, (float)sum, crows, cols, TRAIN_IGNORE_INDEX,
                                            f == 3 ? -1 : 0, DTYPE_F32, &r);
            }
        }
        const timing tm = time_runs(fn[f], b->s.a, b->s.b, b->s.sets, rows, cols, b->warmup, b->iters);
        snprintf(label, sizeof label, "lesson10 %s", names[f]);
        tr_report(label, names[f], DTYPE_F32, rows, cols, &tm, f == 1 ? readp : copy, 1.0, f == 1 ? 4.0 : 8.0,
                  f == 1 ? 4.0 : (f == 0 ? once_l : once_c) ? 8.0 : 12.0, ok, b->csv, b->p);
    }
}

/* The classifier on 16-bit logits, summed and without the total
 * (classifier_none), against the copy of the same bytes. */
static void bench_classifier16(train_bench *b, const float *hx)
{
    const long long rows = b->rows, cols = b->cols, crows = b->crows;
    void **A16 = (void **)b->s.a, **B16 = (void **)b->s.b;
    char label[64];
    for (int ti = DTYPE_F16; ti <= DTYPE_BF16; ti++) {
        const dtype t = (dtype)ti;
        storage_narrow(hx, b->h16, b->n, t);
        storage_widen(b->h16, b->hw, b->cn, t);
        for (int k = 0; k < b->s.sets; k++) CUDA_CHECK(cudaMemcpy(b->s.a[k], b->h16, b->n * 2, cudaMemcpyHostToDevice));
        const timing copy16 = time_runs_typed(NULL, t, A16, B16, b->s.sets, rows, cols, b->warmup, b->iters);
        for (int none = 0; none < 2; none++) {
            tr_red = none ? TRAIN_NONE : TRAIN_SUM;
            storage_narrow(hx, b->h16, b->cn, t); /* its checked rows held the gradient read back */
            for (int k = 0; k < b->s.sets; k++) { /* the logits again, the losses poisoned */
                CUDA_CHECK(cudaMemcpy(b->s.a[k], b->h16, b->n * 2, cudaMemcpyHostToDevice));
                CUDA_CHECK(cudaMemset(b->s.b[k], 0xFF, b->bytes));
            }
            tr_classifier_16(b->s.a[0], cols, b->s.b[0], cols, rows, cols, t, 0);
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaMemcpy(b->hl, b->s.b[0], (size_t)crows * sizeof(float), cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(b->h16, b->s.a[0], b->cn * 2, cudaMemcpyDeviceToHost)); /* the gradient, in place */
            storage_widen(b->h16, b->hout, b->cn, t);
            double sum = 0.0;
            for (long long i = 0; i < crows; i++) sum += b->hl[i];
            train_report r;
            train_report_init(&r);
            const int ok = train_check_classifier(b->hw, b->ht, b->hout, b->hl, (float)sum, crows, cols,
                                                  TRAIN_IGNORE_INDEX, none ? -1 : 0, t, &r);
            const timing tm = time_runs_typed(tr_classifier_16, t, A16, B16, b->s.sets, rows, cols, b->warmup,
                                              b->iters);
            const char *name = none ? "classifier_none" : "classifier_fused";
            snprintf(label, sizeof label, "lesson10 %s %s", name, dtype_name(t));
            tr_report(label, name, t, rows, cols, &tm, &copy16, 1.0, 4.0,
                      train_reads_once(TRAIN_K_CLASSIFIER, rows, cols, t) ? 4.0 : 6.0, ok, b->csv, b->p);
        }
    }
}

void bench_training(long long rows, long long cols, const float *hx, int warmup, int iters, const char *csv,
                    const provenance *p)
{
    train_bench b;
    train_bench_open(&b, rows, cols, warmup, iters, csv, p);
    const timing copy = time_runs(NULL, b.s.a, b.s.b, b.s.sets, rows, cols, warmup, iters);
    const timing readp = time_read_pass(b.s.a, b.s.b, b.s.sets, (long long)b.n, warmup, iters);
    char what[160];
    snprintf(what, sizeof what, "%9.4f ms %8.1f GB/s  (4 bytes per element: the loss's bound)", readp.median_ms,
             4.0 * (double)b.n / (readp.median_ms * 1e6));
    print_line("read pass", rows, cols, what);
    csv_append(csv, 0, "read", rows, cols, &readp, &readp, 4.0, "yes", p);
    bench_backward(&b, hx, &copy);
    bench_reads_x(&b, hx, &copy, &readp);
    bench_classifier16(&b, hx);
    train_bench_close(&b);
}

/* bench --only 10 (make profile-lesson10, Nsight Compute): each training
 * kernel launched once on the shape's input, the classifier summed and
 * without the total, on float32 logits, then on float16 ones; the
 * backward's y and dy both the input. Returns how many launched. */
int profile_training(long long rows, long long cols, const float *hx)
{
    static const struct {
        const char *name;
        void (*run)(const float *, float *, long long, long long, cudaStream_t);
        train_reduction red;
    } K[] = {{"softmax_backward", tr_backward, TRAIN_SUM},  {"log_softmax_forward", tr_log_softmax, TRAIN_SUM},
             {"cross_entropy_forward", tr_loss, TRAIN_SUM}, {"classifier_fused", tr_classifier, TRAIN_SUM},
             {"classifier_none", tr_classifier, TRAIN_NONE}};
    const size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(float);
    int *ht = (int *)malloc((size_t)rows * sizeof(int)), *dt;
    void *h16 = malloc(n * 2);
    float *a, *b;
    if (!ht || !h16) {
        fprintf(stderr, "bench: out of host memory\n");
        exit(1);
    }
    train_make_targets(ht, rows, cols, 1, TRAIN_IGNORE_INDEX);
    CUDA_CHECK(cudaMalloc(&dt, (size_t)rows * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dt, ht, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMalloc(&a, 2 * bytes));
    CUDA_CHECK(cudaMalloc(&b, bytes + (size_t)(rows + 1) * sizeof(float))); /* an output, or the losses and total */
    tr_targets = dt;
    int launched = 0;
    for (int k = 0; k < (int)(sizeof K / sizeof K[0]); k++, launched++) {
        CUDA_CHECK(cudaMemcpy(a, hx, bytes, cudaMemcpyHostToDevice)); /* the classifier writes over its logits */
        CUDA_CHECK(cudaMemcpy(a + n, hx, bytes, cudaMemcpyHostToDevice));
        tr_red = K[k].red;
        printf("bench: lesson10 %s f32, %lld x %lld, one launch\n", K[k].name, rows, cols);
        K[k].run(a, b, rows, cols, 0);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    storage_narrow(hx, h16, n, DTYPE_F16);
    for (int none = 0; none < 2; none++, launched++) {
        CUDA_CHECK(cudaMemcpy(a, h16, n * 2, cudaMemcpyHostToDevice));
        tr_red = none ? TRAIN_NONE : TRAIN_SUM;
        printf("bench: lesson10 %s f16, %lld x %lld, one launch\n", none ? "classifier_none" : "classifier_fused",
               rows, cols);
        tr_classifier_16(a, cols, b, cols, rows, cols, DTYPE_F16, 0);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    tr_red = TRAIN_SUM;
    train_release();
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(dt));
    free(ht);
    free(h16);
    return launched;
}
