/* Checker for exercise 5 (do not edit): the column-wise softmax against
 * the float64 reference (the reference's row softmax of the transposed
 * matrix), with the same verifier as the lessons, outputs poisoned first.
 * Exit 0 when solved, 1 if not, 3 without a GPU. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "exercise.h"

/* b (cols x rows) = a (rows x cols) transposed. */
static void transpose(const float *a, float *b, long long rows, long long cols)
{
    for (long long r = 0; r < rows; r++)
        for (long long c = 0; c < cols; c++) b[c * rows + r] = a[r * cols + c];
}

int main(void)
{
    require_gpu("exercise5");
    /* Tall, wide, odd and one-row shapes; a one-row matrix has columns of
     * one element, whose softmax is exactly 1. */
    const long long shapes[][2] = {{1, 5}, {64, 1000}, {1000, 64}, {7, 1025}, {1025, 3}, {3, 1}};
    const input_kind kinds[] = {INPUT_NORMAL, INPUT_LARGE};
    int solved = 1;
    printf("Exercise 5: column-wise softmax, softmax(x, dim = 0)\n");
    for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
        const long long rows = shapes[s][0], cols = shapes[s][1];
        const size_t n = (size_t)(rows * cols), bytes = n * sizeof(float);
        float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes);
        float *xt = (float *)malloc(bytes), *yt = (float *)malloc(bytes), *dx, *dy;
        CUDA_CHECK(cudaMalloc(&dx, bytes));
        CUDA_CHECK(cudaMalloc(&dy, bytes));
        for (int k = 0; k < 2; k++) {
            /* inputs_fill makes rows; the transposed fill makes columns
             * that look like rows: INPUT_LARGE then gives each COLUMN its
             * own huge offset, which only a stable column softmax survives. */
            inputs_fill(xt, cols, rows, kinds[k], 50 + s);
            transpose(xt, x, cols, rows);
            CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
            CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN until written */
            softmax_columns(dx, dy, rows, cols, 0);
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
            transpose(y, yt, rows, cols);
            verify_report r;
            char desc[512];
            /* A column may be summed by one thread, top to bottom. */
            int ok = verify_softmax(xt, yt, cols, rows, ref_row_softmax, NULL,
                                    verify_rtol_sequential(rows), &r);
            verify_report_transpose(&r); /* rows and columns of y itself */
            verify_describe(&r, desc, sizeof desc);
            printf("  %-4s %5lld x %-5lld %-6s %s\n", ok ? "ok" : "BAD", rows, cols, input_kind_name(kinds[k]), desc);
            verify_wrong_print(&r.wrong, "y", "       ");
            solved &= ok;
        }
        CUDA_CHECK(cudaFree(dx));
        CUDA_CHECK(cudaFree(dy));
        free(x);
        free(y);
        free(xt);
        free(yt);
    }
    printf("%s\n", solved ? "SOLVED"
                          : "NOT YET: each column must match its float64 softmax; "
                            "the BAD lines show where it does not");
    return solved ? 0 : 1;
}
