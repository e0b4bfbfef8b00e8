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

/* Log-softmax, the float classifier and the loss run on the row engine:
 * at every shape each takes the softmax's path (fx_plan_typed, the same
 * dispatcher), except where that is path 2s, or 3b for log-softmax (its
 * output is not exp(x - m) scaled): then path 3, 3g or 4; and the
 * classifier takes path 3b where clusters are and the softmax's path 2
 * holds one block an SM (rows of more than 18432 floats: 64 x 20000, 4096
 * x 32768; fx_op_kernels.bulk_before_block). The long-row
 * modes take the engine path they name where the shape fits it:
 * TRAIN_LONG_SPLIT path 4, TRAIN_LONG_GRID path 3g, TRAIN_LONG_CLUSTER
 * path 3 (sm_90 and up).
 * (These rows all start on 16 bytes; test_ops_peeled_plans has the others.) */
static void test_engine_paths_of(const char *kn, train_kernel k, int has_bulk)
{
    static const long long S[][2] = {{4096, 512},   {64, 20000},    {4096, 1 << 15}, {1, 1 << 15},
                                     {256, 1 << 18}, {128, 1 << 19}, {2, 70001},      {64, 1 << 20}};
    const float *a = (const float *)(uintptr_t)256; /* an aligned address, never dereferenced */
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++) {
        const long long rows = S[i][0], cols = S[i][1];
        const fastest_path soft = fx_plan_typed(FASTEST_AUTO, DTYPE_F32, a, cols, a, cols, rows, cols).path;
        const fastest_path lsm = train_plan(k, rows, cols, DTYPE_F32).path;
        const int own = soft == FASTEST_SHARED || (soft == FASTEST_BULK && !has_bulk);
        const int bulk = has_bulk && soft == FASTEST_BLOCK && cols > 18432 && softmax_fastest_has_clusters();
        char name[200];
        snprintf(name, sizeof name, "%s at %lld x %lld takes the softmax's path (%s)%s", kn, rows, cols,
                 fastest_path_name(soft),
                 own    ? " or, that being the softmax's own, path 3, 3g or 4"
                 : bulk ? ", path 3b first where path 2 holds one block an SM"
                        : "");
        test_expect(own    ? (lsm == FASTEST_CLUSTER || lsm == FASTEST_GRID || lsm == FASTEST_SPLIT)
                    : bulk ? lsm == FASTEST_BULK
                           : lsm == soft,
                    name, "path %s", fastest_path_name(lsm));
        if (cols <= TRAIN_REG_MAX_COLS) continue;
        train_set_long_rows(TRAIN_LONG_SPLIT);
        snprintf(name, sizeof name, "%s at %lld x %lld: TRAIN_LONG_SPLIT takes path 4", kn, rows, cols);
        test_expect(train_plan(k, rows, cols, DTYPE_F32).path == FASTEST_SPLIT, name, "path %s",
                    fastest_path_name(train_plan(k, rows, cols, DTYPE_F32).path));
        train_set_long_rows(TRAIN_LONG_GRID);
        snprintf(name, sizeof name, "%s at %lld x %lld: TRAIN_LONG_GRID takes path 3g", kn, rows, cols);
        test_expect(train_plan(k, rows, cols, DTYPE_F32).path == FASTEST_GRID, name, "path %s",
                    fastest_path_name(train_plan(k, rows, cols, DTYPE_F32).path));
        train_set_long_rows(TRAIN_LONG_CLUSTER);
        snprintf(name, sizeof name, "%s at %lld x %lld: TRAIN_LONG_CLUSTER takes path 3", kn, rows, cols);
        if (!softmax_fastest_has_clusters()) test_skip(name, "no clusters on this GPU or build");
        else
            test_expect(train_plan(k, rows, cols, DTYPE_F32).path == FASTEST_CLUSTER, name, "path %s",
                        fastest_path_name(train_plan(k, rows, cols, DTYPE_F32).path));
        train_set_long_rows(TRAIN_LONG_AUTO);
    }
}

