/* Taught in lesson 8. The mbarrier (sm_90), in PTX: no C function exists
 * for it in CUDA 13 short of libcu++'s C++ barriers. An mbarrier is a
 * 64-bit word in shared memory that counts arrivals and bytes; its phase
 * completes when the threads it was made for have arrived and the bytes
 * they announced (expect) have been written, by a bulk copy (path 3b's
 * bulk_copy.cuh) or by another CTA's st.async (cluster_exchange.cuh). Built
 * where the cluster code is (FX_CLUSTER_CODE: sm_90 and up, and the CPU
 * emulator, where each step does nothing: there a copy is done at once and
 * a store lands at once). */
#ifndef COMMON_DEVICE_MBARRIER_CUH
#define COMMON_DEVICE_MBARRIER_CUH

#ifndef FX_CLUSTER_CODE
#error "mbarrier.cuh: include fastest_device.cuh, which defines FX_CLUSTER_CODE"
#endif
#if FX_CLUSTER_CODE
#if !defined(CUDA_EMU)
__device__ __forceinline__ unsigned fx_smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}
#endif

/* Thread 0 only, before the block's __syncthreads(): n barriers, each
 * waiting for one arrival; the fence makes them visible to the copy
 * engine and the cluster (the async proxy) and, after the barrier, to
 * every thread. */
__device__ __forceinline__ void fx_mbar_init(unsigned long long *bar, int n)
{
#if defined(CUDA_EMU)
    (void)bar;
    (void)n;
#else
    for (int i = 0; i < n; i++)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(fx_smem_addr(bar + i)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

/* The one arrival, and `bytes` more to come. */
__device__ __forceinline__ void fx_mbar_expect(unsigned long long *bar, unsigned bytes)
{
#if defined(CUDA_EMU)
    (void)bar;
    (void)bytes;
#else
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(fx_smem_addr(bar)), "r"(bytes)
                 : "memory");
#endif
}

/* Every thread: wait until bar's first phase has completed (parity 0). */
__device__ __forceinline__ void fx_mbar_wait(unsigned long long *bar)
{
#if defined(CUDA_EMU)
    (void)bar;
#else
    asm volatile("{\n\t.reg .pred done;\n"
                 "WAIT:\n\t" /* a label local to the braces: each inlined copy has its own */
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n\t"
                 "@!done bra WAIT;\n}" ::"r"(fx_smem_addr(bar))
                 : "memory");
#endif
}
#endif

#endif
