/* The cases every check of tests/test_reference.c draws on (one program,
 * with tests/test_reference_training.h): rows of every input kind and of
 * lengths around the warp and block sizes, the two-pass definition of
 * their softmax, and what "agrees" means between two float64 results. */
#ifndef TESTS_TEST_REFERENCE_CASES_H
#define TESTS_TEST_REFERENCE_CASES_H

#include <math.h>

#include "inputs.h"
#include "reference.h"

#define TOL 1e-12 /* relative; double rounding over 4097 terms is ~1e-13 */

/* a and b agree to `tol` relative, with a tiny absolute floor for values
 * near the bottom of double's range; NaN agrees only with NaN, an infinity
 * only with itself. */
static int close_to(double a, double b, double tol)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b)) return a == b;
    return fabs(a - b) <= tol * fmax(fabs(a), fabs(b)) + 1e-300;
}

/* First index where the rows differ, or -1. */
static long long rows_differ(const double *a, const double *b, long long n, double tol)
{
    for (long long j = 0; j < n; j++)
        if (!close_to(a[j], b[j], tol)) return j;
    return -1;
}

static const long long LENGTHS[] = {1, 2, 3, 31, 32, 33, 1000, 1025, 4097};
static const long long BLOCKS[] = {1, 2, 3, 7, 32, 33, 256, 1000, 5000}; /* 5000 > every length */
#define NLENGTHS (int)(sizeof LENGTHS / sizeof LENGTHS[0])
#define NBLOCKS (int)(sizeof BLOCKS / sizeof BLOCKS[0])
#define NKINDS 4
#define ROWS 5 /* one of each special row pattern */
#define MAXN 4097

static float X[ROWS * MAXN];
static double WANT[ROWS * MAXN], GOT[ROWS * MAXN];

/* The two-pass definition for every row of X (ROWS x n) into WANT. */
static void fill_case(int kind, long long n, unsigned long long seed)
{
    inputs_fill(X, ROWS, n, (input_kind)kind, seed);
    for (int i = 0; i < ROWS; i++) ref_softmax_row(X + i * n, WANT + i * n, n);
}

#endif
