/* Lesson 1 program: the walk-through, the overflow, then the timing. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "harness.h"
#include "softmax_naive.h"

static const lesson LESSON = {
    1, "naive",
    "exp(x) / sum(exp(x)) with one thread per row: overflows, and reads uncoalesced",
    "2 reads + 1 write, uncoalesced", 12.0, softmax_naive, verify_rtol_sequential,
    16384, 4096,
};

int main(int argc, char **argv)
{
    options o;
    lesson_init(&LESSON, &o, argc, argv);

    printf("Softmax step by step on the host (the worked example of the Triton teaching example)\n");
    const float small[4] = {1, 2, 3, 4};
    print_steps(small, 4);
    float y[4];
    lesson_run_small(&LESSON, small, y, 1, 4);
    print_row("GPU naive kernel", y, 4);
    printf("  The kernel skips steps 1-2 and gets the same answer: here exp(x) is small.\n\n");

    printf("The same kernel on x = [1000, 1001, 1002]\n");
    const float big[3] = {1000, 1001, 1002};
    lesson_run_small(&LESSON, big, y, 1, 3);
    printf("  %-22s [%g, %g, %g]\n", "expf(x) on the host", expf(big[0]), expf(big[1]),
           expf(big[2]));
    print_row("GPU naive kernel", y, 3);
    printf("  OVERFLOW: expf(x) > FLT_MAX = %.4g once x > ln(FLT_MAX) = %.4f,\n", FLT_MAX,
           log((double)FLT_MAX));
    printf("  so every term is inf and inf / inf = NaN. Lesson 2 fixes this.\n\n");

    return lesson_run(&LESSON, &o);
}
