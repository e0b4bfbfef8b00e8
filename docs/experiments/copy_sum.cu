/* An experiment, not a kernel of the course
 * (docs/experiments/training-classifier-loss-end.md): what one number
 * reduced over the whole matrix costs a kernel as short as a 2 MiB copy.
 * The fused classifier must write its gradient (a copy's bytes) and the reduced loss (one float
 * that depends on every row). Here the same shape of work without the
 * softmax: a copy kernel, one warp per row of 512 floats (lesson 10's
 * register class for N = 512: 16 floats a thread, four rows a block of
 * 128), that also sums its rows, in five builds:
 *   copy          y = x only;
 *   + row sums    and each row's sum to sums[row] (the losses);
 *   + last block  and the total: each block's part, a fence and a count,
 *                 the last block to count in adds the parts
 *                 (last_block_sum in lesson 10);
 *   + slots       and the total: each row's sum stored with a flag as
 *                 soon as it is known, the block with the last ticket
 *                 reads the slots until all are flagged (the
 *                 classifier's way at this size, classifier_slots_finish);
 *   + atomics     and the total by atomicAdd from each row (timing only:
 *                 the order of the adds changes the bits from run to
 *                 run, and nothing resets the word, so it is not
 *                 checked). The fewest trips to L2 any total can take.
 * Each build is checked (y equal to x, every row's sum and the totals
 * against float64) and timed as `make bench` times lesson 10 at this
 * shape (common/harness: buffers rotated past L2, 200 warm-up runs,
 * median of 2000), as % of a device-to-device copy of the same bytes.
 *   make build/experiments/copy_sum   (`make all` builds it too; sm_90)
 *   build/experiments/copy_sum [M]    (M rows of 512 floats, 1 ... 2048; default 1024)
 * Measured on an H100 80GB HBM3 (2026-11-27; 1024 rows six runs, the
 * others one), % of the copy:
 *                  256 x 512   1024 x 512    2048 x 512
 *   copy              98.6     100.0-102.2     100.9
 *   + row sums        97.3      98.9-101.7     100.4
 *   + last block      78.9      80.4-82.1       85.2
 *   + slots           84.4      82.2-83.6       84.7
 *   + atomics         97.3      93.9-95.8       88.3
 * The classifier (float32, the sum) ran at 81.3-82.7 % at 1024 x 512
 * between three of those runs (bench --lesson 10 --cols 512). On an
 * H200 (the same day, three runs at 1024 x 512, the classifier between
 * them): last block 80.9-81.7, slots 81.3-82.5, atomics 89.7-90.4, the
 * classifier 79.3-79.8. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "check.h"   /* CUDA_CHECK */
#include "harness.h" /* time_runs, rotation_sets */
#include "device/row_reduce.cuh" /* row_reduce, op_sum */

#define COLS 512
#define BLK 128
#define ROWS_PER_BLOCK (BLK / 32)
#define MAX_ROWS 2048 /* the classifier's CLS_SLOT_ROWS: 16 slots a thread, as there */
#define K_SLOTS (MAX_ROWS / BLK)

enum { COPY, ROW_SUMS, LAST_BLOCK, SLOTS, ATOMICS, MODES };
static const char *const NAMES[MODES] = {"copy", "+ row sums", "+ last block", "+ slots", "+ atomics"};

struct sum_state {
    float *sums;                /* M: each row's sum */
    float *parts;               /* a block's part (LAST_BLOCK) */
    unsigned *count;            /* blocks counted in, or tickets drawn; back to 0 at the end */
    unsigned long long *slots;  /* M: a row's sum and a flag (SLOTS); back to 0 at the end */
    float *total;               /* the sum of the matrix */
};
static sum_state g_state;
static int g_mode;

