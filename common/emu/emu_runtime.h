/* The CPU emulator's runtime interface, in C: the CUDA types and runtime
 * API calls that common/ and the lessons use, plus the hooks through which
 * cuda_emu.h (the C++ side, included by kernel code) reaches the scheduler
 * in emu.c. Read cuda_emu.h's header comment first: it says what the
 * emulator is, what it checks and what it does not do.
 *
 * Types keep CUDA's names and, where a program could print or compare them,
 * CUDA's numeric values (error codes, attributes), so that messages read the
 * same as on a GPU. Only what the course needs is here: a call that is not
 * declared fails to compile, naming itself. */
#ifndef COMMON_EMU_RUNTIME_H
#define COMMON_EMU_RUNTIME_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- vector and index types ---------------------------------------------
 * The alignments are CUDA's: a float4 is 16-byte aligned, so a misaligned
 * reinterpret_cast<float4 *> load faults here as it does on a GPU. */
typedef struct uint3 { unsigned int x, y, z; } uint3;
typedef struct int3 { int x, y, z; } int3;
typedef struct float3 { float x, y, z; } float3;
typedef struct __attribute__((aligned(8))) float2 { float x, y; } float2;
typedef struct __attribute__((aligned(16))) float4 { float x, y, z, w; } float4;
typedef struct __attribute__((aligned(8))) int2 { int x, y; } int2;
typedef struct __attribute__((aligned(16))) int4 { int x, y, z, w; } int4;
typedef struct __attribute__((aligned(8))) uint2 { unsigned int x, y; } uint2;
typedef struct __attribute__((aligned(16))) uint4 { unsigned int x, y, z, w; } uint4;
typedef struct __attribute__((aligned(16))) double2 { double x, y; } double2;
typedef struct __attribute__((aligned(16))) longlong2 { long long x, y; } longlong2;
typedef struct __attribute__((aligned(4))) char4 { signed char x, y, z, w; } char4;
typedef struct __attribute__((aligned(4))) uchar4 { unsigned char x, y, z, w; } uchar4;
typedef struct __attribute__((aligned(4))) short2 { short x, y; } short2;

/* dim3: a uint3 whose missing sizes are 1. The constructors are C++ (as in
 * CUDA's vector_types.h) so that `dim3 g(4)` and `<<<4, 256>>>` work. */
typedef struct dim3 {
    unsigned int x, y, z;
#ifdef __cplusplus
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
        : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
#endif
} dim3;

#define EMU_MAKE2(T, a, b) { T r_; r_.x = a; r_.y = b; return r_; }
#define EMU_MAKE3(T, a, b, c) { T r_; r_.x = a; r_.y = b; r_.z = c; return r_; }
#define EMU_MAKE4(T, a, b, c, d) { T r_; r_.x = a; r_.y = b; r_.z = c; r_.w = d; return r_; }
static inline float2 make_float2(float x, float y) EMU_MAKE2(float2, x, y)
static inline float3 make_float3(float x, float y, float z) EMU_MAKE3(float3, x, y, z)
static inline float4 make_float4(float x, float y, float z, float w) EMU_MAKE4(float4, x, y, z, w)
static inline int2 make_int2(int x, int y) EMU_MAKE2(int2, x, y)
static inline int3 make_int3(int x, int y, int z) EMU_MAKE3(int3, x, y, z)
static inline int4 make_int4(int x, int y, int z, int w) EMU_MAKE4(int4, x, y, z, w)
static inline uint2 make_uint2(unsigned x, unsigned y) EMU_MAKE2(uint2, x, y)
static inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) EMU_MAKE3(uint3, x, y, z)
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) EMU_MAKE4(uint4, x, y, z, w)
static inline double2 make_double2(double x, double y) EMU_MAKE2(double2, x, y)
static inline longlong2 make_longlong2(long long x, long long y) EMU_MAKE2(longlong2, x, y)
static inline char4 make_char4(signed char x, signed char y, signed char z, signed char w) EMU_MAKE4(char4, x, y, z, w)
static inline uchar4 make_uchar4(unsigned char x, unsigned char y, unsigned char z, unsigned char w) EMU_MAKE4(uchar4, x, y, z, w)
static inline short2 make_short2(short x, short y) EMU_MAKE2(short2, x, y)
#undef EMU_MAKE2
#undef EMU_MAKE3
#undef EMU_MAKE4

