/* Lesson 6: the online softmax (seeds 000 and 002; Milakov & Gimelshein,
 * "Online normalizer calculation for softmax", 2018).
 *
 * Lesson 5 kept the whole row on chip, and had nowhere to go once the row
 * outgrew one SM's registers and shared memory: its fallback reads the row
 * three times. This kernel needs no room for the row at all:
 *
 *   pass 1 (read 1): each thread streams its share of the row in chunks
 *     of 16 floats and keeps a running state (m, d), m the max so far and
 *     d = sum of exp(x - m) so far, rescaled by exp(m_old - m_new) whenever
 *     the max grows (online_md_push). The threads' states are then merged
 *     into the row's (online_md_row_merge): warp shuffles, then shared
 *     memory across warps. The merge is associative, so any split and any
 *     order gives the same (m, d) up to rounding.
 *   pass 2 (read 2 + write): y = exp(x - m) * (1 / d).
 *
 *     global memory traffic = 2 reads + 1 write = 12 bytes per element,
 *
 * for every row length: 3/4 of the 16 bytes of a three-pass kernel, 3/2 of
 * the 8 bytes of lesson 5 while lesson 5's row fits on chip.
 *
 * Threads per row (TPR) grow with the row: up to 2048 floats a row is
 * shared by 1 ... 32 lanes of a warp, so that each thread gets at least
 * one chunk of 16 floats; longer rows get a block of 512 threads. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "softmax_online.h"
#include "device/online_md.cuh"
#include "device/vec.cuh"      /* lesson 5's load_vec, store_vec  */
#include "device/view_cut.cuh" /* lesson 5's cut of misaligned rows */
#include "check.h"

/* VEC: floats per access. PEEL: cut each row at its 16-byte boundaries
 * (view_cut.cuh), for views whose rows of x and y start equally misaligned.
 * XS (with PEEL): x's rows are misaligned against y's; the cut follows y
 * and x is read in 32-bit loads. TPR: threads per row (1 ... 32 lanes of
 * a warp, or the whole block). BLOCK: threads per block. U: vectors per
 * chunk. MERGE (with PEEL): the extras join the first chunk's push instead
 * of a push of their own (see dispatch).
 *
 * A chunk is U vectors per thread, loaded together before any is used:
 * U = 16 / VEC (64 bytes in flight per thread), except for single floats
 * on short rows (see dispatch). Thread `sub` of a row takes the
 * vectors sub + (c U + u) TPR: at each step the row's threads read
 * consecutive vectors (coalesced). Positions past the end hold -inf,
 * which no state notices (online_md.cuh). Positions in a row are 64-bit:
 * one row may hold more than 2^31 floats. */
