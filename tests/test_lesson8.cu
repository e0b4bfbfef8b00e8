/* Lesson 8: every path of the dispatcher forced on its own, on odd row
 * lengths, on special rows (all -inf, NaN, only NaN, +inf, constant, one
 * finite value among -inf, ...: tests/edge_rows.h) and on misaligned,
 * padded views (tests/views.h), against the float64 reference with the
 * outputs poisoned (NaN) first; and the dispatcher's choice for
 * representative shapes. The cluster path (sm_90) is reported SKIP where
 * the device has no clusters (older GPUs), the grid path (3g) where the
 * device cannot hold a row's CTAs at once. The CPU emulator runs both (a
 * cluster's CTAs together, 3g's waiting CTAs side by side): there neither
 * may be skipped.
 * 64-bit sizes (1 x (2^31 + 17)) are checked by `make test-large`, which
 * runs softmax_fastest from tests/kernels.h. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "device/fastest_paths.h" /* FX_SPLIT_FPT, FX_SPLIT_BLOCK: a turn of path 4 */
#include "../lessons/08_fastest/softmax_fastest.h"
#include "../tests/edge_rows.h"
#include "../tests/test.h"
#include "../tests/views.h"

static const fastest_path PATHS[] = {FASTEST_WARP, FASTEST_BLOCK, FASTEST_SHARED, FASTEST_CLUSTER,
                                     FASTEST_GRID, FASTEST_SPLIT,  FASTEST_BULK};
static const char *PATH_NAMES[] = {"warp", "block", "shared", "cluster", "grid", "split", "bulk"};
#define NP 7

/* Row lengths each path is forced on (0 ends a list): around warp, float4
 * and block boundaries, N % 4 != 0, and each path's upper end. */
static const long long LENS[NP][28] = {
    {1, 3, 31, 33, 129, 1000, 1024, 0},
    {1, 33, 1025, 1537, 2048, 2049, 2561, 3071, 4097, 6145, 8193, 9216, 9217, 12289, 16384, 16387, 18432, 18433,
     20480, 20483, 32768, 0},
    {1, 31, 1025, 4097, 50001, 0},
    {1, 33, 4097, 16387, 20480, 32768, 40000, 40001, 65537, 81920, 100003, 143360, 151936, 151937, 155648, 160000,
     163840, 180224, 196608, 196609, 200064, 229376, 262144, 262145, 524291, 1LL << 20, 0},
    {1, 33, 4097, 16387, 65537, 100003, 524291, 1LL << 20, (1LL << 20) + 3, 0},
    {1, 31, 1000, 4097, 65537, 100003, (1LL << 20) + 3, 0},
    /* path 3b, 2 ... 8 CTAs of at most 64 KB: 16388 just past one piece
     * (2 CTAs), 100000 on 7, 131072 on 8; peeled (N % 4 != 0: row r starts
     * r % 4 floats past 16 bytes, heads and tails of 0 ... 3; pieces of
     * the body): 16389 on 2, 50257 (GPT-2's vocabulary) on 4, 100003 on 7,
     * 131073 on 8 */
    {16388, 16389, 32768, 50257, 65536, 100000, 100003, 131072, 131073, 0},
};

static int g_have_gpu;
#ifdef CUDA_EMU
static const int EMULATED = 1; /* the CPU emulator has clusters and path 3g: never a skip */
#else
static const int EMULATED = 0;
#endif

/* Runs path p on rows x cols, returns the plan the run used. */
static fastest_path g_forced;
static void run_forced(const float *x, float *y, long long rows, long long cols, cudaStream_t s)
{
    softmax_fastest_path(x, y, rows, cols, g_forced, s);
}
static void run_forced_strided(const float *x, long long ldx, float *y, long long ldy, long long rows,
                               long long cols, cudaStream_t s)
{
    softmax_fastest_run(g_forced, x, ldx, y, ldy, rows, cols, s);
}

/* 1 when forcing p on this shape really runs p (else the test is skipped). */
static int path_runs(fastest_path p, long long rows, long long cols, const char *name)
{
    const float *a = (const float *)(uintptr_t)256;
    fastest_plan plan = softmax_fastest_plan(p, a, cols, a, cols, rows, cols);
    if (plan.path == p) return 1;
    if ((p == FASTEST_CLUSTER || p == FASTEST_BULK) && !softmax_fastest_has_clusters() && !EMULATED)
        test_skip(name, "this device has no thread-block clusters (sm_90+ only)");
    else if (p == FASTEST_GRID && !softmax_fastest_has_grid() && !EMULATED)
        test_skip(name, "this device cannot hold a row's CTAs at once");
    else
        test_fail(name, "forcing %s ran %s instead", fastest_path_name(p), fastest_path_name(plan.path));
    return 0;
}