/* ---- errors (CUDA's values) ----------------------------------------------- */
typedef enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorInvalidDeviceFunction = 98,
    cudaErrorNoDevice = 100,
    cudaErrorInvalidDevice = 101,
    cudaErrorInvalidResourceHandle = 400,
    cudaErrorNotReady = 600,
    cudaErrorIllegalAddress = 700,
    cudaErrorLaunchOutOfResources = 701,
    cudaErrorLaunchTimeout = 702,
    cudaErrorAssert = 710,
    cudaErrorMisalignedAddress = 716,
    cudaErrorLaunchFailure = 719,
    cudaErrorCooperativeLaunchTooLarge = 720,
    cudaErrorNotSupported = 801,
    cudaErrorInvalidClusterSize = 912,
    cudaErrorUnknown = 999
} cudaError_t;

typedef enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
} cudaMemcpyKind;

typedef enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1,
    cudaDevAttrMaxBlockDimX = 2,
    cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4,
    cudaDevAttrMaxGridDimX = 5,
    cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7,
    cudaDevAttrMaxSharedMemoryPerBlock = 8,
    cudaDevAttrTotalConstantMemory = 9,
    cudaDevAttrWarpSize = 10,
    cudaDevAttrMaxRegistersPerBlock = 12,
    cudaDevAttrClockRate = 13,
    cudaDevAttrMultiProcessorCount = 16,
    cudaDevAttrConcurrentKernels = 31,
    cudaDevAttrMemoryClockRate = 36,
    cudaDevAttrGlobalMemoryBusWidth = 37,
    cudaDevAttrL2CacheSize = 38,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39,
    cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76,
    cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
    cudaDevAttrMaxRegistersPerMultiprocessor = 82,
    cudaDevAttrCooperativeLaunch = 95,
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrMaxBlocksPerMultiprocessor = 106,
    cudaDevAttrMaxPersistingL2CacheSize = 108,
    cudaDevAttrClusterLaunch = 120
} cudaDeviceAttr;

typedef enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
    cudaFuncAttributePreferredSharedMemoryCarveout = 9,
    cudaFuncAttributeClusterDimMustBeSet = 10,
    cudaFuncAttributeRequiredClusterWidth = 11,
    cudaFuncAttributeRequiredClusterHeight = 12,
    cudaFuncAttributeRequiredClusterDepth = 13,
    cudaFuncAttributeNonPortableClusterSizeAllowed = 14,
    cudaFuncAttributeClusterSchedulingPolicyPreference = 15
} cudaFuncAttribute;

typedef enum cudaFuncCache {
    cudaFuncCachePreferNone = 0,
    cudaFuncCachePreferShared = 1,
    cudaFuncCachePreferL1 = 2,
    cudaFuncCachePreferEqual = 3
} cudaFuncCache;

typedef enum cudaLimit {
    cudaLimitStackSize = 0,
    cudaLimitPrintfFifoSize = 1,
    cudaLimitMallocHeapSize = 2
} cudaLimit;

/* The fields of CUDA 13's cudaDeviceProp that a program is likely to read
 * (CUDA 13 removed clockRate and memoryClockRate: so does this). */
typedef struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    int multiProcessorCount;
    int integrated;
    int canMapHostMemory;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int cooperativeLaunch;
    size_t sharedMemPerBlockOptin;
    int maxBlocksPerMultiProcessor;
    size_t reservedSharedMemPerBlock;
    int clusterLaunch;
} cudaDeviceProp;

typedef struct cudaFuncAttributes {
    size_t sharedSizeBytes;
    size_t constSizeBytes;
    size_t localSizeBytes;
    int maxThreadsPerBlock;
    int numRegs;
    int ptxVersion;
    int binaryVersion;
    int cacheModeCA;
    int maxDynamicSharedSizeBytes;
    int preferredShmemCarveout;
} cudaFuncAttributes;

typedef struct emu_stream *cudaStream_t;
typedef struct emu_event *cudaEvent_t;

/* cudaLaunchKernelEx's configuration (CUDA's layout and values). The
 * emulator honours the cluster dimension and the cooperative flag and
 * ignores the rest (a programmatic dependent launch runs after the
 * launch before it, as every launch here: cuda_emu.h). */
