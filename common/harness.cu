/* The lesson harness. See harness.h for the flow; this file is the only
 * place that times anything, so every lesson is measured the same way:
 *
 *   - CUDA events around each run, after warm-up runs; the median of
 *     o->iters runs (min and max reported too), queued in batches, each
 *     behind a kernel that holds the stream until it is queued
 *     (time_batch);
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
#include "f16.h"
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
    if (r < 0) fail_usage(l, err);
    if (!typed && o->storage_set)
        fail_usage(l, "--dtype: this lesson stores float32 only (lesson 9 takes --dtype f16, bf16 or f32)");
    if (o->input_path) {
        if (!typed) r = npy_read(o->input_path, &loaded_input, &o->rows, &o->cols, err, sizeof err);
        else r = npy_read_typed(o->input_path, &loaded_typed, &loaded_type, &o->rows, &o->cols, err, sizeof err);
        if (r != 0) fail_usage(l, err);
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
        fail_usage(l, err);
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

/* What is being timed: a float32 kernel, a typed one or the copy, on
 * buffer set `set`. */
typedef struct {
    softmax_fn fn;         /* a float32 kernel, or NULL                      */
    softmax_typed_fn tfn;  /* a typed kernel, or NULL; both NULL: the copy   */
    dtype t;               /* storage type of x and y                        */
    void **x, **y;         /* one pointer per buffer set                     */
    long long rows, cols;
    int read_only;         /* with fn and tfn NULL: read_pass of x into y, not the copy */
} job;

static size_t job_bytes(const job *j) { return (size_t)j->rows * (size_t)j->cols * (size_t)dtype_size(j->t); }

static void job_launch(const job *j, int set)
{
    if (j->fn) {
        j->fn((const float *)j->x[set], (float *)j->y[set], j->rows, j->cols, 0);
        CUDA_CHECK_LAUNCH();
    } else if (j->tfn) {
        j->tfn(j->x[set], j->cols, j->y[set], j->cols, j->rows, j->cols, j->t, 0);
        CUDA_CHECK_LAUNCH();
    } else if (j->read_only) {
        read_pass((const float *)j->x[set], (float *)j->y[set], j->rows * j->cols, 0);
    } else {
        CUDA_CHECK(cudaMemcpyAsync(j->y[set], j->x[set], job_bytes(j), cudaMemcpyDeviceToDevice, 0));
    }
}

/* ---- holding the queue ------------------------------------------------
 * A run that takes the GPU less time than its launch takes the host (1024
 * x 512: a few microseconds each) finds the GPU idle, and its events then
 * bracket the host's launch as well as the GPU's work. Which of the two is
 * longer changes from run to run: the same build at 1024 x 512 measured
 * the classifier at 68.7 and 94.9 % of the copy in two processes, and
 * lesson 8 at 72.2, 95.5 and 121.2 (H100, 2026-11-27). So the timed runs
 * are queued in batches behind hold_kernel, which keeps the stream waiting
 * until the host has queued the whole batch (the idea of nvbench's
 * blocking kernel): the events then time the GPU's work alone, back to
 * back, as in a network. A run that waits for the GPU on the host (a
 * synchronising call) would wait for the hold: the hold gives up after
 * HOLD_TIMEOUT_NS and time_job times that job again without it. */
#define HOLD_BATCH 64                 /* runs per hold: a few hundred queued commands */
#define HOLD_TIMEOUT_NS 1000000000ULL /* 1 s: far past the queuing of a batch */

#ifndef CUDA_EMU
__global__ void hold_kernel(const volatile int *release, volatile int *gave_up, unsigned long long timeout_ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        if (*release) return;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < timeout_ns);
    *gave_up = 1;
}

/* Mapped host memory: [0] release, [1] gave up. NULL where the GPU cannot
 * map it (the runs are then timed without holding). */