/* make sanitize names its tool (tests/sanitize.sh). Under synccheck, path
 * 3 in clusters of 16 CTAs stops with an illegal address once more than 8
 * such clusters run (9 rows of 524291 floats), where memcheck, racecheck
 * and the plain run of the same launch pass, and clusters of 8 pass
 * synccheck on 300 rows (docs/experiments/rows-cluster-push.md): 1 where
 * such a check skips synccheck. */
static int synccheck_skips(fastest_path p, long long rows, long long cols, const char *name)
{
    const char *tool = getenv("SOFTMAX_SANITIZE_TOOL");
    const float *a = (const float *)(uintptr_t)256;
    if (!tool || strcmp(tool, "synccheck") || softmax_fastest_plan(p, a, cols, a, cols, rows, cols).cluster <= 8)
        return 0;
    test_skip(name, "synccheck stops in clusters of more than 8 CTAs (docs/experiments/rows-cluster-push.md); "
                    "make test, memcheck and racecheck run this check");
    return 1;
}

static void check_paths(void)
{
    char name[512], desc[512];
    for (int p = 0; p < NP; p++)
        for (int l = 0; LENS[p][l]; l++)
            for (int set = 0; set < 2; set++) {
                const long long n = LENS[p][l];
                const long long rows = set ? EDGE_SPECIAL_ROWS : (n <= 1024 ? 67 : 3);
                snprintf(name, sizeof name, "lesson8 path %s forced: %lldx%lld %s matches the float64 reference",
                         PATH_NAMES[p], rows, n,
                         set ? "special rows (all -inf, NaN, only NaN, +inf, constant, one finite among -inf, ...)"
                             : "normal");
                if (!g_have_gpu) {
                    test_skip(name, "no GPU");
                    continue;
                }
                if (!path_runs(PATHS[p], rows, n, name) || synccheck_skips(PATHS[p], rows, n, name)) continue;
                float *x = (float *)malloc((size_t)(rows * n) * sizeof(float));
                if (set)
                    for (int r = 0; r < rows; r++) edge_special_row(x + r * n, n, r, 800 + (unsigned)n);
                else
                    inputs_fill(x, rows, n, INPUT_NORMAL, 900 + (unsigned long long)n);
                g_forced = PATHS[p];
                int ok = edge_run(run_forced, x, rows, n, desc, sizeof desc);
                test_expect(ok, name, "%s", desc);
                free(x);
            }
}

/* Path 2s on a row of exactly 48 KB (12288 floats), before anything else
 * in the process asks for shared memory: 48 KB plus the kernel's static
 * arrays is past what a block gets unasked, and an opt-in lasts for the
 * process, so a longer row earlier would hide a launch that forgot it
 * (common/check.h). */
static void check_shared_48k_first(void)
{
    const long long n = 12288, rows = 3;
    const char *name = "lesson8 path shared forced on a row of exactly 48 KB (3x12288), the process's first "
                       "shared-memory launch: runs and matches the float64 reference";
    char desc[512];
    if (!g_have_gpu) {
        test_skip(name, "no GPU");
        return;
    }
    if (!path_runs(FASTEST_SHARED, rows, n, name)) return;
    float *x = (float *)malloc((size_t)(rows * n) * sizeof(float));
    inputs_fill(x, rows, n, INPUT_NORMAL, 48);
    g_forced = FASTEST_SHARED;
    const int ok = edge_run(run_forced, x, rows, n, desc, sizeof desc);
    test_expect(ok, name, "%s", desc);
    free(x);
}

/* Path 4 with pieces longer than one turn of its loops (FX_SPLIT_FPT
 * floats a thread x FX_SPLIT_BLOCK threads): 16 x SMs rows make one piece
 * per row, and 16388 floats, whole float4s, are one vector more than a
 * turn; the shapes of check_paths give pieces of about 2048 floats. */
static void check_split_long_pieces(void)
{
    char name[256], desc[512];
    int sms = 0;
    if (g_have_gpu) CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const long long rows = 16LL * sms, n = (long long)FX_SPLIT_FPT * FX_SPLIT_BLOCK + 4;
    snprintf(name, sizeof name,
             "lesson8 path split forced with one piece per row longer than a turn of its loops (%lldx%lld): "
             "matches the float64 reference", rows, n);
    if (!g_have_gpu) {
        test_skip(name, "no GPU");
        return;
    }
    const fastest_plan p = softmax_fastest_plan(FASTEST_SPLIT, (const float *)(uintptr_t)256, n,
                                                (const float *)(uintptr_t)256, n, rows, n);
    if (!path_runs(FASTEST_SPLIT, rows, n, name)) return;
    float *x = (float *)malloc((size_t)(rows * n) * sizeof(float));
    inputs_fill(x, rows, n, INPUT_NORMAL, 4004);
    g_forced = FASTEST_SPLIT;
    const int ok = edge_run(run_forced, x, rows, n, desc, sizeof desc);
    test_expect(ok && p.splits == 1, name, "%s; %lld pieces per row", desc, p.splits);
    free(x);
}

