/* The CPU emulator's runtime: device memory, streams and events, and the
 * scheduler that runs every CUDA thread of the resident CTAs as a fiber.
 * cuda_emu.h's header comment describes the model; this file implements
 * it. One OS thread does everything: control passes from one fiber to the
 * next only where a thread waits for others (a barrier, a warp collective,
 * a cluster barrier, a spin-wait) or has finished, and a CTA starts when
 * no resident CTA can go on.
 *
 * Why fibers and not OS threads: a block has up to 1024 threads and a test
 * launches thousands of blocks; a switch between fibers costs a few
 * nanoseconds and no system call (the prototype measured 1.6 s against
 * 39 s with one OS thread per CUDA thread). Why one OS thread: no locks,
 * atomics are plain read-modify-writes, and every run is deterministic, so
 * a failure found once is found every time. */
#define _GNU_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, sigaltstack, pthread_getattr_np */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "emu_runtime.h"

#if defined(__SANITIZE_ADDRESS__)
#define EMU_ASAN 1
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#else
#define EMU_ASAN 0
#endif

/* x86-64 switches fibers with the fifteen instructions below (about 20 ns
 * per thread per barrier or shuffle, all costs included); anything else,
 * or -DEMU_UCONTEXT, uses swapcontext, which is correct everywhere but
 * makes a system call per switch (sigprocmask): about 10 times slower. */
#if defined(__x86_64__) && !defined(EMU_UCONTEXT)
#define EMU_ASM_SWITCH 1
#else
#define EMU_ASM_SWITCH 0
#include <ucontext.h>
#endif

/* ---- the emulated device ----------------------------------------------------
 * An H100's limits (SMs, shared memory, grid and block sizes, clusters of
 * up to 16 CTAs, cooperative launch), so that lessons that size their
 * launches from the device take the same paths as on the course's
 * reference GPU. Memory: half of the host's. CTAs resident at once: as
 * many as an H100 holds (2048 threads and 228 KB of shared memory per
 * SM), each thread a fiber with its own stack, made only when a launch
 * needs that many at once (CTAs that wait for each other); at most
 * EMU_MAX_RESIDENT threads (default: an H100's 270 336). */
#define EMU_SMS 132
#define EMU_SMEM_DEFAULT (48 * 1024)
#define EMU_SMEM_OPTIN (227 * 1024)
/* The 48 KB a block gets without opting in hold its static __shared__
 * arrays too, whose size the CPU does not know: take them as 1 KB, the
 * most common/check.h's SMEM_OPT_IN_ABOVE allows for. */
#define EMU_STATIC_SMEM 1024
#define EMU_SMEM_PER_SM (228 * 1024)
#define EMU_L2_BYTES (50 * 1024 * 1024)
#define EMU_MAX_THREADS 1024
#define EMU_RESIDENT_DEFAULT (2048 * EMU_SMS)
#define EMU_GUARDED_FIBERS 1024 /* fibers with a guard page each; the rest share maps */
#define EMU_FIBER_CHUNK 64      /* fibers per shared map */
#define EMU_STACK_CANARY 0xEC   /* the lowest bytes of a stack without its own guard page */
#define EMU_MAX_CLUSTER 16
#define EMU_STATIC_SMEM_CAP (64 * 1024) /* __shared__ variables of one kernel (a GPU allows 48 KB) */
#define EMU_CANARY 0xA5 /* fills the bytes between a buffer's end and the next 256 */

static const char *const EMU_NAME = "CPU emulator (common/emu, no GPU)";

/* The index variables of the running CUDA thread (see emu_runtime.h). */
uint3 emu_thread_idx, emu_block_idx, emu_block_dim, emu_grid_dim;
dim3 emu_cluster_dim;
unsigned long long emu_atomic_ops;

static size_t page_size(void)
{
    static size_t p;
    if (!p) p = (size_t)sysconf(_SC_PAGESIZE);
    return p;
}

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* ---- errors -------------------------------------------------------------------
 * As on a GPU: a failed call returns its error and leaves it as the "last
 * error" (cudaGetLastError returns and clears it); a kernel that fails
 * leaves a sticky error that every later call returns until
 * cudaDeviceReset. The emulator prints what it found to stderr, lines
 * starting with "emu: ", and keeps the text for emu_last_error_text. */
static cudaError_t last_error = cudaSuccess, sticky_error = cudaSuccess;
static char error_text[8192];
static size_t error_len;

static cudaError_t api(cudaError_t e)
{
    if (e != cudaSuccess) last_error = e;
    return e;
}

static void text_reset(void)
{
    error_len = 0;
    error_text[0] = 0;
}

__attribute__((format(printf, 1, 2))) static void text_add(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (error_len < sizeof error_text) {
        int n = vsnprintf(error_text + error_len, sizeof error_text - error_len, fmt, ap);
        if (n > 0) error_len += (size_t)n;
        if (error_len > sizeof error_text - 1) error_len = sizeof error_text - 1;
    }
    va_end(ap);
}

/* Prints error_text, each line prefixed with "emu: ". */
static void text_print(void)
{
    const char *p = error_text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(stderr, "emu: %.*s\n", n, p);
        p += n + (nl ? 1 : 0);
    }
    fflush(stderr);
}

const char *emu_last_error_text(void) { return error_text; }

/* ---- startup -------------------------------------------------------------------- */
#if EMU_ASAN
static void asan_report(const char *report);
#endif
static const void *main_stack_bottom; /* the scheduler's stack, for ASan */
static size_t main_stack_size;
static int initialised;
static int warp_order = EMU_ORDER_ALTERNATE;
static size_t fiber_stack_bytes;
static int max_resident = EMU_RESIDENT_DEFAULT; /* threads resident at once */
static unsigned watchdog_s = 300;
static void install_fault_handlers(void);

static void emu_init(void)
{
    if (initialised) return;
    initialised = 1;
    const char *o = getenv("EMU_ORDER");
    if (o && !strcmp(o, "forward")) warp_order = EMU_ORDER_FORWARD;
    else if (o && !strcmp(o, "reverse")) warp_order = EMU_ORDER_REVERSE;
    const char *k = getenv("EMU_STACK_KB");
    /* AddressSanitizer's redzones make every frame larger. */
    fiber_stack_bytes = (size_t)(k && atoi(k) > 0 ? atoi(k) : EMU_ASAN ? 256 : 64) * 1024;
    fiber_stack_bytes = round_up(fiber_stack_bytes, page_size());
    const char *w = getenv("EMU_TIMEOUT");
    if (w) watchdog_s = (unsigned)atoi(w);
    const char *r = getenv("EMU_MAX_RESIDENT");
    if (r && atoi(r) > 0) max_resident = atoi(r) < 1024 ? 1024 : atoi(r) > EMU_RESIDENT_DEFAULT ? EMU_RESIDENT_DEFAULT : atoi(r);
#if EMU_ASAN
    /* ASan must be told the scheduler's stack whenever a fiber switches
     * back to it: the program's own stack. */
    pthread_attr_t attr;
    if (!pthread_getattr_np(pthread_self(), &attr)) {
        void *addr;
        pthread_attr_getstack(&attr, &addr, &main_stack_size);
        main_stack_bottom = addr;
        pthread_attr_destroy(&attr);
    }
    __asan_set_error_report_callback(asan_report);
#endif
    if (!getenv("EMU_QUIET"))
        fprintf(stderr, "emu: CUDA kernels in this program run on the CPU emulator (common/emu), "
                        "not on a GPU: results are checked as on a GPU, timings mean nothing\n");
    install_fault_handlers();
}

void emu_set_order(int order)
{
    emu_init();
    warp_order = order;
}

__attribute__((noreturn)) static void die(const char *what)
{
    fprintf(stderr, "emu: fatal: %s (%s)\n", what, strerror(errno));
    abort();
}

/* ---- device memory -----------------------------------------------------------------
 * Every cudaMalloc buffer is recorded, so that copies and memsets can be
 * checked against it and a fault can be explained. Without ASan a buffer
 * gets its own mapping, placed so that it ends (rounded up to 256 bytes,
 * cudaMalloc's alignment) at an inaccessible guard page: a kernel reading
 * past the end faults at once. The bytes between the end and the next 256
 * hold a canary, checked after every launch, which catches small writes
 * past the end. Under ASan the buffer comes from ASan's malloc, whose
 * redzones catch both, to the byte. New memory is filled with 0xFF bytes
 * (NaN as floats), so a kernel that reads what nobody wrote shows it. */
typedef struct {
    char *ptr;
    size_t size;
    char *map;        /* mmap'd region (NULL under ASan or for host memory) */
    size_t map_size;  /* including the guard page                           */
    int host;         /* 1: cudaMallocHost, 2: cudaMallocManaged (cudaFree's) */
} emu_alloc;

static emu_alloc *allocs;
static int nallocs, cap_allocs;
static size_t device_bytes;

static size_t total_memory(void)
{
    static size_t total;
    if (!total) {
        long pages = sysconf(_SC_PHYS_PAGES);
        total = pages > 0 ? (size_t)pages * page_size() / 2 : (size_t)4 << 30;
    }
    return total;
}

static emu_alloc *find_alloc(const void *p, size_t n)
{
    const char *c = (const char *)p;
    for (int i = 0; i < nallocs; i++)
        if (c >= allocs[i].ptr && c + n <= allocs[i].ptr + allocs[i].size && c + n >= c)
            return &allocs[i];
    return NULL;
}

static cudaError_t do_alloc(void **out, size_t size, int host)
{
    emu_init();
    if (!out) return api(cudaErrorInvalidValue);
    *out = NULL;
    if (sticky_error) return sticky_error;
    if (size == 0) return cudaSuccess;
    if (!host && size > total_memory() - device_bytes) return api(cudaErrorMemoryAllocation);
    if (nallocs == cap_allocs) {
        cap_allocs = cap_allocs ? 2 * cap_allocs : 64;
        allocs = (emu_alloc *)realloc(allocs, (size_t)cap_allocs * sizeof *allocs);
        if (!allocs) die("out of host memory");
    }
    emu_alloc a = {0, size, 0, 0, host};
    size_t padded = round_up(size, 256);
    if (EMU_ASAN || host) {
        void *p = NULL;
        if (posix_memalign(&p, 256, size)) return api(cudaErrorMemoryAllocation);
        a.ptr = (char *)p;
    } else {
        size_t body = round_up(padded, page_size());
        a.map_size = body + page_size();
        void *m = mmap(NULL, a.map_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) return api(cudaErrorMemoryAllocation);
        a.map = (char *)m;
        if (mprotect(a.map + body, page_size(), PROT_NONE)) die("mprotect");
        a.ptr = a.map + body - padded;
        memset(a.ptr + size, EMU_CANARY, padded - size);
    }
    memset(a.ptr, 0xFF, size);
    if (!host) device_bytes += size;
    allocs[nallocs++] = a;
    *out = a.ptr;
    return cudaSuccess;
}

static cudaError_t do_free(void *p, int host)
{
    emu_init();
    if (!p) return cudaSuccess;
    for (int i = 0; i < nallocs; i++) {
        /* managed memory is host memory here, freed by cudaFree */
        if (allocs[i].ptr != p || (allocs[i].host != host && !(host == 0 && allocs[i].host == 2))) continue;
        if (allocs[i].map) munmap(allocs[i].map, allocs[i].map_size);
        else free(allocs[i].ptr);
        if (!allocs[i].host) device_bytes -= allocs[i].size;
        allocs[i] = allocs[--nallocs];
        return sticky_error ? sticky_error : cudaSuccess;
    }
    fprintf(stderr, "emu: %s(%p): not a pointer returned by %s\n", host ? "cudaFreeHost" : "cudaFree",
            p, host ? "cudaMallocHost" : "cudaMalloc");
    return api(cudaErrorInvalidValue);
}

cudaError_t cudaMalloc(void **ptr, size_t size) { return do_alloc(ptr, size, 0); }
cudaError_t cudaFree(void *ptr) { return do_free(ptr, 0); }
cudaError_t cudaMallocHost(void **ptr, size_t size) { return do_alloc(ptr, size, 1); }
cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
    (void)flags;
    return do_alloc(ptr, size, 1);
}
cudaError_t cudaFreeHost(void *ptr) { return do_free(ptr, 1); }
cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags)
{
    (void)flags;
    return do_alloc(ptr, size, 2);
}

