/* The lesson harness. See harness.h for the flow: options, input, one
 * checked run, timing, report. The timing itself (events, the held queue,
 * rotated buffers, the copy, the read-only pass, the views) is in
 * common/timing.cu, so that every lesson is measured the same way. */
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
#include "f16.h"
#include "timing.h"
#include "commit.h" /* GIT_COMMIT, written by the Makefile */

void lesson_fail_usage(const lesson *l, const char *msg)
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
 * on a machine without a GPU; lesson_run takes it from here. A typed
 * program (lesson 9) keeps the file's own storage type. */
static float *loaded_input;
static void *loaded_typed;
static dtype loaded_type;

static void init_program(const lesson *l, options *o, int argc, char **argv, int typed, int spread)
{
    char err[512];
    options_defaults(o, l->default_rows, l->default_cols);
    if (typed) o->storage = DTYPE_F16; /* the IEEE type, NumPy's own float16 */
    int r = options_parse(o, argc, argv, err, sizeof err);
    if (r == 1) {
        printf("Lesson %d, %s: %s\n\n", l->number, l->name, l->shows);
        options_usage(stdout, argv[0]);
        if (typed) options_usage_dtype(stdout);
        exit(0);
    }
    if (r < 0) lesson_fail_usage(l, err);
    if (!typed && o->storage_set)
        lesson_fail_usage(l, "--dtype: this lesson stores float32 only (lesson 9 takes --dtype f16, bf16 or f32)");
    if (o->input_path) {
        if (!typed) r = npy_read(o->input_path, &loaded_input, &o->rows, &o->cols, err, sizeof err);
        else r = npy_read_typed(o->input_path, &loaded_typed, &loaded_type, &o->rows, &o->cols, err, sizeof err);
        if (r != 0) lesson_fail_usage(l, err);
        if (typed && !o->storage_set) o->storage = loaded_type;
    }

    char who[32];
    snprintf(who, sizeof who, "lesson%d", l->number);
    require_gpu(who);

    /* Refuse shapes the GPU cannot hold before printing anything else
     * (float32 also for a typed program: it compares with float32). A
     * lesson that spreads its input counts every GPU's free memory. */
    size_t free_b, total_b, bytes = (size_t)o->rows * (size_t)o->cols * sizeof(float);
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    int ngpus = 1;
    if (spread) CUDA_CHECK(cudaGetDeviceCount(&ngpus));
    for (int g = 1; g < ngpus; g++) {
        size_t f, t;
        CUDA_CHECK(cudaSetDevice(g));
        CUDA_CHECK(cudaMemGetInfo(&f, &t));
        free_b += f;
    }
    CUDA_CHECK(cudaSetDevice(0));
    if (2 * bytes > free_b) {
        char need[32], have[32];
        fmt_bytes(2.0 * bytes, need, sizeof need);
        fmt_bytes((double)free_b, have, sizeof have);
        snprintf(err, sizeof err, "%lld x %lld needs %s of GPU memory (input + output); "
                 "the GPU%s %s free", o->rows, o->cols, need, ngpus > 1 ? "s have" : " has", have);
        lesson_fail_usage(l, err);
    }
}

void lesson_init(const lesson *l, options *o, int argc, char **argv)
{
    init_program(l, o, argc, argv, 0, 0);
}

void lesson_init_typed(const lesson *l, options *o, int argc, char **argv)
{
    init_program(l, o, argc, argv, 1, 0);
}

void lesson_init_spread(const lesson *l, options *o, int argc, char **argv)
{
    init_program(l, o, argc, argv, 0, 1);
}

