/* The CPU emulator's own tests (common/emu, docs/emulator.md).
 *
 * Built twice from this one file:
 *   - for the emulator (build/emu/tests/emu/test_emu, and under ASan in
 *     build/emu-asan/): every test below runs;
 *   - with nvcc, on a machine with a GPU (build/tests/emu/test_emu): the
 *     feature tests run on the GPU and prove that what this file expects is
 *     what a GPU does; the planted-bug tests are skipped (a GPU does not
 *     report them: that is the point).
 *
 * Feature tests: indices in 3-D, every shuffle with every width, votes,
 * barrier counts, static and dynamic shared memory (above 48 KB too),
 * atomics, launch forms (templates, streams, function pointers), launch
 * errors, math intrinsics, and four small softmax kernels written the way
 * lessons 3-6 write theirs (tree reduction in shared memory, warp per row,
 * row in registers with float4 and shuffle widths, row in > 48 KB of
 * dynamic shared memory), checked against the float64 reference.
 *
 * Planted bugs (tests/emu/planted.cu), each an expected failure reported
 * as a PASS of "emu: catches ...": a missing __syncthreads in either
 * direction, a missing __syncwarp, divergent barriers, shuffles that read
 * lanes outside the mask, after an early return, in a partial warp, or
 * deadlock against a barrier, unwritten shared memory, and, in child
 * processes, out-of-bounds reads and writes of global and dynamic shared
 * memory (caught by AddressSanitizer in the ASan build, by guard pages and
 * canaries otherwise) and inline PTX. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef CUDA_EMU
#include <sys/wait.h>
#include <unistd.h>
#endif

#include "check.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "../test.h"
#include "planted.h"

#ifdef CUDA_EMU
static const int EMULATED = 1;
#else
static const int EMULATED = 0;
#endif

/* ---- small helpers ------------------------------------------------------------- */
template <class T> static T *dev_alloc(size_t n)
{
    T *p;
    CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
    return p;
}

template <class T> static void to_host(T *h, const T *d, size_t n)
{
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(h, d, n * sizeof(T), cudaMemcpyDeviceToHost));
}

template <class T> static void to_dev(T *d, const T *h, size_t n)
{
    CUDA_CHECK(cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice));
}

/* ---- managed memory ----------------------------------------------------------------- */
__global__ void add_one_kernel(float *v, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] += 1.0f;
}

/* cudaMallocManaged memory: the host writes it, a kernel adds to it, the
 * host reads it after a sync, and cudaFree frees it (as on a GPU). */
static void test_managed(void)
{
    float *v;
    CUDA_CHECK(cudaMallocManaged(&v, 100 * sizeof(float)));
    for (int i = 0; i < 100; i++) v[i] = (float)i;
    add_one_kernel<<<2, 64>>>(v, 100);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    int bad = 0;
    for (int i = 0; i < 100; i++) bad += v[i] != (float)i + 1.0f;
    test_expect(!bad, "emu: managed memory is written by the host and a kernel, and freed by cudaFree", "%d wrong",
                bad);
    CUDA_CHECK(cudaFree(v));
}

/* ---- indices in three dimensions ----------------------------------------------------- */
__global__ void index3d_kernel(unsigned *out)
{
    const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    const unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
    const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    out[block * per_block + thread] = blockIdx.z << 24 | blockIdx.y << 20 | blockIdx.x << 16 |
                                      threadIdx.z << 8 | threadIdx.y << 4 | threadIdx.x;
}

static void test_index3d(void)
{
    const dim3 grid(3, 2, 2), block(4, 3, 2);
    const int n = 12 * 24;
    unsigned *d = dev_alloc<unsigned>(n), h[12 * 24];
    index3d_kernel<<<grid, block>>>(d);
    CUDA_CHECK_LAUNCH();
    to_host(h, d, n);
    int bad = 0;
    for (unsigned bz = 0; bz < 2; bz++)
        for (unsigned by = 0; by < 2; by++)
            for (unsigned bx = 0; bx < 3; bx++)
                for (unsigned tz = 0; tz < 2; tz++)
                    for (unsigned ty = 0; ty < 3; ty++)
                        for (unsigned tx = 0; tx < 4; tx++) {
                            unsigned b = bx + 3 * (by + 2 * bz), t = tx + 4 * (ty + 3 * tz);
                            unsigned want = bz << 24 | by << 20 | bx << 16 | tz << 8 | ty << 4 | tx;
                            bad += h[b * 24 + t] != want;
                        }
    test_expect(!bad, "emu: 3-D grid and block indices (grid 3x2x2, block 4x3x2)", "%d wrong", bad);
    CUDA_CHECK(cudaFree(d));
}

/* ---- shuffles: every kind, every width ---------------------------------------------------- */
enum { SH_IDX, SH_UP, SH_DOWN, SH_XOR, SH_KINDS };
/* Three lane operands per kind (host and device: a function, since a host
 * array is not visible in device code). */
__host__ __device__ inline int shuffle_arg(int kind, int a)
{
    const int args[SH_KINDS][3] = {{5, -1, 37}, {1, 3, 31}, {1, 5, 31}, {1, 6, 16}};
    return args[kind][a];
}
static const int WIDTHS[] = {32, 16, 8, 4, 2, 1};
#define NWIDTHS 6
#define NCASES (SH_KINDS * 3 * NWIDTHS)

__global__ void shuffle_kernel(float *out, double *out_d)
{
    const int lane = threadIdx.x;
    const float v = 1.5f * lane + 0.25f;
    const double dv = 1e10 + lane; /* an 8-byte value */
    int c = 0;
    for (int kind = 0; kind < SH_KINDS; kind++)
        for (int a = 0; a < 3; a++)
            for (int w = 0; w < NWIDTHS; w++, c++) {
                const int width = 32 >> w, arg = shuffle_arg(kind, a);
                float r;
                double rd;
                switch (kind) {
                case SH_IDX: /* each lane its own source: arg + 3 * lane */
                    r = __shfl_sync(0xffffffffu, v, arg + 3 * lane, width);
                    rd = __shfl_sync(0xffffffffu, dv, arg + 3 * lane, width);
                    break;
                case SH_UP:
                    r = __shfl_up_sync(0xffffffffu, v, (unsigned)arg, width);
                    rd = __shfl_up_sync(0xffffffffu, dv, (unsigned)arg, width);
                    break;
                case SH_DOWN:
                    r = __shfl_down_sync(0xffffffffu, v, (unsigned)arg, width);
                    rd = __shfl_down_sync(0xffffffffu, dv, (unsigned)arg, width);
                    break;
                default:
                    r = __shfl_xor_sync(0xffffffffu, v, arg, width);
                    rd = __shfl_xor_sync(0xffffffffu, dv, arg, width);
                    break;
                }
                out[c * 32 + lane] = r;
                out_d[c * 32 + lane] = rd;
            }
}

/* The source lane as the PTX ISA defines shfl.sync (c = segment mask and
 * clamp as CUDA's intrinsics pass them); -1: the caller's own value. */
static int expected_source(int kind, int lane, int arg, int width)
{
    const int seg = lane & ~(width - 1);
    switch (kind) {
    case SH_IDX: return seg + (arg & (width - 1));
    case SH_UP: {
        int j = lane - (arg & 31);
        return j >= seg ? j : -1;
    }
    case SH_DOWN: {
        int j = lane + (arg & 31);
        return j <= seg + width - 1 ? j : -1;
    }
    default: {
        int j = lane ^ (arg & 31);
        return j <= seg + width - 1 ? j : -1;
    }
    }
}

