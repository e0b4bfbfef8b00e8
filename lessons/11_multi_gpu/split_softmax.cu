/* Lesson 11: softmax over rows split across GPUs. Per rank:
 *
 *   1. the (m, d) of each piece of its slice of each row, one block per
 *      piece: lesson 8's row engine, kernel 1 of its split path (path 4,
 *      common/device/path4_split.cuh), read 1;
 *   2. split_rank_kernel: the pieces' states merged into the slice's
 *      (m_k, d_k) per row;
 *   3. the states combined across the ranks (split_comm.h), one of two
 *      ways (split_method):
 *        all-reduce: M = max_k m_k (collective 1), then
 *                    D = sum_k d_k exp(m_k - M) (split_rescale_kernel,
 *                    collective 2): two collectives of M floats;
 *        all-gather: every rank gets all K pairs (m_k, d_k) (one
 *                    collective of 2 M floats) and merges them itself;
 *   4. y = exp(x - M) / D over its slice: kernel 2 of the engine's split
 *      path, each row's state found by split_gathered or split_reduced,
 *      read 2 and the write.
 *
 * Each GPU moves 12 bytes per element of its slice (lesson 6's two reads
 * and one write: the slice of a long row does not stay on chip between
 * the collective and the write), plus 8 bytes per row through the
 * collectives. The merge is lesson 6's: associative, so any split of a
 * row, across blocks or across GPUs, gives the same (M, D) up to
 * rounding; the all-gather merges the K pairs in the same order and tree
 * on every rank, so every rank computes the same bits. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "split_softmax.h"
#include "device/online_md.cuh"  /* lesson 6's (m, d) state, merge and row merge */
#include "device/path4_split.cuh" /* lesson 8's split path: its two kernels     */
#include "check.h"

#define SPLIT_BLOCK 256 /* the small kernels' (2, 3a, 4') */

long long split_begin(long long cols, int k, int ranks)
{
    /* k N / K without overflow for N up to 2^40 and K <= 16 */
    return cols / ranks * k + cols % ranks * k / ranks;
}

/* 2. A warp per row merges the row's piece states (lane l takes pieces l,
 * l + 32, ..., then the warp's butterfly) into mine[r] = (m_k, d_k), and
 * (all-reduce) copies m_k into m[r] for the first collective. A slice has
 * few pieces: a warp, not a block, per row. */
__global__ void __launch_bounds__(SPLIT_BLOCK)
split_rank_kernel(const online_md *__restrict__ state, long long rows, long long pieces, float2 *__restrict__ mine,
                  float *__restrict__ m)
{
    constexpr int WARPS = SPLIT_BLOCK / 32;
    const int lane = threadIdx.x % 32;
    for (long long r0 = (long long)blockIdx.x * WARPS; r0 < rows; r0 += (long long)gridDim.x * WARPS) {
        const long long r = r0 + threadIdx.x / 32;
        online_md s = online_md_identity();
        if (r < rows)
            for (long long p = lane; p < pieces; p += 32) s = online_md_merge(s, state[r * pieces + p]);
        s = online_md_row_merge<32>(s, NULL, NULL); /* every lane of the warp, live row or not */
        if (r < rows && lane == 0) {
            mine[r] = make_float2(s.m, s.d);
            if (m) m[r] = s.m;
        }
    }
}

/* 3a. After the max's all-reduce (M[r] in m[r]): this rank's share of D,
 * d_k exp(m_k - M), into d[r] for the second collective. A rank that saw
 * only -inf has (-inf, 0): exp(-inf - M) = 0, 0 x 0 = 0. */
__global__ void split_rescale_kernel(const float2 *__restrict__ mine, const float *__restrict__ m, long long rows,
                                     float *__restrict__ d)
{
    for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < rows;
         r += (long long)gridDim.x * blockDim.x) {
        const float2 s = mine[r];
        d[r] = s.y * expf(s.x - online_md_shift(m[r]));
    }
}

/* Row r's (M, D): from the two all-reduced arrays (m, d), or (all-gather,
 * m NULL) merged from the K pairs in `all` (rank k's at all[k * rows +
 * r]) in rank order. */
