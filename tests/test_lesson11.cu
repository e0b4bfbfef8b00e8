/* Lesson 11: softmax over rows split across K ranks
 * (lessons/11_multi_gpu/split_softmax.h).
 *
 *   - The slices: split_begin cuts [0, N) into K slices that cover every
 *     column once and differ by at most one column, for any N and K.
 *   - The result: with K = 1 ... 7 ranks (all on this device, joined by
 *     the in-process stand-in for NCCL's collectives, split_comm_local),
 *     both ways of combining give every element of the gathered output
 *     the float64 softmax of the whole row: rows of 1 to 300003 columns,
 *     N not a multiple of K or of 4, ranks holding no column (N < K), few
 *     rows (pieces per slice) and many, special values (-inf, an all -inf
 *     row, NaN, +inf, 3e38).
 *   - The two ways agree with each other, and the all-gather gives every
 *     rank the same (M, D): a row whose slices are equal gives the same
 *     bits on every rank.
 *   - The cross-entropy over a split vocabulary: lesson 10's loss of every
 *     row, on every rank, with ignored rows, targets out of range, a
 *     target at -inf and an all -inf row; with K = 2 ... 5 ranks, targets
 *     on the first and the last column of every rank's slice, ignored rows
 *     exactly 0, ignore_index -100, 0, N - 1 and -7, targets out of range;
 *   - slices whose length is a multiple of the float4 width cut into
 *     several pieces, for the softmax and the loss, both ways.
 * The NCCL path runs in lesson 11's program (tests/cli.sh on a GPU). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "../lessons/11_multi_gpu/split_softmax.h"
#include "../tests/test.h"

static const char *METHOD_NAMES[2] = {"all-reduce of max and sum", "all-gather of (m, d)"};

static void check_slices(void)
{
    const long long cols[] = {1, 3, 4, 5, 100, 1000, 32769, 1LL << 40};
    int ok = 1;
    long long bad_n = 0;
    int bad_k = 0;
    for (int c = 0; c < 8; c++)
        for (int k = 1; k <= SPLIT_MAX_RANKS; k++) {
            const long long n = cols[c];
            long long lo = n, hi = 0;
            if (split_begin(n, 0, k) != 0 || split_begin(n, k, k) != n) ok = 0;
            for (int r = 0; r < k; r++) {
                const long long w = split_begin(n, r + 1, k) - split_begin(n, r, k);
                if (w < lo) lo = w;
                if (w > hi) hi = w;
            }
            if (hi - lo > 1 || lo < 0) ok = 0;
            if (!ok && !bad_n) {
                bad_n = n;
                bad_k = k;
            }
        }
    test_expect(ok, "split_begin: K slices cover [0, N) in order and differ by at most one column (N = 1 ... 2^40, K = 1 ... 16)",
                "wrong at N = %lld, K = %d", bad_n, bad_k);
}

/* Rank k of nranks on device 0, its slice of x (rows x cols, host) copied
 * into a matrix of its own (rows x n, row stride n), y not set. */
static split_rank place_rank(const float *x, long long rows, long long cols, int k, int nranks)
{
    split_rank rk;
    const long long c0 = split_begin(cols, k, nranks);
    rk.n = split_begin(cols, k + 1, nranks) - c0;
    const size_t bytes = (size_t)(rows * rk.n) * sizeof(float);
    float *h = (float *)malloc(bytes ? bytes : 1), *dx;
    for (long long r = 0; r < rows; r++) memcpy(h + r * rk.n, x + r * cols + c0, (size_t)rk.n * sizeof(float));
    CUDA_CHECK(cudaMalloc(&dx, bytes ? bytes : 16));
    CUDA_CHECK(cudaMemcpy(dx, h, bytes, cudaMemcpyHostToDevice));
    free(h);
    rk.at.device = 0;
    rk.at.stream = 0;
    rk.x = dx;
    rk.y = NULL;
    return rk;
}

/* Runs the split softmax of x (rows x cols, host) over `nranks` ranks on
 * device 0 and gathers y (host). Each rank's y starts as NaN: a column no
 * rank writes fails the check. */
