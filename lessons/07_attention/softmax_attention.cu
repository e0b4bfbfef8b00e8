/* Lesson 7: the softmax of attention scores (the attention softmax notes' scaled, masked and
 * causal variants), built on lesson 5's fused row.
 *
 * An attention layer computes scores x = Q K^T for every query (a row) and
 * key (a column), then softmax(x * scale) row by row, with some keys
 * removed by a mask. Everything attention adds happens to a value between
 * its load and the max, so it costs no extra pass:
 *
 *   registers path (attn_registers_kernel), rows up to 32768 floats: lesson
 *     5's design. The row is read once into registers, the mask applied as
 *     it arrives, max / exp / sum computed on chip, the row written once:
 *       scaled                 8 bytes per element (x + y)
 *       byte mask              9 (+ 1 byte of mask)
 *       additive float mask   12 (+ 4 bytes of mask)
 *       causal                 4 (q + 1) / S + 4 on average 6: only the
 *                              scores k <= q are read; zeros are written
 *                              over the rest without reading it.
 *   online path (attn_online_kernel), any row length: lesson 6's streaming
 *     (m, d) state per thread, then a second read to write: 2 reads + 1
 *     write (+ the mask twice). Lesson 5's shared-memory middle path is
 *     left out: rows that long are where attention stops materialising
 *     scores at all (attention_forward.cu).
 *
 * The fully masked row. When every value of a row is -inf, max = -inf and
 * the textbook exp(x - max) is exp(-inf - (-inf)) = exp(NaN). Here the
 * exponent is taken against a shift of 0 when max = -inf (lesson 6's
 * online_md_shift): every exp is then exp(-inf) = 0 and the sum is 0. The
 * row's outputs are 0 * inv, and inv = 1 / sum would be inf (0 * inf =
 * NaN), so inv is 0 when the sum is 0. A sum of 0 happens only then: any
 * finite max contributes exp(0) = 1, and a NaN makes the sum NaN, which
 * still reaches every output (NaN in, NaN out).
 *
 * Why C++ templates (as in lesson 5): a register array needs a size known
 * at compile time and fully unrolled loops, so the floats per thread, the
 * threads per row and the block size are template parameters; and the kind
 * of mask is one too, so that each kernel carries only the code and the
 * registers of its own kind (no per-element branch on the kind). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "softmax_attention.h"
#include "check.h"
/* Lesson 6's online (m, d) state: its type and its -inf-safe shift
 * (online_md_shift), used by both paths. */
#include "device/online_md.cuh"
#include "device/vec.cuh"        /* lesson 5's load_vec, store_vec */
#include "device/row_reduce.cuh" /* lesson 5's row_reduce          */

/* ---- moving VEC consecutive values (VEC = 4: one 128-bit access) ----------
 * Floats with lesson 5's load_vec / store_vec (vec.cuh), bytes below. The
 * callers guarantee 16-byte alignment for floats and 4-byte alignment for
 * bytes whenever VEC = 4 (attn_can_use_vec4 on the host). */
template <int VEC>
__device__ __forceinline__ void load_bytes(const unsigned char *p, unsigned char *b)
{
    if constexpr (VEC == 4) {
        const uchar4 q = *reinterpret_cast<const uchar4 *>(p);
        b[0] = q.x;
        b[1] = q.y;
        b[2] = q.z;
        b[3] = q.w;
    } else {
        b[0] = *p;
    }
}

/* Everything a kernel needs, passed by value. */
typedef struct {
    const float *x;
    float *y;
    long long rows, cols;
    float scale;
    const unsigned char *keep;
    const float *bias;
    long long mask_rows;
} row_args;

/* How many leading elements of row r exist for the kernel: all of them, or
 * for causal the q + 1 scores of keys 0 ... q. Nothing past them is read. */
