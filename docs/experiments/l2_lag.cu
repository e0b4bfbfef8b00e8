/* An experiment, not a kernel of the course
 * (docs/experiments/rows-long-rows-h200.md holds its results): keep a long
 * row in L2 instead of on chip. Two passes, as path 4, but the second reads what the first read a moment ago, so
 * that it comes from L2 and DRAM sees 1 read + 1 write per element.
 *
 * Persistent CTAs draw tickets t = 0 .. G + D - 1 over the G chunks of
 * the matrix (chunks of CHUNK floats, P per row). Ticket t runs pass 1
 * on chunk t (its (m, d) to a workspace; the row's last chunk merges the
 * row's P states and publishes (M, 1/D)), then pass 2 on chunk t - D:
 * wait for its row's (M, 1/D), read the chunk again, write
 * exp(x - M) / D. D >= P makes every chunk a pass 2 waits for hold a
 * lower ticket, whose pass 1 never waits: no deadlock, resident or not.
 * D - P is the lag, in chunks, between a chunk's two reads; the smaller,
 * the likelier the second read finds it in L2.
 *
 * Measured (M x N = 2^26, N = 2^15 ... 2^22, % of a device-to-device
 * copy timed in the same process, 2026-11-26):
 *   plain loads and stores: H100 66-76 %, H200 62-66 %. ncu at
 *     512 x 2^17 (H100): DRAM read 527 MB for a 268 MB matrix, 2 % of
 *     the second reads hit L2: the y written in between pushes x out;
 *   L2 hints (createpolicy: evict_last on the first read, evict_first on
 *     the second read and on the stores): H100 79.6-82.9 % at 2^15 ...
 *     2^20, 68-78 % at 2^21, 2^22 (two runs); H200 69-73 % at 2^15 ...
 *     2^20, 65-69 % beyond. Lesson 8 reaches 89.8-96.8 % on the H100 and
 *     77.4-93.8 % on the H200 at 2^15 ... 2^20 (`make bench`).
 * So L2 can hold what the second pass needs, but the ticket loop (two
 * passes per CTA, an exchange through global memory, a wait when the row
 * is late) costs more than holding the row on chip.
 *   make build/experiments/l2_lag   (`make all` builds it too; sm_90)
 *   build/experiments/l2_lag [log2 N from [log2 N to]]   (default 15 20) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

#define BLOCK 256
#define VECS 4                          /* float4 per thread per chunk */
#define CHUNK (BLOCK * 4 * VECS)        /* 4096 floats */

__device__ __forceinline__ unsigned add_acq_rel(unsigned *p, unsigned v)
{
    unsigned o;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(o) : "l"(p), "r"(v) : "memory");
    return o;
}
__device__ __forceinline__ unsigned load_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_release(unsigned *p, unsigned v)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
/* L2 eviction policies (PTX createpolicy) and loads and stores that carry them. */
__device__ __forceinline__ unsigned long long policy(bool last)
{
    unsigned long long p;
    if (last) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    else asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}
__device__ __forceinline__ float4 load_hint(const float4 *a, bool hints, bool last)
{
    if (!hints) return *a;
    float4 v;
    asm volatile("ld.global.nc.L2::cache_hint.v4.f32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(a), "l"(policy(last)));
    return v;
}
__device__ __forceinline__ void store_hint(float4 *a, float4 v, bool hints)
{
    if (!hints) { *a = v; return; }
    asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(a), "f"(v.x), "f"(v.y), "f"(v.z),
                 "f"(v.w), "l"(policy(false)) : "memory");
}

struct md { float m, d; };
__device__ __forceinline__ md md_merge(md a, md b)
{
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return a;
    return {m, a.d * __expf(a.m - m) + b.d * __expf(b.m - m)};
}
__device__ md block_merge(md a, float *sm, float *sd)
{
    for (int o = 16; o; o >>= 1) a = md_merge(a, {__shfl_xor_sync(~0u, a.m, o), __shfl_xor_sync(~0u, a.d, o)});
    const int w = threadIdx.x / 32, l = threadIdx.x % 32;
    __syncthreads();
    if (l == 0) { sm[w] = a.m; sd[w] = a.d; }
    __syncthreads();
    a = l < BLOCK / 32 ? md{sm[l], sd[l]} : md{-INFINITY, 0.0f};
    for (int o = 16; o; o >>= 1) a = md_merge(a, {__shfl_xor_sync(~0u, a.m, o), __shfl_xor_sync(~0u, a.d, o)});
    return a;
}