__device__ __forceinline__ void slot_put(unsigned long long *p, float v)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(1ull << 32 | __float_as_uint(v)) : "memory");
}
__device__ __forceinline__ unsigned long long slot_get(const unsigned long long *p)
{
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

template <int MODE>
__global__ void __launch_bounds__(BLK) copy_sum_kernel(const float *__restrict__ x, float *__restrict__ y, int rows,
                                                       sum_state st)
{
    __shared__ float red[ROWS_PER_BLOCK], red_total[32];
    __shared__ bool last;
    const int lane = threadIdx.x % 32, row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32;
    unsigned ticket = 0;
    if (MODE == SLOTS && threadIdx.x == 0) ticket = atomicAdd(st.count, 1u); /* overlaps the row's loads */
    const bool live = row < rows;
    const float4 *xr = reinterpret_cast<const float4 *>(x + (size_t)row * COLS);
    float4 v[4];
#pragma unroll
    for (int i = 0; i < 4; i++) v[i] = live ? xr[lane + 32 * i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float s = 0.0f;
    if (MODE != COPY) {
#pragma unroll
        for (int i = 0; i < 4; i++) s += (v[i].x + v[i].y) + (v[i].z + v[i].w);
        s = row_reduce<32>(s, nullptr, op_sum()); /* a warp per row */
        if (MODE == SLOTS && live && lane == 0) slot_put(st.slots + row, s); /* before the row's stores */
    }
    if (live) {
        float4 *yr = reinterpret_cast<float4 *>(y + (size_t)row * COLS);
#pragma unroll
        for (int i = 0; i < 4; i++) yr[lane + 32 * i] = v[i];
        if (MODE != COPY && lane == 0) st.sums[row] = s;
        if (MODE == ATOMICS && lane == 0) atomicAdd(st.total, s);
    }
    if (MODE == LAST_BLOCK) {
        if (lane == 0) red[threadIdx.x / 32] = live ? s : 0.0f;
        __syncthreads();
        if (threadIdx.x == 0) {
            st.parts[blockIdx.x] = (red[0] + red[1]) + (red[2] + red[3]);
            __threadfence();
            last = atomicAdd(st.count, 1u) == gridDim.x - 1;
        }
        __syncthreads();
        if (!last) return;
        float t = 0.0f;
        for (unsigned b = threadIdx.x; b < gridDim.x; b += BLK) t += __ldcg(st.parts + b);
        t = row_reduce<BLK>(t, red_total, op_sum());
        if (threadIdx.x == 0) {
            *st.total = t;
            *st.count = 0;
        }
    }
    if (MODE == SLOTS) {
        if (!__syncthreads_or(threadIdx.x == 0 && ticket == gridDim.x - 1)) return;
        unsigned long long w[K_SLOTS];
        unsigned waiting = 0;
#pragma unroll
        for (int k = 0; k < K_SLOTS; k++)
            if (threadIdx.x + k * BLK < rows) waiting |= 1u << k;
        while (waiting) { /* one trip to L2 a round */
#pragma unroll
            for (int k = 0; k < K_SLOTS; k++)
                if (waiting >> k & 1u) w[k] = slot_get(st.slots + threadIdx.x + k * BLK);
#pragma unroll
            for (int k = 0; k < K_SLOTS; k++)
                if ((waiting >> k & 1u) && (w[k] >> 32) != 0) waiting &= ~(1u << k);
        }
        float t = 0.0f;
#pragma unroll
        for (int k = 0; k < K_SLOTS; k++)
            if (threadIdx.x + k * BLK < rows) {
                t += __uint_as_float((unsigned)w[k]);
                st.slots[threadIdx.x + k * BLK] = 0;
            }
        t = row_reduce<BLK>(t, red_total, op_sum());
        if (threadIdx.x == 0) {
            *st.total = t;
            *st.count = 0;
        }
    }
}

static void run_mode(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    (void)cols;
    const unsigned grid = (unsigned)((rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK);
    switch (g_mode) {
    case COPY: copy_sum_kernel<COPY><<<grid, BLK, 0, stream>>>(x, y, (int)rows, g_state); break;
    case ROW_SUMS: copy_sum_kernel<ROW_SUMS><<<grid, BLK, 0, stream>>>(x, y, (int)rows, g_state); break;
    case LAST_BLOCK: copy_sum_kernel<LAST_BLOCK><<<grid, BLK, 0, stream>>>(x, y, (int)rows, g_state); break;
    case SLOTS: copy_sum_kernel<SLOTS><<<grid, BLK, 0, stream>>>(x, y, (int)rows, g_state); break;
    default: copy_sum_kernel<ATOMICS><<<grid, BLK, 0, stream>>>(x, y, (int)rows, g_state); break;
    }
    CUDA_CHECK_LAUNCH();
}

/* y equal to x, each row's sum and the total against float64 (|error| at
 * most 1e-5 of the sum of |x|, the order of float32 rounding over 512 and
 * 2^19 terms). Returns 1 when a check fails. */
static int check_mode(int mode, const float *hx, const float *x0, float *y0, long long rows)
{
    const size_t n = (size_t)rows * COLS;
    float *hy = (float *)malloc(n * 4), *hs = (float *)malloc((size_t)rows * 4), total = NAN;
    if (!hy || !hs) { fprintf(stderr, "copy_sum: out of host memory\n"); exit(1); }
    CUDA_CHECK(cudaMemset(y0, 0xFF, n * 4)); /* NaN: an unwritten element fails */
    CUDA_CHECK(cudaMemset(g_state.sums, 0xFF, (size_t)rows * 4));
    CUDA_CHECK(cudaMemset(g_state.total, 0xFF, 4));
    g_mode = mode;
    run_mode(x0, y0, rows, COLS, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hy, y0, n * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hs, g_state.sums, (size_t)rows * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&total, g_state.total, 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    double all = 0.0, all_abs = 0.0;
    for (long long r = 0; r < rows; r++) {
        double s = 0.0, a = 0.0;
        for (int j = 0; j < COLS; j++) {
            const size_t i = (size_t)r * COLS + j;
            if (!(hy[i] == hx[i])) bad = 1;
            s += hx[i];
            a += fabs(hx[i]);
        }
        if (mode != COPY && !(fabs(hs[r] - s) <= 1e-5 * a)) bad = 1;
        all += s;
        all_abs += a;
    }
    if ((mode == LAST_BLOCK || mode == SLOTS) && !(fabs(total - all) <= 1e-5 * all_abs)) bad = 1;
    free(hy);
    free(hs);
    return bad;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    const long long rows = argc > 1 ? strtoll(argv[1], &end, 10) : 1024;
    if (argc > 2 || (argc > 1 && (end == argv[1] || *end != '\0')) || rows < 1 || rows > MAX_ROWS) {
        fprintf(stderr, "usage: copy_sum [M], 1 <= M <= %d rows of %d floats\n", MAX_ROWS, COLS);
        return 2;
    }
    require_gpu("copy_sum");
    const size_t n = (size_t)rows * COLS, bytes = n * 4;
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int sets = rotation_sets(2 * bytes, free_bytes);
    float **x = (float **)malloc(sets * sizeof *x), **y = (float **)malloc(sets * sizeof *y);
    float *hx = (float *)malloc(bytes);
    if (!x || !y || !hx) { fprintf(stderr, "copy_sum: out of host memory\n"); return 1; }
    unsigned long long s = 88172645463325252ull; /* xorshift: values in [-4, 4), never all zeros */
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        hx[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 8.0 - 4.0);
    }
    for (int i = 0; i < sets; i++) {
        CUDA_CHECK(cudaMalloc(&x[i], bytes));
        CUDA_CHECK(cudaMalloc(&y[i], bytes));
        CUDA_CHECK(cudaMemcpy(x[i], hx, bytes, cudaMemcpyHostToDevice));
    }
    CUDA_CHECK(cudaMalloc(&g_state.sums, (size_t)rows * 4));
    CUDA_CHECK(cudaMalloc(&g_state.parts, MAX_ROWS * 4));
    CUDA_CHECK(cudaMalloc(&g_state.count, 4));
    CUDA_CHECK(cudaMalloc(&g_state.slots, MAX_ROWS * 8));
    CUDA_CHECK(cudaMalloc(&g_state.total, 4));
    CUDA_CHECK(cudaMemset(g_state.count, 0, 4)); /* the kernels leave the count and the slots at 0 */
    CUDA_CHECK(cudaMemset(g_state.slots, 0, MAX_ROWS * 8));

    int bad = 0;
    for (int m = 0; m < MODES; m++) {
        const int b = check_mode(m, hx, x[0], y[0], rows);
        if (b) printf("%-14s FAILED its check\n", NAMES[m]);
        bad |= b;
    }
    const timing copy = time_runs(NULL, x, y, sets, rows, COLS, 200, 2000);
    printf("%lld x %d floats (%.1f MiB), %d buffer pairs; median of 2000 runs\n", rows, COLS, bytes / 1048576.0,
           sets);
    printf("%-14s %8.2f us  100.0 %%\n", "memcpy", copy.median_ms * 1e3);
    for (int m = 0; m < MODES; m++) {
        g_mode = m;
        const timing t = time_runs(run_mode, x, y, sets, rows, COLS, 200, 2000);
        printf("%-14s %8.2f us  %5.1f %%\n", NAMES[m], t.median_ms * 1e3, 100.0 * copy.median_ms / t.median_ms);
    }
    return bad;
}
