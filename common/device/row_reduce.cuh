/* Taught in lesson 5. Reducing a value over the threads that share a row
 * (row_reduce). Lessons 7, 9 and 10 and the row engine (lesson 8) include
 * it too.
 *
 * TPR (threads per row) <= 32: the row's threads are TPR neighbouring lanes
 * of one warp. __shfl_xor_sync with offsets TPR/2, ..., 1 exchanges values
 * only inside aligned groups of TPR lanes (lane ^ off stays in the group
 * when off < TPR), so the 32 / TPR rows of a warp reduce side by side. All
 * 32 lanes execute every shuffle, even lanes whose row is past the end.
 *
 * TPR > 32 (then TPR == the block): each warp reduces its 32 values, lane 0
 * writes the warp's result to red[warp], and after one barrier EVERY warp
 * reads all the partials and reduces them again. Each lane reads
 * red[lane % WARPS], so each group of WARPS lanes holds a full copy and
 * the butterfly over offsets WARPS/2 ... 1 leaves the total in all lanes.
 * Every warp computes the same total with the same operations in the same
 * order, so all threads get bit-identical results, with no second barrier
 * and no broadcast step. (In a xor butterfly the two partners compute a+b
 * and b+a, equal in floating point, so lanes agree bit for bit.)
 *
 * red must hold 32 floats. A caller that reduces twice per row must use
 * two different arrays (red_max, red_sum): a fast warp's write for the next
 * reduction then cannot overtake a slow warp's read of this one, because a
 * barrier of the other reduction sits between them. */
#ifndef COMMON_DEVICE_ROW_REDUCE_CUH
#define COMMON_DEVICE_ROW_REDUCE_CUH

struct op_max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct op_sum {
    __device__ float operator()(float a, float b) const { return a + b; }
};

template <int TPR, class Op>
__device__ __forceinline__ float row_reduce(float v, float *red, Op op)
{
    static_assert(TPR >= 1 && TPR <= 1024 && (TPR & (TPR - 1)) == 0, "TPR: a power of two");
    constexpr int W = TPR < 32 ? TPR : 32;
    for (int off = W / 2; off > 0; off /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
    if constexpr (TPR > 32) {
        constexpr int WARPS = TPR / 32;
        const int lane = threadIdx.x % 32;
        if (lane == 0) red[threadIdx.x / 32] = v;
        __syncthreads();
        v = red[lane % WARPS]; /* never past the WARPS partials written */
        for (int off = WARPS / 2; off > 0; off /= 2)
            v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
    }
    return v;
}

#endif
