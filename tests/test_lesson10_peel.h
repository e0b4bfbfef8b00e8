/* The loss and the classifier on peeled rows, checked by
 * tests/test_lesson10.cu (one program). A row that does not start on 16
 * bytes, or does not end on them, is cut into a head, a body of whole
 * 16-byte vectors and a tail (lesson 5's peeling, view_cut.cuh): contiguous
 * rows of odd N (each row starts at another offset: GPT-2's 50257, 2^k + 1)
 * and logits that start 1 ... 7 elements past 16 bytes, in place (x = y),
 * on every path that peels (1, 2, 3, 3b, 3g, 4), in float32 and both 16-bit
 * types. Each row's target falls in a role of its own, given to the rows
 * in turn where the row's cut has it: the head's first or last element,
 * the body's first, middle or last, the tail's first or last, the last
 * column of a piece of paths 3, 3b, 3g and 4 or the first of the next,
 * ignore_index, N and -1 (out of range). Every element against the
 * float64 reference, the rules' exact part bit for bit, the plan asserted
 * peeled on the path it names, and the elements around the logits (NaN:
 * a kernel that reads one spoils its row) left as they were. */
#ifndef TESTS_TEST_LESSON10_PEEL_H
#define TESTS_TEST_LESSON10_PEEL_H

#include "test_lesson10_rules.h" /* rules_exact, long_mode_name; run_classifier_at, run_loss_at */

/* The targets' roles, in the order rows take them. */
enum {
    PR_HEAD_FIRST, PR_HEAD_LAST, PR_BODY_FIRST, PR_BODY_MID, PR_BODY_LAST, PR_TAIL_FIRST, PR_TAIL_LAST,
    PR_PIECE_LAST, PR_PIECE_NEXT, PR_IGNORED, PR_PAST, PR_NEGATIVE, PR_N
};

/* Row r's target in role `role`: whether the row's cut has it. The row
 * starts o elements past 16 bytes (v elements each); seg: the plan's
 * piece (0: none). */
static int peel_target(int role, long long o, int v, long long cols, long long seg, int ignore_index, int *t)
{
    long long head = (v - o % v) % v;
    if (head > cols) head = cols;
    const long long body = (cols - head) / v * v, bend = head + body, tail = cols - bend;
    const long long at[PR_N] = {0, head - 1, head, head + body / 2 + 1, bend - 1, bend, cols - 1,
                                head + seg - 1, head + seg, ignore_index, cols, -1};
    const int has[PR_N] = {head > 0, head > 1, body > 0, body > 2 * v, body > 0, tail > 0, tail > 1,
                           seg > 0 && seg < body, seg > 0 && seg < body, 1, 1, 1};
    *t = (int)at[role];
    return has[role];
}

/* Targets for rows of logits that start `off` elements past 16 bytes: row
 * after row, the first role not yet given whose element the row has, then
 * drawn ones (seed). Returns the roles given, a bit each. */
static unsigned peel_targets(int *t, long long rows, long long cols, long long off, dtype st, long long seg,
                             int ignore_index, unsigned long long seed)
{
    const int v = 16 / dtype_size(st);
    unsigned given = 0;
    make_targets(t, rows, cols, seed, 0, ignore_index);
    for (long long r = 0; r < rows; r++)
        for (int role = 0; role < PR_N; role++) {
            int tr;
            if ((given >> role & 1u) || !peel_target(role, off + r * cols, v, cols, seg, ignore_index, &tr)) continue;
            t[r] = tr;
            given |= 1u << role;
            break;
        }
    return given;
}

/* The cases: rows x cols at `off` elements past 16 bytes in a long-row
 * mode (AUTO: paths 1 and 2 as the length says), ignore_index, the types
 * (a bit per dtype) and whether 16-bit rows are peeled (N = 33: path 1
 * has no 14 lanes for their extras). */
