/* Stand-in for CUDA's <cooperative_groups/reduce.h> in the CPU emulator build: cooperative groups cannot run on
 * the CPU emulator, so including it stops the build with a message naming
 * the feature (docs/emulator.md). Code that needs it runs only on a GPU:
 * keep it out of the files that `make test` builds for the emulator, or
 * behind #ifndef CUDA_EMU. */
#error "not supported by the CPU emulator (common/emu): cooperative groups (<cooperative_groups/reduce.h>); this code needs a GPU"