template <int VEC, bool PEEL, bool XS, int TPR, int BLOCK, int U, bool MERGE>
__global__ void __launch_bounds__(BLOCK)
online_kernel(const float *__restrict__ x, long long ldx, float *__restrict__ y, long long ldy,
              long long rows, long long cols, int mis)
{
    static_assert(BLOCK % TPR == 0 && (TPR <= 32 || TPR == BLOCK), "a row: part of a warp, or the block");
    static_assert((!PEEL || VEC == 4) && (!XS || PEEL), "peeling keeps float4 bodies");
    constexpr long long STEP = (long long)U * TPR;
    constexpr int ROWS_PER_BLOCK = BLOCK / TPR;
    __shared__ float red_m[32], red_d[32]; /* used only when TPR > 32 */

    const int sub = threadIdx.x % TPR;
    const long long nvec_aligned = cols / VEC; /* without PEEL */

    /* `first` is the same for the whole block: its barriers are reached by all. */
    for (long long first = (long long)blockIdx.x * ROWS_PER_BLOCK; first < rows;
         first += (long long)gridDim.x * ROWS_PER_BLOCK) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < rows; /* a dead lane still joins the merge */
        const float *xr = x + (live ? row : 0) * ldx;
        float *yr = y + (live ? row : 0) * ldy;
        view_cut cut = {0, 0, nvec_aligned};
        if constexpr (PEEL) cut = view_row_cut(live ? row : 0, XS ? ldy : ldx, mis, cols); /* XS: y's mis */
        const long long nvec = PEEL ? cut.nvec : nvec_aligned;
        const float *xb = xr + cut.head; /* the body: vectors of VEC floats */
        float *yb = yr + cut.head;

        /* Pass 1, read 1: stream the row, one (m, d) per thread. */
        online_md s = online_md_identity();
        /* PEEL: the row's head and tail floats, X per thread (extra
         * sub + i * TPR in e[i]), in one push, and kept for pass 2. */
        constexpr int X = PEEL ? (VIEW_MAX_EXTRAS + TPR - 1) / TPR : 1;
        float e[X];
        constexpr int XM = MERGE ? X : 0; /* slots for the extras in the first chunk */
        if constexpr (PEEL) {
#pragma unroll
            for (int i = 0; i < X; i++) e[i] = live ? view_extra_load(xr, cut, sub + i * TPR) : -INFINITY;
            if constexpr (!MERGE) s = online_md_push<X>(s, e);
        }
        bool first_chunk = true;
        for (long long k0 = live ? sub : nvec; k0 < nvec; k0 += STEP) {
            float v[U * VEC + XM];
            for (int u = 0; u < U; u++) {
                const long long k = k0 + (long long)u * TPR;
                if (k < nvec) {
                    view_load_x<VEC, XS>(xb + k * VEC, &v[u * VEC]);
                } else {
                    for (int j = 0; j < VEC; j++) v[u * VEC + j] = -INFINITY;
                }
            }
            for (int i = 0; i < XM; i++) v[U * VEC + i] = first_chunk ? e[i] : -INFINITY;
            first_chunk = false;
            s = online_md_push<U * VEC + XM>(s, v);
        }
        if (MERGE && first_chunk) s = online_md_push<X>(s, e); /* no body floats: the extras alone */

        /* The row's (m, d), in every thread of the row. */
        s = online_md_row_merge<TPR>(s, red_m, red_d);

        /* d >= 1 (the max contributes exp(0) = 1) unless the row holds NaN
         * (d is NaN) or only -inf (m = -inf, d = 0, and exp(x - m) below is
         * exp(NaN)): then every output is NaN. */
        const float inv = 1.0f / s.d;

        /* Pass 2, read 2 + write. */
        if constexpr (PEEL && !XS) /* the extras kept since pass 1: 88.2 against 83.9 % of the aligned
                                      speed at 2097152 x 32 (H100) */
#pragma unroll
            for (int i = 0; i < X; i++)
                if (live && sub + i * TPR < cut.nextra) yr[view_extra_at(cut, sub + i * TPR)] = expf(e[i] - s.m) * inv;
        if constexpr (XS) /* read again: kept, they took the cut at y's boundaries to 75.9 % of the
                             aligned speed against 95.5 at 524288 x 128 (H100) */
            for (int j = sub; live && j < cut.nextra; j += TPR) {
                const long long at = view_extra_at(cut, j);
                yr[at] = expf(xr[at] - s.m) * inv;
            }
        for (long long k0 = live ? sub : nvec; k0 < nvec; k0 += STEP) {
            float v[U * VEC];
            for (int u = 0; u < U; u++) {
                const long long k = k0 + (long long)u * TPR;
                if (k < nvec) view_load_x<VEC, XS>(xb + k * VEC, &v[u * VEC]);
            }
            for (int u = 0; u < U; u++) {
                const long long k = k0 + (long long)u * TPR;
                if (k < nvec) {
                    for (int j = 0; j < VEC; j++) v[u * VEC + j] = expf(v[u * VEC + j] - s.m) * inv;
                    if constexpr (PEEL) view_store4(yb + k * VEC, &v[u * VEC]); /* see view_cut.cuh */
                    else store_vec<VEC>(yb + k * VEC, &v[u * VEC]);
                }
            }
        }
    }
}

/* ---- the host side --------------------------------------------------------- */

static unsigned grid_for(long long rows, int per_block)
{
    long long blocks = (rows + per_block - 1) / per_block;
    return (unsigned)(blocks < INT_MAX ? blocks : INT_MAX);
}

template <int VEC, bool PEEL, bool XS, int TPR, int BLOCK, int U = 16 / VEC, bool MERGE = false>
static void launch(const float *x, long long ldx, float *y, long long ldy, long long rows,
                   long long cols, cudaStream_t stream)
{
    void (*kernel)(const float *, long long, float *, long long, long long, long long, int) =
        online_kernel<VEC, PEEL, XS, TPR, BLOCK, U, MERGE>;
    kernel<<<grid_for(rows, BLOCK / TPR), BLOCK, 0, stream>>>(x, ldx, y, ldy, rows, cols,
                                                              view_mis(XS ? y : x)); /* where rows are cut */
    CUDA_CHECK_LAUNCH();
}

/* Threads per row: enough that each gets at least one chunk of 16 floats,
 * up to a warp; a block beyond ONLINE_WARP_MAX_COLS (or when forced).
 *
 * Views on rows up to 256 floats get their own lanes x chunk shapes,
 * picked by a sweep over those shapes on the H100 (2^26 floats;
 * docs/experiments/lessons-misaligned-views.md): at N = 32 this kernel is
 * already short of issue slots when aligned (ncu: 75 M instructions), and
 * what a view adds per row (the cut, up to 6 head and tail floats, more
 * lanes to merge) costs time directly. The aligned shape is the worst
 * choice there: 2 lanes of 4 float4s ran a peeled view at 61.6 % of the
 * aligned speed, 4 lanes of 2 float4s at 83.8 %; single floats on few
 * lanes read a quarter of each 32-byte sector per load. Peeled rows of
 * 5-64 floats, one chunk each, push their extras with it (MERGE): 95.9
 * against 87.4 % at N = 32. Where a row takes several chunks, and where
 * the cut follows y's boundaries, merging cost time, so only those two
 * merge. */
