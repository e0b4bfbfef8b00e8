/* Which path each of lesson 10's kernels takes (training.h), checked by
 * tests/test_lesson10.cu (one program): log-softmax and the backward on
 * the row engine's paths, the classifier's long-row modes. Plans only:
 * the kernels' results on those paths are test_shapes' and the rules'. */
#ifndef TESTS_TEST_LESSON10_PATHS_H
#define TESTS_TEST_LESSON10_PATHS_H
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "../lessons/10_training/training.h"
#include "../tests/test.h"

/* Log-softmax runs on the row engine: at every shape it takes the
 * softmax's path (fx_plan_typed, the same dispatcher), except where that
 * is path 2s or 3b, which run the softmax only: then path 3, 3g or 4.
 * The long-row modes take the engine path they name where the shape fits
 * it: TRAIN_LONG_SPLIT path 4, TRAIN_LONG_GRID path 3g, TRAIN_LONG_CLUSTER
 * path 3 (sm_90 and up). */
static void test_log_softmax_engine_paths(void)
{
    static const long long S[][2] = {{4096, 512},   {64, 20000},    {4096, 1 << 15}, {1, 1 << 15},
                                     {256, 1 << 18}, {128, 1 << 19}, {2, 70001},      {64, 1 << 20}};
    const float *a = (const float *)(uintptr_t)256; /* an aligned address, never dereferenced */
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) {
        const long long rows = S[i][0], cols = S[i][1];
        const fastest_path soft = fx_plan_typed(FASTEST_AUTO, DTYPE_F32, a, cols, a, cols, rows, cols).path;
        const fastest_path lsm = log_softmax_plan_at(rows, cols).path;
        const int own = soft == FASTEST_SHARED || soft == FASTEST_BULK;
        char name[200];
        snprintf(name, sizeof name, "log_softmax_forward at %lld x %lld takes the softmax's path (%s)%s", rows, cols,
                 fastest_path_name(soft), own ? " or, that being the softmax's own, path 3, 3g or 4" : "");
        test_expect(own ? (lsm == FASTEST_CLUSTER || lsm == FASTEST_GRID || lsm == FASTEST_SPLIT) : lsm == soft, name,
                    "path %s", fastest_path_name(lsm));
        if (cols <= TRAIN_REG_MAX_COLS) continue;
        train_set_long_rows(TRAIN_LONG_SPLIT);
        snprintf(name, sizeof name, "log_softmax_forward at %lld x %lld: TRAIN_LONG_SPLIT takes path 4", rows, cols);
        test_expect(log_softmax_plan_at(rows, cols).path == FASTEST_SPLIT, name, "path %s",
                    fastest_path_name(log_softmax_plan_at(rows, cols).path));
        train_set_long_rows(TRAIN_LONG_GRID);
        snprintf(name, sizeof name, "log_softmax_forward at %lld x %lld: TRAIN_LONG_GRID takes path 3g", rows, cols);
        test_expect(log_softmax_plan_at(rows, cols).path == FASTEST_GRID, name, "path %s",
                    fastest_path_name(log_softmax_plan_at(rows, cols).path));
        train_set_long_rows(TRAIN_LONG_CLUSTER);
        snprintf(name, sizeof name, "log_softmax_forward at %lld x %lld: TRAIN_LONG_CLUSTER takes path 3", rows, cols);
        if (!softmax_fastest_has_clusters()) test_skip(name, "no clusters on this GPU or build");
        else
            test_expect(log_softmax_plan_at(rows, cols).path == FASTEST_CLUSTER, name, "path %s",
                        fastest_path_name(log_softmax_plan_at(rows, cols).path));
        train_set_long_rows(TRAIN_LONG_AUTO);
    }
}

/* The backward runs on the row engine as an operation of two inputs: in
 * registers up to TRAIN_REG_MAX_COLS (path 1 up to 1024 floats, else 2),
 * past it on chip across the GPU (path 3g) where the row's pieces fit,
 * else split (path 4), never in a cluster; TRAIN_LONG_SPLIT takes path 4
 * and TRAIN_LONG_GRID path 3g. */
