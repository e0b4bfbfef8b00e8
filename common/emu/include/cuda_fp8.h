/* Stand-in for CUDA's <cuda_fp8.h> in the CPU emulator build: fp8 types cannot run on
 * the CPU emulator, so including it stops the build with a message naming
 * the feature (docs/emulator.md). Code that needs it runs only on a GPU:
 * keep it out of the files that `make test` builds for the emulator, or
 * behind #ifndef CUDA_EMU. */
#error "not supported by the CPU emulator (common/emu): fp8 types (<cuda_fp8.h>); this code needs a GPU"
