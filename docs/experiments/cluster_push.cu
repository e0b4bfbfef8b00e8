/* An experiment, not a kernel of the course
 * (docs/experiments/rows-cluster-push.md): what the cluster's exchange of
 * (m, d) costs a 16-bit row spread over a cluster, and whether pushing the
 * states with asynchronous stores (no cluster barrier on the row's way)
 * closes the gap to the copy that QuACK closes on the H200 (bfloat16 rows
 * of 2^16 at 97.6 % of the copy, lesson 9 at 80.0 %; docs/memory-bound.md).
 *
 * A row of N bfloat16 values is cut into C equal pieces, one per CTA of a
 * cluster; each CTA holds its piece in registers as loaded (lesson 9's
 * 16-bit words: fx_words16_load, _max, _sum_exp, _out), so the row is
 * read and written once. Each 16-byte vector is stored by one
 * st.global.v4 (vec16_store_global): through a uint4 the front end may
 * split it into four st.global.u32. Beside lesson 9's softmax as `make
 * bench` runs it (engine: path 3b at these lengths), the builds differ in
 * the exchange (and pushw1 in what the registers hold):
 *   pull   the exchange paths 3 and 3b had before (pull_exchange below):
 *          the block's state into shared memory, cluster.sync, the
 *          others' states read through distributed shared memory, and a
 *          cluster barrier at the end that keeps each CTA alive until the
 *          others have read it;
 *   push   the engine's (common/device/cluster_exchange.cuh): the block's
 *          state stored into every CTA of the cluster with st.async,
 *          counted by an mbarrier in the receiver; the cluster barrier is
 *          arrived at on entry and waited on just before the stores, and
 *          nothing waits at the end;
 *   pushw  as push, but each warp's state, with no block merge first
 *          (QuACK's cluster_reduce, quack/reduce.py);
 *   pushw1 pushw with QuACK's registers: the piece as floats, each exp
 *          taken once and kept (cluster_rows_exp1_kernel);
 *   pushw13 pushw1 held to QuACK's 3 CTAs an SM (__launch_bounds__'s
 *          minimum, 256 threads: at most 85 registers);
 *   alone  no exchange: each CTA normalises by its own piece (wrong
 *          output, timed only): the time left without any exchange;
 *   stagew pushw, the piece loaded as QuACK loads it: each thread's
 *          16-byte words copied into shared memory with cp.async.cg
 *          (no register waits on the loads, no L1 line), then read back
 *          into its registers after cp.async.wait_group 0;
 *   stagea alone, loaded as stagew.
 * Checked (all but alone) on three rows against float64: |y - p| <= p / 128
 * + 1e-6 (bfloat16 keeps 8 bits), each row's sum within 2 % of 1. Timed
 * as `make bench` times lesson 9 (common/harness: buffers rotated past L2,
 * 50 warm-up runs, median of 200), as % of a device-to-device copy of the
 * same bytes.
 *   make build/experiments/cluster_push   (`make all` builds it; sm_90)
 *   build/experiments/cluster_push        (M x N = 2^26, N = 2^16 ... 2^18)
 *   build/experiments/cluster_push --ctas 2   (at most 2 CTAs an SM: unused shared
 *                                          memory, which costs more than the CTA) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"   /* CUDA_CHECK */
#include "f16.h"     /* bf16_from_float, bf16_to_float */
#include "harness.h" /* time_runs, rotation_sets, require_gpu */
#include "device/cluster_launch.h"
#include "device/fastest_device.cuh" /* fx_words16_*, fx_cluster_open / _exchange, fx_push_md, online_md */
#include "device/rows.h"             /* fx_run_typed: the engine itself */

enum { ENGINE, PULL, PUSH, PUSH_WARPS, PUSH_WARPS_EXP1, PUSH_WARPS_EXP1_3, ALONE, STAGED, STAGED_ALONE, MODES };
static const char *NAMES[MODES] = {"engine", "pull", "push", "pushw", "pushw1", "pushw13", "alone", "stagew", "stagea"};
typedef __nv_bfloat16 T;