template <int KIND>
__device__ __forceinline__ long long row_length(const row_args &a, long long r)
{
    if constexpr (KIND == ATTN_CAUSAL) {
        const long long q = r % a.cols;
        return q + 1; /* q < cols */
    } else {
        return a.cols;
    }
}

/* The VEC values at positions e0 ... e0 + VEC - 1 of a row, masked: -inf
 * where a mask removes the position or the position is not in the row's
 * first `len`. xr, kr, br: the row of x, of the byte mask, of the bias.
 *
 * For every kind but the additive one the values stay UNSCALED here: the
 * scale is applied after the max is subtracted, exp((v - max) * scale)
 * (max(v * scale) = max(v) * scale since scale > 0). That keeps large
 * scores accurate: v - max is exact for v near max, while v * scale is
 * rounded to the float grid at its own size (at 265, a step of 2^-15: up
 * to 1.5e-5 of error in the exponent, hence in the output). In float32 on
 * rows of 4097 scores near 3000, scale 1/sqrt(128): 1.1e-7 relative error
 * this way, 1.6e-5 the other. The additive mask cannot be factored this
 * way: there the value is x * scale + bias. */
template <int KIND, int VEC>
__device__ __forceinline__ void load_values(const float *xr, const unsigned char *kr,
                                            const float *br, float scale, long long e0,
                                            long long len, float *v)
{
    if (e0 >= len) {
        for (int j = 0; j < VEC; j++) v[j] = -INFINITY;
        return;
    }
    if (e0 + VEC <= len) {
        load_vec<VEC>(xr + e0, v);
    } else { /* only a causal row's last vector: read the kept part alone */
        for (int j = 0; j < VEC; j++) v[j] = e0 + j < len ? xr[e0 + j] : -INFINITY;
    }
    if constexpr (KIND == ATTN_BYTE_MASK) {
        unsigned char keep[VEC];
        load_bytes<VEC>(kr + e0, keep);
        for (int j = 0; j < VEC; j++)
            if (!keep[j]) v[j] = -INFINITY; /* whatever x held there: even NaN */
    } else if constexpr (KIND == ATTN_ADD_MASK) {
        float b[VEC];
        load_vec<VEC>(br + e0, b);
        for (int j = 0; j < VEC; j++) v[j] = v[j] * scale + b[j];
    }
}

/* exp of a value against the row's shift (max, or 0 when max = -inf). */
template <int KIND>
__device__ __forceinline__ float exp_shifted(float v, float shift, float scale)
{
    if constexpr (KIND == ATTN_ADD_MASK) return expf(v - shift); /* v already scaled */
    else return expf((v - shift) * scale);
}

/* ---- path 1: the row in registers (lesson 5's fused_registers_kernel) -----
 * KIND: attn_kind. VEC: floats per access. FPT: floats of the row per
 * thread. TPR: threads per row. BLOCK: threads per block.
 *
 * Thread `sub` of a row holds vectors sub, sub + TPR, ...: the row's
 * threads read consecutive vectors (coalesced), all loads issued before
 * the first use. Positions masked, or past the row's length, hold -inf:
 * they change neither max nor sum and come out as exact zeros. Every
 * vector of the row is written, masked or not. cols <= 32768: positions in
 * a row fit an int; row offsets are 64-bit. */
