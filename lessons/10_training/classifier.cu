/* Lesson 10: the cross-entropy loss and the fused classifier over float logits (the operation:
 * classifier.cuh), the small launches of the reduced loss, and the plans. */
#include "classifier.cuh"

/* ---- the small launches: the mean's count, the sum after ---------------- */
#define CLS_BLOCK 256

/* Block b's slice of n values, [b * slice, (b + 1) * slice), slice = ceil(n / blocks): the same bits every run. */
__device__ __forceinline__ void classifier_slice(long long n, long long *begin, long long *end)
{
    const long long slice = (n + gridDim.x - 1) / gridDim.x;
    *begin = blockIdx.x * slice;
    *end = *begin + slice < n ? *begin + slice : n;
}

/* At least 8 values per thread, at most CLS_MAX_PARTS blocks. */
static int classifier_parts(long long n)
{
    const long long g = (n + 8 * CLS_BLOCK - 1) / (8 * CLS_BLOCK);
    return (int)(g < 1 ? 1 : g > CLS_MAX_PARTS ? CLS_MAX_PARTS : g);
}

/* The mean's count, one launch: each block counts a slice of the targets (one block reading all M would
 * take as long as the main kernel at M = 2^21 rows of 32), the last block adds the parts (exact). */
__global__ void __launch_bounds__(CLS_BLOCK)
classifier_count_kernel(const int *__restrict__ targets, long long rows, int ignore_index, unsigned *parts,
                        unsigned *done, classifier_scale *__restrict__ out)
{
    __shared__ unsigned red[32];
    __shared__ bool last;
    long long begin, end;
    classifier_slice(rows, &begin, &end);
    unsigned c = 0;
    for (long long i = begin + threadIdx.x; i < end; i += CLS_BLOCK) c += targets[i] != ignore_index;
    c = ce_block_sum(c, red);
    if (threadIdx.x == 0) {
        parts[blockIdx.x] = c;
        last = ce_count_in(done, gridDim.x);
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        unsigned total = 0;
        for (unsigned b = 0; b < gridDim.x; b++) total += __ldcg(parts + b);
        out->count = total;
        out->dloss = 1.0f / (float)total;
        *done = 0;
    }
}

/* The reduced loss after the main launch: each block sums a slice of the n values, the last adds the parts. */
__global__ void __launch_bounds__(CLS_BLOCK)
classifier_sum_kernel(const float *__restrict__ vals, long long n, float *parts, unsigned *done,
                      const classifier_scale *__restrict__ mean, float *__restrict__ loss)
{
    __shared__ float red[32];
    __shared__ bool last;
#if FX_CLUSTER_CODE
    /* a programmatic dependent (classifier_sum): wait until the kernel before has finished, its values visible */
    cudaGridDependencySynchronize();
#endif
    long long begin, end;
    classifier_slice(n, &begin, &end);
    float s = 0.0f;
    for (long long i = begin + threadIdx.x; i < end; i += CLS_BLOCK) s += vals[i];
    s = ce_block_sum(s, red);
    if (threadIdx.x == 0) {
        parts[blockIdx.x] = s;
        last = ce_count_in(done, gridDim.x);
    }
    __syncthreads();
    if (last) ce_total(parts, gridDim.x, mean, done, loss, red);
}

void classifier_count(const int *targets, long long rows, int ignore_index, unsigned *parts, unsigned *done,
                      classifier_scale *out, cudaStream_t stream)
{
    classifier_count_kernel<<<classifier_parts(rows), CLS_BLOCK, 0, stream>>>(targets, rows, ignore_index, parts, done,
                                                                              out);
    CUDA_CHECK_LAUNCH();
}

/* A programmatic dependent where the GPU and the build have it (sm_90, as lesson 8's path 4): it starts
 * while the kernel before ends (docs/experiments/training-classifier-loss-grid.md). */
void classifier_sum(const float *vals, long long n, float *parts, unsigned *done, const classifier_scale *mean,
                    float *loss, cudaStream_t stream)
{
    static int dependent = -1;
    if (dependent < 0) dependent = fx_can_launch_clusters((const void *)classifier_sum_kernel);
    cudaLaunchAttribute attr[1];
    const unsigned blocks = (unsigned)classifier_parts(n);
    const cudaLaunchConfig_t lc = fx_dependent_config(blocks, CLS_BLOCK, stream, attr, dependent);
    CUDA_CHECK(cudaLaunchKernelEx(&lc, classifier_sum_kernel, vals, n, parts, done, mean, loss));
    CUDA_CHECK_LAUNCH();
}

/* ---- the float entries ------------------------------------------------------ */

/* The engine's plan for contiguous rows of float logits. */
template <bool GRAD>
static fastest_plan ce_plan(const float *x, long long rows, long long cols)
{
    return fx_plan_op<op_cross_entropy<GRAD>>(ce_want<GRAD>(cols), x, cols, x, cols, rows, cols);
}

void classifier_fused(float *logits, const int *targets, float *losses, float *loss, long long rows, long long cols,
                      int ignore_index, train_reduction reduction, cudaStream_t stream)
{
    ce_run<true>(ce_plan<true>(logits, rows, cols), logits, targets, losses, loss, rows, cols, ignore_index, reduction,
                 DTYPE_F32, stream);
}

void cross_entropy_forward(const float *x, const int *targets, float *loss, long long rows, long long cols,
                           int ignore_index, cudaStream_t stream)
{
    /* x stands for the output too: the loss writes no element of it */
    const fastest_plan p = ce_plan<false>(x, rows, cols);
    ce_run<false>(p, (float *)x, targets, loss, nullptr, rows, cols, ignore_index, TRAIN_SUM, DTYPE_F32, stream);
}

fastest_plan classifier_plan_at(long long rows, long long cols, dtype t)
{
    return t == DTYPE_F32 ? ce_plan<true>(TRAIN_PLAN_ADDR, rows, cols)
                          : classifier_plan16(TRAIN_PLAN_ADDR, rows, cols, t);
}

fastest_plan loss_plan_at(long long rows, long long cols) { return ce_plan<false>(TRAIN_PLAN_ADDR, rows, cols); }
