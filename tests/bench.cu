/* make bench: every softmax kernel of the course over one sweep of shapes,
 * against the device-to-device copy (and cuDNN when it is installed), timed
 * in one process, written to one CSV per GPU.
 *
 * The sweep keeps M x N = 2^26 floats (256 MiB per tensor, far above L2)
 * and walks N = 32 ... 2^26, plus 1024 x 512 (2 MiB: launch-bound and
 * L2-sized; its buffers are rotated so each run starts cold in L2).
 * Between the powers of two it adds N = 1.5 x 2^k and 2^k + 1 for k = 10
 * ... 20 and a few language models' vocabulary sizes, at M = floor(2^26 /
 * N) (so M x N is just under 2^26): a length that is not a power of two
 * can lose speed where its neighbours do not. Only lesson 8's entry point,
 * the copy and cuDNN run there, which keeps `make bench` within minutes.
 *
 * Lesson 9 (16-bit storage) runs on the powers of two and 1024 x 512, for
 * float16 and bfloat16 each: the copy of the same 16-bit bytes, both entry
 * points (softmax_half_fastest, softmax_half_fused) and cuDNN's softmax on
 * CUDNN_DATA_HALF / CUDNN_DATA_BFLOAT16, timed in the same process; their
 * CSV rows say which type in the dtype column (GB/s count 2 bytes per
 * element read and written), every other row is float32. The input is the
 * float32 input of the shape rounded to the type (nearest even), and the
 * reference runs on it widened exactly.
 *
 * Lesson 10 (training) runs there too: a read-only pass of the same floats
 * (lesson 0, "read"), then each of its kernels against its own bound
 * (bench_training below).
 *
 * Every timed kernel is checked first, on a poisoned output, against the
 * float64 reference on up to BENCH_CHECK_ROWS rows spread over the matrix
 * (the first and last included, and no more rows than hold
 * BENCH_CHECK_ELEMS elements: 64 rows of 2^20 would be the whole matrix,
 * checked in float64 on one host core for every kernel); `make test` checks every element on its own
 * shapes. A kernel whose one checked run takes longer than BENCH_BUDGET_MS
 * is not timed (20 runs would take too long; one-thread-per-row kernels at
 * long rows), and the table says so.
 *
 * Usage: bench [--out DIR] [--quick] [--part K/P] [--lesson N] [--cols LIST]
 *                                      (--quick: N = 32, 1024, 2^15, 2^20,
 *                                      none between; --part: the K-th of P
 *                                      equal runs of the sweep's shapes, the
 *                                      first starting the CSV afresh, the
 *                                      others appending: one sweep in P
 *                                      processes, for machines that limit a
 *                                      command's time; --lesson: lesson N's
 *                                      kernels only, each shape's copy still
 *                                      measured, for a quick look after
 *                                      changing one lesson (lesson 8 with
 *                                      cuDNN, its yardstick): give it its own
 *                                      --out, as its CSV holds only those
 *                                      rows; --cols N1,N2,...: only the
 *                                      sweep's shapes of these row lengths)
 *        bench --only N [--shape RxC]  one untimed, unchecked launch of each
 *                                      kernel of lesson N (for `make
 *                                      profile-lessonN`: ncu sees only it) */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "verify.h"
#include "kernels.h"
#include "../lessons/09_half/softmax_half.h"
#include "../lessons/10_training/training.h"
#include "../lessons/10_training/train_check.h"

#ifdef HAVE_CUDNN
#include <cudnn.h>
#endif

/* Each may be given with -D: a dry run of the code on the CPU emulator
 * needs a tiny sweep and few runs. */
#ifndef BENCH_ELEMS
#define BENCH_ELEMS (1LL << 26)
#endif
#define BENCH_CHECK_ROWS 64
#define BENCH_CHECK_ELEMS (1LL << 22)
#define BENCH_BUDGET_MS 250.0
#ifndef BENCH_WARMUP
#define BENCH_WARMUP 5
#define BENCH_ITERS 20
#endif
/* Shapes below this many bytes per tensor run for microseconds, where 20
 * runs are too few: at 1024 x 512 on the H100 the copy's median was 5.5 us
 * in one `make bench` and 8.3 us (min 6.6, max 31.9) in the next. They get
 * BENCH_SMALL_ITERS runs after BENCH_SMALL_WARMUP (not yet measured on a
 * GPU with these counts: see the lesson 8 text). */
#define BENCH_SMALL_BYTES (64LL << 20)
#ifndef BENCH_SMALL_WARMUP
#define BENCH_SMALL_WARMUP 200
#define BENCH_SMALL_ITERS 2000
#endif
#define BENCH_MAX_SHAPES 64

/* Row lengths that language models softmax over (their vocabularies), as
 * points between the powers of two. */
static const long long VOCAB_COLS[] = {
    32000,  /* Llama 2, Mistral 7B */
    50257,  /* GPT-2 */
    128256, /* Llama 3 */
    151936, /* Qwen2 */
};

#ifdef HAVE_CUDNN
/* cuDNN's softmax as a softmax_fn, so it is timed by the same code. The
 * handle and descriptor are set up once per shape, outside the timing. */
