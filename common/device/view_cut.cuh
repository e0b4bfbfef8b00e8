/* Taught in lesson 5. Cutting the rows of a view so that misaligned views
 * keep their 128-bit accesses ("peeling"). Lesson 6 and the row engine
 * (lessons 8 and 9) include it too.
 *
 * A float4 access needs a 16-byte aligned address. A view whose rows start
 * anywhere (an offset base, a row stride that is not a multiple of 4,
 * N % 4 != 0) would otherwise need 32-bit accesses for every element. So
 * each row is cut into a head of 0-3 floats up to its first 16-byte
 * boundary, a body of whole float4s, and a tail of 0-3 floats. The head
 * and the tail, at most 6 floats (the "extras"), are taken one at a time
 * by the first threads of the row; the body stays float4.
 *
 * One cut serves both views only if every row of x starts at the same
 * offset from a 16-byte boundary as the same row of y (view_can_peel):
 * then one thread's float4 of x is, element for element, one float4 of y.
 * x = a[:, 1:] with y = b[:, 1:] qualifies; x = a[:, 1:] with a fresh,
 * aligned y does not: the rows can still be cut at y's boundaries, with x
 * read in 32-bit loads (view_load4_x32), or everything is 32-bit. */
#ifndef COMMON_DEVICE_VIEW_CUT_CUH
#define COMMON_DEVICE_VIEW_CUT_CUH

#include <stdint.h>

#include "vec.cuh"

#define VIEW_MAX_EXTRAS 6 /* head (<= 3) + tail (<= 3) */

typedef struct {
    int head;       /* floats before the body             */
    int nextra;     /* head + tail                        */
    long long nvec; /* whole float4s in the body          */
} view_cut;

/* Floats from the 16-byte boundary below x (0-3). Host side: the kernels
 * take it as an argument. Computing it in a kernel from x's address
 * (a pointer-to-integer cast) kept the compiler from proving that x is
 * only read, and cost x its read-only loads (ld.global.nc): 83.7 against
 * 91.6 % of copy in lesson 8 at 128 x 2^19 on an H100. */
static inline int view_mis(const float *x) { return (int)(((uintptr_t)x / sizeof(float)) % 4); }

/* Can one cut serve both views? Rows of x and y start at the same offset
 * from a 16-byte boundary: same base offset, and strides that differ by a
 * multiple of 4 floats. */
static inline int view_can_peel(const float *x, long long ldx, const float *y, long long ldy,
                                long long rows)
{
    const uintptr_t ax = (uintptr_t)x, ay = (uintptr_t)y;
    return ax % 4 == 0 && ax % 16 == ay % 16 && (rows <= 1 || (ldx - ldy) % 4 == 0);
}

/* Short rows of a y with holes between them at row offsets that vary
 * (ldy > cols, ldy % 4 != 0): each row boundary leaves a 32-byte sector of
 * y partly written, which the memory system reads back from DRAM to merge.
 * There 32-bit stores beat the peeled float4 ones, up to N = 256: with
 * both views padded to a row stride of N + 1, 66.6 % of the aligned speed
 * at N = 32 against 59.4 % peeled (lesson 5, H100). Lesson 6 keeps
 * peeling: its 32-bit kernels are slower there from N = 64
 * (docs/experiments/rows-peeled-views.md). */
static inline int view_y_holes_short(long long ldy, long long rows, long long cols)
{
    return rows > 1 && ldy > cols && ldy % 4 != 0 && cols <= 256;
}

/* The cut of a row of cols elements whose first h elements (at most)
 * make its head: a body of whole V-element vectors, then the tail. */
template <int V>
__device__ __forceinline__ view_cut view_cut_head(long long h, long long cols)
{
    if (h > cols) h = cols;
    view_cut c;
    c.head = (int)h;
    c.nvec = (cols - h) / V;
    c.nextra = (int)(h + (cols - h) % V);
    return c;
}

/* The cut of row `row` of a view whose base is `mis` floats past a 16-byte
 * boundary. (row & 3) * (ldx & 3) is row * ldx modulo 4 without a 64-bit
 * multiply. */
