/* An experiment, not a kernel of the course
 * (docs/experiments/rows-long-rows-h200.md holds its results): persistent
 * CTAs that keep loads in flight while they wait.
 * Each CTA of a group of P owns piece `piece` of rows g, g + groups, ...;
 * it streams its next pieces into shared memory with cp.async (STAGES
 * buffers) while it trades (m, d) states with the group through global
 * memory (lesson 8's grid_sync.cuh) and writes the current piece. Aligned
 * rows only (N % 4 == 0); three rows per shape checked against float64.
 * Prints % of a device-to-device copy timed in the same process.
 *   make build/experiments/pipelined_grid   (`make all` builds it too; sm_90)
 *   build/experiments/pipelined_grid [N [config]]
 * Measured on an H200 (2026-11-25): at best 49-61 % of the copy at
 * N = 32768 ... 2^21 (the best of the configurations below at each N),
 * where lesson 8 reaches 74-94 % (`make bench`, same day). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
#include "device/online_md.cuh"
#include "device/grid_sync.cuh"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1);} } while (0)

__device__ __forceinline__ void cp16(void *s, const void *g)
{
    unsigned a = (unsigned)__cvta_generic_to_shared(s);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(g) : "memory");
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

/* Piece `item` (row item / pieces) into shared memory at dst, 16 bytes per cp.async. */
template <int BLOCK>
__device__ __forceinline__ void issue(const float *x, long long item, int cols, int pieces, int seg, float4 *dst)
{
    const long long row = item / pieces;
    const int piece = (int)(item % pieces);
    int len = cols - piece * seg;
    if (len > seg) len = seg;
    const float *src = x + row * (long long)cols + (long long)piece * seg;
    for (int k = threadIdx.x; k < len / 4; k += BLOCK) cp16(dst + k, src + 4 * k);
}

template <bool F>
__device__ __forceinline__ float ex(float v) { return F ? __expf(v) : expf(v); }

template <int BLOCK, int STAGES, bool FASTEXP>
__global__ void __launch_bounds__(BLOCK) pipe_kernel(const float *__restrict__ x, float *__restrict__ y, int cols,
                                                     int pieces, int seg, int stage4, long long rows,
                                                     unsigned *sync, online_md *work)
{
    extern __shared__ float4 sm[];
    __shared__ float red_m[32], red_d[32];
    const long long groups = gridDim.x / pieces;
    const int mypiece = blockIdx.x % pieces;
    long long r0 = blockIdx.x / pieces;
    const long long G = groups * pieces, items = rows * pieces;
    long long it = r0 * pieces + mypiece;
#pragma unroll
    for (int j = 0; j < STAGES - 1; j++) {
        if (it + j * G < items) issue<BLOCK>(x, it + j * G, cols, pieces, seg, sm + j * stage4);
        cp_commit();
    }
    for (int s = 0; it < items; s = s + 1 == STAGES ? 0 : s + 1, it += G) {
        const long long nxt = it + (STAGES - 1) * G;
        int sn = s + STAGES - 1; if (sn >= STAGES) sn -= STAGES;
        if (nxt < items) issue<BLOCK>(x, nxt, cols, pieces, seg, sm + sn * stage4);
        cp_commit();
        cp_wait<STAGES - 1>();
        __syncthreads();
        const float4 *st = sm + s * stage4;
        const long long row = it / pieces;
        const int piece = (int)(it % pieces);
        int len = cols - piece * seg;
        if (len > seg) len = seg;
        const int n4 = len / 4;
        online_md t = online_md_identity();
        for (int k0 = threadIdx.x; k0 < n4; k0 += 4 * BLOCK) {
            float w[16];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                const int k = k0 + u * BLOCK;
                float4 q = k < n4 ? st[k] : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
                w[4 * u] = q.x; w[4 * u + 1] = q.y; w[4 * u + 2] = q.z; w[4 * u + 3] = q.w;
            }
            float cm = -INFINITY;
#pragma unroll
            for (int i = 0; i < 16; i++) cm = fmaxf(cm, w[i]);
            const float m = fmaxf(t.m, cm), sh = online_md_shift(m);
            float acc = 0.f;
#pragma unroll
            for (int i = 0; i < 16; i++) acc += ex<FASTEXP>(w[i] - sh);
            t.d = t.d * ex<FASTEXP>(t.m - sh) + acc;
            t.m = m;
        }
        online_md R = online_md_row_merge<BLOCK>(t, red_m, red_d);
        if (pieces > 1) {
            online_md *wr = work + row * pieces;
            if (threadIdx.x == 0) {
                wr[piece] = R;
                fx_grid_arrive_wait(&sync[row], (unsigned)pieces);
                fx_grid_leave(&sync[row], fx_grid_count_out(&sync[row]), (unsigned)pieces);
            }
            __syncthreads();
            online_md q = online_md_identity();
            for (int i = threadIdx.x; i < pieces; i += BLOCK) {
                const float2 w = __ldcg(reinterpret_cast<const float2 *>(wr + i));
                const online_md o = {w.x, w.y};
                q = online_md_merge(q, o);
            }
            R = online_md_row_merge<BLOCK>(q, red_m, red_d);
        }
        const float sh = online_md_shift(R.m), inv = 1.0f / R.d;
        float4 *yr = reinterpret_cast<float4 *>(y + row * (long long)cols + (long long)piece * seg);
        for (int k = threadIdx.x; k < n4; k += BLOCK) {
            float4 q = st[k];
            q.x = ex<FASTEXP>(q.x - sh) * inv;
            q.y = ex<FASTEXP>(q.y - sh) * inv;
            q.z = ex<FASTEXP>(q.z - sh) * inv;
            q.w = ex<FASTEXP>(q.w - sh) * inv;
            yr[k] = q;
        }
        __syncthreads();
    }
}

