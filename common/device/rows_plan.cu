/* Taught in lesson 8. The row engine's dispatcher: one entry point, seven
 * kernels (rows.h has the list, lessons/08_fastest/README.md why each
 * exists). This file looks at the shape, the pointers and the GPU, picks a
 * path and its launch shape for float rows (fx_plan_f32; fastest_typed.cu
 * does 16-bit rows), and calls the path's launcher. Each path, kernel and
 * launcher, is in its own file (a .cuh of templates over the row
 * operation, rows_op.cuh, where the path runs any operation, and a .cu
 * instantiating the softmax):
 *
 *   path1_2_rows      paths 1 and 2: the row in registers
 *   path2s_shared     path 2s: the row in shared memory
 *   path3_cluster     path 3: a row across a thread-block cluster (its
 *                     held class of 16-bit rows: path3_held.cuh)
 *   path3b_bulk       path 3b: the same, each piece loaded by bulk copies
 *   path3g_grid       path 3g: a row across independent CTAs
 *   path4_split       path 4: a row split over many blocks, read twice
 *
 * with the device code they share in fastest_device.cuh and what this
 * file needs from them in fastest_paths.h. Other operations' plans come
 * from fx_plan_f32_for, asked of their own kernels (rows_run.cuh). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rows.h"
#include "check.h"
#include "harness.h" /* device_sms */
#include "fastest_paths.h"
#include "view_cut.cuh" /* lesson 5's view_can_peel, view_y_holes_short */

/* The dispatcher's thresholds come from the GPU, not from one model's
 * tuning: the SM count, and how many CTAs of each kernel the occupancy
 * calculator fits on one SM (its registers, shared memory and threads).
 * One rule runs through them. An SM that holds a single CTA of a row
 * moves no bytes while that CTA reduces, waits for its row's other CTAs
 * or drains its stores; a second resident CTA keeps DRAM busy through
 * those phases. So a path takes a row length on its own only where its
 * CTA for that length fits at least FX_MIN_RESIDENT times per SM:
 *   path 2, always: the register classes up to 18432 floats (at most 512
 *     threads x 64 registers, 2 per SM on sm_90); the 20480 and 32768 classes
 *     (1024 threads, 1 per SM) only with rows >= SMs / 4;
 *   path 3: the cluster classes up to 2^19 (96 KB of shared memory per
 *     CTA, 2 per SM; clusters of more than 8 only where DRAM does not
 *     outpace them, FX_WIDE_CLUSTER_BYTES); the 2^20 class (192 KB, 1 per
 *     SM) loses: 75 % of copy at 64 x 2^20 against path 3g's 89 % (H100);
 *   path 2s: rows up to about 28900 floats (2 x 113 KB per SM), which
 *     path 2 takes first on sm_90; a block of 32769 floats (1 per SM)
 *     runs at 74.1 % of copy on the H200, path 3g at 79.3 %.
 * The other thresholds are fractions of the SM count (rows x CTAs per
 * row against SMs / 2 or / 4) and what fits at once (path 3g needs a
 * row's CTAs all resident: fx_grid_resident). The measurements behind
 * these rules: docs/experiments/rows-dispatcher.md. */
#define FX_MIN_RESIDENT 2

/* FX_CLUSTER_MIN_FILL (fastest_paths.h, 85 %): path 3 sizes its cluster
 * by the row (fx_cluster_shape): a row just past a class's top fills its
 * CTAs only partly, and below 85 % full path 3g's 64 KB pieces win on the
 * H100 and the H200 (N = 65537, 80 % full: 85.9 % of copy in a cluster
 * against 90.3 % on path 3g, H100). From 89 % full neither wins
 * everywhere (docs/experiments/rows-dispatcher.md). */