static cudnnHandle_t cudnn;
static cudnnTensorDescriptor_t cudnn_desc;

#define CUDNN_CHECK(call)                                                                   \
    do {                                                                                    \
        cudnnStatus_t s_ = (call);                                                          \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                   \
            fprintf(stderr, "%s:%d: cuDNN error: %s\n", __FILE__, __LINE__,                \
                    cudnnGetErrorString(s_));                                               \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

/* A status instead of an exit: a cuDNN without bfloat16 softmax is told
 * apart from an error, and its rows are skipped. */
static cudnnStatus_t cudnn_status;

static void softmax_cudnn_typed(const void *x, long long ldx, void *y, long long ldy, long long rows,
                                long long cols, dtype t, cudaStream_t stream)
{
    (void)ldx; (void)ldy; (void)rows; (void)cols; (void)t; /* the descriptor holds shape and type */
    const float one = 1.0f, zero = 0.0f; /* float scalars for float, half and bfloat16 data alike */
    CUDNN_CHECK(cudnnSetStream(cudnn, stream));
    cudnn_status = cudnnSoftmaxForward(cudnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one,
                                       cudnn_desc, x, &zero, cudnn_desc, y);
}

static void softmax_cudnn(const float *x, float *y, long long rows, long long cols,
                          cudaStream_t stream)
{
    softmax_cudnn_typed(x, cols, y, cols, rows, cols, DTYPE_F32, stream);
    CUDNN_CHECK(cudnn_status);
}

/* cuDNN takes int dimensions: N = rows, C = cols, H = W = 1. */
static int cudnn_shape_typed(long long rows, long long cols, dtype t)
{
    if (rows > 2147483647LL || cols > 2147483647LL) return 0;
    const cudnnDataType_t d = t == DTYPE_F16 ? CUDNN_DATA_HALF : t == DTYPE_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(cudnn_desc, CUDNN_TENSOR_NCHW, d, (int)rows, (int)cols, 1, 1));
    return 1;
}

static int cudnn_shape(long long rows, long long cols) { return cudnn_shape_typed(rows, cols, DTYPE_F32); }
#endif

/* One row of the sweep's output table (stdout). */
static void print_line(const char *who, long long rows, long long cols, const char *what)
{
    char shape[48];
    snprintf(shape, sizeof shape, "%lld x %lld", rows, cols);
    printf("  %-28s %-18s %s\n", who, shape, what);
}

/* The checked run: poison, run once (timed roughly), verify sampled rows.
 * fn (float32) or else tfn on storage type t; hx is the input widened to
 * float, hy_row room for one row as stored, hy_wide for it widened.
 * Returns the run's milliseconds; *ok says whether it matched. */
static double checked_run_any(softmax_fn fn, softmax_typed_fn tfn, dtype t, rtol_fn rtol, const float *hx,
                              void *hy_row, float *hy_wide, void *dx, void *dy, long long rows, long long cols,
                              int *ok)
{
    const size_t es = (size_t)dtype_size(t), bytes = (size_t)rows * (size_t)cols * es;
    CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN in every type: unwritten elements fail */
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    CUDA_CHECK(cudaEventRecord(a, 0));
    if (fn) fn((const float *)dx, (float *)dy, rows, cols, 0);
    else tfn(dx, cols, dy, cols, rows, cols, t, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(b, 0));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));

    const double rt = verify_rtol_storage(t, rtol(cols)), at = verify_atol_storage(t);
    long long count = BENCH_CHECK_ELEMS / cols;
    if (count > BENCH_CHECK_ROWS) count = BENCH_CHECK_ROWS;
    if (count < 2) count = 2;
    if (count > rows) count = rows;
    *ok = 1;
    for (long long i = 0; i < count; i++) {
        long long r = verify_row_at(i, count, rows);
        CUDA_CHECK(cudaMemcpy(hy_row, (const char *)dy + (size_t)r * (size_t)cols * es, (size_t)cols * es,
                              cudaMemcpyDeviceToHost));
        storage_widen(hy_row, hy_wide, (size_t)cols, t);
        verify_report rep;
        *ok &= verify_softmax_atol(hx + r * cols, hy_wide, 1, cols, ref_row_softmax, NULL, rt, at, &rep);
    }
    return ms;
}

static double checked_run(softmax_fn fn, rtol_fn rtol, const float *hx, float *hy_rows,
                          float *dx, float *dy, long long rows, long long cols, int *ok)
{
    return checked_run_any(fn, NULL, DTYPE_F32, rtol, hx, hy_rows, hy_rows, dx, dy, rows, cols, ok);
}

/* Lesson 9's entry points, timed for each 16-bit type. */
static const struct {
    const char *name;
    softmax_typed_fn run;
} HALF_KERNELS[] = {
    {"fastest", softmax_half_fastest},
    {"fused", softmax_half_fused},
};
#define NHALF (int)(sizeof HALF_KERNELS / sizeof HALF_KERNELS[0])

