/* Command-line options shared by every lesson program.
 *
 * Every option is validated; anything invalid produces one line of text in
 * `err` and a negative return, and the program exits with status 2. */
#ifndef COMMON_OPTIONS_H
#define COMMON_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "f16.h" /* dtype */

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    INPUT_NORMAL = 0, /* N(0, 1): the everyday case                              */
    INPUT_UNIFORM,    /* U(-4, 4)                                                 */
    INPUT_LARGE,      /* each row = its own offset of |c| in [100, 3000] + U(-10, 10): naive overflows */
    INPUT_SPECIAL     /* constant rows, rows with -inf entries, +-FLT_MAX, denormals */
} input_kind;

/* Largest shape a program accepts. Rows stay within one grid dimension
 * (2^31 - 1 blocks); a single row may be longer than 2^31 elements, so
 * kernels take rows and cols as 64-bit integers; M x N is at most 2^40. */
#define OPT_MAX_ROWS 2147483647LL
#define OPT_MAX_COLS (1LL << 40)
#define OPT_MAX_ELEMENTS (1LL << 40)

typedef struct {
    long long rows, cols;       /* shape M x N                                  */
    int rows_set, cols_set;     /* given on the command line                    */
    int iters;                  /* timed runs, >= 20 by default                 */
    int warmup;                 /* untimed runs before timing                   */
    unsigned long long seed;    /* input generator seed                         */
    input_kind kind;            /* --input-kind                                 */
    const char *input_path;     /* --input FILE.npy (sets the shape), or NULL   */
    const char *output_path;    /* --output FILE.npy, or NULL                   */
    const char *csv_path;       /* --csv FILE: append one row, or NULL          */
    int check;                  /* 0 with --no-check                            */
    dtype storage;              /* --dtype: storage type (lesson 9 only)        */
    int storage_set;            /* --dtype given: the other lessons refuse it   */
} options;

/* Defaults: the given shape, 20 timed runs, 5 warm-up runs, seed 1,
 * normal inputs, verification on, float32 storage. */
void options_defaults(options *o, long long rows, long long cols);

/* Parses argv[1..argc-1] into o (which holds the defaults).
 * Returns 0 on success, 1 when --help/-h was given (nothing else parsed),
 * -1 on invalid input with a one-line message (no newline) in err. */
int options_parse(options *o, int argc, char **argv, char *err, size_t errlen);

/* A lesson's own flags, taken out of argv before options_parse sees the
 * rest: when argv[*i] is one of the n names, as "--name value" or
 * "--name=value", returns its index and points *value at the value
 * (moving *i past a separate one), or sets *value to NULL when the value
 * is missing (the end of argv, or another "--" option next). -1 when
 * argv[*i] is none of them. */
int options_take(int argc, char **argv, int *i, const char *const *names, int n, const char **value);

/* A lesson flag's value: a whole number in [lo, hi] into *out (0), or a
 * one-line message in err (-1). */
int options_int(const char *flag, const char *s, long lo, long hi, int *out, char *err, size_t errlen);
/* The index of s among the n names, or -1 with "flag: 's' is not a, b or
 * c" in err. */
int options_choice(const char *flag, const char *s, const char *const *names, int n, char *err, size_t errlen);

/* The option summary printed by --help. */
void options_usage(FILE *f, const char *prog);

/* What --help adds for a program that takes --dtype (lesson 9): the
 * storage types and how a 16-bit --input / --output file is laid out. */
void options_usage_dtype(FILE *f);

const char *input_kind_name(input_kind k);

#ifdef __cplusplus
}
#endif
#endif