/* Clusters of more than 8 CTAs (the 2^19 class: two 128 KB CTAs an SM,
 * 16 on 8 SMs) wait for the slowest of 16, with no third CTA on an SM to
 * keep DRAM busy meanwhile; path 3g's 64 KB CTAs, four an SM, hide more
 * of their waits. Which wins depends on how many bytes DRAM delivers per
 * SM in a cycle: at 128 x 2^19 the cluster ran at 91.8 % of the copy
 * against path 3g's 91.0 on the H100 (12.8 bytes per SM cycle), 76.9
 * against 80.2 on the H200 (18.8). Such clusters are taken only below
 * FX_WIDE_CLUSTER_BYTES (docs/experiments/rows-dispatcher.md), or where
 * FX_WIDE_CLUSTER_CTAS of their CTAs share an SM: ten 64 KB CTAs, four
 * an SM, ran 441 x 151936 in 0.156 ms against 0.162 for five of 128 KB
 * (H200, docs/experiments/rows-cluster-classes.md). */
#define FX_WIDE_CLUSTER_BYTES 16.0
#define FX_WIDE_CLUSTER_CTAS 3

/* DRAM's peak bytes per SM per SM clock cycle, from the device's peak
 * clocks and bus width (double data rate); 0 where it reports no clock
 * (the CPU emulator). Asked once per process. */
static double fx_dram_bytes_per_sm_cycle(void)
{
    static double v = -1.0;
    if (v < 0.0) {
        int dev = 0, mem_khz = 0, bus_bits = 0, sm_khz = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, dev));
        v = sm_khz > 0 ? 2.0 * mem_khz * (bus_bits / 8.0) / sm_khz / fx_sms() : 0.0;
    }
    return v;
}

int softmax_fastest_wide_clusters(void) { return fx_dram_bytes_per_sm_cycle() < FX_WIDE_CLUSTER_BYTES; }
int softmax_fastest_held_dram(void) { return fx_dram_bytes_per_sm_cycle() >= FX_HELD_BYTES; }

/* Blocks for `rows` rows at per_block a block; the kernels' grid-stride
 * loops take what lies beyond INT_MAX blocks. */
unsigned fx_grid(long long rows, int per_block)
{
    const long long blocks = (rows + per_block - 1) / per_block;
    return (unsigned)(blocks < INT_MAX ? blocks : INT_MAX);
}

/* Every plan needs it (common/harness.h asks once). */
int fx_sms(void) { return device_sms(); }

const char *fastest_path_name(fastest_path p)
{
    switch (p) {
    case FASTEST_WARP: return "1 warp (rows in registers, several rows per warp)";
    case FASTEST_BLOCK: return "2 block (row in registers)";
    case FASTEST_SHARED: return "2s block (row in shared memory)";
    case FASTEST_CLUSTER: return "3 cluster (row across SMs, distributed shared memory)";
    case FASTEST_BULK: return "3b bulk (row across SMs, loaded by the copy engine)";
    case FASTEST_GRID: return "3g grid (row across SMs, (m, d) via global memory)";
    case FASTEST_SPLIT: return "4 split (row across blocks, (m, d) merge, 2R+1W)";
    default: return "auto";
    }
}

/* ---- the workspace of paths 3g and 4 ---- */
static online_md *fx_work = nullptr;
static long long fx_work_bytes = 0;
static unsigned *fx_sync = nullptr; /* path 3g's counters */
static long long fx_sync_count = 0;

long long softmax_fastest_workspace_bytes(void) { return fx_work_bytes + fx_sync_count * (long long)sizeof(unsigned); }

void softmax_fastest_release(void)
{
    if (fx_work) CUDA_CHECK(cudaFree(fx_work)); /* synchronises: no kernel still uses it */
    if (fx_sync) CUDA_CHECK(cudaFree(fx_sync));
    fx_work = nullptr;
    fx_work_bytes = 0;
    fx_sync = nullptr;
    fx_sync_count = 0;
}

/* Path 3g's counters: zeroed here, once, and left at 0 by each launch. */
unsigned *fx_sync_counters(long long count)
{
    if (count > fx_sync_count) {
        if (fx_sync) CUDA_CHECK(cudaFree(fx_sync)); /* synchronises: no kernel still uses it */
        CUDA_CHECK(cudaMalloc(&fx_sync, (size_t)count * sizeof(unsigned)));
        CUDA_CHECK(cudaMemset(fx_sync, 0, (size_t)count * sizeof(unsigned)));
        CUDA_CHECK(cudaDeviceSynchronize()); /* zero before any stream's launch, blocking or not */
        fx_sync_count = count;
    }
    return fx_sync;
}