/* Large magnitudes and a masked first half (whole blocks, CTAs and split
 * pieces of -inf), on the paths for long rows. */
static void check_masked(void)
{
    char name[512], desc[512];
    for (int p = 1; p < NP; p++) {
        const long long n = p == 2 ? 40001 : p == 1 ? 30001 : 100003;
        const long long rows = 3;
        snprintf(name, sizeof name,
                 "lesson8 path %s forced: 3x%lld, middle row's first half -inf, large magnitudes elsewhere", PATH_NAMES[p],
                 n);
        if (!g_have_gpu) {
            test_skip(name, "no GPU");
            continue;
        }
        if (!path_runs(PATHS[p], rows, n, name)) continue;
        float *x = (float *)malloc((size_t)(rows * n) * sizeof(float));
        inputs_fill(x, rows, n, INPUT_LARGE, 31);
        for (long long j = 0; j < n / 2; j++) x[n + j] = -INFINITY;
        g_forced = PATHS[p];
        int ok = edge_run(run_forced, x, rows, n, desc, sizeof desc);
        test_expect(ok, name, "%s", desc);
        free(x);
    }
}

/* The longest row each path takes (paths 3g and 4: any row of these tests). */
static long long path_max_cols(fastest_path p)
{
    switch (p) {
    case FASTEST_WARP: return FASTEST_WARP_MAX_COLS;
    case FASTEST_BLOCK: return FASTEST_BLOCK_MAX_COLS;
    case FASTEST_SHARED: return softmax_fastest_shared_capacity();
    case FASTEST_CLUSTER: return FASTEST_CLUSTER_MAX_COLS;
    default: return LLONG_MAX;
    }
}

static void check_views(void)
{
    const view_case cases[] = {
        {"padded, aligned (float4 with strides)", 5, 1000, 1004, 1008, 0, 0},
        /* aligned bases and strides, N % 4 != 0: 128-bit accesses would
         * drop each row's last N % 4 floats */
        {"N % 4 != 0, padded, aligned strides", 5, 1021, 1024, 1028, 0, 0},
        {"N = 65537, padded, aligned strides", 2, 65537, 65540, 65544, 0, 0},
        {"misaligned (bases 1 float past 16 bytes)", 5, 1000, 1000, 1000, 1, 1},
        {"N % 4 != 0, odd strides", 7, 1025, 1027, 1030, 0, 2},
        {"N = 33, strided and misaligned", 31, 33, 40, 37, 2, 0},
        {"N = 65537, misaligned", 2, 65537, 65540, 65541, 1, 3},
        {"N = 40000, padded, aligned", 3, 40000, 40004, 40008, 0, 0},
        /* x and y rows sharing their offset from 16 bytes: float4 bodies,
         * peeled heads and tails (every head length 0-3 across the rows) */
        {"shared misalignment, stride N + 1", 9, 1000, 1001, 1001, 0, 0},
        {"shared misalignment, bases 3 floats in, N % 4 = 1", 6, 4097, 4097, 4097, 3, 3},
        {"shared misalignment, N = 33, stride 33 (path 1 at 8 lanes a row)", 67, 33, 33, 33, 1, 1},
        {"shared misalignment, N = 7 (4 lanes a row: 32-bit)", 40, 7, 7, 7, 1, 1},
        {"shared misalignment, N = 5, head 3 and tail 2", 12, 5, 13, 9, 1, 1},
        {"shared misalignment, N = 32769 (path 2 by its body)", 9, 32769, 32769, 32769, 1, 1},
        {"shared misalignment, N = 65537, stride N + 2", 5, 65537, 65539, 65539, 2, 2},
        {"shared misalignment, N = 2^20 + 3", 3, (1LL << 20) + 3, (1LL << 20) + 3, (1LL << 20) + 3, 2, 2},
    };
    char name[512], desc[512];
    for (int p = 0; p < NP; p++)
        for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
            const view_case *c = &cases[i];
            snprintf(name, sizeof name,
                     "lesson8 path %s forced on a %s view (%lld x %lld, ldx %lld, ldy %lld, offsets %lld/%lld): "
                     "matches, padding untouched",
                     PATH_NAMES[p], c->what, c->rows, c->cols, c->ldx, c->ldy, c->xoff, c->yoff);
            if (!g_have_gpu) {
                test_skip(name, "no GPU");
                continue;
            }
            const float *a = (const float *)(uintptr_t)256;
            fastest_plan plan = softmax_fastest_plan(PATHS[p], a, c->ldx, a, c->ldy, c->rows, c->cols);
            if (plan.path != PATHS[p]) {
                if ((PATHS[p] == FASTEST_CLUSTER || PATHS[p] == FASTEST_BULK) && !softmax_fastest_has_clusters() &&
                    !EMULATED)
                    test_skip(name, "no thread-block clusters on this device");
                else if (PATHS[p] == FASTEST_BULK)
                    test_skip(name, "path 3b takes aligned and peeled views of 2 ... 8 pieces only (check_dispatch "
                                    "checks which); the path that runs instead checks this view");
                else if (PATHS[p] == FASTEST_GRID && !softmax_fastest_has_grid() && !EMULATED)
                    test_skip(name, "this device cannot hold a row's CTAs at once");
                else if (c->cols > path_max_cols(PATHS[p]))
                    test_skip(name, "longer than this path takes (the paths that take it check this view)");
                else
                    test_fail(name, "forcing %s ran %s instead", fastest_path_name(PATHS[p]),
                              fastest_path_name(plan.path));
                continue;
            }
            g_forced = PATHS[p];
            int ok = view_check(run_forced_strided, c, INPUT_NORMAL, verify_rtol, desc, sizeof desc);
            test_expect(ok, name, "%s", desc);
        }
}

