/* The lesson harness. See harness.h for the flow; this file is the only
 * place that times anything, so every lesson is measured the same way:
 *
 *   - CUDA events around each run, after warm-up runs; the median of
 *     o->iters runs (min and max reported too);
 *   - when the input and output fit in L2 (50 MB on an H100), several
 *     copies of both are rotated so that each run starts from DRAM, as it
 *     would inside a real network;
 *   - the copy roofline: cudaMemcpyAsync device-to-device of the same bytes,
 *     timed the same way in the same process. A softmax must read M*N floats
 *     and write M*N floats, exactly what a copy does, so the copy is the
 *     honest upper bound for its effective bandwidth. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "npy.h"
#include "reference.h"
#include "commit.h" /* GIT_COMMIT, written by the Makefile */

static void fail_usage(const lesson *l, const char *msg)
{
    fprintf(stderr, "lesson%d: %s\n", l->number, msg);
    exit(2);
}

static void fmt_bytes(double b, char *buf, size_t len)
{
    if (b >= 1 << 30) snprintf(buf, len, "%.1f GiB", b / (1 << 30));
    else if (b >= 1 << 20) snprintf(buf, len, "%.1f MiB", b / (1 << 20));
    else snprintf(buf, len, "%.1f KiB", b / 1024);
}

/* --input is read by lesson_init, so a bad file is reported (exit 2) even
 * on a machine without a GPU; lesson_run takes it from here. */
static float *loaded_input;

void lesson_init(const lesson *l, options *o, int argc, char **argv)
{
    char err[512];
    options_defaults(o, l->default_rows, l->default_cols);
    int r = options_parse(o, argc, argv, err, sizeof err);
    if (r == 1) {
        printf("Lesson %d, %s: %s\n\n", l->number, l->name, l->shows);
        options_usage(stdout, argv[0]);
        exit(0);
    }
    if (r < 0) fail_usage(l, err);
    if (o->input_path &&
        npy_read(o->input_path, &loaded_input, &o->rows, &o->cols, err, sizeof err) != 0)
        fail_usage(l, err);

    char who[32];
    snprintf(who, sizeof who, "lesson%d", l->number);
    require_gpu(who);

    /* Refuse shapes the GPU cannot hold before printing anything else. */
    size_t free_b, total_b, bytes = (size_t)o->rows * (size_t)o->cols * sizeof(float);
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (2 * bytes > free_b) {
        char need[32], have[32];
        fmt_bytes(2.0 * bytes, need, sizeof need);
        fmt_bytes((double)free_b, have, sizeof have);
        snprintf(err, sizeof err, "%lld x %lld needs %s of GPU memory (input + output); "
                 "the GPU has %s free", o->rows, o->cols, need, have);
        fail_usage(l, err);
    }
}

void require_gpu(const char *who)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        fprintf(stderr, "%s: this program needs an NVIDIA GPU, and none was found (CUDA: %s); "
                "`make test` still checks the kernels on the CPU (and `make lessonN EMU=1` runs a "
                "lesson there)\n",
                who, e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        exit(EXIT_NO_GPU);
    }
}

void print_row(const char *label, const float *v, int n)
{
    printf("  %-22s [", label);
    for (int i = 0; i < n; i++) printf("%s%.4f", i ? ", " : "", v[i]);
    printf("]\n");
}

void print_steps(const float *x, int n)
{
    float shifted[16], e[16], y[16], m = -INFINITY, sum = 0.0f;
    if (n > 16) n = 16;
    for (int i = 0; i < n; i++) m = fmaxf(m, x[i]);
    for (int i = 0; i < n; i++) {
        shifted[i] = x[i] - m;
        e[i] = expf(shifted[i]);
        sum += e[i];
    }
    for (int i = 0; i < n; i++) y[i] = e[i] / sum;
    print_row("x", x, n);
    printf("  %-22s %.4f\n", "1. max(x)", m);
    print_row("2. x - max(x)", shifted, n);
    print_row("3. exp(x - max(x))", e, n);
    printf("  %-22s %.4f\n", "4. sum", sum);
    print_row("5. softmax = exp / sum", y, n);
}

