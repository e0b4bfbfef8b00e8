/* Lesson 10's reference (common/reference.h) checked against itself and
 * against hand-computed values: log-softmax, cross-entropy, the softmax
 * backward and the classifier. Part of tests/test_reference.c (one
 * program), which runs test_training. */
#ifndef TESTS_TEST_REFERENCE_TRAINING_H
#define TESTS_TEST_REFERENCE_TRAINING_H

#include <math.h>

#include "inputs.h"
#include "reference.h"
#include "test.h"
#include "test_reference_cases.h"

/* Rows of only -inf, with a NaN, with +inf, and with one -inf entry. */
static const float SPECIAL[4][4] = {{-INFINITY, -INFINITY, -INFINITY, -INFINITY},
                                    {1.0f, NAN, 2.0f, 3.0f},
                                    {1.0f, INFINITY, 2.0f, 3.0f},
                                    {1.0f, -INFINITY, 2.0f, 3.0f}};

static void test_log_softmax(void)
{
    double y[MAXN], ls[MAXN];
    int ok = 1;

    /* log-softmax = log(softmax) where softmax does not underflow, and its
     * exp sums to 1 */
    for (int l = 0; l < NLENGTHS && ok; l++) {
        const long long n = LENGTHS[l];
        inputs_fill(X, 1, n, INPUT_NORMAL, 7000 + l);
        ref_softmax_row(X, y, n);
        ref_log_softmax_row(X, ls, n);
        double sum = 0.0;
        for (long long j = 0; j < n; j++) {
            if (!close_to(ls[j], log(y[j]), TOL)) ok = 0;
            sum += exp(ls[j]);
        }
        if (!close_to(sum, 1.0, TOL)) ok = 0;
    }
    test_expect(ok, "reference: log-softmax equals log(softmax) (1e-12) on normal rows, and exp(log-softmax) sums to 1",
                "differs");

    const float far[3] = {0.0f, -800.0f, -1e30f};
    ref_log_softmax_row(far, ls, 3);
    ref_softmax_row(far, y, 3);
    test_expect(ls[0] == 0.0 && ls[1] == -800.0 && ls[2] == (double)far[2] && y[1] == 0.0,
                "reference: log-softmax of [0, -800, -1e30] is exactly [0, -800, -1e30] where softmax underflows to 0",
                "got [%g, %g, %g], softmax[1] %g", ls[0], ls[1], ls[2], y[1]);

    int nan_rows = 1;
    for (int r = 0; r < 3; r++) {
        ref_log_softmax_row(SPECIAL[r], ls, 4);
        for (int j = 0; j < 4; j++) nan_rows &= isnan(ls[j]);
    }
    ref_log_softmax_row(SPECIAL[3], ls, 4);
    test_expect(nan_rows && ls[1] == -INFINITY && isfinite(ls[0]),
                "reference: log-softmax of a row of only -inf, or with NaN or +inf, is NaN; a -inf entry gives -inf",
                "got %g at the -inf entry", ls[1]);
}

static void test_cross_entropy(void)
{
    double ls[MAXN];
    const float x3[3] = {1.0f, 2.0f, 3.0f};
    const double ce = ref_cross_entropy_row(x3, 3, 2, -100);
    test_expect(fabs(ce - 0.40760596444438) < 1e-12,
                "reference: cross-entropy of [1, 2, 3] with target 2 is log(e + e^2 + e^3) - 3 = 0.4076059644",
                "got %.15g", ce);
    int ok = 1;
    for (int l = 0; l < NLENGTHS && ok; l++) {
        const long long n = LENGTHS[l];
        inputs_fill(X, 1, n, INPUT_LARGE, 7100 + l);
        ref_log_softmax_row(X, ls, n);
        for (long long t = 0; t < n; t += 1 + n / 7) {
            const double c = ref_cross_entropy_row(X, n, t, -100);
            if (!close_to(c, ref_logsumexp_row(X, n) - X[t], 1e-9) || !close_to(c, -ls[t], 1e-9)) ok = 0;
        }
    }
    test_expect(ok, "reference: cross-entropy = logsumexp - x[t] = -log-softmax[t] (1e-9), large rows included", "differs");
    test_expect(ref_cross_entropy_row(x3, 3, -100, -100) == 0.0 && ref_cross_entropy_row(x3, 3, 1, 1) == 0.0 &&
                    isnan(ref_cross_entropy_row(x3, 3, 3, -100)) && isnan(ref_cross_entropy_row(x3, 3, -1, -100)),
                "reference: cross-entropy is 0 for the ignore index (-100, or one inside the row), NaN for targets out of range",
                "differs");
    test_expect(ref_cross_entropy_row(SPECIAL[3], 4, 1, -100) == INFINITY &&
                    isnan(ref_cross_entropy_row(SPECIAL[0], 4, 0, -100)) &&
                    isnan(ref_cross_entropy_row(SPECIAL[1], 4, 0, -100)),
                "reference: cross-entropy is +inf for a -inf target, NaN for a row of only -inf or holding NaN",
                "differs");
}