static void test_shuffles(void)
{
    float *d = dev_alloc<float>(NCASES * 32), h[NCASES * 32];
    double *dd = dev_alloc<double>(NCASES * 32), hd[NCASES * 32];
    shuffle_kernel<<<1, 32>>>(d, dd);
    CUDA_CHECK_LAUNCH();
    to_host(h, d, NCASES * 32);
    to_host(hd, dd, NCASES * 32);
    static const char *const names[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync",
                                        "__shfl_xor_sync"};
    int c = 0;
    for (int kind = 0; kind < SH_KINDS; kind++) {
        int bad = 0;
        char first[160] = "";
        for (int a = 0; a < 3; a++)
            for (int w = 0; w < NWIDTHS; w++, c++)
                for (int lane = 0; lane < 32; lane++) {
                    const int width = WIDTHS[w];
                    const int arg = kind == SH_IDX ? shuffle_arg(kind, a) + 3 * lane : shuffle_arg(kind, a);
                    int src = expected_source(kind, lane, arg, width);
                    if (src < 0) src = lane;
                    const float want = 1.5f * src + 0.25f;
                    const double want_d = 1e10 + src;
                    if (h[c * 32 + lane] != want || hd[c * 32 + lane] != want_d) {
                        if (!bad++)
                            snprintf(first, sizeof first, "arg %d width %d lane %d: got %g, want %g",
                                     arg, width, lane, h[c * 32 + lane], want);
                    }
                }
        char name[160];
        snprintf(name, sizeof name, "emu: %s, float and double, widths 32 ... 1", names[kind]);
        test_expect(!bad, name, "%d wrong, first: %s", bad, first);
    }
    CUDA_CHECK(cudaFree(d));
    CUDA_CHECK(cudaFree(dd));
}

/* ---- votes, barrier counts, warp reductions ------------------------------------------------- */
__global__ void vote_kernel(int *out)
{
    const int lane = threadIdx.x % 32, t = threadIdx.x;
    const unsigned ballot = __ballot_sync(0xffffffffu, lane % 3 == 0);
    const int any = __any_sync(0xffffffffu, lane == 7);
    const int all = __all_sync(0xffffffffu, lane < 32);
    const int not_all = __all_sync(0xffffffffu, lane < 31);
    const unsigned active = __activemask();
    const int count = __syncthreads_count(t % 3 == 0);
    const int and_ = __syncthreads_and(t < 128);
    const int or_ = __syncthreads_or(t == 77);
#if defined(CUDA_EMU) || (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800)
    const int radd = (int)__reduce_add_sync(0xffffffffu, (unsigned)lane);
    const int rmax = __reduce_max_sync(0xffffffffu, lane - 40);
#else
    const int radd = -1, rmax = -1; /* sm_80 and later only */
#endif
    int *o = out + t * 10;
    o[0] = (int)ballot;
    o[1] = any;
    o[2] = all;
    o[3] = not_all;
    o[4] = (int)active;
    o[5] = count;
    o[6] = and_;
    o[7] = or_;
    o[8] = radd;
    o[9] = rmax;
}

static void test_votes(void)
{
    int *d = dev_alloc<int>(128 * 10), h[128 * 10];
    vote_kernel<<<1, 128>>>(d);
    CUDA_CHECK_LAUNCH();
    to_host(h, d, 128 * 10);
    unsigned want_ballot = 0;
    for (int l = 0; l < 32; l += 3) want_ballot |= 1u << l;
    int bad = 0, bad_reduce = 0, reduce_ran = h[8] != -1;
    for (int t = 0; t < 128; t++) {
        const int *o = h + t * 10;
        bad += (unsigned)o[0] != want_ballot || o[1] != 1 || o[2] != 1 || o[3] != 0 ||
               (unsigned)o[4] != 0xffffffffu || o[5] != 43 || o[6] != 1 || o[7] != 1;
        if (reduce_ran) bad_reduce += o[8] != 496 || o[9] != -9;
    }
    test_expect(!bad, "emu: __ballot_sync, __any_sync, __all_sync, __activemask, __syncthreads_count/and/or",
                "%d threads wrong (thread 0: ballot %08x count %d)", bad, (unsigned)h[0], h[5]);
    if (reduce_ran)
        test_expect(!bad_reduce, "emu: __reduce_add_sync, __reduce_max_sync", "%d threads wrong", bad_reduce);
    else
        test_skip("emu: __reduce_add_sync, __reduce_max_sync", "this GPU is older than sm_80");
    CUDA_CHECK(cudaFree(d));
}

/* ---- shared memory: static per block, dynamic sized by the launch ----------------------------- */
__global__ void per_block_shared_kernel(unsigned *out)
{
    static __shared__ unsigned owner; /* "static __shared__", as NVIDIA's samples write it */
    __shared__ unsigned seen[64];
    if (threadIdx.x == 0) owner = blockIdx.x;
    __syncthreads();
    seen[threadIdx.x] = owner * 1000 + threadIdx.x;
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = seen[63 - threadIdx.x];
}

static void test_static_shared(void)
{
    const int blocks = 5;
    unsigned *d = dev_alloc<unsigned>(blocks * 64), h[5 * 64];
    per_block_shared_kernel<<<blocks, 64>>>(d);
    CUDA_CHECK_LAUNCH();
    to_host(h, d, blocks * 64);
    int bad = 0;
    for (int b = 0; b < blocks; b++)
        for (int t = 0; t < 64; t++) bad += h[b * 64 + t] != (unsigned)(b * 1000 + 63 - t);
    test_expect(!bad, "emu: static __shared__ variables are per block", "%d wrong", bad);
    CUDA_CHECK(cudaFree(d));
}

template <int ID> __global__ void reverse_kernel(const float *x, float *y, int n)
{
    extern __shared__ float rev[];
    for (int i = threadIdx.x; i < n; i += blockDim.x) rev[i] = x[i];
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = rev[n - 1 - i];
}

static int run_reverse(int big, int n, int set_attribute, cudaError_t *launch)
{
    float *x = (float *)malloc(n * sizeof(float)), *y = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) x[i] = (float)i;
    float *dx = dev_alloc<float>(n), *dy = dev_alloc<float>(n);
    to_dev(dx, x, n);
    const size_t smem = (size_t)n * sizeof(float);
    if (big) {
        if (set_attribute)
            CUDA_CHECK(cudaFuncSetAttribute(reverse_kernel<2>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            (int)smem));
        if (set_attribute) reverse_kernel<2><<<1, 256, smem>>>(dx, dy, n);
        else reverse_kernel<1><<<1, 256, smem>>>(dx, dy, n);
    } else {
        reverse_kernel<0><<<1, 256, smem>>>(dx, dy, n);
    }
    *launch = cudaGetLastError();
    int bad = -1;
    if (*launch == cudaSuccess) {
        to_host(y, dy, n);
        bad = 0;
        for (int i = 0; i < n; i++) bad += y[i] != (float)(n - 1 - i);
    }
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    free(x);
    free(y);
    return bad;
}

static void test_dynamic_shared(void)
{
    cudaError_t e;
    int bad = run_reverse(0, 1000, 0, &e);
    test_expect(e == cudaSuccess && bad == 0, "emu: extern __shared__ sized by the launch (4000 bytes)",
                "launch %s, %d wrong", cudaGetErrorString(e), bad);
    bad = run_reverse(1, 25000, 0, &e);
    test_expect(e != cudaSuccess, "emu: 100000 bytes of dynamic shared memory without cudaFuncSetAttribute fail to launch",
                "the launch succeeded");
    bad = run_reverse(1, 25000, 1, &e);
    test_expect(e == cudaSuccess && bad == 0,
                "emu: 100000 bytes of dynamic shared memory after cudaFuncSetAttribute",
                "launch %s, %d wrong", cudaGetErrorString(e), bad);
}

/* ---- atomics ------------------------------------------------------------------------------ */
struct atomic_results {
    int add_i;
    unsigned add_u;
    float add_f;
    int max_i, min_i;
    float max_f_cas;
    unsigned inc;
    int exch;
    unsigned long long add_ull;
    int hist[8];
};