/* The dispatcher's choices (pointers only examined, never dereferenced):
 * which path takes representative shapes, and how full it fills a register
 * class. g: the path of path 3g's shapes on this device; cl: clusters. */
static void check_dispatch_paths(const float *a, int cl, fastest_path g)
{
    const char *name_base = "lesson8 dispatcher picks";
    char name[256];
    const int wide = cl && softmax_fastest_wide_clusters(); /* clusters of 16 CTAs, where DRAM does not outpace them */
    const struct {
        long long rows, cols;
        fastest_path want;
    } C[] = {
        {1024, 512, FASTEST_WARP},
        {1LL << 21, 32, FASTEST_WARP},
        {1LL << 16, 1024, FASTEST_WARP},
        {1LL << 14, 4096, FASTEST_BLOCK},
        {1LL << 12, 16384, FASTEST_BLOCK},
        {1LL << 11, 32768, FASTEST_BLOCK}, /* 16K-32K floats, M >= SMs / 4: path 2 beats path 3 */
        {2047, 32769, FASTEST_BLOCK},      /* peeled rows: the body fits the 32768 class */
        {8, 32768, g}, /* too few rows for path 2 or for 4-CTA clusters */
        {1LL << 10, 65536, cl ? FASTEST_BULK : g}, /* 4 CTAs of 64 KB, loaded by the copy engine */
        {1LL << 9, 131072, cl ? FASTEST_BULK : g}, /* 8 pieces, path 3b's most */
        {1LL << 10, 98304, cl ? FASTEST_BULK : g},
        {1LL << 8, 262144, cl ? FASTEST_CLUSTER : g}, /* 16 pieces of 64 KB: past path 3b's 8 */
        {441, 151936, cl ? FASTEST_CLUSTER : g},      /* 10 CTAs of 64 KB, four an SM */
        {128, 1LL << 19, wide ? FASTEST_CLUSTER : g}, /* 16 CTAs of 128 KB */
        {170, 3LL << 17, wide ? FASTEST_CLUSTER : g}, /* 12 of them */
        {64, 1LL << 20, g}, /* 4 MiB rows: 64 CTAs of 64 KB, not 16 of 256 KB */
        {1, 1LL << 20, g},  /* more, smaller pieces: every SM gets one */
        {32, (1LL << 20) + 4, g},
        {16, 1LL << 22, g},
        {1, 1LL << 24, FASTEST_SPLIT}, /* 64 MiB: more than any GPU holds on chip */
        {1, 1LL << 26, FASTEST_SPLIT},
        {1, 100003, g},
    };
    for (int i = 0; i < (int)(sizeof C / sizeof C[0]); i++) {
        fastest_plan p = softmax_fastest_plan(FASTEST_AUTO, a, C[i].cols, a, C[i].cols, C[i].rows, C[i].cols);
        snprintf(name, sizeof name, "%s %s for %lld x %lld", name_base, fastest_path_name(C[i].want), C[i].rows,
                 C[i].cols);
        test_expect(p.path == C[i].want && p.vec4, name, "picked %s (vec4 %d)", fastest_path_name(p.path), p.vec4);
    }
    /* Every row of 1025 ... 20480 floats fills at least two thirds of its
     * register class, and up to 18432 floats in blocks of at most 512
     * threads, which fit twice or more per SM (fastest_paths.h, FX_REG). */
    long long underfilled = -1, big_block = -1;
    for (long long n = 1025; n <= 20480; n++) {
        const fastest_plan p = softmax_fastest_plan(FASTEST_AUTO, a, n, a, n, 1LL << 12, n);
        if (p.path != FASTEST_BLOCK || 3 * n < 2LL * p.threads_per_row * p.floats_per_thread) underfilled = n;
        if (n <= 18432 && p.block > 512) big_block = n;
        if (underfilled >= 0 || big_block >= 0) break;
    }
    test_expect(underfilled < 0 && big_block < 0,
                "lesson8 dispatcher fills at least two thirds of a register class for every N of 1025 ... 20480, "
                "in blocks of at most 512 threads up to 18432",
                "N = %lld leaves its class more than a third empty (or is not on path 2); N = %lld takes a block of "
                "more than 512 threads (-1: none)",
                underfilled, big_block);
}