/* One shape in one 16-bit type t: the copy of the same bytes, lesson 9's
 * entry points and cuDNN, each checked, then timed, one CSV row each.
 * hx: the shape's float32 input; hs, hw, hy: host room for it as stored,
 * widened, and for the output (rows x cols elements each). */
static void bench_half(dtype t, long long rows, long long cols, const float *hx, void *hs, float *hw, void *hy,
                       int warmup, int iters, const char *csv, const provenance *p)
{
    const size_t n = (size_t)rows * (size_t)cols, bytes = n * (size_t)dtype_size(t);
    const double es = dtype_size(t);
    const int fused_chunked = cols > HALF_MAX_REGISTER_COLS && cols > half_shared_capacity(t);
    float *hy_wide = (float *)malloc((size_t)cols * sizeof(float)); /* one output row, widened */
    if (!hy_wide) {
        fprintf(stderr, "bench: out of host memory\n");
        exit(1);
    }
    storage_narrow(hx, hs, n, t);
    storage_widen(hs, hw, n, t); /* exact: the reference's input */
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const int sets = rotation_sets(bytes, free_b);
    void *dx[64], *dy[64];
    for (int k = 0; k < sets; k++) {
        CUDA_CHECK(cudaMalloc(&dx[k], bytes));
        CUDA_CHECK(cudaMalloc(&dy[k], bytes));
        CUDA_CHECK(cudaMemcpy(dx[k], hs, bytes, cudaMemcpyHostToDevice));
    }
    char label[64], what[160];
    const timing copy = time_runs_typed(NULL, t, dx, dy, sets, rows, cols, warmup, iters);
    const double copy_gbps = 2.0 * (double)bytes / (copy.median_ms * 1e6);
    snprintf(label, sizeof label, "copy %s", dtype_name(t));
    snprintf(what, sizeof what, "%9.4f ms %8.1f GB/s  (the %s roofline)", copy.median_ms, copy_gbps, dtype_name(t));
    print_line(label, rows, cols, what);
    csv_append_typed(csv, 0, "copy", rows, cols, &copy, &copy, 2.0 * es, "yes", p, t);

    for (int k = 0; k <= NHALF; k++) {
        softmax_typed_fn fn;
        const char *who;
        int lesson_no = 9;
        double bpe = 2.0 * es; /* 1 read + 1 write of the type */
        if (k < NHALF) {
            fn = HALF_KERNELS[k].run;
            who = HALF_KERNELS[k].name;
            if (fn == softmax_half_fastest) /* in the type's bytes: 4 or 6 for 16-bit, the path's */
                bpe = softmax_half_fastest_plan(FASTEST_AUTO, dx[0], cols, dy[0], cols, rows, cols, t).bytes_per_elem;
            else if (fused_chunked)
                bpe = 4.0 * es;
            snprintf(label, sizeof label, "lesson9 %s %s", who, dtype_name(t));
        } else {
#ifdef HAVE_CUDNN
            if (!cudnn_shape_typed(rows, cols, t)) continue;
            fn = softmax_cudnn_typed;
            who = "cudnn";
            lesson_no = 0;
            snprintf(label, sizeof label, "cuDNN %d.%d ACCURATE %s", CUDNN_MAJOR, CUDNN_MINOR, dtype_name(t));
#else
            continue;
#endif
        }
        int ok;
        const double first = checked_run_any(NULL, fn, t, verify_rtol, hw, hy, hy_wide, dx[0], dy[0], rows, cols, &ok);
#ifdef HAVE_CUDNN
        if (k == NHALF && cudnn_status != CUDNN_STATUS_SUCCESS) {
            snprintf(what, sizeof what, "skipped: cuDNN says %s", cudnnGetErrorString(cudnn_status));
            print_line(label, rows, cols, what);
            continue;
        }
#endif
        if (first > BENCH_BUDGET_MS) {
            snprintf(what, sizeof what, "skipped: one run took %.0f ms (budget %.0f ms)%s", first, BENCH_BUDGET_MS,
                     ok ? "" : ", and it FAILED the check");
            print_line(label, rows, cols, what);
            continue;
        }
        const timing tm = time_runs_typed(fn, t, dx, dy, sets, rows, cols, warmup, iters);
        const double gbps = 2.0 * (double)bytes / (tm.median_ms * 1e6);
        snprintf(what, sizeof what, "%9.4f ms %8.1f GB/s %6.1f %% of copy  %s", tm.median_ms, gbps,
                 100.0 * gbps / copy_gbps, ok ? "checked" : "FAILED the check");
        print_line(label, rows, cols, what);
        csv_append_typed(csv, lesson_no, who, rows, cols, &tm, &copy, bpe, ok ? "yes" : "FAILED", p, t);
    }
    for (int k = 0; k < sets; k++) {
        CUDA_CHECK(cudaFree(dx[k]));
        CUDA_CHECK(cudaFree(dy[k]));
    }
    free(hy_wide);
}