void lesson_run_small(const lesson *l, const float *x, float *y, long long rows, long long cols)
{
    size_t bytes = (size_t)rows * cols * sizeof(float);
    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN: unwritten outputs show */
    l->run(dx, dy, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
}

/* ---- timing ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* What is being timed: a softmax kernel or the copy, on buffer set `set`. */
typedef struct {
    softmax_fn fn;         /* NULL: time the copy instead */
    float **x, **y;        /* one pointer per buffer set  */
    long long rows, cols;
} job;

static void job_launch(const job *j, int set)
{
    if (j->fn) {
        j->fn(j->x[set], j->y[set], j->rows, j->cols, 0);
        CUDA_CHECK_LAUNCH();
    } else {
        CUDA_CHECK(cudaMemcpyAsync(j->y[set], j->x[set],
                                   (size_t)j->rows * j->cols * sizeof(float),
                                   cudaMemcpyDeviceToDevice, 0));
    }
}

timing time_runs(softmax_fn fn, float **x, float **y, int sets, long long rows,
                 long long cols, int warmup, int iters)
{
    job jj = {fn, x, y, rows, cols}, *j = &jj;
    for (int i = 0; i < warmup; i++) job_launch(j, i % sets);

    cudaEvent_t *ev = (cudaEvent_t *)malloc(2 * (size_t)iters * sizeof *ev);
    double *ms = (double *)malloc((size_t)iters * sizeof *ms);
    if (!ev || !ms) { fprintf(stderr, "out of host memory\n"); exit(1); }
    for (int i = 0; i < 2 * iters; i++) CUDA_CHECK(cudaEventCreate(&ev[i]));

    /* All runs are queued back to back; each is bracketed by its own pair
     * of events, so no host round trip sits between them. */
    for (int i = 0; i < iters; i++) {
        CUDA_CHECK(cudaEventRecord(ev[2 * i], 0));
        job_launch(j, (warmup + i) % sets);
        CUDA_CHECK(cudaEventRecord(ev[2 * i + 1], 0));
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < iters; i++) {
        float t;
        CUDA_CHECK(cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
        ms[i] = t;
    }
    for (int i = 0; i < 2 * iters; i++) CUDA_CHECK(cudaEventDestroy(ev[i]));

    qsort(ms, (size_t)iters, sizeof *ms, cmp_double);
    timing t;
    t.runs = iters;
    t.min_ms = ms[0];
    t.max_ms = ms[iters - 1];
    t.median_ms = iters % 2 ? ms[iters / 2] : 0.5 * (ms[iters / 2 - 1] + ms[iters / 2]);
    free(ev);
    free(ms);
    return t;
}

/* ---- views ------------------------------------------------------------- */

/* time_runs takes a softmax_fn; the view being timed rides in here. */
static struct {
    softmax_strided_fn fn;
    long long xoff, yoff, ldx, ldy, cols;
} view_now;

static void run_view_now(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    (void)cols; /* the view's own */
    view_now.fn(x + view_now.xoff, view_now.ldx, y + view_now.yoff, view_now.ldy, rows, view_now.cols, s);
}

void time_views(softmax_strided_fn fn, view_access_fn access, const options *o)
{
#ifdef CUDA_EMU
    (void)fn, (void)access, (void)o; /* the CPU emulator measures no time */
    return;
#endif
    const long long rows = o->rows, cols = o->cols;
    if (cols < 2) return; /* cols - 1 columns would be none */
    /* Room for the widest view (stride cols + 1) and the base offsets. */
    const size_t elems = (size_t)rows * (size_t)(cols + 1) + 4, bytes = elems * sizeof(float);
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const int sets = rotation_sets(bytes, free_b);
    float *hx = (float *)malloc(bytes), *x[64], *y[64];
    if (!hx) {
        fprintf(stderr, "views: out of host memory\n");
        exit(1);
    }
    inputs_fill(hx, 1, (long long)elems, INPUT_NORMAL, o->seed); /* never zeros */
    for (int k = 0; k < sets; k++) {
        CUDA_CHECK(cudaMalloc(&x[k], bytes));
        CUDA_CHECK(cudaMalloc(&y[k], bytes));
        CUDA_CHECK(cudaMemcpy(x[k], hx, bytes, cudaMemcpyHostToDevice));
    }
    const struct {
        const char *name;
        long long xoff, yoff, ldx, ldy, cols;
    } C[] = {
        {"aligned, contiguous", 0, 0, cols, cols, cols},
        {"bases 1 float past 16 bytes", 1, 1, cols, cols, cols},
        {"row stride cols + 1", 0, 0, cols + 1, cols + 1, cols},
        {"cols - 1 (N % 4 != 0)", 0, 0, cols - 1, cols - 1, cols - 1},
        {"x 1 float past 16 bytes, y not", 1, 0, cols, cols, cols},
        {"x row stride cols + 1, y not", 0, 0, cols + 1, cols, cols},
        {"y row stride cols + 1, x not", 0, 0, cols, cols + 1, cols}, /* holes in y only: see the line above */
    };
    printf("\nViews at %lld x %lld: the same rows, misaligned (median of %d runs)\n", rows, cols, o->iters);
    printf("  %-32s %-16s %11s %9s %12s\n", "view", "access", "time (ms)", "GB/s", "of aligned");
    double aligned_gbps = 0.0;
    for (int i = 0; i < (int)(sizeof C / sizeof C[0]); i++) {
        view_now.fn = fn;
        view_now.xoff = C[i].xoff;
        view_now.yoff = C[i].yoff;
        view_now.ldx = C[i].ldx;
        view_now.ldy = C[i].ldy;
        view_now.cols = C[i].cols;
        const char *how = access ? access(x[0] + C[i].xoff, C[i].ldx, y[0] + C[i].yoff, C[i].ldy, rows, C[i].cols)
                                 : "-";
        const timing t = time_runs(run_view_now, x, y, sets, rows, cols, o->warmup, o->iters);
        const double gbps = 2.0 * (double)rows * (double)C[i].cols * sizeof(float) / (t.median_ms * 1e6);
        if (i == 0) aligned_gbps = gbps;
        printf("  %-32s %-16s %11.4f %9.1f %10.1f %%\n", C[i].name, how, t.median_ms, gbps,
               100.0 * gbps / aligned_gbps);
    }
    for (int k = 0; k < sets; k++) {
        CUDA_CHECK(cudaFree(x[k]));
        CUDA_CHECK(cudaFree(y[k]));
    }
    free(hx);
}

/* ---- provenance ------------------------------------------------------- */

static void version_string(int v, char *buf, size_t len)
{
    snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

void get_provenance(provenance *p)
{
    int dev, v;
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    snprintf(p->gpu, sizeof p->gpu, "%s", prop.name);
    p->l2_bytes = prop.l2CacheSize;
    p->sms = prop.multiProcessorCount;
    /* cudaDeviceProp::clockRate and ::memoryClockRate are gone in CUDA 13:
     * the attributes work on 12 and 13 alike. Values are in kHz. */
    CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, dev));
    p->sm_mhz = v / 1000;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, dev));
    p->mem_mhz = v / 1000;
    CUDA_CHECK(cudaDriverGetVersion(&v));
    version_string(v, p->driver, sizeof p->driver);
    CUDA_CHECK(cudaRuntimeGetVersion(&v));
    version_string(v, p->runtime, sizeof p->runtime);
    time_t now = time(NULL);
    strftime(p->date, sizeof p->date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

void csv_append(const char *path, int lesson_number, const char *name, long long rows,
                long long cols, const timing *t, const timing *copy, double bytes_per_elem,
                const char *verified, const provenance *p)
{
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "lesson%d: cannot write --csv file '%s'\n", lesson_number, path);
        exit(2);
    }
    if (ftell(f) == 0)
        fprintf(f, "lesson,name,rows,cols,median_ms,min_ms,max_ms,gbps,copy_gbps,"
                   "pct_of_copy,bytes_per_elem,verified,gpu,cuda_driver,cuda_runtime,"
                   "sm_clock_mhz,mem_clock_mhz,commit,date\n");
    double bytes = 2.0 * rows * (double)cols * sizeof(float);
    double gbps = bytes / (t->median_ms * 1e6), copy_gbps = bytes / (copy->median_ms * 1e6);
    fprintf(f, "%d,%s,%lld,%lld,%.6f,%.6f,%.6f,%.1f,%.1f,%.1f,%g,%s,\"%s\",%s,%s,%d,%d,%s,%s\n",
            lesson_number, name, rows, cols, t->median_ms, t->min_ms, t->max_ms, gbps,
            copy_gbps, 100.0 * gbps / copy_gbps, bytes_per_elem, verified, p->gpu,
            p->driver, p->runtime, p->sm_mhz, p->mem_mhz, GIT_COMMIT, p->date);
    fclose(f);
}

