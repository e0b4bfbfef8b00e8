/* Lesson 11: the in-process stand-in for NCCL's collectives (split_comm.h).
 * It waits for each rank's stream, copies every rank's buffer to the host,
 * reduces or concatenates there in rank order, and copies the result back
 * to every rank: what an all-reduce or an all-gather computes, at host
 * speed. The tests and the CPU emulator use it to check the lesson's merge
 * logic with K ranks on one device; the program uses NCCL. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "split_comm.h"
#include "check.h"

static float *host_buffer(size_t floats)
{
    float *h = (float *)malloc(floats * sizeof(float));
    if (!h) {
        fprintf(stderr, "split_comm_local: out of host memory (%zu floats)\n", floats);
        exit(1);
    }
    return h;
}

static void to_host(float *h, const float *dev, long long n, const split_place *at)
{
    CUDA_CHECK(cudaSetDevice(at->device));
    CUDA_CHECK(cudaStreamSynchronize(at->stream));
    CUDA_CHECK(cudaMemcpy(h, dev, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost));
}

static void to_device(float *dev, const float *h, long long n, const split_place *at)
{
    CUDA_CHECK(cudaSetDevice(at->device));
    CUDA_CHECK(cudaMemcpy(dev, h, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
}

/* fmaxf, as lesson 6's state takes its max: a NaN is dropped here, and
 * kept in d, whose sum carries it. */
static void local_all_reduce(split_comm *c, float *const *buf, long long n, split_op op, const split_place *at)
{
    float *acc = host_buffer((size_t)n), *part = host_buffer((size_t)n);
    to_host(acc, buf[0], n, &at[0]);
    for (int k = 1; k < c->ranks; k++) {
        to_host(part, buf[k], n, &at[k]);
        for (long long i = 0; i < n; i++) acc[i] = op == SPLIT_MAX ? fmaxf(acc[i], part[i]) : acc[i] + part[i];
    }
    for (int k = 0; k < c->ranks; k++) to_device(buf[k], acc, n, &at[k]);
    free(acc);
    free(part);
}

static void local_all_gather(split_comm *c, float *const *send, float *const *recv, long long n, const split_place *at)
{
    float *all = host_buffer((size_t)n * c->ranks);
    for (int k = 0; k < c->ranks; k++) to_host(all + (size_t)k * n, send[k], n, &at[k]);
    for (int k = 0; k < c->ranks; k++) to_device(recv[k], all, n * c->ranks, &at[k]);
    free(all);
}

static void local_destroy(split_comm *c) { free(c); }

split_comm *split_comm_local(int ranks)
{
    if (ranks < 1 || ranks > SPLIT_MAX_RANKS) {
        fprintf(stderr, "split_comm_local: %d ranks (1 ... %d)\n", ranks, SPLIT_MAX_RANKS);
        exit(2);
    }
    split_comm *c = (split_comm *)calloc(1, sizeof(split_comm));
    if (!c) exit(1);
    c->ranks = ranks;
    c->name = "in-process stand-in (staged through the host)";
    c->all_reduce = local_all_reduce;
    c->all_gather = local_all_gather;
    c->destroy = local_destroy;
    return c;
}