typedef struct {
    long long rows, cols, off;
    train_long_rows mode;
    int ignore_index, types, peel16;
} peel_case;
#define PT_ALL 7 /* f32, f16, bf16 */
#define PT_F32 1 /* float32 only: 16-bit rows past 32768 take path 3b */
static const peel_case PEEL_CASES[] = {
    {16, 33, 0, TRAIN_LONG_AUTO, TRAIN_IGNORE_INDEX, PT_ALL, 0},
    {16, 129, 0, TRAIN_LONG_AUTO, TRAIN_IGNORE_INDEX, PT_ALL, 1},
    {16, 1001, 0, TRAIN_LONG_AUTO, 0, PT_ALL, 1},
    {16, 1024, 3, TRAIN_LONG_AUTO, TRAIN_IGNORE_INDEX, PT_ALL, 1},
    {2050, 300, 1, TRAIN_LONG_AUTO, TRAIN_IGNORE_INDEX, PT_ALL, 1},
    {16, 1025, 0, TRAIN_LONG_AUTO, TRAIN_IGNORE_INDEX, PT_ALL, 1},
    {16, 4097, 1, TRAIN_LONG_AUTO, 0, PT_ALL, 1},
    {40, 32769, 1, TRAIN_LONG_AUTO, TRAIN_IGNORE_INDEX, PT_F32, 1}, /* path 2 by the body (M >= SMs / 4) */
    {16, 32769, 0, TRAIN_LONG_SPLIT, TRAIN_IGNORE_INDEX, PT_ALL, 1},
    {16, 32769, 0, TRAIN_LONG_GRID, 0, PT_ALL, 1},
    {16, 32769, 0, TRAIN_LONG_CLUSTER, TRAIN_IGNORE_INDEX, PT_ALL, 1},
    {12, 40008, 3, TRAIN_LONG_SPLIT, 0, PT_ALL, 1},
    {12, 40008, 3, TRAIN_LONG_GRID, TRAIN_IGNORE_INDEX, PT_ALL, 1},
    {12, 40008, 3, TRAIN_LONG_CLUSTER, 0, PT_ALL, 1},
    {12, 40008, 5, TRAIN_LONG_BULK, TRAIN_IGNORE_INDEX, PT_ALL, 1},
    {16, 50257, 0, TRAIN_LONG_SPLIT, TRAIN_IGNORE_INDEX, PT_ALL, 1},
    {16, 50257, 0, TRAIN_LONG_GRID, TRAIN_IGNORE_INDEX, PT_ALL, 1},
    {16, 50257, 0, TRAIN_LONG_CLUSTER, TRAIN_IGNORE_INDEX, PT_ALL, 1},
    {16, 50257, 0, TRAIN_LONG_BULK, 0, PT_ALL, 1},
    {16, 65537, 0, TRAIN_LONG_BULK, TRAIN_IGNORE_INDEX, PT_ALL, 1},
};
#define NPEEL_CASES (int)(sizeof PEEL_CASES / sizeof PEEL_CASES[0])

/* The engine path a case's mode names (AUTO: path 1 or 2 by the length). */
static fastest_path peel_path(const peel_case *c)
{
    if (c->mode == TRAIN_LONG_AUTO) return c->cols <= 1024 ? FASTEST_WARP : FASTEST_BLOCK;
    return (fastest_path)c->mode;
}

/* Whether the roles given cover the head, the body and the tail, and with
 * pieces (seg) both sides of a piece boundary. */
static int peel_covered(unsigned given, long long seg)
{
    const unsigned need = 1u << PR_HEAD_FIRST | 1u << PR_BODY_FIRST | 1u << PR_BODY_LAST | 1u << PR_TAIL_FIRST |
                          (seg ? 1u << PR_PIECE_LAST | 1u << PR_PIECE_NEXT : 0u);
    return (given & need) == need;
}

/* Case c in type st: the classifier and, for float32 on paths 1, 2 and 4
 * (the loss's long rows always take path 4), the loss. */