typedef enum cudaLaunchAttributeID {
    cudaLaunchAttributeIgnore = 0,
    cudaLaunchAttributeCooperative = 2,
    cudaLaunchAttributeClusterDimension = 4,
    cudaLaunchAttributeClusterSchedulingPolicyPreference = 5,
    cudaLaunchAttributeProgrammaticStreamSerialization = 6
} cudaLaunchAttributeID;

typedef enum cudaClusterSchedulingPolicy {
    cudaClusterSchedulingPolicyDefault = 0,
    cudaClusterSchedulingPolicySpread = 1,
    cudaClusterSchedulingPolicyLoadBalancing = 2
} cudaClusterSchedulingPolicy;

typedef union cudaLaunchAttributeValue {
    char pad[64];
    int cooperative;
    struct { unsigned int x, y, z; } clusterDim;
    cudaClusterSchedulingPolicy clusterSchedulingPolicyPreference;
    int programmaticStreamSerializationAllowed;
} cudaLaunchAttributeValue;

typedef struct cudaLaunchAttribute_st {
    cudaLaunchAttributeID id;
    char pad[8 - sizeof(cudaLaunchAttributeID)];
    cudaLaunchAttributeValue val;
} cudaLaunchAttribute;

/* gridDim and blockDim are macros for the index variables in kernel code
 * (cuda_emu.h), so the fields carry the names they expand to: cfg.gridDim
 * in a program is cfg.emu_grid_dim here. */
typedef struct cudaLaunchConfig_st {
    dim3 emu_grid_dim;
    dim3 emu_block_dim;
    size_t dynamicSmemBytes;
    cudaStream_t stream;
    cudaLaunchAttribute *attrs;
    unsigned int numAttrs;
} cudaLaunchConfig_t;

#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventBlockingSync 0x01
#define cudaEventDisableTiming 0x02
#define cudaHostAllocDefault 0x00
#define cudaMemAttachGlobal 0x01
#define cudaDeviceScheduleAuto 0x00

#define CUDART_VERSION 13000

/* ---- runtime API ------------------------------------------------------------
 * Everything is synchronous: a launch has finished when it returns, and
 * streams and events only order what is already in order. */
cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int device);
cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaDeviceReset(void);
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config);
cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value);
cudaError_t cudaDeviceGetLimit(size_t *value, cudaLimit limit);
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
cudaError_t cudaDriverGetVersion(int *version);
cudaError_t cudaRuntimeGetVersion(int *version);

cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char *cudaGetErrorString(cudaError_t error);
const char *cudaGetErrorName(cudaError_t error);

cudaError_t cudaMalloc(void **ptr, size_t size);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemset(void *ptr, int value, size_t count);
cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream);

cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);

cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);

/* Kernel attributes: the emulator records the opt-in dynamic shared memory
 * size and the non-portable cluster size per kernel address and checks
 * launches against them; required cluster dimensions abort (the emulator
 * takes cluster dimensions from cudaLaunchKernelEx only). */
cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value);
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *func);
cudaError_t cudaFuncSetCacheConfig(const void *func, cudaFuncCache config);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *func,
                                                          int block_size, size_t dynamic_smem);
/* Clusters of the launch's size that are resident at once: an H100's count,
 * capped by what the emulator holds at once (EMU_MAX_RESIDENT threads). */
cudaError_t cudaOccupancyMaxActiveClusters(int *clusters, const void *func,
                                           const cudaLaunchConfig_t *config);
/* Launches with void ** arguments: their types are unknown here, so they
 * abort (cudaLaunchKernelEx with typed arguments works: cuda_emu.h). */
cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
                             size_t smem, cudaStream_t stream);
cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                        size_t smem, cudaStream_t stream);

/* ---- the emulator's own interface ---------------------------------------------
 * Used by cuda_emu.h and by the emulator's tests; a lesson never calls these. */

/* The index variables of the running CUDA thread. The scheduler rewrites
 * them at every switch between threads (one OS thread runs everything). */
extern uint3 emu_thread_idx, emu_block_idx, emu_block_dim, emu_grid_dim;

typedef struct {
    const char *file;    /* where the <<<>>> is (after the rewrite)        */
    int line;
    const char *kernel;  /* the kernel expression as written               */
    const void *func;    /* its address, or NULL (a deduced template)      */
    dim3 grid, block;
    size_t smem;
    cudaStream_t stream;
    dim3 cluster;        /* CTAs per cluster (1, 1, 1: no cluster launch)  */
    int cooperative;     /* 1: every CTA resident at once (grid.sync)      */
} emu_launch_config;

