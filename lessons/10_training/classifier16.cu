/* Lesson 10: the fused classifier over float16 and bfloat16 logits, the operation of classifier.cuh on the
 * engine's 16-bit paths (its own translation unit: it compiles beside classifier.cu). */
#include "classifier.cuh"

fastest_plan classifier_plan16(const void *x, long long rows, long long cols, dtype t)
{
    return fx_plan_typed_op<op_cross_entropy<true>>(ce_want<true>(cols), t, x, cols, x, cols, rows, cols);
}

void classifier_fused_typed(void *logits, const int *targets, float *losses, float *loss, long long rows,
                            long long cols, int ignore_index, train_reduction reduction, dtype t, cudaStream_t stream)
{
    if (t == DTYPE_F32) {
        classifier_fused((float *)logits, targets, losses, loss, rows, cols, ignore_index, reduction, stream);
        return;
    }
    const fastest_plan p = classifier_plan16(logits, rows, cols, t);
    if (t == DTYPE_F16)
        ce_run<true>(p, (__half *)logits, targets, losses, loss, rows, cols, ignore_index, reduction, t, stream);
    else
        ce_run<true>(p, (__nv_bfloat16 *)logits, targets, losses, loss, rows, cols, ignore_index, reduction, t,
                     stream);
}