/* 128-bit or 32-bit accesses, peeled or not, on views. */
static void check_dispatch_access(const float *a)
{
    /* 128-bit accesses whenever the rows of x and y share their offset from
     * 16 bytes (heads and tails peeled), 32-bit when they do not, or when a
     * row's lanes are too few for its 6 possible extras. */
    const fastest_plan p1 = softmax_fastest_plan(FASTEST_AUTO, a + 1, 1024, a, 1024, 64, 1024);
    const fastest_plan p2 = softmax_fastest_plan(FASTEST_AUTO, a, 1027, a, 1027, 64, 1027);
    const fastest_plan p3 = softmax_fastest_plan(FASTEST_AUTO, a + 1, 1025, a + 1, 1025, 64, 1025);
    const fastest_plan p4 = softmax_fastest_plan(FASTEST_AUTO, a, 1027, a, 1028, 64, 1027);
    const fastest_plan p5 = softmax_fastest_plan(FASTEST_AUTO, a + 1, 16, a + 1, 16, 64, 16);
    const fastest_plan p6 = softmax_fastest_plan(FASTEST_AUTO, a + 1, 33, a + 1, 33, 64, 33);
    const fastest_plan p7 = softmax_fastest_plan(FASTEST_AUTO, a, 1024, a, 1024, 64, 1024);
    test_expect(!p1.vec4 && p2.vec4 && p3.vec4 && !p4.vec4 && !p5.vec4 && p6.vec4 && p2.peel && p3.peel && p6.peel &&
                    p7.vec4 && !p7.peel,
                "lesson8 dispatcher keeps 128-bit accesses on views whose x and y rows share their misalignment",
                "vec4: bases differ %d (want 0), N %% 4 != 0 %d (1), both bases +1 %d (1), strides differ by 1 %d (0), "
                "N = 16 at 4 lanes %d (0), N = 33 at 8 lanes %d (1); peeled: %d %d %d (1 1 1), aligned %d (0)",
                p1.vec4, p2.vec4, p3.vec4, p4.vec4, p5.vec4, p6.vec4, p2.peel, p3.peel, p6.peel, p7.peel);
    /* Peeled, except short rows of a y with holes at varying offsets, where
     * 32-bit stores are faster (view_y_holes_short): N = 32, stride 33. */
    const fastest_plan h32 = softmax_fastest_plan(FASTEST_AUTO, a, 33, a, 33, 64, 32);
    const fastest_plan h1024 = softmax_fastest_plan(FASTEST_AUTO, a, 1025, a, 1025, 64, 1024);
    test_expect(!h32.vec4 && h1024.vec4 && h1024.peel,
                "lesson8 dispatcher stores 32-bit into short rows of a y with holes at varying offsets, peeled above",
                "vec4 at N = 32, stride 33: %d (want 0); at N = 1024, stride 1025: vec4 %d peel %d (1 1)", h32.vec4,
                h1024.vec4, h1024.peel);
    /* Rows of x and y misaligned against each other: 32-bit accesses, but
     * paths 3 and 3g cut the rows at y's boundaries (float4 stores) and
     * read x in 32-bit loads. */
    const fastest_plan p8 = softmax_fastest_plan(FASTEST_AUTO, a + 1, 1LL << 20, a, 1LL << 20, 64, 1LL << 20);
    const int on_chip = p8.path == FASTEST_CLUSTER || p8.path == FASTEST_GRID;
    test_expect(p8.x32 == on_chip && p8.vec4 == on_chip && !p1.x32 && !p4.x32 && !p2.x32 && !p7.x32,
                "lesson8 dispatcher cuts rows at y's boundaries on paths 3 and 3g only, when x and y rows are "
                "misaligned differently",
                "64 x 2^20 on %s: x32 %d vec4 %d; x32 elsewhere: %d %d %d %d (0 0 0 0)", fastest_path_name(p8.path),
                p8.x32, p8.vec4, p1.x32, p4.x32, p2.x32, p7.x32);
}