__device__ __forceinline__ online_md split_row_state(long long r, long long rows, const float *m, const float *d,
                                                     const float2 *all, int nranks)
{
    if (m) {
        const online_md R = {m[r], d[r]};
        return R;
    }
    online_md R = online_md_identity();
    for (int k = 0; k < nranks; k++) {
        const float2 p = all[k * rows + r];
        const online_md o = {p.x, p.y};
        R = online_md_merge(R, o);
    }
    return R;
}

/* 4. Row r's (M, D) for the engine's split write (path4_split.cuh's
 * fx_split_rows): the K ranks' pairs, rank k's at all[k * rows + r], merged
 * by every block in the same order and tree (all-gather), or the row's own
 * pair from the two all-reduced arrays. Structs with member functions (C++)
 * because the write kernel is a template over where it finds the states:
 * each is inlined into its own instance. */
struct split_gathered {
    long long rows;
    int nranks;
    struct pairs {
        const online_md *p;
        long long stride;
        __device__ __forceinline__ online_md operator[](long long k) const { return p[k * stride]; }
    };
    __device__ __forceinline__ long long count(long long) const { return nranks; }
    __device__ __forceinline__ pairs row(const online_md *all, long long r, long long) const
    {
        return pairs{all + r, rows};
    }
};
struct split_reduced {
    const float *m, *d;
    struct pair {
        online_md s;
        __device__ __forceinline__ online_md operator[](long long) const { return s; }
    };
    __device__ __forceinline__ long long count(long long) const { return 1; }
    __device__ __forceinline__ pair row(const online_md *, long long r, long long) const
    {
        return pair{online_md{m[r], d[r]}};
    }
};

/* 4'. The cross-entropy of each row over the split vocabulary, lesson 10's
 * (M - x[t]) + log D: only the rank whose slice holds column t writes it,
 * the others 0, and an all-reduce sum gives every rank the loss (one term
 * and zeros: exact). An ignored row is 0 on every rank; a target out of
 * range NaN on every rank. */
__global__ void split_loss_kernel(const float *__restrict__ x, long long rows, long long n, long long c0, long long cols,
                                  const int *__restrict__ targets, int ignore_index, const float *__restrict__ m,
                                  const float *__restrict__ d, const float2 *__restrict__ all, int nranks,
                                  float *__restrict__ losses)
{
    for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < rows;
         r += (long long)gridDim.x * blockDim.x) {
        const long long t = targets[r];
        float l = 0.0f;
        if (t == ignore_index) l = 0.0f;
        else if (t < 0 || t >= cols) l = __int_as_float(0x7fc00000);
        else if (t >= c0 && t < c0 + n) {
            const online_md R = split_row_state(r, rows, m, d, all, nranks);
            l = (R.m - x[r * n + (t - c0)]) + logf(R.d);
        }
        losses[r] = l;
    }
}

/* ---- the host side ---------------------------------------------------------------- */

/* A rank's work buffers, kept between calls (grown when too small). */
typedef struct {
    int device;
    online_md *state;  /* rows x pieces          */
    float2 *mine;      /* rows: (m_k, d_k)       */
    float *m, *d;      /* rows each (all-reduce) */
    float2 *all;       /* K x rows (all-gather)  */
    size_t state_n, mine_n, m_n, d_n, all_n; /* their capacities */
} split_work;

static split_work g_work[SPLIT_MAX_RANKS];
static int g_nwork;
static cudaEvent_t g_comm_start, g_comm_end;
static int g_events_device = -1;

static void *grow(void *p, size_t *have, size_t want, size_t elem)
{
    if (want <= *have) return p;
    if (p) CUDA_CHECK(cudaFree(p));
    CUDA_CHECK(cudaMalloc(&p, want * elem));
    *have = want;
    return p;
}

void split_release(void)
{
    for (int k = 0; k < g_nwork; k++) {
        split_work *w = &g_work[k];
        CUDA_CHECK(cudaSetDevice(w->device));
        CUDA_CHECK(cudaFree(w->state));
        CUDA_CHECK(cudaFree(w->mine));
        CUDA_CHECK(cudaFree(w->m));
        CUDA_CHECK(cudaFree(w->d));
        CUDA_CHECK(cudaFree(w->all));
        memset(w, 0, sizeof *w);
    }
    g_nwork = 0;
    if (g_events_device >= 0) {
        CUDA_CHECK(cudaSetDevice(g_events_device));
        CUDA_CHECK(cudaEventDestroy(g_comm_start));
        CUDA_CHECK(cudaEventDestroy(g_comm_end));
        g_events_device = -1;
    }
}

