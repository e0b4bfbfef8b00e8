/* Checker for exercise 11 (do not edit): combine_all_reduce over three
 * ranks on one device (the in-process stand-in for NCCL), against the
 * float64 merge of the ranks' states, for rows where the ranks' maxima
 * differ by up to 80, a rank whose slice is all -inf, a row that is -inf
 * on every rank, and a NaN. Exit 0 when solved, 1 if not, 3 without a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "verify.h"
#include "exercise.h"

#define RANKS 3
#define ROWS 1000

/* The row's (M, D) in float64 from the ranks' states. */
static void reference(const float2 states[RANKS], double *M, double *D)
{
    double m = -INFINITY;
    for (int k = 0; k < RANKS; k++)
        if (states[k].x > m) m = states[k].x;
    const double shift = m == -INFINITY ? 0.0 : m;
    double d = 0.0;
    for (int k = 0; k < RANKS; k++) d += states[k].y * exp(states[k].x - shift);
    *M = m;
    *D = d;
}

/* Rank k's state of row r. */
static float2 make_state(int k, int r)
{
    const unsigned h = (unsigned)(r * 2654435761u) ^ (unsigned)(k * 40503u);
    float2 s;
    s.x = (float)(h % 16001) / 100.0f - 80.0f; /* maxima from -80 to 80 */
    s.y = 1.0f + (float)((h >> 8) % 1000);     /* 1 ... 1000 columns' worth */
    if (r % 7 == 3 && k == 1) s = make_float2(-INFINITY, 0.0f); /* rank 1's slice all -inf */
    if (r == 5) s = make_float2(-INFINITY, 0.0f);               /* -inf on every rank */
    if (r == 6 && k == 2) s.y = NAN;                            /* a NaN in rank 2's slice */
    return s;
}

int main(void)
{
    require_gpu("exercise11");
    printf("Exercise 11: the row's (M, D) from %d ranks' (m, d), with two all-reduces\n", RANKS);
    float2 *h = (float2 *)malloc(RANKS * ROWS * sizeof(float2));
    float *hm = (float *)malloc(ROWS * sizeof(float)), *hd = (float *)malloc(ROWS * sizeof(float));
    float2 *mine[RANKS];
    float *m[RANKS], *d[RANKS];
    split_place at[RANKS];
    for (int k = 0; k < RANKS; k++) {
        for (int r = 0; r < ROWS; r++) h[k * ROWS + r] = make_state(k, r);
        CUDA_CHECK(cudaMalloc(&mine[k], ROWS * sizeof(float2)));
        CUDA_CHECK(cudaMalloc(&m[k], ROWS * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&d[k], ROWS * sizeof(float)));
        CUDA_CHECK(cudaMemcpy(mine[k], h + k * ROWS, ROWS * sizeof(float2), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(m[k], 0xFF, ROWS * sizeof(float))); /* NaN until written */
        CUDA_CHECK(cudaMemset(d[k], 0xFF, ROWS * sizeof(float)));
        at[k].device = 0;
        at[k].stream = 0;
    }
    split_comm *comm = split_comm_local(RANKS);
    combine_all_reduce(comm, at, mine, m, d, ROWS);
    CUDA_CHECK(cudaDeviceSynchronize());
    verify_wrong wm, wd; /* M and D: one per row (row) and rank (column) */
    verify_wrong_init(&wm, ROWS, RANKS);
    verify_wrong_init(&wd, ROWS, RANKS);
    for (int k = 0; k < RANKS; k++) {
        CUDA_CHECK(cudaMemcpy(hm, m[k], ROWS * sizeof(float), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(hd, d[k], ROWS * sizeof(float), cudaMemcpyDeviceToHost));
        for (int r = 0; r < ROWS; r++) {
            float2 s[RANKS];
            for (int j = 0; j < RANKS; j++) s[j] = h[j * ROWS + r];
            double M, D;
            reference(s, &M, &D);
            if (!(hm[r] == M)) verify_wrong_add(&wm, r, k, M, hm[r]); /* a max is exact */
            if (!(isnan(D) ? isnan(hd[r]) : fabs(hd[r] - D) <= 1e-5 * fabs(D))) verify_wrong_add(&wd, r, k, D, hd[r]);
        }
    }
    const long long bad = wm.count + wd.count;
    printf("  %s %d rows x %d ranks: %lld of the (M, D) values wrong\n", bad ? "BAD " : "ok  ", ROWS, RANKS, bad);
    verify_wrong_print(&wm, "M (rows x ranks)", "       ");
    verify_wrong_print(&wd, "D (rows x ranks)", "       ");
    comm->destroy(comm);
    for (int k = 0; k < RANKS; k++) {
        CUDA_CHECK(cudaFree(mine[k]));
        CUDA_CHECK(cudaFree(m[k]));
        CUDA_CHECK(cudaFree(d[k]));
    }
    free(h);
    free(hm);
    free(hd);
    printf("%s\n", bad ? "NOT YET: every rank's (M, D) must match the float64 merge; the BAD lines show where it "
                         "does not"
                       : "SOLVED");
    return bad ? 1 : 0;
}
