/* Kernels with planted bugs (see planted.h). Each BUG comment marks the
 * mistake; the fix is the line a correct kernel has instead. */
#include "planted.h"

/* ---- a missing __syncthreads ------------------------------------------------
 * On a GPU all 8 warps of the block usually write s before thread 0 reads
 * it, so the bug passes most runs. On the emulator warp 0 runs as far as it
 * can before warp 1 starts: thread 0 sums 255 elements nobody has written
 * yet (NaN poison). The last warp reading is the mirror image: only the
 * reverse order, which odd blocks use, shows it. */
template <int READER_LAST, int MISSING_BARRIER>
__global__ void block_sum_kernel(const float *x, float *sums)
{
    __shared__ float s[256];
    s[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
    if (!MISSING_BARRIER) __syncthreads(); /* BUG when MISSING_BARRIER */
    if (threadIdx.x == (READER_LAST ? 255 : 0)) {
        float sum = 0.0f;
        for (int i = 0; i < 256; i++) sum += s[i];
        sums[blockIdx.x] = sum;
    }
}

void planted_block_sum(const float *x, float *sums, int blocks, int reader, int missing_barrier)
{
    if (reader && missing_barrier) block_sum_kernel<1, 1><<<blocks, 256>>>(x, sums);
    else if (reader) block_sum_kernel<1, 0><<<blocks, 256>>>(x, sums);
    else if (missing_barrier) block_sum_kernel<0, 1><<<blocks, 256>>>(x, sums);
    else block_sum_kernel<0, 0><<<blocks, 256>>>(x, sums);
}

/* ---- a missing __syncwarp ------------------------------------------------------ */
template <int MISSING>
__global__ void neighbour_kernel(int *out)
{
    __shared__ int s[32];
    const int lane = threadIdx.x;
    s[lane] = 100 + lane;
    if (!MISSING) __syncwarp(); /* BUG when MISSING: lanes are not in lockstep */
    out[lane] = s[(lane + 1) % 32];
}

void planted_neighbour(int *out, int missing_syncwarp)
{
    if (missing_syncwarp) neighbour_kernel<1><<<1, 32>>>(out);
    else neighbour_kernel<0><<<1, 32>>>(out);
}

/* ---- divergent barriers ------------------------------------------------------------ */
__global__ void divergent_exit_kernel(float *out)
{
    __shared__ float s[256];
    if (threadIdx.x >= 200) return; /* BUG: these threads never reach the barrier */
    s[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[199 - threadIdx.x];
}

void planted_divergent_exit(float *out) { divergent_exit_kernel<<<1, 256>>>(out); }

__global__ void divergent_branches_kernel(float *out)
{
    __shared__ float s[64];
    s[threadIdx.x] = 1.0f;
    if (threadIdx.x % 2) {
        __syncthreads(); /* BUG: odd threads wait here, */
        out[threadIdx.x] = s[threadIdx.x ^ 1];
    } else {
        __syncthreads(); /* and even threads here */
        out[threadIdx.x] = -s[threadIdx.x ^ 1];
    }
}

void planted_divergent_branches(float *out) { divergent_branches_kernel<<<1, 64>>>(out); }

/* ---- shuffles from lanes that do not take part ------------------------------------------ */
__global__ void shfl_outside_mask_kernel(int *out)
{
    const int lane = threadIdx.x % 32;
    int v = lane;
    /* BUG: width 32, so lanes 8..15 read lanes 16..23, outside the mask;
     * __shfl_down_sync(0x0000ffff, v, 8, 16) would keep the reads inside. */
    if (lane < 16) v = __shfl_down_sync(0x0000ffffu, v, 8);
    out[threadIdx.x] = v;
}

void planted_shfl_outside_mask(int *out) { shfl_outside_mask_kernel<<<1, 32>>>(out); }

__global__ void shfl_after_return_kernel(const float *x, float *out)
{
    const int lane = threadIdx.x % 32;
    if (lane >= 20) return; /* BUG: the full-mask shuffles below wait for these lanes */
    float v = x[threadIdx.x];
    for (int k = 16; k > 0; k >>= 1) v += __shfl_xor_sync(0xffffffffu, v, k);
    out[threadIdx.x] = v;
}

void planted_shfl_after_return(const float *x, float *out)
{
    shfl_after_return_kernel<<<1, 32>>>(x, out);
}

__global__ void shfl_partial_warp_kernel(float *out)
{
    float v = (float)threadIdx.x;
    v += __shfl_xor_sync(0xffffffffu, v, 1); /* BUG: warp 1 has only lanes 0..15 */
    out[threadIdx.x] = v;
}

void planted_shfl_partial_warp(float *out) { shfl_partial_warp_kernel<<<1, 48>>>(out); }

__global__ void shfl_vs_barrier_kernel(float *out)
{
    float v = (float)threadIdx.x;
    if (threadIdx.x < 16) v += __shfl_xor_sync(0xffffffffu, v, 16); /* BUG: half the warp */
    else __syncthreads();
    out[threadIdx.x] = v;
}

void planted_shfl_vs_barrier(float *out) { shfl_vs_barrier_kernel<<<1, 32>>>(out); }

/* ---- reading shared memory nobody wrote ------------------------------------------------------ */
__global__ void unwritten_shared_kernel(float *out)
{
    __shared__ float s[257];
    s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x] + s[threadIdx.x + 1]; /* BUG: s[256] is never written */
}

void planted_unwritten_shared(float *out) { unwritten_shared_kernel<<<1, 256>>>(out); }

/* ---- out of bounds ------------------------------------------------------------------------------ */
__global__ void oob_read_kernel(const float *x, float *y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) y[i % n] = x[i]; /* BUG: i == n reads one past the end */
}

