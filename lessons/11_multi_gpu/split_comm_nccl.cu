/* Lesson 11: the collectives over NCCL (split_comm.h). One process drives
 * every GPU: ncclCommInitAll makes one communicator per device, and each
 * collective is enqueued on every rank's stream between ncclGroupStart and
 * ncclGroupEnd, which lets one thread issue all K parts of it without
 * deadlocking on the first (README.md, "One process, K GPUs").
 *
 * Built with -DHAVE_NCCL where make found NCCL (the CUDA install, or the
 * pip wheel nvidia-nccl-cu13); without it, split_comm_nccl says how to get
 * NCCL and returns NULL. Not a kernel file: only lesson 11's program links
 * it, so no other program needs NCCL. */
#include <stdio.h>
#include <stdlib.h>

#include "split_comm.h"
#include "check.h"

#ifdef HAVE_NCCL
#include <nccl.h>

#define NCCL_CHECK(call)                                                                           \
    do {                                                                                           \
        ncclResult_t r_ = (call);                                                                  \
        if (r_ != ncclSuccess) {                                                                   \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(r_)); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

typedef struct {
    ncclComm_t comm[SPLIT_MAX_RANKS];
} nccl_impl;

static void nccl_all_reduce(split_comm *c, float *const *buf, long long n, split_op op, const split_place *at)
{
    nccl_impl *p = (nccl_impl *)c->impl;
    NCCL_CHECK(ncclGroupStart());
    for (int k = 0; k < c->ranks; k++)
        NCCL_CHECK(ncclAllReduce(buf[k], buf[k], (size_t)n, ncclFloat, op == SPLIT_MAX ? ncclMax : ncclSum,
                                 p->comm[k], at[k].stream));
    NCCL_CHECK(ncclGroupEnd());
}

static void nccl_all_gather(split_comm *c, float *const *send, float *const *recv, long long n, const split_place *at)
{
    nccl_impl *p = (nccl_impl *)c->impl;
    NCCL_CHECK(ncclGroupStart());
    for (int k = 0; k < c->ranks; k++)
        NCCL_CHECK(ncclAllGather(send[k], recv[k], (size_t)n, ncclFloat, p->comm[k], at[k].stream));
    NCCL_CHECK(ncclGroupEnd());
}

static void nccl_destroy(split_comm *c)
{
    nccl_impl *p = (nccl_impl *)c->impl;
    for (int k = 0; k < c->ranks; k++) NCCL_CHECK(ncclCommDestroy(p->comm[k]));
    free(p);
    free(c);
}

int split_have_nccl(void) { return 1; }

split_comm *split_comm_nccl(const int *devices, int ranks)
{
    if (ranks < 1 || ranks > SPLIT_MAX_RANKS) {
        fprintf(stderr, "split_comm_nccl: %d ranks (1 ... %d)\n", ranks, SPLIT_MAX_RANKS);
        return NULL;
    }
    split_comm *c = (split_comm *)calloc(1, sizeof(split_comm));
    nccl_impl *p = (nccl_impl *)calloc(1, sizeof(nccl_impl));
    if (!c || !p) exit(1);
    const ncclResult_t r = ncclCommInitAll(p->comm, ranks, devices);
    if (r != ncclSuccess) {
        fprintf(stderr, "NCCL could not start on %d GPU(s): %s\n", ranks, ncclGetErrorString(r));
        free(p);
        free(c);
        return NULL;
    }
    c->ranks = ranks;
    c->name = "NCCL";
    c->all_reduce = nccl_all_reduce;
    c->all_gather = nccl_all_gather;
    c->destroy = nccl_destroy;
    c->impl = p;
    return c;
}

#else /* built without NCCL */

int split_have_nccl(void) { return 0; }

split_comm *split_comm_nccl(const int *devices, int ranks)
{
    (void)devices;
    (void)ranks;
    fprintf(stderr, "lesson 11 was built without NCCL: pip install nvidia-nccl-cu13 (or install NCCL with the "
                    "CUDA toolkit), then make again; --comm local runs without it\n");
    return NULL;
}

#endif