int lesson_take_flags(const lesson *l, int argc, char **argv, const char *const *names, int n, lesson_flag_fn take,
                      void *ctx, void (*help)(void))
{
    char err[200];
    int out = 1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            atexit(help); /* printed after the common usage, which lesson_init prints before it exits */
            break;
        }
    for (int i = 1; i < argc; i++) {
        const char *value;
        /* a negative number is a value here (--ignore-index -100), another flag is not */
        const int f = options_take(argc, argv, &i, names, n, &value);
        if (f < 0) {
            argv[out++] = argv[i];
            continue;
        }
        if (!value) snprintf(err, sizeof err, "%s needs a value", names[f]);
        if (!value || take(f, value, ctx, err, sizeof err) != 0) lesson_fail_usage(l, err);
    }
    argv[out] = NULL;
    return out;
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
    /* "nan" for every NaN: a CPU's inf / inf has the sign bit set, which
     * printf shows as "-nan", a GPU's has not; the sign means nothing */
    for (int i = 0; i < n; i++) {
        if (isnan(v[i])) printf("%snan", i ? ", " : "");
        else printf("%s%.4f", i ? ", " : "", v[i]);
    }
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
    csv_append_typed(path, lesson_number, name, rows, cols, t, copy, bytes_per_elem, verified, p, DTYPE_F32);
}

void csv_append_typed(const char *path, int lesson_number, const char *name, long long rows,
                      long long cols, const timing *t, const timing *copy, double bytes_per_elem,
                      const char *verified, const provenance *p, dtype storage)
{
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "lesson%d: cannot write --csv file '%s'\n", lesson_number, path);
        exit(2);
    }
    /* dtype last: readers that count columns from the left (tests/compare.awk)
     * keep working, and tests/tables.awk and docs/plots.py read CSVs without
     * it as float32. */
    if (ftell(f) == 0)
        fprintf(f, "lesson,name,rows,cols,median_ms,min_ms,max_ms,gbps,copy_gbps,"
                   "pct_of_copy,bytes_per_elem,verified,gpu,cuda_driver,cuda_runtime,"
                   "sm_clock_mhz,mem_clock_mhz,commit,date,dtype\n");
#ifdef CUDA_EMU
    /* The CPU emulator times nothing: the six timing columns stay empty
     * (tests/compare.awk prints "not measured"), the check is all a row says. */
    (void)t;
    (void)copy;
    fprintf(f, "%d,%s,%lld,%lld,,,,,,,%g,%s,\"%s\",%s,%s,%d,%d,%s,%s,%s\n", lesson_number, name, rows, cols,
            bytes_per_elem, verified, p->gpu, p->driver, p->runtime, p->sm_mhz, p->mem_mhz, GIT_COMMIT, p->date,
            dtype_name(storage));
#else
    double bytes = 2.0 * rows * (double)cols * dtype_size(storage);
    double gbps = bytes / (t->median_ms * 1e6), copy_gbps = bytes / (copy->median_ms * 1e6);
    fprintf(f, "%d,%s,%lld,%lld,%.6f,%.6f,%.6f,%.1f,%.1f,%.1f,%g,%s,\"%s\",%s,%s,%d,%d,%s,%s,%s\n",
            lesson_number, name, rows, cols, t->median_ms, t->min_ms, t->max_ms, gbps,
            copy_gbps, 100.0 * gbps / copy_gbps, bytes_per_elem, verified, p->gpu,
            p->driver, p->runtime, p->sm_mhz, p->mem_mhz, GIT_COMMIT, p->date, dtype_name(storage));
#endif
    fclose(f);
}


/* ---- the run ------------------------------------------------------------ */

/* n floats to storage type t and back (common/f16.h's conversions). */
void storage_narrow(const float *x, void *out, size_t n, dtype t)
{
    uint16_t *h = (uint16_t *)out;
    if (t == DTYPE_F32) memcpy(out, x, n * sizeof(float));
    else if (t == DTYPE_F16) for (size_t i = 0; i < n; i++) h[i] = f16_from_float(x[i]);
    else for (size_t i = 0; i < n; i++) h[i] = bf16_from_float(x[i]);
}

void storage_widen(const void *in, float *x, size_t n, dtype t)
{
    const uint16_t *h = (const uint16_t *)in;
    if (t == DTYPE_F32) memcpy(x, in, n * sizeof(float));
    else if (t == DTYPE_F16) for (size_t i = 0; i < n; i++) x[i] = f16_to_float(h[i]);
    else for (size_t i = 0; i < n; i++) x[i] = bf16_to_float(h[i]);
}