/* Pieces of a slice of n floats: the engine's split path's
 * (fx_split_shape), one grid of at most INT_MAX blocks. */
static void split_plan(long long rows, long long n, long long *pieces, long long *seg)
{
    fx_split_shape(rows, n > 0 ? n : 1, pieces, seg);
    if (rows * *pieces > INT_MAX) {
        fprintf(stderr, "softmax_split: %lld rows of %lld pieces: more than %d blocks\n", rows, *pieces, INT_MAX);
        exit(2);
    }
}

/* float4 accesses: the slice's rows start on 16 bytes. */
static bool split_vec(const split_rank *q)
{
    return q->n % 4 == 0 && (size_t)q->x % 16 == 0 && (size_t)q->y % 16 == 0;
}

/* The events that time the collectives, on the device of rank 0. */
static void split_events(int device)
{
    if (g_events_device != device) {
        if (g_events_device >= 0) {
            CUDA_CHECK(cudaSetDevice(g_events_device));
            CUDA_CHECK(cudaEventDestroy(g_comm_start));
            CUDA_CHECK(cudaEventDestroy(g_comm_end));
        }
        CUDA_CHECK(cudaSetDevice(device));
        CUDA_CHECK(cudaEventCreate(&g_comm_start));
        CUDA_CHECK(cudaEventCreate(&g_comm_end));
        g_events_device = device;
    }
    CUDA_CHECK(cudaSetDevice(device));
}

static unsigned grid_1d(long long rows)
{
    const long long b = rows < 65536 * 16 ? rows : 65536 * 16;
    return (unsigned)(b < 1 ? 1 : b);
}

/* Steps 1 to 3 on every rank: after it, rank k's (M, D) per row is in
 * (g_work[k].m, g_work[k].d) (all-reduce) or merged from g_work[k].all
 * (all-gather). pieces/seg: each rank's plan, for the write. */
static void split_combine(const split_rank *ranks, int nranks, long long rows, split_method how, split_comm *comm,
                          long long *pieces, long long *seg)
{
    if (nranks < 1 || nranks > SPLIT_MAX_RANKS || !comm || comm->ranks != nranks) {
        fprintf(stderr, "softmax_split: %d ranks for a communicator of %d (1 ... %d)\n", nranks,
                comm ? comm->ranks : 0, SPLIT_MAX_RANKS);
        exit(2);
    }
    split_place at[SPLIT_MAX_RANKS];
    float *m[SPLIT_MAX_RANKS], *d[SPLIT_MAX_RANKS], *send[SPLIT_MAX_RANKS], *recv[SPLIT_MAX_RANKS];
    if (g_nwork < nranks) g_nwork = nranks;
    /* 1 and 2 on every rank */
    for (int k = 0; k < nranks; k++) {
        const split_rank *q = &ranks[k];
        split_work *w = &g_work[k];
        at[k] = q->at;
        if (w->state && w->device != q->at.device) {
            fprintf(stderr, "softmax_split: rank %d moved from GPU %d to GPU %d; call split_release first\n", k,
                    w->device, q->at.device);
            exit(2);
        }
        w->device = q->at.device;
        CUDA_CHECK(cudaSetDevice(q->at.device));
        split_plan(rows, q->n, &pieces[k], &seg[k]);
        w->state = (online_md *)grow(w->state, &w->state_n, (size_t)(rows * pieces[k]), sizeof(online_md));
        w->mine = (float2 *)grow(w->mine, &w->mine_n, (size_t)rows, sizeof(float2));
        w->m = (float *)grow(w->m, &w->m_n, (size_t)rows, sizeof(float));
        w->d = (float *)grow(w->d, &w->d_n, (size_t)rows, sizeof(float));
        w->all = (float2 *)grow(w->all, &w->all_n, (size_t)(rows * nranks), sizeof(float2));
        if (split_vec(q)) fx_split_states<4>(q->x, q->n, rows, q->n, pieces[k], seg[k], w->state, q->at.stream);
        else fx_split_states<1>(q->x, q->n, rows, q->n, pieces[k], seg[k], w->state, q->at.stream);
        split_rank_kernel<<<grid_1d((rows + SPLIT_BLOCK / 32 - 1) / (SPLIT_BLOCK / 32)), SPLIT_BLOCK, 0, q->at.stream>>>(w->state, rows, pieces[k], w->mine,
                                                                          how == SPLIT_ALL_REDUCE ? w->m : NULL);
        CUDA_CHECK_LAUNCH();
        m[k] = w->m;
        d[k] = w->d;
        send[k] = (float *)w->mine;
        recv[k] = (float *)w->all;
    }
    /* 3: the collectives, timed on rank 0's stream */
    split_events(at[0].device);
    CUDA_CHECK(cudaEventRecord(g_comm_start, at[0].stream));
    if (how == SPLIT_ALL_REDUCE) {
        comm->all_reduce(comm, m, rows, SPLIT_MAX, at);
        for (int k = 0; k < nranks; k++) {
            CUDA_CHECK(cudaSetDevice(at[k].device));
            split_rescale_kernel<<<grid_1d((rows + 255) / 256), 256, 0, at[k].stream>>>(g_work[k].mine, m[k], rows, d[k]);
            CUDA_CHECK_LAUNCH();
        }
        comm->all_reduce(comm, d, rows, SPLIT_SUM, at);
    } else {
        comm->all_gather(comm, send, recv, 2 * rows, at);
    }
    CUDA_CHECK(cudaSetDevice(at[0].device));
    CUDA_CHECK(cudaEventRecord(g_comm_end, at[0].stream));
}