/* ---- lesson 10: the training kernels, each against its own bound ----------
 * On each power-of-two shape: the read-only pass (the loss's bound, a CSV
 * row of lesson 0 named "read"), then the backward (against 1.5 x the
 * copy), log-softmax and the fused classifier (the copy), the loss (the
 * read pass), and the classifier on float16 and bfloat16 logits (the copy
 * of the same 16-bit bytes). In their CSV rows the copy columns hold that
 * bound, so pct_of_copy is the % of the kernel's own bound (as lesson 10's
 * program writes them). Targets as the program's (every 16th row ignored);
 * the classifier sums its loss (TRAIN_SUM: each row's gradient then
 * depends on its row alone). Checked first on the first rows (at most
 * 2^22 elements, as above) with the rules of lessons/10_training/
 * train_check.h: every row's loss and gradient of those rows; `make test`
 * checks the reduced loss and every element. The classifier's timed runs
 * overwrite their logits with the gradient, as in training. */
static const int *tr_targets; /* device: M ints */

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
    classifier_fused((float *)a, tr_targets, b, b + rows, rows, cols, TRAIN_IGNORE_INDEX, TRAIN_SUM, st);
}
static void tr_classifier_16(const void *a, long long lda, void *b, long long ldb, long long rows, long long cols,
                             dtype t, cudaStream_t st)
{
    (void)lda;
    (void)ldb;
    classifier_fused_typed((void *)a, tr_targets, (float *)b, (float *)b + rows, rows, cols, TRAIN_IGNORE_INDEX,
                           TRAIN_SUM, t, st);
}

/* One kernel: checked by `check` (NULL: the caller checked), timed on the
 * sets, reported against bound (scaled by `scale`), one CSV row. */
static void tr_report(const char *label, const char *name, dtype t, long long rows, long long cols, const timing *tm,
                      const timing *base, double scale, double least, double design, int ok, const char *csv,
                      const provenance *p)
{
    timing bound = *base;
    bound.median_ms *= scale;
    bound.min_ms *= scale;
    bound.max_ms *= scale;
    char what[160];
    snprintf(what, sizeof what, "%9.4f ms %8.1f GB/s %6.1f %% of its bound  %s", tm->median_ms,
             least * (double)rows * (double)cols / (tm->median_ms * 1e6), 100.0 * bound.median_ms / tm->median_ms,
             ok ? "checked" : "FAILED the check");
    print_line(label, rows, cols, what);
    csv_append_typed(csv, 10, name, rows, cols, tm, &bound, design, ok ? "yes" : "FAILED", p, t);
}