static volatile int *hold_flags(int **device)
{
    static int *host, *dev, tried;
    if (!tried) {
        tried = 1;
        if (cudaHostAlloc((void **)&host, 2 * sizeof(int), cudaHostAllocMapped) != cudaSuccess ||
            cudaHostGetDevicePointer((void **)&dev, host, 0) != cudaSuccess) {
            (void)cudaGetLastError(); /* clear it: timing goes on unheld */
            host = dev = NULL;
        }
    }
    *device = dev;
    return host;
}
#else /* the CPU emulator runs a kernel as it is launched: a hold would never be released */
static volatile int *hold_flags(int **device)
{
    *device = NULL;
    return NULL;
}
#endif

/* Runs [first, end) of job j, each bracketed by its events ev[2i], ev[2i+1];
 * held: behind hold_kernel until all are queued. Returns 0 if the hold
 * gave up. */
static int time_batch(const job *j, int sets, int warmup, int first, int end, cudaEvent_t *ev, int held)
{
    int *dflags = NULL;
    volatile int *flags = held ? hold_flags(&dflags) : NULL;
#ifndef CUDA_EMU
    if (flags) {
        flags[0] = flags[1] = 0;
        hold_kernel<<<1, 1>>>(dflags, dflags + 1, HOLD_TIMEOUT_NS);
        CUDA_CHECK_LAUNCH();
    }
#endif
    for (int i = first; i < end; i++) {
        CUDA_CHECK(cudaEventRecord(ev[2 * i], 0));
        job_launch(j, (warmup + i) % sets);
        CUDA_CHECK(cudaEventRecord(ev[2 * i + 1], 0));
    }
    if (flags) flags[0] = 1;
    CUDA_CHECK(cudaDeviceSynchronize());
    return !flags || !flags[1];
}

static timing time_job(const job *j, int sets, int warmup, int iters)
{
    for (int i = 0; i < warmup; i++) job_launch(j, i % sets);

    cudaEvent_t *ev = (cudaEvent_t *)malloc(2 * (size_t)iters * sizeof *ev);
    double *ms = (double *)malloc((size_t)iters * sizeof *ms);
    if (!ev || !ms) { fprintf(stderr, "out of host memory\n"); exit(1); }
    for (int i = 0; i < 2 * iters; i++) CUDA_CHECK(cudaEventCreate(&ev[i]));

    /* Each run is bracketed by its own pair of events; the runs of a batch
     * are queued back to back, behind the hold. */
    int held = 1;
    for (int first = 0; first < iters; first += HOLD_BATCH) {
        const int end = first + HOLD_BATCH < iters ? first + HOLD_BATCH : iters;
        if (!time_batch(j, sets, warmup, first, end, ev, held)) { /* it synchronises: time all runs unheld */
            held = 0;
            first = -HOLD_BATCH;
        }
    }
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

timing time_runs(softmax_fn fn, float **x, float **y, int sets, long long rows,
                 long long cols, int warmup, int iters)
{
    const job j = {fn, NULL, DTYPE_F32, (void **)x, (void **)y, rows, cols, 0};
    return time_job(&j, sets, warmup, iters);
}

timing time_runs_typed(softmax_typed_fn fn, dtype t, void **x, void **y, int sets, long long rows,
                       long long cols, int warmup, int iters)
{
    const job j = {NULL, fn, t, x, y, rows, cols, 0};
    return time_job(&j, sets, warmup, iters);
}

/* ---- the read-only pass --------------------------------------------------
 * Each block reads its float4s (16-byte accesses, like the copy), 4 in
 * flight per thread, sums them and writes one float: the loads cannot be
 * optimised away, and the writes are a few KB. Grid: at most 4 blocks per
 * SM (a full GPU), grid-stride beyond. x from cudaMalloc
 * (16-byte aligned); the n % 4 tail floats are read by block 0. */
__global__ void __launch_bounds__(READ_PASS_BLOCK)
read_pass_kernel(const float *__restrict__ x, float *__restrict__ partial, long long n)
{
    __shared__ float red[READ_PASS_BLOCK / 32];
    const long long n4 = n / 4, stride = (long long)gridDim.x * READ_PASS_BLOCK;
    const float4 *x4 = reinterpret_cast<const float4 *>(x);
    float s = 0.0f;
    long long i = (long long)blockIdx.x * READ_PASS_BLOCK + threadIdx.x;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        const float4 a = x4[i], b = x4[i + stride], c = x4[i + 2 * stride], d = x4[i + 3 * stride];
        s += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) + (d.x + d.y + d.z + d.w);
    }
    for (; i < n4; i += stride) {
        const float4 a = x4[i];
        s += a.x + a.y + a.z + a.w;
    }
    if (blockIdx.x == 0 && threadIdx.x < n % 4) s += x[n4 * 4 + threadIdx.x];
    for (int off = 16; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int w = 0; w < READ_PASS_BLOCK / 32; w++) t += red[w];
        partial[blockIdx.x] = t;
    }
}

