/* What the benchmark's files share, one program (build/bench):
 * tests/bench.cu (the sweep, the float32 and 16-bit kernels),
 * tests/bench_training.cu (lesson 10's kernels, each against its own bound)
 * and tests/bench_cudnn.cu (cuDNN's softmax, the yardstick). */
#ifndef TESTS_BENCH_H
#define TESTS_BENCH_H

#include "harness.h"

/* A checked run verifies up to BENCH_CHECK_ROWS rows holding at most
 * BENCH_CHECK_ELEMS elements (tests/bench.cu says why). */
#define BENCH_CHECK_ROWS 64
#define BENCH_CHECK_ELEMS (1LL << 22)

/* What runs at a shape of the sweep: everything (the powers of two and
 * 1024 x 512), lesson 8's entry point alone (the lengths between), or
 * the entry points of lessons 8, 9 and 10 (the vocabulary shapes). */
enum { SHAPE_SWEEP, SHAPE_BETWEEN, SHAPE_VOCAB };
#define BENCH_MAX_SHAPES 80

/* The sweep's shapes into shapes[s] = {M, N, what runs there}; quick: N =
 * 32, 1024, 2^15, 2^20 and 1024 x 512 only. Returns how many
 * (tests/bench_shapes.cu). */
int sweep_shapes(long long shapes[][3], int quick);

/* One row of the sweep's output table (stdout). */
void print_line(const char *who, long long rows, long long cols, const char *what);

/* Lesson 10 on one shape: the read-only pass, then each training kernel,
 * checked on its first rows, timed over rotated buffers, one CSV row each
 * (tests/bench_training.cu). hx: the shape's float32 input. */
void bench_training(long long rows, long long cols, const float *hx, int warmup, int iters, const char *csv,
                    const provenance *p);
/* bench --only 10: each of lesson 10's kernels launched once (tests/bench_training.cu); how many. */
int profile_training(long long rows, long long cols, const float *hx);

#ifdef HAVE_CUDNN
#include <cudnn.h>

/* cuDNN's handle and tensor descriptor: cudnn_open once before any call
 * below, cudnn_close at the end. */
void cudnn_open(void);
void cudnn_close(void);
/* Sets the descriptor to rows x cols of storage type t; 0 where cuDNN's
 * int dimensions cannot hold the shape. */
int cudnn_shape_typed(long long rows, long long cols, dtype t);
int cudnn_shape(long long rows, long long cols); /* float32 */
/* cuDNN's softmax on the shape last set: as a softmax_typed_fn, and as a
 * softmax_fn (float32) that exits on an error. */
void softmax_cudnn_typed(const void *x, long long ldx, void *y, long long ldy, long long rows, long long cols,
                         dtype t, cudaStream_t stream);
void softmax_cudnn(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);
/* What the last softmax_cudnn_typed returned: a status instead of an exit,
 * so that a cuDNN without bfloat16 softmax is told apart from an error,
 * and its rows are skipped. */
extern cudnnStatus_t cudnn_status;
#endif

#endif
