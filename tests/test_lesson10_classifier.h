/* The fused classifier over 16-bit logits, checked by tests/test_lesson10.cu
 * (one program): float16 and bfloat16 logits on the row engine's path 1,
 * path 2 with the row held as loaded, and path 3b (bulk-loaded clusters,
 * sm_90), each against the float64 reference on every element. */
#ifndef TESTS_TEST_LESSON10_CLASSIFIER_H
#define TESTS_TEST_LESSON10_CLASSIFIER_H

#include "test_lesson10_checks.h"

/* Whether the classifier holds 16-bit rows x cols as loaded (path 2 in an
 * aligned view of 16-bit logits: path1_2_rows16.cuh, fx_rows_held16). */
static int held16(long long rows, long long cols, dtype t)
{
    const fastest_plan p = train_plan(TRAIN_K_CLASSIFIER, rows, cols, t);
    return t != DTYPE_F32 && p.path == FASTEST_BLOCK && p.vec4 && !p.peel;
}

/* The classifier's bulk-loaded CTAs a row at rows x cols (path 3b: a
 * cluster of up to 8, more meeting through global memory), 0 where it
 * takes another path. */
static int bulk_ctas(long long rows, long long cols, dtype t)
{
    const fastest_plan p = train_plan(TRAIN_K_CLASSIFIER, rows, cols, t);
    return p.path != FASTEST_BULK ? 0 : p.splits ? (int)p.splits : p.cluster;
}

/* ---- 16-bit logits -------------------------------------------------------- */

static void test_16bit(void)
{
    static const long long S[][2] = {{37, 7}, {9, 64}, {5, 1000}, {3, 4096}, {2, 5000}, {2, 20000}};
    char name[256];
    for (int tt = 0; tt < 2; tt++) {
        const dtype st = tt ? DTYPE_BF16 : DTYPE_F16;
        for (int s = 0; s < 6; s++) {
            const long long rows = S[s][0], cols = S[s][1];
            snprintf(name, sizeof name,
                     "classifier_fused_typed (%s logits): the gradient, rounded once, in place, and the loss at %lld x %lld",
                     dtype_name(st), rows, cols);
            check_classifier_drawn(name, rows, cols, 1500 + s, 4, (train_reduction)(s % 3), st);
        }
        /* special rows in 16 bits: -inf, NaN, a value past float16's range (inf there) */
        float x[3 * 64];
        int t[3] = {0, 5, 3};
        inputs_fill(x, 3, 64, INPUT_NORMAL, 1700);
        for (int j = 0; j < 64; j += 4) x[j] = -INFINITY;
        x[64 + 9] = NAN;
        x[128 + 1] = 1e5f; /* float16: +inf, the row NaN; bfloat16: a large finite max */
        snprintf(name, sizeof name, "classifier_fused_typed (%s logits) on -inf (target -inf: loss +inf), NaN and 1e5",
                 dtype_name(st));
        check_classifier(name, x, t, 3, 64, TRAIN_IGNORE_INDEX, TRAIN_SUM, st);
    }
}

/* 16-bit rows of up to 1024 elements take the engine's path 1: every
 * class up to 256, rows that fill it and rows that fill part of it, in
 * 16-byte vectors and not, many rows per block. */
static void test_short16(void)
{
    static const long long S[][2] = {{300, 32}, {300, 31}, {200, 64}, {200, 57}, {150, 128},
                                     {150, 100}, {100, 256}, {100, 250}, {70, 129}};
    char name[300];
    for (int tt = 0; tt < 2; tt++) {
        const dtype st = tt ? DTYPE_BF16 : DTYPE_F16;
        for (int s = 0; s < 9; s++) {
            const long long rows = S[s][0], cols = S[s][1];
            const char *path = train_path_name(TRAIN_K_CLASSIFIER, rows, cols, st);
            snprintf(name, sizeof name, "classifier_fused_typed (%s logits) at %lld x %lld, path 1 (%s)",
                     dtype_name(st), rows, cols, path);
            if (train_plan(TRAIN_K_CLASSIFIER, rows, cols, st).path != FASTEST_WARP)
                test_fail(name, "the path is not the engine's path 1");
            else
                check_classifier_drawn(name, rows, cols, 1800 + s, 5, (train_reduction)(s % 3), st);
        }
    }
}

/* ---- 16-bit rows held as loaded ------------------------------------------ */

