/* Lesson 10: softmax in training. The four kernels a classifier's last layer needs, forward and backward, on
 * device pointers to contiguous rows (row i of an M x N tensor at i * N), as operations of lesson 8's row engine
 * (common/device/rows.h). Special values: docs/special-values.md ("Lesson 10: the training kernels"); bytes per
 * element: the README's "The bytes and the bounds". The workspace is grown by the first call that needs it, never
 * shrunk: not for several streams or host threads at once, nor inside a CUDA graph capture (cudaMalloc). */
#ifndef LESSON10_TRAINING_H
#define LESSON10_TRAINING_H
#include <cuda_runtime.h>
#include "f16.h" /* dtype, for the 16-bit classifier */
#include "device/rows.h" /* the row engine the four kernels run on */

/* Rows up to this length are held in registers (paths 1 and 2), whatever the long-row mode. */
#define TRAIN_REG_MAX_COLS 16384

/* PyTorch's default ignore_index: a row with this target has loss 0, gradient 0, and no part in the mean. */
#define TRAIN_IGNORE_INDEX (-100)

/* dx = y * (dy - <y, dy>) per row: y = softmax(x) the forward's output, dy = dL/dy. dx may alias dy, not y. */
void softmax_backward(const float *y, const float *dy, float *dx, long long rows, long long cols,
                      cudaStream_t stream);

/* out = (x - m) - log(d), m = max(x), d = sum exp(x - m): never exp of a large number, never log of 0. */
void log_softmax_forward(const float *x, float *out, long long rows, long long cols, cudaStream_t stream);

/* loss[i] = logsumexp(x_i) - x_i[t_i] = (m - x[t]) + log(d), t_i = targets[i], in one pass over the logits;
 * 0 for the ignored rows, NaN for a target out of range (nothing is read outside the row). */
void cross_entropy_forward(const float *x, const int *targets, float *loss, long long rows, long long cols,
                           int ignore_index, cudaStream_t stream);

/* The fused classifier: the loss and its gradient in one kernel, the logits overwritten IN PLACE by it:
 *   losses[i] = logsumexp(x_i) - x_i[t_i]      (per row, as cross_entropy_forward)
 *   *loss     = sum_i losses[i]                 (TRAIN_SUM; not written for TRAIN_NONE, PyTorch's 'none')
 *             = sum_i losses[i] / count         (TRAIN_MEAN; count = rows with t_i != ignore_index)
 *   logits_i  <- (softmax(x_i) - one_hot(t_i)) * dloss_i,  dloss_i = 1 / count (MEAN) or 1 (SUM, NONE)
 * The rows' rules (ignored, out of range, every row ignored): the README's table in "The fused classifier".
 * losses: M floats; loss: 1 float (both device memory). */
typedef enum { TRAIN_MEAN = 0, TRAIN_SUM = 1, TRAIN_NONE = 2 } train_reduction;
void classifier_fused(float *logits, const int *targets, float *losses, float *loss, long long rows,
                      long long cols, int ignore_index, train_reduction reduction, cudaStream_t stream);

/* The same over 16-bit logits (t = DTYPE_F16 or DTYPE_BF16, or DTYPE_F32: classifier_fused): widened to
 * float on the load, float32 arithmetic, the gradient rounded once to t on the store, in place. */
void classifier_fused_typed(void *logits, const int *targets, float *losses, float *loss, long long rows,
                            long long cols, int ignore_index, train_reduction reduction, dtype t,
                            cudaStream_t stream);

/* Frees the workspace, this lesson's and the row engine's (the next call that needs one allocates it again). */
void train_release(void);

/* For the tests: the classifier's counters and loss slots (*count; NULL, 0 before use), left at 0 by every launch. */
const unsigned *train_sync_words(long long *count);

/* How rows longer than TRAIN_REG_MAX_COLS run: AUTO where the dispatcher puts them (the loss always split:
 * it writes none); for the tests, to reach every path, SPLIT (read twice), GRID (on chip, never in clusters),
 * CLUSTER (one-input operations in clusters loaded by the threads wherever they fit, however few the rows)
 * or BULK (the classifier's 16-bit rows in bulk-loaded clusters wherever they fit, the rest as AUTO). */
typedef enum { /* the engine's path that each asks for (train_engine_want) */
    TRAIN_LONG_AUTO = FASTEST_AUTO,
    TRAIN_LONG_SPLIT = FASTEST_SPLIT,
    TRAIN_LONG_GRID = FASTEST_GRID,
    TRAIN_LONG_CLUSTER = FASTEST_CLUSTER,
    TRAIN_LONG_BULK = FASTEST_BULK
} train_long_rows;
void train_set_long_rows(train_long_rows mode);

/* The four kernels, for the queries below. */
typedef enum { TRAIN_K_BACKWARD, TRAIN_K_LOG_SOFTMAX, TRAIN_K_LOSS, TRAIN_K_CLASSIFIER } train_kernel;

/* The row engine's plan for kernel k on contiguous aligned rows x cols in the long-row mode set now; t: the
 * classifier's storage type (the other three are float32 only, whatever t). */
fastest_plan train_plan(train_kernel k, long long rows, long long cols, dtype t);

/* That plan by name: "1 warp (rows in registers, ...)", "3 cluster (...), clusters of 4 blocks" ... */
const char *train_path_name(train_kernel k, long long rows, long long cols, dtype t);

/* Whether kernel k reads each element once (on chip; the loss always) or twice (split): the design traffic. */
int train_reads_once(train_kernel k, long long rows, long long cols, dtype t);

#endif
