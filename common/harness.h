/* The lesson harness: options -> input -> run -> verify -> time -> report.
 *
 * Every lesson exposes its kernel through one host function of this shape,
 * so the programs, the tests and the benchmarks can treat all kernels alike:
 * x and y are device pointers to rows x cols floats, contiguous. rows and
 * cols are 64-bit: one row may hold more than 2^31 elements. */
#ifndef COMMON_HARNESS_H
#define COMMON_HARNESS_H

#include <cuda_runtime.h>
#include "options.h"
#include "verify.h"

typedef void (*softmax_fn)(const float *x, float *y, long long rows, long long cols,
                           cudaStream_t stream);

typedef struct {
    int number;              /* 1 for lessons/01_naive                        */
    const char *name;        /* "naive"                                       */
    const char *shows;       /* one line: what this lesson shows              */
    const char *traffic;     /* "2 reads + 1 write (uncoalesced)"             */
    double bytes_per_elem;   /* global-memory bytes per element of the design */
    softmax_fn run;
    rtol_fn rtol;            /* verify_rtol, or verify_rtol_sequential when one
                                thread sums a whole row (see verify.h)       */
    long long default_rows, default_cols;
} lesson;

/* Parses the options (exit 2 with one line on bad input, exit 0 after
 * --help), then makes sure a CUDA device is there (exit 1 with a clear line
 * if not). Call before anything else. */
void lesson_init(const lesson *l, options *o, int argc, char **argv);

/* Exit status of every program when there is no usable CUDA device. */
#define EXIT_NO_GPU 3

/* Exits with EXIT_NO_GPU and one line on stderr, naming `who`, unless a
 * CUDA device is present. */
void require_gpu(const char *who);

/* Runs the kernel once on a small host array (demos): copies x in, runs,
 * copies y out. */
void lesson_run_small(const lesson *l, const float *x, float *y, long long rows, long long cols);

/* Input (generated or --input), verification, timing against the copy,
 * the report, the CSV row and --output. Returns the exit status:
 * 0 on PASS (or --no-check), 1 on FAIL. */
int lesson_run(const lesson *l, const options *o);

/* lesson_run, checked against `ref` instead of ref_row_softmax: for a kernel
 * whose definition differs from the plain softmax on some rows (lesson 7
 * gives zeros for a row of only -inf: ref_row_softmax_masked_zeros). */
int lesson_run_ref(const lesson *l, const options *o, ref_row_fn ref);

/* ---- the measuring parts (common/timing.cu), shared with the benchmark
 * (tests/bench.cu) ---------------------------------------------------------- */

typedef struct {
    double median_ms, min_ms, max_ms;
    int runs;
} timing;

/* Buffer pairs to rotate so that `bytes` per tensor start cold in L2: enough
 * to span 4x L2, at most 64, and no more than fits in 80 % of free_bytes. */
int rotation_sets(size_t bytes, size_t free_bytes);

/* Times fn on x[s] -> y[s] (s rotating over `sets` buffer pairs), or the
 * device-to-device copy of the same bytes when fn is NULL: `warmup` untimed
 * runs, then `iters` runs bracketed by CUDA events; median, min and max. */
timing time_runs(softmax_fn fn, float **x, float **y, int sets, long long rows,
                 long long cols, int warmup, int iters);

/* ---- the read-only bound (lesson 10's loss reads and writes nothing per
 * element): a pass that reads n floats once and writes one float per
 * block, the sum of its part, so the compiler cannot drop a load. Its time
 * is the least any kernel that reads the same bytes can take. */
#define READ_PASS_BLOCK 512
/* The current device's SM count, asked once. */
int device_sms(void);
/* Blocks read_pass launches for n floats: partial must hold that many. */
int read_pass_blocks(long long n);
void read_pass(const float *x, float *partial, long long n, cudaStream_t stream);
/* time_runs for read_pass on x[s] -> partial[s] (s rotating over `sets`). */
timing time_read_pass(float **x, float **partial, int sets, long long n, int warmup, int iters);

/* ---- buffer sets of two tensors of any sizes, for kernels that are not
 * one input and one output of a shape (lesson 10's program and its part
 * of the benchmark, tests/bench_training.cu) ---------------------------- */
