/* Every CUDA call and every kernel launch is checked: on failure the
 * program prints file:line, the call and CUDA's message, and exits 1. */
#ifndef COMMON_CHECK_H
#define COMMON_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#define CUDA_CHECK(call)                                                      \
    do {                                                                      \
        cudaError_t err_ = (call);                                            \
        if (err_ != cudaSuccess) {                                            \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,     \
                    #call, cudaGetErrorString(err_));                         \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

/* After a <<<>>> launch: a bad configuration shows up here at once;
 * faults inside the kernel show up at the next synchronising call. */
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#endif
