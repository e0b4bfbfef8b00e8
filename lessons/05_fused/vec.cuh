/* Lesson 5: moving VEC consecutive floats in one access. Lessons 6, 7 and
 * 8 include this header.
 *
 * VEC = 4: one 128-bit instruction (ld.global.v4 / st.global.v4, or their
 * shared-memory forms); the address must be 16-byte aligned, which each
 * caller's host side guarantees (softmax_fused_can_use_float4, a peeled
 * cut, ...). VEC = 1: one float. x reaches the read-only path
 * (ld.global.nc) when the kernel's x is `const float *__restrict__`: the
 * compiler can then prove that nothing writes it. */
#ifndef LESSON05_VEC_CUH
#define LESSON05_VEC_CUH

template <int VEC>
__device__ __forceinline__ void load_vec(const float *p, float *v)
{
    if constexpr (VEC == 4) {
        const float4 q = *reinterpret_cast<const float4 *>(p);
        v[0] = q.x;
        v[1] = q.y;
        v[2] = q.z;
        v[3] = q.w;
    } else {
        v[0] = *p;
    }
}

template <int VEC>
__device__ __forceinline__ void store_vec(float *p, const float *v)
{
    if constexpr (VEC == 4) {
        *reinterpret_cast<float4 *>(p) = make_float4(v[0], v[1], v[2], v[3]);
    } else {
        *p = v[0];
    }
}

#endif
