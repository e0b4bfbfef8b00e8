/* Taught in lesson 8. Path 3g's way for the CTAs of one row to meet in
 * global memory: a ticket that hands out the pieces in the order CTAs
 * become resident, and a per-row counter that each CTA counts itself into,
 * then waits on until all the row's pieces have. path3g_grid.cu says why
 * this cannot deadlock (a row's pieces must fit on the GPU at once) and why
 * the counters are left at 0. Lesson 10 keeps its long rows on chip with
 * the same two functions. */
#ifndef COMMON_DEVICE_GRID_SYNC_CUH
#define COMMON_DEVICE_GRID_SYNC_CUH

/* The GPU's spelling is inline PTX; the CPU emulator (CUDA_EMU) gets the
 * same orderings in C++ (fastest_paths.h says more). */
#if !defined(CUDA_EMU) && !defined(FASTEST_GPU_CODE)
#define FASTEST_GPU_CODE 1
#endif
#ifndef FASTEST_GPU_CODE
#include <cuda/atomic> /* the C++ spelling of the release add and the acquire load */
#endif

/* A release add and an acquire load at GPU scope (sm_70 and up): the
 * writer's state is visible before its count, and whoever sees the count
 * sees the state, without a full __threadfence on either side: 82.7 % of
 * copy at 16 x 2^22 against 80.5 % with fences, H100
 * (docs/experiments/rows-grid-path.md). */
__device__ __forceinline__ void fx_add_release(unsigned *p, unsigned v)
{
#ifdef FASTEST_GPU_CODE
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#else
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*p).fetch_add(v, cuda::memory_order_release);
#endif
}
__device__ __forceinline__ unsigned fx_load_acquire(const unsigned *p)
{
#ifdef FASTEST_GPU_CODE
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
#else
    return cuda::atomic_ref<const unsigned, cuda::thread_scope_device>(*p).load(cuda::memory_order_acquire);
#endif
}

/* Thread 0 of a CTA draws its ticket from *counter into *ticket (the
 * CTA's shared variable); the last of the grid's tickets puts the counter
 * back to 0 (every other ticket is drawn). */
__device__ __forceinline__ void fx_grid_ticket(unsigned *counter, unsigned *ticket)
{
    *ticket = atomicAdd(counter, 1u);
    if (*ticket == gridDim.x - 1) *counter = 0;
}

/* Thread 0 of a CTA, after writing its piece's state: counts itself in at
 * *count (the state visible GPU-wide before the count) and waits until
 * all `pieces` CTAs of the row have. */
__device__ __forceinline__ void fx_grid_arrive_wait(unsigned *count, unsigned pieces)
{
    fx_add_release(count, 1u);
    while (fx_load_acquire(count) < pieces) __nanosleep(32);
}

/* Thread 0, once past the wait: counts the CTA out, and at the kernel's
 * end, fx_grid_leave: the last of the row's 2 x pieces counts puts *count
 * back to 0, when no CTA of the row still waits on it. The add returns
 * the count from L2, a round trip; only fx_grid_leave uses it, so the
 * trip overlaps the CTA's way out. Counting out inside the wait, before
 * the block's barrier, would hold every thread of the CTA for that trip:
 * 76.1 % of copy at 32 x 2^21 deferred against 74.7 % in the wait, H200
 * (docs/experiments/rows-grid-path.md). */
__device__ __forceinline__ unsigned fx_grid_count_out(unsigned *count)
{
    return atomicAdd(count, 1u);
}
__device__ __forceinline__ void fx_grid_leave(unsigned *count, unsigned before, unsigned pieces)
{
    if (before == 2u * pieces - 1u) *count = 0;
}

#endif
