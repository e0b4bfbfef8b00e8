/* Lesson 11: the collectives that join the GPUs' pieces of a row.
 *
 * Two implementations of one small interface (C: a struct of function
 * pointers):
 *   split_comm_nccl   NCCL, the library real training stacks use: one
 *                     communicator per GPU, every call enqueued on each
 *                     rank's stream inside one ncclGroupStart/End
 *                     (split_comm_nccl.c; only where NCCL was found);
 *   split_comm_local  an in-process stand-in that stages the data through
 *                     the host (split_comm_local.cu): slow, and the same
 *                     results, so that the tests and the CPU emulator check
 *                     the lesson's merge logic without NCCL or a second GPU.
 * Every call is collective: it takes all K ranks' buffers at once (one
 * process drives every GPU; README.md says why). */
#ifndef LESSON11_SPLIT_COMM_H
#define LESSON11_SPLIT_COMM_H

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most GPUs (ranks) one softmax_split call joins. */
#define SPLIT_MAX_RANKS 16

/* One rank: the GPU it runs on and the stream its work goes to. */
typedef struct {
    int device;
    cudaStream_t stream;
} split_place;

typedef enum { SPLIT_MAX = 0, SPLIT_SUM = 1 } split_op;

typedef struct split_comm split_comm;
struct split_comm {
    int ranks;
    const char *name;
    /* buf[k]: n floats on rank k; afterwards every rank holds the
     * elementwise max or sum over the ranks (in place). */
    void (*all_reduce)(split_comm *c, float *const *buf, long long n, split_op op, const split_place *at);
    /* send[k]: n floats on rank k; afterwards recv[k] (K x n floats on
     * rank k) holds rank 0's n, then rank 1's, ... on every rank. */
    void (*all_gather)(split_comm *c, float *const *send, float *const *recv, long long n, const split_place *at);
    void (*destroy)(split_comm *c);
    void *impl;
};

/* The stand-in for `ranks` ranks (any devices, the same one repeated too). */
split_comm *split_comm_local(int ranks);

/* NCCL over the given devices (distinct). When the program was built
 * without NCCL, or NCCL fails to start, prints one line saying why (and
 * how to get NCCL) and returns NULL. */
split_comm *split_comm_nccl(const int *devices, int ranks);

/* Whether this build has NCCL. */
int split_have_nccl(void);

#ifdef __cplusplus
}
#endif
#endif
