/* Lesson 8: every path of the dispatcher forced on its own, on odd row
 * lengths, on special rows (all -inf, NaN, only NaN, +inf, constant, one
 * finite value among -inf, ...: tests/edge_rows.h) and on misaligned,
 * padded views (tests/views.h), against the float64 reference with the
 * outputs poisoned (NaN) first; and the dispatcher's choice for
 * representative shapes. The cluster path (sm_90) is reported SKIP where
 * the device has no clusters (older GPUs, the CPU emulator).
 * 64-bit sizes (1 x (2^31 + 17)) are checked by `make test-large`, which
 * runs softmax_fastest from tests/kernels.h. */
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
#include "../lessons/08_fastest/softmax_fastest.h"
#include "../tests/edge_rows.h"
#include "../tests/test.h"
#include "../tests/views.h"

static const fastest_path PATHS[] = {FASTEST_WARP, FASTEST_BLOCK, FASTEST_SHARED, FASTEST_CLUSTER,
                                     FASTEST_SPLIT};
static const char *PATH_NAMES[] = {"warp", "block", "shared", "cluster", "split"};
#define NP 5

/* Row lengths each path is forced on (0 ends a list): around warp, float4
 * and block boundaries, N % 4 != 0, and each path's upper end. */
static const long long LENS[NP][12] = {
    {1, 3, 31, 33, 129, 1000, 1024, 0},
    {1, 33, 1025, 2048, 4097, 16384, 16387, 32768, 0},
    {1, 31, 1025, 4097, 50001, 0},
    {1, 33, 4097, 16387, 32768, 65537, 100003, 262144, 524291, 1LL << 20, 0},
    {1, 31, 1000, 4097, 65537, 100003, (1LL << 20) + 3, 0},
};

static int g_have_gpu;

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
    if (p == FASTEST_CLUSTER && !softmax_fastest_has_clusters())
        test_skip(name, "this device has no thread-block clusters (sm_90+ only; not on the CPU emulator)");
    else
        test_fail(name, "forcing %s ran %s instead", fastest_path_name(p), fastest_path_name(plan.path));
    return 0;
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
                if (!path_runs(PATHS[p], rows, n, name)) continue;
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

/* Large magnitudes and a masked first half (whole blocks, CTAs and split
 * pieces of -inf), on the paths for long rows. */
static void check_masked(void)
{
    char name[512], desc[512];
    for (int p = 1; p < NP; p++) {
        const long long n = p == 2 ? 40001 : (p == 1 ? 30001 : 100003), rows = 3;
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

static void check_views(void)
{
    const view_case cases[] = {
        {"padded, aligned (float4 with strides)", 5, 1000, 1004, 1008, 0, 0},
        {"misaligned (bases 1 float past 16 bytes)", 5, 1000, 1000, 1000, 1, 1},
        {"N % 4 != 0, odd strides", 7, 1025, 1027, 1030, 0, 2},
        {"N = 33, strided and misaligned", 31, 33, 40, 37, 2, 0},
        {"N = 65537, misaligned", 2, 65537, 65540, 65541, 1, 3},
        {"N = 40000, padded, aligned", 3, 40000, 40004, 40008, 0, 0},
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
                if (PATHS[p] == FASTEST_CLUSTER && !softmax_fastest_has_clusters())
                    test_skip(name, "no thread-block clusters on this device");
                else
                    test_pass(name); /* too long for this path: covered by the paths that take it */
                continue;
            }
            g_forced = PATHS[p];
            int ok = view_check(run_forced_strided, c, INPUT_NORMAL, verify_rtol, desc, sizeof desc);
            test_expect(ok, name, "%s", desc);
        }
}

/* The dispatcher's choices (pointers only examined, never dereferenced). */
static void check_dispatch(void)
{
    const char *name_base = "lesson8 dispatcher picks";
    char name[256];
    if (!g_have_gpu) {
        test_skip("lesson8 dispatcher picks the planned path for representative shapes", "no GPU");
        return;
    }
    const int cl = softmax_fastest_has_clusters();
    const struct {
        long long rows, cols;
        fastest_path want;
    } C[] = {
        {1024, 512, FASTEST_WARP},
        {1LL << 21, 32, FASTEST_WARP},
        {1LL << 16, 1024, FASTEST_WARP},
        {1LL << 14, 4096, FASTEST_BLOCK},
        {1LL << 12, 16384, FASTEST_BLOCK},
        {1LL << 11, 32768, cl ? FASTEST_CLUSTER : FASTEST_BLOCK},
        {1LL << 10, 65536, cl ? FASTEST_CLUSTER : FASTEST_SPLIT},
        {1LL << 8, 262144, cl ? FASTEST_CLUSTER : FASTEST_SPLIT},
        {128, 1LL << 19, cl ? FASTEST_CLUSTER : FASTEST_SPLIT},
        {64, 1LL << 20, cl ? FASTEST_CLUSTER : FASTEST_SPLIT},
        {1, 1LL << 20, FASTEST_SPLIT}, /* 16 CTAs of 132 SMs: splitting uses them all */
        {32, (1LL << 20) + 4, FASTEST_SPLIT},
        {16, 1LL << 22, FASTEST_SPLIT},
        {1, 1LL << 26, FASTEST_SPLIT},
        {1, 100003, FASTEST_SPLIT},
    };
    const float *a = (const float *)(uintptr_t)256;
    for (int i = 0; i < (int)(sizeof C / sizeof C[0]); i++) {
        fastest_plan p = softmax_fastest_plan(FASTEST_AUTO, a, C[i].cols, a, C[i].cols, C[i].rows, C[i].cols);
        snprintf(name, sizeof name, "%s %s for %lld x %lld", name_base, fastest_path_name(C[i].want), C[i].rows,
                 C[i].cols);
        test_expect(p.path == C[i].want && p.vec4 == (C[i].cols % 4 == 0), name, "picked %s (vec4 %d)", fastest_path_name(p.path), p.vec4);
    }
    /* A misaligned base or N % 4 != 0 turns 128-bit accesses off. */
    fastest_plan p1 = softmax_fastest_plan(FASTEST_AUTO, a + 1, 1024, a, 1024, 64, 1024);
    fastest_plan p2 = softmax_fastest_plan(FASTEST_AUTO, a, 1027, a, 1027, 64, 1027);
    test_expect(!p1.vec4 && !p2.vec4, "lesson8 dispatcher uses 32-bit accesses on a misaligned base or N % 4 != 0",
                "vec4 %d, %d", p1.vec4, p2.vec4);
    /* The split path's pieces: whole rows covered, within the grid. */
    fastest_plan ps = softmax_fastest_plan(FASTEST_SPLIT, a, 1LL << 26, a, 1LL << 26, 1, 1LL << 26);
    test_expect(ps.splits * ps.segment >= (1LL << 26) && (ps.splits - 1) * ps.segment < (1LL << 26) &&
                    ps.splits > 100 && ps.segment % 64 == 0,
                "lesson8 split path spreads 1 x 2^26 over the whole GPU, pieces covering the row exactly once",
                "%lld pieces of %lld", ps.splits, ps.segment);
}

int main(void)
{
    int count = 0;
    g_have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError(); /* clear the no-device error, if any */
    check_dispatch();
    check_paths();
    check_masked();
    check_views();
    if (g_have_gpu) softmax_fastest_release(); /* memcheck's leak check: nothing left */
    return test_exit_status();
}