/* The classifier held as loaded (`where`) on rows x n normal logits (seed)
 * of type t: targets first, last, between, out of range (N, -1), ignored
 * and on the last row's last column, the mean and the sum; then
 * ignore_index = 0 inside the row. x and tg (rows) are the caller's; tg
 * is left at the second set. */
static void check_target_rules(const char *where, float *x, int *tg, long long rows, long long n, dtype t,
                               unsigned long long seed)
{
    char name[300];
    inputs_fill(x, rows, n, INPUT_NORMAL, seed);
    make_targets(tg, rows, n, seed + 50, 5, TRAIN_IGNORE_INDEX);
    tg[0] = 0, tg[1] = (int)(n - 1), tg[2] = (int)(n / 2 + 3), tg[3] = (int)n, tg[4] = -1;
    tg[5] = TRAIN_IGNORE_INDEX, tg[rows - 1] = (int)(n - 1);
    for (int red = 0; red < 3; red++) {
        snprintf(name, sizeof name,
                 "classifier_fused_typed %s (%s, %s) at %lld x %lld: targets first, last, between, ignored and out "
                 "of range",
                 where, dtype_name(t), RED_NAME[red], rows, n);
        check_classifier(name, x, tg, rows, n, TRAIN_IGNORE_INDEX, (train_reduction)red, t);
    }
    for (long long i = 0; i < rows; i++) tg[i] = (int)(i % 3 ? i % n : 0);
    snprintf(name, sizeof name, "classifier_fused_typed %s (%s) at %lld x %lld: ignore_index = 0, inside the row",
             where, dtype_name(t), rows, n);
    check_classifier(name, x, tg, rows, n, 0, TRAIN_MEAN, t);
}

/* float16 and bfloat16 rows of 1025 to 32768 elements in an aligned view
 * take path 2's kernel that holds them as loaded (past 16384 only with
 * SMs / 4 rows): every class, rows that fill part of their class's last
 * word column, targets first, last, between, ignored and out of range,
 * ignore_index inside the row, the mean and the sum, special rows, and
 * more blocks than finish the loss themselves. */
static void test_rows_held(void)
{
    char name[300];
    const long long sms = device_sms();
    /* the plan: held on path 2, never for float32 or a misaligned row */
    const int h[7] = {held16(2, 1032, DTYPE_F16),  held16(sms, 8200, DTYPE_BF16), held16(sms, 32768, DTYPE_F16),
                      held16(2, 8192, DTYPE_F16),  held16(sms, 1024, DTYPE_F16),  held16(sms, 32776, DTYPE_F16),
                      held16(sms, 4096, DTYPE_F32)};
    snprintf(name, sizeof name,
             "16-bit rows are held as loaded at 2 x 1032, %lld x 8200, %lld x 32768 and 2 x 8192; not at 1024, 32776, "
             "or in float32",
             sms, sms);
    test_expect(h[0] && h[1] && h[2] && h[3] && !h[4] && !h[5] && !h[6], name, "%d %d %d %d / %d %d %d", h[0], h[1],
                h[2], h[3], h[4], h[5], h[6]);
    snprintf(name, sizeof name, "float16 rows of 1036 (no aligned view) are not held as loaded");
    test_expect(!held16(sms, 1036, DTYPE_F16), name, "held");

    /* one length per class, and rows that end inside a thread's words */
    static const long long LENS[] = {1032, 2048, 3000, 4096, 8192, 12296, 32768};
    for (int st = 0; st < 2; st++) {
        const dtype t = st ? DTYPE_BF16 : DTYPE_F16;
        for (int l = 0; l < 7; l++) {
            const long long n = LENS[l], rows = n > 8192 ? sms : 7;
            float *x = (float *)malloc(rows * n * sizeof(float));
            int *tg = (int *)malloc(rows * sizeof(int));
            snprintf(name, sizeof name, "%s rows at %lld x %lld are held as loaded", dtype_name(t), rows, n);
            test_expect(held16(rows, n, t), name, "not held");
            check_target_rules("held as loaded", x, tg, rows, n, t, 2400 + l);
            free(x);
            free(tg);
        }
        /* special rows, each with the target that exercises it */
        const long long n = 2056;
        snprintf(name, sizeof name, "%s rows at 3 x %lld are held as loaded", dtype_name(t), n);
        test_expect(held16(3, n, t), name, "not held");
        for (int r = 0; r < NSPECIAL; r++) check_classifier_special("held as loaded", n, r, 2500 + r, t);
    }
    /* 4100 rows: 4100 blocks, past the 4096 that finish the loss
     * themselves (their parts go to the loss kernel after) */
    const long long rows = 4100, n = 1040;
    test_expect(held16(rows, n, DTYPE_F16), "f16 rows at 4100 x 1040 are held as loaded", "not held");
    for (int red = 0; red < 3; red++) {
        snprintf(name, sizeof name,
                 "classifier_fused_typed held as loaded (f16, %s) at %lld x %lld: the loss over 4100 blocks' parts",
                 RED_NAME[red], rows, n);
        check_classifier_drawn(name, rows, n, 2600, 4, (train_reduction)red, DTYPE_F16);
    }
}

