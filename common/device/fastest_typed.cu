/* Taught in lesson 8. The row engine's dispatcher for any storage type: the
 * entry lessons 8 and 9 call (fx_run_typed, rows.h). float32 is fx_run_f32
 * (rows_plan.cu).
 * For float16 and bfloat16 the kernels are the same templates with
 * T = __half or __nv_bfloat16 (fastest_device.cuh, "storage types"): the
 * registers hold widened floats, so the register paths' capacity in
 * elements is float's, and the path is chosen as for a float row of the
 * same shape (fx_plan_f32, asked about an aligned float view of
 * rows x cols). Every path takes 16-bit rows. Paths 3 and 3g keep the
 * shared-memory part of a piece in 16 bits, so their CTAs hold 1.75x a
 * float CTA's elements (fx_cl_cap, fx_grid_cap) and are sized by that.
 * Otherwise the 16-bit plan differs from the float plan only where the
 * 16-bit kernels' occupancy does: path 3 becomes 3g where the 16-bit
 * clusters do not fit the GPU, 3g becomes 4 where a row's 16-bit CTAs
 * cannot all be resident; and aligned rows that nearly fill 2 ... 16
 * pieces of 16384 take path 3's held class (path3_held.cuh).
 * Accesses: 16-byte vectors of 8 elements when both views' rows start
 * 16-byte aligned and N is a multiple of 8; the same with 0-7 head and
 * tail elements peeled off when each row of x starts where the same row
 * of y does (lesson 5's view16_row_cut; paths 1 and 2 need 16 threads a
 * row for the 14 extras); one element per access otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "fastest_paths.h"
#include "view_cut.cuh" /* lesson 5's view16_can_peel */

/* Rows of a 16-bit view that all start 16-byte aligned and hold whole
 * 8-element vectors. */
static int fx_vec16(const void *x, long long ldx, const void *y, long long ldy, long long rows, long long cols)
{
    const uintptr_t ax = (uintptr_t)x, ay = (uintptr_t)y;
    const long long sx = rows > 1 ? ldx : 0, sy = rows > 1 ? ldy : 0; /* one row: its stride is never used */
    return ax % 16 == 0 && ay % 16 == 0 && cols % 8 == 0 && sx % 8 == 0 && sy % 8 == 0;
}

static int fx_takes_16(fastest_path p) { return p > FASTEST_AUTO && p < FASTEST_NPATHS; }

fastest_plan fx_plan_typed(fastest_path want, dtype t, const void *x, long long ldx, const void *y, long long ldy,
                           long long rows, long long cols)
{
    return fx_plan_typed_for(&FX_SOFTMAX_KERNELS, want, t, x, ldx, y, ldy, rows, cols);
}

/* An operation's plan asks its own kernels (fx_op_kernels): their
 * occupancy, and whether it has path 3b. */
