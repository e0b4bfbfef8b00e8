/* Lesson 11 program: softmax over rows split across GPUs.
 *
 * The entry point of the common harness (check against the float64
 * reference on every element, --input, --output, the report) is
 * split_entry: x and y on GPU 0, their column slices copied to the K
 * GPUs, softmax_split, the slices copied back. Its time includes those
 * copies. The lesson's own measurement follows: the slices resident on
 * their GPUs, as a model-parallel layer holds them, each way of combining
 * timed per call against a copy of each GPU's own slice, with the share
 * spent in the collectives. --csv gets that resident time (--method's),
 * the lesson's own measure, not the entry point's with its copies.
 *
 * Lesson 11 also takes --gpus K (default: every visible GPU), --method
 * all-reduce|all-gather (the entry point's; both are timed) and --comm
 * nccl|local (NCCL, the default where it was built; local: the in-process
 * stand-in, which may also put several ranks on one GPU). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "split_softmax.h"

static float *g_x[SPLIT_MAX_RANKS], *g_y[SPLIT_MAX_RANKS]; /* each rank's slice: rows x n */
static split_rank g_ranks[SPLIT_MAX_RANKS];
static int g_k;
static long long g_rows = -1, g_cols = -1;
static split_method g_how = SPLIT_ALL_GATHER;
static split_comm *g_comm;

static void split_entry(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);

static const lesson LESSON = {
    11, "multi-gpu",
    "rows split across GPUs: each holds a slice of every row, (m, d) states joined by NCCL collectives",
    "per GPU 2 reads + 1 write of its slice, 8 bytes per row through the collectives; timed here with the scatter from and gather to GPU 0",
    12.0, split_entry, verify_rtol,
    4096, 65536,
};

static void usage_extra(void)
{
    printf("Lesson 11 also takes:\n"
           "  --gpus K            split each row over K GPUs (default: every visible GPU; 1 to %d)\n"
           "  --method M          how the entry point joins the GPUs' (m, d): all-gather (the default) or\n"
           "                      all-reduce; the resident timing runs both\n"
           "  --comm C            nccl (the default where lesson 11 was built with NCCL) or local (the\n"
           "                      in-process stand-in, staged through the host; it may place several\n"
           "                      ranks on one GPU)\n",
           SPLIT_MAX_RANKS);
}

typedef struct {
    int gpus, gpus_set;
    split_method how;
    int local;
} split_options;

/* Lesson 11's flags, for lesson_take_flags (ctx: the split_options). */
static const char *const FLAGS[] = {"--gpus", "--method", "--comm"};
static int take_flag(int f, const char *value, void *ctx, char *buf, size_t len)
{
    static const char *const METHODS[] = {"all-gather", "all-reduce"}, *const COMMS[] = {"nccl", "local"};
    split_options *s = (split_options *)ctx;
    int k = 0;
    const int bad = f == 0   ? options_int(FLAGS[f], value, 1, SPLIT_MAX_RANKS, &s->gpus, buf, len)
                    : f == 1 ? (k = options_choice(FLAGS[f], value, METHODS, 2, buf, len)) < 0
                             : (k = options_choice(FLAGS[f], value, COMMS, 2, buf, len)) < 0;
    if (f == 0) s->gpus_set = 1;
    if (f == 1) s->how = k ? SPLIT_ALL_REDUCE : SPLIT_ALL_GATHER;
    if (f == 2) s->local = k;
    return bad;
}

/* The ranks' slices for rows x cols: allocated on first use, again when
 * the shape changes. Rank k on GPU k (k mod the GPUs, with --comm local). */
