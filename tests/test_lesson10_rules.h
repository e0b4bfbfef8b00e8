/* The target rules of the loss and the classifier (training.h) on every
 * path, checked by tests/test_lesson10.cu (one program): each long-row
 * mode (TRAIN_LONG_SPLIT, GRID, CLUSTER, BULK, AUTO) at lengths that reach
 * it, asserted to take the path it names, and the register paths of short
 * rows. Four sets of targets for 6 rows, each against the float64
 * reference on every element and with the rules' exact part checked
 * bit for bit:
 *   - targets in the first, a middle and the last piece of a row; N and
 *     -1 out of range (loss NaN, gradient row NaN, reduced loss NaN); -100
 *     the default ignore_index (loss 0, gradient exactly 0);
 *   - ignore_index = 0: the rows whose target is 0 ignored, and -100 then
 *     an ordinary target out of range (NaN);
 *   - ignore_index = N - 1 (the last column), no row out of range: the
 *     mean over the rows left is finite and exact;
 *   - ignore_index = -7: the rows whose target is -7 ignored, -1 and -100
 *     still out of range. */
#ifndef TESTS_TEST_LESSON10_RULES_H
#define TESTS_TEST_LESSON10_RULES_H

#include "test_lesson10_checks.h"

#define RULE_ROWS 6
#define RULE_SETS 4

typedef struct {
    const char *what, *what_loss;
    int ignore_index;
    int t[RULE_ROWS];
} rule_set;

static const char *const RULE_WHAT[RULE_SETS] = {
    "targets 0, N / 2 + 3 and N - 1 (the first, a middle and the last piece) exact; N and -1 out of range give a NaN "
    "loss, a NaN gradient row and a NaN reduced loss; a target of -100 (ignore_index) loss 0 and gradient exactly 0",
    "ignore_index = 0: exactly the rows whose target is 0 get loss 0 and gradient exactly 0, the mean divides by the "
    "rest; -100 is then out of range (NaN), as N is",
    "ignore_index = N - 1 (the last column): exactly those rows ignored, the mean over the 4 others finite and exact",
    "ignore_index = -7: exactly the rows whose target is -7 ignored; -1 and -100 still out of range (NaN)"};

/* The same for the loss, which has no gradient. */
static const char *const RULE_WHAT_LOSS[RULE_SETS] = {
    "targets 0, N / 2 + 3 and N - 1 (the first, a middle and the last piece) exact; N and -1 out of range give a NaN "
    "loss; a target of -100 (ignore_index) loss exactly 0",
    "ignore_index = 0: exactly the rows whose target is 0 get loss exactly 0; -100 is then out of range (NaN), as N is",
    "ignore_index = N - 1 (the last column): exactly those rows get loss exactly 0, the 4 others exact",
    "ignore_index = -7: exactly the rows whose target is -7 get loss exactly 0; -1 and -100 still out of range (NaN)"};

/* Rule set s for rows of n: the middle target n / 2 + 3 lies in a middle
 * piece whenever a row has 3 or more. */
static rule_set rule_set_for(int s, long long n)
{
    const int N = (int)n, mid = (int)(n / 2 + 3), I = TRAIN_IGNORE_INDEX;
    const int ii[RULE_SETS] = {I, 0, N - 1, -7};
    const int t[RULE_SETS][RULE_ROWS] = {{0, mid, N - 1, N, -1, I},
                                         {0, N - 1, mid, 0, I, N},
                                         {N - 1, 0, mid, N - 1, 1, N - 2},
                                         {-7, 0, -1, N - 1, I, mid}};
    rule_set r;
    r.what = RULE_WHAT[s];
    r.what_loss = RULE_WHAT_LOSS[s];
    r.ignore_index = ii[s];
    memcpy(r.t, t[s], sizeof r.t);
    return r;
}

/* The rules' exact part, which tolerances would not show, over `rows`
 * rows of targets tg: a row whose target is ignore_index has loss 0 and
 * (g not NULL) every gradient element 0; a row whose target is out of
 * range has a NaN loss and every gradient element NaN, and then (loss not
 * NULL) the reduced loss is NaN. The first broken rule goes to why;
 * returns whether all hold. */