__global__ void atomics_kernel(atomic_results *r)
{
    __shared__ int hist[8];
    const int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < 8) hist[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&r->add_i, 1);
    atomicAdd(&r->add_u, 2u);
    atomicAdd(&r->add_f, 0.5f);
    atomicAdd(&r->add_ull, 3ull);
    atomicMax(&r->max_i, gid);
    atomicMin(&r->min_i, -gid);
    atomicInc(&r->inc, 9u); /* counts 0 ... 9, then wraps */
    atomicExch(&r->exch, 7);
    /* A float max through atomicCAS, the classic loop. */
    const float v = (float)(gid % 1000);
    int *addr = (int *)&r->max_f_cas, old = *addr, assumed;
    do {
        assumed = old;
        old = atomicCAS(addr, assumed, __float_as_int(fmaxf(v, __int_as_float(assumed))));
    } while (assumed != old);
    atomicAdd(&hist[threadIdx.x % 8], 1); /* shared-memory atomics */
    __syncthreads();
    if (threadIdx.x < 8) atomicAdd(&r->hist[threadIdx.x], hist[threadIdx.x]);
}

static void test_atomics(void)
{
    atomic_results h, *d = dev_alloc<atomic_results>(1);
    memset(&h, 0, sizeof h);
    h.min_i = 1;
    h.max_i = -1;
    to_dev(d, &h, 1);
    atomics_kernel<<<8, 128>>>(d);
    CUDA_CHECK_LAUNCH();
    to_host(&h, d, 1);
    int hist_ok = 1;
    for (int i = 0; i < 8; i++) hist_ok &= h.hist[i] == 128;
    test_expect(h.add_i == 1024 && h.add_u == 2048 && h.add_f == 512.0f && h.add_ull == 3072 &&
                    h.max_i == 1023 && h.min_i == -1023 && h.max_f_cas == 999.0f && h.inc == 4 &&
                    h.exch == 7 && hist_ok,
                "emu: atomicAdd/Max/Min/Inc/Exch/CAS on int, unsigned, float, unsigned long long, shared",
                "add %d %u %g %llu, max %d min %d, cas-max %g, inc %u, exch %d, hist %s", h.add_i,
                h.add_u, h.add_f, h.add_ull, h.max_i, h.min_i, h.max_f_cas, h.inc, h.exch,
                hist_ok ? "ok" : "wrong");
    CUDA_CHECK(cudaFree(d));
}

/* ---- launch forms ------------------------------------------------------------------------------ */
namespace forms {
template <int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) scale_kernel(const float *__restrict__ x, float *__restrict__ y,
                                                      int n, float a)
{
    extern __shared__ float stage[]; /* BLOCK * ITEMS floats */
    const int base = blockIdx.x * BLOCK * ITEMS;
    for (int i = 0; i < ITEMS; i++) {
        const int k = base + i * BLOCK + threadIdx.x;
        stage[i * BLOCK + threadIdx.x] = k < n ? x[k] : 0.0f;
    }
    __syncthreads();
    for (int i = 0; i < ITEMS; i++) {
        const int k = base + i * BLOCK + threadIdx.x;
        if (k < n) y[k] = a * stage[i * BLOCK + (BLOCK - 1 - threadIdx.x)];
    }
}
} // namespace forms

template <class T> __global__ void add_kernel(T *y, T v, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += v;
}

__global__ void offset_kernel(float *y, int n, float v)
{
    y += blockIdx.x * blockDim.x; /* a kernel may change its own parameters */
    n -= blockIdx.x * blockDim.x;
    if ((int)threadIdx.x < n) y[threadIdx.x] = v;
}

__global__ void other_kernel(float *y, int n, float v)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = -v;
}

static void test_launch_forms(void)
{
    const int n = 1000;
    float x[1000], y[1000];
    for (int i = 0; i < n; i++) x[i] = (float)i;
    float *dx = dev_alloc<float>(n), *dy = dev_alloc<float>(n);
    to_dev(dx, x, n);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));

    /* kern<128, 4><<<g, b, s, st>>>: template arguments, dynamic shared
     * memory and a stream. */
    forms::scale_kernel<128, 4><<<(n + 511) / 512, 128, 128 * 4 * sizeof(float), stream>>>(dx, dy, n, 2.0f);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(stream));
    to_host(y, dy, n);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        const int blk = i / 512, in = i % 512, it = in / 128, t = in % 128;
        const int src = blk * 512 + it * 128 + (127 - t);
        bad += y[i] != (src < n ? 2.0f * src : 0.0f);
    }
    test_expect(!bad, "emu: ns::kern<128, 4><<<grid, block, smem, stream>>> (templates, dynamic smem, stream)",
                "%d wrong", bad);

    /* A template deduced from the arguments, a function pointer, a
     * conditional expression, an array of kernels. */
    add_kernel<<<(n + 255) / 256, 256>>>(dy, 1.0f, n); /* T = float, deduced */
    CUDA_CHECK_LAUNCH();
    void (*fp)(float *, int, float) = offset_kernel;
    fp<<<(n + 127) / 128, 128, 0, stream>>>(dy, n, 5.0f);
    CUDA_CHECK_LAUNCH();
    to_host(y, dy, n);
    bad = 0;
    for (int i = 0; i < n; i++) bad += y[i] != 5.0f;
    const int flip = n > 10;
    (flip ? other_kernel : offset_kernel)<<<(n + 127) / 128, 128>>>(dy, n, 3.0f);
    CUDA_CHECK_LAUNCH();
    void (*table[2])(float *, int, float) = {offset_kernel, other_kernel};
    table[flip]<<<(n + 127) / 128, 128>>>(dy, n, 4.0f);
    CUDA_CHECK_LAUNCH();
    to_host(y, dy, n);
    for (int i = 0; i < n; i++) bad += y[i] != -4.0f;
    test_expect(!bad, "emu: deduced template, function pointer, (cond ? k1 : k2) and table[i] launches",
                "%d wrong", bad);
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
}