/* A device-side range of a copy or memset must lie inside one buffer, as
 * the GPU's driver requires ("invalid argument" otherwise). */
static int check_device_range(const char *call, const char *which, const void *p, size_t n)
{
    if (n == 0 || find_alloc(p, n)) return 1;
    fprintf(stderr, "emu: %s: the %s range [%p, +%zu bytes) is not inside one buffer from "
                    "cudaMalloc/cudaMallocHost (a host pointer, a freed buffer, or past the end?)\n",
            call, which, p, n);
    return 0;
}

static cudaError_t do_copy(const char *call, void *dst, const void *src, size_t n,
                           cudaMemcpyKind kind)
{
    emu_init();
    if (sticky_error) return sticky_error;
    int dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    int src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind == cudaMemcpyDefault) {
        dst_dev = find_alloc(dst, 1) != NULL;
        src_dev = find_alloc(src, 1) != NULL;
    } else if ((unsigned)kind > cudaMemcpyDefault) {
        return api(cudaErrorInvalidMemcpyDirection);
    }
    if ((dst_dev && !check_device_range(call, "destination", dst, n)) ||
        (src_dev && !check_device_range(call, "source", src, n)))
        return api(cudaErrorInvalidValue);
    if (n) memmove(dst, src, n);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind)
{
    return do_copy("cudaMemcpy", dst, src, count, kind);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    (void)stream;
    return do_copy("cudaMemcpyAsync", dst, src, count, kind);
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                         size_t height, cudaMemcpyKind kind)
{
    if (width > dpitch || width > spitch) return api(cudaErrorInvalidValue);
    for (size_t r = 0; r < height; r++) {
        cudaError_t e = do_copy("cudaMemcpy2D", (char *)dst + r * dpitch,
                                (const char *)src + r * spitch, width, kind);
        if (e) return e;
    }
    return cudaSuccess;
}

/* Streams run in order on the emulator: as cudaMemcpy2D. */
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width,
                              size_t height, cudaMemcpyKind kind, cudaStream_t stream)
{
    (void)stream;
    return cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind);
}

cudaError_t cudaMemset(void *ptr, int value, size_t count)
{
    emu_init();
    if (sticky_error) return sticky_error;
    if (!check_device_range("cudaMemset", "destination", ptr, count))
        return api(cudaErrorInvalidValue);
    if (count) memset(ptr, value, count);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *ptr, int value, size_t count, cudaStream_t stream)
{
    (void)stream;
    return cudaMemset(ptr, value, count);
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    emu_init();
    if (sticky_error) return sticky_error;
    if (free_bytes) *free_bytes = total_memory() - device_bytes;
    if (total_bytes) *total_bytes = total_memory();
    return cudaSuccess;
}

/* After a launch: a canary that changed means the kernel wrote past the end
 * of a buffer, into bytes that are still inside its 256-byte rounding. */
static int check_canaries(void)
{
    for (int i = 0; i < nallocs; i++) {
        emu_alloc *a = &allocs[i];
        if (!a->map) continue;
        size_t padded = round_up(a->size, 256);
        for (size_t j = a->size; j < padded; j++) {
            if ((unsigned char)a->ptr[j] != EMU_CANARY) {
                text_add("a kernel wrote past the end of a cudaMalloc buffer of %zu bytes at %p: "
                         "byte %zu after its end changed\n", a->size, (void *)a->ptr, j - a->size);
                memset(a->ptr + a->size, EMU_CANARY, padded - a->size);
                return 0;
            }
        }
    }
    return 1;
}

/* ---- the device --------------------------------------------------------------------- */
cudaError_t cudaGetDeviceCount(int *count)
{
    emu_init();
    if (!count) return api(cudaErrorInvalidValue);
    *count = 1;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device) return api(cudaErrorInvalidValue);
    *device = 0;
    return sticky_error;
}

cudaError_t cudaSetDevice(int device)
{
    emu_init();
    return device == 0 ? sticky_error : api(cudaErrorInvalidDevice);
}

cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
    (void)flags;
    return sticky_error;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int device)
{
    emu_init();
    if (!p) return api(cudaErrorInvalidValue);
    if (device != 0) return api(cudaErrorInvalidDevice);
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", EMU_NAME);
    p->totalGlobalMem = total_memory();
    p->sharedMemPerBlock = EMU_SMEM_DEFAULT;
    p->regsPerBlock = 65536;
    p->warpSize = 32;
    p->memPitch = (size_t)1 << 31;
    p->maxThreadsPerBlock = EMU_MAX_THREADS;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->totalConstMem = 65536;
    p->major = 9;
    p->minor = 0;
    p->textureAlignment = 512;
    p->multiProcessorCount = EMU_SMS;
    p->concurrentKernels = 1;
    p->unifiedAddressing = 1;
    p->memoryBusWidth = 5120;
    p->l2CacheSize = EMU_L2_BYTES;
    p->maxThreadsPerMultiProcessor = 2048;
    p->sharedMemPerMultiprocessor = EMU_SMEM_PER_SM;
    p->regsPerMultiprocessor = 65536;
    p->managedMemory = 1;
    p->cooperativeLaunch = 1;
    p->sharedMemPerBlockOptin = EMU_SMEM_OPTIN;
    p->maxBlocksPerMultiProcessor = 32;
    p->reservedSharedMemPerBlock = 1024;
    p->clusterLaunch = 1;
    return sticky_error;
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr, int device)
{
    emu_init();
    if (!value) return api(cudaErrorInvalidValue);
    if (device != 0) return api(cudaErrorInvalidDevice);
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = p.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = p.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = p.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = p.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = p.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = p.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)p.sharedMemPerBlock; break;
    case cudaDevAttrTotalConstantMemory: *value = (int)p.totalConstMem; break;
    case cudaDevAttrWarpSize: *value = 32; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = p.regsPerBlock; break;
    case cudaDevAttrClockRate: *value = 0; break;       /* no clock to speak of */
    case cudaDevAttrMemoryClockRate: *value = 0; break;
    case cudaDevAttrMultiProcessorCount: *value = p.multiProcessorCount; break;
    case cudaDevAttrConcurrentKernels: *value = 1; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = p.memoryBusWidth; break;
    case cudaDevAttrL2CacheSize: *value = p.l2CacheSize; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = p.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrComputeCapabilityMajor: *value = p.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = p.minor; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = (int)p.sharedMemPerMultiprocessor; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = p.regsPerMultiprocessor; break;
    case cudaDevAttrCooperativeLaunch: *value = 1; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)p.sharedMemPerBlockOptin; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = p.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrMaxPersistingL2CacheSize: *value = 0; break;
    case cudaDevAttrClusterLaunch: *value = 1; break;
    default:
        fprintf(stderr, "emu: cudaDeviceGetAttribute: attribute %d is not emulated\n", (int)attr);
        return api(cudaErrorInvalidValue);
    }
    return sticky_error;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v) return api(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v) return api(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    emu_init();
    return sticky_error; /* every launch has already finished */
}

cudaError_t cudaDeviceReset(void)
{
    emu_init();
    sticky_error = last_error = cudaSuccess;
    return cudaSuccess;
}

cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config)
{
    (void)config;
    return sticky_error;
}

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value)
{
    (void)limit;
    (void)value;
    return sticky_error;
}

cudaError_t cudaDeviceGetLimit(size_t *value, cudaLimit limit)
{
    if (!value) return api(cudaErrorInvalidValue);
    *value = limit == cudaLimitStackSize ? 1024 : (size_t)8 << 20;
    return sticky_error;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = sticky_error ? sticky_error : last_error;
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) { return sticky_error ? sticky_error : last_error; }

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
#define NAME(x) case x: return #x;
    NAME(cudaSuccess) NAME(cudaErrorInvalidValue) NAME(cudaErrorMemoryAllocation)
    NAME(cudaErrorInitializationError) NAME(cudaErrorInvalidConfiguration)
    NAME(cudaErrorInvalidDevicePointer) NAME(cudaErrorInvalidMemcpyDirection)
    NAME(cudaErrorInvalidDeviceFunction) NAME(cudaErrorNoDevice) NAME(cudaErrorInvalidDevice)
    NAME(cudaErrorInvalidResourceHandle) NAME(cudaErrorNotReady) NAME(cudaErrorIllegalAddress)
    NAME(cudaErrorLaunchOutOfResources) NAME(cudaErrorLaunchTimeout) NAME(cudaErrorAssert)
    NAME(cudaErrorMisalignedAddress) NAME(cudaErrorLaunchFailure)
    NAME(cudaErrorCooperativeLaunchTooLarge) NAME(cudaErrorNotSupported)
    NAME(cudaErrorInvalidClusterSize) NAME(cudaErrorUnknown)
#undef NAME
    }
    return "cudaErrorUnknown";
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidDeviceFunction: return "invalid device function";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress:
        return "an illegal memory access was encountered (CPU emulator: see the 'emu:' lines above)";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
    case cudaErrorLaunchTimeout: return "the launch timed out and was terminated";
    case cudaErrorAssert: return "device-side assert triggered";
    case cudaErrorMisalignedAddress: return "misaligned address";
    case cudaErrorLaunchFailure:
        return "unspecified launch failure (CPU emulator: see the 'emu:' lines above)";
    case cudaErrorCooperativeLaunchTooLarge: return "too many blocks in cooperative launch";
    case cudaErrorNotSupported: return "operation not supported (by the CPU emulator)";
    case cudaErrorInvalidClusterSize: return "invalid cluster size";
    default: return "unknown error";
    }
}

/* ---- streams and events -------------------------------------------------------------
 * Work is done when it is issued, so a stream is only a handle and an event
 * only a timestamp of the host clock. */
#define STREAM_MAGIC 0x5354524dU
#define EVENT_MAGIC 0x45564e54U
struct emu_stream { unsigned magic; };
struct emu_event { unsigned magic; int recorded; double ms; };

static int valid_stream(cudaStream_t s)
{
    return s == NULL || s == cudaStreamLegacy || s == cudaStreamPerThread || s->magic == STREAM_MAGIC;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags)
{
    (void)flags;
    emu_init();
    if (!s) return api(cudaErrorInvalidValue);
    *s = (cudaStream_t)calloc(1, sizeof **s);
    if (!*s) return api(cudaErrorMemoryAllocation);
    (*s)->magic = STREAM_MAGIC;
    return sticky_error;
}

cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, 0); }

cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!s || s == cudaStreamLegacy || s == cudaStreamPerThread || s->magic != STREAM_MAGIC)
        return api(cudaErrorInvalidResourceHandle);
    s->magic = 0;
    free(s);
    return sticky_error;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    if (!valid_stream(s)) return api(cudaErrorInvalidResourceHandle);
    return sticky_error;
}

cudaError_t cudaStreamQuery(cudaStream_t s) { return cudaStreamSynchronize(s); }

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    (void)flags;
    if (!valid_stream(s) || !e || e->magic != EVENT_MAGIC) return api(cudaErrorInvalidResourceHandle);
    return sticky_error;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    (void)flags;
    emu_init();
    if (!e) return api(cudaErrorInvalidValue);
    *e = (cudaEvent_t)calloc(1, sizeof **e);
    if (!*e) return api(cudaErrorMemoryAllocation);
    (*e)->magic = EVENT_MAGIC;
    return sticky_error;
}

cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    if (!e || e->magic != EVENT_MAGIC) return api(cudaErrorInvalidResourceHandle);
    e->magic = 0;
    free(e);
    return sticky_error;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    if (!e || e->magic != EVENT_MAGIC || !valid_stream(s)) return api(cudaErrorInvalidResourceHandle);
    e->recorded = 1;
    e->ms = now_ms();
    return sticky_error;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (!e || e->magic != EVENT_MAGIC) return api(cudaErrorInvalidResourceHandle);
    return sticky_error;
}

cudaError_t cudaEventQuery(cudaEvent_t e) { return cudaEventSynchronize(e); }

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    if (!ms) return api(cudaErrorInvalidValue);
    if (!a || !b || a->magic != EVENT_MAGIC || b->magic != EVENT_MAGIC)
        return api(cudaErrorInvalidResourceHandle);
    if (!a->recorded || !b->recorded) return api(cudaErrorInvalidResourceHandle);
    *ms = (float)(b->ms - a->ms);
    return sticky_error;
}

