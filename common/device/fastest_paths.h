/* Taught in lesson 8. Internal to the row engine: what the dispatcher
 * (rows_plan.cu) and the path files (path*.cu) share on the host side: the
 * access modes, the configuration tables the plan reads, each path's
 * launcher and shape queries, and the workspace of paths 3g and 4. Not part
 * of the API (rows.h). */
#ifndef COMMON_DEVICE_FASTEST_PATHS_H
#define COMMON_DEVICE_FASTEST_PATHS_H
#include "rows.h"
#include "f16.h"                       /* dtype: lesson 9's storage types */
#include "online_md.cuh" /* lesson 6's (m, d) state: the workspace's pairs */

/* Every path runs on the CPU emulator too (common/emu, which defines
 * CUDA_EMU): clusters, and CTAs that wait for each other, included. What
 * it cannot run is inline PTX: FASTEST_GPU_CODE marks the GPU's spelling
 * of path 3g's release add and acquire load, which the emulator gets in
 * C++ (cuda::atomic_ref) while the GPU's code stays what was measured. */
#if !defined(CUDA_EMU)
#define FASTEST_GPU_CODE 1
#endif

/* How a plan moves data (fx_alignment): 32-bit accesses; float4 bodies with
 * peeled heads and tails (PEEL kernels); float4 throughout. The last two
 * are separate kernels so that aligned views run code with no peeling in
 * it: one kernel for both cost paths 3 and 3g 6-8 % of copy on the H100
 * (docs/experiments/rows-peeled-views.md). */
#define FX_SCALAR 0
#define FX_PEELED 1
#define FX_ALIGNED 2
#define FX_YCUT 3 /* paths 3 and 3g: rows of x and y misaligned against each other */
#define FX_NMODES 4

/* Register configurations (paths 1 and 2), shortest rows first: the first
 * whose capacity tpr x fpt holds the row. Up to 1024 floats a row is
 * shared by part of a warp; above, by a block. */
struct fx_reg_config {
    int max_cols, tpr, fpt, block;
};
/* Up to 64 floats, one float4 per lane (fpt 4) and more lanes per row:
 * 99.9 % of copy at N = 32 and 64 against 99.1-99.5 % with two float4s per
 * lane, H100 (lessons/08_fastest/README.md, "Path 1"). Rows of 65-128
 * floats take two float4s a lane, 16 lanes a row: twice the bytes in
 * flight per warp, which the H200's faster memory needs to stay level with
 * cuDNN there.
 * Path 2's classes step by at most 1.5x, not 2x: a row one float past a
 * power of two in a class twice its size holds half the registers it
 * occupies, so fewer rows fit per SM and fewer bytes are in flight. The
 * H200 needs 1.4x the H100's bytes in flight and shows it: N = 4097 ran at
 * 86.1 % of copy there in classes of 2x steps.
 * Rows just past 8192 and 16384 floats take 36 floats a thread (256 x 36,
 * 512 x 36, 63-64 registers): the next classes up, 512 x 24 (49
 * registers) and 1024 x 20, fit 2 and 1 blocks per SM where these fit 4
 * and 2, which carries 1.5-2x the bytes in flight (N = 16385: 97.5 % of
 * copy against 77.0 % in the class above, H200). For the same reason rows
 * of 2049 floats take 128 x 20 (12 blocks per SM, bounded by registers),
 * not 256 x 12 (8, bounded by threads)
 * (docs/experiments/rows-register-classes.md). */
static constexpr fx_reg_config FX_REG[] = {
    {4, 1, 4, 128},         {8, 2, 4, 128},          {16, 4, 4, 128},          {32, 8, 4, 128},
    {64, 16, 4, 128},       {128, 16, 8, 128},       {256, 32, 8, 128},        {512, 32, 16, 128},
    {1024, 32, 32, 128},    {1536, 128, 12, 128},    {2048, 128, 16, 128},     {2560, 128, 20, 128},
    {3072, 256, 12, 256},   {4096, 256, 16, 256},    {6144, 256, 24, 256},     {8192, 256, 32, 256},
    {9216, 256, 36, 256},   {12288, 512, 24, 512},   {16384, 512, 32, 512},    {18432, 512, 36, 512},
    {20480, 1024, 20, 1024}, {32768, 1024, 32, 1024},
};
#define FX_NREG (int)(sizeof FX_REG / sizeof FX_REG[0])
#define FX_NWARP 9 /* the first 9 are path 1 */
/* Class i for accesses of vec elements. A 16-bit row's 16-byte vector is
 * 8 elements (lesson 9): the classes of 4 floats per lane (up to 64) get
 * 8 elements per lane and half the lanes, the 20-float class 24. */
