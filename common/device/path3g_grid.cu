/* Taught in lesson 8. Path 3g of the row engine: one row over P independent
 * CTAs of up to 64 KB each, held on chip, the CTAs' (m, d) states traded
 * through global memory with a release add and an acquire load
 * (lessons/08_fastest/README.md, "Path 3g"). Any GPU, as long as it holds a
 * row's P CTAs at once (8.6 M floats on an H100). It wins where a cluster
 * stops: rows above 2^19 (89 % of copy at 64 x 2^20 against path 3's 75 %,
 * H100), and rows too few to give every SM a CTA otherwise
 * (docs/experiments/rows-grid-path.md). */
#include <limits.h>
#include <math.h>

#include "check.h"
#include "fastest_device.cuh"
#include "fastest_paths.h"
#include "grid_sync.cuh" /* the ticket, the release add and the acquire load */

/* Path 3g: one row over P independent CTAs (any GPU of the last decade).
 * Clusters stop at 16 CTAs; a 4 MiB row then needs 256 KB per CTA, one CTA
 * per SM, and DRAM idles through every wait (75 % of copy at 64 x 2^20 on
 * the H100). Spread over P = 32 ... 64 CTAs of 64-128 KB, two to four share
 * an SM and hide each other's waits.
 * The states travel through global memory: each CTA writes its state to
 * work[row * P + piece], then counts itself in at sync[1 + row] and waits
 * until all P have, then merges the P states (same threads, same order,
 * same tree in every CTA: the same bits).
 * Waiting for other CTAs is safe only if they are sure to run. A CTA
 * takes its piece from a ticket (sync[0]) drawn when it starts, not from
 * blockIdx: tickets go out in the order CTAs become resident, so every
 * ticket below ours belongs to a running CTA. Only the row with the
 * highest ticket can be incomplete; all rows below it finish and free
 * their SMs for the CTAs it waits for, as long as one row's P CTAs fit on
 * the GPU at once (the host checks). Single-pass scans, whose blocks wait
 * for other blocks, meet the same question (Merrill and Garland,
 * "Single-pass parallel prefix scan with decoupled look-back", 2016).
 * The counters start at 0 (the host zeroes them once, when it allocates
 * them) and the kernel leaves them at 0: the last ticket puts sync[0]
 * back, and each CTA counts itself in a second time once past the wait,
 * the last of the row's 2P counts putting sync[1 + row] back. A memset
 * before each launch would do the same at a cost of 1 us or so: at
 * 1 x 2^20, 57.7 % of copy without it against 54.6 % with it, H100
 * (docs/experiments/rows-grid-path.md). */
template <int VEC, bool PEEL, int FPT, int BLOCK, bool XS, class T = float>
__global__ void __launch_bounds__(BLOCK)
fastest_grid_kernel(const T *__restrict__ x, long long ldx, T *__restrict__ y, long long ldy, int cols,
                    int pieces, int seg, int mis, unsigned *sync, online_md *work)
{
    extern __shared__ float4 fastest_grid_smem[];
    T *srow = reinterpret_cast<T *>(fastest_grid_smem);
    __shared__ float red_m[32], red_d[32];
    __shared__ unsigned ticket;

    if (threadIdx.x == 0) fx_grid_ticket(&sync[0], &ticket);
    __syncthreads();
    const long long row = ticket / (unsigned)pieces;
    const int piece = (int)(ticket % (unsigned)pieces);
    const T *xr = x + row * ldx;
    const view_cut cut = fx_row_cut<VEC, PEEL>(row, XS ? ldy : ldx, mis, cols); /* XS: mis is y's */
    const int len = fx_piece_len((int)(cut.nvec * VEC), piece, seg);
    const int begin = cut.head + piece * seg;
    const bool has_extra = PEEL && piece == 0 && (int)threadIdx.x < cut.nextra;

    float v[FPT + (PEEL ? 1 : 0)], m_regs;
    const online_md t = fx_piece_read<VEC, PEEL, FPT, BLOCK, XS>(
        xr + begin, len, has_extra ? view_extra_load(xr, cut, threadIdx.x) : -INFINITY, v, srow, &m_regs);
    const online_md b = online_md_row_merge<BLOCK>(t, red_m, red_d);
    online_md *wr = work + row * pieces;
    if (threadIdx.x == 0) {
        wr[piece] = b;
        fx_grid_arrive_wait(&sync[1 + row], (unsigned)pieces); /* count in, wait for the row */
    }
    __syncthreads(); /* thread 0's acquire covers the block's reads after the barrier */
    /* The block merges the P states together, then across its warps: every
     * warp merging all P states itself is half a point slower at
     * 64 x 2^20 on the H100. */
    online_md q = online_md_identity();
    for (int i = threadIdx.x; i < pieces; i += BLOCK) {
        const float2 w = __ldcg(reinterpret_cast<const float2 *>(wr + i)); /* from L2, never a stale L1 line */
        const online_md o = {w.x, w.y};
        q = online_md_merge(q, o);
    }
    const online_md R = online_md_row_merge<BLOCK>(q, red_m, red_d);
    const unsigned before = threadIdx.x == 0 ? fx_grid_count_out(&sync[1 + row]) : 0u;
    T *yr = y + row * ldy;
    fx_piece_write<VEC, PEEL, FPT, BLOCK>(yr + begin, len, v, srow, m_regs, R,
                                          has_extra ? yr + fx_extra_at<T>(cut, threadIdx.x) : nullptr);
    if (threadIdx.x == 0) fx_grid_leave(&sync[1 + row], before, (unsigned)pieces);
}

