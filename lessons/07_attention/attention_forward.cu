/* Lesson 7: single-head attention, O = softmax(Q K^T * scale) V, computed
 * without ever holding the S x S score matrix (attention_tiled_kernel),
 * next to the way that does hold it (attention_materialized), and a
 * float64 reference on the CPU.
 *
 * The online softmax of lesson 6 keeps, for a stream of values, the
 * running max m and the running sum d = sum exp(v - m); when the max grows
 * to m', the sum so far is rescaled by exp(m - m'). Attention needs not the
 * probabilities themselves but their weighted sum of V rows,
 *     o = sum_j exp(s_j - m) v_j / l,    l = sum_j exp(s_j - m),
 * and a sum of exp(s_j - m) times anything rescales exactly as d does: when
 * the max moves from m to m', every term changes by the same factor
 * exp(m - m'). So o can be accumulated tile by tile of keys, with (m, l)
 * as lesson 6's (m, d) and the unnormalised o multiplied by the same
 * factor, and divided by l once at the end (Milakov & Gimelshein 2018 for
 * the softmax; Dao et al., FlashAttention, 2022, for the idea applied to
 * attention). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "attention_forward.h"
#include "softmax_attention.h"
#include "check.h"
/* Lesson 6's online state: online_md_shift, the -inf-safe shift. */
#include "device/online_md.cuh"

#define FULL_MASK 0xffffffffu

/* Queries per block (one per warp) and keys per tile (one per lane). */
#define ATTN_WARPS 8
#define ATTN_TILE 32

/* Every lane gets the max / the sum of the warp's 32 values (lesson 4's
 * xor butterfly: all 32 lanes take part in every shuffle). */
__device__ __forceinline__ float warp_max(float v)
{
    for (int off = 16; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, off));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(FULL_MASK, v, off);
    return v;
}

/* ---- the online (tiled) kernel ----------------------------------------------
 * D: head dimension, a template parameter (why: each lane keeps D / 32
 * output columns in a register array, which needs a compile-time size and
 * unrolled loops, as lesson 5's rows do).
 *
 * One block = ATTN_WARPS queries, one per warp. The block walks over the
 * keys in tiles of ATTN_TILE = 32, staging each tile of K and V in shared
 * memory once for all its queries. For each tile, in each warp:
 *   1. lane j computes the score of key k0 + j: s = scale * (q . k);
 *   2. the tile's max joins the running max: m' = max(m, max_j s_j);
 *   3. alpha = exp(m - m') rescales what was accumulated; p_j = exp(s_j - m');
 *      l = l * alpha + sum_j p_j;
 *   4. o = o * alpha + sum_j p_j v_j, lane c holding columns c, c + 32, ...
 * and at the end o / l is the output row. Per block the memory is one
 * query row per warp and one tile of K and V: 32 (2 D + 1) + 8 D floats,
 * whatever S is.
 *
 * Shared-memory banks (32 banks of 4 bytes): in step 1 lane j reads row j
 * of the K tile, column c. With rows of D floats (D a multiple of 32) all
 * 32 lanes would hit the same bank; rows of D + 1 floats put lane j in
 * bank (j + c) % 32, all different. In step 4 the lanes read consecutive
 * columns of one V row: different banks already. q_s and p_s are read at
 * one address by the whole warp: a broadcast.
 *
 * Causal: query i keeps keys j <= i. The block's last query is
 * q_first + ATTN_WARPS - 1, so tiles starting past it are never loaded:
 * about half of all tiles are skipped. Every warp of a block runs the same
 * tiles, so every __syncthreads is reached by all its threads; a warp whose
 * query is past S (live = 0) computes masked scores and stores nothing. */
