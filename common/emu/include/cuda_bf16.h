/* Stand-in for CUDA's <cuda_bf16.h> in the CPU emulator build: bfloat16 (__nv_bfloat16) cannot run on
 * the CPU emulator, so including it stops the build with a message naming
 * the feature (docs/emulator.md). Code that needs it runs only on a GPU:
 * keep it out of the files that `make test` builds for the emulator, or
 * behind #ifndef CUDA_EMU. */
#error "not supported by the CPU emulator (common/emu): bfloat16 (__nv_bfloat16) (<cuda_bf16.h>); this code needs a GPU"