template <int KIND, int VEC, int FPT, int TPR, int BLOCK>
__global__ void __launch_bounds__(BLOCK) attn_registers_kernel(row_args a)
{
    static_assert(FPT % VEC == 0, "whole vectors per thread");
    static_assert(BLOCK % TPR == 0 && (TPR <= 32 || TPR == BLOCK), "a row: part of a warp, or the block");
    constexpr int ITEMS = FPT / VEC;
    constexpr int ROWS_PER_BLOCK = BLOCK / TPR;
    __shared__ float red_max[32], red_sum[32]; /* used only when TPR > 32 */

    const int sub = threadIdx.x % TPR;
    const int cols = (int)a.cols;

    /* `first` is the same for the whole block: its barriers are reached by all. */
    for (long long first = (long long)blockIdx.x * ROWS_PER_BLOCK; first < a.rows;
         first += (long long)gridDim.x * ROWS_PER_BLOCK) {
        const long long row = first + threadIdx.x / TPR;
        const bool live = row < a.rows; /* a dead lane loads nothing but still shuffles */
        const long long r = live ? row : 0;
        const long long len = live ? row_length<KIND>(a, r) : 0;
        const float *xr = a.x + r * a.cols;
        const unsigned char *kr = a.keep ? a.keep + (r % a.mask_rows) * a.cols : NULL;
        const float *br = a.bias ? a.bias + (r % a.mask_rows) * a.cols : NULL;

        /* The one read, masked on arrival. */
        float v[FPT];
        for (int i = 0; i < ITEMS; i++)
            load_values<KIND, VEC>(xr, kr, br, a.scale, (long long)(i * TPR + sub) * VEC, len,
                                   &v[i * VEC]);

        float m = -INFINITY;
        for (int p = 0; p < FPT; p++) m = fmaxf(m, v[p]);
        m = row_reduce<TPR>(m, red_max, op_max());

        /* shift = m, or 0 for a fully masked row: no -inf - (-inf). */
        const float shift = online_md_shift(m);
        float s = 0.0f;
        for (int p = 0; p < FPT; p++) {
            v[p] = exp_shifted<KIND>(v[p], shift, a.scale);
            s += v[p];
        }
        s = row_reduce<TPR>(s, red_sum, op_sum());

        /* s >= 1 unless the row is fully masked (s = 0: zeros) or holds a
         * NaN (s = NaN: NaN everywhere). */
        const float inv = s == 0.0f ? 0.0f : 1.0f / s;

        /* The one write: every position, zeros where masked. */
        float *yr = a.y + r * a.cols;
        for (int i = 0; i < ITEMS; i++) {
            const int e0 = (i * TPR + sub) * VEC;
            if (live && e0 < cols) {
                for (int j = 0; j < VEC; j++) v[i * VEC + j] *= inv;
                store_vec<VEC>(yr + e0, &v[i * VEC]);
            }
        }
    }
}

/* ---- path 2: any row length (lesson 6's online_kernel) --------------------
 * One block per row. Pass 1 streams the row's first `len` elements in
 * chunks of 16 floats per thread, masked on arrival, into a running state
 * per thread, lesson 6's (m, d) with the scale inside the exponent:
 *     m = max of the raw values seen,  d = sum of exp((v - m) * scale),
 * rescaled by exp((m_old - m_new) * scale) when m grows. The block then
 * combines its threads' states the way the online-softmax tutorial's block softmax does: the
 * row's max M is the max of the m's (one reduction), each d is rescaled to
 * M and the rescaled d's are summed (a second reduction). Lesson 6's
 * pairwise merge (online_md_merge) would do the same, but it knows nothing
 * of a scale, and scaling first (w = v * scale) would round every large
 * score (see load_values). Pass 2 reads the kept elements again and writes
 * exp((v - M) * scale) / D; past `len` (causal) it writes zeros without
 * reading. */
template <int KIND, int N>
__device__ __forceinline__ online_md push_scaled(online_md s, const float *v, float scale)
{
    float cm = -INFINITY;
    for (int i = 0; i < N; i++) cm = fmaxf(cm, v[i]);
    const float m = fmaxf(s.m, cm);
    const float shift = online_md_shift(m); /* lesson 6: no -inf - (-inf) */
    float acc = 0.0f;
    for (int i = 0; i < N; i++) acc += exp_shifted<KIND>(v[i], shift, scale);
    s.d = s.d * exp_shifted<KIND>(s.m, shift, scale) + acc;
    s.m = m;
    return s;
}

