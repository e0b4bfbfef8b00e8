/* Checker for exercise 10 (do not edit): log_softmax_backward against the float64 definition
 * dx = dout - exp(out) * sum(dout) on every element, outputs poisoned first, for several shapes, a row whose
 * dout sums to 0 and one with -inf in out (probability 0); then the gradient's real specification: central
 * differences in float64 of sum(dout * log_softmax(x)) at small shapes. Exit 0 when solved, 1 if not, 3
 * without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "exercise.h"
#include "train_check.h" /* train_report, train_central, train_forward_rows; reference.h, verify.h */

/* Runs the exercise on host out, dout; dx back in dx, poisoned (NaN) until written. */
static void run(const float *out, const float *dout, float *dx, long long rows, long long cols)
{
    const size_t n = (size_t)(rows * cols), bytes = n * sizeof(float);
    float *d;
    CUDA_CHECK(cudaMalloc(&d, 3 * bytes));
    CUDA_CHECK(cudaMemcpy(d, out, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d + n, dout, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d + 2 * n, 0xFF, bytes));
    log_softmax_backward(d, d + n, d + 2 * n, rows, cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(dx, d + 2 * n, bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d));
}

/* Every element against the float64 formula. dx_j owes the float sum of
 * dout its error R sum|dout| times exp(out_j), plus a rounding of dout_j. */
static int check(const char *what, const float *out, const float *dout, long long rows, long long cols)
{
    float *dx = (float *)malloc((size_t)(rows * cols) * sizeof(float));
    run(out, dout, dx, rows, cols);
    const double R = verify_rtol(cols);
    train_report rep;
    train_report_init(&rep);
    for (long long i = 0; i < rows; i++) {
        double s = 0.0, sa = 0.0;
        for (long long j = 0; j < cols; j++) s += dout[i * cols + j], sa += fabs((double)dout[i * cols + j]);
        for (long long j = 0; j < cols; j++) {
            const double y = exp((double)out[i * cols + j]), want = (double)dout[i * cols + j] - y * s;
            const double atol = R * (y * sa + fabs((double)dout[i * cols + j])) + VERIFY_ATOL;
            train_report_add(&rep, "dx", i, j, dx[i * cols + j], want, R, atol);
        }
    }
    free(dx);
    return train_print_check(what, &rep, rows, cols);
}

/* sum(dout * log_softmax(x)) in float64, the objective whose central
 * differences are the gradient (ctx: dout, rows, cols). */
typedef struct {
    const float *dout;
    long long rows, cols;
} objective_ctx;
static double objective(const double *x, const void *ctx)
{
    const objective_ctx *c = (const objective_ctx *)ctx;
    double f = 0.0;
    for (long long i = 0; i < c->rows; i++) {
        const double *r = x + i * c->cols, lse = train_logsumexp64(r, c->cols);
        for (long long j = 0; j < c->cols; j++) f += c->dout[i * c->cols + j] * (r[j] - lse);
    }
    return f;
}

static int check_fd(long long rows, long long cols, unsigned long long seed)
{
    const size_t n = (size_t)(rows * cols);
    float *x = (float *)malloc(3 * n * sizeof(float)), *out = x + n, *dout = x + 2 * n;
    float *dx = (float *)malloc(n * sizeof(float));
    double *xd = (double *)malloc(n * sizeof(double));
    inputs_fill(x, rows, cols, INPUT_NORMAL, seed);
    inputs_fill(dout, rows, cols, INPUT_UNIFORM, seed + 1);
    train_forward_rows(ref_log_softmax_row, x, out, rows, cols);
    run(out, dout, dx, rows, cols);
    for (size_t e = 0; e < n; e++) xd[e] = x[e];
    const objective_ctx c = {dout, rows, cols};
    train_report rep; /* within 1e-5 + 1e-5 |fd| */
    train_report_init(&rep);
    for (size_t e = 0; e < n; e++)
        train_report_add(&rep, "dx", (long long)e / cols, (long long)e % cols, dx[e],
                         train_central(objective, &c, xd, e), 1e-5, 1e-5);
    free(x);
    free(dx);
    free(xd);
    return train_print_check("central differences of sum(dout * log_softmax(x))", &rep, rows, cols);
}

int main(void)
{
    require_gpu("exercise10");
    printf("Exercise 10: the log-softmax backward, dx = dout - exp(out) * sum(dout)\n");
    const long long shapes[][2] = {{1, 1}, {5, 7}, {3, 1000}, {2, 5000}, {1, 20000}};
    int solved = 1;
    char what[80];
    for (int s = 0; s < 5; s++) {
        const long long rows = shapes[s][0], cols = shapes[s][1];
        const size_t n = (size_t)(rows * cols);
        float *x = (float *)malloc(3 * n * sizeof(float)), *out = x + n, *dout = x + 2 * n;
        inputs_fill(x, rows, cols, INPUT_NORMAL, 100 + s);
        inputs_fill(dout, rows, cols, INPUT_UNIFORM, 200 + s);
        train_forward_rows(ref_log_softmax_row, x, out, rows, cols);
        snprintf(what, sizeof what, "%lld x %lld, dout uniform in [-4, 4]", rows, cols);
        solved &= check(what, out, dout, rows, cols);
        free(x);
    }

    /* The cross-entropy's own dout (-1 at the target) sums to -1; a row
     * summing to 0 and -inf entries (zero probability) in out. */
    const float I = INFINITY;
    const float x3[3][6] = {{1, 2, 3, 4, 5, 6}, {0.5f, -I, 2, -I, 1, 0}, {3, 1, 4, 1, 5, 9}};
    const float d3[3][6] = {{0, 0, -1, 0, 0, 0}, {1, 2, -3, 4, -4, 0}, {0.5f, -0.5f, 0.25f, -0.25f, 1, -1}};
    float out3[18];
    train_forward_rows(ref_log_softmax_row, &x3[0][0], out3, 3, 6);
    solved &= check("3 x 6: one-hot dout, -inf in out, a dout summing to 0", out3, &d3[0][0], 3, 6);

    solved &= check_fd(3, 5, 300);
    solved &= check_fd(2, 40, 310);

    printf("%s\n", solved ? "SOLVED"
                          : "NOT YET: dx must match its float64 definition; the BAD lines show where it does not");
    return solved ? 0 : 1;
}
