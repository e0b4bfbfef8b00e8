/* The kernel equivalence matrix: every lesson kernel, on every shape and
 * every value set, computes the float64 reference's softmax within the
 * tolerance of common/verify.h (and therefore the same function as every
 * other kernel). Outputs are poisoned with NaN before each run, so an
 * element a kernel forgets to write fails.
 *
 * Without a GPU every case is reported as skipped. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "../tests/test.h"

#include "../lessons/01_naive/softmax_naive.h"
#include "../lessons/02_stable/softmax_stable.h"
#include "../lessons/03_three_pass/softmax_three_pass.h"
#include "../lessons/04_warp/softmax_warp.h"
#include "../lessons/05_fused/softmax_fused.h"
#include "../lessons/06_online/softmax_online.h"
#include "../lessons/07_attention/softmax_attention.h"
#include "../lessons/08_fastest/softmax_fastest.h"

typedef struct {
    const char *name;
    softmax_fn run;
    int stable; /* 0: overflows by design, kept off large-magnitude inputs */
    rtol_fn rtol; /* the tolerance its summation order needs (verify.h)  */
} kernel;

static const kernel KERNELS[] = {
    {"lesson1 naive", softmax_naive, 0, verify_rtol_sequential},
    {"lesson2 stable", softmax_stable, 1, verify_rtol_sequential},
    {"lesson3 three-pass", softmax_three_pass, 1, verify_rtol},
    {"lesson3 three-pass-1024", softmax_three_pass_1024, 1, verify_rtol},
    {"lesson4 warp", softmax_warp, 1, verify_rtol},
    {"lesson4 warp-1024", softmax_warp_1024, 1, verify_rtol},
    {"lesson4 warp-per-row", softmax_warp_per_row, 1, verify_rtol},
    {"lesson5 fused", softmax_fused, 1, verify_rtol},
    {"lesson5 fused, shared-memory path", softmax_fused_shared, 1, verify_rtol},
    {"lesson5 fused, chunked path", softmax_fused_chunked, 1, verify_rtol},
    {"lesson6 online", softmax_online, 1, verify_rtol},
    {"lesson6 online, one block per row", softmax_online_block_per_row, 1, verify_rtol},
    /* scale 1, no mask: plain softmax (lesson 7's other variants: test_lesson7.cu) */
    {"lesson7 attention softmax, scale 1, no mask", softmax_attention_plain, 1, verify_rtol},
    {"lesson7 attention softmax, online path", softmax_attention_plain_online, 1, verify_rtol},
    {"lesson8 fastest", softmax_fastest, 1, verify_rtol},
    {"lesson8 fastest, path 1 warp", softmax_fastest_warp, 1, verify_rtol},
    {"lesson8 fastest, path 2 block", softmax_fastest_block, 1, verify_rtol},
    {"lesson8 fastest, path 2s shared memory", softmax_fastest_shared, 1, verify_rtol},
    {"lesson8 fastest, path 3 cluster", softmax_fastest_cluster, 1, verify_rtol},
    {"lesson8 fastest, path 3b bulk", softmax_fastest_bulk, 1, verify_rtol},
    {"lesson8 fastest, path 3g grid", softmax_fastest_grid, 1, verify_rtol},
    {"lesson8 fastest, path 4 split", softmax_fastest_split, 1, verify_rtol},
};
#define NKERNELS (int)(sizeof KERNELS / sizeof KERNELS[0])

static const int SHAPES[][2] = {
    {1, 1}, {1, 4}, {4, 1}, {128, 256}, {512, 512}, {1024, 64},
    {3, 1000}, {7, 1025}, {1, 100003}, {33, 4097},
};
#define NSHAPES (int)(sizeof SHAPES / sizeof SHAPES[0])

typedef enum { V_NORMAL, V_UNIFORM, V_CONSTANT, V_NEGINF, V_LARGE, V_SPECIAL, NVALUES } value_set;
static const char *VALUE_NAMES[] = {
    "normal", "uniform +-4", "constant rows", "rows with -inf entries",
    "large magnitudes", "special values",
};

static void make_input(float *x, int rows, int cols, value_set v, unsigned long long seed)
{
    switch (v) {
    case V_NORMAL: inputs_fill(x, rows, cols, INPUT_NORMAL, seed); break;
    case V_UNIFORM: inputs_fill(x, rows, cols, INPUT_UNIFORM, seed); break;
    case V_LARGE: inputs_fill(x, rows, cols, INPUT_LARGE, seed); break;
    case V_SPECIAL: inputs_fill(x, rows, cols, INPUT_SPECIAL, seed); break;
    case V_CONSTANT: /* every element equal: the answer is exactly 1/cols */
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) x[(size_t)r * cols + c] = 3.5f * (float)(r % 7) - 10.0f;
        break;
    case V_NEGINF: /* a third of the entries masked out, never the first */
        inputs_fill(x, rows, cols, INPUT_NORMAL, seed);
        for (size_t i = 0; i < (size_t)rows * cols; i++)
            if (i % cols % 3 == 1) x[i] = -INFINITY;
        break;
    default: break;
    }
}