template <int KIND, int VEC, int BLOCK>
__global__ void __launch_bounds__(BLOCK) attn_online_kernel(row_args a)
{
    constexpr int U = 16 / VEC; /* 64 bytes per thread in flight */
    constexpr long long STEP = (long long)U * BLOCK;
    __shared__ float red_max[32], red_sum[32];
    const long long nvec = a.cols / VEC;

    for (long long row = blockIdx.x; row < a.rows; row += gridDim.x) {
        const long long len = row_length<KIND>(a, row);
        const long long nread = (len + VEC - 1) / VEC; /* vectors holding kept elements */
        const float *xr = a.x + row * a.cols;
        const unsigned char *kr = a.keep ? a.keep + (row % a.mask_rows) * a.cols : NULL;
        const float *br = a.bias ? a.bias + (row % a.mask_rows) * a.cols : NULL;
        float *yr = a.y + row * a.cols;

        online_md s = online_md_identity(); /* pass 1, read 1 */
        for (long long k0 = threadIdx.x; k0 < nread; k0 += STEP) {
            float v[U * VEC];
            for (int u = 0; u < U; u++)
                load_values<KIND, VEC>(xr, kr, br, a.scale, (k0 + (long long)u * BLOCK) * VEC, len,
                                       &v[u * VEC]);
            s = push_scaled<KIND, U * VEC>(s, v, a.scale);
        }

        /* The row's (M, D) in every thread. A thread that saw only -inf
         * (or nothing) has d = 0, and 0 * exp(-inf) = 0: it adds nothing. */
        const float M = row_reduce<BLOCK>(s.m, red_max, op_max());
        const float shift = online_md_shift(M);
        const float D = row_reduce<BLOCK>(s.d * exp_shifted<KIND>(s.m, shift, a.scale), red_sum, op_sum());
        const float inv = D == 0.0f ? 0.0f : 1.0f / D; /* fully masked: zeros */

        for (long long k0 = threadIdx.x; k0 < nvec; k0 += STEP) { /* pass 2: read 2, write */
            float v[U * VEC];
            for (int u = 0; u < U; u++)
                load_values<KIND, VEC>(xr, kr, br, a.scale, (k0 + (long long)u * BLOCK) * VEC, len,
                                       &v[u * VEC]);
            for (int u = 0; u < U; u++) {
                const long long k = k0 + (long long)u * BLOCK;
                if (k < nvec) {
                    for (int j = 0; j < VEC; j++)
                        v[u * VEC + j] = exp_shifted<KIND>(v[u * VEC + j], shift, a.scale) * inv;
                    store_vec<VEC>(yr + k * VEC, &v[u * VEC]);
                }
            }
        }
    }
}

/* ---- the host side ------------------------------------------------------- */

/* Lesson 5's register configurations, fewer classes: the first whose
 * capacity (threads per row x floats per thread) holds the row is used. */
struct reg_config {
    int max_cols, tpr, fpt, block;
};
static constexpr reg_config REG[] = {
    {32, 4, 8, 128},       {128, 16, 8, 128},     {512, 32, 16, 128},
    {1024, 32, 32, 128},   {2048, 128, 16, 128},  {4096, 256, 16, 256},
    {8192, 256, 32, 256},  {16384, 512, 32, 512}, {32768, 1024, 32, 1024},
};
#define NREG (int)(sizeof REG / sizeof REG[0])
static_assert(REG[NREG - 1].max_cols == ATTN_MAX_REGISTER_COLS, "the table covers the register path");
#define ONLINE_BLOCK_THREADS 512

static unsigned grid_for(long long rows, int per_block)
{
    long long blocks = (rows + per_block - 1) / per_block;
    return (unsigned)(blocks < INT_MAX ? blocks : INT_MAX);
}

template <int KIND, int VEC, int I>
static void launch_registers(const row_args &a, cudaStream_t stream)
{
    constexpr reg_config C = REG[I];
    static_assert(C.max_cols <= C.tpr * C.fpt, "capacity holds the row class");
    void (*kernel)(row_args) = attn_registers_kernel<KIND, VEC, C.fpt, C.tpr, C.block>;
    kernel<<<grid_for(a.rows, C.block / C.tpr), C.block, 0, stream>>>(a);
    CUDA_CHECK_LAUNCH();
}

