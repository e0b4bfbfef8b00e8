/* Lesson 10: the classifier's workspace and counters, the long-row mode, and each kernel's path. */
#include <stdio.h>

#include "check.h"
#include "train_engine.h"

/* The workspace and the counters (train_engine.h), zeroed when allocated. */
static void *work, *sync_words;
static size_t work_bytes, sync_bytes;

static void *grow(void **p, size_t *have, size_t bytes)
{
    if (bytes > *have) {
        CUDA_CHECK(cudaFree(*p)); /* synchronises: no kernel still uses it */
        CUDA_CHECK(cudaMalloc(p, bytes));
        CUDA_CHECK(cudaMemset(*p, 0, bytes));
        *have = bytes;
    }
    return *p;
}

void *train_workspace(size_t bytes) { return grow(&work, &work_bytes, bytes); }

unsigned *train_sync_counters(long long count)
{
    return (unsigned *)grow(&sync_words, &sync_bytes, (size_t)count * sizeof(unsigned));
}

const unsigned *train_sync_words(long long *count)
{
    *count = (long long)(sync_bytes / sizeof(unsigned));
    return (const unsigned *)sync_words;
}

void train_release(void)
{
    CUDA_CHECK(cudaFree(work));
    CUDA_CHECK(cudaFree(sync_words));
    work = sync_words = nullptr;
    work_bytes = sync_bytes = 0;
    softmax_fastest_release(); /* the row engine's, which the four kernels run on */
}

static train_long_rows long_mode = TRAIN_LONG_AUTO;
void train_set_long_rows(train_long_rows mode) { long_mode = mode; }

fastest_path train_engine_want(long long cols)
{
    if (cols <= TRAIN_REG_MAX_COLS) return cols <= FASTEST_WARP_MAX_COLS ? FASTEST_WARP : FASTEST_BLOCK;
    return (fastest_path)long_mode; /* BULK: 16-bit rows of the classifier; the others as AUTO */
}

fastest_plan train_plan(train_kernel k, long long rows, long long cols, dtype t)
{
    switch (k) {
    case TRAIN_K_BACKWARD: return backward_plan_at(rows, cols);
    case TRAIN_K_LOG_SOFTMAX: return log_softmax_plan_at(rows, cols);
    case TRAIN_K_LOSS: return loss_plan_at(rows, cols);
    default: return classifier_plan_at(rows, cols, t); /* the only kernel of 16-bit logits */
    }
}

/* The loss's split path reads each element once too: it writes none. */
int train_reads_once(train_kernel k, long long rows, long long cols, dtype t)
{
    return k == TRAIN_K_LOSS || train_plan(k, rows, cols, t).path != FASTEST_SPLIT;
}

const char *train_path_name(train_kernel k, long long rows, long long cols, dtype t)
{
    static char name[200];
    const fastest_plan p = train_plan(k, rows, cols, t);
    const char *path = fastest_path_name(p.path);
    if (p.path == FASTEST_CLUSTER || (p.path == FASTEST_BULK && !p.splits))
        snprintf(name, sizeof name, "path %s, clusters of %d blocks", path, p.cluster);
    else if (p.path == FASTEST_GRID || p.path == FASTEST_SPLIT || p.path == FASTEST_BULK)
        snprintf(name, sizeof name, "path %s, %lld pieces of %lld elements", path, p.splits, p.segment);
    else /* 16-bit rows of path 2 in 16-byte vectors stay in registers as loaded (fx_rows_held16) */
        snprintf(name, sizeof name, "path %s%s", path,
                 t != DTYPE_F32 && p.path == FASTEST_BLOCK && p.vec4 ? ", 16-bit rows as loaded" : "");
    return name;
}
