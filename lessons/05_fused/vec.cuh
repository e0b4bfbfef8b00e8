/* Lesson 5: moving VEC consecutive floats, VEC = 4 as one 128-bit access
 * (float4), VEC = 1 as one 32-bit access: the same kernel source serves
 * aligned rows and any view, VEC being a template parameter. For VEC = 4
 * the address must be 16-byte aligned; each lesson checks its views before
 * choosing VEC = 4. Lessons 6, 7 and 8 include this header. */
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