static constexpr fx_reg_config fx_reg_for(int i, int vec)
{
    const fx_reg_config c = FX_REG[i];
    return c.fpt % vec == 0 ? c
           : c.fpt < vec    ? fx_reg_config{c.max_cols, c.tpr > 1 ? c.tpr / 2 : 1, vec, c.block}
                            : fx_reg_config{c.max_cols, c.tpr, (c.fpt + vec - 1) / vec * vec, c.block};
}
static_assert(FX_REG[FX_NWARP - 1].max_cols == FASTEST_WARP_MAX_COLS, "path 1 ends at 1024");
static_assert(FX_REG[FX_NREG - 1].max_cols == FASTEST_BLOCK_MAX_COLS, "path 2 ends at 32768");
/* From 1024 floats to the 20480 class each class is at most 1.5x the one
 * before: no row there fills less than two thirds of its class. (The last
 * step, 20480 to 32768, is 1.6x: rows of 20481 floats fill 62.5 %.) */
static constexpr bool fx_reg_steps_ok(int i)
{
    return i >= FX_NREG - 2 || (2 * FX_REG[i + 1].max_cols <= 3 * FX_REG[i].max_cols && fx_reg_steps_ok(i + 1));
}
static_assert(fx_reg_steps_ok(FX_NWARP - 1), "path 2's classes step by at most 1.5x up to 20480 floats");

/* Cluster configurations (path 3), shortest rows first: the first whose
 * max_cols holds the row. C CTAs of `block` threads, each holding
 * block x fpt floats of its segment in registers and the rest (up to
 * max_cols / C - block x fpt floats) in shared memory. Small register
 * parts leave room for several CTAs per SM (92.8 % of copy at N = 2^18 on
 * the H100, where CTAs holding their piece in 1024 threads' registers
 * reach 83.3 %): 64 KB CTAs of 256 threads, four per SM, up to 2^17
 * floats, 128 KB CTAs of 512 threads, two per SM, above. Against CTAs of
 * half those pieces in clusters twice as large, the softmax at
 * 256 x 2^18 ran 3.7 % faster on the H200
 * (docs/experiments/rows-cluster-classes.md). Clusters above 8 CTAs are
 * non-portable (the H100 and H200 allow 16). Rows of 16385-32768 floats
 * take path 2's single blocks where there are rows enough
 * (rows_plan.cu). */
struct fx_cluster_cfg {
    long long max_cols;
    int c, block, fpt;
};
/* The first class, one CTA of 256 x 8 floats and 24 KB, is for rows of up
 * to 8192 floats forced onto path 3 (the dispatcher gives them path 1 or
 * 2): six fit an SM where four of 256 x 16 do, and with those the short
 * rows took up to 1.37 times as long. The 10-CTA class keeps four 64 KB
 * CTAs an SM up to 163840 floats, where the next class's 128 KB CTAs fit
 * two (docs/experiments/rows-cluster-classes.md). */
static constexpr fx_cluster_cfg FX_CL[] = {
    {8192, 1, 256, 8},     {32768, 2, 256, 16},   {65536, 4, 256, 16},   {131072, 8, 256, 16},
    {163840, 10, 256, 16}, {262144, 8, 512, 16}, {524288, 16, 512, 16}, {1048576, 16, 1024, 16},
};
#define FX_NCL (int)(sizeof FX_CL / sizeof FX_CL[0])
static_assert(FX_CL[FX_NCL - 1].max_cols == FASTEST_CLUSTER_MAX_COLS, "path 3 ends at 2^20");
/* Elements a CTA of class cfg holds, for elements of esize bytes: block x
 * fpt in registers (widened to float whatever the type) and the rest in
 * the class's shared memory, which holds the storage type. float: max_cols
 * / c. 16-bit (lesson 9): 1.75x as many elements in the same registers
 * and shared memory, so the same occupancy, and 87.5 % of a float CTA's
 * bytes of the row. Sized by float's element count, a 16-bit CTA would
 * carry half the bytes, too few to keep DRAM busy
 * (docs/experiments/rows-cluster-classes.md). */
