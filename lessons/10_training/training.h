/* Lesson 10: softmax in training. The four kernels a classifier's last
 * layer needs, forward and backward, on device pointers to contiguous rows
 * (row i of an M x N tensor at i * N). They are operations of lesson 8's
 * row engine (common/device/rows.h), whose dispatcher picks their paths as
 * it does the softmax's: a row read once while its pieces fit on the GPU
 * at once, past that split and read twice. The workspace is allocated by
 * the first call that needs it and grown, never shrunk: not for use from
 * several streams or host threads at once, nor inside a CUDA graph
 * capture (cudaMalloc). */
#ifndef LESSON10_TRAINING_H
#define LESSON10_TRAINING_H
#include <cuda_runtime.h>
#include "f16.h" /* dtype, for the 16-bit classifier */
#include "device/rows.h" /* the row engine the four kernels run on */

/* Rows up to this length are held in registers (paths 1 and 2, whatever
 * the long-row mode). */
#define TRAIN_REG_MAX_COLS 16384

/* PyTorch's default ignore_index: a row whose target is this value has
 * loss 0 and gradient 0, and does not count for the mean. */
#define TRAIN_IGNORE_INDEX (-100)

/* ---- softmax backward ------------------------------------------------------
 * dx = y * (dy - sum_j y_j dy_j) per row, y = softmax(x) the forward's
 * output and dy the gradient of the loss with respect to y (the Jacobian
 * of softmax is diag(y) - y y^T: x is not needed). 12 bytes per element
 * on chip, 20 split. A NaN in y or dy makes its row NaN; an infinity gives
 * what the formula gives in IEEE arithmetic. dx may alias dy (each element
 * is read before it is written, by the same block), not y. */
void softmax_backward(const float *y, const float *dy, float *dx, long long rows, long long cols,
                      cudaStream_t stream);

/* ---- log-softmax forward ---------------------------------------------------
 * out = x - m - log(d), m = max(x), d = sum exp(x - m): never exp of a
 * large number, never log of 0. Special values as docs/special-values.md:
 * NaN or +inf in a row, or a row of only -inf, gives NaN everywhere; -inf
 * among finite values gives -inf; results below -FLT_MAX (x = -3e38 next
 * to 3e38) are -inf. 8 bytes per element on chip, 12 split. */
void log_softmax_forward(const float *x, float *out, long long rows, long long cols, cudaStream_t stream);

/* ---- cross-entropy loss ----------------------------------------------------
 * loss[i] = logsumexp(x_i) - x_i[t_i] = (m - x[t]) + log(d), t_i =
 * targets[i], in one pass over the logits: 4 bytes per element, for every
 * row length. loss[i] = 0 when t_i == ignore_index; NaN when t_i is out of
 * range (nothing is read outside the row). x[t] = -inf gives +inf; a row
 * of only -inf or holding NaN or +inf gives NaN. */
void cross_entropy_forward(const float *x, const int *targets, float *loss, long long rows, long long cols,
                           int ignore_index, cudaStream_t stream);

/* ---- the fused classifier --------------------------------------------------
 * The loss and its gradient in one kernel, over logits that are then
 * overwritten IN PLACE by the gradient:
 *   losses[i] = logsumexp(x_i) - x_i[t_i]      (per row, as cross_entropy_forward)
 *   *loss     = sum_i losses[i]                 (TRAIN_SUM)
 *             = sum_i losses[i] / count         (TRAIN_MEAN; count = rows with t_i != ignore_index)
 *   logits_i  <- (softmax(x_i) - one_hot(t_i)) * dloss_i,  dloss_i = 1 / count (MEAN) or 1 (SUM)
 * Ignored rows: loss 0 and gradient exactly 0 whatever their logits hold.
 * A target out of range: loss NaN and a gradient row of NaN (so *loss is
 * NaN). Every row ignored: *loss = 0 (SUM) or 0 / 0 = NaN (MEAN, as
 * PyTorch), every gradient 0. The probabilities are never written: 8
 * bytes per element on chip, 12 split; plus M targets read and M losses
 * written. losses: M floats; loss: 1 float (both device memory). */
typedef enum { TRAIN_MEAN = 0, TRAIN_SUM = 1 } train_reduction;
void classifier_fused(float *logits, const int *targets, float *losses, float *loss, long long rows,
                      long long cols, int ignore_index, train_reduction reduction, cudaStream_t stream);

/* The same over 16-bit logits (t = DTYPE_F16 or DTYPE_BF16, or DTYPE_F32,
 * which is classifier_fused): widened to float on the load, float32
 * arithmetic, the gradient rounded once to t on the store, in place.
 * 4 bytes per element on chip, 6 split. */
void classifier_fused_typed(void *logits, const int *targets, float *losses, float *loss, long long rows,
                            long long cols, int ignore_index, train_reduction reduction, dtype t,
                            cudaStream_t stream);

/* Frees the workspace, this lesson's and the row engine's (the next call
 * that needs one allocates it again). */
void train_release(void);

/* For the tests: the classifier's counters and loss slots and how many
 * (*count; NULL and 0 before a kernel needed them), which every launch
 * leaves at 0. */
const unsigned *train_sync_words(long long *count);

/* How rows longer than TRAIN_REG_MAX_COLS run: AUTO where the row
 * engine's dispatcher puts them (the loss always split: it writes none). For
 * the tests, to reach every path: SPLIT always split (read twice); GRID
 * on chip but never in clusters (the pieces meet in the workspace);
 * CLUSTER in clusters loaded by the threads wherever they fit, however few
 * the rows (one-input operations); BULK the classifier's 16-bit rows in
 * clusters loaded by bulk copies wherever they fit, the rest as AUTO. The
 * same results every way, within the tolerances of train_check.h. */
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

/* The row engine's plan for kernel k on contiguous aligned rows x cols in
 * the long-row mode set now; t: the classifier's storage type (the other
 * three are float32 only, whatever t). */
fastest_plan train_plan(train_kernel k, long long rows, long long cols, dtype t);

/* That plan by name: "1 warp (rows in registers, ...)", "3 cluster (...),
 * clusters of 4 blocks" ... */
const char *train_path_name(train_kernel k, long long rows, long long cols, dtype t);

/* Whether kernel k reads each element once (on chip; the loss always) or
 * twice (split): the design traffic that the program and the bench print. */
int train_reads_once(train_kernel k, long long rows, long long cols, dtype t);

#endif