int rotation_sets(size_t bytes, size_t free_bytes)
{
    /* Rotate buffer sets until they span 4x L2 (2 MB problems on a 50 MB
     * L2 get 50 sets): each run then reads what L2 no longer holds. */
    int dev, l2 = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    int sets = (int)ceil(4.0 * (l2 > 0 ? l2 : 0) / (2.0 * (double)bytes));
    if (sets < 1) sets = 1;
    if (sets > 64) sets = 64;
    while (sets > 1 && 2.0 * bytes * sets > 0.8 * (double)free_bytes) sets--;
    return sets;
}

/* ---- the run ------------------------------------------------------------ */

int lesson_run(const lesson *l, const options *o)
{
    return lesson_run_ref(l, o, ref_row_softmax);
}

int lesson_run_ref(const lesson *l, const options *o, ref_row_fn ref)
{
    char err[512], buf[512], size_txt[32];
    long long rows = o->rows, cols = o->cols;
    size_t n = (size_t)rows * (size_t)cols, bytes = n * sizeof(float);

    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));

    float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes);
    if (!x || !y) {
        fmt_bytes(2.0 * bytes, size_txt, sizeof size_txt);
        snprintf(buf, sizeof buf, "%lld x %lld needs %s of host memory", rows, cols, size_txt);
        fail_usage(l, buf);
    }
    /* --input stays loaded, so a lesson may run several variants on it. */
    if (o->input_path) memcpy(x, loaded_input, bytes);
    else inputs_fill(x, rows, cols, o->kind, o->seed);

    provenance p;
    get_provenance(&p);