/* What measure() found for one kernel. */
typedef struct {
    int pass, sets;
    char check[600];   /* "PASS (max abs err ...)", for the report */
    timing t, copy;    /* zeros on the CPU emulator                */
} measured;

/* The measurement every program shares. proto says which kernel and
 * storage type; hx holds its input as stored, hx_wide the same widened to
 * float (the reference's input; hx itself for float32). The kernel runs
 * once on a poisoned output (0xFF bytes are NaN in all three types, so an
 * element it never writes fails), its output comes back to hy (as stored)
 * and hy_wide (widened; hy for float32) and is checked; then, off the
 * emulator, it is timed over rotated buffer sets, and so is the copy of the
 * same bytes when with_copy. */
static void measure(const job *proto, const void *hx, const float *hx_wide, void *hy, float *hy_wide,
                    const options *o, ref_row_fn ref, double rtol, double atol, int with_copy, measured *m)
{
    char buf[512];
    job j = *proto;
    const size_t bytes = job_bytes(&j), n = (size_t)j.rows * (size_t)j.cols;
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
#ifdef CUDA_EMU
    int sets = 1; /* the CPU emulator measures no time: nothing to rotate */
#else
    int sets = rotation_sets(bytes, free_b);
#endif
    void *dx[64], *dy[64];
    for (int s = 0; s < sets; s++) {
        CUDA_CHECK(cudaMalloc(&dx[s], bytes));
        CUDA_CHECK(cudaMalloc(&dy[s], bytes));
        CUDA_CHECK(cudaMemcpy(dx[s], hx, bytes, cudaMemcpyHostToDevice));
    }
    j.x = dx;
    j.y = dy;

    CUDA_CHECK(cudaMemset(dy[0], 0xFF, bytes));
    job_launch(&j, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hy, dy[0], bytes, cudaMemcpyDeviceToHost));
    if ((void *)hy_wide != hy) storage_widen(hy, hy_wide, n, j.t);

    m->pass = 1;
    m->sets = sets;
    if (o->check) {
        verify_report r;
        m->pass = verify_softmax_atol(hx_wide, hy_wide, j.rows, j.cols, ref, NULL, rtol, atol, &r);
        verify_describe(&r, buf, sizeof buf);
        snprintf(m->check, sizeof m->check, "%s (%s)", m->pass ? "PASS" : "FAIL", buf);
    } else {
        snprintf(m->check, sizeof m->check, "not checked (--no-check)");
    }
    memset(&m->t, 0, sizeof m->t);
    memset(&m->copy, 0, sizeof m->copy);
#ifndef CUDA_EMU
    m->t = time_job(&j, sets, o->warmup, o->iters);
    if (with_copy) {
        job c = j;
        c.fn = NULL;
        c.tfn = NULL;
        m->copy = time_job(&c, sets, o->warmup, o->iters);
    }
#else
    (void)with_copy;
#endif
    for (int s = 0; s < sets; s++) {
        CUDA_CHECK(cudaFree(dx[s]));
        CUDA_CHECK(cudaFree(dy[s]));
    }
}

/* "floats", "float16 values", "bfloat16 values": the shape line's unit. */
static const char *elements_word(dtype t)
{
    return t == DTYPE_F16 ? "float16 values" : t == DTYPE_BF16 ? "bfloat16 values" : "floats";
}

