/* Stand-in for CUDA's <cooperative_groups.h> in the CPU emulator build:
 * the groups whose CTAs the emulator runs together, with CUDA's names and
 * meanings (CUDA C++ Programming Guide, "Cooperative Groups" and "Thread
 * Block Clusters"):
 *   this_thread_block()  sync(), thread_rank(), size(), group_index(), ...
 *   this_cluster()       sync(), barrier_arrive(), barrier_wait(),
 *                        block_rank(), num_blocks(), dim_blocks(),
 *                        block_index(), map_shared_rank(), ...; every grid
 *                        is made of clusters, of one CTA unless the launch
 *                        (cudaLaunchKernelEx) gives a cluster dimension
 *   this_grid()          sync() in a cooperative launch, ranks and sizes
 * Tiled partitions, coalesced groups, reductions (<cooperative_groups/
 * reduce.h>) and memcpy_async are not here: code using them does not
 * compile for the emulator. C++ because cooperative groups are classes. */
#ifndef COMMON_EMU_COOPERATIVE_GROUPS_H
#define COMMON_EMU_COOPERATIVE_GROUPS_H
#include "../cuda_emu.h"

namespace cooperative_groups {

class thread_block {
public:
    void sync(EMU_HERE) const { emu_barrier(0, 0, emu_file_, emu_line_); }
    unsigned long long thread_rank() const
    {
        return threadIdx.x + (unsigned long long)blockDim.x * (threadIdx.y + (unsigned long long)blockDim.y * threadIdx.z);
    }
    unsigned long long num_threads() const { return (unsigned long long)blockDim.x * blockDim.y * blockDim.z; }
    unsigned long long size() const { return num_threads(); }
    dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
    dim3 dim_threads() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
    dim3 group_dim() const { return dim_threads(); }
};
static inline thread_block this_thread_block() { return thread_block(); }

class cluster_group {
public:
    static bool is_valid() { return true; }
    void sync(EMU_HERE) const
    {
        emu_cluster_arrive(emu_file_, emu_line_);
        emu_cluster_wait(emu_file_, emu_line_);
    }
    void barrier_arrive(EMU_HERE) const { emu_cluster_arrive(emu_file_, emu_line_); }
    void barrier_wait(EMU_HERE) const { emu_cluster_wait(emu_file_, emu_line_); }
    dim3 dim_blocks() const { return emu_cluster_dim; }
    unsigned num_blocks() const { return emu_cluster_dim.x * emu_cluster_dim.y * emu_cluster_dim.z; }
    dim3 block_index() const
    {
        return dim3(blockIdx.x % emu_cluster_dim.x, blockIdx.y % emu_cluster_dim.y, blockIdx.z % emu_cluster_dim.z);
    }
    unsigned block_rank() const
    {
        const dim3 b = block_index();
        return b.x + emu_cluster_dim.x * (b.y + emu_cluster_dim.y * b.z);
    }
    unsigned num_threads() const { return num_blocks() * blockDim.x * blockDim.y * blockDim.z; }
    unsigned size() const { return num_threads(); }
    unsigned thread_rank() const
    {
        return block_rank() * blockDim.x * blockDim.y * blockDim.z + (unsigned)this_thread_block().thread_rank();
    }
    dim3 dim_threads() const
    {
        return dim3(emu_cluster_dim.x * blockDim.x, emu_cluster_dim.y * blockDim.y, emu_cluster_dim.z * blockDim.z);
    }
    /* Where CTA `rank` of this cluster has the variable this CTA has at addr. */
    template <class T> T *map_shared_rank(T *addr, unsigned int rank, EMU_HERE) const
    {
        return static_cast<T *>(emu_map_shared_rank(addr, rank, emu_file_, emu_line_));
    }
};
static inline cluster_group this_cluster() { return cluster_group(); }

class grid_group {
public:
    bool is_valid() const { return true; }
    void sync(EMU_HERE) const { emu_grid_sync(emu_file_, emu_line_); }
    unsigned long long num_blocks() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
    unsigned long long block_rank() const
    {
        return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    }
    unsigned long long num_threads() const { return num_blocks() * blockDim.x * blockDim.y * blockDim.z; }
    unsigned long long size() const { return num_threads(); }
    unsigned long long thread_rank() const
    {
        return block_rank() * blockDim.x * blockDim.y * blockDim.z + this_thread_block().thread_rank();
    }
    dim3 dim_blocks() const { return dim3(gridDim.x, gridDim.y, gridDim.z); }
    dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
};
static inline grid_group this_grid() { return grid_group(); }

template <class G> static inline void sync(const G &g, EMU_HERE) { g.sync(emu_file_, emu_line_); }

} // namespace cooperative_groups

#endif
