/* Lesson 6 program: the running (m, d) state step by step, the merge of two
 * halves in either order, the -inf trap, then the timing. */
#include <math.h>
#include <stdio.h>

#include "harness.h"
#include "device/online_md.cuh"
#include "softmax_online.h"

static const lesson LESSON = {
    6, "online",
    "one streaming pass for (max, sum), merged across threads, then one pass to write",
    "2 reads + 1 write, coalesced", 12.0, softmax_online, verify_rtol,
    16384, 4096,
};

/* The online-softmax tutorial's one-element-at-a-time update, in float32 on the host. */
static void show_steps(const float *x, int n)
{
    online_md s = online_md_identity();
    printf("  %-10s %10s %12s %16s\n", "x", "m", "d", "d rescaled by");
    for (int i = 0; i < n; i++) {
        const float old_m = s.m;
        s = online_md_push<1>(s, &x[i]);
        char rescale[48] = "-";
        if (i > 0 && s.m != old_m) snprintf(rescale, sizeof rescale, "exp(%g - %g)", old_m, s.m);
        printf("  %-10g %10g %12.6f %16s\n", x[i], s.m, s.d, rescale);
    }
    printf("  softmax = exp(x - %g) / %.6f:", s.m, s.d);
    for (int i = 0; i < n; i++) printf(" %.4f", expf(x[i] - s.m) / s.d);
    printf("\n");
}

static online_md state_of(const float *x, int n)
{
    online_md s = online_md_identity();
    for (int i = 0; i < n; i++) s = online_md_push<1>(s, &x[i]);
    return s;
}

static void show_merge(void)
{
    const float a[4] = {3, 1, 4, 1}, b[4] = {5, 9, 2, 6}, all[8] = {3, 1, 4, 1, 5, 9, 2, 6};
    online_md sa = state_of(a, 4), sb = state_of(b, 4), ab = online_md_merge(sa, sb),
              ba = online_md_merge(sb, sa), whole = state_of(all, 8);
    printf("Two halves summarised separately (two warps, two blocks...), then merged\n");
    printf("  [3, 1, 4, 1]            (m, d) = (%g, %.6f)\n", sa.m, sa.d);
    printf("  [5, 9, 2, 6]            (m, d) = (%g, %.6f)\n", sb.m, sb.d);
    printf("  merge(first, second)    (m, d) = (%g, %.6f)\n", ab.m, ab.d);
    printf("  merge(second, first)    (m, d) = (%g, %.6f)\n", ba.m, ba.d);
    printf("  the whole row at once   (m, d) = (%g, %.6f)\n", whole.m, whole.d);
    printf("  d = %.6f exp(4 - 9) + %.6f exp(9 - 9): each sum rescaled to the common max.\n\n",
           sa.d, sb.d);

    const online_md masked = online_md_identity(); /* a chunk of only -inf */
    const float naive = masked.d * expf(masked.m - masked.m) + masked.d * expf(masked.m - masked.m);
    const online_md safe = online_md_merge(masked, masked);
    printf("The -inf trap: merging two chunks that were entirely -inf (masked)\n");
    printf("  textbook formula        d = 0 * exp(-inf - (-inf)) + ... = %s\n",
           isnan(naive) ? "NaN" : "a number (this compiler folded it away)");
    printf("  online_md_merge         (m, d) = (%g, %g): exp is taken against 0 when m = -inf\n\n",
           safe.m, safe.d);
}

/* The views table (GPU only): which accesses each view gets. */
static const char *online_access_name(const float *x, long long ldx, const float *y, long long ldy,
                                      long long rows, long long cols)
{
    switch (softmax_online_access(x, ldx, y, ldy, rows, cols)) {
    case ONLINE_FLOAT4: return "128-bit";
    case ONLINE_PEELED: return "128-bit, peeled";
    case ONLINE_X32: return "y 128, x 32-bit";
    default: return "32-bit";
    }
}

int main(int argc, char **argv)
{
    options o;
    lesson_init(&LESSON, &o, argc, argv);

    printf("The running state (m, d) on the Triton teaching example's [1, 2, 3, 4], one element at a time\n");
    const float small[4] = {1, 2, 3, 4};
    show_steps(small, 4);
    printf("\nand on [1000, 1001, 1002]: d never holds more than the count of elements\n");
    const float big[3] = {1000, 1001, 1002};
    show_steps(big, 3);
    printf("\n");

    show_merge();

    float y[4];
    lesson_run_small(&LESSON, small, y, 1, 4);
    print_row("GPU online, [1, 2, 3, 4]", y, 4);
    lesson_run_small(&LESSON, big, y, 1, 3);
    print_row("GPU online, [1000, ...]", y, 3);
    printf("\n");

    const int status = lesson_run(&LESSON, &o);
    /* The same rows as misaligned views (GPU only; common/timing.cu). */
    if (status == 0) time_views(softmax_online_strided, online_access_name, &o);
    return status;
}