online_md *fx_workspace(long long states)
{
    const long long bytes = states * (long long)sizeof(online_md);
    if (bytes > fx_work_bytes) {
        if (fx_work) CUDA_CHECK(cudaFree(fx_work)); /* synchronises: no kernel still uses it */
        CUDA_CHECK(cudaMalloc(&fx_work, (size_t)bytes));
        fx_work_bytes = bytes;
    }
    return fx_work;
}

/* FX_ALIGNED: every row of both views starts 16-byte aligned and N % 4 ==
 * 0; FX_PEELED: each row of x starts at the same offset from a 16-byte
 * boundary as that row of y; FX_YCUT: not, but both are 4-byte aligned
 * (the plan keeps it for paths 3 and 3g only); FX_SCALAR: none. */
static int fx_alignment(const float *x, long long ldx, const float *y, long long ldy, long long rows,
                        long long cols)
{
    const uintptr_t ax = (uintptr_t)x, ay = (uintptr_t)y;
    if (ax % 16 == 0 && ay % 16 == 0 && cols % 4 == 0 && ldx % 4 == 0 && ldy % 4 == 0) return FX_ALIGNED;
    if (view_can_peel(x, ldx, y, ldy, rows)) return FX_PEELED;
    return ax % 4 == 0 && ay % 4 == 0 ? FX_YCUT : FX_SCALAR;
}

/* The softmax's kernels, as the plan asks them. */
const fx_op_kernels FX_SOFTMAX_KERNELS = {fx_cluster_shape,    fx_cluster_ctas_per_sm, fx_grid_resident, 1, 1, 0,
                                          fx_cluster_shape_16, fx_grid_resident_16,    fx_bulk_shape,    fx_held_shape,
                                          0};

fastest_plan fx_plan_f32(fastest_path want, const float *x, long long ldx, const float *y, long long ldy,
                         long long rows, long long cols)
{
    return fx_plan_f32_for(&FX_SOFTMAX_KERNELS, want, x, ldx, y, ldy, rows, cols);
}

/* Path 4's launch shape for operation k's plan p: pieces of the split
 * shape, read twice; an operation that writes nothing reads once, in
 * pieces of FX_READ_SEG. */
static void fx_split_plan(fastest_plan *p, const fx_op_kernels *k, long long rows, long long cols)
{
    p->path = FASTEST_SPLIT;
    p->block = FX_SPLIT_BLOCK;
    fx_split_shape(rows, cols, &p->splits, &p->segment);
    p->bytes_per_elem = 4.0 * (2 * k->nin + 1); /* the inputs read twice */
    if (k->reads_only) {
        p->block = FX_READ_BLOCK;
        p->segment = FX_READ_SEG;
        p->splits = (cols + FX_READ_SEG - 1) / FX_READ_SEG;
    }
}

/* Whether path 3 fits rows of cols floats (access mode, body: the row's
 * body, fx_body_cols): its CTAs' configuration and count, and whether the
 * dispatcher may take it by itself (*auto_out: resident twice an SM,
 * filled to FX_CLUSTER_MIN_FILL %, and more than 8 CTAs only where they
 * pay). */
static int fx_fits_cluster(const fx_op_kernels *k, int mode, long long cols, long long body, int *ccfg, int *csize,
                           int *auto_out)
{
    if (cols > FASTEST_CLUSTER_MAX_COLS || !softmax_fastest_has_clusters() ||
        !k->cluster_shape(mode, body, ccfg, csize))
        return 0;
    const long long ccap = *csize * fx_cl_cap(*ccfg, sizeof(float)); /* the cluster's floats */
    const int cl_per_sm = k->cluster_ctas_per_sm(mode, *ccfg);
    *auto_out = cl_per_sm >= FX_MIN_RESIDENT && body * 100 >= ccap * FX_CLUSTER_MIN_FILL &&
                (*csize <= 8 || softmax_fastest_wide_clusters() || cl_per_sm >= FX_WIDE_CLUSTER_CTAS);
    return 1;
}