static constexpr long long fx_cl_cap(int cfg, int esize)
{
    return (long long)FX_CL[cfg].block * FX_CL[cfg].fpt +
           (FX_CL[cfg].max_cols / FX_CL[cfg].c - (long long)FX_CL[cfg].block * FX_CL[cfg].fpt) * 4 / esize;
}
/* Below this fill of its CTAs a row goes from path 3 to path 3g
 * (rows_plan.cu says why). */
#define FX_CLUSTER_MIN_FILL 85 /* percent */

#define FX_SHARED_BLOCK 1024
#define FX_SPLIT_BLOCK 512
/* Path 4's loads in flight per thread, in floats: 128 bytes. Rows need
 * them: kernel 1 alone read 256 MiB of floats in 91-93 us with them,
 * 101-103 us with 64 (H100). 16-bit rows in 16-byte vectors have the same
 * 128 bytes in flight, kept as loaded (path4_split.cuh, fx_split_raw). */
#define FX_SPLIT_FPT 32
/* An operation that writes nothing (lesson 10's loss) runs path 4 as a
 * read pass: kernel 1 over pieces of FX_READ_SEG floats in blocks of
 * FX_READ_BLOCK, then a warp per row merges their states. With nothing
 * to keep in L2 for a second read, longer pieces and smaller blocks
 * stream best: 92 % of the read pass's bandwidth in blocks of 256 threads
 * against 71 in blocks of 512 (M x N = 2^26, H100). */
#define FX_READ_SEG 32768
#define FX_READ_BLOCK 256

/* Path 3g's CTAs: 256 threads x 16 floats in registers + up to 48 KB of
 * shared memory: 64 KB pieces, four CTAs per SM on an H100. Picked from a
 * sweep of block (256, 512, 1024), registers (8 ... 32 floats) and pieces
 * per row: 89.4 % of copy at 64 x 2^20 on the H100, ahead of larger pieces
 * with fewer CTAs per SM and of smaller ones with more
 * (docs/experiments/rows-grid-path.md). */
#define FX_GRID_BLOCK 256
#define FX_GRID_FPT 16
#define FX_GRID_PIECE 16384    /* floats per CTA at most */
#define FX_GRID_MIN_PIECE 2048 /* ... and at least, when few rows ask for more CTAs */
/* Elements of esize bytes per path 3g CTA at most, as fx_cl_cap: the
 * registers' FX_GRID_BLOCK x FX_GRID_FPT and 48 KB of shared memory in the
 * storage type (16384 floats, 28672 16-bit elements), shared by the nin
 * inputs of an operation (8192 floats of each of two). */
static constexpr long long fx_grid_cap(int esize, int nin = 1)
{
    const long long regs = (long long)FX_GRID_BLOCK * FX_GRID_FPT;
    return (regs + (FX_GRID_PIECE - regs) * 4 / esize) / nin;
}

/* Path 3's held class (path3_held.cuh): softmax rows that fill at least
 * FX_HELD_FILL sixteenths of C pieces of FX_HELD_SEG 16-bit elements (C =
 * 2, 4, 8, FX_HELD_MAX_C), FX_HELD_ITEMS 16-byte vectors a thread of
 * FX_HELD_BLOCK. A row filling 3/4 of its pieces (2048 x 50304) ran in
 * 1.14-1.16 of the time of the path it would replace. The dispatcher takes
 * it where DRAM delivers at least FX_HELD_BYTES per SM a cycle
 * (softmax_fastest_held_dram): it was measured on the H200 (18.8 bytes)
 * only, where lesson 9 ran 512 x 131072 in 0.921-0.926 of path 3b's time;
 * the H100 (12.8) keeps path 3b until the class is measured there
 * (docs/experiments/rows-cluster-push.md). Float rows: FX_HELD32_ITEMS
 * vectors of 4 floats a thread (64 registers, 4 CTAs an SM), pieces
 * filled to FX_HELD32_FILL sixteenths. A row that needs 16 such pieces
 * and that 8 of FX_HELD32_WIDE_ITEMS vectors (128 registers, 2 CTAs an
 * SM) hold as well takes those: a cluster half the size, and not the
 * non-portable 16 (512 x 151936, Qwen's vocabulary, in 0.976-0.978 of the
 * time of 16 pieces, H200). Rows past 16 pieces take 16 of
 * FX_HELD32_MID_ITEMS (64 registers, 4 CTAs an SM) where those are
 * FX_HELD32_FILL sixteenths full, else 16 of FX_HELD32_LONG_ITEMS (80
 * registers, 3 CTAs an SM) filled to FX_HELD32_LONG_FILL sixteenths: so
 * part-filled, they still beat the path they replace (335 x 200064, 12.2
 * sixteenths, in 0.859 of its time). 16-bit rows past 8 pieces take the
 * first class of FX_HELD16_CLASSES ({pieces, vectors a thread, fill in
 * sixteenths}) that holds them: 8 of FX_HELD16_MID_ITEMS (64 registers, 4
 * CTAs an SM; bf16 512 x 151936 in 0.933 of path 3b's time), of
 * FX_HELD16_TALL_ITEMS (64), of FX_HELD16_WIDE_ITEMS (80, no spill; bf16
 * 256 x 262144 in 0.98 of the time of 16 pieces of 8), then 16 of the
 * last two for rows past 2^18 (the float classes' shapes, in bytes; f16
 * 128 x 2^19 in 0.833 of the time of path 3b's CTAs meeting in global
 * memory), H200; docs/experiments/rows-held-more-rows.md. */
