/* Lesson 10: the workspace of the long rows' paths, their counters, and
 * the row-length names. */
#include <stdio.h>

#include "check.h"
#include "train_grid.cuh"
#include "device/bulk_copy.cuh" /* FX_BULK_MAX_C: the largest bulk-loaded cluster */
#include "device/path1_2_rows.cuh" /* fx_reg_op: the register classes of an operation */

static void *work;
static size_t work_bytes;

/* Grown on demand and kept: the timed runs then allocate nothing. Only
 * rows longer than TRAIN_REG_MAX_COLS (and the classifier's row count)
 * need it: (rows x pieces) states of 8 bytes, plus M floats. */
void *train_workspace(size_t bytes)
{
    if (bytes > work_bytes) {
        if (work) CUDA_CHECK(cudaFree(work));
        CUDA_CHECK(cudaMalloc(&work, bytes));
        work_bytes = bytes;
    }
    return work;
}

/* The on-chip path's counters: a ticket and one per row of a launch.
 * Zeroed once when allocated; every kernel leaves them at 0 (lesson 8's
 * common/device/path3g_grid.cu says how), so no launch needs a memset. */
static unsigned *sync_words;
static long long sync_count;

unsigned *train_sync_counters(long long count)
{
    if (count > sync_count) {
        if (sync_words) CUDA_CHECK(cudaFree(sync_words));
        CUDA_CHECK(cudaMalloc(&sync_words, (size_t)count * sizeof(unsigned)));
        CUDA_CHECK(cudaMemset(sync_words, 0, (size_t)count * sizeof(unsigned)));
        sync_count = count;
    }
    return sync_words;
}

const unsigned *train_sync_words(long long *count)
{
    *count = sync_count;
    return sync_words;
}

void train_release(void)
{
    if (work) CUDA_CHECK(cudaFree(work)); /* synchronises: no kernel still uses it */
    work = nullptr;
    work_bytes = 0;
    if (sync_words) CUDA_CHECK(cudaFree(sync_words));
    sync_words = nullptr;
    sync_count = 0;
    softmax_fastest_release(); /* the row engine's, which log-softmax and the backward use */
}

/* Asked once per kernel: its registers, so its occupancy, are its own. */
long long train_grid_resident(const void *k)
{
    static const void *keys[64];
    static long long values[64];
    static int n;
    for (int i = 0; i < n; i++)
        if (keys[i] == k) return values[i];
    int per_sm = 0;
    /* 48 KB of dynamic shared memory plus the kernel's static arrays is
     * above what a block gets without opting in */
    CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, TRAIN_GRID_SMEM));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, TRAIN_GRID_BLOCK, TRAIN_GRID_SMEM));
    const long long r = (long long)per_sm * device_sms();
    if (n < 64) {
        keys[n] = k;
        values[n++] = r;
    }
    return r;
}

static train_long_rows long_mode = TRAIN_LONG_AUTO;
void train_set_long_rows(train_long_rows mode) { long_mode = mode; }
int train_long_on_chip(void) { return long_mode != TRAIN_LONG_SPLIT; }
int train_long_auto(void) { return long_mode == TRAIN_LONG_AUTO; }

fastest_path train_engine_want(long long cols)
{
    if (cols <= TRAIN_REG_MAX_COLS) return cols <= FASTEST_WARP_MAX_COLS ? FASTEST_WARP : FASTEST_BLOCK;
    switch (long_mode) {
    case TRAIN_LONG_SPLIT: return FASTEST_SPLIT;
    case TRAIN_LONG_GRID: return FASTEST_GRID;
    case TRAIN_LONG_CLUSTER: return FASTEST_CLUSTER;
    default: return FASTEST_AUTO;
    }
}

/* A kernel of this file's build, for the target the GPU runs. */
__global__ void train_target_probe(void) {}

static int train_has_clusters(void)
{
    static int has = -1;
    if (has < 0) has = fx_can_launch_clusters((const void *)train_target_probe);
    return has;
}

int train_long_bulk(void)
{
    if (long_mode == TRAIN_LONG_AUTO) return train_has_clusters();
    return long_mode == TRAIN_LONG_BULK && train_has_clusters() ? 2 : 0;
}

int train_reads_once(train_kernel k, long long rows, long long cols, dtype t)
{
    if (k == TRAIN_K_LOSS || cols <= TRAIN_REG_MAX_COLS) return 1;
    if (k == TRAIN_K_LOG_SOFTMAX) return log_softmax_plan_at(rows, cols).path != FASTEST_SPLIT;
    if (k == TRAIN_K_BACKWARD) return backward_plan_at(rows, cols).path != FASTEST_SPLIT;
    if (t == DTYPE_F32) return classifier_plan_at(rows, cols).path != FASTEST_SPLIT;
    if (!train_long_on_chip() || rows <= 0) return 0;
    return classifier_on_chip(rows, cols, t) != 0;
}

