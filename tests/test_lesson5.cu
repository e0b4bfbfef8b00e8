/* Lesson 5's fused softmax on views, and its dispatcher.
 *
 * The equivalence matrix (test_kernels.cu) runs every kernel on contiguous,
 * aligned rows. Here the same kernel runs on views inside larger buffers:
 * row strides larger than cols and not multiples of 4, base pointers one
 * float past a 16-byte boundary, N % 4 != 0, on each of the three paths
 * (registers, shared memory, chunked). Each must match the float64
 * reference and leave every float outside the view untouched
 * (tests/views.h); views whose rows of x and y start equally misaligned
 * run the peeled kernels. The float4 and peeling rules and the register
 * plans are checked on the host, without a GPU. */
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "harness.h"
#include "verify.h"
#include "../lessons/05_fused/softmax_fused.h"
#include "../tests/test.h"
#include "../tests/views.h"

static const view_case CASES[] = {
    {"a contiguous aligned", 4, 1000, 1000, 1000, 0, 0},
    {"a padded aligned (float4 with strides)", 5, 1000, 1004, 1008, 0, 0},
    {"a padded, strides not multiples of 4", 5, 1000, 1003, 1010, 0, 0},
    {"a misaligned (both bases 1 float past 16 bytes)", 5, 1000, 1000, 1000, 1, 1},
    {"an input-misaligned, output-aligned", 3, 1024, 1024, 1024, 1, 0},
    {"an output-misaligned (3 floats), input-aligned", 3, 1024, 1028, 1024, 0, 3},
    {"a padded N % 4 != 0", 7, 1025, 1032, 1032, 0, 0},
    {"an N = 1, strided and misaligned", 9, 1, 3, 5, 1, 2},
    {"an N = 31, strided", 33, 31, 33, 32, 0, 1},
    {"an N = 33, strided and misaligned", 31, 33, 40, 37, 2, 0},
    {"an N = 4097, misaligned", 3, 4097, 4100, 4099, 1, 1},
    {"an N = 32768 (longest register row), padded", 2, 32768, 32772, 32776, 0, 0},
    {"an N = 32771 (past registers), misaligned", 2, 32771, 32771, 32775, 1, 1},
    {"an N = 65537 (past shared memory on an H100), misaligned", 2, 65537, 65540, 65541, 1, 3},
    {"a 20001-row, N = 3 (huge M, tiny N), strided", 20001, 3, 5, 4, 1, 0},
    {"a 1-row, N = 300000 (tiny M, long row), misaligned", 1, 300000, 300001, 300002, 3, 1},
    /* x and y equally misaligned row by row: peeled (softmax_fused_can_peel) */
    {"a shared-misalignment, stride N + 1", 9, 1000, 1001, 1001, 0, 0},
    {"a shared-misalignment, N = 5 (head 3, tail 2; 2 lanes a row hold 3 extras each)", 12, 5, 13, 5, 1, 1},
    {"a shared-misalignment, N = 2 (the head holds the row)", 11, 2, 6, 2, 3, 3},
    {"a shared-misalignment, N = 33, stride 33", 67, 33, 33, 33, 1, 1},
    {"a shared-misalignment, N = 4097, bases 3 floats in", 6, 4097, 4097, 4097, 3, 3},
    {"a shared-misalignment, N = 32771 (past registers)", 3, 32771, 32773, 32777, 2, 2},
    {"a shared-misalignment, N = 65537 (past shared memory on an H100), stride N + 2", 3, 65537, 65539,
     65539, 2, 2},
    /* ... except short rows of a y with holes at varying offsets: 32-bit (view_y_holes_short) */
    {"a shared-misalignment with holes in y, N = 33, stride 34", 20, 33, 34, 34, 1, 1},
};
#define NCASES (int)(sizeof CASES / sizeof CASES[0])

/* The strided entry points, one per requested path. */
static void run_auto(const float *x, long long ldx, float *y, long long ldy, long long rows,
                     long long cols, cudaStream_t s)
{
    softmax_fused_strided(x, ldx, y, ldy, rows, cols, s);
}
static void run_registers(const float *x, long long ldx, float *y, long long ldy,
                          long long rows, long long cols, cudaStream_t s)
{
    softmax_fused_run(FUSED_REGISTERS, x, ldx, y, ldy, rows, cols, s);
}
static void run_shared(const float *x, long long ldx, float *y, long long ldy, long long rows,
                       long long cols, cudaStream_t s)
{
    softmax_fused_run(FUSED_SHARED, x, ldx, y, ldy, rows, cols, s);
}
static void run_chunked(const float *x, long long ldx, float *y, long long ldy, long long rows,
                        long long cols, cudaStream_t s)
{
    softmax_fused_run(FUSED_CHUNKED, x, ldx, y, ldy, rows, cols, s);
}