static void place_slices(long long rows, long long cols, int ngpus)
{
    if (rows == g_rows && cols == g_cols) return;
    for (int k = 0; k < g_k; k++) {
        CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
        if (g_x[k]) CUDA_CHECK(cudaFree(g_x[k]));
        if (g_y[k]) CUDA_CHECK(cudaFree(g_y[k]));
        g_x[k] = g_y[k] = NULL;
    }
    for (int k = 0; k < g_k; k++) {
        const int dev = k % ngpus;
        const long long n = split_begin(cols, k + 1, g_k) - split_begin(cols, k, g_k);
        const size_t bytes = (size_t)rows * (size_t)n * sizeof(float);
        CUDA_CHECK(cudaSetDevice(dev));
        if (!g_ranks[k].at.stream) CUDA_CHECK(cudaStreamCreateWithFlags(&g_ranks[k].at.stream, cudaStreamNonBlocking));
        if (cudaMalloc(&g_x[k], bytes ? bytes : 16) != cudaSuccess || cudaMalloc(&g_y[k], bytes ? bytes : 16) != cudaSuccess) {
            char buf[200];
            snprintf(buf, sizeof buf, "%lld x %lld floats do not fit GPU %d's memory (%.1f GiB a slice, twice)", rows, n,
                     dev, bytes / 1073741824.0);
            lesson_fail_usage(&LESSON, buf);
        }
        g_ranks[k].at.device = dev;
        g_ranks[k].x = g_x[k];
        g_ranks[k].y = g_y[k];
        g_ranks[k].n = n;
    }
    CUDA_CHECK(cudaSetDevice(0));
    g_rows = rows;
    g_cols = cols;
}

static int g_ngpus;

/* The harness's entry point: x and y on GPU 0. */
static void split_entry(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    place_slices(rows, cols, g_ngpus);
    CUDA_CHECK(cudaStreamSynchronize(stream)); /* x is written */
    /* Each copy on its rank's stream: ordered before that rank's kernels
     * (a device-to-device cudaMemcpy may return before it is done, on a
     * stream the ranks' non-blocking streams do not wait for). */
    for (int k = 0; k < g_k; k++) {
        const long long c0 = split_begin(cols, k, g_k), n = g_ranks[k].n;
        if (n == 0) continue;
        CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
        CUDA_CHECK(cudaMemcpy2DAsync(g_x[k], (size_t)n * sizeof(float), x + c0, (size_t)cols * sizeof(float),
                                     (size_t)n * sizeof(float), (size_t)rows, cudaMemcpyDefault, g_ranks[k].at.stream));
    }
    softmax_split(g_ranks, g_k, rows, g_how, g_comm);
    for (int k = 0; k < g_k; k++) {
        const long long c0 = split_begin(cols, k, g_k), n = g_ranks[k].n;
        CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
        if (n > 0)
            CUDA_CHECK(cudaMemcpy2DAsync(y + c0, (size_t)cols * sizeof(float), g_y[k], (size_t)n * sizeof(float),
                                         (size_t)n * sizeof(float), (size_t)rows, cudaMemcpyDefault, g_ranks[k].at.stream));
        CUDA_CHECK(cudaStreamSynchronize(g_ranks[k].at.stream)); /* y is whole before the harness reads it */
    }
    CUDA_CHECK(cudaSetDevice(0));
}

static int cmp_float(const void *a, const void *b)
{
    const float u = *(const float *)a, v = *(const float *)b;
    return (u > v) - (u < v);
}

/* `iters` calls of softmax_split on the resident slices (all ranks'
 * streams finished): median, min and max; *comm_ms the median time in its
 * collectives. */