/* Whether the plan takes path 3's held class for rows of hsize pieces
 * (fx_held_shape's answer): where path 3 is forced, or by the dispatcher
 * where DRAM outpaces path 3b's CTAs (softmax_fastest_held_dram) and the
 * rows' CTAs number at least half the SMs. */
int fx_held_wanted(fastest_path want, long long rows, int hsize)
{
    return want == FASTEST_CLUSTER ||
           (want == FASTEST_AUTO && softmax_fastest_held_dram() && rows * hsize >= fx_sms() / 2);
}

/* p as path 3's held class: clusters of hsize CTAs of hseg elements,
 * per_thread elements a thread. */
void fx_held_plan(fastest_plan *p, int hsize, long long hseg, int per_thread)
{
    p->path = FASTEST_CLUSTER;
    p->held = 1;
    p->block = p->threads_per_row = FX_HELD_BLOCK;
    p->floats_per_thread = per_thread;
    p->cluster = hsize;
    p->segment = hseg;
}

/* Path 3's held class (fx_held_shape) for aligned float rows, and peeled
 * ones by their body, in place of the long-row path p->path (3, 3b, 3g,
 * 4: fx_plan_typed_for's question for 16-bit rows gets the same answer).
 * 1 and p its plan where it takes the rows (align: fx_alignment's). */
static int fx_plan_held_f32(fastest_plan *p, const fx_op_kernels *k, fastest_path want, long long rows,
                            long long cols, int align)
{
    const int peel = align == FX_PEELED;
    const fastest_path path = p->path;
    int hsize = 0, items = 0;
    long long hseg = 0;
    if ((path != FASTEST_CLUSTER && path != FASTEST_BULK && path != FASTEST_GRID && path != FASTEST_SPLIT) ||
        (align != FX_ALIGNED && !peel) || !k->held_shape || !softmax_fastest_has_clusters() ||
        !k->held_shape(DTYPE_F32, fx_body_cols(cols, peel, 4), peel, &hsize, &hseg, &items) ||
        !fx_held_wanted(want, rows, hsize))
        return 0;
    fx_held_plan(p, hsize, hseg, items * 4);
    p->vec4 = 1;
    p->peel = peel;
    return 1;
}

