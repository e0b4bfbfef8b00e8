/* Lesson 10: the 16-bit classifier's rows longer than TRAIN_REG_MAX_COLS,
 * held on chip across CTAs (float logits, log-softmax and the backward run
 * on the row engine: classifier.cu, log_softmax.cu, softmax_backward.cu).
 * Lesson 8's path 3g: a row is cut into P pieces, one CTA each; a CTA
 * keeps its piece from the load to the store (the first TRAIN_GRID_BLOCK x
 * FPT elements in registers, the rest in shared memory), writes its
 * piece's state to the workspace, waits until the row's P states are
 * there (common/device/grid_sync.cuh: a ticket hands out the pieces in the
 * order CTAs become resident, so a row's CTAs are all running once its
 * pieces fit on the GPU at once), merges them and writes its piece. Each
 * element is read once and written once, as in registers: 4 bytes per
 * element, where the split path (train_row.cuh) reads the row twice.
 *
 * The classifier needs only p: its register part keeps exps as lesson 8
 * does (train_onchip_load with KEEP_EXP), its shared part raw values.
 * 16-bit CTAs are bound by issue, not by the exchange: they keep the
 * ticket, never the threads' clusters. (Aligned rows of up to 8 pieces
 * take clusters loaded by bulk copies instead, which issue no loads, and
 * aligned rows of more pieces as many bulk-loaded CTAs meeting through
 * the workspace: classifier_bulk_kernel, classifier_fused.cu.)
 *
 * A row whose P pieces do not fit on the GPU at once takes the split
 * path. */
#ifndef LESSON10_TRAIN_GRID_CUH
#define LESSON10_TRAIN_GRID_CUH

#include <cooperative_groups.h>

#include "harness.h" /* device_sms */
#include "train_row.cuh"
#include "device/grid_sync.cuh" /* lesson 8's ticket and per-row count */
#include "device/cluster_launch.h" /* lesson 8's cluster launch and its test */
#include "device/rows.h" /* the row engine: its paths and plans */

/* A CTA: 256 threads, 64 KB of the row (16 floats a thread in registers,
 * 48 KB of shared memory), four CTAs per SM: lesson 8's path 3g shape,
 * the best of its sweep (common/device/fastest_paths.h). The
 * backward holds two arrays, 8 floats of each in registers and 24 KB of
 * each in shared memory: the same 64 KB. */
#define TRAIN_GRID_BLOCK 256
#define TRAIN_GRID_FPT 16
#define TRAIN_GRID_SMEM (48 * 1024)
/* __launch_bounds__'s minimum of CTAs per SM, for the classifier's
 * kernels on misaligned rows (one element per access), whose float
 * kernel spills without it on sm_90. The other kernels ask for none (0):
 * held to 64 registers a thread, ptxas gave log-softmax's and the
 * backward's kernels 61-64 where they need 40-57 without spilling, and
 * they ran slower at the same four CTAs per SM: log-softmax at 64 x 2^20
 * at 88.5 % of the copy without the minimum against 87.0 with it (H100;
 * docs/experiments/training-onchip-clusters.md). (A minimum of 1 is not
 * the same as none: it let ptxas give the classifier's aligned kernels
 * 95 registers, two CTAs per SM.) */
#define TRAIN_GRID_MIN_CTAS 4
/* When a few rows would leave SMs without a CTA, their pieces shrink to
 * give every SM one, down to this many elements. */
#define TRAIN_GRID_MIN_PIECE 2048

/* The CTA's row and piece, which starts at column *begin and holds *len
 * elements (pieces of seg, the last one shorter), from the ticket thread
 * 0 draws. */
__device__ __forceinline__ void train_onchip_take(unsigned *sync, int pieces, int seg, long long cols, long long *row,
                                                  int *piece, long long *begin, int *len)
{
    __shared__ unsigned ticket;
    if (threadIdx.x == 0) fx_grid_ticket(&sync[0], &ticket);
    __syncthreads();
    const unsigned id = ticket;
    *row = id / (unsigned)pieces;
    *piece = (int)(id % (unsigned)pieces);
    *begin = (long long)*piece * seg;
    *len = (int)(cols - *begin < seg ? cols - *begin : seg);
}

/* Loads a piece of len elements at src: the first TRAIN_GRID_BLOCK x FPT
 * into v (widened to float; `fill` past the end) and the rest into srow
 * in the storage type, vector k of it by thread k % TRAIN_GRID_BLOCK (the
 * thread that will read it back: no barrier is needed). The register
 * loads are all issued first; 4 vectors (64 bytes) per thread are in
 * flight in the shared-memory part, 16-bit ones moved as raw words (their
 * widened 32 floats took the kernel to 80 registers, 3 CTAs per SM).
 * MD: returns this thread's (m, d) of all it loaded (padding -inf adds
 * exp(-inf) = 0), folding each chunk in as it arrives, as lesson 8's
 * path 3g does: no second pass over shared memory. KEEP_EXP (with MD):
 * v ends up holding exp(v - *m_regs), as lesson 8's fx_thread_state
 * leaves it, for a kernel that needs no raw value of the register part
 * (the classifier): one exp per element of that part on the way out
 * fewer. */