static timing time_split(split_method how, const options *o, float *comm_ms)
{
    float *t = (float *)malloc((size_t)o->iters * sizeof(float)), *c = (float *)malloc((size_t)o->iters * sizeof(float));
    cudaEvent_t a, b, done[SPLIT_MAX_RANKS];
    for (int k = 1; k < g_k; k++) {
        CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
        CUDA_CHECK(cudaEventCreateWithFlags(&done[k], cudaEventDisableTiming));
    }
    CUDA_CHECK(cudaSetDevice(g_ranks[0].at.device));
    CUDA_CHECK(cudaEventCreate(&a));
    CUDA_CHECK(cudaEventCreate(&b));
    for (int i = -o->warmup; i < o->iters; i++) {
        for (int k = 0; k < g_k; k++) {
            CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
            CUDA_CHECK(cudaStreamSynchronize(g_ranks[k].at.stream));
        }
        CUDA_CHECK(cudaSetDevice(g_ranks[0].at.device));
        CUDA_CHECK(cudaEventRecord(a, g_ranks[0].at.stream));
        softmax_split(g_ranks, g_k, g_rows, how, g_comm);
        /* rank 0's stream waits for every other rank: the call ends when the last one does */
        for (int k = 1; k < g_k; k++) {
            CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
            CUDA_CHECK(cudaEventRecord(done[k], g_ranks[k].at.stream));
            CUDA_CHECK(cudaSetDevice(g_ranks[0].at.device));
            CUDA_CHECK(cudaStreamWaitEvent(g_ranks[0].at.stream, done[k], 0));
        }
        CUDA_CHECK(cudaSetDevice(g_ranks[0].at.device));
        CUDA_CHECK(cudaEventRecord(b, g_ranks[0].at.stream));
        CUDA_CHECK(cudaEventSynchronize(b));
        if (i >= 0) {
            CUDA_CHECK(cudaEventElapsedTime(&t[i], a, b));
            c[i] = split_last_comm_ms();
        }
    }
    qsort(t, (size_t)o->iters, sizeof(float), cmp_float);
    qsort(c, (size_t)o->iters, sizeof(float), cmp_float);
    const timing r = {t[o->iters / 2], t[0], t[o->iters - 1], o->iters};
    *comm_ms = c[o->iters / 2];
    CUDA_CHECK(cudaEventDestroy(a));
    CUDA_CHECK(cudaEventDestroy(b));
    for (int k = 1; k < g_k; k++) {
        CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
        CUDA_CHECK(cudaEventDestroy(done[k]));
    }
    free(t);
    free(c);
    return r;
}

/* Times a device-to-device copy of each GPU's slice, all GPUs at once
 * (the longest of them): what the memory of one GPU takes to move its
 * share of x and y once, the bound of a GPU's work here. */
static timing time_slice_copies(const options *o)
{
    float *t = (float *)malloc((size_t)o->iters * sizeof(float));
    cudaEvent_t a[SPLIT_MAX_RANKS], b[SPLIT_MAX_RANKS];
    for (int k = 0; k < g_k; k++) {
        CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
        CUDA_CHECK(cudaEventCreate(&a[k]));
        CUDA_CHECK(cudaEventCreate(&b[k]));
    }
    for (int i = -o->warmup; i < o->iters; i++) {
        for (int k = 0; k < g_k; k++) {
            CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
            CUDA_CHECK(cudaEventRecord(a[k], g_ranks[k].at.stream));
            CUDA_CHECK(cudaMemcpyAsync(g_y[k], g_x[k], (size_t)g_rows * (size_t)g_ranks[k].n * sizeof(float),
                                       cudaMemcpyDeviceToDevice, g_ranks[k].at.stream));
            CUDA_CHECK(cudaEventRecord(b[k], g_ranks[k].at.stream));
        }
        float worst = 0.0f;
        for (int k = 0; k < g_k; k++) {
            float ms;
            CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
            CUDA_CHECK(cudaEventSynchronize(b[k]));
            CUDA_CHECK(cudaEventElapsedTime(&ms, a[k], b[k]));
            if (ms > worst) worst = ms;
        }
        if (i >= 0) t[i] = worst;
    }
    qsort(t, (size_t)o->iters, sizeof(float), cmp_float);
    const timing med = {t[o->iters / 2], t[0], t[o->iters - 1], o->iters};
    for (int k = 0; k < g_k; k++) {
        CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
        CUDA_CHECK(cudaEventDestroy(a[k]));
        CUDA_CHECK(cudaEventDestroy(b[k]));
    }
    free(t);
    return med;
}

#ifndef CUDA_EMU
/* ---- rows too long for GPU 0 to hold whole ---- */

/* U(-4, 4) from a hash of the element's place in the whole matrix
 * (SplitMix64's finaliser), so every split holds the same matrix. */
__global__ void fill_slice_kernel(float *x, long long rows, long long n, long long c0, long long cols,
                                  unsigned long long seed)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < rows * n;
         i += (long long)gridDim.x * blockDim.x) {
        unsigned long long h = (unsigned long long)((i / n) * cols + c0 + i % n) + seed * 0x9E3779B97F4A7C15ull;
        h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
        h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
        h ^= h >> 31;
        x[i] = (float)(h >> 40) * (8.0f / 16777216.0f) - 4.0f;
    }
}

/* Adds up a slice in float64: a NaN anywhere (y is poisoned) makes it NaN. */
__global__ void sum_slice_kernel(const float *y, long long count, double *sum)
{
    __shared__ double part[256];
    double s = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += (long long)gridDim.x * blockDim.x)
        s += y[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = 128; w > 0; w /= 2) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(sum, part[0]);
}

