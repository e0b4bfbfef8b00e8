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
 * Then the vocabulary shapes of language models as they are trained (M x N
 * up to 2^27; tests/bench_shapes.cu), each beside a neighbour off the vector width
 * (N + 1; GPT-2's own 50257 beside its padded 50304 and 50256): lessons 8, 9 and
 * 10's entry points run there, as at the powers of two, to be held against
 * other libraries' kernels on the shapes those are tuned for.
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
 * (tests/bench_training.cu).
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
 *   --quick: N = 32, 1024, 2^15, 2^20, none between;
 *   --part: the K-th of P equal runs of the sweep's shapes, the first starting
 *     the CSV afresh, the others appending: one sweep in P processes, for
 *     machines that limit a command's time;
 *   --lesson: lesson N's kernels only, each shape's copy still measured, for a
 *     quick look after changing one lesson (lesson 8 with cuDNN, its
 *     yardstick): give it its own --out, as its CSV holds only those rows;
 *   --cols N1,N2,...: only the sweep's shapes of these row lengths.
 *        bench --only N [--shape RxC]: one untimed, unchecked launch of each
 *   kernel of lesson N (for `make profile-lessonN`: ncu sees only it). */
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
#include "bench.h" /* BENCH_CHECK_ROWS, BENCH_CHECK_ELEMS; cuDNN (tests/bench_cudnn.cu) */
#include "../lessons/09_half/softmax_half.h"

#define BENCH_BUDGET_MS 250.0
/* Each may be given with -D: a dry run of the code on the CPU emulator
 * needs few runs (and a tiny sweep: BENCH_ELEMS, tests/bench_shapes.cu). */
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

void print_line(const char *who, long long rows, long long cols, const char *what)
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
    if (lesson_no == 10) n += profile_training(rows, cols, hx);
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

/* The command line (the top of this file lists the options). */
typedef struct {
    const char *out_dir, *cols_only;
    int quick, only, part, parts, lesson;
    long long prof_rows, prof_cols;
} bench_args;

static void parse_args(int argc, char **argv, bench_args *a)
{
    a->out_dir = "docs/results";
    a->cols_only = NULL;
    a->quick = 0, a->only = 0, a->part = 1, a->parts = 1, a->lesson = 0;
    a->prof_rows = 16384, a->prof_cols = 4096;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) a->out_dir = argv[++i];
        else if (!strcmp(argv[i], "--quick")) a->quick = 1;
        else if (!strcmp(argv[i], "--part") && i + 1 < argc) {
            i++;
            if (sscanf(argv[i], "%d/%d", &a->part, &a->parts) != 2 || a->parts < 1 || a->part < 1 ||
                a->part > a->parts)
                usage_error(argv[i]);
        }
        else if (!strcmp(argv[i], "--lesson") && i + 1 < argc) {
            a->lesson = atoi(argv[++i]);
            if (a->lesson < 1 || a->lesson > 10) usage_error(argv[i]);
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            a->only = atoi(argv[++i]);
            if (a->only < 1) usage_error(argv[i]);
        } else if (!strcmp(argv[i], "--cols") && i + 1 < argc) {
            a->cols_only = argv[++i];
            if (!cols_list_ok(a->cols_only)) usage_error(a->cols_only);
        } else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            i++;
            if (sscanf(argv[i], "%lldx%lld", &a->prof_rows, &a->prof_cols) != 2 || a->prof_rows < 1 ||
                a->prof_cols < 1 || a->prof_rows > (1LL << 40) / a->prof_cols)
                usage_error(argv[i]);
        } else usage_error(argv[i]);
    }
}

/* What the sweep runs as float32 kernel k: an entry of tests/kernels.h,
 * or cuDNN for k == NKERNELS. */
typedef struct {
    const char *who;
    softmax_fn fn;
    rtol_fn rtol;
    int lesson_no;
    double bpe;
    char label[64];
} float_entry;

/* Fills e for kernel k at rows x cols; 0 where it does not run there (a
 * line says why where the table would otherwise miss it). */