template <int KIND, int VEC>
static void run_registers(int index, const row_args &a, cudaStream_t stream)
{
    switch (index) {
    case 0: launch_registers<KIND, VEC, 0>(a, stream); break;
    case 1: launch_registers<KIND, VEC, 1>(a, stream); break;
    case 2: launch_registers<KIND, VEC, 2>(a, stream); break;
    case 3: launch_registers<KIND, VEC, 3>(a, stream); break;
    case 4: launch_registers<KIND, VEC, 4>(a, stream); break;
    case 5: launch_registers<KIND, VEC, 5>(a, stream); break;
    case 6: launch_registers<KIND, VEC, 6>(a, stream); break;
    case 7: launch_registers<KIND, VEC, 7>(a, stream); break;
    default: launch_registers<KIND, VEC, 8>(a, stream); break;
    }
}
static_assert(NREG == 9, "run_registers has one case per configuration");

template <int KIND, int VEC>
static void run_online(const row_args &a, cudaStream_t stream)
{
    void (*kernel)(row_args) = attn_online_kernel<KIND, VEC, ONLINE_BLOCK_THREADS>;
    kernel<<<grid_for(a.rows, 1), ONLINE_BLOCK_THREADS, 0, stream>>>(a);
    CUDA_CHECK_LAUNCH();
}

static int register_index(long long cols)
{
    for (int i = 0; i < NREG; i++)
        if (cols <= REG[i].max_cols) return i;
    return -1;
}

template <int KIND>
static void run_kind(attn_path path, int vec4, const row_args &a, cudaStream_t stream)
{
    if (path == ATTN_PATH_REGISTERS) {
        if (vec4) run_registers<KIND, 4>(register_index(a.cols), a, stream);
        else run_registers<KIND, 1>(register_index(a.cols), a, stream);
    } else {
        if (vec4) run_online<KIND, 4>(a, stream);
        else run_online<KIND, 1>(a, stream);
    }
}

/* 128-bit accesses need every row to start 16-byte aligned (4-byte for
 * the byte mask) and to hold whole float4s. */