fastest_plan fx_plan_typed_for(const fx_op_kernels *k, fastest_path want, dtype t, const void *x, long long ldx,
                               const void *y, long long ldy, long long rows, long long cols)
{
    if (t == DTYPE_F32)
        return fx_plan_f32_for(k, want, (const float *)x, ldx, (const float *)y, ldy, rows, cols);
    if (cols < 1) cols = 1;
    if (rows < 1) rows = 1;
    int mode16 = fx_vec16(x, ldx, y, ldy, rows, cols)       ? 1
                 : view16_can_peel(x, ldx, y, ldy, rows) ? 2
                                                         : 0;
    const long long body = fx_body_cols(cols, mode16 == 2, 8); /* paths 3 and 3b size their CTAs by it */
    /* The float plan of an aligned view of this shape (its rows rounded up
     * to whole float4s) picks the path. */
    const float *a = (const float *)(uintptr_t)256;
    const long long ld = (cols + 3) / 4 * 4;
    const fastest_path fw = fx_takes_16(want) ? want : FASTEST_AUTO;
    fastest_path path = fx_plan_f32_for(k, fw, a, ld, a, ld, rows, ld).path;

    fastest_plan p = {};
    long long pieces = 0, seg = 0;
    int ccfg = 0, csize = 1;
    /* Path 3b holds twice the 16-bit elements in the same bytes: clusters
     * of up to 8 CTAs of 32768 (2^18), then as many CTAs as the GPU holds
     * at once, meeting through global memory; where the float plan takes
     * a long-row path (3, 3b, 3g), or when forced. It beats paths 3 and 3g
     * on every 16-bit row it holds: 89.8 % of the 16-bit copy at N = 2^17
     * float16 against 79.9 %, H100 (docs/experiments/rows-bulk-path.md). */
    int bsize = 0;
    long long bseg = 0;
    const int bulk16 = mode16 != 0 && k->bulk_shape && softmax_fastest_has_clusters() &&
                       k->bulk_shape(t, body, &bsize, &bseg);
    if (want == FASTEST_BULK && !bulk16) /* forced where it does not fit: the dispatcher's choice */
        path = fx_plan_f32_for(k, FASTEST_AUTO, a, ld, a, ld, rows, ld).path;
    const int long_row = path == FASTEST_CLUSTER || path == FASTEST_GRID || path == FASTEST_BULK;
    if (bulk16 && (want == FASTEST_BULK || (want == FASTEST_AUTO && long_row && rows * bsize >= fx_sms() / 2)))
        path = FASTEST_BULK;
    else if (path == FASTEST_BULK)
        path = FASTEST_CLUSTER; /* the float plan's 3b, for a 16-bit view it cannot take */
    /* Path 3's held class (path3_held.cuh): rows that nearly fill 2 ... 16
     * pieces of 16384 elements (fx_held_shape; a peeled row by its body:
     * 1024 x 128257 in 0.938-0.947 of the replaced path's time, H200),
     * where DRAM outpaces path 3b's CTAs (softmax_fastest_held_dram), or
     * where path 3 is forced. It also takes the rows of 30720 ... 32768
     * that path 2 would: 2048 x 32768 ran in 0.980-0.985 of path 2's time
     * (H200). */
    int hsize = 0, hitems = 0;
    long long hseg = 0;
    const int held = mode16 != 0 && k->held_shape && softmax_fastest_has_clusters() &&
                     k->held_shape(t, mode16 == 2 ? body : cols, mode16 == 2, &hsize, &hseg, &hitems) &&
                     fx_held_wanted(want, rows, hsize);
    if (held) path = FASTEST_CLUSTER;
    /* Path 3's 16-bit CTAs hold 1.75x the elements (fx_cl_cap): the
     * cluster is sized by them, and left for 3g below float's fill. */
    if (path == FASTEST_CLUSTER && !held &&
        (!k->cluster_shape16(t, mode16, body, &ccfg, &csize) ||
         (want != FASTEST_CLUSTER && body * 100 < csize * fx_cl_cap(ccfg, 2) * FX_CLUSTER_MIN_FILL)))
        path = FASTEST_GRID;
    if (path == FASTEST_GRID) {
        fx_grid_shape(rows, cols, 2, 1, &pieces, &seg);
        if (mode16) { /* pieces of whole 8-element vectors */
            seg = (seg + 7) / 8 * 8;
            pieces = (cols + seg - 1) / seg;
        }
        /* Every CTA of a row resident at once, with the 16-bit kernel's
         * own occupancy. */
        if (pieces > k->grid_resident16(t, mode16)) path = FASTEST_SPLIT;
    }
    p.path = path;
    p.bytes_per_elem = 2.0 * dtype_size(t);
    switch (path) {
    case FASTEST_WARP:
    case FASTEST_BLOCK: {
        const int i = fx_reg_index(cols, path == FASTEST_WARP ? 0 : FX_NWARP);
        if (mode16 == 2 && fx_reg_for(i, 8).tpr < VIEW16_MAX_EXTRAS) mode16 = 0; /* one extra per thread */
        const fx_reg_config C = fx_reg_for(i, mode16 ? 8 : 1);
        p.threads_per_row = C.tpr;
        p.floats_per_thread = C.fpt;
        p.block = C.block;
        break;
    }
    case FASTEST_SHARED: /* the row widened: float's bytes of shared memory */
        p.threads_per_row = p.block = FX_SHARED_BLOCK;
        p.smem_bytes = cols * (long long)sizeof(float);
        break;
    case FASTEST_CLUSTER: {
        if (held) {
            fx_held_plan(&p, hsize, hseg, hitems * 8); /* 16-bit elements, as loaded */
            break;
        }
        const int c = csize; /* sized by the row and the 16-bit CTAs' capacity (fx_cluster_shape_16) */
        p.block = p.threads_per_row = FX_CL[ccfg].block;
        p.floats_per_thread = FX_CL[ccfg].fpt;
        p.cluster = c;
        p.segment = ((body + c - 1) / c + 7) / 8 * 8; /* whole 8-element vectors: every CTA 16-byte aligned */
        p.smem_bytes = fx_cluster_smem(ccfg, p.segment, 2);
        break;
    }
    case FASTEST_BULK: fx_bulk_plan(&p, bsize, bseg, dtype_size(t)); break;
    case FASTEST_GRID:
        p.block = p.threads_per_row = FX_GRID_BLOCK;
        p.floats_per_thread = FX_GRID_FPT;
        p.splits = pieces;
        p.segment = seg;
        p.smem_bytes = fx_grid_smem(seg, 2, 1);
        break;
    default:
        p.path = FASTEST_SPLIT;
        p.block = FX_SPLIT_BLOCK;
        fx_split_shape(rows, cols, &p.splits, &p.segment); /* pieces of 64 elements: 16-byte aligned */
        p.bytes_per_elem = 3.0 * dtype_size(t);
        break;
    }
    p.vec4 = mode16 != 0;
    p.peel = mode16 == 2;
    return p;
}

