/* Lesson 4: the attention softmax notes' kernel must be observed going wrong, and the fixed
 * kernels must be right.
 *
 *   - the attention softmax notes' kernel with one warp per block is right;
 *   - with 64, 256 or 1024 threads it FAILS the check: these tests PASS
 *     when the failure is observed (if the kernel ever passed, the lesson
 *     would be explaining a bug that is not there);
 *   - its two symptoms, exactly: a constant row of 1024 comes out 1/128
 *     instead of 1/1024 with 256 threads (the sum of warp 0 alone), and a
 *     100 outside warp 0's elements overflows to inf (the max of warp 0);
 *   - with rows of at most 32 elements the bug is invisible, whatever the
 *     block size (only warp 0 has elements): why short test rows miss it;
 *   - the fixed kernels on the same inputs, the row lengths and special
 *     rows of tests/edge_rows.h, and 64-bit offsets.
 *
 * Without a GPU every case is skipped. */
#include "../lessons/04_warp/softmax_warp.h"
#include "../tests/edge_rows.h"

/* The attention softmax notes' kernel as a softmax_fn, for a given block size. */
static int one_level_threads;
static void one_level(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_warp_one_level(x, y, rows, cols, one_level_threads, s);
}

/* 1 if the kernel passes the check on rows x cols of normal values. */
static int passes(softmax_fn k, long long rows, long long cols, char *desc, size_t len)
{
    float *x = (float *)malloc((size_t)rows * (size_t)cols * sizeof(float));
    inputs_fill(x, rows, cols, INPUT_NORMAL, 4000 + (unsigned long long)cols);
    int ok = edge_run(k, x, rows, cols, desc, len);
    free(x);
    return ok;
}

/* Runs k on one row of n floats; y gets the output. */
static void run_row(softmax_fn k, const float *x, float *y, long long n)
{
    size_t bytes = (size_t)n * sizeof(float);
    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, bytes));
    CUDA_CHECK(cudaMalloc(&dy, bytes));
    CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dy, 0xFF, bytes));
    k(dx, dy, 1, n, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
}

static void check_seed_bug(int have_gpu)
{
    char name[256], desc[512];
    const int threads[] = {32, 64, 256, 1024};
    for (int t = 0; t < 4; t++) {
        if (threads[t] == 32)
            snprintf(name, sizeof name, "lesson4 one-level kernel with 32 threads (one warp) is right: 64x1000");
        else
            snprintf(name, sizeof name,
                     "lesson4 one-level kernel with %d threads FAILS the check: 64x1000 (bug observed)",
                     threads[t]);
        if (!have_gpu) {
            test_skip(name, "no GPU");
            continue;
        }
        one_level_threads = threads[t];
        int ok = passes(one_level, 64, 1000, desc, sizeof desc);
        if (threads[t] == 32) test_expect(ok, name, "%s", desc);
        else test_expect(!ok, name, "the check passed: %s", desc);
    }

    const char *short_name = "lesson4 one-level kernel with 256 threads passes on rows of <= 32 "
                             "elements (the bug hides from short test rows)";
    if (!have_gpu) {
        test_skip(short_name, "no GPU");
    } else {
        one_level_threads = 256;
        int ok = 1;
        char first[600] = "";
        const long long ns[] = {1, 7, 31, 32};
        for (int i = 0; i < 4; i++) {
            if (!passes(one_level, 33, ns[i], desc, sizeof desc) && ok) {
                ok = 0;
                snprintf(first, sizeof first, "N = %lld: %s", ns[i], desc);
            }
        }
        test_expect(ok, short_name, "%s", first);
    }

    /* The two symptoms, as lesson 4's program prints them. */
    const int n = 1024;
    float *x = (float *)malloc(n * sizeof(float)), *y = (float *)malloc(n * sizeof(float));
    const char *sum_name = "lesson4 one-level kernel, 256 threads, constant row of 1024: every "
                           "output 1/128 (warp 0's sum), not 1/1024";
    const char *max_name = "lesson4 one-level kernel, 256 threads, zeros with x[40] = 100: y[40] "
                           "= inf (warp 0's max is 0)";
    const char *fix_name = "lesson4 softmax_warp on the same two rows: 1/1024, and y[40] = 1";
    if (!have_gpu) {
        test_skip(sum_name, "no GPU");
        test_skip(max_name, "no GPU");
        test_skip(fix_name, "no GPU");
    } else {
        one_level_threads = 256;
        for (int j = 0; j < n; j++) x[j] = 1.0f;
        run_row(one_level, x, y, n);
        int all = 1;
        for (int j = 0; j < n; j++) all &= y[j] == 1.0f / 128;
        test_expect(all, sum_name, "y[0] = %g, y[1023] = %g", y[0], y[n - 1]);
        run_row(softmax_warp, x, y, n);
        int fixed = 1;
        for (int j = 0; j < n; j++) fixed &= verify_element(y[j], 1.0 / n, verify_rtol(n));

        for (int j = 0; j < n; j++) x[j] = 0.0f;
        x[40] = 100.0f;
        run_row(one_level, x, y, n);
        test_expect(isinf(y[40]) && y[40] > 0, max_name, "y[40] = %g", y[40]);
        run_row(softmax_warp, x, y, n);
        fixed &= verify_element(y[40], 1.0, verify_rtol(n));
        test_expect(fixed, fix_name, "y[40] = %g", y[40]);
    }
    free(x);
    free(y);
}

int main(void)
{
    int count = 0;
    int have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError(); /* clear the no-device error, if any */

    check_seed_bug(have_gpu);

    edge_check("lesson4 warp", softmax_warp, have_gpu);
    edge_check("lesson4 warp-1024", softmax_warp_1024, have_gpu);
    edge_check("lesson4 warp-per-row", softmax_warp_per_row, have_gpu);

    big_check("lesson4 warp", softmax_warp, (1LL << 21) + 1, 1024, have_gpu);
    big_check("lesson4 warp-per-row", softmax_warp_per_row, (1LL << 21) + 1, 1024, have_gpu);
    big_check("lesson4 warp-1024", softmax_warp_1024, 1, (1LL << 31) + 33, have_gpu);
    return test_exit_status();
}
