/* Stand-in for CUDA's <vector_types.h> when a .cu file is built for the CPU emulator:
 * everything is in common/emu/cuda_emu.h (which g++ also includes first,
 * as nvcc does with cuda_runtime.h). */
#include "../cuda_emu.h"