/* Chunk k0 of a piece's shared part, U vectors of this thread: loaded
 * into w (-inf past the end with FILL, else left as it was), and stored
 * from w to srow. */
template <int VEC, int U, bool FILL, class T, int B = TRAIN_GRID_BLOCK>
__device__ __forceinline__ void train_chunk_load(const T *xs, int k0, int nvec_s, float *w)
{
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int k = k0 + u * B;
        if (k < nvec_s) {
            load_vec<VEC>(xs + k * VEC, &w[u * VEC]);
        } else if constexpr (FILL) {
#pragma unroll
            for (int j = 0; j < VEC; j++) w[u * VEC + j] = -INFINITY;
        }
    }
}
template <int VEC, int U, class T, int B = TRAIN_GRID_BLOCK>
__device__ __forceinline__ void train_chunk_store(T *srow, int k0, int nvec_s, const float *w)
{
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int k = k0 + u * B;
        if (k < nvec_s) store_vec<VEC>(srow + k * VEC, &w[u * VEC]); /* a widened value rounds back exactly */
    }
}

template <int VEC, int FPT, bool MD, class T, bool KEEP_EXP = false, int B = TRAIN_GRID_BLOCK>
__device__ __forceinline__ online_md train_onchip_load(const T *__restrict__ src, int len, float *v, T *srow,
                                                       float fill, float *m_regs = nullptr)
{
    constexpr int RCAP = B * FPT, U = 4;
    const int rlen = len < RCAP ? len : RCAP;
    const int nvec_r = rlen / VEC, nvec_s = (len - rlen) / VEC;
#pragma unroll
    for (int i = 0; i < FPT / VEC; i++) {
        const int k = i * B + (int)threadIdx.x;
        if (k < nvec_r) {
            load_vec<VEC>(src + k * VEC, &v[i * VEC]);
        } else {
#pragma unroll
            for (int j = 0; j < VEC; j++) v[i * VEC + j] = fill;
        }
    }
    online_md s = online_md_identity();
    const T *xs = src + RCAP;
    if constexpr (sizeof(T) == 2 && VEC == 8) {
        /* the loop of lesson 8's fx_piece_read with fx_chunk16_load and
         * fx_chunk16_fold, written out: calling those added 8 to 16
         * instructions outside the loops of the classifier's machine code
         * (sm_90) */
        for (int k0 = threadIdx.x; k0 < nvec_s; k0 += U * B) {
            unsigned raw[U][4];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * B;
                if (k < nvec_s) vec16_load_words<8>(xs + k * VEC, raw[u]);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int k = k0 + u * B;
                if (k < nvec_s) {
                    vec16_store_words<8>(srow + k * VEC, raw[u]);
                    if constexpr (MD) {
                        float w[VEC];
                        vec16_widen_words<VEC>(raw[u], w, xs);
                        s = fx_push<T, VEC>(s, w);
                    }
                }
            }
        }
    } else {
        for (int k0 = threadIdx.x; k0 < nvec_s; k0 += U * B) {
            float w[U * VEC];
            train_chunk_load<VEC, U, MD, T, B>(xs, k0, nvec_s, w);
            train_chunk_store<VEC, U, T, B>(srow, k0, nvec_s, w);
            if constexpr (MD) s = fx_push<T, U * VEC>(s, w);
        }
    }
    if constexpr (KEEP_EXP) {
        const online_md t = fx_thread_state<FPT, T>(v);
        *m_regs = t.m;
        s = online_md_merge(t, s);
    } else if constexpr (MD) {
        s = online_md_merge(s, fx_push<T, FPT>(online_md_identity(), v));
    }
    return s;
}

/* The register part of a piece's way out: its nvec_r vectors from v to
 * dst as op(value, its column in the piece). */
template <int VEC, int FPT, class T, class Op, int B = TRAIN_GRID_BLOCK>
__device__ __forceinline__ void train_onchip_store_regs(T *dst, int nvec_r, const float *v, Op op)
{
#pragma unroll
    for (int i = 0; i < FPT / VEC; i++) {
        const int k = i * B + (int)threadIdx.x;
        if (k < nvec_r) {
            float w[VEC];
#pragma unroll
            for (int j = 0; j < VEC; j++) w[j] = op(v[i * VEC + j], (long long)k * VEC + j);
            store_vec<VEC>(dst + k * VEC, w);
        }
    }
}