/* ---- forms the rewriter must handle (the file compiles under nvcc too) --------------- */
__global__ void aligned_extern_kernel(float *y)
{
    /* "extern __shared__ float x[];" in a comment, and "<<<1, 1>>>" in a string, stay as they are */
    extern __shared__ __align__(16) unsigned char raw[];
    float *f = reinterpret_cast<float *>(raw);
    f[threadIdx.x] = (float)threadIdx.x * 2.0f;
    __syncthreads();
    const char *text = "k<<<1, 1>>>(x)";
    y[threadIdx.x] = f[blockDim.x - 1 - threadIdx.x] + (text[1] == '<' ? 1'000.0f : 0.0f);
}

__global__ void tile_kernel(float *y)
{
    extern __shared__ float tile[][33]; /* a 2-D array of unknown extent */
    tile[threadIdx.y][threadIdx.x] = (float)(threadIdx.y * 100 + threadIdx.x);
    __syncthreads();
    y[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}

#define LAUNCH_ALIGNED(out, threads) \
    aligned_extern_kernel<<<1, (threads), (threads) * sizeof(float)>>>(out)

static void test_rewrite_forms(void)
{
    float *d = dev_alloc<float>(32 * 32), h[32 * 32];
    LAUNCH_ALIGNED(d, 64);
    CUDA_CHECK_LAUNCH();
    to_host(h, d, 64);
    int bad = 0;
    for (int t = 0; t < 64; t++) bad += h[t] != 2.0f * (63 - t) + 1000.0f;
    tile_kernel<<<dim3(1),                 /* a launch over */
                  dim3(32, 32),            /* several lines, with comments */
                  32 * 33 * sizeof(float)>>>(
        d);
    CUDA_CHECK_LAUNCH();
    to_host(h, d, 32 * 32);
    for (int r = 0; r < 32; r++)
        for (int c = 0; c < 32; c++) bad += h[r * 32 + c] != (float)(c * 100 + r);
    test_expect(!bad, "emu: launches in macros and over several lines, extern __shared__ with __align__ and in 2-D",
                "%d wrong", bad);
    CUDA_CHECK(cudaFree(d));
}

static void test_launch_errors(void)
{
    float *d = dev_alloc<float>(64);
    other_kernel<<<1, 1025>>>(d, 64, 1.0f);
    cudaError_t e1 = cudaGetLastError(), e1b = cudaGetLastError();
    other_kernel<<<dim3(1, 65536), 32>>>(d, 64, 1.0f);
    cudaError_t e2 = cudaGetLastError();
    other_kernel<<<dim3(1, 1, 1), dim3(32, 1, 65)>>>(d, 64, 1.0f);
    cudaError_t e3 = cudaGetLastError();
    /* cudaErrorInvalidValue: what CUDA 13 answers on an H100 */
    test_expect(e1 == cudaErrorInvalidValue && e1b == cudaSuccess && e2 == cudaErrorInvalidValue &&
                    e3 == cudaErrorInvalidValue,
                "emu: launches beyond 1024 threads, gridDim.y 65535, blockDim.z 64 fail, and the error is not sticky",
                "got %s / %s / %s / %s", cudaGetErrorName(e1), cudaGetErrorName(e1b), cudaGetErrorName(e2),
                cudaGetErrorName(e3));
    CUDA_CHECK(cudaFree(d));
}

/* ---- clusters, grid.sync, CTAs that wait for each other ----------------------------------------------
 * Cluster kernels need sm_90: built for an older target, their bodies are
 * empty, and the test is skipped where the device has no clusters. */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define TEST_CLUSTERS 1
#endif

/* Each CTA of a cluster fills its shared memory (a __shared__ variable and
 * the dynamic array), then reads the next rank's through map_shared_rank. */
__global__ void cluster_ring_kernel(unsigned *out)
{
#ifdef TEST_CLUSTERS
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    extern __shared__ unsigned ring_dyn[];
    __shared__ unsigned ring_static;
    const unsigned rank = cluster.block_rank(), c = cluster.num_blocks();
    const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    if (threadIdx.x == 0) ring_static = 1000 * block + rank;
    ring_dyn[threadIdx.x] = block * blockDim.x + threadIdx.x;
    cluster.sync();
    const unsigned next = (rank + 1) % c;
    const unsigned *s = cluster.map_shared_rank(&ring_static, next);
    const unsigned *d = cluster.map_shared_rank(ring_dyn, next);
    const unsigned i = block * blockDim.x + threadIdx.x;
    const dim3 cd = cluster.dim_blocks(), bi = cluster.block_index();
    out[3 * i] = *s;
    out[3 * i + 1] = d[blockDim.x - 1 - threadIdx.x];
    out[3 * i + 2] = rank | c << 8 | cd.x << 16 | cd.y << 20 | bi.x << 24 | bi.y << 28;
    cluster.sync(); /* nobody exits while another CTA may still read its shared memory */
#else
    (void)out;
#endif
}

static int device_attribute(cudaDeviceAttr a)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, a, 0) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return v;
}

static void test_clusters(void)
{
    const char *name = "emu: clusters of 2 x 2 CTAs (cudaLaunchKernelEx): ranks, dimensions, and each CTA reads "
                       "the next rank's static and dynamic shared memory (map_shared_rank)";
    int major = device_attribute(cudaDevAttrComputeCapabilityMajor);
    if (major < 9 || !device_attribute(cudaDevAttrClusterLaunch)) {
        test_skip(name, "no thread-block clusters on this device");
        return;
    }
    const dim3 grid(4, 2, 1), cl(2, 2, 1);
    const unsigned bt = 64, blocks = grid.x * grid.y, n = blocks * bt * 3;
    unsigned *d = dev_alloc<unsigned>(n), *h = (unsigned *)malloc(n * sizeof(unsigned));
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = cl.x;
    attr[0].val.clusterDim.y = cl.y;
    attr[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = grid;
    lc.blockDim = dim3(bt, 1, 1);
    lc.dynamicSmemBytes = bt * sizeof(unsigned);
    lc.attrs = attr;
    lc.numAttrs = 1;
    int active = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&active, cluster_ring_kernel, &lc));
    CUDA_CHECK(cudaLaunchKernelEx(&lc, cluster_ring_kernel, d));
    CUDA_CHECK_LAUNCH();
    to_host(h, d, n);
    int bad = 0;
    for (unsigned by = 0; by < grid.y; by++)
        for (unsigned bx = 0; bx < grid.x; bx++) {
            const unsigned block = bx + grid.x * by, rx = bx % cl.x, ry = by % cl.y, rank = rx + cl.x * ry;
            const unsigned next = (rank + 1) % 4, nb = (bx - rx + next % 2) + grid.x * (by - ry + next / 2);
            for (unsigned t = 0; t < bt; t++) {
                const unsigned *o = &h[3 * (block * bt + t)];
                bad += o[0] != 1000 * nb + next || o[1] != nb * bt + (bt - 1 - t) ||
                       o[2] != (rank | 4u << 8 | 2u << 16 | 2u << 20 | rx << 24 | ry << 28);
            }
        }
    test_expect(!bad && active >= 1, name, "%d wrong values; cudaOccupancyMaxActiveClusters %d", bad, active);
    free(h);
    CUDA_CHECK(cudaFree(d));
}

/* Every CTA writes its part, counts itself in with a release, waits with
 * acquire loads until all have, then reads the others' parts: CTAs that
 * wait for each other (all resident at once on any GPU). */
__global__ void grid_exchange_kernel(unsigned *arrived, float *data, float *out)
{
    data[blockIdx.x * blockDim.x + threadIdx.x] = (float)(blockIdx.x + 1);
    __syncthreads();
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> a(*arrived);
        a.fetch_add(1u, cuda::memory_order_release);
        while (a.load(cuda::memory_order_acquire) < gridDim.x) __nanosleep(32);
    }
    __syncthreads();
    float s = 0.0f;
    for (unsigned k = 0; k < gridDim.x; k++) s += __ldcg(&data[k * blockDim.x + threadIdx.x]);
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

/* grid.sync() in a cooperative launch: each thread reads what a thread
 * of the next CTA wrote before the barrier. */
__global__ void grid_sync_kernel(float *data, float *out)
{
    cooperative_groups::grid_group g = cooperative_groups::this_grid();
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
    data[i] = (float)i;
    g.sync();
    out[i] = __ldcg(&data[(i + blockDim.x) % n]) + (float)g.block_rank();
}

static void test_waiting_ctas(void)
{
    const unsigned blocks = 8, bt = 64, n = blocks * bt;
    unsigned *count = dev_alloc<unsigned>(1);
    float *data = dev_alloc<float>(n), *out = dev_alloc<float>(n), *h = (float *)malloc(n * sizeof(float));
    CUDA_CHECK(cudaMemset(count, 0, sizeof(unsigned)));
    grid_exchange_kernel<<<blocks, bt>>>(count, data, out);
    CUDA_CHECK_LAUNCH();
    to_host(h, out, n);
    int bad = 0;
    for (unsigned i = 0; i < n; i++) bad += h[i] != (float)(blocks * (blocks + 1) / 2);
    test_expect(!bad, "emu: CTAs that wait for each other (release add, acquire loads with __nanosleep) all run "
                "and see each other's data", "%d wrong values", bad);

    const char *name = "emu: grid.sync() in a cooperative launch (cudaLaunchKernelEx, cudaLaunchAttributeCooperative)";
    if (!device_attribute(cudaDevAttrCooperativeLaunch)) {
        test_skip(name, "no cooperative launch on this device");
    } else {
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeCooperative;
        attr[0].val.cooperative = 1;
        cudaLaunchConfig_t lc = {};
        lc.gridDim = dim3(blocks, 1, 1);
        lc.blockDim = dim3(bt, 1, 1);
        lc.attrs = attr;
        lc.numAttrs = 1;
        CUDA_CHECK(cudaLaunchKernelEx(&lc, grid_sync_kernel, data, out));
        CUDA_CHECK_LAUNCH();
        to_host(h, out, n);
        bad = 0;
        for (unsigned i = 0; i < n; i++) bad += h[i] != (float)((i + bt) % n) + (float)(i / bt);
        test_expect(!bad, name, "%d wrong values", bad);
    }
    free(h);
    CUDA_CHECK(cudaFree(count));
    CUDA_CHECK(cudaFree(data));
    CUDA_CHECK(cudaFree(out));
}

