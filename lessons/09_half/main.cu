/* Lesson 9 program: both entry points in the storage type of --dtype
 * (float16 by default), each checked against the float64 reference and
 * timed against a copy of the same 16-bit bytes, then the same row engine
 * on float32 rows of the same values (what lesson 8 runs), for the time
 * ratio the lesson is about: half the bytes, about half the time where
 * memory is the limit. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "softmax_half.h"

static const lesson LESSON = {
    9, "half",
    "16-bit storage, 32-bit arithmetic: half the bytes of float32, the same math, one rounding per output",
    "1 read + 1 write", 4.0, NULL, verify_rtol,
    16384, 4096,
};

#define NK 2 /* the entry points: fused, fastest */

/* The row engine on float32 rows, as a softmax_fn: lesson 8's softmax. */
static void fastest_f32(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    softmax_half_fastest(x, cols, y, cols, rows, cols, DTYPE_F32, stream);
}

/* Each entry point with its path and design traffic for this shape
 * (cudaMalloc'ed buffers: 256-byte aligned rows when cols allows). */
static void entry_points(const options *o, typed_kernel k[NK], char fastest_what[160])
{
    const dtype t = o->storage;
    const void *a = (const void *)(uintptr_t)256; /* an aligned address, never dereferenced */
    const int chunked = o->cols > HALF_MAX_REGISTER_COLS && o->cols > half_shared_capacity(t);
    k[0].name = "fused";
    k[0].what = o->cols <= HALF_MAX_REGISTER_COLS ? "softmax_half_fused, lesson 5's fused row, in registers"
                : chunked ? "softmax_half_fused, lesson 5's fused row, too long for one SM: chunked"
                          : "softmax_half_fused, lesson 5's fused row, in shared memory (16-bit)";
    k[0].run = softmax_half_fused;
    k[0].traffic = chunked ? "3 reads + 1 write (chunked)" : "1 read + 1 write (row on chip)";
    k[0].elems_moved = chunked ? 4.0 : 2.0;
    const fastest_plan p = softmax_half_fastest_plan(FASTEST_AUTO, a, o->cols, a, o->cols, o->rows, o->cols, t);
    snprintf(fastest_what, 160, "softmax_half_fastest, lesson 8's dispatcher: %s (--output holds its result)",
             fastest_path_name(p.path));
    k[1].name = "fastest";
    k[1].what = fastest_what;
    k[1].run = softmax_half_fastest;
    k[1].elems_moved = p.bytes_per_elem / dtype_size(t);
    k[1].traffic = k[1].elems_moved > 2.0 ? "2 reads + 1 write (row split across blocks)" : "1 read + 1 write (row on chip)";
}

/* The storage type in one line, and the tolerance the check uses for it. */
static void print_storage(const options *o)
{
    const dtype t = o->storage;
    const double r32 = verify_rtol(o->cols), rtol = verify_rtol_storage(t, r32);
    if (t == DTYPE_F16)
        printf("Storage float16: 2 bytes, 11 significant bits, largest finite 65504; arithmetic float32.\n");
    else if (t == DTYPE_BF16)
        printf("Storage bfloat16: 2 bytes, 8 significant bits, float32's range (largest finite ~3.39e38); "
               "arithmetic float32.\n");
    else
        printf("Storage float32: 4 bytes, as lessons 1-8 (the comparison run: expect a ratio near 1).\n");
    printf("Check: every element within %.2e relative (float32's %.2e%s) and %.1e absolute.\n\n", rtol, r32,
           t == DTYPE_F16 ? " + half an ulp of float16, 2^-11" : t == DTYPE_BF16 ? " + half an ulp of bfloat16, 2^-8" : "",
           verify_atol_storage(t));
}

int main(int argc, char **argv)
{
    options o;
    lesson_init_typed(&LESSON, &o, argc, argv);
    print_storage(&o);

    typed_kernel KERNELS[NK];
    char fastest_what[160];
    entry_points(&o, KERNELS, fastest_what);
    timing times[NK], copy;
    float *x = NULL;
    int status = lesson_run_typed(&LESSON, KERNELS, NK, &o, times, &copy, &x);

    /* Lesson 8 in float32 on the very values the 16-bit kernels read
     * (widened exactly): the same softmax, twice the bytes. */
    timing t32, copy32;
    const int pass32 = time_float_checked(fastest_f32, verify_rtol, x, o.rows, o.cols, &o, &t32, &copy32);
    free(x);
    printf("\nAgainst float32: lesson 8's softmax_fastest on the same values, widened to float32\n");
    printf("  check          %s\n", !o.check ? "not checked (--no-check)" : pass32 ? "PASS" : "FAIL");
#ifdef CUDA_EMU
    printf("  time           not measured on the CPU emulator: no ratio\n");
#else
    printf("  %-26s %10s %28s\n", "", "time (ms)", "float32 time / this time");
    printf("  %-26s %10.4f\n", "lesson 8 fastest, float32", t32.median_ms);
    for (int i = 0; i < NK; i++) {
        char who[64];
        snprintf(who, sizeof who, "%s, %s", KERNELS[i].name, dtype_name(o.storage));
        printf("  %-26s %10.4f %27.2fx\n", who, times[i].median_ms, t32.median_ms / times[i].median_ms);
    }
    printf("  %-26s %10.4f %27.2fx  (float32 copy: %.4f ms)\n", "copy of the same bytes", copy.median_ms,
           copy32.median_ms / copy.median_ms, copy32.median_ms);
    printf("  The copy's ratio is what halving the bytes can give at this shape: near 2 where\n"
           "  memory bandwidth is the limit, less where launch and latency are (small shapes).\n");
#endif
    softmax_fastest_release();
    if (o.check && !pass32) status = 1;
    return status;
}