static const struct {
    fused_path path;
    const char *name;
    strided_fn fn;
} PATHS[] = {
    {FUSED_AUTO, "dispatcher's choice", run_auto},
    {FUSED_REGISTERS, "registers path", run_registers},
    {FUSED_SHARED, "shared-memory path", run_shared},
    {FUSED_CHUNKED, "chunked path", run_chunked},
};

/* The shared-memory path on a row of exactly 48 KB (12288 floats), before
 * any other launch asks for shared memory: 48 KB plus the kernel's static
 * arrays is past what a block gets unasked, and an opt-in lasts for the
 * process, so a longer row earlier would hide a launch that forgot it
 * (common/check.h). */
static void check_shared_48k_first(int have_gpu)
{
    static const view_case c = {"48 KB", 3, 12288, 12288, 12288, 0, 0};
    const char *name = "lesson5 fused, shared-memory path forced on a row of exactly 48 KB (3x12288), the "
                       "process's first shared-memory launch: runs and matches the float64 reference";
    char desc[512];
    if (!have_gpu) {
        test_skip(name, "no GPU");
        return;
    }
    const int ok = view_check(run_shared, &c, INPUT_NORMAL, verify_rtol, desc, sizeof desc);
    test_expect(ok, name, "%s", desc);
}

static void check_views(int have_gpu)
{
    char name[512], desc[512];
    for (int p = 0; p < 4; p++) {
        for (int i = 0; i < NCASES; i++) {
            const view_case *c = &CASES[i];
            snprintf(name, sizeof name,
                     "lesson5 fused, %s, on %s view (%lld x %lld, ldx %lld, ldy %lld, offsets %lld/%lld) "
                     "matches the reference and leaves the padding untouched",
                     PATHS[p].name, c->what, c->rows, c->cols, c->ldx, c->ldy, c->xoff, c->yoff);
            if (!have_gpu) {
                test_skip(name, "no GPU");
                continue;
            }
            /* A forced path that cannot hold the row runs the dispatcher's
             * choice, which the first block of cases already covers (the
             * path does not depend on the access, so FUSED_32BIT will do). */
            if (PATHS[p].path != FUSED_AUTO &&
                softmax_fused_plan(PATHS[p].path, FUSED_32BIT, c->cols).path != PATHS[p].path)
                continue;
            /* One block per row on 20001 rows of 3 floats is what the
             * dispatcher never does, and costs the CPU emulator minutes. */
            if ((PATHS[p].path == FUSED_SHARED || PATHS[p].path == FUSED_CHUNKED) && c->rows > 1000)
                continue;
            int ok = view_check(PATHS[p].fn, c, INPUT_NORMAL, verify_rtol, desc, sizeof desc);
            test_expect(ok, name, "%s", desc);
        }
    }
    /* Special values on a misaligned, padded view, on every path. */
    const view_case special = {"a special-values, misaligned", 10, 1001, 1003, 1002, 1, 3};
    for (int p = 0; p < 4; p++) {
        snprintf(name, sizeof name,
                 "lesson5 fused, %s: constant rows, -inf, +-FLT_MAX and denormals on a misaligned "
                 "view match the reference",
                 PATHS[p].name);
        if (!have_gpu) {
            test_skip(name, "no GPU");
            continue;
        }
        int ok = view_check(PATHS[p].fn, &special, INPUT_SPECIAL, verify_rtol, desc, sizeof desc);
        test_expect(ok, name, "%s", desc);
    }
}