/* Runs a kernel on host input x, output poisoned first; result in y. */
static void run_kernel(const kernel *k, const float *x, float *y, int rows, int cols)
{
    size_t bytes = (size_t)rows * cols * sizeof(float);
    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, bytes));
    k->run(dx, dy, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
}

/* make test-asan sets SOFTMAX_SANITIZE: an out-of-bounds access depends on
 * the shape, not on the values, so under AddressSanitizer every kernel and
 * shape runs three of the value sets (normal, -inf entries, special values:
 * the rows whose values change the kernels' branches); make test runs all
 * six. The emulator under AddressSanitizer took 250 s over all six. */
static int value_set_runs(int v, int sanitizing)
{
    return !sanitizing || v == V_NORMAL || v == V_NEGINF || v == V_SPECIAL;
}

static void check_matrix(int have_gpu)
{
    char name[256], desc[512];
    const int sanitizing = getenv("SOFTMAX_SANITIZE") != NULL;
    if (sanitizing)
        test_skip("every kernel on uniform, constant and large-magnitude rows",
                  "SOFTMAX_SANITIZE: out-of-bounds accesses depend on the shape (make test runs them)");
    for (int k = 0; k < NKERNELS; k++) {
        for (int s = 0; s < NSHAPES; s++) {
            int rows = SHAPES[s][0], cols = SHAPES[s][1];
            size_t n = (size_t)rows * cols;
            float *x = (float *)malloc(n * sizeof(float)), *y = (float *)malloc(n * sizeof(float));
            for (int v = 0; v < NVALUES; v++) {
                if (!KERNELS[k].stable && (v == V_LARGE || v == V_SPECIAL)) continue;
                if (!value_set_runs(v, sanitizing)) continue;
                snprintf(name, sizeof name, "%s matches the float64 reference: %dx%d %s",
                         KERNELS[k].name, rows, cols, VALUE_NAMES[v]);
                if (!have_gpu) {
                    test_skip(name, "no GPU (kernels run on the CPU once issue 3's path lands)");
                    continue;
                }
                make_input(x, rows, cols, (value_set)v, 1000 + 17 * s + v);
                run_kernel(&KERNELS[k], x, y, rows, cols);
                verify_report r;
                int ok = verify_softmax(x, y, rows, cols, ref_row_softmax, NULL, KERNELS[k].rtol(cols), &r);
                verify_describe(&r, desc, sizeof desc);
                test_expect(ok, name, "%s", desc);
            }
            free(x);
            free(y);
        }
    }
}

/* Lesson 1's point: the naive kernel must break where the stable one does
 * not. If it ever stopped overflowing, the lesson would be teaching nothing. */
static void check_naive_overflows(int have_gpu)
{
    const char *name1 = "lesson1 naive overflows to NaN on [1000, 1001, 1002]";
    const char *name2 = "lesson1 naive fails the check on large magnitudes (128x256)";
    if (!have_gpu) {
        test_skip(name1, "no GPU");
        test_skip(name2, "no GPU");
        return;
    }
    const float big[3] = {1000, 1001, 1002};
    float y[3];
    run_kernel(&KERNELS[0], big, y, 1, 3);
    test_expect(isnan(y[0]) && isnan(y[1]) && isnan(y[2]), name1, "got [%g, %g, %g]", y[0],
                y[1], y[2]);

    int rows = 128, cols = 256;
    size_t n = (size_t)rows * cols;
    float *x = (float *)malloc(n * sizeof(float)), *out = (float *)malloc(n * sizeof(float));
    inputs_fill(x, rows, cols, INPUT_LARGE, 7);
    run_kernel(&KERNELS[0], x, out, rows, cols);
    long long nonfinite = 0;
    for (size_t i = 0; i < n; i++) nonfinite += !isfinite(out[i]);
    verify_report r;
    int ok = verify_softmax(x, out, rows, cols, ref_row_softmax, NULL, KERNELS[0].rtol(cols), &r);
    test_expect(!ok && nonfinite > 0, name2, "verify %s, %lld non-finite outputs",
                ok ? "passed" : "failed", nonfinite);
    free(x);
    free(out);
}

int main(void)
{
    int count = 0;
    int have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError(); /* clear the no-device error, if any */
    check_matrix(have_gpu);
    check_naive_overflows(have_gpu);
    return test_exit_status();
}