/* A path 3g kernel over storage type T (float: lesson 8; 16-bit: lesson 9). */
template <class T>
using fx_grid_fn_t = void (*)(const T *, long long, T *, long long, int, int, int, int, unsigned *, online_md *);
typedef fx_grid_fn_t<float> fx_grid_fn;

static fx_grid_fn fx_grid_kernel(int mode)
{
    if (mode == FX_ALIGNED) return fastest_grid_kernel<4, false, FX_GRID_FPT, FX_GRID_BLOCK, false>;
    if (mode == FX_PEELED) return fastest_grid_kernel<4, true, FX_GRID_FPT, FX_GRID_BLOCK, false>;
    if (mode == FX_YCUT) return fastest_grid_kernel<4, true, FX_GRID_FPT, FX_GRID_BLOCK, true>;
    return fastest_grid_kernel<1, false, FX_GRID_FPT, FX_GRID_BLOCK, false>;
}

/* How many CTAs of kernel k with full pieces the GPU holds at once (its
 * registers, so its occupancy, are its own). A row's pieces must all fit:
 * a CTA waits for its row's others. Opts k in to its shared memory: 48 KB
 * of dynamic shared memory, plus the kernel's static arrays, is above the
 * 48 KB a block gets without opting in. */
template <class T>
static long long fx_grid_resident_of(fx_grid_fn_t<T> k)
{
    const size_t smem = (size_t)fx_grid_smem(FX_GRID_PIECE, sizeof(float)); /* 48 KB, 16-bit CTAs too */
    int per_sm = 0;
    CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, FX_GRID_BLOCK, smem));
    return (long long)per_sm * fx_sms();
}

long long fx_grid_resident(int mode)
{
    static long long cache[FX_NMODES] = {-1, -1, -1, -1};
    long long *slot = &cache[mode];
    if (*slot < 0) *slot = fx_grid_resident_of(fx_grid_kernel(mode));
    return *slot;
}

int softmax_fastest_has_grid(void) { return fx_grid_resident(FX_SCALAR) > 0; }

/* Pieces per row: as many full pieces (fx_grid_cap: 64 KB of floats) as
 * the row needs, more (down to FX_GRID_MIN_PIECE floats' bytes) when there
 * are too few rows to give every SM a CTA: 56.8 % of copy at 1 x 2^20 with
 * 128 pieces against 51.5 % with 64 (H100). Each piece a whole number of
 * float4s. */
void fx_grid_shape(long long rows, long long cols, int esize, long long *pieces, long long *seg)
{
    const long long cap = fx_grid_cap(esize), least = FX_GRID_MIN_PIECE * 4 / esize; /* in bytes as float's */
    long long p = (cols + cap - 1) / cap;
    const long long fill = (fx_sms() + rows - 1) / rows, most = cols / least;
    if (p < fill) p = fill < most ? fill : most;
    if (p < 1) p = 1;
    long long g = (cols + p - 1) / p;
    g = (g + 3) / 4 * 4;
    *seg = g;
    *pieces = (cols + g - 1) / g;
}