/* Whether path 1 holds 16-bit rows x cols as loaded (path1_2_rows.cuh,
 * fx_rows_held16_warp): rows of 513 to 1024 in an aligned view, 32
 * elements a lane, more rows than the loss slots' kernels take. */
static int held16_warp(long long rows, long long cols, dtype t)
{
    const fastest_plan p = train_plan(TRAIN_K_CLASSIFIER, rows, cols, t);
    return t != DTYPE_F32 && p.path == FASTEST_WARP && p.vec4 && !p.peel && cols > 512 && rows > 2048;
}

/* float16 and bfloat16 rows of 513 to 1024 elements in an aligned view,
 * more than the loss slots' 2048 (CLS_SLOT_ROWS), take path 1's kernel that holds them
 * as loaded, 32 elements a lane: rows that fill the class and part of it,
 * a last block with dead lanes, targets first, last, between, ignored and
 * out of range, ignore_index inside the row, special rows, the mean and
 * the sum, and more blocks than finish the loss themselves. */
static void test_rows_held_warp(void)
{
    char name[300];
    static const long long LENS[] = {1024, 1000, 520};
    for (int st = 0; st < 2; st++) {
        const dtype t = st ? DTYPE_BF16 : DTYPE_F16;
        for (int l = 0; l < 3; l++) {
            const long long n = LENS[l], rows = 2049 + l;
            float *x = (float *)malloc(rows * n * sizeof(float));
            int *tg = (int *)malloc(rows * sizeof(int));
            snprintf(name, sizeof name, "%s rows at %lld x %lld are held as loaded on path 1", dtype_name(t), rows, n);
            test_expect(held16_warp(rows, n, t), name, "not held");
            check_target_rules("held as loaded on path 1", x, tg, rows, n, t, 2800 + l);
            if (l == 0) { /* special rows among normal ones, in different lanes of their blocks */
                for (int r = 0; r < NSPECIAL; r++) tg[9 * r + r % 4] = special_row(x + (9 * r + r % 4) * n, n, r);
                snprintf(name, sizeof name,
                         "special values held as loaded on path 1 (%s) at %lld x %lld: the classifier's gradient "
                         "and loss are the reference's",
                         dtype_name(t), rows, n);
                check_classifier(name, x, tg, rows, n, TRAIN_IGNORE_INDEX, TRAIN_SUM, t);
            }
            free(x);
            free(tg);
        }
    }
    /* 16390 rows: 4098 blocks of 4 rows, past the 4096 that finish the
     * loss themselves (their parts go to the loss kernel after) */
    const long long rows = 16390, n = 520;
    test_expect(held16_warp(rows, n, DTYPE_BF16), "bf16 rows at 16390 x 520 are held as loaded on path 1", "not held");
    check_classifier_drawn("classifier_fused_typed held as loaded on path 1 (bf16, sum) at 16390 x 520: the loss over "
                           "4098 blocks' parts",
                           rows, n, 2900, 4, TRAIN_SUM, DTYPE_BF16);
}

/* ---- the classifier's bulk-loaded clusters (path 3b) --------------------- */

/* TRAIN_LONG_BULK puts every aligned row of 2 to 8 pieces of 64 KB in
 * clusters whose pieces are loaded by bulk copies (sm_90), 16-bit rows of
 * more pieces in blocks meeting through global memory: in every type, the
 * gradient and the loss on every element, with the target in the first
 * piece, the last and between; ignored rows, targets out of range and
 * ignore_index inside the row; special rows; the mean and the sum,
 * finished in the kernel. By default, only where rows x pieces give half
 * the SMs a block, and float rows in clusters only. */