static int rules_exact(const int *tg, long long rows, int ignore_index, long long cols, const float *losses,
                       const float *g, const float *loss, char *why, size_t len)
{
    int any_bad = 0;
    why[0] = 0;
    for (long long i = 0; i < rows; i++) {
        const int t = tg[i], ignored = t == ignore_index, bad = !ignored && (t < 0 || t >= cols);
        if (!ignored && !bad) continue;
        any_bad |= bad;
        if (ignored ? losses[i] != 0.0f : !isnan(losses[i])) {
            snprintf(why, len, "row %lld (target %d, %s): loss %.9g", i, t, ignored ? "ignored" : "out of range",
                     losses[i]);
            return 0;
        }
        for (long long j = 0; g && j < cols; j++) {
            const float v = g[i * cols + j];
            if (ignored ? v != 0.0f : !isnan(v)) {
                snprintf(why, len, "row %lld (target %d, %s): gradient[%lld] = %.9g", i, t,
                         ignored ? "ignored" : "out of range", j, v);
                return 0;
            }
        }
    }
    if (loss && any_bad && !isnan(*loss)) {
        snprintf(why, len, "a row out of range, yet the reduced loss is %.9g", *loss);
        return 0;
    }
    return 1;
}

/* The loss (float32 logits x, rows of `cols`) on rule set r: every row
 * against the reference, and the exact part. */
static void check_loss_rules(const char *name, const float *x, long long cols, const rule_set *r)
{
    float *loss = run_loss(x, r->t, RULE_ROWS, cols, r->ignore_index);
    train_report rep;
    train_report_init(&rep);
    train_check_loss(x, r->t, loss, RULE_ROWS, cols, r->ignore_index, &rep);
    char why[200];
    if (!rules_exact(r->t, RULE_ROWS, r->ignore_index, cols, loss, NULL, NULL, why, sizeof why))
        test_fail(name, "%s", why);
    else report(name, &rep, RULE_ROWS, cols);
    free(loss);
}

/* The classifier (mean) on rule set r in storage type st: every element,
 * the losses and the reduced loss against the reference, and the exact
 * part. */
static void check_classifier_rules(const char *name, const float *x, long long cols, const rule_set *r, dtype st)
{
    classifier_out o = run_classifier(x, r->t, RULE_ROWS, cols, r->ignore_index, TRAIN_MEAN, st);
    train_report rep;
    train_report_init(&rep);
    train_check_classifier(o.xw, r->t, o.g, o.losses, o.loss, RULE_ROWS, cols, r->ignore_index, 1, st, &rep);
    char why[200];
    if (!rules_exact(r->t, RULE_ROWS, r->ignore_index, cols, o.losses, o.g, &o.loss, why, sizeof why))
        test_fail(name, "%s", why);
    else report(name, &rep, RULE_ROWS, cols);
    classifier_out_free(&o);
}

/* ---- the long-row paths ---------------------------------------------------- */

static const char *long_mode_name(train_long_rows m)
{
    return m == TRAIN_LONG_SPLIT     ? "TRAIN_LONG_SPLIT"
           : m == TRAIN_LONG_GRID    ? "TRAIN_LONG_GRID"
           : m == TRAIN_LONG_CLUSTER ? "TRAIN_LONG_CLUSTER"
           : m == TRAIN_LONG_BULK    ? "TRAIN_LONG_BULK"
                                     : "TRAIN_LONG_AUTO";
}

/* Whether the classifier at RULE_ROWS x cols of type t, in the mode set
 * now (m), takes the engine path m names: path 4 (SPLIT), path 3 in
 * clusters of `pieces` CTAs (CLUSTER; 0: any), path 3b in `pieces` CTAs
 * loaded by bulk copies (BULK: a cluster of up to 8, more meeting through
 * global memory), path 3g (GRID, and AUTO at so few rows). */
static int rules_path_taken(train_long_rows m, long long cols, dtype t, int pieces)
{
    const fastest_plan p = train_plan(TRAIN_K_CLASSIFIER, RULE_ROWS, cols, t);
    const int once = train_reads_once(TRAIN_K_CLASSIFIER, RULE_ROWS, cols, t);
    switch (m) {
    case TRAIN_LONG_SPLIT: return p.path == FASTEST_SPLIT && !once;
    case TRAIN_LONG_CLUSTER: return p.path == FASTEST_CLUSTER && (pieces == 0 || p.cluster == pieces) && once;
    case TRAIN_LONG_BULK: return p.path == FASTEST_BULK && (p.splits ? p.splits : p.cluster) == pieces && once;
    default: return p.path == FASTEST_GRID && once; /* GRID, and AUTO at RULE_ROWS rows */
    }
}