static void bench_training(long long rows, long long cols, const float *hx, int warmup, int iters, const char *csv,
                           const provenance *p)
{
    const size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(float);
    long long crows = BENCH_CHECK_ELEMS / cols; /* the checked rows: the first crows */
    if (crows > BENCH_CHECK_ROWS) crows = BENCH_CHECK_ROWS;
    if (crows < 2) crows = 2;
    if (crows > rows) crows = rows;
    const size_t cn = (size_t)crows * (size_t)cols;
    const int once_b = train_reads_once(TRAIN_K_BACKWARD, rows, cols, DTYPE_F32);
    const int once_l = train_reads_once(TRAIN_K_LOG_SOFTMAX, rows, cols, DTYPE_F32);
    const int once_c = train_reads_once(TRAIN_K_CLASSIFIER, rows, cols, DTYPE_F32);
    int *ht = (int *)malloc((size_t)rows * sizeof(int));
    float *hdy = (float *)malloc(cn * sizeof(float)), *hy = (float *)malloc(cn * sizeof(float));
    float *hout = (float *)malloc(cn * sizeof(float)), *hl = (float *)malloc((size_t)rows * sizeof(float));
    unsigned short *h16 = (unsigned short *)malloc(n * 2);
    float *hw = (float *)malloc(cn * sizeof(float));
    if (!ht || !hdy || !hy || !hout || !hl || !h16 || !hw) {
        fprintf(stderr, "bench: out of host memory\n");
        exit(1);
    }
    train_make_targets(ht, rows, cols, 1, TRAIN_IGNORE_INDEX);
    int *dt;
    CUDA_CHECK(cudaMalloc(&dt, (size_t)rows * sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dt, ht, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice));
    tr_targets = dt;
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const int sets = rotation_sets(2 * bytes, free_b); /* a set: y and dy (2 M N floats), then dx */
    float *A[64], *B[64];
    for (int k = 0; k < sets; k++) {
        CUDA_CHECK(cudaMalloc(&A[k], 2 * bytes));
        CUDA_CHECK(cudaMalloc(&B[k], bytes));
    }
    /* the inputs of every set: x, or for the backward y = softmax(x) (lesson
     * 8 on the GPU) and dy uniform in [-4, 4] */
    float *hdy_all = (float *)malloc(bytes);
    if (!hdy_all) {
        fprintf(stderr, "bench: out of host memory\n");
        exit(1);
    }
    inputs_fill(hdy_all, rows, cols, INPUT_UNIFORM, 2);
    memcpy(hdy, hdy_all, cn * sizeof(float));
    char label[64];
    train_report r;

    const timing copy = time_runs(NULL, A, B, sets, rows, cols, warmup, iters);
    const timing readp = time_read_pass(A, B, sets, (long long)n, warmup, iters);
    char what[160];
    snprintf(what, sizeof what, "%9.4f ms %8.1f GB/s  (4 bytes per element: the loss's bound)", readp.median_ms,
             4.0 * (double)n / (readp.median_ms * 1e6));
    print_line("read pass", rows, cols, what);
    csv_append(csv, 0, "read", rows, cols, &readp, &readp, 4.0, "yes", p);

    /* the backward */
    for (int k = 0; k < sets; k++) {
        CUDA_CHECK(cudaMemcpy(B[k], hx, bytes, cudaMemcpyHostToDevice));
        softmax_fastest(B[k], A[k], rows, cols, 0);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpy(A[k] + n, hdy_all, bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(B[k], 0xFF, bytes));
    }
    free(hdy_all);
    tr_backward(A[0], B[0], rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(hy, A[0], cn * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hout, B[0], cn * sizeof(float), cudaMemcpyDeviceToHost));
    train_report_init(&r);
    int ok = train_check_backward(hy, hdy, hout, crows, cols, &r);
    timing tm = time_runs(tr_backward, A, B, sets, rows, cols, warmup, iters);
    tr_report("lesson10 softmax_backward", "softmax_backward", DTYPE_F32, rows, cols, &tm, &copy, 1.5, 12.0,
              once_b ? 12.0 : 20.0, ok, csv, p);

    /* log-softmax, the loss and the classifier read x */
    const softmax_fn fn[3] = {tr_log_softmax, tr_loss, tr_classifier};
    const char *names[3] = {"log_softmax_forward", "cross_entropy_forward", "classifier_fused"};
    for (int f = 0; f < 3; f++) {
        for (int k = 0; k < sets; k++) {
            CUDA_CHECK(cudaMemcpy(A[k], hx, bytes, cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemset(B[k], 0xFF, bytes));
        }
        fn[f](A[0], B[0], rows, cols, 0);
        CUDA_CHECK_LAUNCH();
        train_report_init(&r);
        if (f == 0) {
            CUDA_CHECK(cudaMemcpy(hout, B[0], cn * sizeof(float), cudaMemcpyDeviceToHost));
            ok = train_check_log_softmax(hx, hout, crows, cols, &r);
        } else {
            CUDA_CHECK(cudaMemcpy(hl, B[0], (size_t)crows * sizeof(float), cudaMemcpyDeviceToHost));
            if (f == 1) {
                ok = train_check_loss(hx, ht, hl, crows, cols, TRAIN_IGNORE_INDEX, &r);
            } else { /* its rows' losses summed as the reduced loss: the sum over all rows is make test's */
                double sum = 0.0;
                for (long long i = 0; i < crows; i++) sum += hl[i];
                CUDA_CHECK(cudaMemcpy(hout, A[0], cn * sizeof(float), cudaMemcpyDeviceToHost));
                ok = train_check_classifier(hx, ht, hout, hl, (float)sum, crows, cols, TRAIN_IGNORE_INDEX, TRAIN_SUM,
                                            DTYPE_F32, &r);
            }
        }
        tm = time_runs(fn[f], A, B, sets, rows, cols, warmup, iters);
        snprintf(label, sizeof label, "lesson10 %s", names[f]);
        tr_report(label, names[f], DTYPE_F32, rows, cols, &tm, f == 1 ? &readp : &copy, 1.0, f == 1 ? 4.0 : 8.0,
                  f == 1 ? 4.0 : (f == 0 ? once_l : once_c) ? 8.0 : 12.0, ok, csv, p);
    }

    /* the classifier on 16-bit logits, against the copy of the same bytes */
    for (int t = DTYPE_F16; t <= DTYPE_BF16; t++) {
        storage_narrow(hx, h16, n, (dtype)t);
        storage_widen(h16, hw, cn, (dtype)t);
        void **A16 = (void **)A, **B16 = (void **)B;
        for (int k = 0; k < sets; k++) {
            CUDA_CHECK(cudaMemcpy(A[k], h16, n * 2, cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemset(B[k], 0xFF, bytes));
        }
        const timing copy16 = time_runs_typed(NULL, (dtype)t, A16, B16, sets, rows, cols, warmup, iters);
        for (int k = 0; k < sets; k++) CUDA_CHECK(cudaMemcpy(A[k], h16, n * 2, cudaMemcpyHostToDevice));
        tr_classifier_16(A[0], cols, B[0], cols, rows, cols, (dtype)t, 0);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpy(hl, B[0], (size_t)crows * sizeof(float), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(h16, A[0], cn * 2, cudaMemcpyDeviceToHost)); /* the gradient, in place */
        storage_widen(h16, hout, cn, (dtype)t);
        double sum = 0.0;
        for (long long i = 0; i < crows; i++) sum += hl[i];
        train_report_init(&r);
        ok = train_check_classifier(hw, ht, hout, hl, (float)sum, crows, cols, TRAIN_IGNORE_INDEX, TRAIN_SUM, (dtype)t,
                                    &r);
        tm = time_runs_typed(tr_classifier_16, (dtype)t, A16, B16, sets, rows, cols, warmup, iters);
        snprintf(label, sizeof label, "lesson10 classifier_fused %s", dtype_name((dtype)t));
        tr_report(label, "classifier_fused", (dtype)t, rows, cols, &tm, &copy16, 1.0, 4.0,
                  train_reads_once(TRAIN_K_CLASSIFIER, rows, cols, (dtype)t) ? 4.0 : 6.0, ok, csv, p);
    }

    for (int k = 0; k < sets; k++) {
        CUDA_CHECK(cudaFree(A[k]));
        CUDA_CHECK(cudaFree(B[k]));
    }
    CUDA_CHECK(cudaFree(dt));
    train_release();
    free(ht);
    free(hdy);
    free(hy);
    free(hout);
    free(hl);
    free(h16);
    free(hw);
}

/* "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3" */
static void slug(const char *name, char *out, size_t len)
{
    size_t k = 0;
    for (const char *c = name; *c && k + 1 < len; c++) {
        if (isalnum((unsigned char)*c)) out[k++] = (char)tolower((unsigned char)*c);
        else if (k > 0 && out[k - 1] != '-') out[k++] = '-';
    }
    while (k > 0 && out[k - 1] == '-') k--;
    out[k] = '\0';
}

/* --only: each kernel of one lesson, launched once on seeded input. */
static int profile_lesson(int lesson_no, long long rows, long long cols)
{
    size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    float *hx = (float *)malloc(bytes), *dx, *dy;
    if (!hx) {
        fprintf(stderr, "bench: out of host memory\n");
        return 1;
    }
    inputs_fill(hx, rows, cols, INPUT_NORMAL, 7);
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMemcpy(dx, hx, bytes, cudaMemcpyHostToDevice));
    int n = 0;
    if (lesson_no == 9) { /* lesson 9's entry points on float16: the same values, rounded */
        void *hs = malloc((size_t)rows * (size_t)cols * 2);
        if (!hs) {
            fprintf(stderr, "bench: out of host memory\n");
            return 1;
        }
        storage_narrow(hx, hs, (size_t)rows * (size_t)cols, DTYPE_F16);
        CUDA_CHECK(cudaMemcpy(dx, hs, (size_t)rows * (size_t)cols * 2, cudaMemcpyHostToDevice));
        free(hs);
        for (int k = 0; k < NHALF; k++, n++) {
            printf("bench: lesson9 %s f16, %lld x %lld, one launch\n", HALF_KERNELS[k].name, rows, cols);
            HALF_KERNELS[k].run(dx, cols, dy, cols, rows, cols, DTYPE_F16, 0);
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaDeviceSynchronize());
        }
    }
    for (int k = 0; k < NKERNELS; k++) {
        if (KERNELS[k].lesson != lesson_no) continue;
        printf("bench: lesson%d %s, %lld x %lld, one launch\n", lesson_no, KERNELS[k].name, rows,
               cols);
        KERNELS[k].run(dx, dy, rows, cols, 0);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaDeviceSynchronize());
        n++;
    }