int device_sms(void)
{
    static int sms;
    if (!sms) {
        int dev;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        if (sms < 1) sms = 1;
    }
    return sms;
}

int read_pass_blocks(long long n)
{
    const long long sms = device_sms(); /* 4 blocks of 512 threads fill an SM of 2048 threads */
    const long long need = (n / 4 + READ_PASS_BLOCK - 1) / READ_PASS_BLOCK;
    return (int)(need < 1 ? 1 : need > 4LL * sms ? 4LL * sms : need);
}

void read_pass(const float *x, float *partial, long long n, cudaStream_t stream)
{
    read_pass_kernel<<<read_pass_blocks(n), READ_PASS_BLOCK, 0, stream>>>(x, partial, n);
    CUDA_CHECK_LAUNCH();
}

timing time_read_pass(float **x, float **partial, int sets, long long n, int warmup, int iters)
{
    const job j = {NULL, NULL, DTYPE_F32, (void **)x, (void **)partial, 1, n, 1};
    return time_job(&j, sets, warmup, iters);
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
    double bytes = 2.0 * rows * (double)cols * dtype_size(storage);
    double gbps = bytes / (t->median_ms * 1e6), copy_gbps = bytes / (copy->median_ms * 1e6);
    fprintf(f, "%d,%s,%lld,%lld,%.6f,%.6f,%.6f,%.1f,%.1f,%.1f,%g,%s,\"%s\",%s,%s,%d,%d,%s,%s,%s\n",
            lesson_number, name, rows, cols, t->median_ms, t->min_ms, t->max_ms, gbps,
            copy_gbps, 100.0 * gbps / copy_gbps, bytes_per_elem, verified, p->gpu,
            p->driver, p->runtime, p->sm_mhz, p->mem_mhz, GIT_COMMIT, p->date, dtype_name(storage));
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

/* The report's first lines: the lesson, the device, the shape. */
static void print_header(const lesson *l, const options *o, const provenance *p, dtype t, int sets)
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
    if (o->csv_path) printf("  csv            not written: no timing on the CPU emulator\n");
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
        fail_usage(l, buf);
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
        fail_usage(l, err);

    print_header(l, o, &p, DTYPE_F32, m.sets);
    print_measured(l->traffic, l->bytes_per_elem, DTYPE_F32, o, &m);
#ifndef CUDA_EMU
    if (o->csv_path)
        csv_append(o->csv_path, l->number, l->name, rows, cols, &m.t, &m.copy, l->bytes_per_elem,
                   o->check ? (m.pass ? "yes" : "FAILED") : "no", &p);
#endif
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
        if (i == 0) print_header(l, o, &p, t, m.sets);
        printf("\n  kernel         %s: %s\n", k[i].name, k[i].what);
        print_measured(k[i].traffic, k[i].elems_moved * (double)size, t, o, &m);
        times[i] = m.t;
        *copy = m.copy;
        if (!m.pass) status = 1;
#ifndef CUDA_EMU
        if (o->csv_path)
            csv_append_typed(o->csv_path, l->number, k[i].name, rows, cols, &m.t, &m.copy,
                             k[i].elems_moved * (double)size, o->check ? (m.pass ? "yes" : "FAILED") : "no", &p, t);
#endif
    }
    if (o->output_path && npy_write_typed(o->output_path, y, t, rows, cols, err, sizeof err) != 0)
        fail_usage(l, err);
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
