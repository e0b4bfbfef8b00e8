/* An experiment, not a kernel of the course (lesson 10's README,
 * "Pitfalls"): why lesson 10's log-softmax ran slower than lesson 8's
 * path 3g on the same design. One row over P independent CTAs of 64 KB
 * (256 threads, 16 floats each in registers, 48 KB of shared memory),
 * the CTAs' (m, d) states met in global memory. Each kernel is one
 * corner of a 2 x 2:
 *   frame: the ticket, the exchange and the end, through lesson 10's
 *          helpers (train_onchip_take, train_onchip_exchange,
 *          train_onchip_leave) or written out as path3g_grid.cu does;
 *   body:  the piece's load and store, lesson 10's (train_onchip_load,
 *          train_onchip_store_regs and _shared, writing the log-softmax) or lesson 8's
 *          (fx_piece_read, fx_piece_write, writing the softmax).
 * Aligned rows (N % 4 == 0) of at least 64 KB; rows 0 and M - 1 of each
 * kernel are checked against float64. Prints % of a device-to-device
 * copy timed in the same process (medians of 120 back-to-back runs).
 *   make build/experiments/frame_body   (`make all` builds it too; sm_90)
 *   build/experiments/frame_body [M N]  (default 64 1048576)
 * Measured on an H100 80GB HBM3 (2026-11-27, one run of this program
 * per shape), the same registers (48) and CTAs per SM (4) in all four,
 * % of the copy at 64 x 2^20 / 32 x 2^21 / 128 x 2^19:
 *   helpers + lesson 10's body   88.7 / 86.4 / 90.4
 *   written out + lesson 8's     90.2 / 88.2 / 91.1
 *   helpers + lesson 8's         90.1 / 88.0 / 91.2
 *   written out + lesson 10's    90.3 / 87.6 / 91.5
 * Only one corner is slow, although the PTX of the two frames differs
 * only in where two addresses and the piece's length are computed: the
 * difference is in how ptxas schedules the whole. Lesson 10's
 * log-softmax now writes its frame out (log_softmax.cu). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <algorithm>
#include <vector>
#include "check.h"     /* CUDA_CHECK */
#include "reference.h" /* the float64 rows */
#include "../../lessons/10_training/train_grid.cuh"

#define BLK 256
#define FPT 16

struct log_op {
    float m, lse;
    __device__ float operator()(float v, long long) const { return (v - m) - lse; }
};

