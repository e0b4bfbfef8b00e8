/* make sanitize runs this under compute-sanitizer (memcheck, racecheck,
 * synccheck, initcheck): every kernel of tests/kernels.h on a grid of odd
 * shapes, N = 1, 31, 33, 1000, 1025, 4097, 65537 and M = 1, 3, 257, each
 * output poisoned and then checked element by element against the float64
 * reference. The sanitizer finds what a wrong answer may not show: reads
 * past the row, shared-memory races, barriers in divergent code, reads of
 * uninitialised memory. Without a GPU it says so and exits 3. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "verify.h"
#include "kernels.h"
#include "test.h"

static const long long ODD_COLS[] = {1, 31, 33, 1000, 1025, 4097, 65537};
static const long long ODD_ROWS[] = {1, 3, 257};

int main(void)
{
    require_gpu("odd_shapes");
    for (int c = 0; c < (int)(sizeof ODD_COLS / sizeof ODD_COLS[0]); c++) {
        for (int r = 0; r < (int)(sizeof ODD_ROWS / sizeof ODD_ROWS[0]); r++) {
            long long rows = ODD_ROWS[r], cols = ODD_COLS[c];
            size_t bytes = (size_t)rows * (size_t)cols * sizeof(float);
            float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes), *dx, *dy;
            if (!x || !y) {
                fprintf(stderr, "odd_shapes: out of host memory\n");
                return 1;
            }
            inputs_fill(x, rows, cols, INPUT_NORMAL, 99 + (unsigned long long)(7 * c + r));
            CUDA_CHECK(cudaMalloc(&dx, bytes));
            CUDA_CHECK(cudaMalloc(&dy, bytes));
            CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
            for (int k = 0; k < NKERNELS; k++) {
                CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN until written */
                KERNELS[k].run(dx, dy, rows, cols, 0);
                CUDA_CHECK_LAUNCH();
                CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
                verify_report rep;
                char desc[512];
                int ok = verify_softmax(x, y, rows, cols, ref_row_softmax, NULL,
                                        KERNELS[k].rtol(cols), &rep);
                verify_describe(&rep, desc, sizeof desc);
                char name[160];
                snprintf(name, sizeof name, "lesson%d %s matches the reference at %lld x %lld",
                         KERNELS[k].lesson, KERNELS[k].name, rows, cols);
                test_expect(ok, name, "%s", desc);
            }
            CUDA_CHECK(cudaFree(dx));
            CUDA_CHECK(cudaFree(dy));
            free(x);
            free(y);
        }
    }
    softmax_fastest_release(); /* so that memcheck's leak check finds nothing left */
    return test_exit_status();
}