template <int D>
__global__ void __launch_bounds__(ATTN_WARPS * 32)
attention_tiled_kernel(const float *__restrict__ q, const float *__restrict__ k,
                       const float *__restrict__ v, float *__restrict__ o, long long S,
                       float scale, int causal)
{
    static_assert(D % 32 == 0, "each lane owns D / 32 output columns");
    constexpr int W = ATTN_WARPS, BK = ATTN_TILE, DPL = D / 32;
    __shared__ float q_s[W][D];
    __shared__ float k_s[BK][D + 1]; /* + 1: conflict-free column reads */
    __shared__ float v_s[BK][D];
    __shared__ float p_s[W][BK];

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long q_first = (long long)blockIdx.x * W;
    const long long row = q_first + warp; /* this warp's query */
    const bool live = row < S;

    for (int c = lane; c < D; c += 32) q_s[warp][c] = live ? q[row * D + c] : 0.0f;

    /* Keys this block needs: all, or (causal) up to its last query. */
    long long kend = S;
    if (causal && q_first + W < S) kend = q_first + W;

    float m = -INFINITY, l = 0.0f, acc[DPL];
    for (int t = 0; t < DPL; t++) acc[t] = 0.0f;

    for (long long k0 = 0; k0 < kend; k0 += BK) {
        /* Every warp is done with the previous tile (and q_s is written). */
        __syncthreads();
        for (int i = threadIdx.x; i < BK * D; i += W * 32) {
            const int r = i / D, c = i % D;
            const long long key = k0 + r;
            k_s[r][c] = key < S ? k[key * D + c] : 0.0f;
            v_s[r][c] = key < S ? v[key * D + c] : 0.0f;
        }
        __syncthreads();

        /* 1. This lane's score. */
        const long long key = k0 + lane;
        float s = 0.0f;
        for (int c = 0; c < D; c++) s += q_s[warp][c] * k_s[lane][c];
        s *= scale;
        if (!live || key >= S || (causal && key > row)) s = -INFINITY;

        /* 2-3. The running (m, l): lesson 6's (m, d) update, with the
         * shift that keeps -inf - (-inf) out (a tile masked entirely). */
        const float m_new = fmaxf(m, warp_max(s));
        const float shift = online_md_shift(m_new);
        const float alpha = expf(m - shift); /* exp(m_old - m_new); 0 on the first tile */
        const float p = expf(s - shift);
        l = l * alpha + warp_sum(p);
        m = m_new;

        /* 4. o = o * alpha + P V. Each lane needs all 32 p's of its warp:
         * through shared memory, after a barrier (this course's warps talk
         * through shuffles and __syncthreads only). */
        p_s[warp][lane] = p;
        __syncthreads();
        for (int t = 0; t < DPL; t++) acc[t] *= alpha;
        for (int j = 0; j < BK; j++) {
            const float pj = p_s[warp][j];
            for (int t = 0; t < DPL; t++) acc[t] += pj * v_s[j][lane + 32 * t];
        }
    }

    if (live) {
        const float inv = l == 0.0f ? 0.0f : 1.0f / l; /* no key kept: zeros */
        for (int t = 0; t < DPL; t++) o[row * D + lane + 32 * t] = acc[t] * inv;
    }
}

/* ---- the materialising way -------------------------------------------------- */

/* scores[i][j] = q_i . k_j, one thread per element (64-bit: S^2 may pass 2^31). */
__global__ void __launch_bounds__(256)
scores_kernel(const float *__restrict__ q, const float *__restrict__ k, float *__restrict__ scores,
              long long S, int d)
{
    const long long n = S * S;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long i = idx / S, j = idx % S;
        float s = 0.0f;
        for (int c = 0; c < d; c++) s += q[i * d + c] * k[j * d + c];
        scores[idx] = s;
    }
}

/* o[i][c] = sum_j p[i][j] v[j][c], one thread per output element. */
__global__ void __launch_bounds__(256)
pv_kernel(const float *__restrict__ p, const float *__restrict__ v, float *__restrict__ o,
          long long S, int d)
{
    const long long n = S * d;
    for (long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x; idx < n;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long i = idx / d, c = idx % d;
        float acc = 0.0f;
        for (long long j = 0; j < S; j++) acc += p[i * S + j] * v[j * d + c];
        o[idx] = acc;
    }
}

/* ---- the host side -------------------------------------------------------- */

static unsigned grid_for(long long n, int per_block)
{
    long long blocks = (n + per_block - 1) / per_block;
    return (unsigned)(blocks < INT_MAX ? blocks : INT_MAX);
}

