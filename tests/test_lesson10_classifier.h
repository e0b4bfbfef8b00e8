/* The fused classifier's own paths, checked by tests/test_lesson10.cu (one
 * program): float16 and bfloat16 logits, the short 16-bit classes, 16-bit
 * rows held as loaded, and the bulk-loaded clusters (sm_90), each against
 * the float64 reference on every element. */
#ifndef TESTS_TEST_LESSON10_CLASSIFIER_H
#define TESTS_TEST_LESSON10_CLASSIFIER_H

#include "test_lesson10_checks.h"

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
            check_classifier_drawn(name, rows, cols, 1500 + s, 4, s % 2 ? TRAIN_SUM : TRAIN_MEAN, st);
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

/* 16-bit rows of up to 256 elements take classes of their own, with 16
 * or 32 elements a thread (CLS_SHORT16_CLASSES): every class, rows that
 * fill it and rows that fill part of it, in 16-byte vectors and not, many
 * rows per block; the program's path name says which class ran. */
static void test_short16(void)
{
    static const long long S[][2] = {{300, 32}, {300, 31}, {200, 64}, {200, 57}, {150, 128},
                                     {150, 100}, {100, 256}, {100, 250}, {70, 129}};
    char name[300];
    for (int tt = 0; tt < 2; tt++) {
        const dtype st = tt ? DTYPE_BF16 : DTYPE_F16;
        for (int s = 0; s < 9; s++) {
            const long long rows = S[s][0], cols = S[s][1];
            const char *path = train_path_name_typed(TRAIN_K_CLASSIFIER, rows, cols, st);
            snprintf(name, sizeof name, "classifier_fused_typed (%s logits) at %lld x %lld, a short class (%s)",
                     dtype_name(st), rows, cols, path);
            if (!strstr(path, "16 elements each") && !strstr(path, "32 elements each"))
                test_fail(name, "the path is not one of the short 16-bit classes");
            else
                check_classifier_drawn(name, rows, cols, 1800 + s, 5, s % 2 ? TRAIN_SUM : TRAIN_MEAN, st);
        }
    }
}

/* ---- 16-bit rows held as loaded ------------------------------------------ */

/* float16 and bfloat16 rows of 1025 to 32768 elements in an aligned view
 * take classifier_rows16_kernel (past 8192 only with a row per SM): every
 * class, rows that fill part of their class's last word column, targets
 * first, last, between, ignored and out of range, ignore_index inside the
 * row, the mean and the sum, special rows, and more blocks than finish
 * the loss themselves. */