#ifdef HAVE_CUDNN
    if (lesson_no == 8 && cudnn_shape(rows, cols)) { /* lesson 8's yardstick */
        printf("bench: cuDNN softmax, %lld x %lld, one launch\n", rows, cols);
        softmax_cudnn(dx, dy, rows, cols, 0);
        CUDA_CHECK(cudaDeviceSynchronize());
    }
#endif
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    free(hx);
    if (n == 0) {
        fprintf(stderr, "bench: no kernel of lesson %d in tests/kernels.h\n", lesson_no);
        return 2;
    }
    return 0;
}

static void usage_error(const char *arg)
{
    fprintf(stderr, "bench: bad argument '%s' (usage: bench [--out DIR] [--quick] [--part K/P] [--lesson N] "
                    "[--cols N1,N2,...] | bench --only N [--shape RxC])\n", arg);
    exit(2);
}

/* --cols: a comma list of positive row lengths, nothing else. */
static int cols_list_ok(const char *list)
{
    for (const char *c = list;;) {
        char *end;
        if (!isdigit((unsigned char)*c) || strtoll(c, &end, 10) <= 0) return 0;
        if (*end == '\0') return 1;
        if (*end != ',') return 0;
        c = end + 1;
    }
}

/* --cols: keeps the shapes whose N is in the comma list, in their order;
 * a list that names no length of the sweep is a usage error. */
static int keep_cols(long long shapes[][3], int n, const char *list)
{
    int kept = 0;
    for (int s = 0; s < n; s++) {
        int hit = 0;
        for (const char *c = list; *c && !hit; c = strchr(c, ',') ? strchr(c, ',') + 1 : c + strlen(c))
            hit = strtoll(c, NULL, 10) == shapes[s][1];
        if (hit) memmove(shapes[kept++], shapes[s], sizeof shapes[s]);
    }
    if (!kept) usage_error(list);
    return kept;
}