static int float_entry_at(int k, int entry_only, int lesson, const float *dx0, const float *dy0, long long rows,
                          long long cols, float_entry *e)
{
    char what[160];
    e->rtol = verify_rtol;
    e->lesson_no = 0;
    e->bpe = 8.0;
    if (k < NKERNELS) {
        const kernel *K = &KERNELS[k];
        if (entry_only && K->run != softmax_fastest) return 0;
        if (lesson && K->lesson != lesson) return 0;
        snprintf(e->label, sizeof e->label, "lesson%d %s", K->lesson, K->name);
        e->who = K->name;
        e->fn = K->run;
        e->rtol = K->rtol;
        e->lesson_no = K->lesson;
        e->bpe = K->bytes_per_elem;
        if (K->run == softmax_fastest) /* 8 or 12: the path its dispatcher takes here */
            e->bpe = softmax_fastest_plan(FASTEST_AUTO, dx0, cols, dy0, cols, rows, cols).bytes_per_elem;
        if (K->max_cols && cols > K->max_cols) {
            snprintf(what, sizeof what, "skipped: N > %lld is hopeless for this design",
                     K->max_cols);
            print_line(e->label, rows, cols, what);
            return 0;
        }
        /* Path 3b forced where it does not fit runs another path:
         * no row under its name (the dispatcher decides, from the
         * GPU's shared memory, which rows it takes). */
        if (K->run == softmax_fastest_bulk &&
            softmax_fastest_plan(FASTEST_BULK, dx0, cols, dy0, cols, rows, cols).path != FASTEST_BULK) {
            print_line(e->label, rows, cols, "skipped: path 3b does not take this shape");
            return 0;
        }
        return 1;
    }
#ifdef HAVE_CUDNN
    if ((lesson && lesson != 8) || !cudnn_shape(rows, cols)) return 0; /* lesson 8's yardstick */
    snprintf(e->label, sizeof e->label, "cuDNN %d.%d ACCURATE", CUDNN_MAJOR, CUDNN_MINOR);
    e->who = "cudnn";
    e->fn = softmax_cudnn;
    return 1;
#else
    return 0;
#endif
}

/* One shape in float32: the copy, then every kernel of tests/kernels.h
 * (of --lesson's only) and cuDNN, each checked, then timed, one CSV row
 * each. hx: the shape's input; hy: host room for the checked rows. */
static void bench_float(long long rows, long long cols, int entry_only, int lesson, const float *hx, float *hy,
                        int warmup, int iters, const char *csv, const provenance *p)
{
    size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    int sets = rotation_sets(bytes, free_b);
    float *dx[64], *dy[64];
    for (int k = 0; k < sets; k++) {
        CUDA_CHECK(cudaMalloc(&dx[k], bytes));
        CUDA_CHECK(cudaMalloc(&dy[k], bytes));
        CUDA_CHECK(cudaMemcpy(dx[k], hx, bytes, cudaMemcpyHostToDevice));
    }

    timing copy = time_runs(NULL, dx, dy, sets, rows, cols, warmup, iters);
    char what[160];
    snprintf(what, sizeof what, "%9.4f ms %8.1f GB/s  (the roofline)", copy.median_ms,
             2.0 * (double)bytes / (copy.median_ms * 1e6));
    printf("\n");
    print_line("copy (cudaMemcpy D2D)", rows, cols, what);
    csv_append(csv, 0, "copy", rows, cols, &copy, &copy, 8.0, "yes", p);

    for (int k = 0; k <= NKERNELS; k++) {
        float_entry e;
        if (!float_entry_at(k, entry_only, lesson, dx[0], dy[0], rows, cols, &e)) continue;
        int ok;
        double first = checked_run(e.fn, e.rtol, hx, hy, dx[0], dy[0], rows, cols, &ok);
        if (first > BENCH_BUDGET_MS) {
            snprintf(what, sizeof what, "skipped: one run took %.0f ms (budget %.0f ms)%s",
                     first, BENCH_BUDGET_MS, ok ? "" : ", and it FAILED the check");
            print_line(e.label, rows, cols, what);
            continue;
        }
        timing t = time_runs(e.fn, dx, dy, sets, rows, cols, warmup, iters);
        double gbps = 2.0 * (double)bytes / (t.median_ms * 1e6);
        double copy_gbps = 2.0 * (double)bytes / (copy.median_ms * 1e6);
        snprintf(what, sizeof what, "%9.4f ms %8.1f GB/s %6.1f %% of copy  %s", t.median_ms,
                 gbps, 100.0 * gbps / copy_gbps, ok ? "checked" : "FAILED the check");
        print_line(e.label, rows, cols, what);
        csv_append(csv, e.lesson_no, e.who, rows, cols, &t, &copy, e.bpe, ok ? "yes" : "FAILED", p);
    }
    for (int k = 0; k < sets; k++) {
        CUDA_CHECK(cudaFree(dx[k]));
        CUDA_CHECK(cudaFree(dy[k]));
    }
}