template <int V> /* elements per 16-byte vector: 4 floats, 8 16-bit values */
__device__ __forceinline__ view_cut view_row_cut_v(long long row, long long ldx, int mis, long long cols)
{
    const int off = (int)((mis + (row & (V - 1)) * (ldx & (V - 1))) & (V - 1));
    return view_cut_head<V>((V - off) & (V - 1), cols);
}
__device__ __forceinline__ view_cut view_row_cut(long long row, long long ldx, int mis, long long cols)
{
    return view_row_cut_v<4>(row, ldx, mis, cols);
}

/* Lesson 9: the same cut for 16-bit rows (__half, __nv_bfloat16), whose
 * 16 bytes hold 8 elements: a head and a tail of 0-7 elements each, a
 * body of whole 8-element vectors. view16_mis is the base's offset from
 * 16 bytes in elements (0-7), view16_can_peel the test that one cut serves
 * both views (same offset from 16 bytes; strides differing by a multiple
 * of 8 elements). */
#define VIEW16_MAX_EXTRAS 14 /* head (<= 7) + tail (<= 7) */
static inline int view16_mis(const void *x) { return (int)(((uintptr_t)x / 2) % 8); }
static inline int view16_can_peel(const void *x, long long ldx, const void *y, long long ldy, long long rows)
{
    const uintptr_t ax = (uintptr_t)x, ay = (uintptr_t)y;
    return ax % 2 == 0 && ax % 16 == ay % 16 && (rows <= 1 || (ldx - ldy) % 8 == 0);
}
__device__ __forceinline__ view_cut view16_row_cut(long long row, long long ldx, int mis, long long cols)
{
    return view_row_cut_v<8>(row, ldx, mis, cols);
}

/* Where extra j (< nextra) lies in the row: the head first, then the tail
 * (V: elements per 16-byte vector). */
template <int V>
__device__ __forceinline__ long long view_extra_at_v(view_cut c, int j)
{
    return j < c.head ? j : c.head + V * c.nvec + (j - c.head);
}
__device__ __forceinline__ long long view_extra_at(view_cut c, int j) { return view_extra_at_v<4>(c, j); }

/* Extra j of the row at xr, or -inf (exp gives 0) when there is none. */
__device__ __forceinline__ float view_extra_load(const float *xr, view_cut c, int j)
{
    return j < c.nextra ? xr[view_extra_at(c, j)] : -INFINITY;
}
/* The same two for lesson 9's 16-bit rows (view16_row_cut's 8-element
 * vectors), the element widened (elem_load, vec.cuh). */
__device__ __forceinline__ long long view16_extra_at(view_cut c, int j) { return view_extra_at_v<8>(c, j); }
template <class T>
__device__ __forceinline__ float view_extra_load(const T *xr, view_cut c, int j)
{
    return j < c.nextra ? elem_load(xr + view16_extra_at(c, j)) : -INFINITY;
}

/* Four floats of x for a body cut at y's boundaries, when x's rows are
 * misaligned against y's (no cut fits both): y keeps its float4 stores,
 * x is read in 32-bit loads (lesson 6; lesson 8's paths 3 and 3g). */
__device__ __forceinline__ void view_load4_x32(const float *p, float *v)
{
    v[0] = p[0];
    v[1] = p[1];
    v[2] = p[2];
    v[3] = p[3];
}

/* VEC floats of x at p: 32-bit loads when the row was cut at y's
 * boundaries (XS), load_vec otherwise. T: the storage type, float, or
 * lesson 9's __half and __nv_bfloat16 (XS only for float). */
template <int VEC, bool XS, class T>
__device__ __forceinline__ void view_load_x(const T *p, float *v)
{
    if constexpr (XS && VEC == 4) view_load4_x32(p, v);
    else load_vec<VEC>(p, v);
}

/* One 16-byte store of v[0..3] at p (16-byte aligned). With the row
 * offsets of a peeled view, nvcc split some float4 stores into 4 + 4 + 8
 * bytes (in lesson 8: 83.9 against 91.0 % of copy at 128 x 2^19 on an
 * H100); inline PTX keeps one st.global.v4. No "memory" clobber: the
 * kernels never read what they store, and a clobber (as in __stwb) keeps
 * the compiler from moving any load across the store. */
__device__ __forceinline__ void view_store4(float *p, const float *v)
{
#if defined(__CUDA_ARCH__)
    asm("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3]));
#else /* the CPU emulator */
    p[0] = v[0];
    p[1] = v[1];
    p[2] = v[2];
    p[3] = v[3];
#endif
}

#endif