/* ---- math intrinsics ------------------------------------------------------------------------------ */
__global__ void math_kernel(const float *x, float *out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float v = __ldg(&x[i]);
    out[6 * i + 0] = __expf(v);
    out[6 * i + 1] = expf(v);
    out[6 * i + 2] = __fdividef(v, 3.0f + fabsf(v));
    out[6 * i + 3] = __frcp_rn(1.0f + fabsf(v));
    out[6 * i + 4] = rsqrtf(1.0f + fabsf(v));
    out[6 * i + 5] = fmaxf(v, 0.5f) + __saturatef(v);
}

static void test_math(void)
{
    const int n = 256;
    float x[256], out[256 * 6];
    for (int i = 0; i < n; i++) x[i] = -20.0f + 40.0f * (float)i / (float)(n - 1);
    float *dx = dev_alloc<float>(n), *dout = dev_alloc<float>(6 * n);
    to_dev(dx, x, n);
    math_kernel<<<2, 128>>>(dx, dout, n);
    CUDA_CHECK_LAUNCH();
    to_host(out, dout, 6 * n);
    double worst[6] = {0};
    for (int i = 0; i < n; i++) {
        const double v = x[i], a = fabs(v);
        const double want[6] = {exp(v), exp(v), v / (3.0 + a), 1.0 / (1.0 + a), 1.0 / sqrt(1.0 + a),
                                (v > 0.5 ? v : 0.5) + (v < 0 ? 0 : v > 1 ? 1 : v)};
        for (int k = 0; k < 6; k++) {
            double rel = fabs(out[6 * i + k] - want[k]) / fabs(want[k]);
            if (rel > worst[k]) worst[k] = rel;
        }
    }
    /* __expf: ~2 ulp plus the rounding of x * log2(e), about |x| ulp; the
     * others within a few ulp. */
    test_expect(worst[0] < 4e-6 && worst[1] < 1e-6 && worst[2] < 1e-6 && worst[3] < 1e-6 &&
                    worst[4] < 1e-6 && worst[5] < 1e-6,
                "emu: __expf, expf, __fdividef, __frcp_rn, rsqrtf, __ldg, __saturatef within a few ulp of float64",
                "worst relative errors %.2e %.2e %.2e %.2e %.2e %.2e", worst[0], worst[1], worst[2],
                worst[3], worst[4], worst[5]);
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dout));
}

/* ---- four softmax kernels in the styles of lessons 3-6 -------------------------------------------- */
#define FULL 0xffffffffu

/* (a) one block per row, tree reductions in static shared memory. */
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) tree_softmax(const float *__restrict__ x, float *__restrict__ y,
                                                      long long cols)
{
    __shared__ float red[BLOCK];
    x += blockIdx.x * cols;
    y += blockIdx.x * cols;
    float m = -INFINITY;
    for (long long j = threadIdx.x; j < cols; j += BLOCK) m = fmaxf(m, x[j]);
    red[threadIdx.x] = m;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (long long j = threadIdx.x; j < cols; j += BLOCK) sum += __expf(x[j] - m);
    red[threadIdx.x] = sum;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    sum = red[0];
    for (long long j = threadIdx.x; j < cols; j += BLOCK) y[j] = __expf(x[j] - m) / sum;
}

/* (b) one warp per row, butterfly shuffles, an early return per warp. */
__global__ void warp_softmax(const float *x, float *y, long long rows, long long cols)
{
    const int lane = threadIdx.x % 32;
    const long long row = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= rows) return; /* the whole warp leaves together */
    const float *xr = x + row * cols;
    float m = -INFINITY;
    for (long long j = lane; j < cols; j += 32) m = fmaxf(m, xr[j]);
    for (int k = 16; k > 0; k >>= 1) m = fmaxf(m, __shfl_xor_sync(FULL, m, k));
    float sum = 0.0f;
    for (long long j = lane; j < cols; j += 32) sum += expf(xr[j] - m);
    for (int k = 16; k > 0; k >>= 1) sum += __shfl_xor_sync(FULL, sum, k);
    for (long long j = lane; j < cols; j += 32) y[row * cols + j] = __fdividef(expf(xr[j] - m), sum);
}

/* (c) TPR lanes per row (a power of two up to 32), ITEMS float4s per lane
 * in registers; reductions by shuffles of width TPR; every lane joins
 * them, also lanes without a row. cols: a multiple of 4, at most
 * 4 * ITEMS * TPR. */
template <int ITEMS, int TPR>
__global__ void __launch_bounds__(128) register_softmax(const float *__restrict__ x, float *__restrict__ y,
                                                        long long rows, int cols)
{
    const int sub = threadIdx.x % TPR;
    const long long row = (long long)blockIdx.x * (128 / TPR) + threadIdx.x / TPR;
    const bool live = row < rows;
    const float4 *xr = reinterpret_cast<const float4 *>(x + (live ? row : 0) * cols);
    float4 *yr = reinterpret_cast<float4 *>(y + (live ? row : 0) * cols);
    float v[ITEMS * 4];
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * TPR + sub;
        if (live && k < cols / 4) {
            const float4 q = xr[k];
            v[4 * i] = q.x, v[4 * i + 1] = q.y, v[4 * i + 2] = q.z, v[4 * i + 3] = q.w;
        } else {
            for (int j = 0; j < 4; j++) v[4 * i + j] = -INFINITY;
        }
    }
    float m = -INFINITY;
    for (int p = 0; p < ITEMS * 4; p++) m = fmaxf(m, v[p]);
    for (int off = TPR / 2; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(FULL, m, off, TPR));
    float s = 0.0f;
    for (int p = 0; p < ITEMS * 4; p++) s += (v[p] = expf(v[p] - m));
    for (int off = TPR / 2; off > 0; off /= 2) s += __shfl_down_sync(FULL, s, off, TPR);
    s = __shfl_sync(FULL, s, 0, TPR); /* lane 0 of the group has the total */
    const float inv = 1.0f / s;
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * TPR + sub;
        if (live && k < cols / 4)
            yr[k] = make_float4(v[4 * i] * inv, v[4 * i + 1] * inv, v[4 * i + 2] * inv, v[4 * i + 3] * inv);
    }
}

/* (d) the row in dynamic shared memory (more than 48 KB for long rows),
 * an online (max, sum) per thread, merged by shuffles and across warps. */
struct md {
    float m, d;
};

__device__ __forceinline__ md md_combine(md a, md b)
{
    md r;
    r.m = fmaxf(a.m, b.m);
    const float shift = r.m == -INFINITY ? 0.0f : r.m;
    r.d = a.d * expf(a.m - shift) + b.d * expf(b.m - shift);
    return r;
}

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) smem_online_softmax(const float *__restrict__ x, float *__restrict__ y,
                                                             int cols)
{
    extern __shared__ float4 row4[];
    __shared__ float part_m[BLOCK / 32], part_d[BLOCK / 32];
    float *row = reinterpret_cast<float *>(row4);
    const float4 *x4 = reinterpret_cast<const float4 *>(x + (long long)blockIdx.x * cols);
    md s = {-INFINITY, 0.0f};
    for (int k = threadIdx.x; k < cols / 4; k += BLOCK) {
        const float4 q = x4[k];
        row4[k] = q;
        const float e[4] = {q.x, q.y, q.z, q.w};
        for (int j = 0; j < 4; j++) s = md_combine(s, md{e[j], 1.0f});
    }
    for (int off = 16; off > 0; off >>= 1) {
        md o;
        o.m = __shfl_xor_sync(FULL, s.m, off);
        o.d = __shfl_xor_sync(FULL, s.d, off);
        s = (threadIdx.x & off) ? md_combine(o, s) : md_combine(s, o);
    }
    if (threadIdx.x % 32 == 0) {
        part_m[threadIdx.x / 32] = s.m;
        part_d[threadIdx.x / 32] = s.d;
    }
    __syncthreads();
    md t = {-INFINITY, 0.0f};
    for (int w = 0; w < BLOCK / 32; w++) t = md_combine(t, md{part_m[w], part_d[w]});
    const float inv = 1.0f / t.d;
    float *yr = y + (long long)blockIdx.x * cols;
    for (int k = threadIdx.x; k < cols; k += BLOCK) yr[k] = expf(row[k] - t.m) * inv;
}