static void test_rows_held(void)
{
    char name[300];
    const long long sms = device_sms();
    /* the plan: held where it pays, never for float32 or a misaligned row */
    const int h[8] = {classifier_rows_held(2, 1032, DTYPE_F16),      classifier_rows_held(sms, 8200, DTYPE_BF16),
                      classifier_rows_held(sms, 32768, DTYPE_F16),   classifier_rows_held(2, 8192, DTYPE_F16),
                      classifier_rows_held(sms, 1024, DTYPE_F16),    classifier_rows_held(sms, 32776, DTYPE_F16),
                      classifier_rows_held(sms - 1, 8200, DTYPE_F16), classifier_rows_held(sms, 4096, DTYPE_F32)};
    snprintf(name, sizeof name,
             "16-bit rows are held as loaded at 2 x 1032, %lld x 8200, %lld x 32768 and 2 x 8192; not at 1024, 32776, "
             "%lld rows of 8200, or in float32",
             sms, sms, sms - 1);
    test_expect(h[0] && h[1] && h[2] && h[3] && !h[4] && !h[5] && !h[6] && !h[7], name,
                "%d %d %d %d / %d %d %d %d", h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]);
    snprintf(name, sizeof name, "float16 rows of 1036 (no aligned view) are not held as loaded");
    test_expect(!classifier_rows_held(sms, 1036, DTYPE_F16), name, "held");
    const int bulk_held = classifier_bulk_size(sms, 8200, DTYPE_F16), bulk_past = classifier_bulk_size(sms, 32776, DTYPE_F16);
    snprintf(name, sizeof name, "%lld float16 rows of 8200 take no bulk-loaded clusters (held), of 32776 clusters of 2",
             sms);
    int dev, major = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else test_expect(bulk_held == 0 && bulk_past == 2, name, "%d and %d", bulk_held, bulk_past);

    /* one length per class, and rows that end inside a thread's words */
    static const long long LENS[] = {1032, 2048, 3000, 4096, 8192, 12296, 32768};
    for (int st = 0; st < 2; st++) {
        const dtype t = st ? DTYPE_BF16 : DTYPE_F16;
        for (int l = 0; l < 7; l++) {
            const long long n = LENS[l], rows = n > 8192 ? sms : 7;
            float *x = (float *)malloc(rows * n * sizeof(float));
            int *tg = (int *)malloc(rows * sizeof(int));
            inputs_fill(x, rows, n, INPUT_NORMAL, 2400 + l);
            make_targets(tg, rows, n, 2450 + l, 5, TRAIN_IGNORE_INDEX);
            /* the target first, last, between, out of range (N, -1), ignored */
            tg[0] = 0, tg[1] = (int)(n - 1), tg[2] = (int)(n / 2 + 3), tg[3] = (int)n, tg[4] = -1;
            tg[5] = TRAIN_IGNORE_INDEX;
            snprintf(name, sizeof name, "%s rows at %lld x %lld are held as loaded", dtype_name(t), rows, n);
            test_expect(classifier_rows_held(rows, n, t), name, "not held");
            for (int red = 0; red < 2; red++) {
                snprintf(name, sizeof name,
                         "classifier_fused_typed held as loaded (%s, %s) at %lld x %lld: targets first, last, between, "
                         "ignored and out of range",
                         dtype_name(t), red ? "sum" : "mean", rows, n);
                check_classifier(name, x, tg, rows, n, TRAIN_IGNORE_INDEX, (train_reduction)red, t);
            }
            for (long long i = 0; i < rows; i++) tg[i] = (int)(i % 3 ? i % n : 0);
            snprintf(name, sizeof name,
                     "classifier_fused_typed held as loaded (%s) at %lld x %lld: ignore_index = 0, inside the row",
                     dtype_name(t), rows, n);
            check_classifier(name, x, tg, rows, n, 0, TRAIN_MEAN, t);
            free(x);
            free(tg);
        }
        /* special rows, each with the target that exercises it */
        const long long n = 2056;
        snprintf(name, sizeof name, "%s rows at 3 x %lld are held as loaded", dtype_name(t), n);
        test_expect(classifier_rows_held(3, n, t), name, "not held");
        for (int r = 0; r < NSPECIAL; r++) check_classifier_special("held as loaded", n, r, 2500 + r, t);
    }
    /* 4100 rows: 4100 blocks, past the 4096 that finish the loss
     * themselves (their parts go to the loss kernel after) */
    const long long rows = 4100, n = 1040;
    test_expect(classifier_rows_held(rows, n, DTYPE_F16), "f16 rows at 4100 x 1040 are held as loaded", "not held");
    for (int red = 0; red < 2; red++) {
        snprintf(name, sizeof name,
                 "classifier_fused_typed held as loaded (f16, %s) at %lld x %lld: the loss over 4100 blocks' parts",
                 red ? "sum" : "mean", rows, n);
        check_classifier_drawn(name, rows, n, 2600, 4, (train_reduction)red, DTYPE_F16);
    }
}

/* ---- the classifier's bulk-loaded clusters ------------------------------- */

/* TRAIN_LONG_BULK puts every aligned 16-bit row of 1 to 8 pieces of 64 KB
 * past 8192 columns in clusters whose pieces are loaded by bulk copies
 * (sm_90): in both 16-bit types, the gradient and the loss on every element, with
 * the target in the first piece, the last and between; ignored rows,
 * targets out of range and ignore_index inside the row; special rows;
 * the mean and the sum, finished in the kernel. By default, only where
 * rows x pieces give every SM a block, and never a misaligned view. */