/* The modes at lengths that reach them (longer than TRAIN_REG_MAX_COLS),
 * odd and multiples of 8, and the CTAs a row takes: path 3's held class
 * (4 CTAs at 40008 and, peeled by its body, 40001, 8 wide ones at
 * 151936, 16 of 48 floats a thread at 180224, 16 long ones at 200064 and
 * 2^18; 16-bit rows: what the 16-bit CTAs' capacity makes); bulk-loaded CTAs of up to 64 KB (3 for float
 * rows of 40001 and 40008 and 16-bit rows of 65544; 8 for 16-bit 2^18,
 * the largest cluster; 9 past it). */
static const struct {
    train_long_rows mode;
    dtype t;
    long long cols;
    int pieces;
} RULE_CASES[] = {
    {TRAIN_LONG_SPLIT, DTYPE_F32, 65544, 0},   {TRAIN_LONG_SPLIT, DTYPE_F32, 70001, 0},
    {TRAIN_LONG_SPLIT, DTYPE_F16, 65544, 0},   {TRAIN_LONG_SPLIT, DTYPE_BF16, 70001, 0},
    {TRAIN_LONG_GRID, DTYPE_F32, 20000, 0},    {TRAIN_LONG_GRID, DTYPE_F32, 20001, 0},
    {TRAIN_LONG_GRID, DTYPE_F16, 20001, 0},    {TRAIN_LONG_GRID, DTYPE_BF16, 20000, 0},
    {TRAIN_LONG_CLUSTER, DTYPE_F32, 40008, 4}, {TRAIN_LONG_CLUSTER, DTYPE_F32, 40001, 4},
    {TRAIN_LONG_CLUSTER, DTYPE_F32, 151936, 8}, {TRAIN_LONG_CLUSTER, DTYPE_F32, 262144, 16},
    {TRAIN_LONG_CLUSTER, DTYPE_F32, 180224, 16}, {TRAIN_LONG_CLUSTER, DTYPE_F32, 200064, 16},
    {TRAIN_LONG_CLUSTER, DTYPE_F16, 40008, 0}, {TRAIN_LONG_CLUSTER, DTYPE_BF16, 40001, 0},
    {TRAIN_LONG_GRID, DTYPE_F32, 40008, 0},    {TRAIN_LONG_BULK, DTYPE_F32, 40008, 3},
    {TRAIN_LONG_BULK, DTYPE_F32, 40001, 3},    {TRAIN_LONG_BULK, DTYPE_F16, 65544, 3},
    {TRAIN_LONG_BULK, DTYPE_BF16, 65544, 3},   {TRAIN_LONG_BULK, DTYPE_F16, 262144, 8},
    {TRAIN_LONG_BULK, DTYPE_BF16, 262152, 9},
    {TRAIN_LONG_AUTO, DTYPE_F32, 20001, 0},    {TRAIN_LONG_AUTO, DTYPE_BF16, 40008, 0},
};
#define NRULE_CASES (int)(sizeof RULE_CASES / sizeof RULE_CASES[0])

/* One case: the mode set, its path asserted, then the four rule sets on
 * the classifier (and, for float32, on the loss, on the path its plan
 * takes in that mode); TRAIN_LONG_AUTO again after. */
