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

/* Prints a row of floats as "[a, b, c]" with 4 decimals (demos). */
void print_row(const char *label, const float *v, int n);

/* Prints the stable softmax of x (n <= 16) step by step on the host, in
 * float32: max, x - max, exp, sum, result (the walk-through of seed 003). */
void print_steps(const float *x, int n);

#endif