/* How paths 3g, 3b, 3 and 4 cut rows into pieces. */
static void check_dispatch_pieces(const float *a, int cl, fastest_path g)
{
    /* Path 3g's pieces: whole rows covered, 64 KB at most, a whole row
     * resident at once (its CTAs wait for each other). */
    if (g == FASTEST_GRID) {
        fastest_plan pg = softmax_fastest_plan(FASTEST_GRID, a, 1LL << 20, a, 1LL << 20, 64, 1LL << 20);
        test_expect(pg.path == FASTEST_GRID && pg.splits * pg.segment >= (1LL << 20) &&
                        (pg.splits - 1) * pg.segment < (1LL << 20) && pg.segment <= 16384 && pg.segment % 4 == 0 &&
                        pg.smem_bytes <= 48 * 1024,
                    "lesson8 grid path covers 64 x 2^20 with 64 KB pieces, each float once",
                    "%lld pieces of %lld, %lld bytes of shared memory", pg.splits, pg.segment, pg.smem_bytes);
    }
    /* Path 3b: aligned and peeled views, its pieces whole float4s covering
     * the row (or, peeled, its body) once, at most 64 KB on the GPUs
     * measured; a view whose x and y rows are misaligned against each
     * other goes to path 3. */
    if (cl) {
        const fastest_plan b1 = softmax_fastest_plan(FASTEST_AUTO, a, 65536, a, 65536, 1024, 65536);
        const fastest_plan b2 = softmax_fastest_plan(FASTEST_AUTO, a + 1, 65536, a + 1, 65536, 1024, 65536);
        const fastest_plan b3 = softmax_fastest_plan(FASTEST_AUTO, a, 50257, a, 50257, 1335, 50257);
        const fastest_plan b4 = softmax_fastest_plan(FASTEST_BULK, a, 100000, a, 100000, 3, 100000);
        const fastest_plan b5 = softmax_fastest_plan(FASTEST_BULK, a, 262144, a, 262144, 256, 262144);
        const fastest_plan b6 = softmax_fastest_plan(FASTEST_AUTO, a + 1, 65536, a + 2, 65536, 1024, 65536);
        test_expect(b1.path == FASTEST_BULK && b1.cluster * b1.segment >= 65536 && b1.segment % 4 == 0 &&
                        b1.smem_bytes == b1.segment * 4 && !b1.peel && b2.path == FASTEST_BULK && b2.peel &&
                        b3.path == FASTEST_BULK && b3.peel && b3.cluster == 4 && b3.segment * 4 >= 50256 &&
                        b4.path == FASTEST_BULK && b4.cluster >= 7 && b4.cluster <= 8 &&
                        b4.segment * b4.cluster >= 100000 && b4.segment * (b4.cluster - 1) < 100000 &&
                        b4.segment % 4 == 0 && b5.path != FASTEST_BULK &&
                        b6.path == FASTEST_CLUSTER,
                    "lesson8 bulk path takes aligned and peeled views of 2 ... 8 pieces only, in whole float4s "
                    "covering each row once",
                    "1024 x 65536 aligned: %s, %d CTAs x %lld floats, %lld bytes; bases 1 float in: %s (peel %d); "
                    "1335 x 50257: %s (peel %d), %d CTAs x %lld; forced on 3 x 100000: %s, %d CTAs x %lld; forced "
                    "on 2^18 (16 pieces): %s; x and y 1 and 2 floats in: %s",
                    fastest_path_name(b1.path), b1.cluster, b1.segment, b1.smem_bytes, fastest_path_name(b2.path),
                    b2.peel, fastest_path_name(b3.path), b3.peel, b3.cluster, b3.segment,
                    fastest_path_name(b4.path), b4.cluster, b4.segment, fastest_path_name(b5.path),
                    fastest_path_name(b6.path));
    }
    /* Path 3 past a class's top: one CTA more of the same shape, not
     * twice as many half-empty ones. A peeled row is sized by its body
     * (fx_body_cols): 32769 floats, bases aligned, is a body of at most
     * 32768 and one extra, and fits the 32768-float class's 4 CTAs; so
     * for path 3b's pieces. */
    if (cl) {
        const fastest_plan c1 = softmax_fastest_plan(FASTEST_CLUSTER, a, 32768, a, 32768, 1024, 32768);
        const fastest_plan c2 = softmax_fastest_plan(FASTEST_CLUSTER, a, 32772, a, 32772, 1024, 32772);
        const fastest_plan c3 = softmax_fastest_plan(FASTEST_CLUSTER, a, 65540, a, 65540, 1024, 65540);
        const fastest_plan c4 = softmax_fastest_plan(FASTEST_CLUSTER, a, 32769, a, 32769, 1024, 32769);
        const fastest_plan c5 = softmax_fastest_plan(FASTEST_AUTO, a, 262145, a, 262145, 255, 262145);
        const fastest_plan c6 = softmax_fastest_plan(FASTEST_AUTO, a, 131073, a, 131073, 511, 131073);
        const fastest_plan c7 = softmax_fastest_plan(FASTEST_AUTO, a, 151936, a, 151936, 441, 151936);
        const int c5_ok = softmax_fastest_held_dram() ? c5.held && c5.cluster == 16 && c5.segment == 16384
                                                      : !c5.held && c5.cluster == 8 && c5.segment == 32768;
        test_expect(c1.cluster == 2 && c2.cluster == 3 && c2.block == c1.block && c2.segment * 3 >= 32772 &&
                        c2.segment * 2 < 32772 && c3.cluster == 5 && c3.segment * 5 >= 65540 && c4.peel &&
                        c4.cluster == 2 && c4.block == c1.block && c4.segment == 16384 && c5.path == FASTEST_CLUSTER &&
                        c5.peel && c5_ok && c6.path == FASTEST_BULK &&
                        c6.peel && c6.cluster == 8 && c6.segment == 16384 && c7.path == FASTEST_CLUSTER &&
                        (c7.held ? c7.cluster == 8
                                 : c7.cluster == 10 && c7.block == c1.block && c7.segment * 10 >= 151936),
                    "lesson8 cluster path sizes its cluster by the row's body: N = 32768 on 2 CTAs, 32772 on 3 of "
                    "the same shape, 65540 on 5; peeled, 32769 on 2, 262145 on 8 (or the held class's 16 long "
                    "pieces, below) and 131073 on 8 (bulk-loaded); 151936 on 10 CTAs of the 32768 class's shape "
                    "(four an SM), not 5 of twice the size (or the held class's 8, below)",
                    "CTAs %d, %d (block %d, %d; segment %lld), %d (segment %lld); peeled: 32769 %d CTAs x %lld "
                    "(peel %d), 262145 %s %d x %lld, 131073 %s %d x %lld; 151936 %s %d x %lld (block %d)",
                    c1.cluster, c2.cluster, c1.block, c2.block, c2.segment, c3.cluster, c3.segment, c4.cluster,
                    c4.segment, c4.peel, fastest_path_name(c5.path), c5.cluster, c5.segment,
                    fastest_path_name(c6.path), c6.cluster, c6.segment, fastest_path_name(c7.path), c7.cluster,
                    c7.segment, c7.block);
    }
    /* The split path's pieces: whole rows covered, within the grid. */
    fastest_plan ps = softmax_fastest_plan(FASTEST_SPLIT, a, 1LL << 26, a, 1LL << 26, 1, 1LL << 26);
    test_expect(ps.splits * ps.segment >= (1LL << 26) && (ps.splits - 1) * ps.segment < (1LL << 26) &&
                    ps.splits > 100 && ps.segment % 64 == 0,
                "lesson8 split path spreads 1 x 2^26 over the whole GPU, pieces covering the row exactly once",
                "%lld pieces of %lld", ps.splits, ps.segment);
}

