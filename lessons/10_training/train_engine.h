/* Lesson 10: what the lesson's operations share on the row engine
 * (common/device/rows_run.cuh): the workspace of the reduced loss, the
 * path each operation asks for, and the classifier's small launches
 * (classifier.cu). */
#ifndef LESSON10_TRAIN_ENGINE_H
#define LESSON10_TRAIN_ENGINE_H
#include <stddef.h>

#include "f16.h"
#include "training.h"
#include "device/rows.h" /* the row engine: its paths and plans */

/* The workspace (train_work.cu): grown on demand and kept, so the timed
 * runs allocate nothing; its counters, zeroed when allocated and left at
 * 0 by every kernel. */
void *train_workspace(size_t bytes);
unsigned *train_sync_counters(long long count);

/* The engine path the operations ask for: paths 1 and 2 up to
 * TRAIN_REG_MAX_COLS, past it what train_set_long_rows says (AUTO: the
 * dispatcher's choice; SPLIT, GRID, CLUSTER, BULK: that path where the
 * shape fits it). */
fastest_path train_engine_want(long long cols);

/* Each operation's plan at rows x cols of contiguous aligned rows (for
 * train_plan): log_softmax.cu, softmax_backward.cu, classifier.cu. */
fastest_plan log_softmax_plan_at(long long rows, long long cols);
fastest_plan backward_plan_at(long long rows, long long cols);
fastest_plan loss_plan_at(long long rows, long long cols);
fastest_plan classifier_plan_at(long long rows, long long cols, dtype t);

/* The mean's count of rows not ignored and the dloss of such a row (1 /
 * count; 0 / 0 and inf when every row is ignored: no row uses it). */
typedef struct {
    unsigned count;
    float dloss;
} classifier_scale;

/* The most blocks of the small launches, the most blocks of paths 1 and 2
 * that finish the reduced loss themselves, and the most rows on chip that
 * do (classifier.cuh). */
#define CLS_MAX_PARTS 1024
#define CLS_MAX_BLOCKS 4096
#define CLS_ON_CHIP_FINISH_ROWS 2048
/* Rows that finish the reduced loss through the loss slots (classifier.cuh,
 * ce_slot_put): 16 KB of them after the two counters. */
#define CLS_SLOT_ROWS 2048
static_assert(CLS_ON_CHIP_FINISH_ROWS <= CLS_SLOT_ROWS, "a slot for every row that finishes in the kernel");

#endif