/* ---- kernel attributes -------------------------------------------------------------- */
typedef struct { const void *func; int max_dynamic_smem, nonportable; } func_attr;
static func_attr func_attrs[256];
static int nfunc_attrs, any_max_dynamic_smem, any_nonportable;

static func_attr *find_func(const void *f)
{
    for (int i = 0; i < nfunc_attrs; i++)
        if (func_attrs[i].func == f) return &func_attrs[i];
    return NULL;
}

static func_attr *add_func(const void *f)
{
    func_attr *a = find_func(f);
    if (!a && nfunc_attrs < (int)(sizeof func_attrs / sizeof func_attrs[0])) {
        a = &func_attrs[nfunc_attrs++];
        a->func = f;
        a->max_dynamic_smem = EMU_SMEM_DEFAULT;
        a->nonportable = 0;
    }
    return a;
}

/* Clusters above 8 CTAs need the kernel's opt-in (as on an H100). For a
 * deduced template (no address) any kernel's opt-in counts. */
static int cluster_limit(const void *func)
{
    const func_attr *a = func ? find_func(func) : NULL;
    return (func ? a && a->nonportable : any_nonportable) ? EMU_MAX_CLUSTER : 8;
}

cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttribute attr, int value)
{
    emu_init();
    if (!func) return api(cudaErrorInvalidDeviceFunction);
    if (attr == cudaFuncAttributePreferredSharedMemoryCarveout ||
        attr == cudaFuncAttributeClusterSchedulingPolicyPreference)
        return sticky_error;
    if (attr == cudaFuncAttributeNonPortableClusterSizeAllowed) {
        func_attr *a = add_func(func);
        if (a) a->nonportable = value != 0;
        if (value) any_nonportable = 1;
        return sticky_error;
    }
    if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize) {
        char what[200];
        snprintf(what, sizeof what, "cudaFuncSetAttribute(attribute %d): cluster dimensions fixed "
                 "per kernel (give them to cudaLaunchKernelEx instead)", (int)attr);
        emu_unsupported("(host code)", 0, what);
    }
    if (value < 0 || value > EMU_SMEM_OPTIN) {
        fprintf(stderr, "emu: cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize, %d): "
                        "above the device's opt-in limit of %d bytes\n", value, EMU_SMEM_OPTIN);
        return api(cudaErrorInvalidValue);
    }
    func_attr *a = add_func(func);
    if (a) a->max_dynamic_smem = value;
    if (value > any_max_dynamic_smem) any_max_dynamic_smem = value;
    return sticky_error;
}

/* Resident blocks per SM of an H100 from threads, block count, shared
 * memory and registers. The compiler's register count is unknown on the
 * CPU: every thread is taken to use EMU_REGS_PER_THREAD of the SM's 65536
 * (what sm_90 gives the course's kernels that hold 32 floats a thread in
 * registers: 60-64), so a 1024-thread block fits once per SM, a 512-thread
 * one twice, as on the GPU where lesson 8's dispatcher asks. */
#define EMU_REGS_PER_THREAD 64

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *attr, const void *func)
{
    if (!attr || !func) return api(cudaErrorInvalidValue);
    memset(attr, 0, sizeof *attr);
    func_attr *a = find_func(func);
    attr->maxThreadsPerBlock = EMU_MAX_THREADS;
    attr->numRegs = EMU_REGS_PER_THREAD; /* unknown on the CPU: blocks_per_sm's assumption */
    attr->ptxVersion = attr->binaryVersion = 90;
    attr->maxDynamicSharedSizeBytes = a ? a->max_dynamic_smem : EMU_SMEM_DEFAULT;
    return sticky_error;
}

cudaError_t cudaFuncSetCacheConfig(const void *func, cudaFuncCache config)
{
    (void)func;
    (void)config;
    return sticky_error;
}

static int blocks_per_sm(int block_size, size_t dynamic_smem)
{
    int warps = (block_size + 31) / 32;
    int n = 64 / warps; /* 2048 threads = 64 warps per SM */
    const int by_regs = 65536 / (warps * 32 * EMU_REGS_PER_THREAD);
    if (by_regs < n) n = by_regs;
    if (n > 32) n = 32;
    size_t per_block = dynamic_smem + 1024; /* the driver's reserve */
    int by_smem = (int)(EMU_SMEM_PER_SM / per_block);
    return by_smem < n ? by_smem : n;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *blocks, const void *func,
                                                          int block_size, size_t dynamic_smem)
{
    (void)func;
    if (!blocks || block_size <= 0 || block_size > EMU_MAX_THREADS) return api(cudaErrorInvalidValue);
    *blocks = blocks_per_sm(block_size, dynamic_smem);
    return sticky_error;
}

/* The cluster dimension and cooperative flag among a launch's attributes. */
static void launch_attributes(const cudaLaunchConfig_t *config, dim3 *cluster, int *cooperative)
{
    *cluster = (dim3){1, 1, 1};
    *cooperative = 0;
    for (unsigned i = 0; config->attrs && i < config->numAttrs; i++) {
        const cudaLaunchAttribute *a = &config->attrs[i];
        if (a->id == cudaLaunchAttributeClusterDimension)
            *cluster = (dim3){a->val.clusterDim.x, a->val.clusterDim.y, a->val.clusterDim.z};
        else if (a->id == cudaLaunchAttributeCooperative)
            *cooperative = a->val.cooperative != 0;
    }
}

cudaError_t cudaOccupancyMaxActiveClusters(int *clusters, const void *func, const cudaLaunchConfig_t *config)
{
    emu_init();
    if (!clusters || !config) return api(cudaErrorInvalidValue);
    dim3 cl;
    int coop;
    launch_attributes(config, &cl, &coop);
    const unsigned long long c = (unsigned long long)cl.x * cl.y * cl.z;
    const unsigned long long bt = (unsigned long long)config->emu_block_dim.x * config->emu_block_dim.y * config->emu_block_dim.z;
    *clusters = 0;
    if (!c || !bt || bt > EMU_MAX_THREADS) return api(cudaErrorInvalidValue);
    if (c > (unsigned long long)cluster_limit(func)) return api(cudaErrorInvalidClusterSize);
    if (config->dynamicSmemBytes > EMU_SMEM_OPTIN) return sticky_error;
    /* An H100 spreads a cluster over the SMs of one GPC: about SMs x
     * blocks per SM / cluster size in all. The emulator holds fewer. */
    const unsigned long long gpu = (unsigned long long)blocks_per_sm((int)bt, config->dynamicSmemBytes) * EMU_SMS / c;
    const unsigned long long emu = (unsigned long long)max_resident / (c * bt);
    *clusters = (int)(gpu < emu ? gpu : emu);
    return sticky_error;
}

cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args, size_t smem,
                             cudaStream_t stream)
{
    (void)func, (void)grid, (void)block, (void)args, (void)smem, (void)stream;
    emu_unsupported("(host code)", 0, "cudaLaunchKernel (use <<<>>> or cudaLaunchKernelEx: the emulator "
                                      "needs the argument types, which void ** loses)");
}

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 grid, dim3 block, void **args,
                                        size_t smem, cudaStream_t stream)
{
    (void)func, (void)grid, (void)block, (void)args, (void)smem, (void)stream;
    emu_unsupported("(host code)", 0, "cudaLaunchCooperativeKernel (use cudaLaunchKernelEx with "
                                      "cudaLaunchAttributeCooperative: the emulator needs the argument "
                                      "types, which void ** loses)");
}

/* ---- fibers ----------------------------------------------------------------------------
 * A CTA resident on the emulated device occupies a slot; thread i of slot
 * k is fiber k x blockDim + i, for every CTA that slot holds during a
 * launch: it loops "run the kernel for my thread; mark it exited; give
 * control back" and never returns, so starting a thread costs no setup.
 * Its stack is an mmap'd region with an inaccessible page at the bottom, so
 * a stack overflow faults instead of corrupting the neighbour. Most
 * launches need one slot: a CTA runs to its end before the next starts. */
enum {
    T_RUN, T_BAR, T_WARP, T_EXIT,
    T_CBAR,    /* waits at a cluster barrier                                  */
    T_GBAR,    /* waits at grid.sync() (cooperative launch)                   */
    T_SPIN,    /* polls a word that has not changed (acquire load in a loop)  */
    T_NAP,     /* in __nanosleep: a spin-wait's pause                         */
    T_PREEMPT  /* made a release: the threads waiting for it go first         */
};

typedef struct emu_slot emu_slot;

typedef struct emu_thread {
#if EMU_ASM_SWITCH
    void *sp;
#else
    ucontext_t uc;
#endif
    char *map;            /* guard page + stack */
    char *stack;          /* lowest usable byte */
    size_t stack_size;
    emu_slot *slot;       /* the CTA it belongs to */
    uint3 tid;
    int index, warp, lane;
    int state;
    const char *file;     /* where it waits */
    int line;
    /* warp collective */
    int op, arg, width, is_signed;
    unsigned int mask;
    unsigned long long value, result;
    /* barrier */
    int bar_kind, pred, bar_result;
    /* cluster and grid barriers: the phase it arrived at */
    unsigned cphase, gphase;
    int carrived;
    /* spin-waits: its last poll, and what a spinning thread waits on */
    unsigned long long nops;   /* barriers, collectives and releases so far */
    const void *poll_p;
    const char *poll_file;
    int poll_line;
    unsigned long long poll_val, poll_nops;
    const void *watch;
    int watch_size;
    unsigned long long watch_val;
    const char *nap_file;
    int nap_line;
    void *asan_fake;
} emu_thread;

typedef struct { unsigned exist, exited, waiting; } emu_warp;

struct emu_slot {
    int used, done;            /* done: every thread exited (kept for its cluster) */
    uint3 bid;
    unsigned long long seq;    /* among ready CTAs the lowest runs first */
    int index, base;           /* slot number; its threads are pool[base ...] */
    int nthreads, nwarps, exited, reverse, ready;
    int cluster, rank;         /* index in G.clusters; rank in the cluster */
    emu_warp warps[EMU_MAX_THREADS / 32];
    const void *touched[64];   /* __shared__ variables poisoned in this CTA */
    int ntouched;
    char *image;               /* its shared memory while another CTA's is live */
    int has_image;
};

typedef struct {
    int used, nctas, ndone;
    int slots[EMU_MAX_CLUSTER]; /* by rank */
    unsigned phase, arrived, expected;
} emu_cluster;

static emu_thread *pool;     /* max_resident fibers, stacks made on demand */
static int nfibers;          /* how many have a stack */
static emu_thread *cur;      /* the running CUDA thread; NULL in the scheduler */
static emu_slot *cs;         /* the running CTA */
#if EMU_ASM_SWITCH
static void *sched_sp;
#else
static ucontext_t sched_uc;
#endif

static struct {
    const emu_launch_config *config;
    void (*invoke)(void *);
    void *ctx;
} L;                         /* the running launch */

/* The running launch's CTAs, clusters and shared variables. */
static struct {
    int bt;                  /* threads per CTA */
    int max_slots;           /* CTAs resident at once, at most */
    int high;                /* slots used so far in this launch */
    int nresident, failed;
    unsigned long long nunits, next_unit, seq, launches;
    int unit_ctas, reverse_units;
    dim3 cgrid;              /* the grid in clusters */
    emu_slot *live;          /* whose shared memory the program's addresses hold */
    struct { void *p; size_t bytes, off; } vars[64];
    int nvars;
    size_t vars_bytes;
    unsigned long long progress, round_progress;
    int preempt_naps;
    unsigned gphase, garrived, gexpected;
} G;
static emu_slot *slots;      /* room for the CTAs of the launch resident at once */
static emu_cluster *clusters;
static int nslots_alloc;

#if EMU_ASM_SWITCH
/* Saves the callee-saved registers on the current stack, stores the stack
 * pointer in *save, loads `load` and restores the same from there.
 * Everything else is caller-saved in the SysV ABI, so the C caller has
 * already saved what it needs. MXCSR and the x87 control word are left
 * alone: nothing in a kernel changes the rounding mode, and saving them
 * (ldmxcsr serialises) cost a third of each switch. */
void emu_switch_x86_64(void **save, void *load);
__asm__(".text\n"
        ".p2align 4\n"
        ".type emu_switch_x86_64, @function\n"
        "emu_switch_x86_64:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size emu_switch_x86_64, .-emu_switch_x86_64\n");
