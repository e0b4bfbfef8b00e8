/* Checking a kernel's output against the float64 reference.
 *
 * Element rule: |y - ref| <= VERIFY_ATOL + rtol * |ref|, written so that NaN
 * fails. Where the reference is NaN, y must be NaN; where it is +-inf, y
 * must be the same infinity; where it is finite, y must be finite.
 *
 * Tolerances (float32 kernels, compared with float64). The relative part has
 * two pieces: 2e-5 for the per-element error of expf / __expf and the
 * division (a few ulp, ~1e-6 at |x - max| ~ 80), plus the rounding of the
 * float32 row sum, which depends on the order of the additions:
 *   - verify_rtol(cols) = 2e-5 + 2 FLT_EPSILON sqrt(cols), for kernels that
 *     sum in a tree or in many short partial sums (lesson 3 on): their
 *     error grows like log2(cols) ulps at worst;
 *   - verify_rtol_sequential(cols) = 2e-5 + (cols - 1) * 2^-24, for one
 *     thread adding a whole row left to right (lessons 1-2). That is the
 *     worst-case bound of such a sum of positive terms (Higham, "Accuracy
 *     and Stability of Numerical Algorithms", gamma_{n-1}), and it is
 *     reached in practice: a constant row rounds the same way at every step
 *     (measured rel err 1.1e-3 at 1 x 100003 on an H100, where a sqrt(n)
 *     bound would allow 7.5e-5).
 *   - atol = 1e-30: outputs below ~1e-30 (exp of less than about -69 after
 *     normalising) may be flushed or denormal; everything above is
 *     compared relatively.
 *
 * 16-bit storage (lesson 9): the kernel computes in float32, within the
 * tolerance above, then rounds each result once to the storage type, which
 * adds at most half a unit in the last place: 2^-11 relative for float16
 * (11 significant bits), 2^-8 for bfloat16 (8 bits), for normal results.
 * A float16 result below 2^-14 is subnormal, with a fixed spacing of
 * 2^-24, so there the rounding adds at most 2^-25 absolute (and a result
 * below 2^-25 may round to 0); bfloat16 has float32's exponent range, so
 * VERIFY_ATOL covers it as for float32. verify_rtol_storage and
 * verify_atol_storage give the sums; the reference runs on the 16-bit
 * input widened exactly, so the input's own rounding is no error at all.
 *
 * Coverage: every element while rows * cols <= VERIFY_FULL_LIMIT; above
 * that, VERIFY_SAMPLE_ROWS rows spread evenly over the matrix (first and
 * last included), every element of each. */
#ifndef COMMON_VERIFY_H
#define COMMON_VERIFY_H

#include "f16.h" /* dtype */