void lesson_print_header(const lesson *l, const options *o, const provenance *p, dtype t, int sets)
{
    char size_txt[32], input_txt[600];
    const size_t bytes = (size_t)o->rows * (size_t)o->cols * (size_t)dtype_size(t);
    fmt_bytes((double)bytes, size_txt, sizeof size_txt);
    if (o->input_path) snprintf(input_txt, sizeof input_txt, "%s", o->input_path);
    else if (t == DTYPE_F32) snprintf(input_txt, sizeof input_txt, "%s", input_kind_name(o->kind));
    else snprintf(input_txt, sizeof input_txt, "%s, made in float32 and rounded to %s", input_kind_name(o->kind),
                  t == DTYPE_F16 ? "float16" : "bfloat16");
    printf("Lesson %d, %s: %s\n", l->number, l->name, l->shows);
#ifdef CUDA_EMU
    printf("  device         %s, commit %s\n", p->gpu, GIT_COMMIT);
#else
    printf("  GPU            %s (%d SMs, %d MB L2), CUDA %s, commit %s\n", p->gpu, p->sms, p->l2_bytes >> 20,
           p->runtime, GIT_COMMIT);
#endif
    printf("  shape          %lld x %lld %s (%s per tensor)%s, input %s\n", o->rows, o->cols, elements_word(t),
           size_txt, sets > 1 ? ", rotated over buffer sets so L2 starts cold" : "", input_txt);
}

/* One kernel's lines: its traffic, time, bandwidths, copy and check. */
static void print_measured(const char *traffic, double bytes_per_elem, dtype t, const options *o, const measured *m)
{
    const double n = (double)o->rows * (double)o->cols, min_bytes = 2.0 * n * dtype_size(t);
    printf("  design traffic %s = %g bytes per element\n", traffic, bytes_per_elem);
#ifdef CUDA_EMU
    /* Built for the CPU emulator (common/emu, `make lessonN EMU=1`): the
     * kernel ran on the CPU, so a time would say nothing about any GPU.
     * Report the check only, and say so. */
    (void)min_bytes;
    printf("  time           not measured: the kernel ran on the CPU emulator, where timings are "
           "not meaningful (run on a GPU for them)\n");
    printf("  check          %s\n", m->check);
    if (o->csv_path) printf("  csv            the check only, no timing (CPU emulator)\n");
#else
    const double gbps = min_bytes / (m->t.median_ms * 1e6), copy_gbps = min_bytes / (m->copy.median_ms * 1e6);
    printf("  time           %.4f ms median (min %.4f, max %.4f, %d runs after %d warm-up)\n",
           m->t.median_ms, m->t.min_ms, m->t.max_ms, m->t.runs, o->warmup);
    printf("  effective      %.1f GB/s  (2 x M x N x %d bytes / time: the least any softmax moves)\n",
           gbps, dtype_size(t));
    printf("  design         %.1f GB/s  (%g bytes per element / time: what this kernel moves)\n",
           bytes_per_elem * n / (m->t.median_ms * 1e6), bytes_per_elem);
    printf("  copy           %.1f GB/s  (cudaMemcpy device to device, same bytes, %.4f ms)\n",
           copy_gbps, m->copy.median_ms);
    printf("  %% of copy      %.1f %%\n", 100.0 * gbps / copy_gbps);
    printf("  check          %s\n", m->check);
#endif
}

/* Host memory, or one line and exit 2. */
static void *host_alloc(const lesson *l, size_t bytes, const options *o)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        char buf[160], size_txt[32];
        fmt_bytes((double)bytes, size_txt, sizeof size_txt);
        snprintf(buf, sizeof buf, "%lld x %lld needs %s more of host memory", o->rows, o->cols, size_txt);
        lesson_fail_usage(l, buf);
    }
    return p;
}

int lesson_run(const lesson *l, const options *o)
{
    return lesson_run_ref(l, o, ref_row_softmax);
}

