/* Lesson 10: the classifier's workspace and counters, the long-row mode,
 * and the paths by name. */
#include <stdio.h>

#include "check.h"
#include "train_engine.h"
#include "device/path1_2_rows.cuh" /* fx_reg_op: the register classes of an operation */

static void *work;
static size_t work_bytes;

/* Grown on demand and kept: the timed runs then allocate nothing. The
 * classifier's scale and the parts of its reduced loss (classifier.cu). */
void *train_workspace(size_t bytes)
{
    if (bytes > work_bytes) {
        if (work) CUDA_CHECK(cudaFree(work));
        CUDA_CHECK(cudaMalloc(&work, bytes));
        work_bytes = bytes;
    }
    return work;
}

/* The classifier's counters and loss slots. Zeroed once when allocated;
 * every kernel leaves them at 0, so no launch needs a memset. */
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
    softmax_fastest_release(); /* the row engine's, which the four kernels run on */
}

static train_long_rows long_mode = TRAIN_LONG_AUTO;
void train_set_long_rows(train_long_rows mode) { long_mode = mode; }

fastest_path train_engine_want(long long cols)
{
    if (cols <= TRAIN_REG_MAX_COLS) return cols <= FASTEST_WARP_MAX_COLS ? FASTEST_WARP : FASTEST_BLOCK;
    switch (long_mode) {
    case TRAIN_LONG_SPLIT: return FASTEST_SPLIT;
    case TRAIN_LONG_GRID: return FASTEST_GRID;
    case TRAIN_LONG_CLUSTER: return FASTEST_CLUSTER;
    case TRAIN_LONG_BULK: return FASTEST_BULK; /* 16-bit rows of the classifier; the others: AUTO */
    default: return FASTEST_AUTO;
    }
}

int train_reads_once(train_kernel k, long long rows, long long cols, dtype t)
{
    if (k == TRAIN_K_LOSS || cols <= TRAIN_REG_MAX_COLS) return 1;
    if (k == TRAIN_K_LOG_SOFTMAX) return log_softmax_plan_at(rows, cols).path != FASTEST_SPLIT;
    if (k == TRAIN_K_BACKWARD) return backward_plan_at(rows, cols).path != FASTEST_SPLIT;
    return classifier_plan_typed_at(rows, cols, t).path != FASTEST_SPLIT;
}

int train_cluster_size(train_kernel k, long long rows, long long cols)
{
    const fastest_plan p = k == TRAIN_K_LOG_SOFTMAX ? log_softmax_plan_at(rows, cols)
                           : k == TRAIN_K_CLASSIFIER ? classifier_plan_at(rows, cols)
                           : k == TRAIN_K_LOSS       ? loss_plan_at(rows, cols)
                                                     : backward_plan_at(rows, cols);
    return p.path == FASTEST_CLUSTER ? p.cluster : 0;
}

const char *train_engine_name(fastest_plan p, long long cols, int fpt_min, int nin, dtype t)
{
    static char name[160];
    const char *each = nin == 2 ? " of each input" : "", *elems = t == DTYPE_F32 ? "floats" : "elements";
    if (p.path == FASTEST_WARP || p.path == FASTEST_BLOCK) {
        const int i = fx_reg_index(cols, p.path == FASTEST_WARP ? 0 : FX_NWARP);
        const fx_reg_config c = fx_reg_op(fx_reg_for(i, t == DTYPE_F32 ? 4 : 8), fpt_min);
        snprintf(name, sizeof name, "registers (the row engine's path %d), %d %s per row, %d %s%s each",
                 p.path == FASTEST_WARP ? 1 : 2, c.tpr, c.tpr == 1 ? "lane" : c.tpr < 32 ? "lanes" : "threads", c.fpt,
                 elems, each);
    } else if (p.path == FASTEST_CLUSTER || p.path == FASTEST_BULK) {
        snprintf(name, sizeof name, "the row engine's path %s: clusters of %d blocks, pieces of %lld %s%s",
                 p.path == FASTEST_BULK ? "3b" : "3", p.cluster, p.segment, elems,
                 p.path == FASTEST_BULK ? " loaded by bulk copies" : "");
    } else {
        snprintf(name, sizeof name, "the row engine's path %s: %lld pieces of %lld %s%s",
                 p.path == FASTEST_GRID ? "3g" : "4", p.splits, p.segment, elems, each);
    }
    return name;
}

const char *train_path_name_typed(train_kernel k, long long rows, long long cols, dtype t)
{
    if (k == TRAIN_K_LOG_SOFTMAX) return log_softmax_path_name(rows, cols);
    if (k == TRAIN_K_BACKWARD) return backward_path_name(rows, cols);
    if (k == TRAIN_K_LOSS) return loss_path_name(rows, cols);
    return classifier_path_name(rows, cols, t); /* the only kernel of 16-bit logits */
}

const char *train_path_name(train_kernel k, long long rows, long long cols)
{
    return train_path_name_typed(k, rows, cols, DTYPE_F32);
}