static void run_split(const float *x, float *y, long long rows, long long cols, int nranks, split_method how)
{
    split_rank ranks[SPLIT_MAX_RANKS];
    split_comm *comm = split_comm_local(nranks);
    for (int k = 0; k < nranks; k++) {
        ranks[k] = place_rank(x, rows, cols, k, nranks);
        const size_t bytes = (size_t)(rows * ranks[k].n) * sizeof(float);
        CUDA_CHECK(cudaMalloc(&ranks[k].y, bytes ? bytes : 16));
        CUDA_CHECK(cudaMemset(ranks[k].y, 0xFF, bytes));
    }
    softmax_split(ranks, nranks, rows, how, comm);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (int k = 0; k < nranks; k++) {
        const long long c0 = split_begin(cols, k, nranks), n = ranks[k].n;
        const size_t bytes = (size_t)(rows * n) * sizeof(float);
        float *h = (float *)malloc(bytes ? bytes : 1);
        CUDA_CHECK(cudaMemcpy(h, ranks[k].y, bytes, cudaMemcpyDeviceToHost));
        for (long long r = 0; r < rows; r++) memcpy(y + r * cols + c0, h + r * n, (size_t)n * sizeof(float));
        free(h);
        CUDA_CHECK(cudaFree((void *)ranks[k].x));
        CUDA_CHECK(cudaFree(ranks[k].y));
    }
    comm->destroy(comm);
}

/* Splits x (rows x cols) over nranks ranks and expects every element of
 * the gathered y to be the float64 softmax of its whole row. */
static void expect_split(const float *x, long long rows, long long cols, int nranks, split_method how, const char *name)
{
    float *y = (float *)malloc((size_t)(rows * cols) * sizeof(float));
    run_split(x, y, rows, cols, nranks, how);
    verify_report r;
    char desc[512];
    const int ok = verify_softmax(x, y, rows, cols, ref_row_softmax, NULL, verify_rtol(cols), &r);
    verify_describe(&r, desc, sizeof desc);
    test_expect(ok, name, "%s", desc);
    free(y);
}

static void check_shape(long long rows, long long cols, int nranks, split_method how, input_kind kind)
{
    char name[256];
    snprintf(name, sizeof name, "softmax_split over %d rank(s), %s, at %lld x %lld (%s input): every element is the float64 softmax of its whole row",
             nranks, METHOD_NAMES[how], rows, cols, input_kind_name(kind));
    float *x = (float *)malloc((size_t)(rows * cols) * sizeof(float));
    inputs_fill(x, rows, cols, kind, 1100 + (unsigned long long)cols);
    expect_split(x, rows, cols, nranks, how, name);
    free(x);
}

/* Special rows: -inf entries (whole slices of them), an all -inf row (NaN,
 * as PyTorch), a NaN, +inf, values near the float range. */
static void check_special(int nranks, split_method how)
{
    const long long rows = 6, cols = 1001;
    float *x = (float *)malloc(rows * cols * sizeof(float));
    inputs_fill(x, rows, cols, INPUT_NORMAL, 1111);
    for (long long j = 0; j < cols / 2; j++) x[0 * cols + j] = -INFINITY;   /* the first slices all -inf */
    for (long long j = 0; j < cols; j++) x[1 * cols + j] = -INFINITY;       /* all -inf                  */
    x[2 * cols + cols - 1] = NAN;                                           /* a NaN in the last slice   */
    x[3 * cols + 7] = INFINITY;                                             /* +inf                      */
    for (long long j = 0; j < cols; j += 3) x[4 * cols + j] = 3e38f;        /* near the top of the range */
    for (long long j = 0; j < cols; j++) x[5 * cols + j] = -3e38f + (float)j; /* very negative, one max  */
    char name[256];
    snprintf(name, sizeof name, "softmax_split over %d ranks, %s, on -inf slices, an all -inf row (NaN), NaN, +inf and +-3e38: as the reference",
             nranks, METHOD_NAMES[how]);
    expect_split(x, rows, cols, nranks, how, name);
    free(x);
}

