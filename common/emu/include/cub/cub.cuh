/* Stand-in for CUDA's <cub/cub.cuh> in the CPU emulator build: CUB cannot run on
 * the CPU emulator, so including it stops the build with a message naming
 * the feature (docs/emulator.md). Code that needs it runs only on a GPU:
 * keep it out of the files that `make test` builds for the emulator, or
 * behind #ifndef CUDA_EMU. */
#error "not supported by the CPU emulator (common/emu): CUB (<cub/cub.cuh>); this code needs a GPU"