typedef struct {
    int sets;
    size_t a_bytes, b_bytes;
    float *a[64], *b[64];
} buffer_sets;

/* a[s] of a_bytes and b[s] of b_bytes on the device, as many sets as
 * rotation_sets gives for `bytes` a tensor (one on the CPU emulator, which
 * times nothing). */
void buffer_sets_open(buffer_sets *s, size_t a_bytes, size_t b_bytes, size_t bytes);
void buffer_sets_close(buffer_sets *s);

/* `in` (in_bytes from the host) into every a[s], every b[s] poisoned
 * (0xFF bytes are NaN, so an output never written fails its check), then
 * fn once on set 0, whose outputs the caller brings back and checks. */
void buffer_sets_run_once(const buffer_sets *s, softmax_fn fn, const void *in, size_t in_bytes, long long rows,
                          long long cols);

/* A bound that is a multiple of a measured time (1.5 x the copy): t with
 * its median, min and max times scale. */
timing timing_scaled(timing t, double scale);

/* ---- views: the same rows at misaligned addresses (lessons 5, 6, 8) ---- */

/* A softmax over views: row i of x at x + i * ldx, of y at y + i * ldy. */
typedef void (*softmax_strided_fn)(const float *x, long long ldx, float *y, long long ldy, long long rows,
                                   long long cols, cudaStream_t stream);

/* What a strided kernel does with these views, for the table ("128-bit",
 * "32-bit", ...). */
typedef const char *(*view_access_fn)(const float *x, long long ldx, const float *y, long long ldy,
                                      long long rows, long long cols);

/* Times fn on the options' shape (N >= 2; nothing on the CPU emulator,
 * where times mean nothing) as an aligned contiguous matrix,
 * then as six views whose rows do not all start on 16-byte boundaries:
 * both bases one float past one; a row stride of cols + 1; cols - 1
 * columns (N % 4 != 0); x one float past a boundary with y on one; x with
 * a row stride of cols + 1 (a slice of a wider matrix) and y contiguous
 * (a fresh output); the reverse, y with the row stride of cols + 1 (a
 * hole after every row of y) and x contiguous. Prints
 * one line each: access (from `access`, "-" when NULL), median time, GB/s
 * and % of the aligned run's GB/s. Buffers rotated as for the lesson's own
 * timing; the views are not checked here (the tests check them). */
void time_views(softmax_strided_fn fn, view_access_fn access, const options *o);

typedef struct {
    char gpu[256];
    char driver[32], runtime[32];
    int sm_mhz, mem_mhz; /* from cudaDeviceGetAttribute (CUDA 13 removed the props) */
    int l2_bytes, sms;
    char date[32];       /* UTC, ISO 8601 */
} provenance;

void get_provenance(provenance *p);

/* The report's first lines: the lesson, the device, the shape of storage
 * type t, whether `sets` buffer sets rotate, the input. */
void lesson_print_header(const lesson *l, const options *o, const provenance *p, dtype t, int sets);

/* Appends one CSV row (with the header first if the file is empty):
 * lesson, name, shape, times, GB/s, % of copy, bytes per element, verified,
 * provenance, commit. Exits 2 with one line if the file cannot be written.
 * On the CPU emulator the timing columns are left empty: it times nothing. */
void csv_append(const char *path, int lesson_number, const char *name, long long rows,
                long long cols, const timing *t, const timing *copy, double bytes_per_elem,
                const char *verified, const provenance *p);

/* The same for storage type t: GB/s count dtype_size(t) bytes per element
 * read and written, and the last column, dtype, says which type ("f32" in
 * every row csv_append writes; a CSV without the column is all float32). */
void csv_append_typed(const char *path, int lesson_number, const char *name, long long rows,
                      long long cols, const timing *t, const timing *copy, double bytes_per_elem,
                      const char *verified, const provenance *p, dtype storage);

/* ---- 16-bit storage, 32-bit arithmetic (lesson 9) ----------------------- */

/* A kernel over any storage type t (common/f16.h): x and y hold rows x cols
 * elements of t, row i at x + i * ldx and y + i * ldy (in elements). */
typedef void (*softmax_typed_fn)(const void *x, long long ldx, void *y, long long ldy, long long rows,
                                 long long cols, dtype t, cudaStream_t stream);