static void test_backward_engine_paths(void)
{
    static const long long S[][2] = {{4096, 512}, {64, 4097}, {64, 16384}, {4096, 1 << 15}, {64, 1 << 20}, {2, 70001}};
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) {
        const long long rows = S[i][0], cols = S[i][1];
        const fastest_path want = cols <= 1024 ? FASTEST_WARP : cols <= TRAIN_REG_MAX_COLS ? FASTEST_BLOCK : FASTEST_GRID;
        const fastest_path got = backward_plan_at(rows, cols).path;
        char name[200];
        snprintf(name, sizeof name, "softmax_backward at %lld x %lld takes the row engine's %s", rows, cols,
                 fastest_path_name(want));
        test_expect(got == want, name, "path %s", fastest_path_name(got));
        if (cols <= TRAIN_REG_MAX_COLS) continue;
        train_set_long_rows(TRAIN_LONG_SPLIT);
        const fastest_path split = backward_plan_at(rows, cols).path;
        train_set_long_rows(TRAIN_LONG_GRID);
        const fastest_path grid = backward_plan_at(rows, cols).path;
        train_set_long_rows(TRAIN_LONG_CLUSTER);
        const fastest_path cl = backward_plan_at(rows, cols).path;
        train_set_long_rows(TRAIN_LONG_AUTO);
        snprintf(name, sizeof name,
                 "softmax_backward at %lld x %lld: TRAIN_LONG_SPLIT takes path 4, TRAIN_LONG_GRID path 3g, "
                 "TRAIN_LONG_CLUSTER no cluster",
                 rows, cols);
        test_expect(split == FASTEST_SPLIT && grid == FASTEST_GRID && cl != FASTEST_CLUSTER, name, "%s, %s, %s",
                    fastest_path_name(split), fastest_path_name(grid), fastest_path_name(cl));
    }
}

/* The classifier's long-row modes take the paths they name: on sm_90 and
 * up, float rows of 2 to 16 pieces in a cluster of that many blocks, by
 * default where every SM gets a block. */
static void test_long_row_modes(void)
{
    int dev, major = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    const train_kernel k = TRAIN_K_CLASSIFIER;
    const char *kn = "classifier_fused";
    char name[200];
    snprintf(name, sizeof name, "%s: by default, rows of 2^15 floats in clusters of 2 at 4096 rows, none at 1 row", kn);
    const int many = train_cluster_size(k, 4096, 1 << 15), one = train_cluster_size(k, 1, 1 << 15);
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else test_expect(many == 2 && one == 0, name, "clusters of %d and %d", many, one);
    /* 2^18: 8 CTAs of 128 KB (TRAIN_BIG_BLOCK) */
    snprintf(name, sizeof name, "%s: by default, rows of 2^18 floats at 256 rows in clusters of 8", kn);
    const int eight = train_cluster_size(k, 256, 1 << 18);
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else test_expect(eight == 8, name, "clusters of %d", eight);
    /* 2^19: 32 pieces of 64 KB, more than a cluster */
    snprintf(name, sizeof name, "%s: by default, rows of 2^19 floats at 128 rows in no cluster", kn);
    const int big = train_cluster_size(k, 128, 1 << 19);
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else test_expect(big == 0, name, "clusters of %d", big);
    train_set_long_rows(TRAIN_LONG_CLUSTER);
    snprintf(name, sizeof name, "%s: TRAIN_LONG_CLUSTER puts a row of 70001 floats in a cluster of 5, of 17 x 32768 in none", kn);
    const int five = train_cluster_size(k, 2, 70001), none = train_cluster_size(k, 2, 17 * 32768);
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else test_expect(five == 5 && none == 0, name, "clusters of %d and %d", five, none);
    train_set_long_rows(TRAIN_LONG_GRID);
    snprintf(name, sizeof name, "%s: TRAIN_LONG_GRID never takes clusters, and still goes on chip", kn);
    const int grid = train_cluster_size(k, 4096, 1 << 15);
    test_expect(grid == 0 && train_reads_once(k, 4096, 1 << 15, DTYPE_F32), name, "clusters of %d", grid);
    train_set_long_rows(TRAIN_LONG_AUTO);
}

#endif