/* Counters (ticket, done[M], ready[M]) are zeroed before each launch. */
__global__ void __launch_bounds__(BLOCK) lag_kernel(const float *__restrict__ x, float *__restrict__ y, long long N,
                                                    int P, long long G, long long D, bool hints,
                                                    unsigned long long *ticket, unsigned *done, float2 *part,
                                                    float2 *row_md, unsigned *ready)
{
    __shared__ long long s_t;
    __shared__ int s_last;
    __shared__ float sm[32], sd[32];
    for (;;) {
        if (threadIdx.x == 0) s_t = (long long)atomicAdd(ticket, 1ull);
        __syncthreads();
        const long long t = s_t;
        if (t >= G + D) break;
        if (t < G) { /* pass 1: chunk t's state; the row's last chunk publishes the row's */
            const long long r = t / P;
            const float4 *src = reinterpret_cast<const float4 *>(x + r * N + (t % P) * CHUNK);
            float4 v[VECS];
            for (int i = 0; i < VECS; i++) v[i] = load_hint(src + threadIdx.x + i * BLOCK, hints, true);
            float m = -INFINITY, d = 0.0f;
            for (int i = 0; i < VECS; i++) m = fmaxf(m, fmaxf(fmaxf(v[i].x, v[i].y), fmaxf(v[i].z, v[i].w)));
            for (int i = 0; i < VECS; i++)
                d += __expf(v[i].x - m) + __expf(v[i].y - m) + __expf(v[i].z - m) + __expf(v[i].w - m);
            const md b = block_merge({m, d}, sm, sd);
            if (threadIdx.x == 0) {
                part[t] = make_float2(b.m, b.d);
                s_last = add_acq_rel(&done[r], 1u) == (unsigned)P - 1;
            }
            __syncthreads();
            if (s_last) {
                md q = {-INFINITY, 0.0f};
                for (int i = threadIdx.x; i < P; i += BLOCK) {
                    const float2 w = __ldcg(part + r * P + i);
                    q = md_merge(q, {w.x, w.y});
                }
                q = block_merge(q, sm, sd);
                if (threadIdx.x == 0) {
                    row_md[r] = make_float2(q.m, 1.0f / q.d);
                    store_release(&ready[r], 1u);
                }
            }
        }
        if (t >= D) { /* pass 2 on chunk t - D, read again (from L2, with luck) */
            const long long c = t - D, r = c / P;
            if (threadIdx.x == 0)
                while (load_acquire(&ready[r]) == 0) __nanosleep(64);
            __syncthreads();
            const float2 w = __ldcg(row_md + r);
            const float4 *src = reinterpret_cast<const float4 *>(x + r * N + (c % P) * CHUNK);
            float4 *dst = reinterpret_cast<float4 *>(y + r * N + (c % P) * CHUNK);
            float4 v[VECS];
            for (int i = 0; i < VECS; i++) v[i] = load_hint(src + threadIdx.x + i * BLOCK, hints, false);
            for (int i = 0; i < VECS; i++) {
                const float4 o = {expf(v[i].x - w.x) * w.y, expf(v[i].y - w.x) * w.y, expf(v[i].z - w.x) * w.y,
                                  expf(v[i].w - w.x) * w.y};
                store_hint(dst + threadIdx.x + i * BLOCK, o, hints);
            }
        }
        __syncthreads();
    }
}

__global__ void fill(float *x, long long n)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13; h *= 3266489917u; h ^= h >> 16;
        x[i] = ((h & 0xffffff) / 16777216.0f - 0.5f) * 8.0f;
    }
}

