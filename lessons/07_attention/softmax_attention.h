/* Lesson 7: the softmax of attention scores. Lesson 5's fused row (read
 * once, kept on chip, written once) with what attention adds to it:
 *
 *   scaled    y = softmax(x * scale), scale = 1/sqrt(head_dim) in attention;
 *   masked    positions a mask removes are -inf before the max: a byte mask
 *             (nonzero = keep) or an additive float mask (0 keeps, -inf
 *             removes, anything else is a bias), full [rows, cols] or one
 *             [S, S] mask broadcast over a batch of heads;
 *   causal    query q sees keys k <= q, with no mask tensor at all: the
 *             kernel reads only the first q + 1 scores of row q, and writes
 *             zeros over the rest.
 *
 * Rows whose every position is masked (or -inf) give ZEROS, not NaN: the
 * policy of attention kernels, where torch.softmax gives NaN (README.md,
 * "Fully masked rows"). A row holding NaN in a kept position still gives
 * NaN everywhere.
 *
 * All pointers are device pointers; x (rows x cols scores) and y (rows x
 * cols probabilities) are contiguous and must not overlap. scale must be
 * positive and finite. */
#ifndef LESSON07_SOFTMAX_ATTENTION_H
#define LESSON07_SOFTMAX_ATTENTION_H
#include <cuda_runtime.h>

/* What turns a row of scores into the values that are softmaxed. */
typedef enum {
    ATTN_SCALED = 0, /* x * scale                                           */
    ATTN_BYTE_MASK,  /* keep[j] ? x * scale : -inf                         */
    ATTN_ADD_MASK,   /* x * scale + bias[j]                                */
    ATTN_CAUSAL      /* j <= q ? x * scale : -inf, q = row % cols           */
} attn_kind;

typedef struct {
    attn_kind kind;
    float scale;               /* > 0                                        */
    const unsigned char *keep; /* ATTN_BYTE_MASK: mask_rows x cols bytes     */
    const float *bias;         /* ATTN_ADD_MASK: mask_rows x cols floats     */
    long long mask_rows;       /* row r of x uses mask row r % mask_rows:
                                  rows for a full mask, S for an [S, S] mask
                                  over rows = batch * S (cols = S)           */
} attn_spec;

/* Where the row lives (the same choice as lesson 5, less its middle path). */
typedef enum {
    ATTN_PATH_AUTO = 0,  /* registers up to ATTN_MAX_REGISTER_COLS, else online */
    ATTN_PATH_REGISTERS, /* the row in registers: 1 read + 1 write              */
    ATTN_PATH_ONLINE     /* any length: lesson 6's streaming (m, d), 2 reads    */
} attn_path;

#define ATTN_MAX_REGISTER_COLS 32768

/* The general entry point: y = softmax of the values spec describes, on
 * the path asked for (ATTN_PATH_REGISTERS on a row longer than
 * ATTN_MAX_REGISTER_COLS runs the online path). Returns the path it ran.
 * A bad spec (scale <= 0, a missing mask, mask_rows < 1) prints one line
 * and exits 1. */
attn_path softmax_attention_run(attn_path path, const attn_spec *spec, const float *x, float *y,
                                long long rows, long long cols, cudaStream_t stream);

/* The same, one function per kind, on the automatic path. */
void softmax_scaled(const float *x, float *y, long long rows, long long cols, float scale,
                    cudaStream_t stream);
void softmax_masked(const float *x, const unsigned char *keep, long long mask_rows, float *y,
                    long long rows, long long cols, float scale, cudaStream_t stream);
void softmax_additive(const float *x, const float *bias, long long mask_rows, float *y,
                      long long rows, long long cols, float scale, cudaStream_t stream);
/* rows = batch * S, cols = S: row r is query q = r % S of its head (the
 * heads' rows one after another). Only the q + 1 scores k <= q of row r
 * are read; the rest of x may hold anything, even NaN. All S outputs of
 * every row are written, zeros for k > q. */
void softmax_causal(const float *x, float *y, long long rows, long long cols, float scale,
                    cudaStream_t stream);

/* scale = 1 and no mask: the plain softmax, as the course's softmax_fn
 * (the test matrix and lesson_run use them). They differ from torch.softmax
 * only on rows of nothing but -inf, which give zeros (the policy above).
 * The second forces the online path on every row length. */
void softmax_attention_plain(const float *x, float *y, long long rows, long long cols,
                             cudaStream_t stream);
void softmax_attention_plain_online(const float *x, float *y, long long rows, long long cols,
                                    cudaStream_t stream);

/* The launch the automatic path makes for one row length (host only, no
 * GPU needed): threads per row, floats per thread (0 on the online path),
 * threads per block. */
typedef struct {
    attn_path path;
    int threads_per_row, floats_per_thread, block;
} attn_plan;
attn_plan softmax_attention_plan(attn_path want, long long cols);

const char *attn_kind_name(attn_kind k);
const char *attn_path_name(attn_path p);

#endif