/* Path 3's held class of float rows: aligned rows that fill 14/16 or all
 * of 2, 4, 8, 16 pieces of 10240 floats (256 threads a CTA, no shared
 * memory) when path 3 is forced, rows that 8 wide pieces of 19456 hold as
 * well in those (143360, 151936, 155648; 160000 is past them), rows past
 * 16 pieces in 16 of 12288 filled to 14/16 (180224, 196608), else in 16
 * long ones of 16384 filled to 12/16 (200064, 229376, 262144), and by the
 * dispatcher in place of a long-row path where DRAM delivers 16 bytes per
 * SM a cycle (512 x 151936, 256 x 262144); rows a float off 16 bytes by
 * their body (peeled), past 16 pieces too; not 65536 (4/5 of its
 * pieces), nor 4096 x 20480 (path 2's). */
static void check_dispatch_held(const float *a, int cl)
{
    if (!cl) return;
    static const long long H[][4] = { /* N, CTAs, piece, floats a thread */
        {20480, 2, 10240, 40},   {40000, 4, 10000, 40},   {81920, 8, 10240, 40},   {143360, 8, 17920, 76},
        {151936, 8, 18992, 76},  {155648, 8, 19456, 76},  {160000, 16, 10000, 40}, {163840, 16, 10240, 40},
        {180224, 16, 11264, 48}, {196608, 16, 12288, 48}, {200064, 16, 12504, 64}, {229376, 16, 14336, 64},
        {262144, 16, 16384, 64}};
    int ok = 1;
    for (size_t i = 0; i < sizeof H / sizeof H[0]; i++) {
        const long long n = H[i][0];
        const fastest_plan h = softmax_fastest_plan(FASTEST_CLUSTER, a, n, a, n, 1024, n);
        ok &= h.path == FASTEST_CLUSTER && h.held && h.cluster == H[i][1] && h.segment == H[i][2] &&
              h.floats_per_thread == H[i][3] && h.block == 256 && h.smem_bytes == 0 && h.vec4;
    }
    const int dram = softmax_fastest_held_dram();
    const fastest_plan u = softmax_fastest_plan(FASTEST_AUTO, a, 151936, a, 151936, 512, 151936);
    const fastest_plan u2 = softmax_fastest_plan(FASTEST_AUTO, a, 262144, a, 262144, 256, 262144);
    const fastest_plan r = softmax_fastest_plan(FASTEST_AUTO, a, 20480, a, 20480, 4096, 20480);
    const fastest_plan m = softmax_fastest_plan(FASTEST_CLUSTER, a + 1, 151936, a + 1, 151936, 512, 151936);
    const fastest_plan w = softmax_fastest_plan(FASTEST_CLUSTER, a, 65536, a, 65536, 1024, 65536);
    const fastest_plan l = softmax_fastest_plan(FASTEST_CLUSTER, a + 1, 262144, a + 1, 262144, 256, 262144);
    const int auto_ok = dram ? u.held && u.cluster == 8 && u2.held && u2.cluster == 16 : !u.held && !u2.held;
    const int peel_ok = m.held && m.peel && m.cluster == 8 && m.segment == 18992 && l.held && l.peel &&
                        l.cluster == 16 && l.segment == 16384 && l.floats_per_thread == 64;
    test_expect(ok && auto_ok && !r.held && r.path == FASTEST_BLOCK && peel_ok && !w.held,
                "lesson8 path 3 forced on aligned float rows filling 2, 4, 8, 16 pieces of 10240 (or 14/16 of "
                "them: 40000, 160000) takes its held class (256 threads a CTA, 40 floats each, no shared memory), "
                "in 8 pieces of 19456 (76 floats a thread) where they hold the row as well (143360, 151936, "
                "155648), past 16 pieces in 16 of 12288 (48 floats a thread: 180224, 196608) or else of 16384 (64 "
                "floats a thread: 200064, 229376, 262144), and so does the "
                "dispatcher at 512 x 151936 and 256 x 262144 where DRAM delivers 16 bytes per SM a cycle; a row "
                "a float off 16 bytes by its body (peeled: 8 pieces of 18992, and at 2^18 16 long pieces of "
                "16384); not 65536, or 4096 x 20480 (path 2)",
                "forced: %s; DRAM fast %d: 512 x 151936 held %d (%d CTAs), 256 x 262144 held %d (%d CTAs); "
                "4096 x 20480 %s (held %d); a float off: held %d, peeled %d, %d CTAs of %lld, at 2^18 held %d, "
                "peeled %d, %d CTAs of %lld, %d a thread; 65536 %d",
                ok ? "held" : "NOT held", dram, u.held, u.cluster, u2.held, u2.cluster, fastest_path_name(r.path),
                r.held, m.held, m.peel, m.cluster, m.segment, l.held, l.peel, l.cluster, l.segment,
                l.floats_per_thread, w.held);
}

