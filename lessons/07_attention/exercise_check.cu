/* Checker for exercise 7 (do not edit): key padding from sequence lengths,
 * against the float64 reference, outputs poisoned first, padded scores
 * filled with NaN (they must never reach an output), padded outputs
 * required to be exactly 0. Exit 0 when solved, 1 if not, 3 without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "exercise.h"

/* Checks y (batch * S rows of S) against the reference; the wrong elements in w. */
static void check(const float *x, const float *y, const int *len, long long batch, long long S, double scale,
                  double *worst, verify_wrong *w)
{
    verify_wrong_init(w, batch * S, S);
    double *want = (double *)malloc((size_t)S * sizeof(double));
    *worst = 0.0;
    for (long long r = 0; r < batch * S; r++) {
        const long long n = len[r / S];
        if (n > 0) ref_softmax_scaled_row(x + r * S, want, n, scale);
        for (long long k = 0; k < S; k++) {
            const float got = y[r * S + k];
            if (k >= n) { /* padding, or a length-0 sequence: exactly 0 */
                if (got != 0.0f) verify_wrong_add(w, r, k, 0.0, got);
                continue;
            }
            if (!verify_element(got, want[k], verify_rtol(S))) verify_wrong_add(w, r, k, want[k], got);
            else if (want[k] > 0 && fabs(got - want[k]) / want[k] > *worst)
                *worst = fabs(got - want[k]) / want[k];
        }
    }
    free(want);
}

int main(void)
{
    require_gpu("exercise7");
    const long long Ss[] = {1, 31, 100, 1000, 1025};
    const double scale = 0.125;
    int solved = 1;
    printf("Exercise 7: softmax over the first lengths[b] keys of each sequence, zeros over the padding\n");
    for (int s = 0; s < (int)(sizeof Ss / sizeof Ss[0]); s++) {
        const long long S = Ss[s], batch = 5, rows = batch * S;
        /* full, one real token, empty, about half, all but one */
        int len[5] = {(int)S, 1, 0, (int)(S / 2), (int)(S - 1)};
        const size_t n = (size_t)(rows * S), bytes = n * sizeof(float);
        float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes), *dx, *dy;
        int *dlen;
        inputs_fill(x, rows, S, INPUT_NORMAL, 70 + (unsigned long long)s);
        for (long long r = 0; r < rows; r++)
            for (long long k = len[r / S]; k < S; k++) x[r * S + k] = NAN;
        CUDA_CHECK(cudaMalloc(&dx, bytes));
        CUDA_CHECK(cudaMalloc(&dy, bytes));
        CUDA_CHECK(cudaMalloc(&dlen, sizeof len));
        CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(dlen, len, sizeof len, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(dy, 0xFF, bytes)); /* NaN until written */
        softmax_padded(dx, dlen, dy, batch, S, (float)scale, 0);
        CUDA_CHECK_LAUNCH();
        CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
        double worst;
        verify_wrong w;
        check(x, y, len, batch, S, scale, &worst, &w);
        printf("  %-4s S = %-5lld lengths {%d, %d, %d, %d, %d}: ", w.count ? "BAD" : "ok", S, len[0], len[1],
               len[2], len[3], len[4]);
        if (w.count) printf("%lld of %lld outputs wrong\n", w.count, (long long)n);
        else printf("max rel err %.1e, padding exactly 0\n", worst);
        verify_wrong_print(&w, "y", "       ");
        solved &= w.count == 0;
        CUDA_CHECK(cudaFree(dx));
        CUDA_CHECK(cudaFree(dy));
        CUDA_CHECK(cudaFree(dlen));
        free(x);
        free(y);
    }
    printf("%s\n", solved ? "SOLVED"
                          : "NOT YET: padded keys must get 0 and the rest the softmax of the real keys; "
                            "the BAD lines show where they do not");
    return solved ? 0 : 1;
}