/* The shared part of a piece's way out: its nvec_s vectors from srow to
 * ds as op(value, its column in the piece; the part starts at column
 * first). */
template <int VEC, class T, class Op, int B = TRAIN_GRID_BLOCK>
__device__ __forceinline__ void train_onchip_store_shared(T *ds, int nvec_s, const T *srow, int first, Op op)
{
    for (int k = threadIdx.x; k < nvec_s; k += B) {
        float w[VEC];
        load_vec<VEC>(srow + k * VEC, w);
#pragma unroll
        for (int j = 0; j < VEC; j++) w[j] = op(w[j], first + (long long)k * VEC + j);
        store_vec<VEC>(ds + k * VEC, w);
    }
}

/* The exchange. The CTA's state b (the same in every thread) goes to
 * work[piece]; thread 0 counts the CTA in and waits for the row's other
 * pieces; then every CTA of the row merges the P states in the same
 * order with the same tree: the same bits in each. Through L2 (__ldcg):
 * never a stale L1 line. red_m, red_d: the block merge's shared arrays,
 * free again (the caller's merge is behind the barrier). */
__device__ __forceinline__ online_md train_grid_exchange(online_md b, online_md *work, int piece, int pieces,
                                                         unsigned *count, float *red_m, float *red_d,
                                                         unsigned *before)
{
    if (threadIdx.x == 0) {
        work[piece] = b;
        fx_grid_arrive_wait(count, (unsigned)pieces);
    }
    __syncthreads(); /* thread 0's acquire covers the block's reads after the barrier */
    online_md q = online_md_identity();
    for (int i = threadIdx.x; i < pieces; i += TRAIN_GRID_BLOCK) {
        const float2 w = __ldcg(reinterpret_cast<const float2 *>(work + i));
        const online_md o = {w.x, w.y};
        q = online_md_merge(q, o);
    }
    const online_md r = online_md_row_merge<TRAIN_GRID_BLOCK>(q, red_m, red_d);
    if (threadIdx.x == 0) *before = fx_grid_count_out(count); /* used at the end: train_onchip_leave */
    return r;
}

/* The end of an on-chip kernel: thread 0 puts the row's counter back to
 * 0 if its count out was the row's last (fx_grid_leave; before: what
 * train_grid_exchange's count out returned). */
__device__ __forceinline__ void train_onchip_leave(unsigned *count, unsigned before, int pieces)
{
    if (threadIdx.x == 0) fx_grid_leave(count, before, (unsigned)pieces);
}

/* ---- the host side ---------------------------------------------------------- */

/* A plan for rows x cols on chip: P pieces of seg elements (a multiple of
 * 8: pieces start on 16 bytes) and the dynamic shared memory of a CTA. */
typedef struct {
    long long pieces, seg;
    size_t smem;
} train_grid_plan;

/* The workspace's counters (train_work.cu): zeroed when allocated, left
 * at 0 by every kernel. */
unsigned *train_sync_counters(long long count);
/* Whether long rows may go on chip (train_set_long_rows). */
int train_long_on_chip(void);
/* Whether long rows go where they pay (TRAIN_LONG_AUTO), not where a
 * test forces them. */
int train_long_auto(void);
/* How many CTAs of kernel k (TRAIN_GRID_BLOCK threads, TRAIN_GRID_SMEM of
 * shared memory) the GPU holds at once; opts k in to that shared memory. */
long long train_grid_resident(const void *k);
/* Whether this GPU and binary launch the classifier's bulk-loaded
 * clusters, and long rows may use them: 0 never, 1 where they pay
 * (TRAIN_LONG_AUTO), 2 wherever they fit (TRAIN_LONG_BULK). */
int train_long_bulk(void);

/* A row of cols elements cut p ways: pieces of *seg elements (a multiple
 * of 8: pieces start on 16 bytes), the last one shorter, and *smem bytes
 * of shared memory for what of each of `arrays` arrays (esize bytes an
 * element) is past the rcap in registers. Returns how many pieces that
 * makes: p, or fewer when the rounding empties the last ones. */
static inline long long train_cut(long long cols, long long p, long long rcap, int arrays, int esize, long long *seg,
                                  size_t *smem)
{
    *seg = ((cols + p - 1) / p + 7) / 8 * 8;
    *smem = *seg > rcap ? (size_t)(*seg - rcap) * (size_t)esize * (size_t)arrays : 0;
    return (cols + *seg - 1) / *seg;
}