static float peek(const float *p)
{
    float v;
    CUDA_CHECK(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}

/* The check where no float64 reference of the whole matrix can be made:
 * the output's elements add up to M (each row to 1) over every element of
 * every slice, and in 16 rows, 16 columns spread over all slices (the
 * last included) keep y_j / y_0 = exp(x_j - x_0). Returns 1 on PASS. */
static int check_resident(void)
{
    const double rtol = verify_rtol(g_cols), ratio_tol = 2.0 * verify_rtol(1); /* D cancels in y_j / y_0 */
    double total = 0.0;
    for (int k = 0; k < g_k; k++) {
        double *sum;
        CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
        CUDA_CHECK(cudaMalloc(&sum, sizeof(double)));
        CUDA_CHECK(cudaMemset(sum, 0, sizeof(double)));
        sum_slice_kernel<<<1024, 256, 0, g_ranks[k].at.stream>>>(g_y[k], g_rows * g_ranks[k].n, sum);
        CUDA_CHECK(cudaGetLastError());
        double s;
        CUDA_CHECK(cudaMemcpyAsync(&s, sum, sizeof s, cudaMemcpyDeviceToHost, g_ranks[k].at.stream));
        CUDA_CHECK(cudaStreamSynchronize(g_ranks[k].at.stream));
        CUDA_CHECK(cudaFree(sum));
        total += s;
    }
    int ok = fabs(total - (double)g_rows) <= rtol * (double)g_rows; /* false for NaN */
    double worst = 0.0;
    for (int i = 0; i < 16; i++) {
        const long long r = (g_rows - 1) * i / 15;
        double x0 = 0.0, y0 = 0.0;
        for (int j = 0; j < 16; j++) {
            const long long c = (g_cols - 1) * j / 15;
            int k = 0;
            while (split_begin(g_cols, k + 1, g_k) <= c) k++;
            const long long at = r * g_ranks[k].n + (c - split_begin(g_cols, k, g_k));
            CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
            const double x = peek(g_x[k] + at), y = peek(g_y[k] + at);
            if (j == 0) {
                x0 = x;
                y0 = y;
                continue;
            }
            const double e = fabs(y / y0 - exp(x - x0)) / exp(x - x0);
            if (!(e <= ratio_tol)) ok = 0;
            if (e > worst || e != e) worst = e;
        }
    }
    CUDA_CHECK(cudaSetDevice(0));
    printf("  check          %s (the %lld rows add up to %.9g over every element; y_j / y_0 = exp(x_j - x_0)\n"
           "                 within %.1e at 16 x 16 samples, worst %.1e; no float64 reference of the whole matrix)\n",
           ok ? "PASS" : "FAIL", g_rows, total, ratio_tol, worst);
    return ok;
}

/* Whether x and y whole, with GPU 0's slices beside them, fit GPU 0: the
 * harness's entry point needs them there. */
static int whole_fits_gpu0(long long rows, long long cols)
{
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int on_gpu0 = (g_k + g_ngpus - 1) / g_ngpus; /* ranks 0, G, 2G, ... */
    const double need = 8.0 * (double)rows * (double)cols * (1.0 + (double)on_gpu0 / g_k);
    return need < 0.95 * (double)free_bytes;
}
#endif

int main(int argc, char **argv)
{
    split_options so = {0, 0, SPLIT_ALL_GATHER, !split_have_nccl()};
    argc = lesson_take_flags(&LESSON, argc, argv, FLAGS, 3, take_flag, &so, usage_extra);
    options o;
    lesson_init_spread(&LESSON, &o, argc, argv); /* the shape may fill every GPU */

    CUDA_CHECK(cudaGetDeviceCount(&g_ngpus));
    g_k = so.gpus_set ? so.gpus : g_ngpus;
    if (g_k > g_ngpus && !so.local) {
        char buf[160];
        snprintf(buf, sizeof buf, "--gpus %d: this machine has %d GPU(s) (--comm local may put several ranks on one)",
                 g_k, g_ngpus);
        lesson_fail_usage(&LESSON, buf);
    }
    if (g_k > SPLIT_MAX_RANKS) g_k = SPLIT_MAX_RANKS;
    g_how = so.how;
    int devices[SPLIT_MAX_RANKS];
    for (int k = 0; k < g_k; k++) devices[k] = k % g_ngpus;
    g_comm = so.local ? split_comm_local(g_k) : split_comm_nccl(devices, g_k);
    if (!g_comm) exit(2);
    CUDA_CHECK(cudaSetDevice(0));

    printf("Lesson 11: each row split over %d rank(s) on %d GPU(s), joined by %s\n", g_k,
           g_k < g_ngpus ? g_k : g_ngpus, g_comm->name);
#ifndef CUDA_EMU
    int status;
    if (o.input_path || o.output_path || whole_fits_gpu0(o.rows, o.cols)) {
        options entry = o; /* the CSV row is the resident time, below */
        entry.csv_path = NULL;
        status = lesson_run(&LESSON, &entry);
    } else {
        /* A row longer than one GPU can hold (x and y): no harness, no host
         * copy; the slices are made on their GPUs and checked there. */
        printf("  %lld x %lld: x and y whole (%.1f GiB) do not fit GPU 0, so the slices are made on their GPUs\n",
               o.rows, o.cols, 8.0 * o.rows * o.cols / 1073741824.0);
        place_slices(o.rows, o.cols, g_ngpus);
        for (int k = 0; k < g_k; k++) {
            const long long n = g_ranks[k].n;
            CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
            fill_slice_kernel<<<4096, 256, 0, g_ranks[k].at.stream>>>(g_x[k], o.rows, n, split_begin(o.cols, k, g_k),
                                                                      o.cols, o.seed);
            CUDA_CHECK(cudaGetLastError());
            CUDA_CHECK(cudaMemsetAsync(g_y[k], 0xFF, (size_t)o.rows * (size_t)n * sizeof(float), g_ranks[k].at.stream));
        }
        softmax_split(g_ranks, g_k, o.rows, g_how, g_comm);
        status = o.check && !check_resident();
    }

    /* ---- the slices resident on their GPUs ---- */
    place_slices(o.rows, o.cols, g_ngpus);
    const timing copy = time_slice_copies(&o);
    printf("\n  slices resident on their GPUs (%lld x %lld of the %lld columns on the widest):\n", g_rows,
           g_ranks[0].n, g_cols);
    printf("  %-26s %10s %12s %14s %12s\n", "combine", "time (ms)", "% of copy", "collectives", "share");
    printf("  %-26s %10.4f %12s %14s %12s\n", "copy of each GPU's slice", copy.median_ms, "100.0 %", "-", "-");
    for (int h = 0; h < 2; h++) {
        const split_method how = h ? SPLIT_ALL_REDUCE : SPLIT_ALL_GATHER;
        float comm_ms;
        const timing t = time_split(how, &o, &comm_ms);
        const double ms = t.median_ms;
        printf("  %-26s %10.4f %10.1f %% %11.4f ms %10.1f %%\n", h ? "all-reduce (2 collectives)" : "all-gather (1 collective)",
               ms, 100.0 * copy.median_ms / ms, comm_ms, 100.0 * comm_ms / ms);
        if (o.csv_path && how == g_how) {
            provenance p;
            get_provenance(&p);
            csv_append(o.csv_path, LESSON.number, LESSON.name, o.rows, o.cols, &t, &copy, LESSON.bytes_per_elem,
                       o.check ? (status ? "FAILED" : "yes") : "no", &p);
        }
    }
    printf("  (%% of copy: a copy of each GPU's slice, timed on all GPUs at once, over the call's time; the\n"
           "   split softmax moves 12 bytes per element where the copy moves 8, so 66.7 %% is its bound)\n");
#else
    const int status = lesson_run(&LESSON, &o);
#endif
    for (int k = 0; k < g_k; k++) {
        CUDA_CHECK(cudaSetDevice(g_ranks[k].at.device));
        CUDA_CHECK(cudaFree(g_x[k]));
        CUDA_CHECK(cudaFree(g_y[k]));
        CUDA_CHECK(cudaStreamDestroy(g_ranks[k].at.stream));
    }
    split_release();
    g_comm->destroy(g_comm);
    return status;
}