/* Path 3b's count of CTAs a row (fx_bulk_pick, from the rows that
 * clusters of each count hold at once): the fewest, unless a larger count
 * holds at least a sixth more rows; then the one holding the most, the
 * fewer CTAs of two that tie. Host arithmetic: runs without a GPU. */
static void check_bulk_pick(void)
{
    static const struct {
        long long rows[FX_BULK_MAX_C];
        int k, want;
    } cases[] = {
        {{69, 79, 84, 77}, 4, 2}, /* 16-bit 151936 on the H200: 7 CTAs, not 5 */
        {{69, 79, 69, 77}, 4, 0}, /* 79 < 69 + 69 / 6 */
        {{92, 94, 101, 101, 92}, 5, 0},
        {{60, 70, 70}, 3, 1},
        {{264, 248, 248}, 3, 0},
        {{5}, 1, 0},
    };
    int bad = -1, got = 0;
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]) && bad < 0; i++)
        if ((got = fx_bulk_pick(cases[i].rows, cases[i].k)) != cases[i].want) bad = i;
    test_expect(bad < 0,
                "lesson8 bulk path takes more CTAs than the fewest only where their clusters hold a sixth more rows "
                "at once, then the count holding the most (the fewer of two that tie)",
                "case %d: index %d", bad, got);
}

static void check_dispatch(void)
{
    if (!g_have_gpu) {
        test_skip("lesson8 dispatcher picks the planned path for representative shapes", "no GPU");
        return;
    }
    const int cl = softmax_fastest_has_clusters();
    /* Without path 3g its shapes go to path 4. */
    const fastest_path g = softmax_fastest_has_grid() ? FASTEST_GRID : FASTEST_SPLIT;
    const float *a = (const float *)(uintptr_t)256;
    check_dispatch_paths(a, cl, g);
    check_dispatch_access(a);
    check_dispatch_pieces(a, cl, g);
    check_dispatch_held(a, cl);
}

int main(void)
{
    int count = 0;
    g_have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError(); /* clear the no-device error, if any */
    check_shared_48k_first();
    check_bulk_pick();
    check_dispatch();
    check_paths();
    check_masked();
    check_split_long_pieces();
    check_views();
    if (g_have_gpu) softmax_fastest_release(); /* memcheck's leak check: nothing left */
    return test_exit_status();
}
