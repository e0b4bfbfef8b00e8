/* Exercise 3: LogSumExp of each row. */
#ifndef LESSON03_EXERCISE_H
#define LESSON03_EXERCISE_H
#include <cuda_runtime.h>

/* lse[r] = log(sum_j exp(x[r][j])) for each of `rows` rows of `cols`
 * floats (device pointers, contiguous rows; lse holds `rows` floats).
 * Special rows: a NaN anywhere gives NaN; otherwise a +inf entry gives
 * +inf, and a row of only -inf gives log(0) = -inf. */
void logsumexp_rows(const float *x, float *lse, long long rows, long long cols,
                    cudaStream_t stream);

#endif
