/* Lesson 10: the classifier's rows longer than TRAIN_REG_MAX_COLS, held on
 * chip across CTAs (log-softmax and the backward run on the row engine:
 * log_softmax.cu, softmax_backward.cu). Lesson 8's path 3g: a row is cut into P
 * pieces, one CTA each; a CTA keeps its piece from the load to the store
 * (the first TRAIN_GRID_BLOCK x FPT elements in registers, the rest in
 * shared memory), writes its piece's state to the workspace, waits until
 * the row's P states are there (common/device/grid_sync.cuh: a ticket
 * hands out the pieces in the order CTAs become resident, so a row's CTAs
 * are all running once its pieces fit on the GPU at once), merges them
 * and writes its piece. Each element is read once and written once, as
 * in registers: 8 bytes per element, where the split path (train_row.cuh)
 * reads the row twice.
 *
 * The classifier needs only p: its register part keeps exps as lesson 8
 * does (train_onchip_load with KEEP_EXP), its shared part raw values.
 *
 * Float rows of 2 to 16 pieces meet in a thread-block cluster instead
 * (sm_90, lesson 8's path 3): the row's P CTAs are one cluster, started
 * together on one GPC, and exchange their states through distributed
 * shared memory: no ticket, no workspace, no waiting on global memory.
 * Same pieces, same CTA: the classifier at N = 2^15 ran at 94.6 % of the
 * copy in clusters against 89.5 with the ticket (H100). 16-bit logits
 * keep the ticket: their CTAs are bound by issue, not by the exchange.
 * (The classifier's aligned rows of up to 8 pieces take clusters loaded
 * by bulk copies instead, which issue no loads, and its aligned 16-bit
 * rows of more pieces take as many bulk-loaded CTAs meeting through the
 * workspace: classifier_bulk_kernel, classifier_fused.cu.) Float rows of
 * more than 8 pieces meet in clusters of larger CTAs (TRAIN_BIG_BLOCK,
 * below), up to 16 pieces of 64 KB. Longer rows keep the ticket: the classifier's
 * rows of 2^19 in 16 CTAs of 128 KB, one per SM, ran at 57.5 % against
 * 89.1 (H100); and a row of several clusters, meeting in the workspace,
 * has its clusters start apart, each waiting for the last with 16 CTAs'
 * slots held (docs/experiments/training-onchip-clusters.md).
 *
 * A row whose P pieces do not fit on the GPU at once (past about 8.6 M
 * floats on an H100) takes the split path. */
#ifndef LESSON10_TRAIN_GRID_CUH
#define LESSON10_TRAIN_GRID_CUH

#include <cooperative_groups.h>

#include "harness.h" /* device_sms */
#include "train_row.cuh"
#include "device/grid_sync.cuh" /* lesson 8's ticket and per-row count */
#include "device/cluster_launch.h" /* lesson 8's cluster launch and its test */
#include "device/rows.h" /* the row engine: its paths and plans */

/* Most CTAs in a cluster: 16 on the H100 and H200, with the kernel opted
 * in to sizes past the portable 8 (train_cluster_fits). */
#define TRAIN_CLUSTER_MAX 16
/* Float rows of more than 8 pieces of 64 KB go to clusters of
 * larger CTAs, lesson 8's path 3 shape at 2^19: 512 threads, 16 floats a
 * thread in registers and 96 KB of shared memory, 128 KB of the row, two
 * CTAs per SM: log-softmax at 128 x 2^19 (C = 16) ran at 92.1 % of the
 * copy against 89.3 through global memory (H100). The classifier takes
 * them for 9 to 16 pieces of 64 KB only: at 2^19 they no longer pay for
 * it (docs/experiments/training-onchip-clusters.md). */
#define TRAIN_BIG_BLOCK 512
#define TRAIN_BIG_SMEM (96 * 1024)

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
 * elements (pieces of seg, the last one shorter). CLUSTER: the row is the
 * CTA's cluster, the piece its rank in it; else thread 0 draws a ticket. */
