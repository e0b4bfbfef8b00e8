/* Stand-in for CUDA's <cuda_profiler_api.h> (CPU emulator): there is no
 * profiler to start or stop, so these do nothing. */
#ifndef COMMON_EMU_CUDA_PROFILER_API_H
#define COMMON_EMU_CUDA_PROFILER_API_H
#include "../cuda_emu.h"
static inline cudaError_t cudaProfilerStart(void) { return cudaSuccess; }
static inline cudaError_t cudaProfilerStop(void) { return cudaSuccess; }
#endif