typedef void (*softmax_launcher)(const float *x, float *y, int rows, int cols, cudaStream_t st);

static void launch_tree(const float *x, float *y, int rows, int cols, cudaStream_t st)
{
    tree_softmax<256><<<rows, 256, 0, st>>>(x, y, cols);
}
static void launch_warp(const float *x, float *y, int rows, int cols, cudaStream_t st)
{
    warp_softmax<<<(rows + 3) / 4, 128, 0, st>>>(x, y, rows, cols);
}
static void launch_registers(const float *x, float *y, int rows, int cols, cudaStream_t st)
{
    if (cols <= 4 * 2 * 4) register_softmax<2, 4><<<(rows + 31) / 32, 128, 0, st>>>(x, y, rows, cols);
    else register_softmax<8, 32><<<rows, 128, 0, st>>>(x, y, rows, cols);
}
static void launch_smem(const float *x, float *y, int rows, int cols, cudaStream_t st)
{
    void (*kernel)(const float *, float *, int) = smem_online_softmax<512>;
    const size_t bytes = (size_t)cols * sizeof(float);
    if (bytes > 48 * 1024)
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    kernel<<<rows, 512, bytes, st>>>(x, y, cols);
}

static void check_softmax(const char *name, softmax_launcher run, int rows, int cols, cudaStream_t st)
{
    const size_t n = (size_t)rows * cols;
    float *x = (float *)malloc(n * sizeof(float)), *y = (float *)malloc(n * sizeof(float));
    inputs_fill(x, rows, cols, INPUT_NORMAL, 7 + rows);
    float *dx = dev_alloc<float>(n), *dy = dev_alloc<float>(n);
    to_dev(dx, x, n);
    CUDA_CHECK(cudaMemset(dy, 0xFF, n * sizeof(float)));
    run(dx, dy, rows, cols, st);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(st));
    to_host(y, dy, n);
    verify_report r;
    char desc[512], full[256];
    const int ok = verify_softmax(x, y, rows, cols, ref_row_softmax, NULL, verify_rtol(cols), &r);
    verify_describe(&r, desc, sizeof desc);
    snprintf(full, sizeof full, "emu: %s softmax matches the float64 reference at %d x %d", name, rows, cols);
    test_expect(ok, full, "%s", desc);
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));
    free(x);
    free(y);
}

static void test_softmax_styles(void)
{
    cudaStream_t st;
    CUDA_CHECK(cudaStreamCreate(&st));
    check_softmax("tree-reduction (lesson 3 style)", launch_tree, 7, 1025, st);
    check_softmax("tree-reduction (lesson 3 style)", launch_tree, 3, 100, st);
    check_softmax("warp-per-row (lesson 4 style)", launch_warp, 33, 1000, st);
    check_softmax("warp-per-row (lesson 4 style)", launch_warp, 5, 7, st);
    check_softmax("registers + float4 + shuffle width (lesson 5 style)", launch_registers, 37, 32, st);
    check_softmax("registers + float4 + shuffle width (lesson 5 style)", launch_registers, 9, 1024, st);
    check_softmax("dynamic smem > 48 KB + online (lesson 6 style)", launch_smem, 3, 20000, st);
    check_softmax("dynamic smem + online (lesson 6 style)", launch_smem, 4, 512, st);
    CUDA_CHECK(cudaStreamDestroy(st));
}

/* ---- planted bugs: the emulator must report every one ---------------------------------------------- */
#ifdef CUDA_EMU
/* Runs a planted kernel expected to fail: the launch must report
 * cudaErrorLaunchFailure and the emulator's text must contain `want`. */
static void expect_launch_failure(const char *name, void (*planted)(float *), const char *want)
{
    float *d = dev_alloc<float>(256);
    planted(d);
    const cudaError_t e = cudaGetLastError();
    const char *text = emu_last_error_text();
    test_expect(e == cudaErrorLaunchFailure && strstr(text, want) != NULL, name,
                "launch returned %s; emulator said: %s", cudaGetErrorName(e), text);
    /* A failed kernel leaves a sticky error, as on a GPU: clear it. */
    CUDA_CHECK(cudaDeviceReset());
    CUDA_CHECK(cudaFree(d));
}

static float block_sums(int reader, int missing, int order, int blocks, float *sums)
{
    float x[4 * 256];
    for (int i = 0; i < 4 * 256; i++) x[i] = 1.0f;
    float *dx = dev_alloc<float>(4 * 256), *ds = dev_alloc<float>(4);
    to_dev(dx, x, 4 * 256);
    emu_set_order(order);
    planted_block_sum(dx, ds, blocks, reader, missing);
    CUDA_CHECK_LAUNCH();
    emu_set_order(EMU_ORDER_ALTERNATE);
    to_host(sums, ds, blocks);
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(ds));
    return sums[0];
}

static void test_missing_barrier(void)
{
    float s[4], f0, r0, f1, r1;
    /* The correct kernels give 256 in every order. */
    int fixed_ok = 1;
    for (int reader = 0; reader < 2; reader++)
        for (int order = EMU_ORDER_ALTERNATE; order <= EMU_ORDER_REVERSE; order++) {
            block_sums(reader, 0, order, 4, s);
            for (int b = 0; b < 4; b++) fixed_ok &= s[b] == 256.0f;
        }
    test_expect(fixed_ok, "emu: the same block sums with their __syncthreads pass in every warp order",
                "a correct kernel failed");

    f0 = block_sums(0, 1, EMU_ORDER_FORWARD, 1, s);
    r0 = block_sums(0, 1, EMU_ORDER_REVERSE, 1, s);
    f1 = block_sums(1, 1, EMU_ORDER_FORWARD, 1, s);
    r1 = block_sums(1, 1, EMU_ORDER_REVERSE, 1, s);
    printf("  missing __syncthreads, block sum of 256 ones read by thread 0: forward order %g, reverse "
           "order %g;\n  read by thread 255: forward order %g, reverse order %g\n", f0, r0, f1, r1);
    test_expect(f0 != 256.0f, "emu: catches a missing __syncthreads (thread 0 reads what later warps write: forward order)",
                "forward order gave %g", f0);
    test_expect(r1 != 256.0f, "emu: catches a missing __syncthreads (the last thread reads what earlier warps write: reverse order)",
                "reverse order gave %g", r1);
    /* The default alternates the order between blocks: both bugs show. */
    int caught = 0;
    for (int reader = 0; reader < 2; reader++) {
        block_sums(reader, 1, EMU_ORDER_ALTERNATE, 2, s);
        caught += s[0] != 256.0f || s[1] != 256.0f;
    }
    test_expect(caught == 2, "emu: catches a missing __syncthreads in both directions with the default (alternating) order",
                "caught %d of 2", caught);
}

