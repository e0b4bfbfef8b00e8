/* Reproducible inputs: the same seed, kind and shape give the same bits on
 * every machine (a counter-based generator, no libc rand). */
#ifndef COMMON_INPUTS_H
#define COMMON_INPUTS_H

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills x (rows x cols, contiguous) with values of the given kind.
 * Each row depends only on (seed, kind, row, cols). */
void inputs_fill(float *x, long long rows, long long cols, input_kind kind,
                 unsigned long long seed);

#ifdef __cplusplus
}
#endif
#endif