static void check_peel_case(int c, dtype st, int major)
{
    const peel_case *k = &PEEL_CASES[c];
    const long long rows = k->rows, cols = k->cols, off = k->off;
    char name[700], head[300], why[200];
    train_set_long_rows(k->mode);
    snprintf(head, sizeof head, "%s logits, %lld x %lld starting %lld elements past 16 bytes, %s, ignore_index %d",
             dtype_name(st), rows, cols, off, long_mode_name(k->mode), k->ignore_index);
    const fastest_path want = peel_path(k);
    if ((want == FASTEST_CLUSTER || want == FASTEST_BULK) && major < 9) {
        snprintf(name, sizeof name, "classifier_fused_typed on peeled rows, %s", head);
        test_skip(name, "no clusters before sm_90");
        train_set_long_rows(TRAIN_LONG_AUTO);
        return;
    }
    float *x = (float *)malloc((size_t)(rows * cols) * sizeof(float));
    int *t = (int *)malloc((size_t)rows * sizeof(int));
    inputs_fill(x, rows, cols, INPUT_NORMAL, 5000 + (unsigned long long)c);
    /* the plan's pieces, asked at an address as far past 16 bytes as the logits will be */
    const long long seg =
        classifier_plan16((const char *)TRAIN_PLAN_ADDR + off * dtype_size(st), rows, cols, st).segment;
    const unsigned given = peel_targets(t, rows, cols, off, st, seg, k->ignore_index, 5100 + (unsigned long long)c);
    fastest_plan p;
    int around_ok;
    classifier_out o = run_classifier_at(x, t, rows, cols, off, k->ignore_index, TRAIN_MEAN, st, &p, &around_ok);
    const int peel = st == DTYPE_F32 || k->peel16;
    snprintf(name, sizeof name,
             "classifier_fused_typed (mean), %s (%s): targets in the head, the body and the tail%s, ignored and out "
             "of range, every element as the reference's, the elements around the logits untouched",
             head, train_path_name(TRAIN_K_CLASSIFIER, rows, cols, st), seg ? ", beside a piece boundary" : "");
    train_report rep;
    train_report_init(&rep);
    train_check_classifier(o.xw, t, o.g, o.losses, o.loss, rows, cols, k->ignore_index, 1, st, &rep);
    if (p.path != want || p.peel != peel)
        test_fail(name, "the plan takes path %d, peeled %d (want path %d, peeled %d)", (int)p.path, p.peel,
                  (int)want, peel);
    else if (!peel_covered(given, seg)) test_fail(name, "the targets miss a role (roles given: 0x%x)", given);
    else if (!around_ok) test_fail(name, "an element around the logits was written");
    else if (!rules_exact(t, rows, k->ignore_index, cols, o.losses, o.g, &o.loss, why, sizeof why))
        test_fail(name, "%s", why);
    else report(name, &rep, rows, cols);
    classifier_out_free(&o);
    if (st == DTYPE_F32 && (k->mode == TRAIN_LONG_AUTO || k->mode == TRAIN_LONG_SPLIT)) {
        int same;
        float *loss = run_loss_at(x, t, rows, cols, off, k->ignore_index, &same);
        const fastest_plan lp = train_plan(TRAIN_K_LOSS, rows, cols, DTYPE_F32); /* at a 16-byte boundary */
        snprintf(name, sizeof name,
                 "cross_entropy_forward, float32 logits, %lld x %lld starting %lld elements past 16 bytes, ignore_index "
                 "%d (%s): targets in the head, the body and the tail, ignored and out of range, as the reference's, "
                 "the logits and the elements around them untouched",
                 rows, cols, off, k->ignore_index, train_path_name(TRAIN_K_LOSS, rows, cols, DTYPE_F32));
        train_report_init(&rep);
        train_check_loss(x, t, loss, rows, cols, k->ignore_index, &rep);
        if (off == 0 && !lp.peel) test_fail(name, "the plan is not peeled");
        else if (!same) test_fail(name, "the logits' buffer was written");
        else if (!rules_exact(t, rows, k->ignore_index, cols, loss, NULL, NULL, why, sizeof why))
            test_fail(name, "%s", why);
        else report(name, &rep, rows, cols);
        free(loss);
    }
    free(x);
    free(t);
    train_set_long_rows(TRAIN_LONG_AUTO);
}

/* Every case in each of its types; the long-row mode is TRAIN_LONG_AUTO
 * before and after. */
static void test_peeled_rows(void)
{
    int dev, major = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    static const dtype TYPES[3] = {DTYPE_F32, DTYPE_F16, DTYPE_BF16};
    for (int c = 0; c < NPEEL_CASES; c++)
        for (int i = 0; i < 3; i++)
            if (PEEL_CASES[c].types >> i & 1) check_peel_case(c, TYPES[i], major);
}

#endif
