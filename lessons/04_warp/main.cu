/* Lesson 4 program: the attention softmax notes' kernel going wrong as soon as a block has
 * more than one warp, the fixed kernel on the same rows, then the timing
 * of the three correct variants (one block per row with 256 and with 1024
 * threads, one warp per row). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "softmax_warp.h"

static const lesson LESSON = {
    4, "warp",
    "warp shuffles instead of shared-memory trees: 2 barriers per row instead of 20",
    "3 reads + 1 write, coalesced", 16.0, softmax_warp, verify_rtol,
    16384, 4096,
};

static const lesson LESSON_1024 = {
    4, "warp-1024",
    "the same kernel with 1024 threads per block",
    "3 reads + 1 write, coalesced", 16.0, softmax_warp_1024, verify_rtol,
    16384, 4096,
};

static const lesson LESSON_PER_ROW = {
    4, "warp-per-row",
    "one warp per row, 8 rows per block: no shared memory, no barrier",
    "3 reads + 1 write, coalesced", 16.0, softmax_warp_per_row, verify_rtol,
    16384, 4096,
};

#define DEMO_N 1024

/* Runs the attention softmax notes' kernel (threads > 0) or the fixed one (threads == 0) on
 * one row of DEMO_N floats. */
static void run_row(const float *x, float *y, int threads)
{
    size_t bytes = DEMO_N * sizeof(float);
    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, bytes));
    if (threads) softmax_warp_one_level(dx, dy, 1, DEMO_N, threads, 0);
    else softmax_warp(dx, dy, 1, DEMO_N, 0);
    CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
}

static void show_row(const char *label, const float *y)
{
    double sum = 0;
    for (int j = 0; j < DEMO_N; j++) sum += y[j];
    printf("  %-30s y[0] = %-10.6f y[40] = %-10.6f sum = %.4f\n", label, y[0], y[40], sum);
}

static void show_seed_bug(void)
{
    float *x = (float *)malloc(DEMO_N * sizeof(float)), *y = (float *)malloc(DEMO_N * sizeof(float));

    printf("The attention notes' kernel on a constant row of %d (the answer is 1/%d = %.6f everywhere)\n",
           DEMO_N, DEMO_N, 1.0 / DEMO_N);
    for (int j = 0; j < DEMO_N; j++) x[j] = 1.0f;
    run_row(x, y, 32);
    show_row("notes' kernel, 32 threads", y);
    run_row(x, y, 256);
    show_row("notes' kernel, 256 threads", y);
    run_row(x, y, 0);
    show_row("fixed (softmax_warp)", y);
    printf("  With 256 threads the sum is warp 0's alone: 4 x 32 = 128 of the 1024 terms.\n\n");

    printf("A row of zeros with x[40] = 100 (the answer: y[40] = 1, the rest ~ e^-100 = 0)\n");
    for (int j = 0; j < DEMO_N; j++) x[j] = 0.0f;
    x[40] = 100.0f;
    run_row(x, y, 32);
    show_row("notes' kernel, 32 threads", y);
    run_row(x, y, 256);
    show_row("notes' kernel, 256 threads", y);
    run_row(x, y, 0);
    show_row("fixed (softmax_warp)", y);
    printf("  x[40] belongs to thread 40, in warp 1: with 256 threads the row max is\n"
           "  warp 0's, 0, and expf(100 - 0) overflows. The fix: every warp's lane 0\n"
           "  writes its warp's result, then every warp reduces those (warp_reduce.h).\n\n");
    free(x);
    free(y);
}

int main(int argc, char **argv)
{
    options o;
    lesson_init(&LESSON, &o, argc, argv);

    show_seed_bug();

    int status = lesson_run(&LESSON, &o);
    printf("\n");
    int s2 = lesson_run(&LESSON_1024, &o);
    printf("\n");
    int s3 = lesson_run(&LESSON_PER_ROW, &o);
    return status ? status : s2 ? s2 : s3;
}