#define FX_HELD_BLOCK 256
#define FX_HELD_ITEMS 8
#define FX_HELD_SEG (FX_HELD_BLOCK * FX_HELD_ITEMS * 8)
#define FX_HELD_MAX_C 16 /* non-portable */
#define FX_HELD_FILL 15
#define FX_HELD_BYTES 16.0
#define FX_HELD32_ITEMS 10
#define FX_HELD32_FILL 14
#define FX_HELD32_WIDE_ITEMS 19
#define FX_HELD32_LONG_ITEMS 16
#define FX_HELD32_MID_ITEMS 12
#define FX_HELD32_LONG_FILL 12
#define FX_HELD16_WIDE_ITEMS 16
#define FX_HELD16_TALL_ITEMS 12
#define FX_HELD16_MID_ITEMS 10
#define FX_HELD16_MID_FILL 14
#define FX_HELD16_WIDE_FILL 12
#define FX_HELD16_CLASSES                                                                                            \
    {{8, FX_HELD16_MID_ITEMS, FX_HELD16_MID_FILL},   {8, FX_HELD16_TALL_ITEMS, FX_HELD16_MID_FILL},                 \
     {8, FX_HELD16_WIDE_ITEMS, FX_HELD16_WIDE_FILL}, {16, FX_HELD16_TALL_ITEMS, FX_HELD16_MID_FILL},                \
     {16, FX_HELD16_WIDE_ITEMS, FX_HELD16_WIDE_FILL}}

/* Path 3b's CTA shape and pieces (FX_BULK_*) are in bulk_copy.cuh, which
 * lesson 10's classifier shares; its largest cluster (portable sizes, as
 * bulk_copy.cuh says) here, where the plan asks it too. */
#define FX_BULK_MAX_C 8

/* Path 3b's count of CTAs a row, given rows[i], the rows that clusters of
 * c + i CTAs hold on the GPU at once (i < k; rows[0]: c, the fewest that
 * hold the row): the i of the most rows, where that is at least a sixth
 * more than c's; else 0 (fx_bulk_most_rows in path3b_bulk.cuh says why). */
static inline int fx_bulk_pick(const long long *rows, int k)
{
    int best = 0;
    const long long bar = rows[0] + rows[0] / 6;
    for (int i = 1; i < k; i++)
        if (rows[i] >= bar && rows[i] > rows[best]) best = i;
    return best;
}

/* rows_plan.cu: the dispatcher's helpers and the workspace. */
unsigned fx_grid(long long rows, int per_block);
int fx_sms(void);
int fx_plan_mode(const fastest_plan *p);
online_md *fx_workspace(long long states);
unsigned *fx_sync_counters(long long count);

/* Each path's launcher: runs plan p (its path's) on rows x cols. */
void fx_run_rows(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                 long long cols, cudaStream_t stream); /* paths 1 and 2: path1_2_rows.cu */
void fx_run_shared(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                   long long cols, cudaStream_t stream); /* path 2s: path2s_shared.cu */
void fx_run_cluster(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                    long long cols, cudaStream_t stream); /* path 3: path3_cluster.cu */
void fx_run_grid(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                 long long cols, cudaStream_t stream); /* path 3g: path3g_grid.cu */
void fx_run_split(const fastest_plan *p, const float *x, long long ldx, float *y, long long ldy, long long rows,
                  long long cols, cudaStream_t stream); /* path 4: path4_split.cu */
