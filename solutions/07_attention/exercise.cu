/* Solution to exercise 7: key padding from sequence lengths, with no mask
 * tensor. One warp per row; the row's length comes from its sequence,
 * lengths[row / S], as causal's came from its query, row % S. Only the
 * real scores are read (three times: max, sum, write; they are at most a
 * few KB and come back from L1/L2), and every position is written.
 *
 * The fully masked row: a length-0 sequence has max = -inf. The exponent
 * is taken against 0 then (no -inf - (-inf) = NaN), the sum is 0, and the
 * reciprocal is taken as 0 instead of inf (0 * inf = NaN): zeros.
 *
 * Two other answers, and what they cost:
 *   - build a byte mask [batch * S, S] from the lengths and call the
 *     lesson's softmax_masked: a kernel to write it, 1 byte more per score
 *     to read, and the padded scores are still read (the mask then
 *     replaces them, NaN included, by -inf, so it is correct too);
 *   - fast: a fifth kind in softmax_attention.cu whose row_length is
 *     lengths[r / S] instead of q + 1: lesson 5's row in registers, 1 read
 *     + 1 write of the real scores.
 * Multiplying by a 0/1 mask after exp would NOT do: exp(NaN) * 0 = NaN,
 * and the padded scores still take part in the max. */
#include <math.h>

#include "check.h"
#include "exercise.h"

#define WARPS_PER_BLOCK 8

__device__ __forceinline__ float warp_max(float v)
{
    for (int off = 16; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32)
padded_kernel(const float *__restrict__ x, const int *__restrict__ lengths, float *__restrict__ y,
              long long rows, long long S, float scale)
{
    const long long row = (long long)blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    /* The same for all 32 lanes of a warp: a whole warp skips, so the
     * full-mask shuffles below always have every lane. */
    if (row >= rows) return;

    const long long n = lengths[row / S]; /* real keys of this row */
    const float *xr = x + row * S;
    float *yr = y + row * S;

    float m = -INFINITY;
    for (long long k = lane; k < n; k += 32) m = fmaxf(m, xr[k]);
    m = warp_max(m);
    const float shift = m == -INFINITY ? 0.0f : m;

    float s = 0.0f;
    for (long long k = lane; k < n; k += 32) s += expf((xr[k] - shift) * scale);
    s = warp_sum(s);
    const float inv = s == 0.0f ? 0.0f : 1.0f / s;

    for (long long k = lane; k < S; k += 32) yr[k] = k < n ? expf((xr[k] - shift) * scale) * inv : 0.0f;
}

void softmax_padded(const float *x, const int *lengths, float *y, long long batch, long long S,
                    float scale, cudaStream_t stream)
{
    const long long rows = batch * S;
    if (rows < 1) return;
    const unsigned blocks = (unsigned)((rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK);
    padded_kernel<<<blocks, WARPS_PER_BLOCK * 32, 0, stream>>>(x, lengths, y, rows, S, scale);
    CUDA_CHECK_LAUNCH();
}
