/* Lesson 9, internal: what the two entry points' files share on the host
 * side. Not part of the API (softmax_half.h). */
#ifndef LESSON09_HALF_INTERNAL_H
#define LESSON09_HALF_INTERNAL_H
#include "softmax_half.h"

/* How a pair of views is moved (half_access): */
#define HALF_SCALAR 0 /* one element per access                                         */
#define HALF_VEC4 1   /* 16-bit types: a pair per 4-byte access (4-byte aligned, even)  */
#define HALF_VEC16 2  /* 16 bytes per access: 8 16-bit elements or 4 floats             */
#define HALF_PEELED 3 /* rows cut as lesson 5 cuts them: 16 bytes per access in a row's body, */
                      /* its head and tail one element each                                     */

/* The access for these views: 16 bytes when both bases are 16-byte aligned
 * and cols, ldx, ldy are multiples of 16 bytes' worth of elements; peeled
 * rows of more than 256 elements when every row of x starts at the same
 * offset from 16 bytes as the same row of y (shorter rows: lesson 5 keeps
 * them whole where y has holes, and path 1's narrow rows lack a lane for
 * each extra); for 16-bit types 4-byte pairs when all of them are even and
 * the bases 4-byte aligned; single elements otherwise. Host only. */
int half_access(const void *x, long long ldx, const void *y, long long ldy, long long rows, long long cols, dtype t);

/* One line and exit 2 for an unknown t or strides shorter than a row. */
void half_check_args(const char *who, long long ldx, long long ldy, long long rows, long long cols, dtype t);

#endif