/* The backward: the Jacobian (diag(y) - y y^T) times dy, written out. */
static void test_softmax_backward(void)
{
    double y[MAXN], dx[MAXN];
    int ok = 1;
    for (int l = 0; l < NLENGTHS && ok; l++) {
        const long long n = LENGTHS[l] > 1100 ? 1100 : LENGTHS[l];
        float yf[1100], dyf[1100];
        inputs_fill(X, 1, n, INPUT_NORMAL, 7200 + l);
        ref_softmax_row(X, y, n);
        for (long long j = 0; j < n; j++) yf[j] = (float)y[j];
        inputs_fill(dyf, 1, n, INPUT_UNIFORM, 7300 + l);
        ref_softmax_backward_row(yf, dyf, dx, n);
        double sum = 0.0, scale = 0.0;
        for (long long j = 0; j < n; j++) {
            double jv = 0.0; /* row j of the Jacobian times dy */
            for (long long i = 0; i < n; i++) jv += ((i == j ? (double)yf[j] : 0.0) - (double)yf[j] * yf[i]) * dyf[i];
            if (!close_to(dx[j], jv, 1e-9) && fabs(dx[j] - jv) > 1e-15) ok = 0;
            sum += dx[j];
            scale += fabs(dx[j]);
        }
        double ysum = 0.0;
        for (long long j = 0; j < n; j++) ysum += yf[j];
        /* sum dx = (1 - sum y) <y, dy>: 0 up to the float rounding of y */
        if (fabs(sum) > 1e-6 * (scale + 1.0) + fabs(1.0 - ysum)) ok = 0;
    }
    test_expect(ok, "reference: the softmax backward equals the Jacobian (diag(y) - y y^T) times dy, and its entries sum to 0",
                "differs");
}

static void test_classifier(void)
{
    int t3[4] = {2, -100, 0, 5};
    const float x43[12] = {1, 2, 3, 1, 2, 3, 0, 0, 0, 1, 2, 3};
    double losses[4], grad[12];
    double total = ref_classifier(x43, t3, 4, 3, -100, 0, losses, grad);
    test_expect(fabs(grad[0] - 0.09003057317) < 1e-10 && fabs(grad[1] - 0.24472847105) < 1e-10 &&
                    fabs(grad[2] + 0.33475904422) < 1e-10 && grad[3] == 0 && grad[4] == 0 && grad[5] == 0 &&
                    fabs(grad[6] + 2.0 / 3.0) < 1e-12 && isnan(grad[9]) && isnan(grad[11]) && isnan(total) &&
                    losses[1] == 0.0 && fabs(losses[2] - log(3.0)) < 1e-12,
                "reference: classifier gradient softmax - one_hot ([0.0900, 0.2447, -0.3348]), ignored row 0, out-of-range row NaN",
                "got [%g, %g, %g], ignored %g, bad %g", grad[0], grad[1], grad[2], grad[3], grad[9]);
    t3[3] = -100;
    double sum = ref_classifier(x43, t3, 4, 3, -100, 0, losses, grad);
    double mean = ref_classifier(x43, t3, 4, 3, -100, 1, NULL, grad);
    test_expect(close_to(mean, sum / 2.0, TOL) && fabs(grad[6] + 1.0 / 3.0) < 1e-12 && fabs(grad[7] - 1.0 / 6.0) < 1e-12,
                "reference: the mean divides the summed loss and each gradient by the rows not ignored (2 of 4)",
                "mean %g, sum %g, grad %g", mean, sum, grad[6]);
    const int all_ignored[4] = {-100, -100, -100, -100};
    const double m0 = ref_classifier(x43, all_ignored, 4, 3, -100, 1, NULL, grad);
    const double s0 = ref_classifier(x43, all_ignored, 4, 3, -100, 0, NULL, NULL);
    int zeros = 1;
    for (int j = 0; j < 12; j++) zeros &= grad[j] == 0.0;
    test_expect(isnan(m0) && s0 == 0.0 && zeros,
                "reference: every row ignored gives the mean NaN (0 / 0, as PyTorch), the sum 0, and a zero gradient",
                "mean %g, sum %g", m0, s0);
}

static void test_training(void)
{
    test_log_softmax();
    test_cross_entropy();
    test_softmax_backward();
    test_classifier();
}

#endif
