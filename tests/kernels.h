/* Every softmax kernel of the course, in one table: the equivalence matrix
 * (tests/test_kernels.cu) checks each against the float64 reference, and
 * the benchmark (tests/bench.cu) times each. A lesson joins both by adding
 * its row here. */
#ifndef TESTS_KERNELS_H
#define TESTS_KERNELS_H

#include "harness.h"
#include "verify.h"

#include "../lessons/01_naive/softmax_naive.h"
#include "../lessons/02_stable/softmax_stable.h"
#include "../lessons/03_three_pass/softmax_three_pass.h"
#include "../lessons/04_warp/softmax_warp.h"
#include "../lessons/05_fused/softmax_fused.h"
#include "../lessons/06_online/softmax_online.h"
#include "../lessons/07_attention/softmax_attention.h"
#include "../lessons/08_fastest/softmax_fastest.h"

typedef struct {
    const char *name;      /* "naive"; shown as "lesson1 naive"               */
    int lesson;
    softmax_fn run;
    int stable;            /* 0: overflows by design, kept off large inputs   */
    rtol_fn rtol;          /* the tolerance its summation order needs         */
    double bytes_per_elem; /* global-memory traffic of the design             */
    long long max_cols;    /* bench: longest row worth timing (0: any)        */
} kernel;

static const kernel KERNELS[] = {
    {"naive", 1, softmax_naive, 0, verify_rtol_sequential, 12, 1LL << 20},
    {"stable", 2, softmax_stable, 1, verify_rtol_sequential, 16, 1LL << 20},
    {"three-pass", 3, softmax_three_pass, 1, verify_rtol, 16, 0},
    {"three-pass-1024", 3, softmax_three_pass_1024, 1, verify_rtol, 16, 0},
    {"warp", 4, softmax_warp, 1, verify_rtol, 16, 0},
    {"warp-1024", 4, softmax_warp_1024, 1, verify_rtol, 16, 0},
    {"warp-per-row", 4, softmax_warp_per_row, 1, verify_rtol, 16, 0},
    {"fused", 5, softmax_fused, 1, verify_rtol, 8, 0},
    {"fused-shared", 5, softmax_fused_shared, 1, verify_rtol, 8, 32768},
    {"fused-chunked", 5, softmax_fused_chunked, 1, verify_rtol, 16, 0},
    {"online", 6, softmax_online, 1, verify_rtol, 12, 0},
    {"online-block", 6, softmax_online_block_per_row, 1, verify_rtol, 12, 0},
    {"attention-plain", 7, softmax_attention_plain, 1, verify_rtol, 8, 0},
    {"fastest", 8, softmax_fastest, 1, verify_rtol, 8, 0},
    {"fastest-warp", 8, softmax_fastest_warp, 1, verify_rtol, 8, FASTEST_WARP_MAX_COLS},
    {"fastest-block", 8, softmax_fastest_block, 1, verify_rtol, 8, FASTEST_BLOCK_MAX_COLS},
    {"fastest-shared", 8, softmax_fastest_shared, 1, verify_rtol, 8, 32768},
    {"fastest-cluster", 8, softmax_fastest_cluster, 1, verify_rtol, 8, FASTEST_CLUSTER_MAX_COLS},
    {"fastest-bulk", 8, softmax_fastest_bulk, 1, verify_rtol, 8, 1LL << 17},
    {"fastest-grid", 8, softmax_fastest_grid, 1, verify_rtol, 8, 1LL << 23},
    {"fastest-split", 8, softmax_fastest_split, 1, verify_rtol, 12, 0},
};
#define NKERNELS (int)(sizeof KERNELS / sizeof KERNELS[0])

#endif