#ifdef CUDA_EMU
    int sets = 1; /* the CPU emulator measures no time: nothing to rotate */
#else
    int sets = rotation_sets(bytes, free_b);
#endif

    float *dx[64], *dy[64];
    for (int s = 0; s < sets; s++) {
        CUDA_CHECK(cudaMalloc(&dx[s], bytes));
        CUDA_CHECK(cudaMalloc(&dy[s], bytes));
        CUDA_CHECK(cudaMemcpy(dx[s], x, bytes, cudaMemcpyHostToDevice));
    }

    /* Correctness first, on a poisoned output: 0xFFFFFFFF is a NaN, so an
     * element the kernel never writes fails the check. */
    CUDA_CHECK(cudaMemset(dy[0], 0xFF, bytes));
    l->run(dx[0], dy[0], rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(y, dy[0], bytes, cudaMemcpyDeviceToHost));

    int pass = 1;
    char check_txt[600];
    if (o->check) {
        verify_report r;
        pass = verify_softmax(x, y, rows, cols, ref, NULL, l->rtol(cols), &r);
        verify_describe(&r, buf, sizeof buf);
        snprintf(check_txt, sizeof check_txt, "%s (%s)", pass ? "PASS" : "FAIL", buf);
    } else {
        snprintf(check_txt, sizeof check_txt, "not checked (--no-check)");
    }
    if (o->output_path && npy_write(o->output_path, y, rows, cols, err, sizeof err) != 0)
        fail_usage(l, err);