#if FX_CLUSTER_CODE && !defined(CUDA_EMU)
/* pull: thread 0 puts the CTA's state b in its shared memory; after
 * cluster.sync() warp 0 reads the C states through distributed shared
 * memory, lane i rank i's, and merges them; barrier_arrive after the
 * reads, and the caller's barrier_wait after its stores. */
__device__ __forceinline__ online_md pull_exchange(online_md b, int C)
{
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    __shared__ online_md cta_state, row_state;
    if (threadIdx.x == 0) cta_state = b;
    cluster.sync();
    if (threadIdx.x < 32) {
        online_md q = online_md_identity();
        if ((int)threadIdx.x < C) q = *cluster.map_shared_rank(&cta_state, threadIdx.x);
        for (int off = 16; off > 0; off /= 2) q = online_md_butterfly_step(q, off);
        if (threadIdx.x == 0) row_state = q;
    }
    __syncthreads();
    cluster.barrier_arrive();
    return row_state;
}

#endif

#if FX_CLUSTER_CODE && !defined(CUDA_EMU)
/* This CTA's piece of row blockIdx.x / C into w (pad past the row); returns
 * where the piece starts in x and y. */
template <int C, int BLOCK, int ITEMS>
__device__ __forceinline__ long long load_piece(const T *x, int cols, unsigned pad, unsigned (&w)[ITEMS][4])
{
    constexpr int SEG = BLOCK * ITEMS * 8;
    const unsigned rank = cooperative_groups::this_cluster().block_rank();
    const long long at = (long long)(blockIdx.x / C) * cols + (long long)rank * SEG;
    fx_words16_load<ITEMS, BLOCK>(x + at, SEG / 8, pad, w, (int)threadIdx.x);
    return at;
}

/* load_piece through shared memory (stage: BLOCK * ITEMS words of 16
 * bytes): every word by cp.async.cg, then each thread reads back its own
 * words, so no barrier but the thread's wait_group. */
template <int C, int BLOCK, int ITEMS>
__device__ __forceinline__ long long load_piece_staged(const T *x, int cols, unsigned (&w)[ITEMS][4], uint4 *stage)
{
    constexpr int SEG = BLOCK * ITEMS * 8;
    const unsigned rank = cooperative_groups::this_cluster().block_rank();
    const long long at = (long long)(blockIdx.x / C) * cols + (long long)rank * SEG;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int k = i * BLOCK + (int)threadIdx.x;
        const unsigned a = (unsigned)__cvta_generic_to_shared(stage + k);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(a), "l"(x + at + (long long)k * 8) : "memory");
    }
    asm volatile("cp.async.commit_group;\n\tcp.async.wait_group 0;" ::: "memory");
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const uint4 q = stage[i * BLOCK + (int)threadIdx.x];
        w[i][0] = q.x, w[i][1] = q.y, w[i][2] = q.z, w[i][3] = q.w;
    }
    return at;
}
#endif

/* Row blockIdx.x / C, piece `rank` of C: BLOCK threads of ITEMS 16-byte
 * words each (N = C * BLOCK * ITEMS * 8). */
template <int MODE, int C, int BLOCK, int ITEMS>
__global__ void __launch_bounds__(BLOCK) cluster_rows_kernel(const T *__restrict__ x, T *__restrict__ y, int cols)
{
#if FX_CLUSTER_CODE && !defined(CUDA_EMU)
    constexpr int WARPS = BLOCK / 32;
    __shared__ float red_m[32], red_d[32];
    extern __shared__ uint4 stage[]; /* STAGED modes: the piece */
    if constexpr (MODE == PUSH || MODE == PUSH_WARPS || MODE == STAGED) fx_cluster_open();
    const unsigned pad = vec16_narrow2(-INFINITY, -INFINITY, x);
    unsigned w[ITEMS][4];
    long long at;
    if constexpr (MODE == STAGED || MODE == STAGED_ALONE) at = load_piece_staged<C, BLOCK, ITEMS>(x, cols, w, stage);
    else at = load_piece<C, BLOCK, ITEMS>(x, cols, pad, w);
    const float mt = fx_words16_max(w, pad, x);
    const online_md s = {mt, fx_words16_sum_exp(w, online_md_shift(mt), x)};
    online_md r;
    if constexpr (MODE == PULL) r = pull_exchange(online_md_row_merge<BLOCK>(s, red_m, red_d), C);
    else if constexpr (MODE == PUSH) r = fx_cluster_exchange(online_md_row_merge<BLOCK>(s, red_m, red_d), C);
    else if constexpr (MODE == PUSH_WARPS || MODE == STAGED)
        r = fx_cluster_exchange_warps<C, WARPS>(s, C); /* QuACK's way */
    else r = online_md_row_merge<BLOCK>(s, red_m, red_d);
    const rows_op_softmax::fin f = {1.0f / r.d};
    const float shift = online_md_shift(r.m);
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        unsigned o[4];
        fx_words16_out<rows_op_softmax, false>(w[i], shift, f, o, y);
        vec16_store_global(y + at + (long long)(i * BLOCK + (int)threadIdx.x) * 8, o);
    }
    if constexpr (MODE == PULL) cooperative_groups::this_cluster().barrier_wait(); /* pull_exchange's arrive */
