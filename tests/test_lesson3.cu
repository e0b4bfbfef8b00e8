/* Lesson 3's kernels beyond the kernel matrix (test_kernels.cu): row
 * lengths around the warp and block sizes, hand-made special rows, and
 * 64-bit offsets (tests/edge_rows.h).
 *
 * The single row longer than 2^31 elements runs only with 1024 threads: a
 * single block of 256 would take seconds more, and both sizes are the same
 * template code (softmax_three_pass.cu). */
#include "../lessons/03_three_pass/softmax_three_pass.h"
#include "../tests/edge_rows.h"

int main(void)
{
    int count = 0;
    int have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError(); /* clear the no-device error, if any */

    edge_check("lesson3 three-pass", softmax_three_pass, have_gpu);
    edge_check("lesson3 three-pass-1024", softmax_three_pass_1024, have_gpu);

    big_check("lesson3 three-pass", softmax_three_pass, (1LL << 21) + 1, 1024, have_gpu);
    big_check("lesson3 three-pass-1024", softmax_three_pass_1024, 1, (1LL << 31) + 33, have_gpu);
    return test_exit_status();
}