fastest_plan fx_run_typed(fastest_path want, dtype t, const void *x, long long ldx, void *y, long long ldy,
                          long long rows, long long cols, cudaStream_t stream)
{
    if (t != DTYPE_F32 && t != DTYPE_F16 && t != DTYPE_BF16) {
        fprintf(stderr, "softmax_fastest: unknown storage type %d\n", (int)t);
        exit(2);
    }
    if (t == DTYPE_F32) return fx_run_f32(want, (const float *)x, ldx, (float *)y, ldy, rows, cols, stream);
    if (rows > 1 && (ldx < cols || ldy < cols)) {
        fprintf(stderr, "softmax_fastest: row strides ldx = %lld, ldy = %lld must be >= cols = %lld\n", ldx, ldy,
                cols);
        exit(2);
    }
    const fastest_plan p = fx_plan_typed(want, t, x, ldx, y, ldy, rows, cols);
    if (rows < 1 || cols < 1) return p; /* nothing to do; a 0-block grid is an error */
    switch (p.path) {
    case FASTEST_WARP:
    case FASTEST_BLOCK: fx_run_rows_16(&p, t, x, ldx, y, ldy, rows, cols, stream); break;
    case FASTEST_SHARED: fx_run_shared_16(&p, t, x, ldx, y, ldy, rows, cols, stream); break;
    case FASTEST_CLUSTER: fx_run_cluster_16(&p, t, x, ldx, y, ldy, rows, cols, stream); break;
    case FASTEST_BULK: fx_run_bulk(&p, t, x, ldx, y, ldy, rows, cols, stream); break;
    case FASTEST_GRID: fx_run_grid_16(&p, t, x, ldx, y, ldy, rows, cols, stream); break;
    default: fx_run_split_16(&p, t, x, ldx, y, ldy, rows, cols, stream); break;
    }
    return p;
}
