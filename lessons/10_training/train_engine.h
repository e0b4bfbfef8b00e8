/* Lesson 10: what its operations share on the row engine: the loss's workspace, the paths they ask, small launches. */
#ifndef LESSON10_TRAIN_ENGINE_H
#define LESSON10_TRAIN_ENGINE_H
#include <stddef.h>
#include <stdint.h>

#include "training.h" /* and through it the row engine's paths and plans (device/rows.h) */

/* The workspace and the counters (train_work.cu): grown on demand and kept, so the timed runs allocate
 * nothing; every kernel leaves the counters at 0, so no launch needs a memset. */
void *train_workspace(size_t bytes);
unsigned *train_sync_counters(long long count);

/* The path an operation asks of the engine: 1 or 2 up to TRAIN_REG_MAX_COLS, then what train_set_long_rows says. */
fastest_path train_engine_want(long long cols);

/* Each operation's plan for contiguous aligned rows (train_plan), made at TRAIN_PLAN_ADDR, never dereferenced. */
#define TRAIN_PLAN_ADDR ((const float *)(uintptr_t)256)
fastest_plan log_softmax_plan_at(long long rows, long long cols);
fastest_plan backward_plan_at(long long rows, long long cols);
fastest_plan loss_plan_at(long long rows, long long cols);
fastest_plan classifier_plan_at(long long rows, long long cols, dtype t);
fastest_plan classifier_plan16(const void *x, long long rows, long long cols, dtype t); /* any t, rows at x */

/* The mean's count of rows not ignored and their dloss, 1 / count (inf if all are ignored: none uses it). */
typedef struct {
    unsigned count;
    float dloss;
} classifier_scale;

/* The most blocks of the small launches; of paths 1 and 2 that finish the reduced loss themselves; the most rows
 * on chip that do; the rows that finish it through the loss slots, 16 KB after the two counters (classifier.cuh). */
#define CLS_MAX_PARTS 1024
#define CLS_MAX_BLOCKS 4096
#define CLS_ON_CHIP_FINISH_ROWS 2048
#define CLS_SLOT_ROWS 2048
static_assert(CLS_ON_CHIP_FINISH_ROWS <= CLS_SLOT_ROWS, "a slot for every row that finishes in the kernel");

#endif