/* The float4 rule, on fake addresses: no GPU needed. */
static void check_float4_rule(void)
{
    const float *a = (const float *)(uintptr_t)0x10000; /* 16-byte aligned */
    const float *off1 = a + 1, *off4 = a + 4;
    test_expect(softmax_fused_can_use_float4(a, 1024, a, 1024, 1024),
                "float4 is used on aligned views with cols, ldx, ldy multiples of 4", "refused");
    test_expect(softmax_fused_can_use_float4(off4, 1028, a, 1032, 1000),
                "float4 is used on padded views whose strides are multiples of 4", "refused");
    test_expect(!softmax_fused_can_use_float4(off1, 1024, a, 1024, 1024),
                "float4 is refused when the input starts 1 float past a 16-byte boundary", "allowed");
    test_expect(softmax_fused_can_peel(off1, 1000, off1, 1000, 4),
                "views whose bases are both 1 float past 16 bytes are peeled", "refused");
    test_expect(softmax_fused_can_peel(a + 2, 1001, a + 6, 1005, 4),
                "views whose strides differ by a multiple of 4 are peeled", "refused");
    test_expect(!softmax_fused_can_peel(off1, 1024, a, 1024, 4),
                "an input 1 float past 16 bytes with an aligned output is not peeled (32-bit)", "peeled");
    test_expect(!softmax_fused_can_peel(a, 1001, a, 1000, 4),
                "rows of x and y misaligned differently (strides 1001 and 1000) are not peeled", "peeled");
    test_expect(softmax_fused_can_peel(a, 1001, a, 1000, 1), "one row is peeled whatever the strides",
                "refused");
    /* Peeled, except short rows of a y with holes at varying offsets, where
     * 32-bit stores are faster (view_y_holes_short). */
    const int h32 = softmax_fused_access(a, 33, a, 33, 64, 32), h256 = softmax_fused_access(a, 257, a, 257, 64, 256),
              h1024 = softmax_fused_access(a, 1025, a, 1025, 64, 1024), one = softmax_fused_access(a, 33, a, 33, 1, 32),
              al = softmax_fused_access(a, 36, a, 36, 64, 32);
    test_expect(h32 == FUSED_32BIT && h256 == FUSED_32BIT && h1024 == FUSED_PEELED && one == FUSED_PEELED &&
                    al == FUSED_FLOAT4,
                "short rows of a y with holes at varying offsets are stored 32-bit, longer ones and one row peeled",
                "access at stride N + 1 for N = 32, 256, 1024: %d %d %d (want 0 0 2); one row %d (2); stride 36 %d (1)",
                h32, h256, h1024, one, al);
    test_expect(!softmax_fused_can_use_float4(a, 1024, off1, 1024, 1024),
                "float4 is refused when the output starts 1 float past a 16-byte boundary", "allowed");
    test_expect(!softmax_fused_can_use_float4(a, 1025, a, 1025, 1025),
                "float4 is refused when N % 4 != 0", "allowed");
    test_expect(!softmax_fused_can_use_float4(a, 1003, a, 1004, 1000),
                "float4 is refused when the input row stride is not a multiple of 4", "allowed");
    test_expect(!softmax_fused_can_use_float4(a, 1004, a, 1006, 1000),
                "float4 is refused when the output row stride is not a multiple of 4", "allowed");
}

/* The register plans: every row up to 32768 floats stays in registers, in
 * a configuration that can hold it. Host only: no device limit is asked. */
static void check_register_plans(void)
{
    int all_fit = 1, shapes_ok = 1;
    long long bad = -1;
    for (long long n = 1; n <= FUSED_MAX_REGISTER_COLS; n += (n < 2048 ? 1 : 61)) {
        if (n + 61 > FUSED_MAX_REGISTER_COLS && n >= 2048) n = FUSED_MAX_REGISTER_COLS; /* the last */
        for (int v = FUSED_32BIT; v <= FUSED_PEELED; v++) { /* every access mode */
            fused_plan p = softmax_fused_plan(FUSED_AUTO, v, n);
            if (p.path != FUSED_REGISTERS || (long long)p.threads_per_row * p.floats_per_thread < n) {
                all_fit = 0;
                if (bad < 0) bad = n;
            }
            int tpr = p.threads_per_row;
            if ((tpr & (tpr - 1)) != 0 || p.block % tpr != 0 || p.rows_per_block * tpr != p.block ||
                (tpr > 32 && tpr != p.block) || p.block > 1024 || p.float4 != (v != FUSED_32BIT) ||
                p.peel != (v == FUSED_PEELED))
                shapes_ok = 0;
        }
    }
    test_expect(all_fit, "lesson5 fused keeps every row of up to 32768 floats in registers that hold it",
                "not at N = %lld", bad);
    test_expect(shapes_ok,
                "lesson5 fused register plans: a row is a power-of-two part of a warp or a whole block, and "
                "the plan says how the view is moved",
                "a plan breaks the rule");
    fused_plan shortp = softmax_fused_plan(FUSED_AUTO, FUSED_FLOAT4, 32),
               longp = softmax_fused_plan(FUSED_AUTO, FUSED_FLOAT4, 16384);
    test_expect(shortp.rows_per_block > 1 && shortp.threads_per_row < 32 && longp.rows_per_block == 1,
                "lesson5 fused shares a warp among several short rows and gives a long row a block",
                "N = 32: %d rows per block, %d threads per row; N = 16384: %d rows per block",
                shortp.rows_per_block, shortp.threads_per_row, longp.rows_per_block);
}

int main(void)
{
    int count = 0;
    int have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError(); /* clear the no-device error, if any */
    check_shared_48k_first(have_gpu);
    check_float4_rule();
    check_register_plans();
    check_views(have_gpu);
    return test_exit_status();
}
