/* Lesson 2 program: the max shift rescues [1000, 1001, 1002]; then the
 * timing, to see what the extra pass over the row costs. */
#include <stdio.h>

#include "harness.h"
#include "softmax_stable.h"

static const lesson LESSON = {
    2, "stable",
    "subtract the row max first: no overflow, at the price of a third pass",
    "3 reads + 1 write, uncoalesced", 16.0, softmax_stable, verify_rtol_sequential,
    16384, 4096,
};

int main(int argc, char **argv)
{
    options o;
    lesson_init(&LESSON, &o, argc, argv);

    printf("The input that broke lesson 1, step by step on the host\n");
    const float big[3] = {1000, 1001, 1002};
    print_steps(big, 3);
    float y[4];
    lesson_run_small(&LESSON, big, y, 1, 3);
    print_row("GPU stable kernel", y, 3);
    printf("  Every exponent is now <= 0, so exp(x - max) <= 1: nothing can overflow.\n\n");

    const float small[4] = {1, 2, 3, 4};
    lesson_run_small(&LESSON, small, y, 1, 4);
    printf("And on [1, 2, 3, 4] the answer is unchanged:\n");
    print_row("GPU stable kernel", y, 4);
    printf("\n");

    return lesson_run(&LESSON, &o);
}