#endif

static void fiber_main(void) __attribute__((noreturn));

/* A fresh context at the top of t's stack that starts in fiber_main. */
static void fiber_prepare(emu_thread *t)
{
#if EMU_ASM_SWITCH
    /* The layout emu_switch_x86_64 pops: six registers, then the return
     * address fiber_main; above it a null "return address of fiber_main"
     * that ends backtraces, placed so that fiber_main starts with the
     * stack aligned as after a call (rsp + 8 a multiple of 16). */
    void **sp = (void **)(t->stack + t->stack_size);
    *--sp = NULL;
    *--sp = (void *)(uintptr_t)fiber_main;
    for (int i = 0; i < 6; i++) *--sp = NULL;
    t->sp = sp;
#else
    if (getcontext(&t->uc)) die("getcontext");
    t->uc.uc_stack.ss_sp = t->stack;
    t->uc.uc_stack.ss_size = t->stack_size;
    t->uc.uc_link = NULL;
    makecontext(&t->uc, fiber_main, 0);
#endif
#if EMU_ASAN
    /* Frames abandoned by a failed launch leave their redzones poisoned. */
    ASAN_UNPOISON_MEMORY_REGION(t->stack, t->stack_size);
#endif
}

static void ensure_fibers(int n)
{
    if (!pool) {
        pool = (emu_thread *)calloc((size_t)max_resident, sizeof *pool);
        if (!pool) die("out of host memory");
    }
    /* The first fibers (every launch's first CTA) get a guard page each:
     * a stack overflow faults at once. Linux allows 65530 maps per process,
     * so the others share a map per EMU_FIBER_CHUNK, and a canary at the
     * bottom of each stack is checked when its CTA ends. */
    static char *chunk;
    static int left;
    for (; nfibers < n; nfibers++) {
        emu_thread *t = &pool[nfibers];
        const size_t guard = page_size();
        if (nfibers < EMU_GUARDED_FIBERS) {
            void *m = mmap(NULL, guard + fiber_stack_bytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (m == MAP_FAILED) die("cannot map a fiber stack");
            if (mprotect(m, guard, PROT_NONE)) die("mprotect");
            t->map = (char *)m;
            t->stack = t->map + guard;
        } else {
            if (!left) {
                void *m = mmap(NULL, guard + EMU_FIBER_CHUNK * fiber_stack_bytes, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
                if (m == MAP_FAILED) die("cannot map fiber stacks");
                if (mprotect(m, guard, PROT_NONE)) die("mprotect");
                chunk = (char *)m + guard;
                left = EMU_FIBER_CHUNK;
            }
            t->map = NULL;
            t->stack = chunk;
            chunk += fiber_stack_bytes;
            left--;
            memset(t->stack, EMU_STACK_CANARY, 64);
        }
        t->stack_size = fiber_stack_bytes;
        t->index = nfibers;
        fiber_prepare(t);
    }
}

/* 0 when the stack of a fiber without a guard page has overflowed. */
static int stack_intact(const emu_thread *t)
{
    if (t->map) return 1;
    for (int i = 0; i < 64; i++)
        if ((unsigned char)t->stack[i] != EMU_STACK_CANARY) return 0;
    return 1;
}

/* After a failed launch some fibers stopped in the middle of the kernel:
 * start them all afresh. */
static void reset_fibers(void)
{
    for (int i = 0; i < nfibers; i++) fiber_prepare(&pool[i]);
}

/* ---- the schedule ---------------------------------------------------------------------
 * Warps in order (reversed in odd blocks); inside the current warp, lanes
 * in order, pass after pass, as long as some lane could run; then the next
 * warp. When no thread can run, the scheduler (on the program's own stack)
 * releases a barrier or reports why the block is stuck, and the walk
 * starts again from the first warp. A thread that must wait switches
 * straight to the next runnable thread, not through the scheduler: one
 * switch per wait instead of two. */
static struct {
    int wi, li, progress; /* position: warp (in order), lane (in order) */
} S;

static emu_thread *next_thread(void);
static int resolve_block(emu_slot *s);

static void asan_start(void **fake, const void *bottom, size_t size)
{
#if EMU_ASAN
    __sanitizer_start_switch_fiber(fake, bottom, size);
#else
    (void)fake, (void)bottom, (void)size;
#endif
}

static void asan_finish(void *fake)
{
#if EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
#else
    (void)fake;
#endif
}

/* From the scheduler to thread t; returns when a thread switches back to
 * the scheduler. */
static void switch_to(emu_thread *t)
{
    void *fake = NULL;
    cur = t;
    emu_thread_idx = t->tid;
    asan_start(&fake, t->stack, t->stack_size);
#if EMU_ASM_SWITCH
    emu_switch_x86_64(&sched_sp, t->sp);
#else
    if (swapcontext(&sched_uc, &t->uc)) die("swapcontext");
#endif
    asan_finish(fake);
    cur = NULL;
}

/* The running thread gives way: to the next runnable thread, or to the
 * scheduler when there is none (or when the block failed). Returns when
 * some switch comes back to this thread. */
static void yield(void)
{
    emu_thread *t = cur, *n = G.failed ? NULL : next_thread();
    if (n == t) return; /* it is itself the next one to run */
    if (n) {
        cur = n;
        emu_thread_idx = n->tid;
        asan_start(&t->asan_fake, n->stack, n->stack_size);
#if EMU_ASM_SWITCH
        emu_switch_x86_64(&t->sp, n->sp);
#else
        if (swapcontext(&t->uc, &n->uc)) die("swapcontext");
#endif
    } else {
        asan_start(&t->asan_fake, main_stack_bottom, main_stack_size);
#if EMU_ASM_SWITCH
        emu_switch_x86_64(&t->sp, sched_sp);
#else
        if (swapcontext(&t->uc, &sched_uc)) die("swapcontext");
#endif
    }
    asan_finish(t->asan_fake);
}

static void thread_exited(emu_thread *t);

static void fiber_main(void)
{
    asan_finish(NULL);
    for (;;) {
        L.invoke(L.ctx);
        thread_exited(cur);
        yield();
    }
}

/* ---- reporting a kernel's bug ----------------------------------------------------------- */
static const char *op_name(int op)
{
    static const char *const names[] = {
        "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__syncwarp",
        "__ballot_sync", "__any_sync", "__all_sync", "__reduce_add_sync", "__reduce_min_sync",
        "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
    };
    return op >= 0 && op < EMU_OP_COUNT ? names[op] : "?";
}

static const char *barrier_name(int kind)
{
    static const char *const names[] = {"__syncthreads", "__syncthreads_count",
                                        "__syncthreads_and", "__syncthreads_or"};
    return kind >= 0 && kind < 4 ? names[kind] : "?";
}

/* Starts error_text with the kernel and block. */
static void text_kernel_header(const char *what)
{
    const emu_launch_config *c = L.config;
    text_reset();
    text_add("error: %s in kernel %s (launched at %s:%d with grid (%u,%u,%u), block (%u,%u,%u)), "
             "block (%u,%u,%u)\n", what, c->kernel, c->file, c->line, c->grid.x, c->grid.y,
             c->grid.z, c->block.x, c->block.y, c->block.z, emu_block_idx.x, emu_block_idx.y,
             emu_block_idx.z);
}

/* Called on a fiber when its thread does something wrong: the launch is
 * abandoned, and this fiber is never resumed (reset_fibers restarts it). */
__attribute__((noreturn)) static void fail_in_thread(void)
{
    G.failed = 1;
    for (;;) yield();
}

static void describe_thread(const emu_thread *t)
{
    text_add("thread (%u,%u,%u) = warp %d lane %d", t->tid.x, t->tid.y, t->tid.z, t->warp, t->lane);
}

static void describe_state(const emu_thread *t)
{
    switch (t->state) {
    case T_EXIT: text_add("has exited"); break;
    case T_BAR: text_add("waits at %s %s:%d", barrier_name(t->bar_kind), t->file, t->line); break;
    case T_WARP:
        text_add("waits at %s(0x%08x) %s:%d", op_name(t->op), t->mask, t->file, t->line);
        break;
    case T_CBAR: text_add("waits at the cluster barrier %s:%d", t->file, t->line); break;
    case T_GBAR: text_add("waits at grid.sync() %s:%d", t->file, t->line); break;
    case T_SPIN: {
        unsigned long long v = 0;
        memcpy(&v, t->watch, (size_t)t->watch_size);
        text_add("spins at %s:%d on the %d-byte word at %p, which stays %llu", t->file, t->line,
                 t->watch_size, t->watch, v);
        break;
    }
    case T_NAP: text_add("pauses in __nanosleep at %s:%d (a spin-wait)", t->file, t->line); break;
    case T_PREEMPT: text_add("has made a release at %s:%d", t->file, t->line); break;
    default: text_add("is running"); break;
    }
}

/* ---- warp collectives ---------------------------------------------------------------------
 * A lane that reaches a collective records its operands and waits; the
 * lane that completes the mask computes every lane's result at once, so no
 * lane can overwrite an operand another still needs. Every rule the CUDA
 * documentation leaves undefined is an error here: a mask without the
 * caller, a mask naming lanes that do not exist or have exited, lanes that
 * disagree on the operation or the mask, a shuffle reading a lane outside
 * the mask. */
static emu_thread *need_thread(const char *what, const char *file, int line)
{
    if (!cur) {
        fprintf(stderr, "emu: %s called outside a kernel at %s:%d\n", what, file, line);
        abort();
    }
    return cur;
}

/* The lane a shuffle reads for `lane`, or -1 where the caller keeps its
 * own value (a source outside its width-wide segment, per the docs). */
static int shuffle_source(int op, int lane, int arg, int width)
{
    /* The hardware reads only the low 5 bits of the lane operand. */
    const int seg = lane & ~(width - 1), pos = lane & (width - 1);
    if (op != EMU_OP_SHFL_IDX) arg &= 31;
    switch (op) {
    case EMU_OP_SHFL_IDX: return seg + (arg & (width - 1));
    case EMU_OP_SHFL_UP: return (unsigned)arg > (unsigned)pos ? -1 : lane - arg;
    case EMU_OP_SHFL_DOWN: return (unsigned)pos + (unsigned)arg >= (unsigned)width ? -1 : lane + arg;
    default: { /* xor: a later segment is out of reach, an earlier one is not */
        int src = lane ^ arg;
        return src < 0 || src >= seg + width ? -1 : src;
    }
    }
}

static void complete_warp_op(emu_warp *w, emu_thread *last)
{
    const unsigned mask = last->mask;
    emu_thread *lanes = &pool[last->slot->base + last->warp * 32];
    for (int l = 0; l < 32; l++) {
        if (!(mask >> l & 1)) continue;
        emu_thread *t = &lanes[l];
        if (t->op != last->op || t->mask != mask) {
            text_kernel_header("lanes disagree on a warp collective");
            text_add("lane %d: ", t->lane);
            describe_state(t);
            text_add("\nlane %d: ", last->lane);
            describe_state(last);
            text_add("\nevery lane named in the mask must call the same intrinsic with the same mask\n");
            fail_in_thread();
        }
    }
    const int op = last->op;
    unsigned long long agg = 0;
    if (op == EMU_OP_BALLOT || op == EMU_OP_ANY || op == EMU_OP_ALL) {
        for (int l = 0; l < 32; l++)
            if ((mask >> l & 1) && lanes[l].value) agg |= 1ull << l;
    } else if (op >= EMU_OP_REDUCE_ADD) {
        int first = 1;
        for (int l = 0; l < 32; l++) {
            if (!(mask >> l & 1)) continue;
            unsigned v = (unsigned)lanes[l].value;
            unsigned a = (unsigned)agg;
            if (first) a = v;
            else if (op == EMU_OP_REDUCE_ADD) a += v;
            else if (op == EMU_OP_REDUCE_AND) a &= v;
            else if (op == EMU_OP_REDUCE_OR) a |= v;
            else if (op == EMU_OP_REDUCE_XOR) a ^= v;
            else if (op == EMU_OP_REDUCE_MIN)
                a = last->is_signed ? ((int)v < (int)a ? v : a) : (v < a ? v : a);
            else
                a = last->is_signed ? ((int)v > (int)a ? v : a) : (v > a ? v : a);
            agg = a;
            first = 0;
        }
    }
    for (int l = 0; l < 32; l++) {
        if (!(mask >> l & 1)) continue;
        emu_thread *t = &lanes[l];
        switch (op) {
        case EMU_OP_SHFL_IDX: case EMU_OP_SHFL_UP: case EMU_OP_SHFL_DOWN: case EMU_OP_SHFL_XOR: {
            int src = shuffle_source(op, l, t->arg, t->width);
            if (src < 0) {
                t->result = t->value;
            } else if (!(mask >> src & 1)) {
                text_kernel_header("a shuffle reads a lane that does not take part");
                text_add("%s(0x%08x, value, %d, width %d) at %s:%d: lane %d reads lane %d, which is "
                         "not in the mask (on a GPU the value is undefined)\n",
                         op_name(op), mask, t->arg, t->width, t->file, t->line, l, src);
                fail_in_thread();
            } else {
                t->result = lanes[src].value;
            }
            break;
        }
        case EMU_OP_BALLOT: t->result = agg; break;
        case EMU_OP_ANY: t->result = agg != 0; break;
        case EMU_OP_ALL: t->result = agg == mask; break;
        case EMU_OP_SYNCWARP: t->result = 0; break;
        default: t->result = agg; break;
        }
    }
    for (int l = 0; l < 32; l++)
        if (mask >> l & 1) lanes[l].state = T_RUN;
    w->waiting &= ~mask;
}

unsigned long long emu_warp_op(int op, unsigned int mask, unsigned long long value, int arg,
                               int width, int is_signed, const char *file, int line)
{
    emu_thread *t = need_thread(op_name(op), file, line);
    emu_warp *w = &t->slot->warps[t->warp];
    const unsigned me = 1u << t->lane;
    t->nops++;
    if (op <= EMU_OP_SHFL_XOR && (width < 1 || width > 32 || (width & (width - 1)))) {
        text_kernel_header("bad shuffle width");
        text_add("%s at %s:%d: width %d is not a power of two from 1 to 32 (", op_name(op), file,
                 line, width);
        describe_thread(t);
        text_add(")\n");
        fail_in_thread();
    }
    if (!(mask & me)) {
        text_kernel_header("a warp collective's mask leaves out its caller");
        text_add("%s(0x%08x) at %s:%d called by ", op_name(op), mask, file, line);
        describe_thread(t);
        text_add(", whose bit 1 << %d is not in the mask\n", t->lane);
        fail_in_thread();
    }
    if (mask & ~w->exist) {
        int l = __builtin_ctz(mask & ~w->exist);
        text_kernel_header("a warp collective names lanes that do not exist");
        text_add("%s(0x%08x) at %s:%d: lane %d is in the mask, but warp %d of this block has only "
                 "%d threads (blockDim (%u,%u,%u)); called by ", op_name(op), mask, file, line, l,
                 t->warp, __builtin_popcount(w->exist), emu_block_dim.x, emu_block_dim.y,
                 emu_block_dim.z);
        describe_thread(t);
        text_add("\n");
        fail_in_thread();
    }
    if (mask & w->exited) {
        int l = __builtin_ctz(mask & w->exited);
        text_kernel_header("a warp collective waits for a lane that has exited");
        text_add("%s(0x%08x) at %s:%d called by ", op_name(op), mask, file, line);
        describe_thread(t);
        text_add(": lane %d of the mask has already returned from the kernel (an early return "
                 "before a full-mask shuffle?)\n", l);
        fail_in_thread();
    }
    t->op = op;
    t->mask = mask;
    t->value = value;
    t->arg = arg;
    t->width = width;
    t->is_signed = is_signed;
    t->file = file;
    t->line = line;
    t->state = T_WARP;
    w->waiting |= me;
    if ((w->waiting & mask) == mask) complete_warp_op(w, t);
    if (t->state == T_WARP) yield();
    return t->result;
}

unsigned int emu_activemask(void)
{
    emu_thread *t = need_thread("__activemask", "?", 0);
    const emu_warp *w = &t->slot->warps[t->warp];
    return w->exist & ~w->exited;
}

static void thread_exited(emu_thread *t)
{
    emu_warp *w = &t->slot->warps[t->warp];
    const unsigned me = 1u << t->lane;
    t->state = T_EXIT;
    t->slot->exited++;
    G.progress++;
    w->exited |= me;
    for (int l = 0; l < 32 && w->waiting; l++) {
        const emu_thread *o = &pool[t->slot->base + t->warp * 32 + l];
        if ((w->waiting >> l & 1) && (o->mask & me)) {
            text_kernel_header("a warp collective waits for a lane that has exited");
            describe_thread(t);
            text_add(" returned from the kernel while lane %d waits for it in ", l);
            text_add("%s(0x%08x) at %s:%d\n", op_name(o->op), o->mask, o->file, o->line);
            fail_in_thread();
        }
    }
}

/* ---- barriers --------------------------------------------------------------------------- */
int emu_barrier(int kind, int pred, const char *file, int line)
{
    emu_thread *t = need_thread(barrier_name(kind), file, line);
    t->nops++;
    t->state = T_BAR;
    t->bar_kind = kind;
    t->pred = pred != 0;
    t->file = file;
    t->line = line;
    yield();
    return t->bar_result;
}

/* No thread of CTA s can run: every one has exited, waits at a barrier or
 * in a warp collective, or waits for other CTAs (a cluster barrier,
 * grid.sync, a spin-wait, a release). Releases the barrier when the whole
 * block is at the same one (0); with threads that wait for other CTAs the
 * CTA is parked (1) until they come; otherwise explains why the block is
 * stuck (-1). */
static int resolve_block(emu_slot *s)
{
    const int n = s->nthreads;
    emu_thread *const th = &pool[s->base];
    emu_thread *first_bar = NULL, *first_exit = NULL, *other_bar = NULL;
    int at_bar = 0;
    for (int i = 0; i < n; i++)
        if (th[i].state >= T_CBAR) return 1;
    for (int i = 0; i < n; i++) {
        emu_thread *t = &th[i];
        if (t->state == T_WARP) {
            /* It waits for lanes that will never come: say where they are. */
            text_kernel_header("a warp collective can never complete (deadlock)");
            describe_thread(t);
            text_add(" waits in %s(0x%08x) at %s:%d; lanes it waits for:\n", op_name(t->op),
                     t->mask, t->file, t->line);
            int shown = 0;
            for (int l = 0; l < 32 && shown < 4; l++) {
                const emu_thread *o = &th[t->warp * 32 + l];
                if (!(t->mask >> l & 1) || (o->state == T_WARP && o->op == t->op && o->mask == t->mask))
                    continue;
                text_add("  lane %d ", l);
                describe_state(o);
                text_add("\n");
                shown++;
            }
            return -1;
        }
        if (t->state == T_BAR) {
            at_bar++;
            if (!first_bar) first_bar = t;
            else if (!other_bar && (t->line != first_bar->line || t->bar_kind != first_bar->bar_kind ||
                                    (t->file != first_bar->file && strcmp(t->file, first_bar->file))))
                other_bar = t;
        } else if (t->state == T_EXIT && !first_exit) {
            first_exit = t;
        }
    }
    if (first_exit || other_bar) {
        text_kernel_header("divergent __syncthreads (not every thread of the block reaches it)");
        text_add("%d of %d threads wait at %s %s:%d, e.g. ", at_bar, n,
                 barrier_name(first_bar->bar_kind), first_bar->file, first_bar->line);
        describe_thread(first_bar);
        text_add("\n");
        if (other_bar) {
            text_add("while ");
            describe_thread(other_bar);
            text_add(" waits at %s %s:%d (another barrier)\n", barrier_name(other_bar->bar_kind),
                     other_bar->file, other_bar->line);
        }
        if (first_exit) {
            text_add("while %d threads have exited, e.g. ", s->exited);
            describe_thread(first_exit);
            text_add("\n");
        }
        text_add("a barrier must be reached by all threads of the block or by none; on a GPU this "
                 "hangs or silently breaks\n");
        return -1;
    }
    /* Everyone is at the same barrier: release it. */
    int count = 0;
    for (int i = 0; i < n; i++) count += th[i].pred;
    const int kind = first_bar->bar_kind;
    const int result = kind == 1 ? count : kind == 2 ? count == n : kind == 3 ? count > 0 : 0;
    for (int i = 0; i < n; i++) {
        th[i].bar_result = result;
        th[i].state = T_RUN;
    }
    return 0;
}

/* ---- shared memory ------------------------------------------------------------------------
 * Static __shared__ variables are static storage (the rewriter adds
 * `static`), and after each declaration the rewriter adds a call of
 * emu_shared_touch for every variable it declares. The first thread of a
 * block to pass the declaration fills the variable with 0xFF bytes (NaN as
 * floats); so does every launch for the dynamic part. A thread that reads
 * shared memory nobody in its block wrote reads NaN, as stale as it would
 * be on a GPU, only visibly so. (A section holding all of them would be
 * simpler, but g++ ignores section attributes on statics of templates.) */
static char *dyn_smem;        /* EMU_SMEM_OPTIN bytes (+ a guard page without ASan) */
static size_t dyn_smem_span;  /* bytes usable, without ASan: page-rounded */
static size_t dyn_smem_size;  /* bytes the running launch asked for */

void *emu_dynamic_smem(void)
{
    if (!dyn_smem) {
        size_t body = round_up(EMU_SMEM_OPTIN, page_size());
#if EMU_ASAN
        if (posix_memalign((void **)&dyn_smem, 256, body)) die("out of host memory");
#else
        void *m = mmap(NULL, body + page_size(), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) die("cannot map shared memory");
        dyn_smem = (char *)m;
        if (mprotect(dyn_smem + body, page_size(), PROT_NONE)) die("mprotect");
#endif
        dyn_smem_span = body;
    }
    return dyn_smem;
}

/* Makes exactly `bytes` of dynamic shared memory accessible (to the page
 * without ASan, to the byte with it). */
static void fence_dynamic_smem(size_t bytes)
{
    emu_dynamic_smem();
    size_t body = round_up(EMU_SMEM_OPTIN, page_size());
#if EMU_ASAN
    ASAN_UNPOISON_MEMORY_REGION(dyn_smem, bytes);
    ASAN_POISON_MEMORY_REGION(dyn_smem + bytes, body - bytes);
    dyn_smem_span = bytes;
#else
    size_t span = round_up(bytes, page_size());
    if (span != dyn_smem_span) {
        if (mprotect(dyn_smem, span, PROT_READ | PROT_WRITE) ||
            (span < body && mprotect(dyn_smem + span, body - span, PROT_NONE)))
            die("mprotect");
        dyn_smem_span = span;
    }
#endif
    dyn_smem_size = bytes;
#if !EMU_ASAN
    if (dyn_smem_span > bytes) memset(dyn_smem + bytes, 0xFF, dyn_smem_span - bytes);
#endif
}

/* CTAs of bt threads with smem bytes of dynamic shared memory resident at
 * once: as on an H100, and within EMU_MAX_RESIDENT threads. */
static int resident_ctas(int bt, size_t smem)
{
    const int gpu = blocks_per_sm(bt, smem) * EMU_SMS, emu = max_resident / bt;
    const int n = gpu < emu ? gpu : emu;
    return n > 0 ? n : 1;
}

/* Every __shared__ variable a launch's CTAs declare is recorded, so that
 * its contents can be set aside while another CTA runs (below). */
static void record_shared(void *p, size_t bytes)
{
    for (int i = 0; i < G.nvars; i++)
        if (G.vars[i].p == p) return;
    if (G.nvars == (int)(sizeof G.vars / sizeof G.vars[0]) || G.vars_bytes + bytes > EMU_STATIC_SMEM_CAP)
        emu_unsupported(L.config ? L.config->file : "?", L.config ? L.config->line : 0,
                        "more than 64 __shared__ variables, or more than 64 KB of them, in one kernel");
    G.vars[G.nvars].p = p;
    G.vars[G.nvars].bytes = bytes;
    G.vars[G.nvars].off = G.vars_bytes;
    G.vars_bytes += round_up(bytes, 16);
    G.nvars++;
}

int emu_shared_touch(void *p, size_t bytes)
{
    if (!cur) return 0; /* a namespace-scope variable, initialised at startup */
    emu_slot *s = cur->slot;
    for (int i = 0; i < s->ntouched; i++)
        if (s->touched[i] == p) return 0;
    if (s->ntouched < (int)(sizeof s->touched / sizeof s->touched[0])) s->touched[s->ntouched++] = p;
    record_shared(p, bytes);
    memset(p, 0xFF, bytes);
    return 0;
}

/* ---- CTAs that run at the same time ----------------------------------------------------------
 * __shared__ variables are static storage and dynamic shared memory is one
 * buffer: they hold the shared memory of one CTA, the live one. When the
 * scheduler switches to another CTA, the live CTA's shared memory goes to
 * its image and the next one's comes back from its image (a fresh CTA
 * gets poison instead). Distributed shared memory (map_shared_rank) of a
 * CTA that is not live is its image. One CTA at a time (most launches)
 * never copies anything. Image layout: dynamic part at 0, the variables
 * from EMU_SMEM_OPTIN on. */
#define IMAGE_BYTES ((size_t)EMU_SMEM_OPTIN + EMU_STATIC_SMEM_CAP)

static void ensure_image(emu_slot *s)
{
    if (s->image) return;
    s->image = (char *)malloc(IMAGE_BYTES);
    if (!s->image) die("out of host memory");
    memset(s->image, 0xFF, IMAGE_BYTES);
}

static void poison_image(emu_slot *s)
{
    ensure_image(s);
    memset(s->image, 0xFF, dyn_smem_size);
    memset(s->image + EMU_SMEM_OPTIN, 0xFF, G.vars_bytes);
    s->has_image = 1;
}

static void make_live(emu_slot *s)
{
    if (G.live == s) return;
    emu_slot *o = G.live;
    if (o) {
        ensure_image(o);
        memcpy(o->image, dyn_smem, dyn_smem_size);
        for (int i = 0; i < G.nvars; i++)
            memcpy(o->image + EMU_SMEM_OPTIN + G.vars[i].off, G.vars[i].p, G.vars[i].bytes);
        o->has_image = 1;
    }
    if (s->has_image) {
        memcpy(dyn_smem, s->image, dyn_smem_size);
        for (int i = 0; i < G.nvars; i++)
            memcpy(G.vars[i].p, s->image + EMU_SMEM_OPTIN + G.vars[i].off, G.vars[i].bytes);
    } else if (dyn_smem_size) {
        memset(dyn_smem, 0xFF, dyn_smem_size); /* a fresh CTA; its variables are poisoned when declared */
    }
    G.live = s;
}

static void ensure_slots(int n)
{
    if (n <= nslots_alloc) return;
    slots = (emu_slot *)realloc(slots, (size_t)n * sizeof *slots);
    clusters = (emu_cluster *)realloc(clusters, (size_t)n * sizeof *clusters);
    if (!slots || !clusters) die("out of host memory");
    memset(slots + nslots_alloc, 0, (size_t)(n - nslots_alloc) * sizeof *slots);
    memset(clusters + nslots_alloc, 0, (size_t)(n - nslots_alloc) * sizeof *clusters);
    nslots_alloc = n;
}

/* Makes CTA bid resident in a free slot, its threads ready to start. */
static emu_slot *start_cta(uint3 bid, int cluster, int rank, unsigned long long seq)
{
    int k = 0;
    while (slots[k].used) k++; /* the caller made sure there is room */
    emu_slot *s = &slots[k];
    const uint3 bd = emu_block_dim;
    const int n = G.bt;
    if (k + 1 > G.high) G.high = k + 1;
    ensure_fibers((k + 1) * n);
    s->used = 1;
    s->done = 0;
    s->bid = bid;
    s->seq = seq;
    s->index = k;
    s->base = k * n;
    s->nthreads = n;
    s->nwarps = (n + 31) / 32;
    s->exited = 0;
    s->ready = 1;
    s->cluster = cluster;
    s->rank = rank;
    s->ntouched = 0;
    s->has_image = 0;
    for (int i = 0; i < n; i++) {
        emu_thread *t = &pool[s->base + i];
        t->slot = s;
        t->tid.x = (unsigned)i % bd.x;
        t->tid.y = (unsigned)i / bd.x % bd.y;
        t->tid.z = (unsigned)i / (bd.x * bd.y);
        t->warp = i / 32;
        t->lane = i % 32;
        t->state = T_RUN;
        t->op = -1;
        t->pred = 0;
        t->carrived = 0;
        t->nops = 0;
        t->poll_p = NULL;
        t->nap_file = NULL;
        t->nap_line = 0;
    }
    for (int w = 0; w < s->nwarps; w++) {
        int lanes = n - 32 * w < 32 ? n - 32 * w : 32;
        s->warps[w].exist = lanes == 32 ? ~0u : (1u << lanes) - 1;
        s->warps[w].exited = s->warps[w].waiting = 0;
    }
    const unsigned long long linear =
        bid.x + (unsigned long long)emu_grid_dim.x * (bid.y + (unsigned long long)emu_grid_dim.y * bid.z);
    s->reverse = warp_order == EMU_ORDER_REVERSE || (warp_order == EMU_ORDER_ALTERNATE && (linear & 1));
    G.nresident++;
    return s;
}

/* The next cluster of the grid (a single CTA outside cluster launches)
 * becomes resident, if there is one and room for it. Clusters start in
 * order of their index, or in reverse order (odd launches under the
 * default alternating order); the CTAs of odd clusters run in reverse
 * order of rank. */
static int admit_unit(void)
{
    if (G.next_unit >= G.nunits || G.nresident + G.unit_ctas > G.max_slots) return 0;
    const unsigned long long u = G.reverse_units ? G.nunits - 1 - G.next_unit : G.next_unit;
    G.next_unit++;
    const dim3 cd = emu_cluster_dim;
    const unsigned ux = (unsigned)(u % G.cgrid.x), uy = (unsigned)(u / G.cgrid.x % G.cgrid.y),
                   uz = (unsigned)(u / ((unsigned long long)G.cgrid.x * G.cgrid.y));
    int ci = 0;
    while (clusters[ci].used) ci++;
    emu_cluster *c = &clusters[ci];
    c->used = 1;
    c->nctas = G.unit_ctas;
    c->ndone = 0;
    c->phase = c->arrived = 0;
    c->expected = (unsigned)(G.unit_ctas * G.bt);
    const int rev = warp_order == EMU_ORDER_REVERSE || (warp_order == EMU_ORDER_ALTERNATE && (u & 1));
    for (int r = 0; r < G.unit_ctas; r++) {
        uint3 bid;
        bid.x = ux * cd.x + (unsigned)r % cd.x;
        bid.y = uy * cd.y + (unsigned)r / cd.x % cd.y;
        bid.z = uz * cd.z + (unsigned)r / (cd.x * cd.y);
        emu_slot *s = start_cta(bid, ci, r, G.seq + (unsigned long long)(rev ? G.unit_ctas - 1 - r : r));
        c->slots[r] = s->index;
    }
    G.seq += (unsigned long long)G.unit_ctas;
    G.progress++;
    return 1;
}

static void cta_header(const char *what, const emu_slot *s);

/* Every thread of s has exited. A CTA of a cluster keeps its slot until
 * the whole cluster has finished, its shared memory poisoned: a CTA that
 * reads it after it exited (no cluster barrier before the exit) reads NaN. */
static void cta_finished(emu_slot *s)
{
    emu_cluster *c = &clusters[s->cluster];
#if !EMU_ASAN
    /* Past the dynamic shared memory the launch asked for, up to the
     * guard page, the bytes hold 0xFF: a CTA that wrote there changed them. */
    for (size_t j = dyn_smem_size; j < dyn_smem_span; j++)
        if ((unsigned char)dyn_smem[j] != 0xFF) {
            cta_header("a write past the end of dynamic shared memory", s);
            text_add("byte %zu after the %zu bytes of dynamic shared memory the launch asked for was "
                     "written (by a thread of this CTA, or of a CTA resident with it)\n",
                     j - dyn_smem_size, dyn_smem_size);
            memset(dyn_smem + dyn_smem_size, 0xFF, dyn_smem_span - dyn_smem_size);
            G.failed = 1;
            return;
        }
#endif
    for (int i = 0; i < s->nthreads; i++)
        if (!stack_intact(&pool[s->base + i])) {
            const emu_thread *t = &pool[s->base + i];
            text_kernel_header("stack overflow of a CUDA thread");
            describe_thread(t);
            text_add(" used more than its %zu KB of stack (EMU_STACK_KB=... raises it)\n", fiber_stack_bytes / 1024);
            G.failed = 1;
            return;
        }
    s->done = 1;
    s->ready = 0;
    if (G.live == s) G.live = NULL;
    if (++c->ndone < c->nctas) {
        poison_image(s);
        return;
    }
    for (int r = 0; r < c->nctas; r++) slots[c->slots[r]].used = 0;
    G.nresident -= c->nctas;
    c->used = 0;
}

static void wake(emu_thread *t)
{
    t->state = T_RUN;
    t->slot->ready = 1;
}

static void wake_all(int state)
{
    for (int k = 0; k < G.high; k++) {
        emu_slot *s = &slots[k];
        if (!s->used || s->done) continue;
        for (int i = 0; i < s->nthreads; i++)
            if (pool[s->base + i].state == state) wake(&pool[s->base + i]);
    }
}

/* Runs CTA s as far as it can: its warps in order, each as far as it can,
 * releasing its __syncthreads as they fill. */
static void run_cta(emu_slot *s)
{
    cs = s;
    s->ready = 0;
    make_live(s);
    emu_block_idx = s->bid;
    for (;;) {
        S.wi = S.li = S.progress = 0;
        emu_thread *t = next_thread();
        if (t) {
            switch_to(t);
            if (G.failed) return;
            continue;
        }
        if (s->exited == s->nthreads) {
            cta_finished(s);
            return;
        }
        const int r = resolve_block(s);
        if (r < 0) G.failed = 1;
        if (r) return;
    }
}

static emu_slot *ready_cta(void)
{
    emu_slot *best = NULL;
    for (int k = 0; k < G.high; k++) {
        emu_slot *s = &slots[k];
        if (s->used && !s->done && s->ready && (!best || s->seq < best->seq)) best = s;
    }
    return best;
}

/* No resident CTA can run. In this order: threads whose polled word has
 * changed go on; after a release, threads pausing in __nanosleep look
 * first, then the releasing threads go on; another CTA starts, if there
 * is room; threads that spin or pause get one more try, if anything
 * happened since their last. 0: nothing can go on (a deadlock). */
static int unstick(void)
{
    int woke = 0, spin = 0, nap = 0, pre = 0;
    for (int k = 0; k < G.high; k++) {
        emu_slot *s = &slots[k];
        if (!s->used || s->done) continue;
        for (int i = 0; i < s->nthreads; i++) {
            emu_thread *t = &pool[s->base + i];
            if (t->state == T_SPIN) {
                if (memcmp(t->watch, &t->watch_val, (size_t)t->watch_size)) {
                    wake(t);
                    woke++;
                } else {
                    spin++;
                }
            } else if (t->state == T_NAP) {
                nap++;
            } else if (t->state == T_PREEMPT) {
                pre++;
            }
        }
    }
    if (woke) {
        G.progress++;
        return 1;
    }
    if (pre) {
        if (nap && !G.preempt_naps) {
            G.preempt_naps = 1;
            wake_all(T_NAP);
        } else {
            G.preempt_naps = 0;
            wake_all(T_PREEMPT);
        }
        return 1;
    }
    if (admit_unit()) return 1;
    if ((spin || nap) && G.progress + emu_atomic_ops != G.round_progress) {
        G.round_progress = G.progress + emu_atomic_ops;
        wake_all(T_NAP);
        wake_all(T_SPIN);
        return 1;
    }
    return 0;
}

static void report_stuck(void);

static int run_grid(void)
{
    for (;;) {
        if (G.failed) return -1;
        emu_slot *s = ready_cta();
        if (s) {
            run_cta(s);
            continue;
        }
        if (G.nresident == 0 && G.next_unit >= G.nunits) return 0;
        if (unstick()) continue;
        report_stuck();
        return -1;
    }
}

static emu_thread *next_thread(void)
{
    emu_slot *s = cs;
    const int nw = s->nwarps, n = s->nthreads;
    emu_thread *const th = &pool[s->base];
    while (S.wi < nw) {
        const int w = s->reverse ? nw - 1 - S.wi : S.wi;
        const int base = 32 * w, lanes = n - base < 32 ? n - base : 32;
        while (S.li < lanes) {
            emu_thread *t = &th[base + (s->reverse ? lanes - 1 - S.li : S.li)];
            S.li++;
            if (t->state == T_RUN) {
                S.progress = 1;
                return t;
            }
        }
        S.li = 0;
        if (S.progress) S.progress = 0; /* another pass over the same warp */
        else S.wi++;
    }
    return NULL;
}

/* ---- clusters, grid.sync, spin-waits ------------------------------------------------------------ */
static void cta_header(const char *what, const emu_slot *s)
{
    const uint3 keep = emu_block_idx;
    emu_block_idx = s->bid;
    text_kernel_header(what);
    emu_block_idx = keep;
}

static void describe_cta(const emu_slot *s)
{
    text_add("CTA (%u,%u,%u)", s->bid.x, s->bid.y, s->bid.z);
    if (clusters[s->cluster].nctas > 1) text_add(" (rank %d of its cluster)", s->rank);
}

static void release_cluster(emu_cluster *c)
{
    for (int r = 0; r < c->nctas; r++) {
        emu_slot *s = &slots[c->slots[r]];
        for (int i = 0; i < s->nthreads; i++) {
            emu_thread *t = &pool[s->base + i];
            if (t->state == T_CBAR && t->cphase != c->phase) wake(t);
        }
    }
}

void emu_cluster_arrive(const char *file, int line)
{
    emu_thread *t = need_thread("cluster barrier_arrive", file, line);
    emu_cluster *c = &clusters[t->slot->cluster];
    if (t->carrived) {
        text_kernel_header("a thread arrives at the cluster barrier twice without waiting");
        describe_thread(t);
        text_add(" at %s:%d: barrier_arrive() must be followed by barrier_wait() before the next "
                 "arrival (undefined on a GPU)\n", file, line);
        fail_in_thread();
    }
    t->carrived = 1;
    t->cphase = c->phase;
    t->nops++;
    G.progress++;
    if (++c->arrived == c->expected) {
        c->arrived = 0;
        c->phase++;
        release_cluster(c);
    }
}

void emu_cluster_wait(const char *file, int line)
{
    emu_thread *t = need_thread("cluster barrier_wait", file, line);
    emu_cluster *c = &clusters[t->slot->cluster];
    if (!t->carrived) {
        text_kernel_header("cluster barrier_wait() without barrier_arrive()");
        describe_thread(t);
        text_add(" at %s:%d waits at the cluster barrier without having arrived (undefined on a GPU)\n",
                 file, line);
        fail_in_thread();
    }
    t->carrived = 0;
    if (t->cphase != c->phase) return; /* every thread has arrived already */
    t->state = T_CBAR;
    t->file = file;
    t->line = line;
    yield();
}

void emu_grid_sync(const char *file, int line)
{
    emu_thread *t = need_thread("grid.sync()", file, line);
    if (!L.config->cooperative) {
        text_kernel_header("grid.sync() in a launch that is not cooperative");
        describe_thread(t);
        text_add(" at %s:%d: grid.sync() needs every CTA resident at once: launch with "
                 "cudaLaunchKernelEx and cudaLaunchAttributeCooperative (a GPU hangs or fails)\n", file, line);
        fail_in_thread();
    }
    t->nops++;
    G.progress++;
    t->gphase = G.gphase;
    if (++G.garrived == G.gexpected) {
        G.garrived = 0;
        G.gphase++;
        wake_all(T_GBAR);
        return;
    }
    t->state = T_GBAR;
    t->file = file;
    t->line = line;
    yield();
}

void *emu_map_shared_rank(const void *p, unsigned rank, const char *file, int line)
{
    emu_thread *t = need_thread("map_shared_rank", file, line);
    const emu_cluster *c = &clusters[t->slot->cluster];
    if (rank >= (unsigned)c->nctas) {
        text_kernel_header("map_shared_rank names a CTA that is not in the cluster");
        describe_thread(t);
        text_add(" at %s:%d asks for rank %u; the cluster has %d CTAs (ranks 0 to %d)\n", file, line,
                 rank, c->nctas, c->nctas - 1);
        fail_in_thread();
    }
    emu_slot *o = &slots[c->slots[rank]];
    if (o == t->slot) return (void *)p;
    const char *q = (const char *)p;
    size_t off = 0;
    int found = 0;
    if (dyn_smem && q >= dyn_smem && q < dyn_smem + dyn_smem_size) {
        off = (size_t)(q - dyn_smem);
        found = 1;
    }
    for (int i = 0; i < G.nvars && !found; i++) {
        const char *v = (const char *)G.vars[i].p;
        if (q >= v && q < v + G.vars[i].bytes) {
            off = EMU_SMEM_OPTIN + G.vars[i].off + (size_t)(q - v);
            found = 1;
        }
    }
    if (!found) {
        text_kernel_header("map_shared_rank of an address that is not shared memory");
        describe_thread(t);
        text_add(" at %s:%d maps %p, which is neither a __shared__ variable this CTA declared nor in "
                 "its dynamic shared memory\n", file, line, p);
        fail_in_thread();
    }
    if (!o->has_image) poison_image(o); /* it has not started: its variables are not written yet */
    return o->image + off;
}

unsigned long long emu_poll(const void *p, int size, const char *file, int line)
{
    unsigned long long v = 0;
    memcpy(&v, p, (size_t)size);
    emu_thread *t = cur;
    if (!t) return v;
    if (t->poll_p == p && t->poll_val == v && t->poll_nops == t->nops && t->poll_line == line &&
        (t->poll_file == file || !strcmp(t->poll_file, file))) {
        /* The same poll again, the same value, nothing done in between: a spin. */
        t->watch = p;
        t->watch_size = size;
        t->watch_val = v;
        t->state = T_SPIN;
        t->file = file;
        t->line = line;
        yield();
        v = 0;
        memcpy(&v, p, (size_t)size);
    } else if (t->poll_p != p || t->poll_val != v) {
        G.progress++;
    }
    t->poll_p = p;
    t->poll_val = v;
    t->poll_nops = t->nops;
    t->poll_file = file;
    t->poll_line = line;
    return v;
}

void emu_release(const char *file, int line)
{
    emu_thread *t = cur;
    if (!t) return;
    t->nops++;
    G.progress++;
    t->state = T_PREEMPT;
    t->file = file;
    t->line = line;
    yield();
}

void emu_nap(const char *file, int line)
{
    emu_thread *t = cur;
    if (!t) return;
    if (t->nap_line != line || !t->nap_file || strcmp(t->nap_file, file)) G.progress++;
    t->nap_file = file;
    t->nap_line = line;
    t->state = T_NAP;
    t->file = file;
    t->line = line;
    yield();
}

/* Nothing can go on. Says why: a cluster barrier that part of the cluster
 * never reaches, grid.sync() that part of the grid never reaches, a spin
 * on a word that nobody will change, or a block stuck on its own. */
/* The first thread, in slot order, of a CTA still running that is in state
 * a or b; its slot in *slot. */
static const emu_thread *first_waiting(int a, int b, emu_slot **slot)
{
    for (int k = 0; k < G.high; k++) {
        emu_slot *s = &slots[k];
        if (!s->used || s->done) continue;
        for (int i = 0; i < s->nthreads; i++) {
            const emu_thread *w = &pool[s->base + i];
            if ((int)w->state == a || (int)w->state == b) {
                *slot = s;
                return w;
            }
        }
    }
    return NULL;
}

static void report_stuck(void)
{
    emu_slot *first = NULL;
    for (int k = 0; k < G.high; k++)
        if (slots[k].used && !slots[k].done && (!first || slots[k].seq < first->seq)) first = &slots[k];
    if (!first) {
        text_kernel_header("the launch cannot go on (emulator error)");
        return;
    }
    emu_slot *s;
    const emu_thread *w;
    /* A cluster barrier somebody waits at. */
    if ((w = first_waiting(T_CBAR, T_GBAR, &s))) {
        const int grid = w->state == T_GBAR;
        const emu_cluster *c = &clusters[s->cluster];
        cta_header(grid ? "grid.sync() that not every thread of the grid reaches (deadlock)"
                        : "a cluster barrier that not every thread of the cluster reaches (deadlock)", s);
        text_add("%u of %u threads of the %s have arrived; ", grid ? G.garrived : c->arrived,
                 grid ? G.gexpected : c->expected, grid ? "grid" : "cluster");
        describe_cta(s);
        text_add(" ");
        describe_thread(w);
        text_add(" waits at %s:%d; threads that have not arrived:\n", w->file, w->line);
        int shown = 0;
        for (int j = 0; j < G.high && shown < 4; j++) {
            const emu_slot *o = &slots[j];
            if (!o->used || (!grid && o->cluster != s->cluster)) continue;
            for (int m = 0; m < o->nthreads && shown < 4; m++) {
                const emu_thread *x = &pool[o->base + m];
                const int arrived = grid ? x->state == T_GBAR
                                         : (x->carrived && x->cphase == c->phase) ||
                                               (x->state == T_CBAR && x->cphase == c->phase);
                if (arrived) continue;
                text_add("  ");
                describe_cta(o);
                text_add(" ");
                describe_thread(x);
                text_add(" ");
                describe_state(x);
                text_add("\n");
                shown++;
            }
        }
        text_add("every thread of every CTA of the %s must arrive (%s) before any can go on; on a "
                 "GPU this hangs\n", grid ? "grid" : "cluster",
                 grid ? "grid.sync()" : "cluster.sync(), or barrier_arrive() then barrier_wait()");
        return;
    }
    /* A spin or pause that nothing will end. */
    if ((w = first_waiting(T_SPIN, T_NAP, &s))) {
        cta_header("deadlock: a thread waits for a flag that nothing will set", s);
        describe_cta(s);
        text_add(" ");
        describe_thread(w);
        text_add(" ");
        describe_state(w);
        if (w->state == T_SPIN && w->nap_file)
            text_add(" (pausing in __nanosleep at %s:%d)", w->nap_file, w->nap_line);
        text_add("\nand no thread that could change it can run:");
        int shown = 0;
        for (int j = 0; j < G.high && shown < 4; j++) {
            const emu_slot *o = &slots[j];
            if (!o->used || o->done || o == s) continue;
            const emu_thread *x = &pool[o->base];
            for (int m = 0; m < o->nthreads; m++)
                if (pool[o->base + m].state != T_EXIT) {
                    x = &pool[o->base + m];
                    break;
                }
            text_add("\n  ");
            describe_cta(o);
            text_add(" ");
            describe_thread(x);
            text_add(" ");
            describe_state(x);
            shown++;
        }
        if (!shown) text_add(" no other CTA is resident");
        if (G.next_unit < G.nunits)
        {
            const int emu_bound = G.max_slots * G.bt + G.bt > max_resident;
            text_add("\nand no other CTA can start: %d CTAs of %d threads are resident, as many as %s; "
                     "the grid waits for a CTA that cannot start while these wait: %s",
                     G.nresident, G.bt,
                     emu_bound ? "the emulator holds (EMU_MAX_RESIDENT)"
                               : "an H100 holds at this block size and shared memory",
                     emu_bound ? "this grid is too large to emulate (a GPU may hold more at once)"
                               : "on a GPU this hangs too");
        }
        else
            text_add("\nevery CTA of the grid has started; on a GPU this hangs");
        text_add("\n");
        return;
    }
    cta_header("the launch cannot go on (deadlock)", first);
    describe_cta(first);
    text_add(": no thread can run\n");
}

/* ---- the launch --------------------------------------------------------------------------- */
static int check_config(const emu_launch_config *c, cudaError_t *err)
{
    const dim3 g = c->grid, b = c->block, cl = c->cluster;
    const char *why = NULL;
    char buf[400];
    unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    if (!g.x || !g.y || !g.z) why = "a grid dimension is 0";
    else if (!b.x || !b.y || !b.z) why = "a block dimension is 0";
    /* Past a limit, CUDA 13 answers cudaErrorInvalidValue (seen on an
       H100, driver 580), not cudaErrorInvalidConfiguration. */
    *err = why ? cudaErrorInvalidConfiguration : cudaErrorInvalidValue;
    if (why) {
    } else if (g.x > 2147483647u) why = "gridDim.x is above 2^31 - 1";
    else if (g.y > 65535 || g.z > 65535) why = "gridDim.y and gridDim.z must be at most 65535";
    else if (b.x > 1024 || b.y > 1024 || b.z > 64) why = "blockDim is limited to (1024, 1024, 64)";
    else if (threads > EMU_MAX_THREADS) why = "more than 1024 threads per block";
    else if (!valid_stream(c->stream)) {
        why = "not a stream";
        *err = cudaErrorInvalidResourceHandle;
    } else if (c->smem > EMU_SMEM_OPTIN) {
        snprintf(buf, sizeof buf, "%zu bytes of dynamic shared memory: above the device's limit of %d",
                 c->smem, EMU_SMEM_OPTIN);
        why = buf;
        *err = cudaErrorInvalidValue;
    } else if (c->smem > EMU_SMEM_DEFAULT - EMU_STATIC_SMEM) {
        const func_attr *a = c->func ? find_func(c->func) : NULL;
        int allowed = c->func ? (a ? a->max_dynamic_smem : EMU_SMEM_DEFAULT - EMU_STATIC_SMEM) : any_max_dynamic_smem;
        if ((size_t)allowed < c->smem) {
            snprintf(buf, sizeof buf, "%zu bytes of dynamic shared memory, above 48 KB less the static part, without "
                     "cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, >= %zu)",
                     c->smem, c->smem);
            why = buf;
            *err = cudaErrorInvalidValue;
        }
    }
    const unsigned long long csize = (unsigned long long)cl.x * cl.y * cl.z;
    if (!why && (!csize || g.x % cl.x || g.y % cl.y || g.z % cl.z)) {
        snprintf(buf, sizeof buf, "the cluster dimension (%u,%u,%u) does not divide the grid", cl.x, cl.y, cl.z);
        why = buf;
        *err = cudaErrorInvalidClusterSize;
    } else if (!why && csize > (unsigned long long)cluster_limit(c->func)) {
        snprintf(buf, sizeof buf, "a cluster of %llu CTAs: above %d%s", csize, cluster_limit(c->func),
                 cluster_limit(c->func) == 8 ? " without cudaFuncSetAttribute(kernel, "
                 "cudaFuncAttributeNonPortableClusterSizeAllowed, 1) (16 with it)" : ", an H100's limit");
        why = buf;
        *err = cudaErrorInvalidClusterSize;
    } else if (!why && csize * threads > (unsigned long long)max_resident) {
        snprintf(buf, sizeof buf, "a cluster of %llu CTAs of %llu threads: more threads than the emulator "
                 "holds at once (EMU_MAX_RESIDENT = %d)", csize, threads, max_resident);
        why = buf;
        *err = cudaErrorInvalidClusterSize;
    } else if (!why && c->cooperative) {
        const unsigned long long ctas = (unsigned long long)g.x * g.y * g.z;
        const unsigned long long most = (unsigned long long)resident_ctas((int)threads, c->smem);
        if (ctas > most) {
            snprintf(buf, sizeof buf, "a cooperative launch of %llu CTAs: more than are resident at once "
                     "(%llu at this block size and shared memory: an H100's count, within "
                     "EMU_MAX_RESIDENT = %d threads); nothing ran", ctas, most, max_resident);
            why = buf;
            *err = cudaErrorCooperativeLaunchTooLarge;
        }
    }
    if (!why) return 1;
    fprintf(stderr, "emu: launch of %s at %s:%d with grid (%u,%u,%u), block (%u,%u,%u) fails: %s\n",
            c->kernel, c->file, c->line, g.x, g.y, g.z, b.x, b.y, b.z, why);
    return 0;
}

cudaError_t emu_launch(const emu_launch_config *c, void (*invoke)(void *), void *ctx)
{
    emu_init();
    if (cur) emu_unsupported(c->file, c->line, "a launch from inside a kernel (dynamic parallelism)");
    if (sticky_error) return sticky_error;
    cudaError_t err;
    if (!check_config(c, &err)) return api(err);

    fence_dynamic_smem(c->smem);
    L.config = c;
    L.invoke = invoke;
    L.ctx = ctx;
    emu_grid_dim.x = c->grid.x;
    emu_grid_dim.y = c->grid.y;
    emu_grid_dim.z = c->grid.z;
    emu_block_dim.x = c->block.x;
    emu_block_dim.y = c->block.y;
    emu_block_dim.z = c->block.z;
    emu_cluster_dim = c->cluster;

    G.bt = (int)(c->block.x * c->block.y * c->block.z);
    G.max_slots = resident_ctas(G.bt, c->smem);
    ensure_slots(G.max_slots);
    for (int k = 0; k < G.high; k++) slots[k].used = clusters[k].used = 0;
    G.high = 0;
    G.nresident = 0;
    G.failed = 0;
    G.unit_ctas = (int)(c->cluster.x * c->cluster.y * c->cluster.z);
    G.cgrid = (dim3){c->grid.x / c->cluster.x, c->grid.y / c->cluster.y, c->grid.z / c->cluster.z};
    G.nunits = (unsigned long long)G.cgrid.x * G.cgrid.y * G.cgrid.z;
    G.next_unit = 0;
    G.seq = 0;
    G.reverse_units = warp_order == EMU_ORDER_REVERSE || (warp_order == EMU_ORDER_ALTERNATE && (G.launches & 1));
    G.launches++;
    G.live = NULL;
    G.nvars = 0;
    G.vars_bytes = 0;
    G.progress = 0;
    G.round_progress = ~0ull;
    G.preempt_naps = 0;
    G.gphase = G.garrived = 0;
    G.gexpected = (unsigned)((unsigned long long)c->grid.x * c->grid.y * c->grid.z * (unsigned)G.bt);
    if (c->cooperative)
        while (admit_unit()) {
        } /* every CTA at once (check_config made sure they fit) */
    if (watchdog_s) alarm(watchdog_s);
    const int failed = run_grid() != 0;
    if (watchdog_s) alarm(0);
    L.config = NULL;
    cs = NULL;
    if (failed) {
        reset_fibers();
        text_print();
        return sticky_error = last_error = cudaErrorLaunchFailure;
    }
    if (!check_canaries()) {
        char head[400];
        snprintf(head, sizeof head, "error: out-of-bounds write by kernel %s (launched at %s:%d)\n",
                 c->kernel, c->file, c->line);
        size_t hl = strlen(head);
        if (hl + error_len < sizeof error_text) {
            memmove(error_text + hl, error_text, error_len + 1);
            memcpy(error_text, head, hl);
            error_len += hl;
        }
        text_print();
        return sticky_error = last_error = cudaErrorIllegalAddress;
    }
    return cudaSuccess;
}

void emu_unsupported(const char *file, int line, const char *what)
{
    fprintf(stderr, "emu: %s:%d: not supported by the CPU emulator: %s. This code needs a GPU.\n",
            file, line, what);
    if (L.config)
        fprintf(stderr, "emu: (in kernel %s launched at %s:%d)\n", L.config->kernel, L.config->file,
                L.config->line);
    fflush(stderr);
    abort();
}

/* ---- faults ----------------------------------------------------------------------------------
 * Without ASan, a kernel's bad access ends in a signal. The handler (on its
 * own stack: the fault may be a fiber's stack overflow) says which kernel,
 * block and thread, and what the address was, then lets the signal kill
 * the process as it would have. Under ASan, ASan's own report does this. */
#if !EMU_ASAN
static void describe_address(char *buf, size_t len, const char *a, int sig, int code)
{
    for (int i = 0; i < nallocs; i++) {
        const emu_alloc *al = &allocs[i];
        if (!al->map) continue;
        const char *guard = al->map + al->map_size - page_size();
        if (a >= guard && a < guard + page_size()) {
            snprintf(buf, len, "%zu bytes past the end of a cudaMalloc buffer of %zu bytes at %p",
                     (size_t)(a - (al->ptr + al->size)), al->size, (void *)al->ptr);
            return;
        }
    }
    for (int i = 0; i < nfibers; i++)
        if (a >= pool[i].map && a < pool[i].stack) {
            snprintf(buf, len, "stack overflow of a CUDA thread: the emulator gives each %zu KB "
                     "(EMU_STACK_KB=... raises it)", fiber_stack_bytes / 1024);
            return;
        }
    if (dyn_smem && a >= dyn_smem + dyn_smem_span && a < dyn_smem + dyn_smem_span + page_size() + EMU_SMEM_OPTIN) {
        snprintf(buf, len, "past the end of dynamic shared memory (the launch asked for %zu bytes)",
                 dyn_smem_size);
        return;
    }
    if (sig == SIGFPE) {
        snprintf(buf, len, "integer division by zero (a GPU returns an unspecified value instead)");
        return;
    }
    if (sig == SIGSEGV && code == SI_KERNEL) {
        snprintf(buf, len, "general protection fault: typically a misaligned float4/int4 access "
                 "(16-byte alignment needed, as on a GPU)");
        return;
    }
    if ((uintptr_t)a < 65536) {
        snprintf(buf, len, "a null (or nearly null) pointer");
        return;
    }
    snprintf(buf, len, "not device memory the program owns (a host pointer? a freed buffer? far "
             "out of bounds?)");
}

static void on_fault(int sig, siginfo_t *si, void *uctx)
{
    (void)uctx;
    if (L.config) {
        char what[300], msg[1200];
        describe_address(what, sizeof what, (const char *)si->si_addr, sig, si->si_code);
        const emu_launch_config *c = L.config;
        int n = snprintf(msg, sizeof msg,
                         "emu: error: %s in kernel %s (launched at %s:%d), block (%u,%u,%u), "
                         "thread (%u,%u,%u): address %p: %s\n",
                         sig == SIGFPE ? "arithmetic fault" : sig == SIGBUS ? "bus error" : "memory fault",
                         c->kernel, c->file, c->line, emu_block_idx.x, emu_block_idx.y, emu_block_idx.z,
                         emu_thread_idx.x, emu_thread_idx.y, emu_thread_idx.z, si->si_addr, what);
        if (n > 0 && write(2, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1)) < 0) {
            /* nothing more can be done */
        }
    }
    signal(sig, SIG_DFL); /* returning re-executes the access, now fatal */
}

#endif

#if EMU_ASAN
/* After ASan's own report: which kernel, block and thread made the access. */
static void asan_report(const char *report)
{
    (void)report;
    if (L.config)
        fprintf(stderr, "emu: the access above was made by kernel %s (launched at %s:%d), block "
                        "(%u,%u,%u), thread (%u,%u,%u)\n", L.config->kernel, L.config->file,
                L.config->line, emu_block_idx.x, emu_block_idx.y, emu_block_idx.z, emu_thread_idx.x,
                emu_thread_idx.y, emu_thread_idx.z);
}
#endif

/* A launch that runs for EMU_TIMEOUT seconds: an endless loop, or a
 * spin-wait for another block, which never comes because blocks run one
 * after another here. */
static void on_alarm(int sig)
{
    char msg[700];
    int n = snprintf(msg, sizeof msg,
                     "emu: error: kernel %s (launched at %s:%d) still runs after %u s (EMU_TIMEOUT): "
                     "an endless loop, or a thread spinning on a flag with a plain or volatile read "
                     "(a thread runs until it must wait: a spin-wait needs an acquire load, "
                     "cuda::atomic_ref, or __nanosleep in its loop to let others run); "
                     "for a launch that is just very large, EMU_TIMEOUT=0 turns this off\n",
                     L.config ? L.config->kernel : "?", L.config ? L.config->file : "?",
                     L.config ? L.config->line : 0, watchdog_s);
    if (n > 0 && write(2, msg, (size_t)(n < (int)sizeof msg ? n : (int)sizeof msg - 1)) < 0) {
        /* nothing more can be done */
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_fault_handlers(void)
{
#if !EMU_ASAN
    static char altstack[64 * 1024];
    stack_t ss;
    ss.ss_sp = altstack;
    ss.ss_size = sizeof altstack;
    ss.ss_flags = 0;
    sigaltstack(&ss, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
#endif
    /* The watchdog (EMU_TIMEOUT seconds per launch, 0: none): a kernel
     * that never ends is stopped with a reason, so that CI does not hang. */
    signal(SIGALRM, on_alarm);
}