int main(int argc, char **argv)
{
    bench_args a;
    parse_args(argc, argv, &a);
    require_gpu("bench");
#ifdef HAVE_CUDNN
    cudnn_open(); /* --only 8 launches cuDNN too */
#endif
    if (a.only) return profile_lesson(a.only, a.prof_rows, a.prof_cols);

    provenance p;
    get_provenance(&p);
    char name[128], csv[512];
    slug(p.gpu, name, sizeof name);
    snprintf(csv, sizeof csv, "%s/%s.csv", a.out_dir, name);
    FILE *f = fopen(csv, a.part == 1 ? "w" : "a"); /* a fresh file: one sweep, one provenance */
    if (!f) {
        fprintf(stderr, "bench: cannot write '%s'\n", csv);
        return 2;
    }
    fclose(f);

    long long shapes[BENCH_MAX_SHAPES][3];
    int nshapes = sweep_shapes(shapes, a.quick);
    if (a.cols_only) nshapes = keep_cols(shapes, nshapes, a.cols_only);

    size_t most = 0; /* elements of the largest shape */
    for (int s = 0; s < nshapes; s++)
        if ((size_t)(shapes[s][0] * shapes[s][1]) > most) most = (size_t)(shapes[s][0] * shapes[s][1]);
    float *hx = (float *)malloc(most * sizeof(float));
    float *hy = (float *)malloc(most * sizeof(float));
    /* lesson 9: the input as stored in 16 bits, widened back, the output */
    void *hs = malloc(most * 2), *hy16 = malloc(most * 2);
    float *hw = (float *)malloc(most * sizeof(float));
    if (!hx || !hy || !hs || !hy16 || !hw) {
        fprintf(stderr, "bench: out of host memory\n");
        return 1;
    }
    printf("make bench on %s: median of %d runs after %d warm-up (%d after %d below %lld MiB); CSV %s\n",
           p.gpu, BENCH_ITERS, BENCH_WARMUP, BENCH_SMALL_ITERS, BENCH_SMALL_WARMUP, BENCH_SMALL_BYTES >> 20, csv);

    const int s_first = (a.part - 1) * nshapes / a.parts, s_end = a.part * nshapes / a.parts;
    for (int s = s_first; s < s_end; s++) {
        long long rows = shapes[s][0], cols = shapes[s][1];
        const int kind = (int)shapes[s][2];
        size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
        inputs_fill(hx, rows, cols, INPUT_NORMAL, 2026 + (unsigned long long)s);
        const int small = (long long)bytes < BENCH_SMALL_BYTES;
        const int warmup = small ? BENCH_SMALL_WARMUP : BENCH_WARMUP, iters = small ? BENCH_SMALL_ITERS : BENCH_ITERS;
        bench_float(rows, cols, kind != SHAPE_SWEEP, a.lesson, hx, hy, warmup, iters, csv, &p);
        if (kind != SHAPE_BETWEEN) { /* lessons 9 and 10: all but the lengths between */
            for (int t = DTYPE_F16; t <= DTYPE_BF16 && (!a.lesson || a.lesson == 9); t++)
                bench_half((dtype)t, rows, cols, hx, hs, hw, hy16, warmup, iters, csv, &p);
            if (!a.lesson || a.lesson == 10) bench_training(rows, cols, hx, warmup, iters, csv, &p);
        }
    }
    free(hx);
    free(hy);
    free(hs);
    free(hy16);
    free(hw);
#ifdef HAVE_CUDNN
    cudnn_close();
#endif
    printf("\nwrote %s\n", csv);
    return 0;
}