static int attn_can_use_vec4(const attn_spec *s, const float *x, const float *y, long long cols)
{
    int ok = (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0 && cols % 4 == 0;
    if (s->kind == ATTN_BYTE_MASK) ok = ok && (uintptr_t)s->keep % 4 == 0;
    if (s->kind == ATTN_ADD_MASK) ok = ok && (uintptr_t)s->bias % 16 == 0;
    return ok;
}

attn_plan softmax_attention_plan(attn_path want, long long cols)
{
    attn_plan p = {ATTN_PATH_ONLINE, ONLINE_BLOCK_THREADS, 0, ONLINE_BLOCK_THREADS};
    const int reg = register_index(cols);
    if (want != ATTN_PATH_ONLINE && reg >= 0) {
        p.path = ATTN_PATH_REGISTERS;
        p.threads_per_row = REG[reg].tpr;
        p.floats_per_thread = REG[reg].fpt;
        p.block = REG[reg].block;
    }
    return p;
}

static void spec_error(const char *what)
{
    fprintf(stderr, "softmax_attention: %s\n", what);
    exit(1);
}

attn_path softmax_attention_run(attn_path path, const attn_spec *spec, const float *x, float *y,
                                long long rows, long long cols, cudaStream_t stream)
{
    if (!(spec->scale > 0.0f) || isinf(spec->scale)) spec_error("scale must be positive and finite");
    if (spec->kind == ATTN_BYTE_MASK && !spec->keep) spec_error("a byte mask needs its keep bytes");
    if (spec->kind == ATTN_ADD_MASK && !spec->bias) spec_error("an additive mask needs its bias");
    if ((spec->kind == ATTN_BYTE_MASK || spec->kind == ATTN_ADD_MASK) && spec->mask_rows < 1)
        spec_error("mask_rows must be at least 1");
    if ((unsigned)spec->kind > (unsigned)ATTN_CAUSAL) spec_error("unknown kind");

    const attn_plan plan = softmax_attention_plan(path, cols);
    if (rows < 1 || cols < 1) return plan.path; /* nothing to do; a 0-block grid is an error */

    row_args a = {x, y, rows, cols, spec->scale, NULL, NULL, 1};
    if (spec->kind == ATTN_BYTE_MASK) a.keep = spec->keep;
    if (spec->kind == ATTN_ADD_MASK) a.bias = spec->bias;
    if (spec->kind == ATTN_BYTE_MASK || spec->kind == ATTN_ADD_MASK) a.mask_rows = spec->mask_rows;
    const int vec4 = attn_can_use_vec4(spec, x, y, cols);

    switch (spec->kind) {
    case ATTN_SCALED: run_kind<ATTN_SCALED>(plan.path, vec4, a, stream); break;
    case ATTN_BYTE_MASK: run_kind<ATTN_BYTE_MASK>(plan.path, vec4, a, stream); break;
    case ATTN_ADD_MASK: run_kind<ATTN_ADD_MASK>(plan.path, vec4, a, stream); break;
    default: run_kind<ATTN_CAUSAL>(plan.path, vec4, a, stream); break;
    }
    return plan.path;
}

void softmax_scaled(const float *x, float *y, long long rows, long long cols, float scale,
                    cudaStream_t stream)
{
    attn_spec s = {ATTN_SCALED, scale, NULL, NULL, 0};
    softmax_attention_run(ATTN_PATH_AUTO, &s, x, y, rows, cols, stream);
}

void softmax_masked(const float *x, const unsigned char *keep, long long mask_rows, float *y,
                    long long rows, long long cols, float scale, cudaStream_t stream)
{
    attn_spec s = {ATTN_BYTE_MASK, scale, keep, NULL, mask_rows};
    softmax_attention_run(ATTN_PATH_AUTO, &s, x, y, rows, cols, stream);
}

void softmax_additive(const float *x, const float *bias, long long mask_rows, float *y,
                      long long rows, long long cols, float scale, cudaStream_t stream)
{
    attn_spec s = {ATTN_ADD_MASK, scale, NULL, bias, mask_rows};
    softmax_attention_run(ATTN_PATH_AUTO, &s, x, y, rows, cols, stream);
}

void softmax_causal(const float *x, float *y, long long rows, long long cols, float scale,
                    cudaStream_t stream)
{
    attn_spec s = {ATTN_CAUSAL, scale, NULL, NULL, 0};
    softmax_attention_run(ATTN_PATH_AUTO, &s, x, y, rows, cols, stream);
}

void softmax_attention_plain(const float *x, float *y, long long rows, long long cols,
                             cudaStream_t stream)
{
    softmax_scaled(x, y, rows, cols, 1.0f, stream);
}

void softmax_attention_plain_online(const float *x, float *y, long long rows, long long cols,
                                    cudaStream_t stream)
{
    attn_spec s = {ATTN_SCALED, 1.0f, NULL, NULL, 0};
    softmax_attention_run(ATTN_PATH_ONLINE, &s, x, y, rows, cols, stream);
}

const char *attn_kind_name(attn_kind k)
{
    switch (k) {
    case ATTN_SCALED: return "scaled";
    case ATTN_BYTE_MASK: return "byte mask";
    case ATTN_ADD_MASK: return "additive mask";
    case ATTN_CAUSAL: return "causal";
    default: return "?";
    }
}

const char *attn_path_name(attn_path p)
{
    switch (p) {
    case ATTN_PATH_REGISTERS: return "registers";
    case ATTN_PATH_ONLINE: return "online (2 reads + 1 write)";
    default: return "auto";
    }
}