/* HELPERS: lesson 10's frame, else path 3g's written out; BODY10: lesson 10's load and store (log-softmax). */
template <bool HELPERS, bool BODY10>
__global__ void __launch_bounds__(BLK) frame_body_kernel(const float *__restrict__ x, float *__restrict__ y,
                                                         long long cols, int pieces, int seg, unsigned *sync,
                                                         online_md *work)
{
    extern __shared__ float4 fb_smem[];
    float *srow = reinterpret_cast<float *>(fb_smem);
    __shared__ float red_m[32], red_d[32];
    long long row, begin;
    int piece, len;
    if constexpr (HELPERS) {
        train_onchip_take(sync, pieces, seg, cols, &row, &piece, &begin, &len);
    } else {
        __shared__ unsigned ticket;
        if (threadIdx.x == 0) fx_grid_ticket(&sync[0], &ticket);
        __syncthreads();
        row = ticket / (unsigned)pieces;
        piece = (int)(ticket % (unsigned)pieces);
        len = fx_piece_len((int)cols, piece, seg);
        begin = (long long)piece * seg;
    }
    float v[FPT + 1], m_regs = 0.0f;
    online_md s;
    if constexpr (BODY10)
        s = train_onchip_load<4, FPT, true, float, false, BLK>(x + row * cols + begin, len, v, srow, -INFINITY);
    else
        s = fx_piece_read<rows_op_softmax, 4, false, FPT, BLK, false>(x + row * cols + begin, len, -INFINITY, v, srow, &m_regs);
    const online_md b = online_md_row_merge<BLK>(s, red_m, red_d);
    online_md r;
    unsigned before = 0;
    if constexpr (HELPERS) {
        r = train_grid_exchange(b, work + row * pieces, piece, pieces, &sync[1 + row], red_m, red_d, &before);
    } else {
        online_md *wr = work + row * pieces;
        if (threadIdx.x == 0) {
            wr[piece] = b;
            fx_grid_arrive_wait(&sync[1 + row], (unsigned)pieces);
        }
        __syncthreads();
        online_md q = online_md_identity();
        for (int i = threadIdx.x; i < pieces; i += BLK) {
            const float2 w = __ldcg(reinterpret_cast<const float2 *>(wr + i));
            const online_md o = {w.x, w.y};
            q = online_md_merge(q, o);
        }
        r = online_md_row_merge<BLK>(q, red_m, red_d);
        before = threadIdx.x == 0 ? fx_grid_count_out(&sync[1 + row]) : 0u;
    }
    if constexpr (BODY10) {
        const log_op op = {r.m, logf(r.d)};
        constexpr int RCAP = BLK * FPT; /* lesson 10's way out: its register part, then its shared part */
        const int rlen = len < RCAP ? len : RCAP;
        train_onchip_store_regs<4, FPT, float, log_op, BLK>(y + row * cols + begin, rlen / 4, v, op);
        train_onchip_store_shared<4, float, log_op, BLK>(y + row * cols + begin + RCAP, (len - rlen) / 4, srow, RCAP,
                                                         op);
    } else {
        fx_piece_write<rows_op_softmax, 4, false, FPT, BLK>(y + row * cols + begin, len, v, srow, m_regs, r,
                                                            (float *)nullptr);
    }
    if constexpr (HELPERS) train_onchip_leave(&sync[1 + row], before, pieces);
    else if (threadIdx.x == 0) fx_grid_leave(&sync[1 + row], before, (unsigned)pieces);
}

typedef void (*kfn)(const float *, float *, long long, int, int, unsigned *, online_md *);

/* Largest |error| of one row y of x against common/reference.c's
 * float64 rows: relative (floored at 1) for the log-softmax, absolute on
 * the softmax's probabilities; NaN counts as infinite. */
static double row_error(const float *x, const float *y, double *ref, long long cols, bool log_softmax)
{
    if (log_softmax) ref_log_softmax_row(x, ref, cols);
    else ref_softmax_row(x, ref, cols);
    double err = 0.0;
    for (long long j = 0; j < cols; j++) {
        const double e = fabs(y[j] - ref[j]) / (log_softmax ? fmax(1.0, fabs(ref[j])) : 1.0);
        if (!(e <= err)) err = e != e ? INFINITY : e;
    }
    return err;
}

