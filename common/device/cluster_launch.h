/* Taught in lesson 8. Path 3's host side of a cluster launch: the launch
 * configuration (a 1-D grid in clusters of c CTAs) and whether this GPU
 * and this build can launch clusters at all; and path 4's launch of its
 * second kernel as a programmatic dependent of the first. Lesson 10
 * launches its long rows' clusters and its loss kernel with the same
 * functions. */
#ifndef COMMON_DEVICE_CLUSTER_LAUNCH_H
#define COMMON_DEVICE_CLUSTER_LAUNCH_H

#include <cuda_runtime.h>

#include "check.h"

/* grid CTAs of block threads, in clusters of c along x (attr: the
 * configuration's one attribute, which must outlive it). */
static inline cudaLaunchConfig_t fx_cluster_config(unsigned grid, int block, int c, size_t smem,
                                                   cudaStream_t stream, cudaLaunchAttribute *attr)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid, 1, 1);
    cfg.blockDim = dim3((unsigned)block, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)c;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}

/* grid blocks of block threads, launched as a programmatic dependent of
 * the kernel before them in the stream when `dependent` (sm_90: the
 * kernel may start while that one's last blocks run, and waits for it in
 * cudaGridDependencySynchronize), else an ordinary launch (attr: as
 * above). */
static inline cudaLaunchConfig_t fx_dependent_config(unsigned grid, int block, cudaStream_t stream,
                                                     cudaLaunchAttribute *attr, int dependent)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid, 1, 1);
    cfg.blockDim = dim3((unsigned)block, 1, 1);
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = dependent ? 1 : 0;
    return cfg;
}

/* 1 when this GPU launches clusters (sm_90 and up) and kernel k was
 * built for it: a binary for an older target only, whose cluster kernels'
 * bodies are empty, must never launch them. */
static inline int fx_can_launch_clusters(const void *k)
{
    int dev, major = 0, launch = 0;
    CUDA_CHECK(cudaGetDevice(&dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&launch, cudaDevAttrClusterLaunch, dev));
    if (major < 9 || !launch) return 0;
    cudaFuncAttributes fa;
    int has = 0;
    if (cudaFuncGetAttributes(&fa, k) == cudaSuccess) has = fa.binaryVersion >= 90 || fa.ptxVersion >= 90;
    cudaGetLastError();
    return has;
}

#endif
