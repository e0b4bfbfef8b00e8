/* Lesson 5 program: where the row lives for each length on this GPU, the
 * kernel on a misaligned, padded view, then the timing. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "harness.h"
#include "softmax_fused.h"

static const lesson LESSON = {
    5, "fused",
    "the row read once, kept in registers or shared memory, written once",
    "1 read + 1 write (row on chip)", 8.0, softmax_fused, verify_rtol,
    16384, 4096,
};

/* The dispatcher's choice for a range of row lengths (aligned, float4). */
static void show_plans(void)
{
    const long long cap = softmax_fused_shared_capacity();
    const long long ns[] = {32, 128, 1000, 1024, 2048, 4096, 8192, 16384, 32768, 32772,
                            cap, cap + 4, 65536, 1LL << 20};
    printf("Where the row lives, on this GPU (rows of N floats, 16-byte aligned)\n");
    printf("  %9s  %-28s %11s %12s %7s %9s %11s\n", "N", "path", "threads/row", "floats/thread",
           "block", "rows/blk", "smem/block");
    for (unsigned i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        fused_plan p = softmax_fused_plan(FUSED_AUTO, FUSED_FLOAT4, ns[i]);
        char fpt[16] = "-", smem[24] = "-";
        if (p.floats_per_thread) snprintf(fpt, sizeof fpt, "%d", p.floats_per_thread);
        if (p.smem_bytes) snprintf(smem, sizeof smem, "%.1f KB", p.smem_bytes / 1024.0);
        printf("  %9lld  %-28s %11d %12s %7d %9d %11s\n", ns[i], fused_path_name(p.path),
               p.threads_per_row, fpt, p.block, p.rows_per_block, smem);
    }
    printf("  Shared memory holds rows up to %lld floats here (the opt-in limit,\n"
           "  cudaDevAttrMaxSharedMemoryPerBlockOptin); longer rows are read 3 times.\n\n", cap);
}

/* A 3 x 5 view inside padded buffers, starting one float past a 16-byte
 * boundary, with row strides 7 and 6: row 1 of x starts 3 floats past a
 * boundary where row 1 of y starts 2 past, so no cut fits both and the
 * scalar path runs; the padding is never touched. */
static void show_view(void)
{
    enum { ROWS = 3, COLS = 5, LDX = 7, LDY = 6, OFF = 1 };
    const float PAD = -7.0f; /* any value a softmax cannot produce */
    float hx[OFF + ROWS * LDX], hy[OFF + ROWS * LDY];
    for (int i = 0; i < OFF + ROWS * LDX; i++) hx[i] = PAD;
    for (int i = 0; i < OFF + ROWS * LDY; i++) hy[i] = PAD;
    const float vals[ROWS][COLS] = {{1, 2, 3, 4, 5}, {1000, 1001, 1002, 1003, 1004}, {0, 0, 0, 0, 0}};
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) hx[OFF + r * LDX + c] = vals[r][c];

    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, sizeof hx));
    CUDA_CHECK(cudaMalloc(&dy, sizeof hy));
    CUDA_CHECK(cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, hy, sizeof hy, cudaMemcpyHostToDevice));
    fused_plan p = softmax_fused_run(FUSED_AUTO, dx + OFF, LDX, dy + OFF, LDY, ROWS, COLS, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hy, dy, sizeof hy, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));

    printf("A view: %d x %d, row strides %d (x) and %d (y), 1 float past a 16-byte boundary\n",
           ROWS, COLS, LDX, LDY);
    printf("  path: %s, %s\n", fused_path_name(p.path),
           p.peel ? "float4 body, head and tail peeled"
                  : (p.float4 ? "float4" : "scalar (rows of x and y start at different offsets from 16 bytes)"));
    for (int r = 0; r < ROWS; r++) {
        char label[32];
        snprintf(label, sizeof label, "y row %d + padding", r);
        print_row(label, hy + OFF + r * LDY, LDY);
    }
    printf("  The last %d floats of each output row are padding (%.0f): untouched.\n\n",
           LDY - COLS, PAD);
}

/* The views table (GPU only, common/timing.cu's time_views): which access
 * width the plan gives each view. */
static const char *fused_access(const float *x, long long ldx, const float *y, long long ldy, long long rows,
                                long long cols)
{
    const int a = softmax_fused_access(x, ldx, y, ldy, rows, cols);
    return a == FUSED_FLOAT4 ? "128-bit" : a == FUSED_PEELED ? "128-bit, peeled" : "32-bit";
}

int main(int argc, char **argv)
{
    options o;
    lesson_init(&LESSON, &o, argc, argv);

    show_plans();
    show_view();

    /* Beyond shared memory the design traffic is that of the fallback. */
    lesson l = LESSON;
    if (softmax_fused_plan(FUSED_AUTO, o.cols % 4 == 0 ? FUSED_FLOAT4 : FUSED_32BIT, o.cols).path == FUSED_CHUNKED) {
        l.traffic = "3 reads + 1 write (row too long for one SM: chunked fallback)";
        l.bytes_per_elem = 16.0;
    }
    const int status = lesson_run(&l, &o);
    if (status == 0) time_views(softmax_fused_strided, fused_access, &o);
    return status;
}