void planted_oob_read(const float *x, float *y, int n)
{
    oob_read_kernel<<<(n + 256) / 256, 256>>>(x, y, n);
}

__global__ void oob_write_kernel(const float *x, float *y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) y[i] = x[i % n]; /* BUG: i == n writes one past the end */
}

void planted_oob_write(const float *x, float *y, int n)
{
    oob_write_kernel<<<(n + 256) / 256, 256>>>(x, y, n);
}

__global__ void dynamic_smem_overflow_kernel(float *out, int floats)
{
    extern __shared__ float dyn[];
    dyn[threadIdx.x] = 1.0f;
    __syncthreads();
    out[threadIdx.x] = dyn[threadIdx.x] + dyn[floats + threadIdx.x]; /* BUG: past the end */
}

void planted_dynamic_smem_overflow(float *out, int smem_bytes)
{
    dynamic_smem_overflow_kernel<<<1, 64, (size_t)smem_bytes>>>(out, smem_bytes / 4);
}

/* ---- clusters and CTAs that wait for each other -------------------------------------------
 * Built by nvcc too (the native test binary), where clusters need sm_90:
 * on older targets the bodies are empty and nothing launches them. */
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define PLANTED_CLUSTERS 1
#endif

/* A cluster of `c` CTAs of 64 threads. */
template <class... P, class... A>
static void launch_cluster(void (*kernel)(P...), unsigned grid, unsigned c, A... args)
{
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = c;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(grid, 1, 1);
    lc.blockDim = dim3(64, 1, 1);
    lc.attrs = attr;
    lc.numAttrs = 1;
    cudaLaunchKernelEx(&lc, kernel, args...);
}

__global__ void partial_cluster_barrier_kernel(float *out)
{
#ifdef PLANTED_CLUSTERS
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    __shared__ float s;
    if (threadIdx.x == 0) s = (float)cluster.block_rank();
    if (cluster.block_rank() == 1 && threadIdx.x >= 32) return; /* BUG: they never reach cluster.sync() */
    cluster.sync();
    out[blockIdx.x * 64 + threadIdx.x] = *cluster.map_shared_rank(&s, 0);
    cluster.sync();
#else
    (void)out;
#endif
}

void planted_partial_cluster_barrier(float *out) { launch_cluster(partial_cluster_barrier_kernel, 2, 2, out); }

template <int MISSING>
__global__ void dsmem_before_sync_kernel(float *out)
{
#ifdef PLANTED_CLUSTERS
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    __shared__ float s[64];
    const unsigned rank = cluster.block_rank(), next = (rank + 1) % cluster.num_blocks();
    s[threadIdx.x] = (float)(blockIdx.x * 64 + threadIdx.x);
    if (!MISSING) cluster.sync(); /* BUG when MISSING: the other CTA may not have written s yet */
    out[blockIdx.x * 64 + threadIdx.x] = cluster.map_shared_rank(s, next)[threadIdx.x];
    cluster.sync(); /* nobody exits while another CTA may still read its s */
#else
    (void)out;
#endif
}

void planted_dsmem_before_sync(float *out, int missing)
{
    if (missing) launch_cluster(dsmem_before_sync_kernel<1>, 8, 4, out);
    else launch_cluster(dsmem_before_sync_kernel<0>, 8, 4, out);
}

__global__ void grid_deadlock_kernel(unsigned *flag, float *out)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> f(*flag);
        while (f.load(cuda::memory_order_acquire) == 0) __nanosleep(64); /* BUG: nobody sets it */
    }
    __syncthreads();
    out[blockIdx.x * 64 + threadIdx.x] = 1.0f;
}

void planted_grid_deadlock(unsigned *flag, float *out) { grid_deadlock_kernel<<<4, 64>>>(flag, out); }

/* Each CTA publishes data[b], counts itself in, waits for all, sums. */
template <int BUG>
__global__ void flag_before_data_kernel(unsigned *count, float *data, float *out)
{
    if (threadIdx.x == 0) {
        cuda::atomic_ref<unsigned, cuda::thread_scope_device> c(*count);
        if (!BUG) data[blockIdx.x] = (float)(blockIdx.x + 1);
        c.fetch_add(1u, cuda::memory_order_release);
        if (BUG) data[blockIdx.x] = (float)(blockIdx.x + 1); /* BUG: published after the count */
        while (c.load(cuda::memory_order_acquire) < gridDim.x) __nanosleep(32);
    }
    __syncthreads();
    float s = 0.0f;
    for (unsigned k = 0; k < gridDim.x; k++) s += __ldcg(&data[k]);
    out[blockIdx.x * 64 + threadIdx.x] = s;
}

void planted_flag_before_data(unsigned *count, float *data, float *out, int blocks, int bug)
{
    if (bug) flag_before_data_kernel<1><<<blocks, 64>>>(count, data, out);
    else flag_before_data_kernel<0><<<blocks, 64>>>(count, data, out);
}

/* ---- a write one past the end of dynamic shared memory -------------------------------------- */
__global__ void dynamic_smem_write_past_kernel(float *out, int floats)
{
    extern __shared__ float dyn[];
    for (int i = threadIdx.x; i <= floats; i += blockDim.x) dyn[i] = 1.0f; /* BUG: <= writes dyn[floats] */
    __syncthreads();
    out[threadIdx.x] = dyn[threadIdx.x];
}

void planted_dynamic_smem_write_past(float *out)
{
    dynamic_smem_write_past_kernel<<<2, 64, 1000 * sizeof(float)>>>(out, 1000);
}