/* The two ways give the same function; the all-gather's (M, D) is merged
 * in the same order on every rank, so equal slices give equal bits. */
static void check_agreement(void)
{
    const long long rows = 5, cols = 4 * 3000;
    float *x = (float *)malloc(rows * cols * sizeof(float));
    float *ya = (float *)malloc(rows * cols * sizeof(float)), *yb = (float *)malloc(rows * cols * sizeof(float));
    const long long n = cols / 4;
    inputs_fill(x, rows, n, INPUT_NORMAL, 1112);
    for (long long r = rows - 1; r >= 0; r--) /* every rank's slice of row r: the same n values */
        for (int k = 3; k >= 0; k--) memmove(x + r * cols + k * n, x + r * n, (size_t)n * sizeof(float));
    run_split(x, ya, rows, cols, 4, SPLIT_ALL_GATHER);
    run_split(x, yb, rows, cols, 4, SPLIT_ALL_REDUCE);
    int same_bits = 1;
    double worst = 0.0;
    for (long long r = 0; r < rows; r++)
        for (long long j = 0; j < n; j++)
            for (int k = 1; k < 4; k++) {
                if (memcmp(&ya[r * cols + j], &ya[r * cols + k * n + j], sizeof(float)) != 0) same_bits = 0;
            }
    for (long long i = 0; i < rows * cols; i++) {
        const double e = fabs((double)ya[i] - yb[i]) / fabs((double)ya[i]);
        if (!(e <= worst)) worst = isnan(e) ? INFINITY : e; /* a NaN sticks */
    }
    test_expect(same_bits, "all-gather: 4 ranks holding equal slices write the same bits (every rank merges the 4 pairs in rank order)",
                "the ranks' outputs differ");
    test_expect(worst <= 2 * verify_rtol(cols), "the all-reduce and the all-gather agree to within twice the tolerance on every element",
                "largest relative difference %.3g", worst);
    free(x);
    free(ya);
    free(yb);
}

/* Runs cross_entropy_split of x (rows x cols, host) with targets t over
 * `nranks` ranks on device 0 (each rank's losses poisoned with NaN first)
 * and compares every row's loss on every rank with lesson 10's float64
 * loss: NaN where it is NaN, an ignored row exactly 0, the same infinity,
 * else within the tolerance. Returns how many are wrong; the first in
 * *first (row), *first_got, *first_want. */
