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

/* A block gets 48 KB of shared memory by default, its static __shared__
 * arrays and the launch's dynamic bytes together. More dynamic bytes than
 * 48 KB less the static part need cudaFuncSetAttribute(kernel,
 * cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) first, or the
 * launch fails with "invalid argument". The kernels that opt in by this
 * rule declare at most 1 KB statically (ptxas -v: 256-272 bytes), so they
 * opt in above 47 KB (lesson 10's on-chip kernels, with more, always opt
 * in); opting in at 48 KB made a row of 12288 floats (exactly 48 KB, on
 * top of 256 static bytes) fail on the GPU. */
#define SMEM_OPT_IN_ABOVE (47 * 1024)

/* Opts kernel in to `bytes` of dynamic shared memory when the launch
 * needs it (an opt-in lasts for the process). */
#define SMEM_OPT_IN(kernel, bytes)                                                                      \
    do {                                                                                                \
        if ((bytes) > SMEM_OPT_IN_ABOVE)                                                                \
            CUDA_CHECK(cudaFuncSetAttribute((kernel), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(bytes))); \
    } while (0)

#endif