int train_cluster_size(train_kernel k, long long rows, long long cols)
{
    const fastest_plan p = k == TRAIN_K_LOG_SOFTMAX ? log_softmax_plan_at(rows, cols)
                           : k == TRAIN_K_CLASSIFIER ? classifier_plan_at(rows, cols)
                           : k == TRAIN_K_LOSS       ? loss_plan_at(rows, cols)
                                                     : backward_plan_at(rows, cols);
    return p.path == FASTEST_CLUSTER ? p.cluster : 0;
}

const char *train_engine_name(fastest_plan p, long long cols, int fpt_min, int nin)
{
    static char name[160];
    const char *each = nin == 2 ? " of each input" : "";
    if (p.path == FASTEST_WARP || p.path == FASTEST_BLOCK) {
        const fx_reg_config c = fx_reg_op(fx_reg_for(fx_reg_index(cols, p.path == FASTEST_WARP ? 0 : FX_NWARP), 4),
                                          fpt_min);
        snprintf(name, sizeof name, "registers (the row engine's path %d), %d %s per row, %d floats%s each",
                 p.path == FASTEST_WARP ? 1 : 2, c.tpr, c.tpr == 1 ? "lane" : c.tpr < 32 ? "lanes" : "threads", c.fpt,
                 each);
    } else if (p.path == FASTEST_CLUSTER) {
        snprintf(name, sizeof name, "the row engine's path 3: clusters of %d blocks, pieces of %lld floats", p.cluster,
                 p.segment);
    } else {
        snprintf(name, sizeof name, "the row engine's path %s: %lld pieces of %lld floats%s",
                 p.path == FASTEST_GRID ? "3g" : "4", p.splits, p.segment, each);
    }
    return name;
}

const char *train_path_name_typed(train_kernel k, long long rows, long long cols, dtype t)
{
    static char name[128];
    if (k != TRAIN_K_CLASSIFIER) t = DTYPE_F32; /* the other kernels are float32 only */
    if (k == TRAIN_K_LOG_SOFTMAX) return log_softmax_path_name(rows, cols);
    if (k == TRAIN_K_BACKWARD) return backward_path_name(rows, cols);
    if (k == TRAIN_K_LOSS) return loss_path_name(rows, cols);
    if (t == DTYPE_F32) return classifier_path_name(rows, cols);
    const char *own = k == TRAIN_K_CLASSIFIER ? classifier_path16(rows, cols, t) : NULL;
    if (own) return own;
    const char *elems = t == DTYPE_F32 ? "floats" : "elements";
    const int on_chip = k == TRAIN_K_CLASSIFIER ? classifier_on_chip(rows, cols, t) : 0; /* from 8193 floats */
    const int bulk = k == TRAIN_K_CLASSIFIER ? classifier_bulk_size(rows, cols, t) : 0;
    if (bulk) {
        const long long seg = classifier_bulk_seg(cols, bulk, t);
        if (bulk == 1)
            snprintf(name, sizeof name, "on chip, one block per row, its %lld %s loaded by bulk copies", cols, elems);
        else if (bulk > FX_BULK_MAX_C)
            snprintf(name, sizeof name,
                     "on chip across %d blocks: pieces of %lld %s loaded by bulk copies, states met in a workspace", bulk,
                     seg, elems);
        else
            snprintf(name, sizeof name, "on chip in clusters of %d blocks: pieces of %lld %s loaded by bulk copies",
                     bulk, seg, elems);
        return name;
    }
    if (on_chip) {
        snprintf(name, sizeof name, "on chip across blocks: pieces of up to %lld %s, states met in a workspace",
                 (long long)TRAIN_GRID_BLOCK * TRAIN_GRID_FPT + TRAIN_GRID_SMEM / (long long)dtype_size(t), elems);
        return name;
    }
    switch (train_class(cols)) {
#define TRAIN_CLASS_NAME(c, maxc, fpt, tpr, block)                                                            \
    case c:                                                                                                   \
        snprintf(name, sizeof name, "registers, %d %s per row, %d %s each", tpr, tpr < 32 ? "lanes" : "threads", fpt, elems); \
        return name;
        TRAIN_CLASSES(TRAIN_CLASS_NAME)
#undef TRAIN_CLASS_NAME
    default:
        if (k == TRAIN_K_LOSS) return "pieces of 32768 floats, their states merged by a second kernel: read once";
        snprintf(name, sizeof name, "split: pieces of 32768 %s, one block each, read twice", elems);
        return name;
    }
}

const char *train_path_name(train_kernel k, long long rows, long long cols)
{
    return train_path_name_typed(k, rows, cols, DTYPE_F32);
}