int lesson_run_ref(const lesson *l, const options *o, ref_row_fn ref)
{
    char err[512];
    const long long rows = o->rows, cols = o->cols;
    const size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
    float *x = (float *)host_alloc(l, bytes, o), *y = (float *)host_alloc(l, bytes, o);
    /* --input stays loaded, so a lesson may run several variants on it. */
    if (o->input_path) memcpy(x, loaded_input, bytes);
    else inputs_fill(x, rows, cols, o->kind, o->seed);

    provenance p;
    get_provenance(&p);
    measured m;
    const job j = {l->run, NULL, DTYPE_F32, NULL, NULL, rows, cols, 0};
    measure(&j, x, x, y, y, o, ref, l->rtol(cols), VERIFY_ATOL, 1, &m);
    if (o->output_path && npy_write(o->output_path, y, rows, cols, err, sizeof err) != 0)
        lesson_fail_usage(l, err);

    lesson_print_header(l, o, &p, DTYPE_F32, m.sets);
    print_measured(l->traffic, l->bytes_per_elem, DTYPE_F32, o, &m);
    if (o->csv_path)
        csv_append(o->csv_path, l->number, l->name, rows, cols, &m.t, &m.copy, l->bytes_per_elem,
                   o->check ? (m.pass ? "yes" : "FAILED") : "no", &p);
    free(x);
    free(y);
    return m.pass ? 0 : 1;
}

int lesson_run_typed(const lesson *l, const typed_kernel *k, int nk, const options *o, timing *times,
                     timing *copy, float **input)
{
    char err[512];
    const dtype t = o->storage;
    const long long rows = o->rows, cols = o->cols;
    const size_t n = (size_t)rows * (size_t)cols, size = (size_t)dtype_size(t);
    void *x = host_alloc(l, n * size, o), *y = host_alloc(l, n * size, o);
    float *xw = (float *)host_alloc(l, n * sizeof(float), o);
    float *yw = t == DTYPE_F32 ? (float *)y : (float *)host_alloc(l, n * sizeof(float), o);
    if (o->input_path && loaded_type == t) {
        memcpy(x, loaded_typed, n * size);
    } else {
        if (o->input_path) storage_widen(loaded_typed, xw, n, loaded_type);
        else inputs_fill(xw, rows, cols, o->kind, o->seed);
        storage_narrow(xw, x, n, t);
    }
    storage_widen(x, xw, n, t); /* exact: what the reference sees is what the kernel reads */

    provenance p;
    get_provenance(&p);
    const double rtol = verify_rtol_storage(t, l->rtol(cols)), atol = verify_atol_storage(t);
    int status = 0;
    measured m;
    memset(&m, 0, sizeof m);
    for (int i = 0; i < nk; i++) {
        const job j = {NULL, k[i].run, t, NULL, NULL, rows, cols, 0};
        const timing copy_before = m.copy; /* the copy is timed with the first kernel only */
        measure(&j, x, xw, y, yw, o, ref_row_softmax, rtol, atol, i == 0, &m);
        if (i > 0) m.copy = copy_before;
        if (i == 0) lesson_print_header(l, o, &p, t, m.sets);
        printf("\n  kernel         %s: %s\n", k[i].name, k[i].what);
        print_measured(k[i].traffic, k[i].elems_moved * (double)size, t, o, &m);
        times[i] = m.t;
        *copy = m.copy;
        if (!m.pass) status = 1;
        if (o->csv_path)
            csv_append_typed(o->csv_path, l->number, k[i].name, rows, cols, &m.t, &m.copy,
                             k[i].elems_moved * (double)size, o->check ? (m.pass ? "yes" : "FAILED") : "no", &p, t);
    }
    if (o->output_path && npy_write_typed(o->output_path, y, t, rows, cols, err, sizeof err) != 0)
        lesson_fail_usage(l, err);
    if (input) *input = xw;
    else free(xw);
    if ((void *)yw != y) free(yw);
    free(x);
    free(y);
    return status;
}

int time_float_checked(softmax_fn fn, rtol_fn rtol, const float *x, long long rows, long long cols,
                       const options *o, timing *t, timing *copy)
{
    float *y = (float *)malloc((size_t)rows * (size_t)cols * sizeof(float));
    if (!y) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    measured m;
    const job j = {fn, NULL, DTYPE_F32, NULL, NULL, rows, cols, 0};
    measure(&j, x, x, y, y, o, ref_row_softmax, rtol(cols), VERIFY_ATOL, 1, &m);
    *t = m.t;
    *copy = m.copy;
    free(y);
    return m.pass;
}