static void test_ops_engine_paths(void)
{
    test_engine_paths_of("log_softmax_forward", TRAIN_K_LOG_SOFTMAX, 0);
    test_engine_paths_of("classifier_fused", TRAIN_K_CLASSIFIER, 1);
    /* the loss: the softmax's path in registers, path 4 past them */
    static const train_long_rows modes[] = {TRAIN_LONG_AUTO, TRAIN_LONG_GRID, TRAIN_LONG_CLUSTER, TRAIN_LONG_SPLIT};
    static const long long S[][2] = {{4096, 512}, {64, 16384}, {6, 16385}, {4096, 1 << 15}, {64, 1 << 20}};
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++)
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            const long long rows = S[i][0], cols = S[i][1];
            train_set_long_rows(modes[m]);
            const fastest_path got = train_plan(TRAIN_K_LOSS, rows, cols, DTYPE_F32).path;
            const fastest_path want = cols <= 1024 ? FASTEST_WARP : cols <= TRAIN_REG_MAX_COLS ? FASTEST_BLOCK
                                                                                               : FASTEST_SPLIT;
            char name[200];
            snprintf(name, sizeof name, "cross_entropy_forward at %lld x %lld takes %s in long-row mode %d", rows,
                     cols, fastest_path_name(want), (int)modes[m]);
            test_expect(got == want, name, "path %s", fastest_path_name(got));
        }
    train_set_long_rows(TRAIN_LONG_AUTO);
}

/* The float classifier takes path 3's held class as the softmax does:
 * where path 3 is forced on rows of whole vectors (6 x 40008: 4 CTAs of
 * 10002 floats, 40 a thread; 151936: 8 wide CTAs, 76 a thread; 196608:
 * 16 CTAs, 48 a thread; 200064 and 2^18: 16 long ones, 64 a thread), and
 * by the dispatcher where DRAM outpaces path 3b (512 x 151936, 256 x
 * 2^18); contiguous rows of 40001 peeled, by their body; not 16-bit
 * logits, not log-softmax (which has no path 3b). */
static void test_classifier_held_plans(void)
{
    static const struct {
        long long rows, cols;
        int ctas, per_thread;
    } H[] = {{6, 40008, 4, 40}, {6, 151936, 8, 76}, {6, 196608, 16, 48}, {6, 200064, 16, 64},
             {6, 1 << 18, 16, 64}};
    const char *name = "classifier_fused_typed (float32) takes path 3's held class where path 3 is forced on whole "
                       "vectors (6 x 40008, 151936, 196608, 200064, 2^18) and, where DRAM outpaces path 3b, at 512 x "
                       "151936 and 256 x 2^18, and peeled at 40001; not on 16-bit logits or for log_softmax_forward";
    if (!softmax_fastest_has_clusters()) {
        test_skip(name, "no clusters on this GPU or build");
        return;
    }
    int ok = 1;
    train_set_long_rows(TRAIN_LONG_CLUSTER);
    for (size_t i = 0; i < sizeof H / sizeof H[0]; i++) {
        const fastest_plan p = train_plan(TRAIN_K_CLASSIFIER, H[i].rows, H[i].cols, DTYPE_F32);
        ok &= p.path == FASTEST_CLUSTER && p.held && p.cluster == H[i].ctas &&
              p.floats_per_thread == H[i].per_thread && p.segment * H[i].ctas >= H[i].cols;
    }
    const fastest_plan o = train_plan(TRAIN_K_CLASSIFIER, 6, 40001, DTYPE_F32);
    const int odd = o.held && o.peel && o.cluster == 4;
    const int half = train_plan(TRAIN_K_CLASSIFIER, 6, 40008, DTYPE_F16).held;
    const int lsm = train_plan(TRAIN_K_LOG_SOFTMAX, 6, 40008, DTYPE_F32).held;
    train_set_long_rows(TRAIN_LONG_AUTO);
    const fastest_plan q = train_plan(TRAIN_K_CLASSIFIER, 512, 151936, DTYPE_F32);
    const fastest_plan l = train_plan(TRAIN_K_CLASSIFIER, 256, 1 << 18, DTYPE_F32);
    const int dram = softmax_fastest_held_dram();
    const int auto_ok = dram ? q.held && q.cluster == 8 && l.held && l.cluster == 16 : !q.held && !l.held;
    test_expect(ok && auto_ok && odd && !half && !lsm, name,
                "forced: %s; DRAM fast %d: 512 x 151936 held %d on %d, 256 x 2^18 held %d on %d; held: 40001 %d, "
                "f16 %d, log-softmax %d",
                ok ? "held" : "NOT held", dram, q.held, q.cluster, l.held, l.cluster, odd, half, lsm);
}