#else
    (void)x, (void)y, (void)cols;
#endif
}

/* pushw1: as pushw, but QuACK's registers too: the piece widened to
 * floats, each element's exp taken once and kept, and scaled on the way
 * out (twice the registers of the words; one exp per element, not two). */
template <int C, int BLOCK, int ITEMS, int MINB>
__global__ void __launch_bounds__(BLOCK, MINB)
cluster_rows_exp1_kernel(const T *__restrict__ x, T *__restrict__ y, int cols)
{
#if FX_CLUSTER_CODE && !defined(CUDA_EMU)
    constexpr int WARPS = BLOCK / 32, N = ITEMS * 8;
    fx_cluster_open();
    const unsigned pad = vec16_narrow2(-INFINITY, -INFINITY, x);
    unsigned w[ITEMS][4];
    const long long at = load_piece<C, BLOCK, ITEMS>(x, cols, pad, w);
    float v[N];
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const float2 f = vec16_widen2(w[i][j], x);
            v[(i * 4 + j) * 2] = f.x;
            v[(i * 4 + j) * 2 + 1] = f.y;
        }
    float mt = -INFINITY, dt = 0.0f;
#pragma unroll
    for (int k = 0; k < N; k++) mt = fmaxf(mt, v[k]);
#pragma unroll
    for (int k = 0; k < N; k++) {
        v[k] = fx_exp<T>(v[k] - online_md_shift(mt));
        dt += v[k];
    }
    const online_md r = fx_cluster_exchange_warps<C, WARPS>(online_md{mt, dt}, C);
    const float scale = fx_exp<T>(mt - online_md_shift(r.m)) / r.d;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        unsigned o[4];
#pragma unroll
        for (int j = 0; j < 4; j++)
            o[j] = vec16_narrow2(v[(i * 4 + j) * 2] * scale, v[(i * 4 + j) * 2 + 1] * scale, y);
        vec16_store_global(y + at + (long long)(i * BLOCK + (int)threadIdx.x) * 8, o);
    }
#else
    (void)x, (void)y, (void)cols;
#endif
}

/* The configurations: X(N, C, BLOCK, ITEMS), N = C * BLOCK * ITEMS * 8. */
#define CONFIGS(X)        \
    X(65536, 2, 512, 8)   \
    X(65536, 4, 256, 8)   \
    X(65536, 4, 512, 4)   \
    X(65536, 8, 256, 4)   \
    X(131072, 4, 512, 8)  \
    X(131072, 8, 256, 8)  \
    X(131072, 8, 512, 4)  \
    X(262144, 8, 512, 8)
#define ONE(n, c, b, i) +1
enum { NCONFIGS = 0 CONFIGS(ONE) };
#undef ONE
static const int CFG[NCONFIGS][4] = {
#define ROW(n, c, b, i) {n, c, b, i},
    CONFIGS(ROW)
#undef ROW
};

static int g_cfg, g_mode;
static int g_ctas;     /* --ctas K: at most K CTAs an SM; 0: as many as fit */
static int g_ctas_now; /* what the last kernel launched fits an SM */

/* Dynamic shared memory: the staged modes' piece (staged bytes), or room
 * for at most g_ctas CTAs of kernel k an SM (unused: ballast; the staged
 * modes ignore --ctas), and the CTAs an SM it then fits. */