#ifdef CUDA_EMU
    /* Built for the CPU emulator (common/emu, `make lessonN EMU=1`): the
     * kernel ran on the CPU, so a time would say nothing about any GPU.
     * Report the check only, and say so. */
    fmt_bytes((double)bytes, size_txt, sizeof size_txt);
    printf("Lesson %d, %s: %s\n", l->number, l->name, l->shows);
    printf("  device         %s, commit %s\n", p.gpu, GIT_COMMIT);
    printf("  shape          %lld x %lld floats (%s per tensor), input %s\n", rows, cols, size_txt,
           o->input_path ? o->input_path : input_kind_name(o->kind));
    printf("  design traffic %s = %g bytes per element\n", l->traffic, l->bytes_per_elem);
    printf("  time           not measured: the kernel ran on the CPU emulator, where timings are "
           "not meaningful (run on a GPU for them)\n");
    printf("  check          %s\n", check_txt);
    if (o->csv_path) printf("  csv            not written: no timing on the CPU emulator\n");
    CUDA_CHECK(cudaFree(dx[0]));
    CUDA_CHECK(cudaFree(dy[0]));
    free(x);
    free(y);
    return pass ? 0 : 1;
#endif
    timing t = time_runs(l->run, dx, dy, sets, rows, cols, o->warmup, o->iters);
    timing c = time_runs(NULL, dx, dy, sets, rows, cols, o->warmup, o->iters);

    double min_bytes = 2.0 * (double)bytes;
    double gbps = min_bytes / (t.median_ms * 1e6);
    double copy_gbps = min_bytes / (c.median_ms * 1e6);
    fmt_bytes((double)bytes, size_txt, sizeof size_txt);

    printf("Lesson %d, %s: %s\n", l->number, l->name, l->shows);
    printf("  GPU            %s (%d SMs, %d MB L2), CUDA %s, commit %s\n", p.gpu, p.sms,
           p.l2_bytes >> 20, p.runtime, GIT_COMMIT);
    printf("  shape          %lld x %lld floats (%s per tensor)%s, input %s\n", rows, cols,
           size_txt, sets > 1 ? ", rotated over buffer sets so L2 starts cold" : "",
           o->input_path ? o->input_path : input_kind_name(o->kind));
    printf("  design traffic %s = %g bytes per element\n", l->traffic, l->bytes_per_elem);
    printf("  time           %.4f ms median (min %.4f, max %.4f, %d runs after %d warm-up)\n",
           t.median_ms, t.min_ms, t.max_ms, t.runs, o->warmup);
    printf("  effective      %.1f GB/s  (2 x M x N x 4 bytes / time: the least any softmax moves)\n",
           gbps);
    printf("  design         %.1f GB/s  (%g bytes per element / time: what this kernel moves)\n",
           l->bytes_per_elem * (double)n / (t.median_ms * 1e6), l->bytes_per_elem);
    printf("  copy           %.1f GB/s  (cudaMemcpy device to device, same bytes, %.4f ms)\n",
           copy_gbps, c.median_ms);
    printf("  %% of copy      %.1f %%\n", 100.0 * gbps / copy_gbps);
    printf("  check          %s\n", check_txt);

    if (o->csv_path)
        csv_append(o->csv_path, l->number, l->name, rows, cols, &t, &c, l->bytes_per_elem,
                   o->check ? (pass ? "yes" : "FAILED") : "no", &p);

    for (int s = 0; s < sets; s++) {
        CUDA_CHECK(cudaFree(dx[s]));
        CUDA_CHECK(cudaFree(dy[s]));
    }
    free(x);
    free(y);
    return pass ? 0 : 1;
}