/* Path 3b, every storage type t (path3b_bulk.cu): its cluster size and
 * segment for rows of cols elements (0: no cluster of 2 ... FX_BULK_MAX_C
 * CTAs holds the row here), and its launcher. Aligned and peeled views. */
int fx_bulk_shape(dtype t, long long cols, int *c_out, long long *seg_out);
void fx_bulk_plan(fastest_plan *p, int c, long long seg, int esize); /* the plan's launch shape, from fx_bulk_shape's */
void fx_run_bulk(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                 long long rows, long long cols, cudaStream_t stream);

/* Lesson 9's 16-bit storage (t = DTYPE_F16 or DTYPE_BF16; x and y point
 * at __half or __nv_bfloat16): each path's launcher, for a plan made by
 * fx_plan_typed (fastest_typed.cu). p->vec4: 16-byte vectors of 8
 * elements, p->peel: cut out of misaligned rows (lesson 5's
 * view16_row_cut); else one element per access. fx_mode16 numbers these
 * 2, 1 and 0 for the occupancy queries. */
static inline int fx_mode16(const fastest_plan *p) { return p->peel ? 2 : p->vec4 ? 1 : 0; }
void fx_run_rows_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                    long long rows, long long cols, cudaStream_t stream); /* paths 1 and 2 */
void fx_run_shared_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                      long long rows, long long cols, cudaStream_t stream); /* path 2s */
void fx_run_cluster_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                       long long rows, long long cols, cudaStream_t stream); /* path 3 */
int fx_cluster_shape_16(dtype t, int mode16, long long cols, int *cfg_out,
                        int *c_out); /* path 3's fx_cluster_shape, 16-bit */
/* Path 3's held class (path3_cluster.cu): 1, its cluster size, piece and
 * 16-byte vectors a thread where it takes rows of cols elements of t (of a
 * peeled row's body, peel: 1) and its clusters fit here (the
 * dispatcher takes it by itself where softmax_fastest_held_dram, rows.h).
 * fx_run_cluster_16 and fx_run_cluster run its plans. */
int fx_held_shape(dtype t, long long cols, int peel, int *c_out, long long *seg_out, int *items_out);
/* rows_plan.cu: whether a plan wanting `want` takes the held class for
 * rows of hsize pieces, and p as that plan. */
int fx_held_wanted(fastest_path want, long long rows, int hsize);
void fx_held_plan(fastest_plan *p, int hsize, long long hseg, int per_thread);
void fx_run_grid_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                    long long rows, long long cols, cudaStream_t stream); /* path 3g */
void fx_run_split_16(const fastest_plan *p, dtype t, const void *x, long long ldx, void *y, long long ldy,
                     long long rows, long long cols, cudaStream_t stream); /* path 4 */
long long fx_grid_resident_16(dtype t, int mode16); /* path 3g's fx_grid_resident for 16-bit kernels */

/* rows_plan.cu: the plan and the run for float rows (fastest_typed.cu's
 * fx_plan_typed and fx_run_typed call them for DTYPE_F32, and ask
 * fx_plan_f32 which path a 16-bit row of the same shape takes). */
fastest_plan fx_plan_f32(fastest_path want, const float *x, long long ldx, const float *y, long long ldy,
                         long long rows, long long cols);
/* What the plan asks of one operation's kernels: each has its own
 * registers, so its own occupancy, and a row's pieces on path 3g must all
 * be resident at once. all_paths: 1 when the operation has path 2s too
 * (the softmax), else the plan leaves it out. nin: its inputs
 * (rows_op.cuh's NIN), which share each path's registers and shared
 * memory; an operation of two has no path 3 (cluster_shape answers 0). */