/* The loss and the classifier peel rows as the softmax does (lesson 5's
 * head, body of 16-byte vectors and tail): contiguous rows of odd N, whose
 * rows after the first start off 16 bytes, at every length of the paths
 * and in every long-row mode, in float32 and both 16-bit types (the loss:
 * float32, its long rows split). The plan says peeled wherever the
 * softmax's does, and everywhere but 16-bit rows of path 1 up to 64
 * (whose lanes are too few for 14 extras). */
static void test_ops_peeled_plans(void)
{
    static const long long S[][2] = {{64, 33}, {64, 129}, {64, 1001}, {3000, 301}, {64, 1025},
                                     {6, 4097}, {6, 20001}, {6, 50257}, {6, 65537}};
    static const train_long_rows modes[] = {TRAIN_LONG_AUTO, TRAIN_LONG_SPLIT, TRAIN_LONG_GRID, TRAIN_LONG_CLUSTER,
                                            TRAIN_LONG_BULK};
    const float *a = (const float *)(uintptr_t)256; /* an aligned address, never dereferenced */
    for (size_t i = 0; i < sizeof S / sizeof S[0]; i++)
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            const long long rows = S[i][0], cols = S[i][1];
            if (m && cols <= TRAIN_REG_MAX_COLS) continue; /* the modes are for long rows */
            train_set_long_rows(modes[m]);
            for (int k = 0; k < 4; k++) {
                const dtype t = k == 1 ? DTYPE_F16 : k == 2 ? DTYPE_BF16 : DTYPE_F32;
                const train_kernel kn = k == 3 ? TRAIN_K_LOSS : TRAIN_K_CLASSIFIER;
                const fastest_plan p = train_plan(kn, rows, cols, t);
                const int soft = fx_plan_typed(FASTEST_AUTO, t, a, cols, a, cols, rows, cols).peel;
                const int want = !(t != DTYPE_F32 && cols <= 64);
                char name[300];
                snprintf(name, sizeof name, "%s (%s) at %lld x %lld, long-row mode %d (%s): peeled, as the softmax",
                         kn == TRAIN_K_LOSS ? "cross_entropy_forward" : "classifier_fused_typed", dtype_name(t), rows,
                         cols, (int)modes[m], train_path_name(kn, rows, cols, t));
                test_expect(p.peel == want && soft == want, name, "peeled %d, the softmax %d, want %d", p.peel, soft,
                            want);
            }
        }
    train_set_long_rows(TRAIN_LONG_AUTO);
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
        const fastest_path got = train_plan(TRAIN_K_BACKWARD, rows, cols, DTYPE_F32).path;
        char name[200];
        snprintf(name, sizeof name, "softmax_backward at %lld x %lld takes the row engine's %s", rows, cols,
                 fastest_path_name(want));
        test_expect(got == want, name, "path %s", fastest_path_name(got));
        if (cols <= TRAIN_REG_MAX_COLS) continue;
        train_set_long_rows(TRAIN_LONG_SPLIT);
        const fastest_path split = train_plan(TRAIN_K_BACKWARD, rows, cols, DTYPE_F32).path;
        train_set_long_rows(TRAIN_LONG_GRID);
        const fastest_path grid = train_plan(TRAIN_K_BACKWARD, rows, cols, DTYPE_F32).path;
        train_set_long_rows(TRAIN_LONG_CLUSTER);
        const fastest_path cl = train_plan(TRAIN_K_BACKWARD, rows, cols, DTYPE_F32).path;
        train_set_long_rows(TRAIN_LONG_AUTO);
        snprintf(name, sizeof name,
                 "softmax_backward at %lld x %lld: TRAIN_LONG_SPLIT takes path 4, TRAIN_LONG_GRID path 3g, "
                 "TRAIN_LONG_CLUSTER no cluster",
                 rows, cols);
        test_expect(split == FASTEST_SPLIT && grid == FASTEST_GRID && cl != FASTEST_CLUSTER, name, "%s, %s, %s",
                    fastest_path_name(split), fastest_path_name(grid), fastest_path_name(cl));
    }
}

#endif
