/* Lesson 10: the workspace of the split paths, and the row-length names. */
#include <stdio.h>

#include "check.h"
#include "train_row.cuh"

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

void train_release(void)
{
    if (work) CUDA_CHECK(cudaFree(work)); /* synchronises: no kernel still uses it */
    work = nullptr;
    work_bytes = 0;
}

const char *train_path_name(long long cols)
{
    switch (train_class(cols)) {
    case 0: return "registers, 8 lanes per row (16 rows per block)";
    case 1: return "registers, a warp per row (4 rows per block)";
    case 2: return "registers, a warp per row, 32 floats per lane";
    case 3: return "registers, a block of 128 per row";
    case 4: return "registers, a block of 256 per row";
    case 5: return "registers, a block of 512 per row";
    case 6: return "registers, a block of 1024 per row";
    default: return "split: pieces of 8192 floats, one block each, merged through a workspace";
    }
}