typedef struct {
    const char *name;      /* "fastest": in the report and the CSV's name column */
    const char *what;      /* one line: the entry point and what it is           */
    softmax_typed_fn run;
    const char *traffic;   /* "1 read + 1 write (row on chip)"                   */
    double elems_moved;    /* design traffic in elements per element: 2 for one
                              read and one write (x dtype_size bytes)           */
} typed_kernel;

/* lesson_init for a program that takes --dtype (lesson 9; the others exit 2
 * when given it): float16 unless --dtype says otherwise or --input holds
 * another type ('<f4', '<f2', or '<u2' read as bfloat16 bits, common/npy.h). */
void lesson_init_typed(const lesson *l, options *o, int argc, char **argv);

/* lesson_init for a program that spreads its input over every visible GPU
 * (lesson 11): a shape is refused only when all their free memory together
 * cannot hold it. */
void lesson_init_spread(const lesson *l, options *o, int argc, char **argv);

/* A usage error: "lessonN: msg" on stderr, exit 2. */
void lesson_fail_usage(const lesson *l, const char *msg);

/* A lesson's own flags (lessons 10 and 11), taken out of argv before lesson_init parses the rest: for each
 * of the n names found, take(f, value, ctx, err, errlen) stores the value, or returns nonzero with a
 * one-line message in err; that or a missing value is a usage error. With --help or -h in argv, help()
 * prints the lesson's flags after the common usage. Returns the new argc. */
typedef int (*lesson_flag_fn)(int f, const char *value, void *ctx, char *err, size_t errlen);
int lesson_take_flags(const lesson *l, int argc, char **argv, const char *const *names, int n, lesson_flag_fn take,
                      void *ctx, void (*help)(void));

/* n floats to storage type t, rounded to nearest even (common/f16.h), and
 * back, exactly. For DTYPE_F32 both are copies. */
void storage_narrow(const float *x, void *out, size_t n, dtype t);
void storage_widen(const void *in, float *x, size_t n, dtype t);

/* lesson_run for typed kernels, in the storage type o->storage. The input
 * is made in float32 and narrowed (or read by --input and, if its type is
 * not o->storage, converted the same way); the float64 reference runs on it
 * widened exactly. Each of the nk kernels is checked first on a poisoned
 * output, every element (as lesson_run) within verify_rtol_storage(t,
 * l->rtol(cols)) and verify_atol_storage(t), then timed against a
 * device-to-device copy of the same 16-bit bytes (buffers rotated as
 * lesson_run does), and reported; one CSV row each, with its dtype.
 * --output gets the last kernel's output in the storage type.
 * times[k] is kernel k's timing and *copy the copy's (zeros on the CPU
 * emulator). If input is not NULL, *input is the input widened to float32
 * (malloc'ed; the caller frees it): the very values a float32 comparison
 * should run on. Returns 0 when every kernel passes (or --no-check), 1 if
 * one does not. */
int lesson_run_typed(const lesson *l, const typed_kernel *k, int nk, const options *o, timing *times,
                     timing *copy, float **input);

/* A float32 kernel on the host input x, measured as lesson_run measures:
 * checked once on a poisoned output (ref_row_softmax within rtol(cols),
 * unless --no-check), then timed with the float32 copy of the same bytes
 * (zeros on the CPU emulator). Prints nothing. Returns 1 if it passed. */
int time_float_checked(softmax_fn fn, rtol_fn rtol, const float *x, long long rows, long long cols,
                       const options *o, timing *t, timing *copy);

/* time_runs for a typed kernel on storage type t; fn NULL times the copy
 * of rows x cols x dtype_size(t) bytes. */
timing time_runs_typed(softmax_typed_fn fn, dtype t, void **x, void **y, int sets, long long rows,
                       long long cols, int warmup, int iters);

/* Prints a row of floats as "[a, b, c]" with 4 decimals (demos). */
void print_row(const char *label, const float *v, int n);

/* Prints the stable softmax of x (n <= 16) step by step on the host, in
 * float32: max, x - max, exp, sum, result (the walk-through of the Triton teaching example). */
void print_steps(const float *x, int n);

#endif