static void test_missing_syncwarp(void)
{
    int *d = dev_alloc<int>(32), h[32];
    int bad_fixed = 0, bad_missing = 0;
    planted_neighbour(d, 0);
    CUDA_CHECK_LAUNCH();
    to_host(h, d, 32);
    for (int l = 0; l < 32; l++) bad_fixed += h[l] != 100 + (l + 1) % 32;
    planted_neighbour(d, 1);
    CUDA_CHECK_LAUNCH();
    to_host(h, d, 32);
    for (int l = 0; l < 32; l++) bad_missing += h[l] != 100 + (l + 1) % 32;
    test_expect(!bad_fixed && bad_missing, "emu: catches a missing __syncwarp (lanes are not in lockstep)",
                "with __syncwarp %d lanes wrong, without %d", bad_fixed, bad_missing);
    CUDA_CHECK(cudaFree(d));
}

static void planted_outside_mask_f(float *d) { planted_shfl_outside_mask((int *)d); }
static void planted_after_return_f(float *d) { planted_shfl_after_return(d, d + 32); }

static void test_planted_reports(void)
{
    expect_launch_failure("emu: catches a __syncthreads that exited threads never reach (divergent __syncthreads)",
                          planted_divergent_exit, "divergent __syncthreads");
    expect_launch_failure("emu: catches threads waiting at two different __syncthreads (divergent __syncthreads)",
                          planted_divergent_branches, "another barrier");
    expect_launch_failure("emu: catches a shuffle reading a lane outside its mask",
                          planted_outside_mask_f, "which is not in the mask");
    expect_launch_failure("emu: catches a full-mask shuffle after an early return of some lanes",
                          planted_after_return_f, "exited");
    expect_launch_failure("emu: catches a full-mask shuffle in a partial warp (48-thread block)",
                          planted_shfl_partial_warp, "do not exist");
    expect_launch_failure("emu: catches a shuffle that half the warp skips for a __syncthreads (deadlock)",
                          planted_shfl_vs_barrier, "can never complete");
#if !defined(__SANITIZE_ADDRESS__) /* AddressSanitizer stops the program there instead (test_children) */
    expect_launch_failure("emu: catches a write one float past the end of dynamic shared memory (inside the page)",
                          planted_dynamic_smem_write_past, "a write past the end of dynamic shared memory");
#endif

    /* Unwritten shared memory reads as NaN, not as a plausible stale value. */
    float *d = dev_alloc<float>(256), h[256];
    planted_unwritten_shared(d);
    CUDA_CHECK_LAUNCH();
    to_host(h, d, 256);
    test_expect(isnan(h[255]) && h[254] == 2.0f, "emu: shared memory nobody wrote reads as NaN (planted s[256])",
                "got %g and %g", h[255], h[254]);
    CUDA_CHECK(cudaFree(d));

    /* A failed launch is sticky, as on a GPU. */
    float *e = dev_alloc<float>(256);
    planted_divergent_exit(e);
    cudaError_t launch = cudaGetLastError();
    float one;
    cudaError_t later = cudaMemcpy(&one, e, sizeof one, cudaMemcpyDeviceToHost);
    cudaError_t reset = cudaDeviceReset(), after = cudaMemcpy(&one, e, sizeof one, cudaMemcpyDeviceToHost);
    test_expect(launch == cudaErrorLaunchFailure && later == cudaErrorLaunchFailure &&
                    reset == cudaSuccess && after == cudaSuccess,
                "emu: a failed kernel's error is sticky until cudaDeviceReset",
                "%s, %s, %s, %s", cudaGetErrorName(launch), cudaGetErrorName(later),
                cudaGetErrorName(reset), cudaGetErrorName(after));
    CUDA_CHECK(cudaFree(e));

    /* Copies outside cudaMalloc buffers fail as the driver's do. */
    float *small = dev_alloc<float>(4), host[8] = {0};
    cudaError_t past = cudaMemcpy(small, host, 8 * sizeof(float), cudaMemcpyHostToDevice);
    cudaError_t hostp = cudaMemcpy(host, host + 4, 4 * sizeof(float), cudaMemcpyDeviceToHost);
    test_expect(past == cudaErrorInvalidValue && hostp == cudaErrorInvalidValue && cudaGetLastError() != cudaSuccess,
                "emu: cudaMemcpy past the end of a buffer, or from a host pointer as device memory, fails",
                "%s, %s", cudaGetErrorName(past), cudaGetErrorName(hostp));
    CUDA_CHECK(cudaFree(small));
}

/* ---- planted: clusters and CTAs that wait for each other ------------------------------------------ */
static void planted_grid_deadlock_f(float *d)
{
    unsigned *flag = dev_alloc<unsigned>(1);
    CUDA_CHECK(cudaMemset(flag, 0, sizeof(unsigned)));
    planted_grid_deadlock(flag, d);
    cudaFree(flag);
}

static void grid_sync_plain_f(float *d) { grid_sync_kernel<<<2, 64>>>(d, d + 128); }

static int count_nan(const float *h, int n)
{
    int k = 0;
    for (int i = 0; i < n; i++) k += isnan(h[i]);
    return k;
}

static void test_cluster_grid_reports(void)
{
    expect_launch_failure("emu: catches a cluster barrier that half of one CTA never reaches (partial cluster barrier)",
                          planted_partial_cluster_barrier, "a cluster barrier that not every thread of the cluster reaches");
    expect_launch_failure("emu: catches a CTA spinning on a flag nobody sets (grid deadlock, with CTA and line)",
                          planted_grid_deadlock_f, "deadlock: a thread waits for a flag that nothing will set");
    const char *t = emu_last_error_text();
    test_expect(strstr(t, "CTA (0,0,0)") && strstr(t, "planted.cu:") && strstr(t, "__nanosleep"),
                "emu: the grid deadlock report names the CTA, the thread and the lines of the poll and the pause",
                "%s", t);
    expect_launch_failure("emu: catches grid.sync() in a launch that is not cooperative", grid_sync_plain_f,
                          "grid.sync() in a launch that is not cooperative");

    /* Distributed shared memory read before the cluster barrier: the
     * other CTA has not written it yet (poison), in either order. */
    const int n = 8 * 64;
    float *d = dev_alloc<float>(n), h[8 * 64];
    planted_dsmem_before_sync(d, 0);
    CUDA_CHECK_LAUNCH();
    to_host(h, d, n);
    int wrong = 0;
    for (int b = 0; b < 8; b++)
        for (int i = 0; i < 64; i++) wrong += h[b * 64 + i] != (float)((b / 4 * 4 + (b % 4 + 1) % 4) * 64 + i);
    planted_dsmem_before_sync(d, 1);
    CUDA_CHECK_LAUNCH();
    to_host(h, d, n);
    const int nan_missing = count_nan(h, n);
    test_expect(!wrong && nan_missing > 0,
                "emu: catches a read of another CTA's shared memory before cluster.sync() (NaN poison)",
                "with the barrier %d wrong; without it %d of %d values NaN", wrong, nan_missing, n);

    /* A flag published before the data it guards: the CTAs waiting for
     * the flag run first and read the data before it is written. */
    unsigned *count = dev_alloc<unsigned>(1);
    float *data = dev_alloc<float>(8), *out = dev_alloc<float>(n);
    int bad[2];
    for (int bug = 0; bug < 2; bug++) {
        CUDA_CHECK(cudaMemset(count, 0, sizeof(unsigned)));
        CUDA_CHECK(cudaMemset(data, 0xFF, 8 * sizeof(float)));
        planted_flag_before_data(count, data, out, 8, bug);
        CUDA_CHECK_LAUNCH();
        to_host(h, out, n);
        bad[bug] = 0;
        for (int i = 0; i < n; i++) bad[bug] += h[i] != 36.0f;
    }
    test_expect(!bad[0] && bad[1], "emu: catches a flag published (release) before the data it guards",
                "%d wrong with the data first, %d with the flag first", bad[0], bad[1]);

    /* Launches the emulator refuses before running anything. */
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;
    attr[0].val.cooperative = 1;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(100000, 1, 1);
    lc.blockDim = dim3(64, 1, 1);
    lc.attrs = attr;
    lc.numAttrs = 1;
    float *big = dev_alloc<float>(2 * 100000 * 64);
    CUDA_CHECK(cudaMemset(big, 0, 2 * 100000 * 64 * sizeof(float)));
    const cudaError_t coop = cudaLaunchKernelEx(&lc, grid_sync_kernel, big, big + 100000 * 64);
    float first = -1.0f;
    CUDA_CHECK(cudaMemcpy(&first, big, sizeof first, cudaMemcpyDeviceToHost));
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 16;
    attr[0].val.clusterDim.y = attr[0].val.clusterDim.z = 1;
    lc.gridDim = dim3(32, 1, 1);
    const cudaError_t c16 = cudaLaunchKernelEx(&lc, cluster_ring_kernel, (unsigned *)big);
    attr[0].val.clusterDim.x = 3;
    const cudaError_t c3 = cudaLaunchKernelEx(&lc, cluster_ring_kernel, (unsigned *)big);
    test_expect(coop == cudaErrorCooperativeLaunchTooLarge && first == 0.0f && c16 == cudaErrorInvalidClusterSize &&
                    c3 == cudaErrorInvalidClusterSize,
                "emu: refuses, before running anything, a cooperative grid larger than what is resident at once, "
                "a cluster of 16 without the non-portable opt-in, and a cluster size that does not divide the grid",
                "%s (first value %g), %s, %s", cudaGetErrorName(coop), first, cudaGetErrorName(c16),
                cudaGetErrorName(c3));
    cudaGetLastError();
    CUDA_CHECK(cudaFree(big));
    CUDA_CHECK(cudaFree(count));
    CUDA_CHECK(cudaFree(data));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(d));
}