static void check_args(const char *who, long long S, int d, float scale)
{
    if (d != 32 && d != 64 && d != 128) {
        fprintf(stderr, "%s: head dimension d = %d, must be 32, 64 or 128\n", who, d);
        exit(1);
    }
    if (!(scale > 0.0f) || isinf(scale)) {
        fprintf(stderr, "%s: scale must be positive and finite\n", who);
        exit(1);
    }
    if (S > (long long)INT_MAX * ATTN_WARPS) {
        fprintf(stderr, "%s: S = %lld is too long for one grid\n", who, S);
        exit(1);
    }
}

template <int D>
static void launch_tiled(const float *q, const float *k, const float *v, float *o, long long S,
                         float scale, int causal, cudaStream_t stream)
{
    void (*kernel)(const float *, const float *, const float *, float *, long long, float, int) =
        attention_tiled_kernel<D>;
    kernel<<<grid_for(S, ATTN_WARPS), ATTN_WARPS * 32, 0, stream>>>(q, k, v, o, S, scale,
                                                                   causal ? 1 : 0);
    CUDA_CHECK_LAUNCH();
}

void attention_forward(const float *q, const float *k, const float *v, float *o, long long S,
                       int d, float scale, int causal, cudaStream_t stream)
{
    check_args("attention_forward", S, d, scale);
    if (S < 1) return;
    switch (d) {
    case 32: launch_tiled<32>(q, k, v, o, S, scale, causal, stream); break;
    case 64: launch_tiled<64>(q, k, v, o, S, scale, causal, stream); break;
    default: launch_tiled<128>(q, k, v, o, S, scale, causal, stream); break;
    }
}

long long attention_materialized_work_floats(long long S) { return 2 * S * S; }

void attention_materialized(const float *q, const float *k, const float *v, float *o, float *work,
                            long long S, int d, float scale, int causal, cudaStream_t stream)
{
    check_args("attention_materialized", S, d, scale);
    if (S < 1) return;
    float *scores = work, *probs = work + S * S;
    scores_kernel<<<grid_for(S * S, 256), 256, 0, stream>>>(q, k, scores, S, d);
    CUDA_CHECK_LAUNCH();
    if (causal) softmax_causal(scores, probs, S, S, scale, stream);
    else softmax_scaled(scores, probs, S, S, scale, stream);
    pv_kernel<<<grid_for(S * d, 256), 256, 0, stream>>>(probs, v, o, S, d);
    CUDA_CHECK_LAUNCH();
}

double attention_forward_bytes(long long S, int d) { return 4.0 * (double)S * d * sizeof(float); }

double attention_materialized_bytes(long long S, int d)
{
    return attention_forward_bytes(S, d) + 2.0 * (double)S * (double)S * sizeof(float);
}

void attention_reference(const float *q, const float *k, const float *v, double *o, double *mag,
                         double *dotmag, long long S, int d, double scale, int causal)
{
    double *s = (double *)malloc((size_t)S * sizeof(double));
    if (!s) {
        fprintf(stderr, "attention_reference: out of host memory\n");
        exit(1);
    }
    for (long long i = 0; i < S; i++) {
        const long long n = causal ? i + 1 : S; /* keys 0 ... n - 1 */
        double m = -INFINITY, dm = 0.0;
        for (long long j = 0; j < n; j++) {
            double dot = 0.0, absdot = 0.0;
            for (int c = 0; c < d; c++) {
                const double t = (double)q[i * d + c] * (double)k[j * d + c];
                dot += t;
                absdot += fabs(t);
            }
            s[j] = scale * dot;
            if (s[j] > m) m = s[j];
            if (scale * absdot > dm) dm = scale * absdot;
        }
        double l = 0.0;
        for (long long j = 0; j < n; j++) {
            s[j] = exp(s[j] - m); /* now the unnormalised p_j */
            l += s[j];
        }
        for (int c = 0; c < d; c++) {
            double acc = 0.0, amag = 0.0;
            for (long long j = 0; j < n; j++) {
                acc += s[j] * (double)v[j * d + c];
                amag += s[j] * fabs((double)v[j * d + c]);
            }
            o[i * d + c] = acc / l;
            if (mag) mag[i * d + c] = amag / l;
        }
        if (dotmag) dotmag[i] = dm;
    }
    free(s);
}
