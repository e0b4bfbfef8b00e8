/* Lesson 9, step 2: lesson 8's dispatcher for any storage type.
 *
 * Lesson 8's kernels are templates over the storage type
 * (common/device/fastest_device.cuh, "storage types"), and lesson 8's
 * fx_run_typed picks the path for a 16-bit row as for a float row of the
 * same shape: rows in registers (paths 1 and 2) or shared memory (2s),
 * long rows held on chip across a cluster (3) or independent CTAs (3g),
 * split rows (4). See common/device/fastest_typed.cu. */
#include "softmax_half.h"
#include "half_internal.h"
#include "device/rows.h" /* fx_run_typed, fx_plan_typed */

fastest_plan softmax_half_fastest_run(fastest_path want, const void *x, long long ldx, void *y, long long ldy,
                                      long long rows, long long cols, dtype t, cudaStream_t stream)
{
    half_check_args("softmax_half_fastest", ldx, ldy, rows, cols, t);
    return fx_run_typed(want, t, x, ldx, y, ldy, rows, cols, stream);
}

fastest_plan softmax_half_fastest_plan(fastest_path want, const void *x, long long ldx, const void *y, long long ldy,
                                       long long rows, long long cols, dtype t)
{
    return fx_plan_typed(want, t, x, ldx, y, ldy, rows, cols);
}

void softmax_half_fastest(const void *x, long long ldx, void *y, long long ldy, long long rows, long long cols,
                          dtype t, cudaStream_t stream)
{
    softmax_half_fastest_run(FASTEST_AUTO, x, ldx, y, ldy, rows, cols, t, stream);
}