/* ---- child processes: faults that end the program ------------------------------------------------------ */
__global__ void ptx_kernel(int *out)
{
    int lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    out[threadIdx.x] = lane;
}

/* Block 1 sets the flag that block 0 waits for: fine on a GPU that runs
 * both blocks at once, never ending where blocks run one after another. */
__global__ void spin_kernel(volatile int *flag)
{
    if (blockIdx.x == 1) *flag = 1;
    else
        while (*flag == 0) {
        }
}

static int child(const char *what)
{
    if (!strcmp(what, "oob-read")) {
        const int n = 1024; /* 4096 bytes: the next byte is past any rounding */
        float *x = dev_alloc<float>(n), *y = dev_alloc<float>(n);
        planted_oob_read(x, y, n);
    } else if (!strcmp(what, "oob-write")) {
        const int n = 1000; /* the float after the end is still in the 256-byte rounding */
        float *x = dev_alloc<float>(n), *y = dev_alloc<float>(n);
        planted_oob_write(x, y, n);
    } else if (!strcmp(what, "smem-overflow")) {
        float *out = dev_alloc<float>(64);
        planted_dynamic_smem_overflow(out, 8192);
    } else if (!strcmp(what, "spin")) {
        int *flag = dev_alloc<int>(1);
        CUDA_CHECK(cudaMemset(flag, 0, sizeof(int)));
        spin_kernel<<<2, 32>>>(flag);
    } else if (!strcmp(what, "too-many")) {
        /* 4 CTAs of 1024 threads that all wait until every one has
         * started, where the emulator holds 2048 threads. */
        setenv("EMU_MAX_RESIDENT", "2048", 1);
        unsigned *count = dev_alloc<unsigned>(1);
        float *data = dev_alloc<float>(4 * 1024), *out = dev_alloc<float>(4 * 1024);
        CUDA_CHECK(cudaMemset(count, 0, sizeof(unsigned)));
        grid_exchange_kernel<<<4, 1024>>>(count, data, out);
    } else if (!strcmp(what, "ptx")) {
        int *out = dev_alloc<int>(32);
        ptx_kernel<<<1, 32>>>(out);
    } else {
        fprintf(stderr, "unknown child test %s\n", what);
        return 2;
    }
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    printf("NOT CAUGHT: the planted kernel ran to the end\n");
    return 0;
}

/* Runs this program again as `--child what`; returns its exit status (or
 * 128 + signal) and its stdout and stderr in out. */
static int run_child(const char *what, char *out, size_t len)
{
    int fds[2];
    if (pipe(fds)) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        setenv("EMU_TIMEOUT", "1", 1); /* for the spin-wait */
        execl("/proc/self/exe", "test_emu", "--child", what, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t r;
    char sink[4096];
    while ((r = read(fds[0], got + 1 < len ? out + got : sink,
                     got + 1 < len ? len - 1 - got : sizeof sink)) > 0)
        if (got + 1 < len) got += (size_t)r;
    out[got] = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void expect_child_failure(const char *name, const char *what, const char *want1, const char *want2)
{
    static char out[65536];
    const int status = run_child(what, out, sizeof out);
    const int ok = status != 0 && strstr(out, want1) && (!want2 || strstr(out, want2));
    if (!ok) {
        test_fail(name, "exit status %d, output:\n%s", status, out);
        return;
    }
    /* Show the one line that says what was caught. */
    const char *p = strstr(out, want1);
    const char *b = p;
    while (b > out && b[-1] != '\n') b--;
    const char *e = strchr(p, '\n');
    printf("  %.*s\n", e ? (int)(e - b) : (int)strlen(b), b);
    test_pass(name);
}

static void test_children(void)
{
#if defined(__SANITIZE_ADDRESS__)
    expect_child_failure("emu: catches an out-of-bounds read of global memory (AddressSanitizer)",
                         "oob-read", "heap-buffer-overflow", "planted.cu");
    expect_child_failure("emu: catches an out-of-bounds write of global memory (AddressSanitizer)",
                         "oob-write", "heap-buffer-overflow", "WRITE of size 4");
    expect_child_failure("emu: catches a read past the dynamic shared memory of the launch (AddressSanitizer)",
                         "smem-overflow", "AddressSanitizer", "planted.cu");
#else
    expect_child_failure("emu: catches an out-of-bounds read of global memory (guard page)",
                         "oob-read", "past the end of a cudaMalloc buffer", "oob_read_kernel");
    expect_child_failure("emu: catches an out-of-bounds write of global memory (canary)",
                         "oob-write", "wrote past the end of a cudaMalloc buffer", "oob_write_kernel");
    expect_child_failure("emu: catches a read past the dynamic shared memory of the launch (guard page)",
                         "smem-overflow", "past the end of dynamic shared memory", NULL);
#endif
    expect_child_failure("emu: inline PTX aborts with a message naming it", "ptx", "inline PTX", NULL);
    expect_child_failure("emu: a grid whose CTAs wait for more CTAs than the emulator holds stops with a reason",
                         "too-many", "too large to emulate", "grid_exchange_kernel");
    expect_child_failure("emu: a spin-wait on another block is stopped by the watchdog, not a hang",
                         "spin", "still runs after 1 s", "spin_kernel");
}
#endif /* CUDA_EMU */

int main(int argc, char **argv)
{
#ifdef CUDA_EMU
    if (argc == 3 && !strcmp(argv[1], "--child")) return child(argv[2]);
#else
    (void)argc;
    (void)argv;
#endif
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        test_skip("emu: feature tests on the GPU", "no GPU (the emulated build runs them on the CPU)");
        return 0;
    }
    printf("%s\n", EMULATED ? "emulator tests: kernels run on the CPU emulator (common/emu)"
                            : "emulator tests, feature part, run natively on the GPU");
    test_index3d();
    test_managed();
    test_shuffles();
    test_votes();
    test_static_shared();
    test_dynamic_shared();
    test_atomics();
    test_launch_forms();
    test_rewrite_forms();
    test_launch_errors();
    test_math();
    test_softmax_styles();
    test_clusters();
    test_waiting_ctas();
#ifdef CUDA_EMU
    test_missing_barrier();
    test_missing_syncwarp();
    test_planted_reports();
    test_cluster_grid_reports();
    test_children();
#else
    test_skip("emu: planted-bug tests", "they test the emulator's checks, which a GPU does not make");
#endif
    return test_exit_status();
}