typedef void (*kfn)(const float *, float *, int, int, int, int, long long, unsigned *, online_md *);

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

int main(int argc, char **argv)
{
    const long long total = 1LL << 26;
    float *x, *y;
    CK(cudaMalloc(&x, total * 4));
    CK(cudaMalloc(&y, total * 4));
    std::vector<float> h(total);
    unsigned s = 12345;
    for (long long i = 0; i < total; i++) { s = s * 1664525u + 1013904223u; h[i] = ((s >> 8) / 16777216.0f - 0.5f) * 16.0f; }
    CK(cudaMemcpy(x, h.data(), total * 4, cudaMemcpyHostToDevice));
    unsigned *sync;
    online_md *work;
    CK(cudaMalloc(&sync, (1 << 22) * 4));
    CK(cudaMemset(sync, 0, (1 << 22) * 4));
    CK(cudaMalloc(&work, (1 << 22) * 8));
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("%s, %d SMs\n", prop.name, sms);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    struct cfg { const char *name; kfn k; int block; int stage_floats; int stages; };
    cfg cfgs[] = {
        {"1x512 2st 100KB", (kfn)pipe_kernel<512, 2, false>, 512, 25600, 2},
        {"1x512 3st 64KB", (kfn)pipe_kernel<512, 3, false>, 512, 16384, 3},
        {"1x512 4st 48KB", (kfn)pipe_kernel<512, 4, false>, 512, 12288, 4},
        {"1x512 4st 48KB fx", (kfn)pipe_kernel<512, 4, true>, 512, 12288, 4},
        {"1x1024 4st 48KB fx", (kfn)pipe_kernel<1024, 4, true>, 1024, 12288, 4},
        {"1x512 6st 32KB fx", (kfn)pipe_kernel<512, 6, true>, 512, 8192, 6},
        {"2x256 3st 32KB fx", (kfn)pipe_kernel<256, 3, true>, 256, 8192, 3},
    };
    const int ncfg = sizeof cfgs / sizeof cfgs[0];
    const long long colsv[] = {16384,  32768, 65536, 65537 - 1 + 4, 131072, 262144, 524288, 1048576, 2097152, 50264, 98304};
    for (long long cols : colsv) {
        if (argc > 1 && cols != atoll(argv[1])) continue;
        const long long rows = total / cols;
        const long long n = rows * cols;
        std::vector<float> t;
        for (int r = 0; r < 25; r++) {
            CK(cudaEventRecord(e0));
            CK(cudaMemcpyAsync(y, x, n * 4, cudaMemcpyDeviceToDevice));
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (r >= 5) t.push_back(ms);
        }
        const float copy = median(t);
        printf("%8lld x %-8lld copy %.4f ms |", rows, cols, copy);
        for (int c = 0; c < ncfg; c++) {
            if (argc > 2 && c != atoi(argv[2])) continue;
            const int smem = cfgs[c].stages * cfgs[c].stage_floats * 4;
            CK(cudaFuncSetAttribute(cfgs[c].k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
            int per_sm = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cfgs[c].k, cfgs[c].block, smem));
            const long long G = (long long)per_sm * sms;
            int pieces = (int)((cols + cfgs[c].stage_floats - 1) / cfgs[c].stage_floats);
            if (pieces > G) { printf(" %s: P>G |", cfgs[c].name); continue; }
            long long groups = G / pieces;
            if (groups > rows) groups = rows;
            pieces = (int)(G / groups);
            int seg = (int)((cols + pieces - 1) / pieces);
            seg = (seg + 3) / 4 * 4;
            pieces = (int)((cols + seg - 1) / seg);
            long long gridn = groups * pieces;
            long long items = rows;
            int cols_i = (int)cols, stage4 = cfgs[c].stage_floats / 4;
            void *args[] = {&x, &y, &cols_i, &pieces, &seg, &stage4, (void *)&items, &sync, &work};
            t.clear();
            CK(cudaMemset(y, 0xff, n * 4));
            for (int r = 0; r < 25; r++) {
                CK(cudaEventRecord(e0));
                CK(cudaLaunchCooperativeKernel((void *)cfgs[c].k, dim3((unsigned)gridn), dim3(cfgs[c].block), args, smem, 0));
                CK(cudaGetLastError());
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float ms;
                CK(cudaEventElapsedTime(&ms, e0, e1));
                if (r >= 5) t.push_back(ms);
            }
            const float km = median(t);
            /* check rows 0, rows/2, rows-1 against double */
            double worst = 0; long long bad = 0;
            std::vector<float> out(cols);
            for (long long r : {0LL, rows / 2, rows - 1}) {
                CK(cudaMemcpy(out.data(), y + r * cols, cols * 4, cudaMemcpyDeviceToHost));
                double m = -INFINITY, d = 0;
                for (long long j = 0; j < cols; j++) m = std::max(m, (double)h[r * cols + j]);
                for (long long j = 0; j < cols; j++) d += exp((double)h[r * cols + j] - m);
                for (long long j = 0; j < cols; j++) {
                    const double ref = exp((double)h[r * cols + j] - m) / d;
                    const double err = fabs(out[j] - ref) / (ref + 1e-30);
                    if (!(err < 1e-5)) bad++;
                    if (err > worst) worst = err;
                }
            }
            printf(" %s G=%lld/%lld P=%d %.1f%%%s |", cfgs[c].name, gridn, G, pieces, 100.0 * copy / km, bad == 0 ? "" : " BAD");
        }
        printf("\n");
    }
    return 0;
}
