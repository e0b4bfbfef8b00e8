/* How every kernel of the course is timed (harness.h declares the calls;
 * common/harness.cu checks a kernel once, then times it here):
 *
 *   - CUDA events around each run, after warm-up runs; the median of
 *     o->iters runs (min and max reported too), queued in batches, each
 *     behind a kernel that holds the stream until it is queued
 *     (time_batch);
 *   - when the input and output fit in L2 (50 MB on an H100), several
 *     copies of both are rotated so that each run starts from DRAM, as it
 *     would inside a real network (rotation_sets);
 *   - the copy roofline: cudaMemcpyAsync device-to-device of the same bytes,
 *     timed the same way in the same process. A softmax must read M*N floats
 *     and write M*N floats, exactly what a copy does, so the copy is the
 *     honest upper bound for its effective bandwidth;
 *   - the read-only bound (read_pass) and the misaligned views (time_views),
 *     timed by the same code. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "timing.h"

/* ---- timing ------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void job_launch(const job *j, int set)
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
 * the classifier at 68.7 % of the copy in one process and 94.9 % in
 * another (H100; docs/method.md). So the timed runs
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
    static int *host, *dev, asked;
    if (!asked) {
        asked = 1;
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

timing time_job(const job *j, int sets, int warmup, int iters)
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

/* ---- buffer sets ------------------------------------------------------- */

void buffer_sets_open(buffer_sets *s, size_t a_bytes, size_t b_bytes, size_t bytes)
{
#ifdef CUDA_EMU
    (void)bytes;
    s->sets = 1;
#else
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    s->sets = rotation_sets(bytes, free_b);
#endif
    s->a_bytes = a_bytes;
    s->b_bytes = b_bytes;
    for (int k = 0; k < s->sets; k++) {
        CUDA_CHECK(cudaMalloc(&s->a[k], a_bytes));
        CUDA_CHECK(cudaMalloc(&s->b[k], b_bytes));
    }
}

void buffer_sets_close(buffer_sets *s)
{
    for (int k = 0; k < s->sets; k++) {
        CUDA_CHECK(cudaFree(s->a[k]));
        CUDA_CHECK(cudaFree(s->b[k]));
    }
    s->sets = 0;
}

void buffer_sets_run_once(const buffer_sets *s, softmax_fn fn, const void *in, size_t in_bytes, long long rows,
                          long long cols)
{
    for (int k = 0; k < s->sets; k++) {
        CUDA_CHECK(cudaMemcpy(s->a[k], in, in_bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(s->b[k], 0xFF, s->b_bytes));
    }
    fn(s->a[0], s->b[0], rows, cols, 0);
    CUDA_CHECK_LAUNCH();
}

timing timing_scaled(timing t, double scale)
{
    t.median_ms *= scale;
    t.min_ms *= scale;
    t.max_ms *= scale;
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

/* ---- buffer rotation ---------------------------------------------------- */

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