int main(int argc, char **argv)
{
    const long long R = argc > 2 ? atoll(argv[1]) : 64, C = argc > 2 ? atoll(argv[2]) : 1048576;
    const int seg = BLK * FPT + 48 * 1024 / 4, P = (int)((C + seg - 1) / seg);
    const size_t smem = (size_t)(seg - BLK * FPT) * 4, n = (size_t)R * C;
    if (R < 1 || C < seg || C % 4 || R * P > (1LL << 30)) {
        fprintf(stderr, "usage: frame_body [M N], N a multiple of 4 and at least %d\n", seg);
        return 2;
    }
    float *hx = (float *)malloc(n * 4), *hy = (float *)malloc((size_t)C * 4);
    double *ref = (double *)malloc((size_t)C * sizeof(double));
    if (!hx || !hy || !ref) { fprintf(stderr, "out of host memory\n"); return 1; }
    unsigned long long st = 88172645463325252ull; /* xorshift: values in [-4, 4), never all zeros */
    for (size_t i = 0; i < n; i++) {
        st ^= st << 13; st ^= st >> 7; st ^= st << 17;
        hx[i] = (float)((double)(st >> 11) / 9007199254740992.0 * 8.0 - 4.0);
    }
    float *X, *Y;
    unsigned *S;
    online_md *W;
    CUDA_CHECK(cudaMalloc(&X, n * 4));
    CUDA_CHECK(cudaMalloc(&Y, n * 4));
    CUDA_CHECK(cudaMalloc(&S, (R + 1) * 4));
    CUDA_CHECK(cudaMemset(S, 0, (R + 1) * 4)); /* the kernels leave the counters at 0 */
    CUDA_CHECK(cudaMalloc(&W, R * P * sizeof(online_md)));
    CUDA_CHECK(cudaMemcpy(X, hx, n * 4, cudaMemcpyHostToDevice));
    kfn ks[5] = {nullptr, frame_body_kernel<true, true>, frame_body_kernel<false, false>,
                 frame_body_kernel<true, false>, frame_body_kernel<false, true>};
    const char *names[5] = {"copy", "helpers + lesson 10's body", "written out + lesson 8's", "helpers + lesson 8's",
                            "written out + lesson 10's"};
    printf("%lld x %lld: %d pieces of %d floats\n", R, C, P, seg);
    int bad = 0;
    for (int i = 1; i < 5; i++) {
        CUDA_CHECK(cudaFuncSetAttribute(ks[i], cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        cudaFuncAttributes a;
        CUDA_CHECK(cudaFuncGetAttributes(&a, ks[i]));
        int per = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, ks[i], BLK, smem));
        CUDA_CHECK(cudaMemset(Y, 0xFF, n * 4)); /* NaN: an unwritten element fails the check */
        ks[i]<<<(unsigned)(R * P), BLK, smem>>>(X, Y, C, P, seg, S, W);
        CUDA_CHECK_LAUNCH();
        double err = 0.0;
        for (long long r : {0LL, R - 1}) {
            CUDA_CHECK(cudaMemcpy(hy, Y + r * C, (size_t)C * 4, cudaMemcpyDeviceToHost));
            err = fmax(err, row_error(hx + r * C, hy, ref, C, i == 1 || i == 4));
        }
        const bool ok = err < 1e-5;
        bad |= !ok;
        printf("%-28s %d registers, %d CTAs per SM, rows 0 and M-1: max error %.2e %s\n", names[i], a.numRegs, per,
               err, ok ? "ok" : "FAILED");
    }
    const int N = 40, reps = 3;
    std::vector<cudaEvent_t> ev(2 * N);
    for (auto &e : ev) CUDA_CHECK(cudaEventCreate(&e));
    std::vector<std::vector<float>> t(5);
    for (int rep = 0; rep < reps; rep++)
        for (int i = 0; i < 5; i++) {
            for (int j = -3; j < N; j++) { /* 3 untimed runs first */
                if (j >= 0) CUDA_CHECK(cudaEventRecord(ev[2 * j], 0));
                if (i == 0) CUDA_CHECK(cudaMemcpyAsync(Y, X, n * 4, cudaMemcpyDeviceToDevice, 0));
                else ks[i]<<<(unsigned)(R * P), BLK, smem>>>(X, Y, C, P, seg, S, W);
                CUDA_CHECK_LAUNCH();
                if (j >= 0) CUDA_CHECK(cudaEventRecord(ev[2 * j + 1], 0));
            }
            CUDA_CHECK(cudaDeviceSynchronize());
            for (int j = 0; j < N; j++) {
                float ms;
                CUDA_CHECK(cudaEventElapsedTime(&ms, ev[2 * j], ev[2 * j + 1]));
                t[i].push_back(ms);
            }
        }
    double med[5];
    for (int i = 0; i < 5; i++) {
        std::sort(t[i].begin(), t[i].end());
        med[i] = t[i][t[i].size() / 2];
    }
    for (int i = 0; i < 5; i++)
        printf("%-28s %8.1f us  %5.1f %% of the copy\n", names[i], med[i] * 1e3, 100.0 * med[0] / med[i]);
    return bad;
}