void softmax_split(const split_rank *ranks, int nranks, long long rows, split_method how, split_comm *comm)
{
    if (rows <= 0) return;
    long long pieces[SPLIT_MAX_RANKS], seg[SPLIT_MAX_RANKS];
    split_combine(ranks, nranks, rows, how, comm, pieces, seg);
    /* 4 on every rank */
    for (int k = 0; k < nranks; k++) {
        const split_rank *q = &ranks[k];
        const split_work *w = &g_work[k];
        CUDA_CHECK(cudaSetDevice(q->at.device));
        const online_md *all = (const online_md *)w->all; /* float2 pairs: (m, d) */
        const split_gathered g = {rows, nranks};
        const split_reduced r = {w->m, w->d};
        const bool v4 = split_vec(q), reduced = how == SPLIT_ALL_REDUCE;
        const long long n = q->n;
        const float *x = q->x;
        float *y = q->y;
        const long long p = pieces[k], sg = seg[k];
        const cudaStream_t st = q->at.stream;
        if (v4 && reduced) fx_split_write<rows_op_softmax, 4>(x, n, y, n, rows, n, p, sg, all, r, st);
        else if (v4) fx_split_write<rows_op_softmax, 4>(x, n, y, n, rows, n, p, sg, all, g, st);
        else if (reduced) fx_split_write<rows_op_softmax, 1>(x, n, y, n, rows, n, p, sg, all, r, st);
        else fx_split_write<rows_op_softmax, 1>(x, n, y, n, rows, n, p, sg, all, g, st);
    }
}

void cross_entropy_split(const split_rank *ranks, int nranks, long long rows, long long cols,
                         const int *const *targets, int ignore_index, float *const *losses, split_method how,
                         split_comm *comm)
{
    if (rows <= 0) return;
    long long pieces[SPLIT_MAX_RANKS], seg[SPLIT_MAX_RANKS];
    split_place at[SPLIT_MAX_RANKS];
    split_combine(ranks, nranks, rows, how, comm, pieces, seg);
    for (int k = 0; k < nranks; k++) {
        const split_rank *q = &ranks[k];
        const split_work *w = &g_work[k];
        at[k] = q->at;
        CUDA_CHECK(cudaSetDevice(q->at.device));
        split_loss_kernel<<<grid_1d((rows + 255) / 256), 256, 0, q->at.stream>>>(
            q->x, rows, q->n, split_begin(cols, k, nranks), cols, targets[k], ignore_index,
            how == SPLIT_ALL_REDUCE ? w->m : NULL, w->d, w->all, nranks, losses[k]);
        CUDA_CHECK_LAUNCH();
    }
    comm->all_reduce(comm, losses, rows, SPLIT_SUM, at);
}

float split_last_comm_ms(void)
{
    float ms = 0.0f;
    if (g_events_device < 0) return 0.0f;
    CUDA_CHECK(cudaSetDevice(g_events_device));
    CUDA_CHECK(cudaEventElapsedTime(&ms, g_comm_start, g_comm_end));
    return ms;
}
