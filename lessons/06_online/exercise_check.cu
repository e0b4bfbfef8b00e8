/* Checker for exercise 6 (do not edit): softmax_split against the float64
 * reference for several shapes and splits, outputs poisoned first,
 * including empty segments (splits > cols) and segments that hold only
 * -inf. Exit 0 when solved, 1 if not, 3 without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "exercise.h"

/* Runs softmax_split on host x; 1 if y matches the reference. */
static int check(const char *what, const float *x, long long rows, long long cols, int splits)
{
    const size_t bytes = (size_t)(rows * cols) * sizeof(float);
    float *y = (float *)malloc(bytes), *dx, *dy;
    online_md *work;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMalloc(&work, (size_t)(rows * splits) * sizeof(online_md)));
    CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN until written */
    softmax_split(dx, dy, rows, cols, splits, work, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
    verify_report r;
    char desc[512];
    /* each block adds its segment in a tree: the lessons' tolerance */
    int ok = verify_softmax(x, y, rows, cols, ref_row_softmax, NULL, verify_rtol(cols), &r);
    verify_describe(&r, desc, sizeof desc);
    printf("  %-4s %-34s %s\n", ok ? "ok" : "BAD", what, desc);
    verify_wrong_print(&r.wrong, "y", "       ");
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    CUDA_CHECK(cudaFree(work));
    free(y);
    return ok;
}

int main(void)
{
    require_gpu("exercise6");
    const long long shapes[][3] = {
        {1, 100000, 8}, {3, 1000, 2}, {4, 4097, 5}, {5, 7, 3}, {2, 5, 8} /* 3 empty segments */,
    };
    int solved = 1;
    char what[64];
    printf("Exercise 6: a row split across blocks, merged by (m, d)\n");
    for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]); s++) {
        const long long rows = shapes[s][0], cols = shapes[s][1];
        const int splits = (int)shapes[s][2];
        float *x = (float *)malloc((size_t)(rows * cols) * sizeof(float));
        inputs_fill(x, rows, cols, INPUT_NORMAL, 60 + s);
        snprintf(what, sizeof what, "%lld x %lld in %d segments", rows, cols, splits);
        solved &= check(what, x, rows, cols, splits);
        free(x);
    }

    /* 12 columns in 3 segments of 4: masked (-inf) segments first, in the
     * middle, everywhere (that row's answer is NaN, as PyTorch's). */
    const float I = INFINITY;
    const float masked[3][12] = {
        {-I, -I, -I, -I, -I, -I, -I, -I, 1, 2, 3, 4},
        {0.5f, -I, 2, 1, -I, -I, -I, -I, -I, 3, -I, -I},
        {-I, -I, -I, -I, -I, -I, -I, -I, -I, -I, -I, -I},
    };
    solved &= check("3 x 12, whole segments of -inf", &masked[0][0], 3, 12, 3);

    printf("%s\n", solved ? "SOLVED"
                          : "NOT YET: y must match the float64 softmax of each whole row; "
                            "the BAD lines show where it does not");
    return solved ? 0 : 1;
}