long long fx_grid_smem(long long seg, int esize)
{
    const long long rest = seg - (long long)FX_GRID_BLOCK * FX_GRID_FPT;
    return rest > 0 ? rest * esize : 0;
}

/* Rows in batches of at most INT_MAX CTAs. The workspace holds the batch's
 * states; the counters are sync[0], the ticket, and sync[1 + r], row r's.
 * cut_at_y: the rows are cut at y's 16-byte boundaries (FX_YCUT). */
template <class T>
static void fx_grid_batches(fx_grid_fn_t<T> k, bool cut_at_y, const T *x, long long ldx, T *y, long long ldy,
                            long long rows, long long cols, long long pieces, long long seg, cudaStream_t stream)
{
    const long long smem = fx_grid_smem(seg, sizeof(T));
    const long long batch_max = INT_MAX / pieces;
    for (long long r0 = 0; r0 < rows; r0 += batch_max) {
        const long long n = rows - r0 < batch_max ? rows - r0 : batch_max;
        online_md *work = fx_workspace(n * pieces);
        unsigned *sync = fx_sync_counters(n + 1);
        const T *xb = x + r0 * ldx;
        T *yb = y + r0 * ldy;
        const int mis = cut_at_y ? fx_mis(yb) : fx_mis(xb); /* where the rows are cut */
        k<<<(unsigned)(n * pieces), FX_GRID_BLOCK, (size_t)smem, stream>>>(xb, ldx, yb, ldy, (int)cols, (int)pieces,
                                                                            (int)seg, mis, sync, work);
        CUDA_CHECK_LAUNCH();
    }
}

void fx_run_grid(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                 long long cols, cudaStream_t stream)
{
    const int mode = fx_plan_mode(p);
    fx_grid_batches(fx_grid_kernel(mode), mode == FX_YCUT, x, ldx, y, ldy, rows, cols, p->splits, p->segment, stream);
}

/* Lesson 9: 16-bit storage. mode16 (fx_mode16): 0 one element per
 * access, 1 16-byte vectors of 8 elements, 2 the same, peeled; the plan's
 * pieces are then multiples of 8 elements. */
template <class T>
static fx_grid_fn_t<T> fx_grid_kernel_t(int mode16)
{
    if (mode16 == 2) return fastest_grid_kernel<8, true, FX_GRID_FPT, FX_GRID_BLOCK, false, T>;
    if (mode16 == 1) return fastest_grid_kernel<8, false, FX_GRID_FPT, FX_GRID_BLOCK, false, T>;
    return fastest_grid_kernel<1, false, FX_GRID_FPT, FX_GRID_BLOCK, false, T>;
}

long long fx_grid_resident_16(dtype t, int mode16)
{
    static long long cache[2][3] = {{-1, -1, -1}, {-1, -1, -1}};
    long long *slot = &cache[t == DTYPE_BF16][mode16];
    if (*slot < 0)
        *slot = t == DTYPE_BF16 ? fx_grid_resident_of(fx_grid_kernel_t<__nv_bfloat16>(mode16))
                                : fx_grid_resident_of(fx_grid_kernel_t<__half>(mode16));
    return *slot;
}

template <class T>
static void fx_run_grid_t(const fastest_plan *p, const T *x, long long ldx, T *y, long long ldy, long long rows,
                          long long cols, cudaStream_t stream)
{
    const fx_grid_fn_t<T> k = fx_grid_kernel_t<T>(fx_mode16(p));
    const long long smem = fx_grid_smem(p->segment, sizeof(T));
    if (smem > 48 * 1024) /* fx_grid_resident_16 opted in for 48 KB; a plan never asks for more */
        CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    fx_grid_batches(k, false, x, ldx, y, ldy, rows, cols, p->splits, p->segment, stream);
}

void fx_run_grid_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                    long long rows, long long cols, cudaStream_t stream)
{
    fx_grid_resident_16(t, fx_mode16(p)); /* the kernel's opt-in to 48 KB of shared memory */
    if (t == DTYPE_F16) fx_run_grid_t(p, (const __half *)x, ldx, (__half *)y, ldy, rows, cols, stream);
    else fx_run_grid_t(p, (const __nv_bfloat16 *)x, ldx, (__nv_bfloat16 *)y, ldy, rows, cols, stream);
}
