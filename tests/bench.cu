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
 * Every timed kernel is checked first, on a poisoned output, against the
 * float64 reference on BENCH_CHECK_ROWS rows spread over the matrix (the
 * first and last included); `make test` checks every element on its own
 * shapes. A kernel whose one checked run takes longer than BENCH_BUDGET_MS
 * is not timed (20 runs would take too long; one-thread-per-row kernels at
 * long rows), and the table says so.
 *
 * Usage: bench [--out DIR] [--quick]   (--quick: N = 32, 1024, 2^15, 2^20,
 *                                      none between)
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

#ifdef HAVE_CUDNN
#include <cudnn.h>
#endif

#define BENCH_ELEMS (1LL << 26)
#define BENCH_CHECK_ROWS 64
#define BENCH_BUDGET_MS 250.0
#define BENCH_WARMUP 5
#define BENCH_ITERS 20
/* Shapes below this many bytes per tensor run for microseconds, where 20
 * runs are too few: at 1024 x 512 on the H100 the copy's median was 5.5 us
 * in one `make bench` and 8.3 us (min 6.6, max 31.9) in the next. They get
 * BENCH_SMALL_ITERS runs after BENCH_SMALL_WARMUP (not yet measured on a
 * GPU with these counts: see the lesson 8 text). */
#define BENCH_SMALL_BYTES (64LL << 20)
#define BENCH_SMALL_WARMUP 200
#define BENCH_SMALL_ITERS 2000
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

static void softmax_cudnn(const float *x, float *y, long long rows, long long cols,
                          cudaStream_t stream)
{
    (void)rows; (void)cols; /* the descriptor holds the shape */
    const float one = 1.0f, zero = 0.0f;
    CUDNN_CHECK(cudnnSetStream(cudnn, stream));
    CUDNN_CHECK(cudnnSoftmaxForward(cudnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                                    &one, cudnn_desc, x, &zero, cudnn_desc, y));
}

/* cuDNN takes int dimensions: N = rows, C = cols, H = W = 1. */
static int cudnn_shape(long long rows, long long cols)
{
    if (rows > 2147483647LL || cols > 2147483647LL) return 0;
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(cudnn_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                           (int)rows, (int)cols, 1, 1));
    return 1;
}
#endif

/* One row of the sweep's output table (stdout). */
static void print_line(const char *who, long long rows, long long cols, const char *what)
{
    char shape[48];
    snprintf(shape, sizeof shape, "%lld x %lld", rows, cols);
    printf("  %-28s %-18s %s\n", who, shape, what);
}

/* The checked run: poison, run once (timed roughly), verify sampled rows.
 * Returns the run's milliseconds; *ok says whether it matched. */
static double checked_run(softmax_fn fn, rtol_fn rtol, const float *hx, float *hy_rows,
                          float *dx, float *dy, long long rows, long long cols, int *ok)
{
    size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN: unwritten elements fail */
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    CUDA_CHECK(cudaEventRecord(a, 0));
    fn(dx, dy, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(b, 0));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));

    long long count = rows < BENCH_CHECK_ROWS ? rows : BENCH_CHECK_ROWS;
    *ok = 1;
    for (long long i = 0; i < count; i++) {
        long long r = verify_row_at(i, count, rows);
        CUDA_CHECK(cudaMemcpy(hy_rows, dy + r * cols, (size_t)cols * sizeof(float),
                              cudaMemcpyDeviceToHost));
        verify_report rep;
        *ok &= verify_softmax(hx + r * cols, hy_rows, 1, cols, ref_row_softmax, NULL, rtol(cols),
                              &rep);
    }
    return ms;
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
    for (int k = 0; k < NKERNELS; k++) {
        if (KERNELS[k].lesson != lesson_no) continue;
        printf("bench: lesson%d %s, %lld x %lld, one launch\n", lesson_no, KERNELS[k].name, rows,
               cols);
        KERNELS[k].run(dx, dy, rows, cols, 0);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaDeviceSynchronize());
        n++;
    }
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
    fprintf(stderr, "bench: bad argument '%s' (usage: bench [--out DIR] [--quick] | "
                    "bench --only N [--shape RxC])\n", arg);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *out_dir = "docs/results";
    int quick = 0, only = 0;
    long long prof_rows = 16384, prof_cols = 4096;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out_dir = argv[++i];
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            only = atoi(argv[++i]);
            if (only < 1) usage_error(argv[i]);
        } else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            i++;
            if (sscanf(argv[i], "%lldx%lld", &prof_rows, &prof_cols) != 2 || prof_rows < 1 ||
                prof_cols < 1 || prof_rows > (1LL << 40) / prof_cols)
                usage_error(argv[i]);
        } else usage_error(argv[i]);
    }
    require_gpu("bench");
    if (only) return profile_lesson(only, prof_rows, prof_cols);

    provenance p;
    get_provenance(&p);
    char name[128], csv[512];
    slug(p.gpu, name, sizeof name);
    snprintf(csv, sizeof csv, "%s/%s.csv", out_dir, name);
    FILE *f = fopen(csv, "w"); /* a fresh file: one sweep, one provenance */
    if (!f) {
        fprintf(stderr, "bench: cannot write '%s'\n", csv);
        return 2;
    }
    fclose(f);

#ifdef HAVE_CUDNN
    CUDNN_CHECK(cudnnCreate(&cudnn));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&cudnn_desc));
#endif

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

    float *hx = (float *)malloc((size_t)BENCH_ELEMS * sizeof(float));
    float *hy = (float *)malloc((size_t)BENCH_ELEMS * sizeof(float));
    if (!hx || !hy) {
        fprintf(stderr, "bench: out of host memory\n");
        return 1;
    }
    printf("make bench on %s: median of %d runs after %d warm-up (%d after %d below %lld MiB); CSV %s\n",
           p.gpu, BENCH_ITERS, BENCH_WARMUP, BENCH_SMALL_ITERS, BENCH_SMALL_WARMUP, BENCH_SMALL_BYTES >> 20, csv);

    for (int s = 0; s < nshapes; s++) {
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
            } else {
#ifdef HAVE_CUDNN
                if (!cudnn_shape(rows, cols)) continue;
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
    }
    free(hx);
    free(hy);
#ifdef HAVE_CUDNN
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(cudnn_desc));
    CUDNN_CHECK(cudnnDestroy(cudnn));
#endif
    printf("\nwrote %s\n", csv);
    return 0;
}
