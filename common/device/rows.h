/* Taught in lesson 8. The row engine's API: one entry point that runs a
 * softmax over rows of any length and storage type by picking one of seven
 * kernels for the shape (lessons/08_fastest/README.md, "The dispatcher"):
 *
 *   path 1  FASTEST_WARP     N <= 1024: 1 ... 32 lanes of a warp per row,
 *                            several rows per warp, row in registers
 *   path 2  FASTEST_BLOCK    N <= 32768: one row per block, row in registers
 *           FASTEST_SHARED   N <= the opt-in shared memory: one row per
 *                            block, row in shared memory above 48 KB
 *   path 3  FASTEST_CLUSTER  sm_90, N <= 2^20: one row per thread-block
 *                            cluster of 2 ... 16 CTAs, the (m, d) states
 *                            exchanged through distributed shared memory
 *   path 3b FASTEST_BULK     path 3's cluster for aligned and peeled views,
 *                            each CTA's piece loaded by the copy engine
 *   path 3g FASTEST_GRID     rows up to what the whole GPU holds: one row
 *                            over hundreds of independent CTAs, the (m, d)
 *                            states exchanged through global memory
 *   path 4  FASTEST_SPLIT    anything else: each row split over many
 *                            blocks, (m, d) of each piece to a workspace,
 *                            merged, then written (2 reads + 1 write)
 *
 * Paths 1-3g move 1 read + 1 write, path 4 2 reads + 1 write. All paths
 * take row strides and keep 16-byte accesses on views whose rows start at
 * the same offset from a 16-byte boundary in x and y (heads and tails
 * peeled off); 32-bit accesses otherwise. Rows holding NaN or +inf, and
 * rows of only -inf, give NaN (as PyTorch); -inf among finite values
 * gives 0. Lesson 8 calls it for float32 (softmax_fastest.h), lesson 9
 * for 16-bit storage (softmax_half.h). Paths 1 and 2 also run other row
 * operations than the softmax (rows_op.cuh, path1_2_rows.cuh): lesson
 * 10's log-softmax. */
#ifndef COMMON_DEVICE_ROWS_H
#define COMMON_DEVICE_ROWS_H
#include <cuda_runtime.h>

#include "f16.h" /* dtype: the storage types */

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
    int held;              /* path 3: 1 for its held class (rows of up to 16      */
                           /*    pieces in registers as loaded)                    */
    long long splits;      /* paths 3g, 4: blocks per row, else 0                  */
    long long segment;     /* paths 3, 3b, 3g, 4: elements per CTA / block, else 0 */
    long long smem_bytes;  /* dynamic shared memory per block                      */
    double bytes_per_elem; /* global traffic of this path: 8 or 12                 */
} fastest_plan;

/* y = softmax(x) over rows x cols elements of storage type t (float32,
 * float16 as __half, bfloat16 as __nv_bfloat16): row i of x at x + i * ldx
 * elements, of y at y + i * ldy (strides >= cols; elements between cols
 * and the stride are never touched). `want` forces a path when the shape
 * fits it (FASTEST_SPLIT always fits; FASTEST_BULK an aligned or peeled
 * view whose row fits 2 ... 8 CTAs of path 3b; FASTEST_CLUSTER a GPU with
 * clusters and cols <= FASTEST_CLUSTER_MAX_COLS; FASTEST_GRID a GPU that
 * holds a row's pieces at once); otherwise, and for FASTEST_AUTO, the
 * dispatcher's choice. Returns the plan it launched, bytes_per_elem in
 * t's bytes. Strides shorter than a row or an unknown t: one line, exit 2. */
fastest_plan fx_run_typed(fastest_path want, dtype t, const void *x, long long ldx, void *y, long long ldy,
                          long long rows, long long cols, cudaStream_t stream);
/* The plan fx_run_typed makes, without running it. Queries the device. */
fastest_plan fx_plan_typed(fastest_path want, dtype t, const void *x, long long ldx, const void *y, long long ldy,
                           long long rows, long long cols);

/* 1 when path 3 can run here: compute capability >= 9, cluster launch
 * supported, and the kernel built for sm_90 (1 on the CPU emulator, which
 * runs a cluster's CTAs together). */
int softmax_fastest_has_clusters(void);

/* 1 when the dispatcher takes clusters of more than 8 CTAs here (rows of
 * 2^18 - 2^19 floats): where DRAM delivers under 16 bytes per SM per SM
 * cycle (an H100, not an H200: rows_plan.cu says why), and on the CPU
 * emulator. */
int softmax_fastest_wide_clusters(void);
/* 1 when the dispatcher gives rows that nearly fill 2 ... 16 pieces of
 * 16384 16-bit elements (or 10240 floats) to path 3's held class: where
 * DRAM delivers at least 16 bytes per SM per SM cycle (an H200, not an
 * H100 nor the CPU emulator: fastest_paths.h, FX_HELD_BYTES). */
int softmax_fastest_held_dram(void);

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