template <class K>
static size_t ballast(K k, int block, int *per_sm, size_t staged)
{
    size_t extra = staged;
    if (staged) CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)staged));
    else if (g_ctas) {
        int dev, sm_bytes, reserved, block_max;
        cudaFuncAttributes a;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&block_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        CUDA_CHECK(cudaFuncGetAttributes(&a, k));
        extra = (size_t)sm_bytes / g_ctas - (size_t)reserved - a.sharedSizeBytes;
        if (extra > (size_t)block_max - a.sharedSizeBytes) extra = (size_t)block_max - a.sharedSizeBytes; /* K = 1 */
        CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)extra));
    }
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, k, block, extra));
    return extra;
}

template <int MODE, int C, int BLOCK, int ITEMS>
static void launch(const T *x, T *y, long long rows, int cols, cudaStream_t stream)
{
    constexpr int MINB = MODE == PUSH_WARPS_EXP1_3 && BLOCK == 256 ? 3 : 1;
    auto k = MODE == PUSH_WARPS_EXP1 || MODE == PUSH_WARPS_EXP1_3 ? cluster_rows_exp1_kernel<C, BLOCK, ITEMS, MINB>
                                                                  : cluster_rows_kernel<MODE, C, BLOCK, ITEMS>;
    static int per_sm;
    const size_t staged = MODE == STAGED || MODE == STAGED_ALONE ? (size_t)BLOCK * ITEMS * 16 : 0;
    static const size_t extra = ballast(k, BLOCK, &per_sm, staged); /* once: g_ctas is set before any launch */
    g_ctas_now = per_sm;
    cudaLaunchAttribute attr[1];
    const cudaLaunchConfig_t cfg = fx_cluster_config((unsigned)(rows * C), BLOCK, C, extra, stream, attr);
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, k, x, y, cols));
}

/* softmax_fn for time_runs: x and y hold rows x (2 * cols) bfloat16 values
 * (the copy's floats are the same bytes). */
static void run(const float *xf, float *yf, long long rows, long long cols2, cudaStream_t stream)
{
    const T *x = (const T *)xf;
    T *y = (T *)yf;
    const int cols = (int)(2 * cols2);
    if (g_mode == ENGINE) { /* lesson 9's softmax as make bench runs it (the dispatcher's path) */
        fx_run_typed(FASTEST_AUTO, DTYPE_BF16, x, cols, y, cols, rows, cols, stream);
        return;
    }
    int k = 0;
#define CASE(n, c, b, i)                                                    \
    if (k++ == g_cfg) {                                                     \
        if (g_mode == PULL) launch<PULL, c, b, i>(x, y, rows, cols, stream); \
        if (g_mode == PUSH) launch<PUSH, c, b, i>(x, y, rows, cols, stream); \
        if (g_mode == PUSH_WARPS) launch<PUSH_WARPS, c, b, i>(x, y, rows, cols, stream); \
        if (g_mode == PUSH_WARPS_EXP1) launch<PUSH_WARPS_EXP1, c, b, i>(x, y, rows, cols, stream); \
        if (g_mode == PUSH_WARPS_EXP1_3) launch<PUSH_WARPS_EXP1_3, c, b, i>(x, y, rows, cols, stream); \
        if (g_mode == ALONE) launch<ALONE, c, b, i>(x, y, rows, cols, stream); \
        if (g_mode == STAGED) launch<STAGED, c, b, i>(x, y, rows, cols, stream); \
        if (g_mode == STAGED_ALONE) launch<STAGED_ALONE, c, b, i>(x, y, rows, cols, stream); \
    }
    CONFIGS(CASE)
#undef CASE
    CUDA_CHECK_LAUNCH();
}

/* Rows 0, rows / 2 and rows - 1 of y (y poisoned first) against float64.
 * Returns 1 when one fails. */
