/* Lesson 11: softmax across GPUs (the online-softmax tutorial's merge of (m, d) states, over
 * NCCL).
 *
 * Each of K GPUs (ranks) holds columns [split_begin(N, k, K),
 * split_begin(N, k + 1, K)) of every row, as a rows x n matrix of its own
 * (row stride n), the way a tensor-parallel language-model head holds its
 * slice of the vocabulary. No GPU holds a whole row. Each computes the
 * (m, d) of its slice of every row, the states are combined across the
 * GPUs, and each writes its slice of y = exp(x - M) / D. */
#ifndef LESSON11_SPLIT_SOFTMAX_H
#define LESSON11_SPLIT_SOFTMAX_H

#include <cuda_runtime.h>
#include "split_comm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* First column of rank k's slice: floor(k N / K). Any N and K: the
 * slices differ by at most one column, and a rank may hold none (N < K). */
long long split_begin(long long cols, int k, int ranks);

typedef enum {
    SPLIT_ALL_REDUCE = 0, /* all-reduce the max, then all-reduce d exp(m - M): two collectives of M floats */
    SPLIT_ALL_GATHER = 1  /* all-gather the (m, d) pairs, merge them on every GPU: one collective of 2 M floats */
} split_method;

/* Rank k's share: x and y hold rows x n floats (row stride n) on
 * at.device; n = split_begin(N, k + 1, K) - split_begin(N, k, K). */
typedef struct {
    split_place at;
    const float *x;
    float *y;
    long long n;
} split_rank;

/* y = softmax of every whole row, each rank writing its slice, enqueued on
 * the ranks' streams (the stand-in synchronises them). The ranks' work
 * buffers are allocated on first use and kept; split_release frees them. */
void softmax_split(const split_rank *ranks, int nranks, long long rows, split_method how, split_comm *comm);

/* The cross-entropy loss of each row over the split vocabulary (lesson
 * 10's): losses[r] = (M - x[t]) + log D for t = targets[r], a column of the
 * whole row; 0 when t == ignore_index, NaN when t is outside [0, cols).
 * targets[k] and losses[k]: `rows` ints and floats on rank k's device;
 * every rank gets every row's loss. y is not written (split_rank.y unused). */
void cross_entropy_split(const split_rank *ranks, int nranks, long long rows, long long cols,
                         const int *const *targets, int ignore_index, float *const *losses, split_method how,
                         split_comm *comm);

/* Time spent in the collectives of the last softmax_split call, in ms, as
 * CUDA events on rank 0's stream measured it (call after synchronising). */
float split_last_comm_ms(void);

void split_release(void);

#ifdef __cplusplus
}
#endif
#endif