typedef struct {
    int (*cluster_shape)(int mode, long long cols, int *cfg_out, int *c_out); /* fx_cluster_shape */
    int (*cluster_ctas_per_sm)(int mode, int cfg);                            /* fx_cluster_ctas_per_sm */
    long long (*grid_resident)(int mode);                                     /* fx_grid_resident */
    int all_paths, nin;
    int reads_only; /* writes no element (OUT = false): path 4 in read passes of FX_READ_SEG */
    /* 16-bit rows (fx_plan_typed_for; NULL where the operation runs on
     * float rows only): fx_cluster_shape_16, fx_grid_resident_16 */
    int (*cluster_shape16)(dtype t, int mode16, long long cols, int *cfg_out, int *c_out);
    long long (*grid_resident16)(dtype t, int mode16);
    /* path 3b: fx_bulk_shape for the operation's own kernels, for each
     * storage type they are built for (0 for the others); NULL: no 3b */
    int (*bulk_shape)(dtype t, long long cols, int *c_out, long long *seg_out);
    /* path 3's held class: fx_held_shape (float rows: fx_held_shape_of); NULL: none */
    int (*held_shape)(dtype t, long long cols, int peel, int *c_out, long long *seg_out, int *items_out);
    /* 1: path 3b before path 2 where path 2 holds fewer than
     * FX_MIN_RESIDENT blocks an SM: lesson 10's float classifier, which
     * ran 2048 x 32768 in 0.90 of path 2's time (H200); not its 16-bit
     * kernels (1.43 of it), nor the softmax (a tie). */
    int bulk_before_block;
} fx_op_kernels;
extern const fx_op_kernels FX_SOFTMAX_KERNELS; /* rows_plan.cu */
/* fx_plan_f32 for the operation whose kernels k describes. */
fastest_plan fx_plan_f32_for(const fx_op_kernels *k, fastest_path want, const float *x, long long ldx,
                             const float *y, long long ldy, long long rows, long long cols);
/* fx_plan_typed for the operation whose kernels k describes (fastest_typed.cu). */
fastest_plan fx_plan_typed_for(const fx_op_kernels *k, fastest_path want, dtype t, const void *x, long long ldx,
                               const void *y, long long ldy, long long rows, long long cols);
fastest_plan fx_run_f32(fastest_path want, const float *x, long long ldx, float *y, long long ldy, long long rows,
                        long long cols, cudaStream_t stream);

/* The elements by which paths 3 and 3b size their CTAs: all cols, or, for
 * a peeled view (peel), the most its body of whole vectors of vec
 * elements can hold; the head and tail (at most vec - 1 each) ride in CTA
 * 0's extra register. Sized by cols, a row a float past a class's top
 * would take a CTA more, or path 3g: at N = 65537 the body's 4 CTAs of path
 * 3b run at 95.1 % of copy where the row's 5 reach 93.8 (H100). Path 3g
 * keeps cols, where the body gained nothing
 * (docs/experiments/rows-cluster-classes.md). */
static inline long long fx_body_cols(long long cols, int peel, int vec)
{
    const long long body = cols / vec * vec;
    return peel && body > 0 ? body : cols;
}

/* The length by which paths 1 and 2 pick a register class: cols, or, for
 * a peeled row past the largest class, its body of whole vectors, whose
 * head and tail ride in the first threads' extra register. So N = 32769
 * floats keeps path 2's 32768 class, where by cols it would take path 3b
 * at 87.1 % of the copy against 94.3 at N = 32768 (H200). */
static inline long long fx_reg_cols(long long cols, int peel, int vec)
{
    return peel && cols > FASTEST_BLOCK_MAX_COLS ? fx_body_cols(cols, 1, vec) : cols;
}

/* What the plan asks the paths about a shape. */
int fx_reg_index(long long cols, int from);                   /* path1_2_rows.cu  */
int fx_reg_blocks_per_sm(int i);                                         /* path1_2_rows.cu  */
int fx_shared_blocks_per_sm(long long cols);                              /* path2s_shared.cu */
int fx_cluster_shape(int mode, long long cols, int *cfg_out, int *c_out); /* path3_cluster.cu */
int fx_cluster_ctas_per_sm(int mode, int cfg);                            /* path3_cluster.cu */
/* Shared memory of a path 3 or 3g CTA for a piece of seg elements of
 * esize bytes (of each of nin inputs); path 3g's pieces for rows x cols
 * such elements. */
long long fx_cluster_smem(int cfg, long long seg, int esize); /* path3_cluster.cu */
void fx_grid_shape(long long rows, long long cols, int esize, int nin, long long *pieces,
                   long long *seg);                        /* path3g_grid.cu */
long long fx_grid_smem(long long seg, int esize, int nin); /* path3g_grid.cu */
long long fx_grid_resident(int mode);                                                 /* path3g_grid.cu */
void fx_split_shape(long long rows, long long cols, long long *splits, long long *seg); /* path4_split.cu */

#endif