template <int VEC, bool PEEL, bool XS>
static void dispatch(int block_per_row, const float *x, long long ldx, float *y, long long ldy,
                     long long rows, long long cols, cudaStream_t stream)
{
    if (block_per_row || cols > ONLINE_WARP_MAX_COLS)
        launch<VEC, PEEL, XS, ONLINE_BLOCK, ONLINE_BLOCK>(x, ldx, y, ldy, rows, cols, stream);
    else if (cols > 256) launch<VEC, PEEL, XS, 32, 128>(x, ldx, y, ldy, rows, cols, stream);
    else if constexpr (PEEL) { /* float4 bodies: lanes x float4s per chunk */
        if (cols > 128) launch<4, true, XS, 16, 128, 1>(x, ldx, y, ldy, rows, cols, stream);
        else if (cols > 64) launch<4, true, XS, 8, 128, 1>(x, ldx, y, ldy, rows, cols, stream);
        else if (cols > 32 && !XS) launch<4, true, XS, 8, 128, 2, true>(x, ldx, y, ldy, rows, cols, stream);
        else if (cols > 4) launch<4, true, XS, 4, 128, 2, !XS>(x, ldx, y, ldy, rows, cols, stream);
        else launch<4, true, XS, 1, 128, 1>(x, ldx, y, ldy, rows, cols, stream);
    } else if constexpr (VEC == 1) { /* single floats: lanes x floats per chunk */
        if (cols > 64) launch<1, false, false, 16, 128, 4>(x, ldx, y, ldy, rows, cols, stream);
        else if (cols > 16) launch<1, false, false, 8, 128, 4>(x, ldx, y, ldy, rows, cols, stream);
        else launch<1, false, false, 4, 128, 4>(x, ldx, y, ldy, rows, cols, stream);
    } else if (cols > 128) launch<VEC, PEEL, XS, 16, 128>(x, ldx, y, ldy, rows, cols, stream);
    else if (cols > 64) launch<VEC, PEEL, XS, 8, 128>(x, ldx, y, ldy, rows, cols, stream);
    else if (cols > 32) launch<VEC, PEEL, XS, 4, 128>(x, ldx, y, ldy, rows, cols, stream);
    else if (cols > 16) launch<VEC, PEEL, XS, 2, 128>(x, ldx, y, ldy, rows, cols, stream);
    else launch<VEC, PEEL, XS, 1, 128>(x, ldx, y, ldy, rows, cols, stream);
}

online_access softmax_online_access(const float *x, long long ldx, const float *y, long long ldy,
                                    long long rows, long long cols)
{
    if ((uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0 && cols % 4 == 0 && ldx % 4 == 0 && ldy % 4 == 0)
        return ONLINE_FLOAT4;
    if (view_can_peel(x, ldx, y, ldy, rows)) return ONLINE_PEELED;
    return (uintptr_t)x % 4 == 0 && (uintptr_t)y % 4 == 0 ? ONLINE_X32 : ONLINE_SCALAR;
}

static void run(int block_per_row, const float *x, long long ldx, float *y, long long ldy,
                long long rows, long long cols, cudaStream_t stream)
{
    if (rows > 1 && (ldx < cols || ldy < cols)) {
        fprintf(stderr, "softmax_online: row strides ldx = %lld, ldy = %lld must be >= cols = %lld\n",
                ldx, ldy, cols);
        exit(2); /* a usage error, as every bad argument in the course */
    }
    if (rows < 1 || cols < 1) return; /* nothing to do; a 0-block grid is an error */
    switch (softmax_online_access(x, ldx, y, ldy, rows, cols)) {
    case ONLINE_FLOAT4: dispatch<4, false, false>(block_per_row, x, ldx, y, ldy, rows, cols, stream); break;
    case ONLINE_PEELED: dispatch<4, true, false>(block_per_row, x, ldx, y, ldy, rows, cols, stream); break;
    case ONLINE_X32: dispatch<4, true, true>(block_per_row, x, ldx, y, ldy, rows, cols, stream); break;
    default: dispatch<1, false, false>(block_per_row, x, ldx, y, ldy, rows, cols, stream); break;
    }
}

void softmax_online_strided(const float *x, long long ldx, float *y, long long ldy,
                            long long rows, long long cols, cudaStream_t stream)
{
    run(0, x, ldx, y, ldy, rows, cols, stream);
}

void softmax_online(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    run(0, x, cols, y, cols, rows, cols, stream);
}

void softmax_online_block_per_row(const float *x, float *y, long long rows, long long cols,
                                  cudaStream_t stream)
{
    run(1, x, cols, y, cols, rows, cols, stream);
}
