/* Lesson 8 program: the dispatcher's table on this GPU, the path it picks
 * for the shape asked for, then the check and the timing against the copy,
 * and (GPU only) the same rows as misaligned views. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "softmax_fastest.h"

static const lesson LESSON = {
    8, "fastest",
    "one entry point: the best of six kernels for the shape (warp, block, shared, cluster, grid, split)",
    "1 read + 1 write while the row fits on chip (even across SMs), else 2 reads + 1 write",
    8.0, softmax_fastest, verify_rtol,
    16384, 4096,
};

static void print_plan(long long rows, long long cols, const fastest_plan *p)
{
    char how[96];
    switch (p->path) {
    case FASTEST_WARP:
    case FASTEST_BLOCK:
        snprintf(how, sizeof how, "%d threads/row x %d floats, block %d", p->threads_per_row,
                 p->floats_per_thread, p->block);
        break;
    case FASTEST_SHARED:
        snprintf(how, sizeof how, "block %d, %.1f KB shared", p->block, p->smem_bytes / 1024.0);
        break;
    case FASTEST_CLUSTER:
        snprintf(how, sizeof how, "%d CTAs x %d threads, %lld floats/CTA", p->cluster, p->block, p->segment);
        break;
    default:
        snprintf(how, sizeof how, "%lld blocks/row x %lld floats", p->splits, p->segment);
        break;
    }
    printf("  %9lld x %-9lld  %-52s %-40s %2.0f B/elem\n", rows, cols, fastest_path_name(p->path), how,
           p->bytes_per_elem);
}

/* The dispatcher's choice over the benchmark grid (M x N = 2^26), float4
 * views assumed (16-byte aligned; no memory is touched). */
static void show_table(void)
{
    const float *a = (const float *)(uintptr_t)256; /* an aligned address, never dereferenced */
    printf("The dispatcher on this GPU (%s clusters; shared memory holds %lld floats per block)\n",
           softmax_fastest_has_clusters() ? "with" : "without", softmax_fastest_shared_capacity());
    for (int lg = 5; lg <= 26; lg++) {
        const long long n = 1LL << lg, m = (1LL << 26) / n;
        fastest_plan p = softmax_fastest_plan(FASTEST_AUTO, a, n, a, n, m, n);
        print_plan(m, n, &p);
    }
    const long long odd[][2] = {{1024, 512}, {1, 65536}, {8, 100003}, {4096, 4097}};
    for (int i = 0; i < 4; i++) {
        fastest_plan p = softmax_fastest_plan(FASTEST_AUTO, a, odd[i][1], a, odd[i][1], odd[i][0], odd[i][1]);
        print_plan(odd[i][0], odd[i][1], &p);
    }
    printf("\n");
}

/* ---- views (GPU only): are misaligned rows still fast? -------------------
 * The same rows as an aligned, contiguous matrix, then as views whose rows
 * do not start on 16-byte boundaries: both bases one float past one; a row
 * stride of cols + 1 (padded rows); one column fewer (N % 4 != 0) -- in all
 * three, each row of x starts where the same row of y does, relative to 16
 * bytes, so the kernels peel each row's head and tail and keep 128-bit
 * accesses for the rest; and x one float past a boundary with y on one,
 * where only 32-bit accesses are left. tests/test_lesson8.cu checks every
 * one of them for correctness; here they are timed against the aligned
 * run. */
#ifndef CUDA_EMU
static struct {
    long long xoff, yoff, ld, cols;
} V;

static void run_view(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    (void)cols;
    softmax_fastest_strided(x + V.xoff, V.ld, y + V.yoff, V.ld, rows, V.cols, s);
}

static void time_views(const options *o)
{
    const long long rows = o->rows, cols = o->cols, ld_max = cols + 1;
    const size_t elems = (size_t)rows * (size_t)ld_max + 4, bytes = elems * sizeof(float);
    size_t free_b, total_b;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const int sets = rotation_sets(bytes, free_b);
    float *hx = (float *)malloc(bytes), *x[64], *y[64];
    if (!hx) {
        fprintf(stderr, "lesson8: out of host memory for the views\n");
        exit(1);
    }
    inputs_fill(hx, 1, (long long)elems, INPUT_NORMAL, o->seed);
    for (int k = 0; k < sets; k++) {
        CUDA_CHECK(cudaMalloc(&x[k], bytes));
        CUDA_CHECK(cudaMalloc(&y[k], bytes));
        CUDA_CHECK(cudaMemcpy(x[k], hx, bytes, cudaMemcpyHostToDevice));
    }
    const struct {
        const char *name;
        long long xoff, yoff, ld, cols;
    } C[] = {
        {"aligned, contiguous", 0, 0, cols, cols},
        {"bases 1 float past 16 bytes", 1, 1, cols, cols},
        {"row stride cols + 1", 0, 0, cols + 1, cols},
        {"cols - 1 (N % 4 != 0)", 0, 0, cols - 1, cols - 1},
        {"x 1 float past 16 bytes, y not", 1, 0, cols, cols},
    };
    const int ncases = (int)(sizeof C / sizeof C[0]);
    printf("Views at %lld x %lld: the same rows, misaligned (median of %d runs)\n", rows, cols,
           o->iters);
    printf("  %-32s %-8s %11s %9s %12s\n", "view", "access", "time (ms)", "GB/s", "of aligned");
    double aligned_gbps = 0.0;
    for (int i = 0; i < ncases; i++) {
        if (C[i].cols < 1) continue;
        V.xoff = C[i].xoff;
        V.yoff = C[i].yoff;
        V.ld = C[i].ld;
        V.cols = C[i].cols;
        const fastest_plan p = softmax_fastest_plan(FASTEST_AUTO, x[0] + V.xoff, V.ld, y[0] + V.yoff, V.ld, rows,
                                                    V.cols);
        const timing t = time_runs(run_view, x, y, sets, rows, cols, o->warmup, o->iters);
        const double gbps = 2.0 * (double)rows * (double)V.cols * sizeof(float) / (t.median_ms * 1e6);
        if (i == 0) aligned_gbps = gbps;
        printf("  %-32s %-8s %11.4f %9.1f %10.1f %%\n", C[i].name, p.vec4 ? "128-bit" : "32-bit", t.median_ms,
               gbps, 100.0 * gbps / aligned_gbps);
    }
    for (int k = 0; k < sets; k++) {
        CUDA_CHECK(cudaFree(x[k]));
        CUDA_CHECK(cudaFree(y[k]));
    }
    free(hx);
}
#endif

int main(int argc, char **argv)
{
    options o;
    lesson_init(&LESSON, &o, argc, argv);
    show_table();

    /* cudaMalloc'd buffers are 256-byte aligned: float4 iff cols % 4 == 0. */
    const float *a = (const float *)(uintptr_t)256;
    fastest_plan p = softmax_fastest_plan(FASTEST_AUTO, a, o.cols, a, o.cols, o.rows, o.cols);
    printf("This shape:\n");
    print_plan(o.rows, o.cols, &p);
    printf("\n");

    lesson l = LESSON;
    l.bytes_per_elem = p.bytes_per_elem;
    if (p.path == FASTEST_SPLIT) l.traffic = "2 reads + 1 write (row split across blocks, (m, d) merge)";
    else l.traffic = "1 read + 1 write (row on chip)";
    const int status = lesson_run(&l, &o);
#ifndef CUDA_EMU
    if (status == 0 && o.cols > 1) {
        printf("\n");
        time_views(&o);
    }
#endif
    softmax_fastest_release();
    return status;
}