static void test_classifier_bulk(void)
{
    int dev, major = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    char name[300];
    /* pieces of 64 KB: 16-bit 8200 (1), 32768 (1), 32776 (2), 100000 (4), 262144 (8), 300000 (10: past
     * a cluster, meeting in the workspace); float logits run on the row engine, which takes none */
    static const long long LENS[2][7] = {{0}, {8200, 32768, 32776, 100000, 262144, 300000, 0}};
    static const int PIECES[2][7] = {{0}, {1, 1, 2, 4, 8, 10, 0}};
    train_set_long_rows(TRAIN_LONG_BULK);
    for (int st = 1; st < 3; st++) {
        const dtype t = st == 1 ? DTYPE_F16 : DTYPE_BF16;
        for (int l = 0; l < 7 && LENS[st > 0][l]; l++) {
            const long long n = LENS[st > 0][l], rows = 6;
            const int c = classifier_bulk_size(rows, n, t);
            snprintf(name, sizeof name, "TRAIN_LONG_BULK takes %d bulk-loaded block%s per row of %lld %s logits", PIECES[st > 0][l],
                     PIECES[st > 0][l] > 1 ? "s" : "", n, dtype_name(t));
            if (major < 9) {
                test_skip(name, "no clusters before sm_90");
                continue;
            }
            test_expect(c == PIECES[st > 0][l], name, "%d blocks", c);
            float *x = (float *)malloc(rows * n * sizeof(float));
            inputs_fill(x, rows, n, INPUT_NORMAL, 2000 + l);
            /* the target first, last, in the middle; ignored; out of range (N, -1) */
            const int tg[6] = {0, (int)(n - 1), (int)(n / 2 + 3), TRAIN_IGNORE_INDEX, (int)n, -1};
            const char *where = PIECES[st > 0][l] > 8 ? "bulk-loaded blocks meeting in the workspace" : "bulk-loaded clusters";
            for (int red = 0; red < 2; red++) {
                snprintf(name, sizeof name,
                         "classifier_fused_typed in %s (%s, %s) at 6 x %lld: targets first, last, "
                         "between, ignored and out of range",
                         where, dtype_name(t), red ? "sum" : "mean", n);
                check_classifier(name, x, tg, rows, n, TRAIN_IGNORE_INDEX, (train_reduction)red, t);
            }
            const int t0[6] = {0, 1, 0, (int)(n - 2), 0, 5};
            snprintf(name, sizeof name,
                     "classifier_fused_typed in %s (%s) at 6 x %lld: ignore_index = 0, inside the row", where,
                     dtype_name(t), n);
            check_classifier(name, x, t0, rows, n, 0, TRAIN_MEAN, t);
            free(x);
        }
    }
    if (major >= 9) /* 2 pieces of float16 values */
        for (int r = 0; r < NSPECIAL; r++)
            check_classifier_special("in bulk-loaded clusters", 32776, r, 2100 + r, DTYPE_F16);
    if (major >= 9) /* 10 pieces of float16 */
        for (int r = 0; r < NSPECIAL; r++)
            check_classifier_special("in bulk-loaded blocks meeting in the workspace", 300000, r, 2150 + r, DTYPE_F16);
    train_set_long_rows(TRAIN_LONG_AUTO);
    /* the default: where every SM gets a block; aligned views only */
    const int sms = device_sms();
    const int many = classifier_bulk_size(sms, 65536, DTYPE_F16), few = classifier_bulk_size(sms / 8, 65536, DTYPE_F16);
    snprintf(name, sizeof name,
             "by default, float16 rows of 65536 take bulk-loaded clusters of 2 at %d rows (one block per SM), "
             "none at %d", sms, sms / 8);
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else test_expect(many == 2 && few == 0, name, "clusters of %d and %d", many, few);
    snprintf(name, sizeof name, "float rows never take bulk-loaded clusters (they run on the row engine)");
    test_expect(classifier_bulk_size(sms, 65536, DTYPE_F32) == 0, name, "clusters of %d",
                classifier_bulk_size(sms, 65536, DTYPE_F32));
    const int f8 = classifier_bulk_size(4 * sms, 1 << 17, DTYPE_F32), h8 = classifier_bulk_size(4 * sms, 1 << 18, DTYPE_F16);
    snprintf(name, sizeof name,
             "by default, rows of 8 pieces take bulk-loaded clusters in float16 (2^18), not in float32 (2^17)");
    if (major < 9) test_skip(name, "no clusters before sm_90");
    else test_expect(f8 == 0 && h8 == 8, name, "float32 %d, float16 %d", f8, h8);
    snprintf(name, sizeof name, "rows of 65538 floats (no aligned view) never take bulk-loaded clusters");
    test_expect(classifier_bulk_size(sms, 65538, DTYPE_F32) == 0, name, "clusters of %d",
                classifier_bulk_size(sms, 65538, DTYPE_F32));
    const int h32 = classifier_bulk_size(64, 1 << 20, DTYPE_F16), f64 = classifier_bulk_size(64, 1 << 20, DTYPE_F32);
    snprintf(name, sizeof name,
             "by default, 64 rows of 2^20 take 32 bulk-loaded blocks meeting in the workspace in float16, none in float32");
    if (major < 9) test_skip(name, "no bulk copies before sm_90");
    else test_expect(h32 == 32 && f64 == 0, name, "float16 %d, float32 %d", h32, f64);
    snprintf(name, sizeof name, "rows of 2^18 floats (16 pieces of 64 KB) never take bulk-loaded clusters");
    test_expect(classifier_bulk_size(4 * sms, 1 << 18, DTYPE_F32) == 0, name, "clusters of %d",
                classifier_bulk_size(4 * sms, 1 << 18, DTYPE_F32));
}

#endif