fastest_plan fx_plan_f32_for(const fx_op_kernels *k, fastest_path want, const float *x, long long ldx,
                             const float *y, long long ldy, long long rows, long long cols)
{
    fastest_plan p = {};
    const int align = fx_alignment(x, ldx, y, ldy, rows, cols);
    /* paths 1 and 2 may fall back to scalar accesses too */
    const int cut_apart = k->nin == 2 && align == FX_YCUT;
    int mode = cut_apart ? FX_SCALAR : align;
    p.bytes_per_elem = 4.0 * (k->nin + 1); /* each input read once, y written once */
    if (cols < 1) cols = 1;
    if (rows < 1) rows = 1;
    const int sms = fx_sms();
    /* paths 3 and 3b size their CTAs by the row's body (fx_body_cols) */
    const long long body = fx_body_cols(cols, mode == FX_PEELED || mode == FX_YCUT, 4);

    /* Does the shape fit each path? */
    const int fits_warp = cols <= FASTEST_WARP_MAX_COLS;
    /* path 2's class by the body where the row can be peeled (fx_reg_cols) */
    const long long rcols = fx_reg_cols(cols, mode == FX_PEELED && !view_y_holes_short(ldy, rows, cols), 4);
    const int fits_block = rcols <= FASTEST_BLOCK_MAX_COLS / k->nin; /* nin arrays in the registers */
    const int reg_i = fits_block ? fx_reg_index(rcols, FX_NWARP) : -1;
    const int block_always = fits_block && fx_reg_blocks_per_sm(reg_i) >= FX_MIN_RESIDENT;
    /* A row in registers needs no question about the other paths: the
     * plan runs before every launch, and at 1024 x 512 a launch takes
     * microseconds. */
    const int rows_only = (want == FASTEST_AUTO && (fits_warp || block_always)) ||
                          (want == FASTEST_WARP && fits_warp) || (want == FASTEST_BLOCK && fits_block);
    int ccfg = 0, csize = 1, cluster_auto = 0;
    const int fits_cluster = !rows_only && (want == FASTEST_CLUSTER || want == FASTEST_AUTO) &&
                             fx_fits_cluster(k, mode, cols, body, &ccfg, &csize, &cluster_auto);
    const int fits_shared = !rows_only && k->all_paths && cols <= softmax_fastest_shared_capacity() &&
                            (want == FASTEST_SHARED || (want == FASTEST_AUTO && !block_always &&
                                                        fx_shared_blocks_per_sm(cols) >= FX_MIN_RESIDENT));
    /* Path 3b: aligned and peeled views (bulk copies move whole 16-byte
     * vectors of the rows' bodies), rows of 2 ... FX_BULK_MAX_C pieces
     * (bulk_copy.cuh). */
    int bsize = 0;
    long long bseg = 0;
    const int fits_bulk = !rows_only && k->bulk_shape && (want == FASTEST_BULK || want == FASTEST_AUTO) &&
                          (align == FX_ALIGNED || align == FX_PEELED) && softmax_fastest_has_clusters() &&
                          k->bulk_shape(DTYPE_F32, body, &bsize, &bseg);
    long long gpieces = 0, gseg = 0;
    if (!rows_only) fx_grid_shape(rows, cols, sizeof(float), k->nin, &gpieces, &gseg);
    const int fits_grid = !rows_only && (want == FASTEST_GRID || want == FASTEST_AUTO) &&
                          gpieces <= k->grid_resident(mode);

    fastest_path path = want;
    if ((want == FASTEST_WARP && !fits_warp) || (want == FASTEST_BLOCK && !fits_block) ||
        (want == FASTEST_CLUSTER && !fits_cluster) || (want == FASTEST_SHARED && !fits_shared) ||
        (want == FASTEST_GRID && !fits_grid) || (want == FASTEST_BULK && !fits_bulk) || want <= FASTEST_AUTO ||
        want >= FASTEST_NPATHS)
        path = FASTEST_AUTO;

    if (path == FASTEST_AUTO) {
        /* The dispatcher (lessons/08_fastest/README.md, "The dispatcher"). */
        if (fits_warp) path = FASTEST_WARP;
        else if (block_always) path = FASTEST_BLOCK;
        /* Where path 2 holds fewer blocks an SM, an operation may ask for
         * path 3b first (fx_op_kernels.bulk_before_block). */
        else if (k->bulk_before_block && fits_bulk && rows * bsize >= sms / 2) path = FASTEST_BULK;
        /* Rows of 16K-32K floats: path 2 beats path 3 from M = SMs/4 up
         * (N = 32768, M = 132: 88.7-90.3 % of copy against 78.6-78.8 %,
         * H100). Below, the two tie and the rules further down decide
         * (docs/experiments/rows-dispatcher.md). */
        else if (fits_block && rows >= sms / 4) path = FASTEST_BLOCK;
        /* The copy engine loads the piece where the view allows it: 96.2 %
         * of copy at N = 2^16 float32 against path 3's 94.1 %, H100
         * (rows-bulk-path.md), rows of 8 pieces included (512 x 131072 on
         * the H200: 0.935 of path 3's time). */
        else if (fits_bulk && rows * bsize >= sms / 2) path = FASTEST_BULK;
        else if (cluster_auto && rows * csize >= sms / 2) path = FASTEST_CLUSTER;
        else if (fits_shared && rows >= sms / 2) path = FASTEST_SHARED;
        else if (fits_grid) path = FASTEST_GRID;
        else path = FASTEST_SPLIT;
    }
    p.path = path;
    /* Not rows that path 3b took in path 2's place (measured against path 2
     * there; the held class was measured against path 3b on longer rows). */
    const int bulk_first = path == FASTEST_BULK && k->bulk_before_block && fits_block;
    if (!bulk_first && fx_plan_held_f32(&p, k, want, rows, cols, align)) return p;
    if (path != FASTEST_CLUSTER && path != FASTEST_GRID && mode == FX_YCUT) mode = FX_SCALAR;

    switch (path) {
    case FASTEST_WARP:
    case FASTEST_BLOCK: {
        const int i = fx_reg_index(path == FASTEST_WARP ? cols : rcols, path == FASTEST_WARP ? 0 : FX_NWARP);
        if (mode == FX_PEELED && FX_REG[i].tpr < 8) mode = FX_SCALAR; /* 6 extras need 6 threads */
        if (mode == FX_PEELED && view_y_holes_short(ldy, rows, cols)) mode = FX_SCALAR; /* lesson 5's rule */
        p.threads_per_row = FX_REG[i].tpr;
        p.floats_per_thread = FX_REG[i].fpt;
        p.block = FX_REG[i].block;
        break;
    }
    case FASTEST_SHARED:
        p.threads_per_row = p.block = FX_SHARED_BLOCK;
        p.smem_bytes = cols * (long long)sizeof(float);
        break;
    case FASTEST_CLUSTER: {
        p.block = p.threads_per_row = FX_CL[ccfg].block;
        p.floats_per_thread = FX_CL[ccfg].fpt;
        p.cluster = csize;
        long long seg = (body + csize - 1) / csize;
        p.segment = (seg + 3) / 4 * 4; /* whole float4s: every CTA starts 16-byte aligned */
        p.smem_bytes = fx_cluster_smem(ccfg, p.segment, sizeof(float));
        break;
    }
    case FASTEST_BULK: fx_bulk_plan(&p, bsize, bseg, sizeof(float)); break;
    case FASTEST_GRID:
        p.block = p.threads_per_row = FX_GRID_BLOCK;
        p.floats_per_thread = FX_GRID_FPT;
        p.splits = gpieces;
        p.segment = gseg;
        p.smem_bytes = fx_grid_smem(gseg, sizeof(float), k->nin);
        break;
    default: fx_split_plan(&p, k, rows, cols); break;
    }
    if (k->reads_only) p.bytes_per_elem = 4.0; /* one read, nothing written */
    p.vec4 = mode != FX_SCALAR;
    p.peel = mode == FX_PEELED || mode == FX_YCUT;
    p.x32 = mode == FX_YCUT;
    return p;
}

