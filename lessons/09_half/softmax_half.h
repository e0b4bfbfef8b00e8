/* Lesson 9: softmax with 16-bit storage and 32-bit arithmetic.
 *
 * x and y are device pointers to rows x cols elements of storage type t
 * (float32, float16 as __half, bfloat16 as __nv_bfloat16), row i of x at
 * x + i * ldx elements, of y at y + i * ldy. Every element is widened to
 * float on the load; max, exp, sum and the quotient are float32, as in
 * lessons 5 and 8; each result is rounded once, to nearest even, on the
 * store. The special values behave as in docs/special-values.md: a row
 * holding NaN or +inf, or of only -inf, gives NaN; -inf among finite
 * values gives 0.
 *
 * Two entry points, the lesson's two steps:
 *   softmax_half_fused    lesson 5's fused row for any storage type: one
 *                         block per row, the row read once and written once
 *   softmax_half_fastest  lesson 8's dispatcher for any storage type */
#ifndef LESSON09_SOFTMAX_HALF_H
#define LESSON09_SOFTMAX_HALF_H
#include <cuda_runtime.h>
#include "f16.h" /* dtype */
#include "device/rows.h" /* the row engine: fastest_path, fastest_plan */

void softmax_half_fused(const void *x, long long ldx, void *y, long long ldy, long long rows, long long cols,
                        dtype t, cudaStream_t stream);
void softmax_half_fastest(const void *x, long long ldx, void *y, long long ldy, long long rows, long long cols,
                          dtype t, cudaStream_t stream);


/* softmax_half_fused's row lengths and paths, as lesson 5's: the row in
 * registers up to HALF_MAX_REGISTER_COLS elements (the registers hold
 * widened floats, so the capacity is float's), in shared memory in its
 * storage type up to half_shared_capacity(t) elements, read three times
 * beyond. */
#define HALF_MAX_REGISTER_COLS 32768
typedef enum {
    HALF_FUSED_AUTO = 0,  /* the dispatcher's choice             */
    HALF_FUSED_REGISTERS, /* cols <= HALF_MAX_REGISTER_COLS      */
    HALF_FUSED_SHARED,    /* cols <= half_shared_capacity(t)     */
    HALF_FUSED_CHUNKED    /* any cols: 3 reads + 1 write         */
} half_fused_path;

/* softmax_half_fused with a path forced where the row fits it (else the
 * dispatcher's choice); returns the path it launched (HALF_FUSED_AUTO when
 * there was nothing to do). */
half_fused_path softmax_half_fused_run(half_fused_path want, const void *x, long long ldx, void *y, long long ldy,
                                       long long rows, long long cols, dtype t, cudaStream_t stream);
/* The longest row of storage type t that one block's shared memory holds
 * (needs a GPU, or the emulator). */
long long half_shared_capacity(dtype t);
/* "registers", "shared memory", "chunked (3 reads + 1 write)" */
const char *half_fused_path_name(half_fused_path p);


/* softmax_half_fastest with a path forced where the shape fits it, as
 * softmax_fastest_run (every path of lesson 8 takes 16-bit rows). Returns
 * the plan it ran: vec4 means 16-byte accesses (8 16-bit elements),
 * bytes_per_elem is in the storage type's bytes (4 for 16-bit paths 1-3g,
 * 6 for path 4). softmax_half_fastest_plan: the same plan, not run. */
fastest_plan softmax_half_fastest_run(fastest_path want, const void *x, long long ldx, void *y, long long ldy,
                                      long long rows, long long cols, dtype t, cudaStream_t stream);
fastest_plan softmax_half_fastest_plan(fastest_path want, const void *x, long long ldx, const void *y, long long ldy,
                                       long long rows, long long cols, dtype t);

#endif