static int check(const uint16_t *hx, float *x0, float *y0, long long rows, int cols)
{
    const size_t n = (size_t)rows * cols;
    CUDA_CHECK(cudaMemset(y0, 0xFF, n * 2)); /* NaN: an unwritten element fails */
    run(x0, y0, rows, cols / 2, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    uint16_t *hy = (uint16_t *)malloc((size_t)cols * 2);
    if (!hy) { fprintf(stderr, "cluster_push: out of host memory\n"); exit(1); }
    const long long pick[3] = {0, rows / 2, rows - 1};
    int bad = 0;
    for (int k = 0; k < 3; k++) {
        const uint16_t *xr = hx + (size_t)pick[k] * cols;
        CUDA_CHECK(cudaMemcpy(hy, (const uint16_t *)y0 + (size_t)pick[k] * cols, (size_t)cols * 2,
                              cudaMemcpyDeviceToHost));
        double m = -INFINITY, d = 0.0, sum = 0.0;
        for (int j = 0; j < cols; j++) m = fmax(m, bf16_to_float(xr[j]));
        for (int j = 0; j < cols; j++) d += exp(bf16_to_float(xr[j]) - m);
        for (int j = 0; j < cols; j++) {
            const double p = exp(bf16_to_float(xr[j]) - m) / d, v = bf16_to_float(hy[j]);
            if (!(fabs(v - p) <= p / 128.0 + 1e-6)) bad = 1;
            sum += v;
        }
        if (!(fabs(sum - 1.0) <= 0.02)) bad = 1;
    }
    free(hy);
    return bad;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    if (argc == 3 && strcmp(argv[1], "--ctas") == 0) g_ctas = (int)strtol(argv[2], &end, 10);
    if (end && *end) g_ctas = 0; /* "2x" is not a count */
    if (argc != 1 && !(argc == 3 && g_ctas >= 1 && g_ctas <= 32)) {
        fprintf(stderr, "usage: cluster_push [--ctas K]  (K = 1 ... 32: at most K CTAs an SM)\n");
        return 2;
    }
    require_gpu("cluster_push");
    const size_t n = (size_t)1 << 26, bytes = n * 2;
    size_t free_bytes, total_bytes;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int sets = rotation_sets(2 * bytes, free_bytes);
    float **x = (float **)malloc(sets * sizeof *x), **y = (float **)malloc(sets * sizeof *y);
    uint16_t *hx = (uint16_t *)malloc(bytes);
    if (!x || !y || !hx) { fprintf(stderr, "cluster_push: out of host memory\n"); return 1; }
    unsigned long long s = 88172645463325252ull; /* xorshift: values in [-4, 4), never all zeros */
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        hx[i] = bf16_from_float((float)((double)(s >> 11) / 9007199254740992.0 * 8.0 - 4.0));
    }
    for (int i = 0; i < sets; i++) {
        CUDA_CHECK(cudaMalloc(&x[i], bytes));
        CUDA_CHECK(cudaMalloc(&y[i], bytes));
        CUDA_CHECK(cudaMemcpy(x[i], hx, bytes, cudaMemcpyHostToDevice));
    }
    int bad = 0;
    printf("bfloat16, M x N = 2^26, %d buffer pairs; median of 200 runs, %% of the copy of the same bytes\n", sets);
    printf("%8s %3s %6s %5s %4s  %-6s %9s %7s  %s\n", "N", "C", "block", "items", "CTAs", "mode", "time", "% copy",
           "check");
    for (int c = 0; c < NCONFIGS; c++) {
        const int cols = CFG[c][0];
        const long long rows = (long long)(n / cols);
        const timing copy = time_runs(NULL, x, y, sets, rows, cols / 2, 50, 200);
        g_cfg = c;
        for (int m = 0; m < MODES; m++) {
            g_mode = m;
            const int alone = m == ALONE || m == STAGED_ALONE;
            const int b = alone ? 0 : check(hx, x[0], y[0], rows, cols);
            const timing t = time_runs(run, x, y, sets, rows, cols / 2, 50, 200);
            char ctas[8] = "-"; /* CTAs an SM (the engine's: its own) */
            if (m != ENGINE) snprintf(ctas, sizeof ctas, "%d", g_ctas_now);
            printf("%8d %3d %6d %5d %4s  %-6s %7.2f us %6.1f  %s\n", cols, CFG[c][1], CFG[c][2], CFG[c][3], ctas,
                   NAMES[m], t.median_ms * 1e3, 100.0 * copy.median_ms / t.median_ms,
                   alone ? "(not checked)" : b ? "FAILED" : "ok");
            bad |= b;
        }
    }
    return bad;
}