int main(int argc, char **argv)
{
    const char *out_dir = "docs/results";
    int quick = 0, only = 0, part = 1, parts = 1, lesson = 0;
    const char *cols_only = NULL;
    long long prof_rows = 16384, prof_cols = 4096;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out_dir = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--part") && i + 1 < argc) {
            i++;
            if (sscanf(argv[i], "%d/%d", &part, &parts) != 2 || parts < 1 || part < 1 || part > parts)
                usage_error(argv[i]);
        }
        else if (!strcmp(argv[i], "--lesson") && i + 1 < argc) {
            lesson = atoi(argv[++i]);
            if (lesson < 1 || lesson > 10) usage_error(argv[i]);
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            only = atoi(argv[++i]);
            if (only < 1) usage_error(argv[i]);
        } else if (!strcmp(argv[i], "--cols") && i + 1 < argc) {
            cols_only = argv[++i];
            if (!cols_list_ok(cols_only)) usage_error(cols_only);
        } else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            i++;
            if (sscanf(argv[i], "%lldx%lld", &prof_rows, &prof_cols) != 2 || prof_rows < 1 ||
                prof_cols < 1 || prof_rows > (1LL << 40) / prof_cols)
                usage_error(argv[i]);
        } else usage_error(argv[i]);
    }
    require_gpu("bench");