static void test_classifier_bulk(void)
{
    int dev, major = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    char name[300];
    static const long long LENS[2][4] = {{32776, 100000, 131072, 0}, {32776, 100000, 262144, 262152}};
    static const int PIECES[2][4] = {{3, 7, 8, 0}, {2, 4, 8, 9}}; /* 9: past a cluster, through global memory */
    train_set_long_rows(TRAIN_LONG_BULK);
    for (int st = 0; st < 3; st++) {
        const dtype t = st == 0 ? DTYPE_F32 : st == 1 ? DTYPE_F16 : DTYPE_BF16;
        for (int l = 0; l < 4 && LENS[st > 0][l]; l++) {
            const long long n = LENS[st > 0][l], rows = 6;
            const int want = PIECES[st > 0][l]; /* the fewest that hold the row */
            snprintf(name, sizeof name,
                     "TRAIN_LONG_BULK takes %d bulk-loaded blocks per row of %lld %s logits (in a cluster, up to "
                     "twice as many where their clusters hold more rows at once: fx_bulk_pick)",
                     want, n, dtype_name(t));
            if (major < 9) {
                test_skip(name, "no clusters before sm_90");
                continue;
            }
            const int c = bulk_ctas(rows, n, t);
            test_expect(want > FX_BULK_MAX_C ? c == want : c >= want && c <= 2 * want && c <= FX_BULK_MAX_C, name,
                        "%d blocks", c);
            float *x = (float *)malloc(rows * n * sizeof(float));
            inputs_fill(x, rows, n, INPUT_NORMAL, 2000 + l);
            /* the target first, last, in the middle; ignored; out of range (N, -1) */
            const int tg[6] = {0, (int)(n - 1), (int)(n / 2 + 3), TRAIN_IGNORE_INDEX, (int)n, -1};
            for (int red = 0; red < 3; red++) {
                snprintf(name, sizeof name,
                         "classifier_fused_typed in bulk-loaded blocks (%s, %s) at 6 x %lld: targets first, last, "
                         "between, ignored and out of range",
                         dtype_name(t), RED_NAME[red], n);
                check_classifier(name, x, tg, rows, n, TRAIN_IGNORE_INDEX, (train_reduction)red, t);
            }
            const int t0[6] = {0, 1, 0, (int)(n - 2), 0, 5};
            snprintf(name, sizeof name,
                     "classifier_fused_typed in bulk-loaded blocks (%s) at 6 x %lld: ignore_index = 0, "
                     "inside the row",
                     dtype_name(t), n);
            check_classifier(name, x, t0, rows, n, 0, TRAIN_MEAN, t);
            free(x);
        }
    }
    if (major >= 9) /* 2 pieces of float16 values, 3 of floats */
        for (int r = 0; r < NSPECIAL; r++) {
            check_classifier_special("in bulk-loaded clusters", 32776, r, 2100 + r, DTYPE_F16);
            check_classifier_special("in bulk-loaded clusters", 32776, r, 2200 + r, DTYPE_F32);
        }
    train_set_long_rows(TRAIN_LONG_AUTO);
    /* the default: where half the SMs get a block; float rows in clusters only */
    const int sms = device_sms();
    const int many = bulk_ctas(sms, 65536, DTYPE_F16), few = bulk_ctas(sms / 8, 65536, DTYPE_F16);
    snprintf(name, sizeof name,
             "by default, float16 rows of 65536 take bulk-loaded clusters of 2 at %d rows, none at %d", sms, sms / 8);
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else test_expect(many == 2 && few == 0, name, "clusters of %d and %d", many, few);
    const int f = bulk_ctas(sms, 65536, DTYPE_F32), h8 = bulk_ctas(4 * sms, 1 << 18, DTYPE_F16);
    const int h16 = bulk_ctas(sms, 1 << 19, DTYPE_F16), fl = bulk_ctas(sms, 1 << 19, DTYPE_F32);
    snprintf(name, sizeof name,
             "by default, float16 rows of 2^18 take bulk-loaded clusters of 8, rows of 2^19 16 bulk-loaded blocks "
             "meeting through global memory; float rows of 65536 clusters of 4, of 2^19 none");
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else
        test_expect(f == 4 && fl == 0 && h8 == 8 && h16 == 16, name, "float32 %d and %d, float16 %d and %d", f, fl,
                    h8, h16);
}

#endif
