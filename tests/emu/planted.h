/* Kernels with planted bugs, for the emulator's own tests
 * (tests/emu/test_emu.cu): each is a mistake that a GPU usually hides or
 * shows only sometimes, and that the CPU emulator must report every time.
 * Every function launches one planted kernel on device pointers. */
#ifndef TESTS_EMU_PLANTED_H
#define TESTS_EMU_PLANTED_H

#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cuda/atomic>

/* Block sums of 256 floats per block, read by one thread. missing_barrier:
 * the __syncthreads between the writes and the read is left out. reader:
 * 0 = thread 0 reads (warp 0), 1 = thread 255 reads (the last warp). */
void planted_block_sum(const float *x, float *sums, int blocks, int reader, int missing_barrier);

/* Each lane reads its neighbour's shared slot; missing_syncwarp leaves out
 * the __syncwarp between the writes and the reads. One warp. */
void planted_neighbour(int *out, int missing_syncwarp);

/* Threads 200..255 return early; the others meet at a __syncthreads. */
void planted_divergent_exit(float *out);

/* Odd threads and even threads wait at two different __syncthreads. */
void planted_divergent_branches(float *out);

/* Lanes 0..15 shuffle down by 8 with the mask 0x0000ffff: lanes 8..15
 * read lanes 16..23, which are not in the mask. */
void planted_shfl_outside_mask(int *out);

/* Lanes 20..31 return; the rest reduce with full-mask shuffles (an early
 * return before __shfl_xor_sync(0xffffffff, ...)). */
void planted_shfl_after_return(const float *x, float *out);

/* A block of 48 threads: warp 1 has 16 lanes, but shuffles with the full mask. */
void planted_shfl_partial_warp(float *out);

/* Lanes 0..15 shuffle while lanes 16..31 wait at __syncthreads: deadlock. */
void planted_shfl_vs_barrier(float *out);

/* 257 floats of shared memory, 256 threads write one each, thread t reads
 * t and t + 1: thread 255 reads the element nobody wrote. */
void planted_unwritten_shared(float *out);

/* Thread i copies x[i] for i <= n: it reads one float past the end. */
void planted_oob_read(const float *x, float *y, int n);

/* Thread i writes y[i] for i <= n: one float past the end. */
void planted_oob_write(const float *x, float *y, int n);

/* Dynamic shared memory of smem_bytes; each thread also reads the float
 * smem_bytes / 4 + threadIdx.x, past the end. */
void planted_dynamic_smem_overflow(float *out, int smem_bytes);

/* 1000 floats of dynamic shared memory; the threads write 1001. */
void planted_dynamic_smem_write_past(float *out);

/* A cluster of 2 CTAs of 64 threads; half of rank 1 returns before
 * cluster.sync(). */
void planted_partial_cluster_barrier(float *out);

/* Clusters of 4 CTAs of 64 threads (grid 8): each CTA writes its
 * __shared__ s[64], then reads the next rank's through map_shared_rank;
 * missing leaves out the cluster.sync() between. out: 512 floats. */
void planted_dsmem_before_sync(float *out, int missing);

/* CTA 0's thread 0 waits (acquire load, __nanosleep) for *flag, which
 * nobody sets. Grid 4 x 64; out: 256 floats. */
void planted_grid_deadlock(unsigned *flag, float *out);

/* `blocks` CTAs of 64 threads (all resident at once on any GPU): thread 0
 * of CTA b writes data[b] = b + 1 and counts itself in at *count (a
 * release), waits until all have (acquire), then every thread sums data.
 * bug: data[b] is written after the count. *count must start at 0. */
void planted_flag_before_data(unsigned *count, float *data, float *out, int blocks, int bug);

#endif