static long long split_loss_wrong(const float *x, const int *t, long long rows, long long cols, int nranks,
                                  int ignore_index, split_method how, long long *first, double *first_got,
                                  double *first_want)
{
    float *got = (float *)malloc((size_t)rows * sizeof(float));
    split_rank ranks[SPLIT_MAX_RANKS];
    float *dl[SPLIT_MAX_RANKS];
    int *dt[SPLIT_MAX_RANKS];
    split_comm *comm = split_comm_local(nranks);
    for (int k = 0; k < nranks; k++) {
        ranks[k] = place_rank(x, rows, cols, k, nranks);
        CUDA_CHECK(cudaMalloc(&dt[k], (size_t)rows * sizeof(int)));
        CUDA_CHECK(cudaMemcpy(dt[k], t, (size_t)rows * sizeof(int), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMalloc(&dl[k], (size_t)rows * sizeof(float)));
        CUDA_CHECK(cudaMemset(dl[k], 0xFF, (size_t)rows * sizeof(float)));
    }
    cross_entropy_split(ranks, nranks, rows, cols, dt, ignore_index, dl, how, comm);
    CUDA_CHECK(cudaDeviceSynchronize());
    const double R = verify_rtol(cols);
    long long bad = 0;
    *first = -1;
    for (int k = 0; k < nranks; k++) {
        CUDA_CHECK(cudaMemcpy(got, dl[k], (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost));
        for (long long r = 0; r < rows; r++) {
            const double want = ref_cross_entropy_row(x + r * cols, cols, t[r], ignore_index);
            const int ok = isnan(want)               ? isnan(got[r])
                           : t[r] == ignore_index    ? got[r] == 0.0f
                           : isinf(want)             ? got[r] == (float)want
                                                     : fabs(got[r] - want) <= R * (1.0 + fabs(want));
            if (!ok) {
                if (*first < 0) {
                    *first = r;
                    *first_got = got[r];
                    *first_want = want;
                }
                bad++;
            }
        }
        CUDA_CHECK(cudaFree((void *)ranks[k].x));
        CUDA_CHECK(cudaFree(dt[k]));
        CUDA_CHECK(cudaFree(dl[k]));
    }
    comm->destroy(comm);
    free(got);
    return bad;
}

/* The loss over a split vocabulary: every row's, on every rank, against
 * lesson 10's float64 definition. Targets drawn per row, with ignored rows,
 * targets out of range (NaN), a target at -inf (+inf), an all -inf row
 * (NaN), and targets in every rank's slice. */
static void check_loss(long long rows, long long cols, int nranks, split_method how)
{
    const int IGNORE = -100;
    float *x = (float *)malloc((size_t)(rows * cols) * sizeof(float));
    int *t = (int *)malloc((size_t)rows * sizeof(int));
    inputs_fill(x, rows, cols, INPUT_NORMAL, 1200 + (unsigned long long)cols);
    for (long long r = 0; r < rows; r++) t[r] = (int)((r * 7919 + 13) % cols);
    if (rows > 4) {
        t[1] = IGNORE;
        t[2] = (int)cols;                       /* out of range: NaN */
        x[3 * cols + t[3]] = -INFINITY;         /* the target's logit at -inf: +inf */
        for (long long j = 0; j < cols; j++) x[4 * cols + j] = -INFINITY; /* all -inf: NaN */
    }
    long long first;
    double first_got = 0, first_want = 0;
    const long long bad = split_loss_wrong(x, t, rows, cols, nranks, IGNORE, how, &first, &first_got, &first_want);
    char name[256];
    snprintf(name, sizeof name, "cross_entropy_split over %d rank(s), %s, at %lld x %lld: every row's loss on every rank is lesson 10's float64 loss (ignored rows 0, a target out of range NaN, at -inf +inf)",
             nranks, METHOD_NAMES[how], rows, cols);
    test_expect(bad == 0, name, "%lld wrong, first row %lld: %.9g, want %.9g", bad, first, first_got, first_want);
    free(x);
    free(t);
}

/* The target rules at every slice's edges: K ranks, rows 2k and 2k + 1
 * with the target on the first and the last column of rank k's slice,
 * then a row whose target is ignore_index, N, -1, -100 and -7 (each
 * ignored where it is ignore_index, else out of range: NaN). */
static void check_loss_edges(long long cols, int nranks, int ignore_index, split_method how, const char *shape)
{
    const long long rows = 2LL * nranks + 5;
    float *x = (float *)malloc((size_t)(rows * cols) * sizeof(float));
    int *t = (int *)malloc((size_t)rows * sizeof(int));
    inputs_fill(x, rows, cols, INPUT_NORMAL, 1300 + (unsigned long long)(cols + nranks));
    for (int k = 0; k < nranks; k++) {
        t[2 * k] = (int)split_begin(cols, k, nranks);
        t[2 * k + 1] = (int)split_begin(cols, k + 1, nranks) - 1;
    }
    const int tail[5] = {ignore_index, (int)cols, -1, -100, -7};
    memcpy(t + 2 * nranks, tail, sizeof tail);
    long long first;
    double first_got = 0, first_want = 0;
    const long long bad = split_loss_wrong(x, t, rows, cols, nranks, ignore_index, how, &first, &first_got, &first_want);
    char name[400];
    snprintf(name, sizeof name,
             "cross_entropy_split over %d ranks, %s, %lld x %lld (%s), ignore_index = %d: targets on the first and the "
             "last column of every rank's slice exact on every rank; ignored rows exactly 0; N, -1 and the other of "
             "-100 and -7 NaN",
             nranks, METHOD_NAMES[how], rows, cols, shape, ignore_index);
    test_expect(bad == 0, name, "%lld wrong, first row %lld (target %d): %.9g, want %.9g", bad, first,
                first >= 0 ? t[first] : 0, first_got, first_want);
    free(x);
    free(t);
}

/* K = 2 ... 5 ranks: slices of unequal lengths (N = 1003, not a multiple
 * of any K: the first rank's slice one column shorter than the last's up
 * to K = 5), with ignore_index -100, 0, N - 1 and -7; and slices of 8192
 * and 8196 floats, multiples of the float4 width that the row engine's
 * split path cuts into 4 and 5 pieces at so few rows (fx_split_shape:
 * pieces of at least 2048 floats, whole multiples of 64, the last one
 * shorter), for softmax_split and cross_entropy_split. */
static void check_rank_edges(void)
{
    const long long N = 1003;
    const int IGNORE[4] = {-100, 0, (int)(N - 1), -7};
    for (int how = 0; how < 2; how++)
        for (int k = 2; k <= 5; k++) {
            for (int i = 0; i < 4; i++)
                check_loss_edges(N, k, IGNORE[i], (split_method)how, "N = 1003: slices of unequal lengths");
            for (int w = 0; w < 2; w++) {
                const long long slice = w ? 8196 : 8192, cols = slice * k;
                char shape[80];
                snprintf(shape, sizeof shape, "slices of %lld floats, float4s in %d pieces", slice, w ? 5 : 4);
                char name[300];
                snprintf(name, sizeof name,
                         "softmax_split over %d ranks, %s, at 3 x %lld (%s): every element is the float64 softmax of "
                         "its whole row",
                         k, METHOD_NAMES[how], cols, shape);
                float *x = (float *)malloc((size_t)(3 * cols) * sizeof(float));
                inputs_fill(x, 3, cols, INPUT_NORMAL, 1400 + (unsigned long long)cols);
                expect_split(x, 3, cols, k, (split_method)how, name);
                free(x);
                check_loss_edges(cols, k, -100, (split_method)how, shape);
                check_loss_edges(cols, k, -7, (split_method)how, shape);
            }
        }
}

int main(void)
{
    int count = 0;
    const int have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError();
    check_slices();
    if (!have_gpu) {
        test_skip("softmax_split on the device", "no GPU");
        return test_exit_status();
    }
    const struct {
        long long rows, cols;
    } SHAPES[] = {{1, 1}, {3, 3}, {5, 7}, {64, 1000}, {33, 4099}, {2, 300003}, {1, 262144}, {300, 33}, {4096, 64}};
    const int RANKS[] = {1, 2, 3, 4, 7};
    /* make sanitize and make test-asan set SOFTMAX_SANITIZE: 4096 rows take
     * a minute under AddressSanitizer, and 300 rows run the same code. */
    const int sanitizing = getenv("SOFTMAX_SANITIZE") != NULL;
    if (sanitizing)
        test_skip("softmax_split at 4096 x 64", "left out under make sanitize and make test-asan (slow under the tools)");
    for (int s = 0; s < 9; s++)
        for (int k = 0; k < 5; k++)
            for (int how = 0; how < 2; how++) {
                if (SHAPES[s].rows * SHAPES[s].cols > 100000 && RANKS[k] != 2 && RANKS[k] != 3) continue;
                if (sanitizing && SHAPES[s].rows == 4096) continue;
                check_shape(SHAPES[s].rows, SHAPES[s].cols, RANKS[k], (split_method)how, INPUT_NORMAL);
            }
    for (int how = 0; how < 2; how++) {
        check_shape(17, 2049, 2, (split_method)how, INPUT_LARGE);
        check_special(2, (split_method)how);
        check_special(3, (split_method)how);
    }
    check_agreement();
    for (int how = 0; how < 2; how++)
        for (int k = 1; k <= 3; k++) {
            check_loss(64, 1000, k, (split_method)how);
            check_loss(5, 7, k, (split_method)how);
        }
    check_loss(3, 70001, 2, SPLIT_ALL_GATHER);
    check_rank_edges();
    split_release();
    return test_exit_status();
}