template <bool CLUSTER>
__device__ __forceinline__ void train_onchip_take(unsigned *sync, int pieces, int seg, long long cols, long long *row,
                                                  int *piece, long long *begin, int *len)
{
    unsigned id = blockIdx.x; /* clusters of a 1-D grid: CTAs id / pieces * pieces, ... in a row */
    if constexpr (!CLUSTER) {
        __shared__ unsigned ticket;
        if (threadIdx.x == 0) fx_grid_ticket(&sync[0], &ticket);
        __syncthreads();
        id = ticket;
    }
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

/* The row's (m, d) from the CTA's: through the cluster (lesson 8's
 * fx_cluster_exchange; call train_onchip_leave<true>() last) or the
 * workspace. Cluster kernels are built only where FX_CLUSTER_CODE (sm_90
 * and the emulator); elsewhere their bodies return at once, and the host
 * never launches them (train_has_clusters). */
template <bool CLUSTER>
__device__ __forceinline__ online_md train_onchip_exchange(online_md b, online_md *work, int piece, int pieces,
                                                           unsigned *count, float *red_m, float *red_d,
                                                           unsigned *before)
{
    if constexpr (CLUSTER) {
        (void)before;
#if FX_CLUSTER_CODE
        return fx_cluster_exchange(b, pieces); /* the row's pieces are its cluster */
#else
        return b;
#endif
    } else {
        return train_grid_exchange(b, work, piece, pieces, count, red_m, red_d, before);
    }
}

/* The end of an on-chip kernel: in a cluster, wait until no CTA reads
 * this one's state any more; in the workspace, thread 0 puts the row's
 * counter back to 0 if its count out was the row's last (fx_grid_leave;
 * before: what train_onchip_exchange's count out returned). */
template <bool CLUSTER>
__device__ __forceinline__ void train_onchip_leave(unsigned *count, unsigned before, int pieces)
{
    if constexpr (CLUSTER) {
        (void)count;
        (void)before;
        (void)pieces;
#if FX_CLUSTER_CODE
        cooperative_groups::this_cluster().barrier_wait();
#endif
    } else if (threadIdx.x == 0) {
        fx_grid_leave(count, before, (unsigned)pieces);
    }
}

/* ---- the host side ---------------------------------------------------------- */

/* A plan for rows x cols on chip: P pieces of seg elements (a multiple of
 * 8: pieces start on 16 bytes), the dynamic shared memory of a CTA, and
 * cluster: 0 to meet in the workspace, else P, the row's cluster. */
typedef struct {
    long long pieces, seg;
    size_t smem;
    int cluster, block; /* block: threads per CTA (TRAIN_GRID_BLOCK, or TRAIN_BIG_BLOCK in a cluster) */
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
/* Whether this GPU and binary launch clusters, and long rows may use
 * them (train_set_long_rows): 0 never, 1 where they pay, 2 wherever
 * they fit (TRAIN_LONG_CLUSTER). */
int train_long_clusters(void);
/* The same for the classifier's bulk-loaded clusters: 0 never, 1 where
 * they pay (TRAIN_LONG_AUTO), 2 wherever they fit (TRAIN_LONG_BULK). */
int train_long_bulk(void);
/* Whether a cluster of c CTAs of kernel k, smem bytes of dynamic shared
 * memory each, fits on this GPU (asked once per k and c; opts k in). */
int train_cluster_fits(const void *k, int c, int block, size_t smem);

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
    plan->cluster = 0;
    plan->block = TRAIN_GRID_BLOCK;
    return plan->pieces <= resident && plan->seg <= cap;
}

/* Turns plan p into clusters of kernel k where they pay: as few full
 * pieces as hold the row (2 ... TRAIN_CLUSTER_MAX of them), one cluster
 * per row, with enough rows to give every SM a CTA (fewer rows keep the
 * ticket's smaller pieces), or wherever a cluster fits in
 * TRAIN_LONG_CLUSTER mode. */
static inline bool train_cluster_plan(long long rows, long long cols, long long cap, long long rcap, int esize,
                                      const void *k, train_grid_plan *p, int block = TRAIN_GRID_BLOCK)
{
    const int mode = train_long_clusters();
    const long long c = (cols + cap - 1) / cap;
    if (!mode || c < 2 || c > TRAIN_CLUSTER_MAX || (mode == 1 && rows * c < device_sms())) return false;
    long long seg;
    size_t smem;
    if (train_cut(cols, c, rcap, 1, esize, &seg, &smem) != c || !train_cluster_fits(k, (int)c, block, smem))
        return false;
    p->pieces = c;
    p->seg = seg;
    p->smem = smem;
    p->cluster = (int)c;
    p->block = block;
    return true;
}

/* Float rows into clusters where they pay: rows of more than 8 pieces of
 * 64 KB, up to big_pieces of them, in clusters of the 128 KB CTAs of
 * kernel big (TRAIN_BIG_BLOCK); else, or where those do not fit,
 * clusters of kernel k's 64 KB CTAs (train_cluster_plan). */
static inline void train_float_cluster_plan(long long rows, long long cols, long long big_pieces, const void *k,
                                            const void *big, train_grid_plan *p)
{
    constexpr long long RCAP = TRAIN_GRID_BLOCK * TRAIN_GRID_FPT, CAP = RCAP + TRAIN_GRID_SMEM / 4;
    constexpr long long BIG_RCAP = TRAIN_BIG_BLOCK * TRAIN_GRID_FPT, BIG_CAP = BIG_RCAP + TRAIN_BIG_SMEM / 4;
    if (cols > 8 * CAP && cols <= big_pieces * CAP &&
        train_cluster_plan(rows, cols, BIG_CAP, BIG_RCAP, 4, big, p, TRAIN_BIG_BLOCK))
        return;
    train_cluster_plan(rows, cols, CAP, RCAP, 4, k, p);
}

/* Launches kernel k over n rows of plan p (n x pieces CTAs): in clusters
 * of p->cluster CTAs, or plainly. */
template <class... P, class... A>
static void train_onchip_launch(const train_grid_plan *p, long long n, cudaStream_t stream, void (*k)(P...),
                                A... args)
{
    const unsigned grid = (unsigned)(n * p->pieces);
    if (!p->cluster) {
        k<<<grid, p->block, p->smem, stream>>>(args...);
        CUDA_CHECK_LAUNCH();
        return;
    }
    cudaLaunchAttribute attr[1];
    const cudaLaunchConfig_t lc = fx_cluster_config(grid, p->block, p->cluster, p->smem, stream, attr);
    CUDA_CHECK(cudaLaunchKernelEx(&lc, k, args...));
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
/* Whether the classifier takes its on-chip path at rows x cols: 0 no, 1
 * with the workspace, C >= 2 in clusters of C CTAs (classifier_fused.cu). */
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