static float median_ms(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/* The median of 25 timed runs of launch() after 5 untimed ones, ms. */
template <class F>
static float time_ms(F launch)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ts;
    for (int it = 0; it < 30; it++) {
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (it >= 5) ts.push_back(ms);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return median_ms(ts);
}

/* Times the kernel (with its counters' memsets) at M x N, checks rows 0
 * and M - 1 against float64, returns % of copy_ms. */
static double run(const float *x, float *y, long long M, long long N, int per_sm, double lag, bool hints,
                  float copy_ms, unsigned long long *ticket, unsigned *done, float2 *part, float2 *row_md,
                  unsigned *ready)
{
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int P = (int)(N / CHUNK);
    const long long G = M * P, resident = (long long)per_sm * sms;
    const long long D = P + (long long)(lag * resident);
    const float ms = time_ms([&] {
        CK(cudaMemsetAsync(ticket, 0, 8));
        CK(cudaMemsetAsync(done, 0, 4 * M));
        CK(cudaMemsetAsync(ready, 0, 4 * M));
        lag_kernel<<<(unsigned)std::min(resident, G + D), BLOCK>>>(x, y, N, P, G, D, hints, ticket, done, part, row_md,
                                                                    ready);
        CK(cudaGetLastError());
    });
    std::vector<float> hx(N), hy(N);
    for (long long r : {0LL, M - 1}) {
        CK(cudaMemcpy(hx.data(), x + r * N, 4 * N, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hy.data(), y + r * N, 4 * N, cudaMemcpyDeviceToHost));
        double m = -INFINITY, s = 0.0;
        for (float v : hx) m = std::max(m, (double)v);
        for (float v : hx) s += exp(v - m);
        for (long long i = 0; i < N; i++) {
            const double ref = exp(hx[i] - m) / s;
            if (!(fabs(hy[i] - ref) <= 1e-5 * ref)) {
                fprintf(stderr, "row %lld, element %lld: %g, expected %g\n", r, i, hy[i], ref);
                exit(1);
            }
        }
    }
    return 100.0 * copy_ms / ms;
}

int main(int argc, char **argv)
{
    const int lo = argc > 1 ? atoi(argv[1]) : 15, hi = argc > 2 ? atoi(argv[2]) : 20;
    if (lo < 12 || hi > 24 || lo > hi) {
        fprintf(stderr, "usage: l2_lag [log2 N from [log2 N to]], 12 <= from <= to <= 24\n");
        return 2;
    }
    const long long total = 1LL << 26;
    float *x, *y;
    CK(cudaMalloc(&x, 4 * total));
    CK(cudaMalloc(&y, 4 * total));
    fill<<<1024, 256>>>(x, total);
    CK(cudaGetLastError());
    unsigned long long *ticket;
    unsigned *done, *ready;
    float2 *part, *row_md;
    CK(cudaMalloc(&ticket, 8));
    CK(cudaMalloc(&done, 4 * (total >> 12)));
    CK(cudaMalloc(&ready, 4 * (total >> 12)));
    CK(cudaMalloc(&part, 8 * (total / CHUNK)));
    CK(cudaMalloc(&row_md, 8 * (total >> 12)));
    const float copy_ms = time_ms([&] { CK(cudaMemcpyAsync(y, x, 4 * total, cudaMemcpyDeviceToDevice)); });
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("%s, copy of 2 x %lld MB: %.4f ms\n%10s %10s %8s %8s\n", prop.name, 4 * total >> 20, copy_ms, "M", "N",
           "plain", "hints");
    for (int k = lo; k <= hi; k++) {
        const long long N = 1LL << k, M = total / N;
        double plain = 0.0, hinted = 0.0;
        for (int per_sm : {4, 6})
            for (double lag : {0.5, 1.0}) {
                plain = std::max(plain, run(x, y, M, N, per_sm, lag, false, copy_ms, ticket, done, part, row_md, ready));
                hinted = std::max(hinted, run(x, y, M, N, per_sm, lag, true, copy_ms, ticket, done, part, row_md, ready));
            }
        printf("%10lld %10lld %7.1f%% %7.1f%%\n", M, N, plain, hinted);
    }
    return 0;
}
