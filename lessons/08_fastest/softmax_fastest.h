/* Lesson 8: the fastest float32 softmax, one entry point for every shape.
 *
 * softmax_fastest() looks at the shape (and the GPU) and picks one of seven
 * kernels (README.md, "The dispatcher"):
 *
 *   path 1  FASTEST_WARP     N <= 1024: 1 ... 32 lanes of a warp per row,
 *                            several rows per warp, row in registers
 *   path 2  FASTEST_BLOCK    N <= 16384, or <= 32768 with enough rows (on
 *                            sm_90: the limits follow from the occupancy of
 *                            each class, see softmax_fastest.cu): one row
 *                            per block, row in registers
 *           FASTEST_SHARED   N <= the opt-in shared memory (57 856 floats on
 *                            an H100): one row per block, row in shared
 *                            memory above the 48 KB default
 *   path 3  FASTEST_CLUSTER  sm_90 only, N <= 2^19 with enough rows: one row
 *                            per thread-block cluster of 2 ... 16 CTAs, each
 *                            CTA's segment in registers and shared memory,
 *                            the (m, d) states exchanged through
 *                            distributed shared memory
 *   path 3b FASTEST_BULK     path 3's cluster for aligned and peeled views on sm_90,
 *                            N <= 2^17 (16-bit: 2^18) with enough rows: each
 *                            CTA's piece all in shared memory, loaded by the
 *                            copy engine (bulk copies) instead of the threads
 *   path 3g FASTEST_GRID     rows up to what the whole GPU holds
 *                            (8.6 M floats on an H100): one row over up to
 *                            hundreds of independent CTAs of 64 KB each,
 *                            held on chip, the (m, d) states exchanged
 *                            through global memory
 *   path 4  FASTEST_SPLIT    anything else (longer rows):
 *                            each row split over many blocks, (m, d) of each
 *                            piece to a workspace, merged, then written
 *
 * Paths 1-3g move 1 read + 1 write (8 bytes per element), path 4 2 reads +
 * 1 write (12). All paths take row strides and use 128-bit accesses when
 * each row of x starts at the same offset from a 16-byte boundary as the
 * same row of y (the 0-3 floats before the first boundary and after the
 * last are peeled off; path 1 needs 8 lanes a row for that, N > 16), and
 * 32-bit accesses otherwise; also for rows of 256 floats or fewer when y
 * has holes between rows at varying offsets, where 32-bit stores measured
 * faster (README.md). Rows holding NaN or +inf, and rows of only
 * -inf, give NaN (as PyTorch); -inf entries among finite ones give 0. */
#ifndef LESSON08_SOFTMAX_FASTEST_H
#define LESSON08_SOFTMAX_FASTEST_H
#include <cuda_runtime.h>

typedef enum {
    FASTEST_AUTO = 0,
    FASTEST_WARP,
    FASTEST_BLOCK,
    FASTEST_SHARED,
    FASTEST_CLUSTER,
    FASTEST_GRID,
    FASTEST_SPLIT,
    FASTEST_BULK, /* path 3b, after the others: the numbers of paths 1-4 stay */
    FASTEST_NPATHS
} fastest_path;

/* What the dispatcher launches for one shape. */
typedef struct {
    fastest_path path;     /* never FASTEST_AUTO                                  */
    int vec4;              /* 1: 128-bit accesses                                  */
    int peel;              /* 1: ... on rows that start off 16-byte boundaries:    */
                           /*    heads and tails of 0-3 floats peeled off          */
    int x32;               /* 1: rows cut at y's boundaries, x read in 32-bit      */
                           /*    loads (paths 3, 3g: x, y misaligned differently)  */
    int threads_per_row;   /* paths 1, 2: lanes or threads sharing a row           */
    int floats_per_thread; /* register paths: floats of the row per thread         */
    int block;             /* threads per block (per CTA)                          */
    int cluster;           /* paths 3, 3b: CTAs per row (cluster size), else 0     */
    long long splits;      /* paths 3g, 4: blocks per row, else 0                  */
    long long segment;     /* paths 3, 3b, 3g, 4: elements per CTA / block, else 0 */
    long long smem_bytes;  /* dynamic shared memory per block                      */
    double bytes_per_elem; /* global traffic of this path: 8 or 12                 */
} fastest_plan;

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

/* 1 when path 3 can run here: compute capability >= 9, cluster launch
 * supported, and the kernel built for sm_90 (1 on the CPU emulator, which
 * runs a cluster's CTAs together). */
int softmax_fastest_has_clusters(void);

/* 1 when path 3g can run here: any GPU, and the CPU emulator (which starts
 * another CTA whenever the resident ones all wait). */
int softmax_fastest_has_grid(void);

/* Longest rows of each path (path 3g: as many 64 KB pieces as the GPU
 * holds at once, 528 x 16384 floats on an H100). */
#define FASTEST_WARP_MAX_COLS 1024
#define FASTEST_BLOCK_MAX_COLS 32768   /* registers: 1024 threads x 32 floats   */
#define FASTEST_CLUSTER_MAX_COLS 1048576 /* 16 CTAs x 65536 floats (registers + shared) */

/* Longest row the shared-memory path holds on this device (opt-in limit
 * less 1 KB for the kernel's own arrays, in whole float4s). */
long long softmax_fastest_shared_capacity(void);

/* Paths 3g and 4's workspace: one (m, d) pair (8 bytes) per block (and
 * for 3g one counter per row), allocated by
 * the first call that needs it with cudaMalloc and grown (never shrunk)
 * as needed, until softmax_fastest_release() frees it. Not for concurrent
 * use from several host threads or streams (one workspace, one set of
 * counters), and not during CUDA-graph capture (cudaMalloc). */
long long softmax_fastest_workspace_bytes(void);
void softmax_fastest_release(void);

/* "warp (registers)", ... */
const char *fastest_path_name(fastest_path p);

#endif