#ifdef HAVE_CUDNN
    CUDNN_CHECK(cudnnCreate(&cudnn)); /* --only 8 launches cuDNN too */
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&cudnn_desc));
#endif
    if (only) return profile_lesson(only, prof_rows, prof_cols);

    provenance p;
    get_provenance(&p);
    char name[128], csv[512];
    slug(p.gpu, name, sizeof name);
    snprintf(csv, sizeof csv, "%s/%s.csv", out_dir, name);
    FILE *f = fopen(csv, part == 1 ? "w" : "a"); /* a fresh file: one sweep, one provenance */
    if (!f) {
        fprintf(stderr, "bench: cannot write '%s'\n", csv);
        return 2;
    }
    fclose(f);

    /* The shapes, by N: N = 2^5 ... 2^26 at M x N = 2^26, with the points
     * between (shapes[s][2] = 1: lesson 8's entry point only), then 1024 x
     * 512. */
    long long shapes[BENCH_MAX_SHAPES][3];
    int nshapes = 0;
    for (int e = 5; e <= 26; e++) {
        if (quick && e != 5 && e != 10 && e != 15 && e != 20) continue;
        shapes[nshapes][0] = BENCH_ELEMS >> e;
        shapes[nshapes][1] = 1LL << e;
        shapes[nshapes][2] = 0;
        nshapes++;
    }
    if (!quick) {
        long long mid[2 * 11 + sizeof VOCAB_COLS / sizeof VOCAB_COLS[0]];
        int nmid = 0;
        for (int e = 10; e <= 20; e++) {
            mid[nmid++] = 3LL << (e - 1); /* 1.5 x 2^e */
            mid[nmid++] = (1LL << e) + 1;
        }
        for (size_t v = 0; v < sizeof VOCAB_COLS / sizeof VOCAB_COLS[0]; v++) mid[nmid++] = VOCAB_COLS[v];
        for (int b = 0; b < nmid; b++) { /* each in N order among the others */
            int at = nshapes;
            while (at > 0 && shapes[at - 1][1] > mid[b]) {
                memcpy(shapes[at], shapes[at - 1], sizeof shapes[at]);
                at--;
            }
            shapes[at][0] = BENCH_ELEMS / mid[b];
            shapes[at][1] = mid[b];
            shapes[at][2] = 1;
            nshapes++;
        }
    }
    shapes[nshapes][0] = 1024;
    shapes[nshapes][1] = 512;
    shapes[nshapes][2] = 0;
    nshapes++;
    if (cols_only) nshapes = keep_cols(shapes, nshapes, cols_only);

    float *hx = (float *)malloc((size_t)BENCH_ELEMS * sizeof(float));
    float *hy = (float *)malloc((size_t)BENCH_ELEMS * sizeof(float));
    /* lesson 9: the input as stored in 16 bits, widened back, the output */
    void *hs = malloc((size_t)BENCH_ELEMS * 2), *hy16 = malloc((size_t)BENCH_ELEMS * 2);
    float *hw = (float *)malloc((size_t)BENCH_ELEMS * sizeof(float));
    if (!hx || !hy || !hs || !hy16 || !hw) {
        fprintf(stderr, "bench: out of host memory\n");
        return 1;
    }
    printf("make bench on %s: median of %d runs after %d warm-up (%d after %d below %lld MiB); CSV %s\n",
           p.gpu, BENCH_ITERS, BENCH_WARMUP, BENCH_SMALL_ITERS, BENCH_SMALL_WARMUP, BENCH_SMALL_BYTES >> 20, csv);

    const int s_first = (part - 1) * nshapes / parts, s_end = part * nshapes / parts;
    for (int s = s_first; s < s_end; s++) {
        long long rows = shapes[s][0], cols = shapes[s][1];
        const int between = (int)shapes[s][2];
        size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
        inputs_fill(hx, rows, cols, INPUT_NORMAL, 2026 + (unsigned long long)s);

        size_t free_b, total_b;
        CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        int sets = rotation_sets(bytes, free_b);
        float *dx[64], *dy[64];
        for (int k = 0; k < sets; k++) {
            CUDA_CHECK(cudaMalloc(&dx[k], bytes));
            CUDA_CHECK(cudaMalloc(&dy[k], bytes));
            CUDA_CHECK(cudaMemcpy(dx[k], hx, bytes, cudaMemcpyHostToDevice));
        }

        const int small = (long long)bytes < BENCH_SMALL_BYTES;
        const int warmup = small ? BENCH_SMALL_WARMUP : BENCH_WARMUP, iters = small ? BENCH_SMALL_ITERS : BENCH_ITERS;
        timing copy = time_runs(NULL, dx, dy, sets, rows, cols, warmup, iters);
        char what[160];
        snprintf(what, sizeof what, "%9.4f ms %8.1f GB/s  (the roofline)", copy.median_ms,
                 2.0 * (double)bytes / (copy.median_ms * 1e6));
        printf("\n");
        print_line("copy (cudaMemcpy D2D)", rows, cols, what);
        csv_append(csv, 0, "copy", rows, cols, &copy, &copy, 8.0, "yes", &p);

        for (int k = 0; k <= NKERNELS; k++) {
            const char *who;
            softmax_fn fn;
            rtol_fn rtol = verify_rtol;
            int lesson_no = 0;
            double bpe = 8.0;
            char label[64];
            if (k < NKERNELS) {
                const kernel *K = &KERNELS[k];
                if (between && K->run != softmax_fastest) continue;
                if (lesson && K->lesson != lesson) continue;
                snprintf(label, sizeof label, "lesson%d %s", K->lesson, K->name);
                who = K->name;
                fn = K->run;
                rtol = K->rtol;
                lesson_no = K->lesson;
                bpe = K->bytes_per_elem;
                if (K->run == softmax_fastest) /* 8 or 12: the path its dispatcher takes here */
                    bpe = softmax_fastest_plan(FASTEST_AUTO, dx[0], cols, dy[0], cols, rows, cols).bytes_per_elem;
                if (K->max_cols && cols > K->max_cols) {
                    snprintf(what, sizeof what, "skipped: N > %lld is hopeless for this design",
                             K->max_cols);
                    print_line(label, rows, cols, what);
                    continue;
                }
                /* Path 3b forced where it does not fit runs another path:
                 * no row under its name (the dispatcher decides, from the
                 * GPU's shared memory, which rows it takes). */
                if (K->run == softmax_fastest_bulk &&
                    softmax_fastest_plan(FASTEST_BULK, dx[0], cols, dy[0], cols, rows, cols).path != FASTEST_BULK) {
                    print_line(label, rows, cols, "skipped: path 3b does not take this shape");
                    continue;
                }
            } else {
#ifdef HAVE_CUDNN
                if ((lesson && lesson != 8) || !cudnn_shape(rows, cols)) continue; /* lesson 8's yardstick */
                snprintf(label, sizeof label, "cuDNN %d.%d ACCURATE", CUDNN_MAJOR, CUDNN_MINOR);
                who = "cudnn";
                fn = softmax_cudnn;
#else
                continue;
#endif
            }
            int ok;
            double first = checked_run(fn, rtol, hx, hy, dx[0], dy[0], rows, cols, &ok);
            if (first > BENCH_BUDGET_MS) {
                snprintf(what, sizeof what, "skipped: one run took %.0f ms (budget %.0f ms)%s",
                         first, BENCH_BUDGET_MS, ok ? "" : ", and it FAILED the check");
                print_line(label, rows, cols, what);
                continue;
            }
            timing t = time_runs(fn, dx, dy, sets, rows, cols, warmup, iters);
            double gbps = 2.0 * (double)bytes / (t.median_ms * 1e6);
            double copy_gbps = 2.0 * (double)bytes / (copy.median_ms * 1e6);
            snprintf(what, sizeof what, "%9.4f ms %8.1f GB/s %6.1f %% of copy  %s", t.median_ms,
                     gbps, 100.0 * gbps / copy_gbps, ok ? "checked" : "FAILED the check");
            print_line(label, rows, cols, what);
            csv_append(csv, lesson_no, who, rows, cols, &t, &copy, bpe, ok ? "yes" : "FAILED", &p);
        }
        for (int k = 0; k < sets; k++) {
            CUDA_CHECK(cudaFree(dx[k]));
            CUDA_CHECK(cudaFree(dy[k]));
        }
        if (!between) { /* lessons 9 and 10: the powers of two and 1024 x 512 */
            for (int t = DTYPE_F16; t <= DTYPE_BF16 && (!lesson || lesson == 9); t++)
                bench_half((dtype)t, rows, cols, hx, hs, hw, hy16, warmup, iters, csv, &p);
            if (!lesson || lesson == 10) bench_training(rows, cols, hx, warmup, iters, csv, &p);
        }
    }
    free(hx);
    free(hy);
    free(hs);
    free(hy16);
    free(hw);
#ifdef HAVE_CUDNN
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(cudnn_desc));
    CUDNN_CHECK(cudnnDestroy(cudnn));
#endif
    printf("\nwrote %s\n", csv);
    return 0;
}
