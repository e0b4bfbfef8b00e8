/* Lesson 8 program: the dispatcher's table on this GPU, the path it picks
 * for the shape asked for, then the check and the timing against the copy,
 * and (GPU only) the same rows as misaligned views. */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "harness.h"
#include "softmax_fastest.h"

static const lesson LESSON = {
    8, "fastest",
    "one entry point: the best of seven kernels for the shape (warp, block, shared, cluster, bulk, grid, split)",
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
    case FASTEST_BULK:
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
 * common/timing.cu's time_views times the same rows as views whose rows do
 * not start on 16-byte boundaries. In three of them each row of x starts
 * where the same row of y does, relative to 16 bytes, so the kernels peel
 * each row's head and tail and keep 128-bit accesses for the rest; in the
 * last three (x one float past a boundary, x with a row stride of N + 1,
 * y with a row stride of N + 1) x and y disagree: paths 3 and 3g cut the
 * rows at y's boundaries and read x in 32-bit loads, and the other paths
 * use 32-bit accesses throughout.
 * tests/test_lesson8.cu checks every one of them for correctness. */
static const char *fastest_access(const float *x, long long ldx, const float *y, long long ldy, long long rows,
                                  long long cols)
{
    const fastest_plan p = softmax_fastest_plan(FASTEST_AUTO, x, ldx, y, ldy, rows, cols);
    if (p.x32) return "y 128, x 32-bit";
    return p.peel ? "128-bit, peeled" : (p.vec4 ? "128-bit" : "32-bit");
}

int main(int argc, char **argv)
{
    options o;
    lesson_init(&LESSON, &o, argc, argv);
    show_table();

    /* The plan for the program's own buffers (cudaMalloc: 256-byte aligned). */
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
    if (status == 0) time_views(softmax_fastest_strided, fastest_access, &o);
    softmax_fastest_release();
    return status;
}