#ifdef __cplusplus
extern "C" {
#endif

#define VERIFY_ATOL 1e-30
#define VERIFY_FULL_LIMIT (1LL << 26)
#define VERIFY_SAMPLE_ROWS 1024

double verify_rtol(long long cols);
double verify_rtol_sequential(long long cols);

/* rtol (a float32 kernel's, e.g. verify_rtol(cols)) plus half an ulp of
 * storage type t (nothing for float32); and the absolute part for t:
 * VERIFY_ATOL, or 2^-25 for float16's subnormals. */
double verify_rtol_storage(dtype t, double rtol);
double verify_atol_storage(dtype t);

/* Which of the two a kernel needs: every lesson and test table names one. */
typedef double (*rtol_fn)(long long cols);

/* Writes the reference for one row of n inputs; ctx is whatever the
 * reference needs (a scale, a mask), or NULL. */
typedef void (*ref_row_fn)(const float *x, double *y, long long n, const void *ctx);

/* The plain softmax as a ref_row_fn (ctx unused). */
void ref_row_softmax(const float *x, double *y, long long n, const void *ctx);

/* The same, except that a row of nothing but -inf gives zeros, not NaN: the
 * policy of attention kernels (lesson 7), where a query whose every key is
 * masked attends to nothing. Any other row, one holding NaN included, gets
 * ref_row_softmax's answer, so a NaN output still fails such a row's zeros
 * and zeros still fail every row that has a finite score. */
void ref_row_softmax_masked_zeros(const float *x, double *y, long long n, const void *ctx);

/* What a checker shows of a wrong answer: the shape checked, how many
 * elements are wrong, and the first VERIFY_SHOW_WRONG of them (row,
 * column, expected, got). Facts only: which elements, never a guess at
 * why (a guessed cause misleads as often as it helps). */
#define VERIFY_SHOW_WRONG 3
typedef struct {
    long long rows, cols;     /* the shape checked                        */
    long long count;          /* wrong elements in all                    */
    long long row[VERIFY_SHOW_WRONG], col[VERIFY_SHOW_WRONG];
    double expected[VERIFY_SHOW_WRONG], got[VERIFY_SHOW_WRONG];
} verify_wrong;

void verify_wrong_init(verify_wrong *w, long long rows, long long cols);
/* Counts one wrong element; keeps it if it is among the first few. */
void verify_wrong_add(verify_wrong *w, long long row, long long col, double expected, double got);
/* Nothing when nothing is wrong; else lines, each starting with indent:
 *   "3 of the 4 x 1000 elements of y are wrong:" (or "...; the first 3:")
 *   "  row 0, column 3: expected 0.000976562, got nan"
 * NaN prints as "nan" whatever its sign bit (printf's "-nan" means nothing). */
void verify_wrong_format(const verify_wrong *w, const char *what, const char *indent, char *buf,
                         unsigned long len);
/* verify_wrong_format on stdout. */
void verify_wrong_print(const verify_wrong *w, const char *what, const char *indent);

typedef struct {
    long long checked;        /* elements compared                        */
    long long bad;            /* elements outside tolerance               */
    long long rows_checked;
    int sampled;              /* 1 when only some rows were compared      */
    double max_abs, max_rel;  /* over finite reference values             */
    long long bad_row, bad_col; /* first bad element, or -1               */
    float bad_got;
    double bad_want;
    long long rows, cols;     /* the shape compared, for verify_describe  */
    verify_wrong wrong;       /* the first few bad elements and their count */
} verify_report;

/* Compares y (rows x cols, contiguous) with ref(x row) within rtol (one of
 * the functions above, evaluated at cols). Returns 1 if every compared
 * element passes, else 0. */
int verify_softmax(const float *x, const float *y, long long rows, long long cols,
                   ref_row_fn ref, const void *ctx, double rtol, verify_report *r);

/* The same with the absolute tolerance atol in place of VERIFY_ATOL
 * (verify_atol_storage for 16-bit outputs, widened exactly to float). */
int verify_softmax_atol(const float *x, const float *y, long long rows, long long cols, ref_row_fn ref,
                        const void *ctx, double rtol, double atol, verify_report *r);

/* Rows and columns exchanged in r (its shape, first bad element and list):
 * a check made on the transpose, told in the output's own terms. For a
 * check of every element (a sampled one compared rows, not columns). */
void verify_report_transpose(verify_report *r);

/* One-line human summary, e.g. "max abs err 1.2e-09, max rel err 3.1e-07
 * over every element (1024 x 512)", or "... over 1024 sampled rows of 65536";
 * on failure it adds the first bad element. */
void verify_describe(const verify_report *r, char *buf, unsigned long len);

/* 1 if the element rule above accepts y for the reference value want. */
int verify_element(float y, double want, double rtol);
int verify_element_atol(float y, double want, double rtol, double atol);

/* The rows verify_softmax compares: verify_row_count(rows, cols) of them
 * (all rows, or VERIFY_SAMPLE_ROWS when sampling), the i-th being
 * verify_row_at(i, count, rows): increasing, the first 0, the last rows - 1.
 * Exposed so that the tests can check the sampling itself. */
long long verify_row_count(long long rows, long long cols);
long long verify_row_at(long long i, long long count, long long rows);

#ifdef __cplusplus
}
#endif
#endif
