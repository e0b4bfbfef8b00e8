/* Lesson 8: the fastest float32 softmax, one entry point for every shape.
 *
 * softmax_fastest() runs the row engine (common/device/rows.h, which this
 * lesson teaches) on float rows: it looks at the shape and the GPU and
 * picks one of seven kernels (README.md, "The dispatcher"). */
#ifndef LESSON08_SOFTMAX_FASTEST_H
#define LESSON08_SOFTMAX_FASTEST_H
#include <cuda_runtime.h>

#include "device/rows.h" /* fastest_path, fastest_plan, the paths' limits */

/* y = softmax(x) over each of `rows` rows of `cols` floats (device
 * pointers, contiguous rows, x and y not overlapping). The course's
 * softmax_fn. */
void softmax_fastest(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);

/* The same on views: row i of x at x + i * ldx, of y at y + i * ldy
 * (strides in elements, >= cols). Elements between cols and the stride
 * are never touched. */
void softmax_fastest_strided(const float *x, long long ldx, float *y, long long ldy, long long rows,
                             long long cols, cudaStream_t stream);

/* The plan for this shape and these pointers. `want` forces a path when
 * the shape fits it (FASTEST_SPLIT always fits; FASTEST_BULK an aligned
 * or peeled view whose row fits 2 ... 8 CTAs of path 3b; FASTEST_CLUSTER needs a
 * GPU with clusters and cols <= FASTEST_CLUSTER_MAX_COLS; FASTEST_GRID a
 * GPU that holds a row's pieces at once); otherwise, and
 * for FASTEST_AUTO, the dispatcher's choice. Queries the device. */
fastest_plan softmax_fastest_plan(fastest_path want, const float *x, long long ldx, const float *y,
                                  long long ldy, long long rows, long long cols);

/* softmax_fastest_strided with a path forced as in softmax_fastest_plan;
 * returns the plan it launched. */
fastest_plan softmax_fastest_run(fastest_path want, const float *x, long long ldx, float *y,
                                 long long ldy, long long rows, long long cols, cudaStream_t stream);

/* Contiguous rows, path forced (falls back as above when it does not fit). */
void softmax_fastest_path(const float *x, float *y, long long rows, long long cols, fastest_path path,
                          cudaStream_t stream);

/* Each path as a softmax_fn, for the test matrix and the benchmark. */
void softmax_fastest_warp(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);
void softmax_fastest_block(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);
void softmax_fastest_shared(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);
void softmax_fastest_cluster(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);
void softmax_fastest_grid(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);
void softmax_fastest_split(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);
void softmax_fastest_bulk(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);

#endif
