/* Lesson 5: the fused softmax. Each row is read from global memory once,
 * kept on chip (registers, or shared memory when registers cannot hold it)
 * while its max and sum are found, and written once: 1 read + 1 write.
 * Rows too long for one SM's shared memory fall back to a loop that reads
 * the row three times (see README.md, "Where it stops fitting"). */
#ifndef LESSON05_SOFTMAX_FUSED_H
#define LESSON05_SOFTMAX_FUSED_H
#include <cuda_runtime.h>

/* y = softmax(x) for each of `rows` rows of `cols` floats (device pointers,
 * contiguous rows; x and y must not overlap). Any shape; the path is picked
 * from cols (see softmax_fused_plan). A row holding NaN, or only -inf, gives
 * NaN, as PyTorch does. This is the course's softmax_fn. */
void softmax_fused(const float *x, float *y, long long rows, long long cols, cudaStream_t stream);

/* The same on views: row i of the input starts at x + i * ldx and row i of
 * the output at y + i * ldy (row strides in elements, ldx, ldy >= cols),
 * as a slice x[:, a:b] or a padded matrix is laid out. Only the cols
 * elements of each row are read or written; the rest of each stride is
 * never touched. Any alignment: 128-bit loads and stores throughout when
 * softmax_fused_can_use_float4() says so; 128-bit for all but each row's
 * 0-6 head and tail floats when softmax_fused_can_peel() does; a scalar
 * path otherwise (softmax_fused_access() has the rule). */
void softmax_fused_strided(const float *x, long long ldx, float *y, long long ldy,
                           long long rows, long long cols, cudaStream_t stream);

/* Where the row lives. */
typedef enum {
    FUSED_AUTO = 0,  /* let the dispatcher choose (softmax_fused does)      */
    FUSED_REGISTERS, /* cols <= FUSED_MAX_REGISTER_COLS: row in registers   */
    FUSED_SHARED,    /* row in dynamic shared memory, up to the opt-in max  */
    FUSED_CHUNKED    /* does not fit: 3 reads + 1 write, any cols           */
} fused_path;

#define FUSED_MAX_REGISTER_COLS 32768

/* The launch the dispatcher makes for one row length. */
typedef struct {
    fused_path path;       /* never FUSED_AUTO                                   */
    int float4;            /* 1: 128-bit loads and stores, 0: 32-bit            */
    int peel;              /* 1: rows cut at 16-byte boundaries (views only)    */
    int threads_per_row;   /* 1 ... 32: part of a warp; more: the whole block    */
    int floats_per_thread; /* registers path: capacity of each thread (0 else)   */
    int block;             /* threads per block                                  */
    int rows_per_block;    /* block / threads_per_row                            */
    long long smem_bytes;  /* dynamic shared memory per block (shared path)      */
} fused_plan;

/* How a view is moved (softmax_fused_plan's `access`). */
#define FUSED_32BIT 0  /* single floats                                     */
#define FUSED_FLOAT4 1 /* float4 throughout: aligned rows, cols % 4 == 0    */
#define FUSED_PEELED 2 /* float4 bodies, heads and tails peeled (a view)    */

/* The plan for a row of `cols` floats moved as `access` says. `want` forces
 * a path when the row fits it (FUSED_CHUNKED always does); otherwise, or
 * for FUSED_AUTO, the dispatcher's choice: registers up to
 * FUSED_MAX_REGISTER_COLS, shared memory up to
 * softmax_fused_shared_capacity(), chunked beyond. Needs a GPU only for
 * the shared-memory limit. */
fused_plan softmax_fused_plan(fused_path want, int access, long long cols);

/* softmax_fused_strided, with a path forced as in softmax_fused_plan.
 * Returns the plan it launched. */
fused_plan softmax_fused_run(fused_path want, const float *x, long long ldx, float *y,
                             long long ldy, long long rows, long long cols, cudaStream_t stream);

/* The two other paths on every row length they can take, as softmax_fns,
 * so the test matrix runs them on short rows too (registers are what the
 * dispatcher picks for the matrix's short rows). */
void softmax_fused_shared(const float *x, float *y, long long rows, long long cols,
                          cudaStream_t stream);
void softmax_fused_chunked(const float *x, float *y, long long rows, long long cols,
                           cudaStream_t stream);

/* 1 if 128-bit accesses are safe for these views: both base pointers
 * 16-byte aligned, and cols, ldx, ldy multiples of 4 (so every row starts
 * 16-byte aligned and holds whole float4s). Host only, no GPU needed. */
int softmax_fused_can_use_float4(const float *x, long long ldx, const float *y, long long ldy,
                                 long long cols);

/* 1 if each row of x starts at the same offset from a 16-byte boundary as
 * the same row of y (common/device/view_cut.cuh): one cut into head,
 * float4 body and tail then serves both. Host only, no GPU needed. */
int softmax_fused_can_peel(const float *x, long long ldx, const float *y, long long ldy, long long rows);

/* The access softmax_fused_strided uses for these views: FUSED_FLOAT4 when
 * softmax_fused_can_use_float4(); FUSED_PEELED when softmax_fused_can_peel(),
 * except for rows of up to 256 floats of a y with holes at varying offsets
 * (ldy > cols, ldy % 4 != 0), where 32-bit stores are faster
 * (view_cut.cuh's view_y_holes_short has the times); FUSED_32BIT otherwise.
 * Host only, no GPU needed. */
int softmax_fused_access(const float *x, long long ldx, const float *y, long long ldy, long long rows,
                         long long cols);

/* The longest row, in floats, that fits in one block's shared memory on
 * the current device: cudaDevAttrMaxSharedMemoryPerBlockOptin, less 1 KB
 * kept for the kernel's own arrays. On an H100, (232 448 - 1024) / 4 =
 * 57 856 floats. */
long long softmax_fused_shared_capacity(void);

/* "registers", "shared memory", "chunked (3 reads + 1 write)" */
const char *fused_path_name(fused_path p);

#endif