int fx_plan_mode(const fastest_plan *p)
{
    if (p->x32) return FX_YCUT;
    return p->peel ? FX_PEELED : (p->vec4 ? FX_ALIGNED : FX_SCALAR);
}

fastest_plan fx_run_f32(fastest_path want, const float *x, long long ldx, float *y, long long ldy, long long rows,
                        long long cols, cudaStream_t stream)
{
    if (rows > 1 && (ldx < cols || ldy < cols)) {
        fprintf(stderr, "softmax_fastest: row strides ldx = %lld, ldy = %lld must be >= cols = %lld\n", ldx,
                ldy, cols);
        exit(2); /* a usage error, as every bad argument in the course */
    }
    const fastest_plan p = fx_plan_f32(want, x, ldx, y, ldy, rows, cols);
    if (rows < 1 || cols < 1) return p; /* nothing to do; a 0-block grid is an error */

    switch (p.path) {
    case FASTEST_WARP:
    case FASTEST_BLOCK: fx_run_rows(&p, x, ldx, y, ldy, rows, cols, stream); break;
    case FASTEST_SHARED: fx_run_shared(&p, x, ldx, y, ldy, rows, cols, stream); break;
    case FASTEST_CLUSTER: fx_run_cluster(&p, x, ldx, y, ldy, rows, cols, stream); break;
    case FASTEST_BULK: fx_run_bulk(&p, DTYPE_F32, x, ldx, y, ldy, rows, cols, stream); break;
    case FASTEST_GRID: fx_run_grid(&p, x, ldx, y, ldy, rows, cols, stream); break;
    default: fx_run_split(&p, x, ldx, y, ldy, rows, cols, stream); break;
    }
    return p;
}