static void check_rules_case(int c, int major)
{
    const train_long_rows m = RULE_CASES[c].mode;
    const dtype t = RULE_CASES[c].t;
    const long long n = RULE_CASES[c].cols;
    char name[600], head[300];
    train_set_long_rows(m);
    snprintf(head, sizeof head, "%s, %s logits, %d x %lld (%s)", long_mode_name(m), dtype_name(t), RULE_ROWS, n,
             train_path_name(TRAIN_K_CLASSIFIER, RULE_ROWS, n, t));
    const int pieces = RULE_CASES[c].pieces;
    char want[120];
    if (m == TRAIN_LONG_SPLIT) snprintf(want, sizeof want, "the split path");
    else if (m == TRAIN_LONG_CLUSTER && pieces)
        snprintf(want, sizeof want, "clusters of %d CTAs loaded by the threads", pieces);
    else if (m == TRAIN_LONG_CLUSTER) snprintf(want, sizeof want, "clusters loaded by the threads");
    else if (m == TRAIN_LONG_BULK) snprintf(want, sizeof want, "%d CTAs a row loaded by bulk copies", pieces);
    else snprintf(want, sizeof want, "the pieces on chip meeting in the workspace%s",
                  m == TRAIN_LONG_AUTO ? " (6 rows are too few for clusters)" : "");
    snprintf(name, sizeof name, "%s takes %s for the classifier: %s", long_mode_name(m), want, head);
    if ((m == TRAIN_LONG_CLUSTER || m == TRAIN_LONG_BULK) && major < 9) {
        test_skip(name, "no clusters before sm_90");
        train_set_long_rows(TRAIN_LONG_AUTO);
        return;
    }
    const int taken = rules_path_taken(m, n, t, pieces);
    const fastest_plan p = train_plan(TRAIN_K_CLASSIFIER, RULE_ROWS, n, t);
    test_expect(taken, name, "it does not (path %d, cluster %d, pieces %lld)", (int)p.path, p.cluster, p.splits);
    float *x = (float *)malloc((size_t)(RULE_ROWS * n) * sizeof(float));
    inputs_fill(x, RULE_ROWS, n, INPUT_NORMAL, 3000 + (unsigned long long)c);
    const char *loss_path = train_path_name(TRAIN_K_LOSS, RULE_ROWS, n, DTYPE_F32);
    for (int s = 0; taken && s < RULE_SETS; s++) {
        const rule_set r = rule_set_for(s, n);
        snprintf(name, sizeof name, "classifier_fused_typed (mean), %s: %s", head, r.what);
        check_classifier_rules(name, x, n, &r, t);
        if (t != DTYPE_F32) continue;
        snprintf(name, sizeof name, "cross_entropy_forward, %s, %d x %lld (%s): %s", long_mode_name(m), RULE_ROWS, n,
                 loss_path, r.what_loss);
        check_loss_rules(name, x, n, &r);
    }
    free(x);
    train_set_long_rows(TRAIN_LONG_AUTO);
}

/* ---- the register paths ----------------------------------------------------- */

/* Short rows in every storage type: warps or lanes of a row (100; 16-bit
 * rows 16 elements a lane), a row not in 16-byte vectors (1001), a block
 * per row and 16-bit rows held as loaded (5000), a block per row of 16-bit
 * elements widened, not in 16-byte vectors (5001). */
static void check_rules_short(void)
{
    static const long long LENS[] = {100, 1001, 5000, 5001};
    char name[600];
    for (int l = 0; l < 4; l++) {
        const long long n = LENS[l];
        float *x = (float *)malloc((size_t)(RULE_ROWS * n) * sizeof(float));
        inputs_fill(x, RULE_ROWS, n, INPUT_NORMAL, 3100 + (unsigned long long)l);
        for (int st = 0; st < 3; st++) {
            const dtype t = st == 0 ? DTYPE_F32 : st == 1 ? DTYPE_F16 : DTYPE_BF16;
            for (int s = 0; s < RULE_SETS; s++) {
                const rule_set r = rule_set_for(s, n);
                snprintf(name, sizeof name, "classifier_fused_typed (mean), %s logits, %d x %lld (%s): %s",
                         dtype_name(t), RULE_ROWS, n, train_path_name(TRAIN_K_CLASSIFIER, RULE_ROWS, n, t),
                         r.what);
                check_classifier_rules(name, x, n, &r, t);
                if (t != DTYPE_F32) continue;
                snprintf(name, sizeof name, "cross_entropy_forward, %d x %lld (%s): %s", RULE_ROWS, n,
                         train_path_name(TRAIN_K_LOSS, RULE_ROWS, n, DTYPE_F32), r.what_loss);
                check_loss_rules(name, x, n, &r);
            }
        }
        free(x);
    }
}

/* Every path's target rules; the long-row mode is TRAIN_LONG_AUTO before
 * and after. */
static void test_target_rules(void)
{
    int dev, major = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    check_rules_short();
    for (int c = 0; c < NRULE_CASES; c++) check_rules_case(c, major);
}

#endif
