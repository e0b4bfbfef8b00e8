/* Exercise 11: the all-reduce way of joining the ranks' (m, d). */
#ifndef LESSON11_EXERCISE_H
#define LESSON11_EXERCISE_H
#include <cuda_runtime.h>

#include "split_comm.h"

/* mine[k]: rank k's (m_k, d_k) for each of `rows` rows (device pointers on
 * at[k].device). On return, on every rank k: m[k][r] = M, the max of the
 * m_k over the ranks, and d[k][r] = D, the sum of d_k exp(m_k - M): the
 * state of the whole row r. Two all-reduces through comm. */
void combine_all_reduce(split_comm *comm, const split_place *at, const float2 *const *mine, float *const *m,
                        float *const *d, long long rows);

#endif
