/* Lesson 3 program: the tree reduction drawn on the host, the kernel on
 * the usual examples, then the timing with 256 and with 1024 threads per
 * block (the text explains why both). */
#include <math.h>
#include <stdio.h>

#include "harness.h"
#include "softmax_three_pass.h"

static const lesson LESSON = {
    3, "three-pass",
    "one block per row: coalesced reads, shared-memory tree reductions (256 threads)",
    "3 reads + 1 write, coalesced", 16.0, softmax_three_pass, verify_rtol,
    16384, 4096,
};

static const lesson LESSON_1024 = {
    3, "three-pass-1024",
    "the same kernel with 1024 threads per block",
    "3 reads + 1 write, coalesced", 16.0, softmax_three_pass_1024, verify_rtol,
    16384, 4096,
};

/* The max tree of block_reduce.h on 8 values, one line per step. */
static void show_tree(void)
{
    float buf[8] = {3, 1, 4, 1, 5, 9, 2, 6};
    printf("The block's max as a tree, drawn for a block of 8 threads\n");
    print_row("buf (one per thread)", buf, 8);
    for (int s = 4; s > 0; s /= 2) {
        char label[32];
        for (int t = 0; t < s; t++) buf[t] = fmaxf(buf[t], buf[t + s]);
        snprintf(label, sizeof label, "s = %d: t < %d", s, s);
        print_row(label, buf, s);
    }
    printf("  Thread t < s combines buf[t] and buf[t + s], then the block waits at\n"
           "  __syncthreads(): log2(8) = 3 steps, buf[0] = 9 is the row max.\n\n");
}

int main(int argc, char **argv)
{
    options o;
    lesson_init(&LESSON, &o, argc, argv);

    show_tree();

    float y[4];
    const float small[4] = {1, 2, 3, 4};
    lesson_run_small(&LESSON, small, y, 1, 4);
    printf("The kernel on the Triton teaching example's worked examples "
           "(252 of the 256 threads have no element here)\n");
    print_row("[1, 2, 3, 4]", y, 4);
    const float big[3] = {1000, 1001, 1002};
    lesson_run_small(&LESSON, big, y, 1, 3);
    print_row("[1000, 1001, 1002]", y, 3);
    printf("\n");

    int status = lesson_run(&LESSON, &o);
    printf("\n");
    int status_1024 = lesson_run(&LESSON_1024, &o);
    return status ? status : status_1024;
}