/* Runs the grid: every thread of every block calls invoke(ctx), which calls
 * the kernel with the launch's arguments. Returns (and records as the last
 * error) what a GPU would report. */
cudaError_t emu_launch(const emu_launch_config *config, void (*invoke)(void *ctx), void *ctx);

/* Block-wide barrier and its counting variants (kind: 0 plain, 1 count,
 * 2 and, 3 or); returns the count / and / or of pred over the block. */
int emu_barrier(int kind, int pred, const char *file, int line);

/* Warp collectives: every lane of mask must call the same op with the same
 * mask. value: the caller's bits; arg: src lane, delta or lane mask. */
enum {
    EMU_OP_SHFL_IDX, EMU_OP_SHFL_UP, EMU_OP_SHFL_DOWN, EMU_OP_SHFL_XOR,
    EMU_OP_SYNCWARP, EMU_OP_BALLOT, EMU_OP_ANY, EMU_OP_ALL,
    EMU_OP_REDUCE_ADD, EMU_OP_REDUCE_MIN, EMU_OP_REDUCE_MAX,
    EMU_OP_REDUCE_AND, EMU_OP_REDUCE_OR, EMU_OP_REDUCE_XOR, EMU_OP_COUNT
};
unsigned long long emu_warp_op(int op, unsigned int mask, unsigned long long value, int arg,
                               int width, int is_signed, const char *file, int line);
unsigned int emu_activemask(void);

/* Thread block clusters and grid-wide waits (cooperative_groups.h and
 * cuda/atomic of common/emu/include). The CTAs of a cluster run together,
 * as fibers; so do the CTAs of a cooperative launch; in any other launch
 * a CTA whose threads all wait (a spin on a flag) lets the next CTA of the
 * grid start, as a GPU with room for it would. */
extern dim3 emu_cluster_dim; /* the running launch's cluster dimensions */
void emu_cluster_arrive(const char *file, int line);
void emu_cluster_wait(const char *file, int line);
void emu_grid_sync(const char *file, int line);
/* Where CTA `rank` of the caller's cluster has the shared variable that
 * the caller has at p. */
void *emu_map_shared_rank(const void *p, unsigned rank, const char *file, int line);
/* An acquire (or relaxed atomic) load of size bytes at p, as a spin-wait
 * polls a flag: a thread that polls the same word at the same place again,
 * having seen the same value and done nothing else, is spinning: it waits
 * until another thread changes the word (or is reported as deadlocked). */
unsigned long long emu_poll(const void *p, int size, const char *file, int line);
/* After a release store or read-modify-write: the threads that wait for
 * the word run before the releasing thread goes on (a flag published
 * before its data shows). */
void emu_release(const char *file, int line);
/* __nanosleep: a spin-wait's pause; other threads and CTAs run first. */
void emu_nap(const char *file, int line);
/* Atomics count as progress for the deadlock detection (no switch). */
extern unsigned long long emu_atomic_ops;

/* Base of the block's dynamic shared memory (extern __shared__): one fixed
 * address for the whole process, so the rewritten declaration can be a
 * static pointer; every launch poisons (0xFF bytes: NaN floats) and fences
 * the size it asked for. */
void *emu_dynamic_smem(void);

/* Called after every __shared__ declaration (the rewriter adds it): the
 * first call in a block fills the variable with 0xFF bytes. Returns 0. */
int emu_shared_touch(void *p, size_t bytes);

/* A feature the emulator does not have, reached at run time (inline PTX,
 * cooperative launch, ...): prints where and aborts. */
void emu_unsupported(const char *file, int line, const char *what) __attribute__((noreturn));

/* The text of the last error the emulator reported (a divergent barrier, a
 * bad shuffle, ...), for the emulator's tests; "" if none. */
const char *emu_last_error_text(void);

/* Warp order inside each block (see cuda_emu.h): */
enum { EMU_ORDER_ALTERNATE = 0, EMU_ORDER_FORWARD = 1, EMU_ORDER_REVERSE = 2 };
void emu_set_order(int order);

#ifdef __cplusplus
}
#endif
#endif
