/* What the timing (common/timing.cu) shares with the lesson harness
 * (common/harness.cu), which checks a kernel once before timing it the
 * same way: the job being timed. The timing calls that programs use are
 * declared in harness.h. */
#ifndef COMMON_TIMING_H
#define COMMON_TIMING_H

#include "harness.h"

/* What is being timed: a float32 kernel, a typed one or the copy, on
 * buffer set `set`. */
typedef struct {
    softmax_fn fn;         /* a float32 kernel, or NULL                      */
    softmax_typed_fn tfn;  /* a typed kernel, or NULL; both NULL: the copy   */
    dtype t;               /* storage type of x and y                        */
    void **x, **y;         /* one pointer per buffer set                     */
    long long rows, cols;
    int read_only;         /* with fn and tfn NULL: read_pass of x into y, not the copy */
} job;

static inline size_t job_bytes(const job *j) { return (size_t)j->rows * (size_t)j->cols * (size_t)dtype_size(j->t); }

/* One run of job j on buffer set `set`, on the default stream. */
void job_launch(const job *j, int set);

/* `warmup` untimed runs of j, then `iters` timed ones over `sets` buffer
 * sets, held behind the queue (timing.cu): median, min and max. */
timing time_job(const job *j, int sets, int warmup, int iters);

#endif