/* The plan for a row of cols elements, cap of them per CTA and `arrays`
 * arrays of esize bytes, RCAP of each in registers; 0 when the row's
 * pieces do not all fit on the GPU at once (`resident` CTAs). Pieces: as
 * few full ones as hold the row, more when rows x pieces would leave SMs
 * idle (not below TRAIN_GRID_MIN_PIECE elements). Not more so that the
 * resident CTAs hold whole rows (P rounded up to a divisor of their
 * count): that ran slower, the backward at 64 x 2^20 at 83.6 % of its
 * bound against 92.4 (float32, H100;
 * docs/experiments/training-onchip-clusters.md). */
static inline int train_grid_make_plan(long long rows, long long cols, long long cap, long long rcap, int arrays,
                                       int esize, long long resident, train_grid_plan *plan)
{
    if (rows < 1) rows = 1;
    long long p = (cols + cap - 1) / cap;
    const long long fill = (device_sms() + rows - 1) / rows, most = cols / TRAIN_GRID_MIN_PIECE;
    if (p < fill) {
        const long long q = fill < most ? fill : most;
        if (q > p) p = q;
    }
    if (p < 1) p = 1;
    plan->pieces = train_cut(cols, p, rcap, arrays, esize, &plan->seg, &plan->smem);
    return plan->pieces <= resident && plan->seg <= cap;
}

/* Launches kernel k over n rows of plan p (n x pieces CTAs). */
template <class... P, class... A>
static void train_onchip_launch(const train_grid_plan *p, long long n, cudaStream_t stream, void (*k)(P...),
                                A... args)
{
    k<<<(unsigned)(n * p->pieces), TRAIN_GRID_BLOCK, p->smem, stream>>>(args...);
    CUDA_CHECK_LAUNCH();
}

/* The row engine's plan p for rows of cols floats by name, for an
 * operation whose threads of paths 1 and 2 hold at least fpt_min floats
 * of each of its nin inputs (train_work.cu); log-softmax's and the
 * backward's paths by name, for train_path_name (log_softmax.cu,
 * softmax_backward.cu). */
const char *train_engine_name(fastest_plan p, long long cols, int fpt_min, int nin);
const char *log_softmax_path_name(long long rows, long long cols);
const char *backward_path_name(long long rows, long long cols);
const char *classifier_path_name(long long rows, long long cols); /* float logits */
const char *loss_path_name(long long rows, long long cols);
/* The engine path the operations on it ask for: paths 1 and 2 up to
 * TRAIN_REG_MAX_COLS, past it what train_set_long_rows says (AUTO and
 * BULK: the dispatcher's choice; SPLIT, GRID, CLUSTER: that path where
 * the shape fits it). */
fastest_path train_engine_want(long long cols);
/* Whether the classifier takes its on-chip path at rows x cols of 16-bit
 * logits: 0 no, 1 one block per row or with the workspace, C >= 2 in
 * bulk-loaded clusters of C CTAs (classifier_fused.cu); float logits run
 * on the row engine: 0. */
int classifier_on_chip(long long rows, long long cols, dtype t);
/* The classifier's 16-bit-only paths, by name (classifier_fused.cu). */
const char *classifier_path16(long long rows, long long cols, dtype t);

/* The mean's count of rows not ignored and the dloss of such a row (1 /
 * count; 0 / 0 and inf when every row is ignored: no row uses it). */
typedef struct {
    unsigned count;
    float dloss;
} classifier_scale;

/* The most blocks of the small launches, the most blocks of paths 1 and 2
 * that finish the reduced loss themselves, and the most rows on chip that
 * do (classifier.cu). */
#define CLS_MAX_PARTS 1024
#define CLS_MAX_BLOCKS 4096
#define CLS_ON_CHIP_FINISH_ROWS 2048
/* Rows that finish the reduced loss through the loss slots (classifier.cu,
 * ce_slot_put): 16 KB of them after the two counters. */
#define CLS_SLOT_ROWS 2048
static_assert(CLS_ON_CHIP_FINISH_ROWS <= CLS_SLOT_ROWS, "a slot for every row that finishes in the kernel");

/* classifier.cu: the mean's count into *out (parts: CLS_MAX_PARTS words;
 * done: a counter at 0, left at 0); the sum of n values after the launch
 * before it into *loss, divided by mean->count where mean is not NULL
 * (parts: CLS_MAX_PARTS floats). */
void classifier_count(const int *targets, long long rows, int ignore_index, unsigned *parts, unsigned *done,
                      classifier_scale *out, cudaStream_t stream);
void classifier_sum(const float *vals, long long n, float *parts, unsigned *done, const classifier_scale *mean,
                    float *loss, cudaStream_t stream);

/* Rows per launch: at most 2^30 CTAs. */
static inline long long train_grid_batch(long long pieces)
{
    const long long b = (1LL << 30) / pieces;
    return b > 0 ? b : 1;
}

#endif
