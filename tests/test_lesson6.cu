/* Lesson 6's (m, d) merge and online kernel.
 *
 *   - The merge (common/device/online_md.cuh) on the host: the -inf
 *     trap, the identity, NaN, and the float64 reference merge
 *     (common/reference.h) reached in any order and grouping.
 *   - The same merge on the device: chunk states, then left fold, right
 *     fold, pairwise tree, reversed and shuffled orders, all equal to the
 *     float64 reference; the warp and block merges give every thread of a
 *     row the same bits.
 *   - The kernel on the rows where online softmax can go wrong (whole
 *     chunks and warps of -inf, a max that grows at every chunk, NaN, an
 *     all -inf row) and on misaligned, padded views (tests/views.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "harness.h"
#include "inputs.h"
#include "reference.h"
#include "verify.h"
#include "device/online_md.cuh"
#include "../lessons/06_online/softmax_online.h"
#include "../tests/test.h"
#include "../tests/views.h"

#define CHUNK 16
#define NCHUNKS 257
/* d against float64: a fold of 257 states is a sequential float32 sum
 * (worst case 257 x 2^-24 = 1.5e-5 relative) plus a few ulps of expf per
 * rescale. 1e-4 leaves room for that and still catches any real mistake:
 * a missing or doubled rescale is off by a factor of exp(m_old - m_new). */
#define D_RTOL 1e-4

/* ---- data: NCHUNKS chunks of CHUNK floats, some chunks entirely -inf ---- */
static void make_chunks(float *x)
{
    inputs_fill(x, 1, NCHUNKS * CHUNK, INPUT_NORMAL, 606);
    for (int c = 0; c < NCHUNKS; c++) {
        for (int i = 0; i < CHUNK; i++) x[c * CHUNK + i] *= 3.0f;
        if (c % 5 == 0 || c == 1) /* chunks 0, 1: the first merges are of -inf states */
            for (int i = 0; i < CHUNK; i++) x[c * CHUNK + i] = -INFINITY;
    }
}

/* The float64 reference state of n floats. */
static md_state ref_state(const float *x, long long n)
{
    md_state s = md_identity();
    for (long long i = 0; i < n; i++) s = md_push(s, x[i]);
    return s;
}

/* m exactly (the max of floats is a float), d within D_RTOL. */
static int same_state(online_md got, md_state want)
{
    if (isnan(want.m) || isnan(want.d)) return isnan(got.d) || isnan(got.m);
    if ((double)got.m != want.m) return 0;
    if (want.d == 0.0) return got.d == 0.0f;
    return fabs((double)got.d - want.d) <= D_RTOL * want.d;
}

/* The five orders a device or host computes: 0 left fold, 1 right fold,
 * 2 pairwise tree, 3 reversed, 4 shuffled (perm). `tmp` holds n states. */
#define NORDERS 5
static const char *ORDER_NAMES[NORDERS] = {"left fold", "right fold", "pairwise tree", "reversed",
                                           "shuffled"};

__host__ __device__ static online_md fold_order(int order, const online_md *st, int n, const int *perm,
                                                online_md *tmp)
{
    online_md s = online_md_identity();
    switch (order) {
    case 0:
        for (int i = 0; i < n; i++) s = online_md_merge(s, st[i]);
        return s;
    case 1:
        for (int i = n - 1; i >= 0; i--) s = online_md_merge(st[i], s);
        return s;
    case 2: { /* ((s0 s1)(s2 s3))((s4 s5)...): pairs, then pairs of pairs */
        for (int i = 0; i < n; i++) tmp[i] = st[i];
        int len = n;
        while (len > 1) {
            int half = len / 2;
            for (int i = 0; i < half; i++) tmp[i] = online_md_merge(tmp[2 * i], tmp[2 * i + 1]);
            if (len % 2) tmp[half++] = tmp[len - 1]; /* the odd one out moves up a level */
            len = half;
        }
        return n > 0 ? tmp[0] : s;
    }
    case 3:
        for (int i = n - 1; i >= 0; i--) s = online_md_merge(s, st[i]);
        return s;
    default:
        for (int i = 0; i < n; i++) s = online_md_merge(s, st[perm[i]]);
        return s;
    }
}

static void make_perm(int *perm, int n)
{
    unsigned long long z = 12345;
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates with a fixed LCG */
        z = z * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((z >> 33) % (unsigned long long)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* ---- host ------------------------------------------------------------------ */
static void check_merge_host(void)
{
    const online_md id = online_md_identity();
    online_md r = online_md_merge(id, id);
    test_expect(r.m == -INFINITY && r.d == 0.0f,
                "online_md: merging two all -inf states gives (-inf, 0), not NaN", "got (%g, %g)", r.m, r.d);

    const float neg[CHUNK] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                              -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                              -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    r = online_md_push<CHUNK>(id, neg);
    test_expect(r.m == -INFINITY && r.d == 0.0f,
                "online_md: pushing a chunk of only -inf into the identity keeps (-inf, 0)", "got (%g, %g)",
                r.m, r.d);

    const online_md a = {2.5f, 3.25f};
    online_md l = online_md_merge(id, a), rr = online_md_merge(a, id);
    test_expect(memcmp(&l, &a, sizeof a) == 0 && memcmp(&rr, &a, sizeof a) == 0,
                "online_md: the identity (-inf, 0) leaves a state unchanged, bit for bit, on either side",
                "got (%g, %g) and (%g, %g)", l.m, l.d, rr.m, rr.d);
    r = online_md_push<CHUNK>(a, neg);
    test_expect(r.m == a.m && r.d == a.d,
                "online_md: a chunk of only -inf after finite values changes nothing", "got (%g, %g)", r.m,
                r.d);

    float withnan[CHUNK];
    for (int i = 0; i < CHUNK; i++) withnan[i] = (float)i;
    withnan[7] = NAN;
    online_md n1 = online_md_push<CHUNK>(id, withnan);
    online_md n2 = online_md_merge(online_md_merge(n1, a), online_md_push<CHUNK>(id, neg));
    online_md n3 = online_md_merge(a, n1);
    test_expect(isnan(n1.d) && isnan(n2.d) && isnan(n3.d),
                "online_md: a NaN in a chunk makes d NaN, and later merges keep it NaN",
                "d = %g, %g, %g", n1.d, n2.d, n3.d);

    float all_nan[CHUNK];
    for (int i = 0; i < CHUNK; i++) all_nan[i] = NAN;
    r = online_md_merge(online_md_push<CHUNK>(id, all_nan), a);
    test_expect(isnan(r.d), "online_md: a chunk of only NaN, pushed into the identity, still makes d NaN",
                "got (%g, %g)", r.m, r.d);

    /* pushing a chunk = merging its own summary */
    float *x = (float *)malloc(NCHUNKS * CHUNK * sizeof(float));
    make_chunks(x);
    online_md st[NCHUNKS], tmp[NCHUNKS];
    int perm[NCHUNKS], push_ok = 1;
    make_perm(perm, NCHUNKS);
    online_md run = id;
    for (int c = 0; c < NCHUNKS; c++) {
        st[c] = online_md_push<CHUNK>(id, x + c * CHUNK);
        push_ok &= same_state(st[c], ref_state(x + c * CHUNK, CHUNK));
        run = online_md_push<CHUNK>(run, x + c * CHUNK);
    }
    const md_state want = ref_state(x, NCHUNKS * CHUNK);
    test_expect(push_ok, "online_md: each chunk's state matches the float64 reference state",
                "a chunk differs");
    test_expect(same_state(run, want),
                "online_md: streaming all chunks into one running state matches the float64 reference",
                "got (%g, %.9g), want (%g, %.9g)", run.m, run.d, want.m, want.d);

    /* Associativity and commutativity, as the reference merge sees them. */
    md_state ref_tree = md_identity();
    for (int c = NCHUNKS - 1; c >= 0; c--) ref_tree = md_merge(ref_state(x + c * CHUNK, CHUNK), ref_tree);
    test_expect(fabs(ref_tree.d - want.d) <= 1e-12 * want.d && ref_tree.m == want.m,
                "md_merge (float64): a right fold of chunk states equals the whole row's state", "differs");

    char name[256];
    for (int o = 0; o < NORDERS; o++) {
        online_md got = fold_order(o, st, NCHUNKS, perm, tmp);
        snprintf(name, sizeof name,
                 "online_md (host): merging %d chunk states by %s equals the float64 reference", NCHUNKS,
                 ORDER_NAMES[o]);
        test_expect(same_state(got, want), name, "got (%g, %.9g), want (%g, %.9g)", got.m, got.d, want.m,
                    want.d);
    }
    free(x);
}

/* ---- device ------------------------------------------------------------------ */
__global__ void chunk_states_kernel(const float *x, int nchunks, online_md *st)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < nchunks) st[c] = online_md_push<CHUNK>(online_md_identity(), x + c * CHUNK);
}

__global__ void orders_kernel(const online_md *st, int n, const int *perm, online_md *tmp, online_md *out)
{
    if (threadIdx.x == 0 && blockIdx.x == 0)
        for (int o = 0; o < NORDERS; o++) out[o] = fold_order(o, st, n, perm, tmp);
}

/* Every thread pushes its CHUNK floats, then the row merge; each thread
 * writes what it got. */
template <int TPR, int BLOCK>
__global__ void row_merge_kernel(const float *x, online_md *out)
{
    __shared__ float red_m[32], red_d[32];
    online_md s = online_md_push<CHUNK>(online_md_identity(), x + threadIdx.x * CHUNK);
    s = online_md_row_merge<TPR>(s, red_m, red_d);
    out[threadIdx.x] = s;
}

template <int TPR, int BLOCK>
static void check_row_merge(const float *dx, const float *hx)
{
    char name[256];
    snprintf(name, sizeof name,
             "online_md_row_merge<%d> on the device: every thread of a row gets the same bits, equal to "
             "the float64 reference",
             TPR);
    online_md *dout, out[BLOCK];
    CUDA_CHECK(cudaMalloc(&dout, BLOCK * sizeof(online_md)));
    void (*kernel)(const float *, online_md *) = row_merge_kernel<TPR, BLOCK>;
    kernel<<<1, BLOCK>>>(dx, dout);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dout));
    int ok = 1;
    for (int t = 0; t < BLOCK && ok; t++) {
        const int first = t / TPR * TPR;
        const md_state want = ref_state(hx + first * CHUNK, (long long)TPR * CHUNK);
        ok = same_state(out[t], want) && memcmp(&out[t], &out[first], sizeof out[t]) == 0;
        if (!ok)
            test_fail(name, "thread %d: (%g, %.9g), thread %d: (%g, %.9g), want (%g, %.9g)", t, out[t].m,
                      out[t].d, first, out[first].m, out[first].d, want.m, want.d);
    }
    if (ok) test_pass(name);
}

static void check_merge_device(int have_gpu)
{
    char name[256];
    if (!have_gpu) {
        for (int o = 0; o < NORDERS; o++) {
            snprintf(name, sizeof name, "online_md (device): merging %d chunk states by %s equals the float64 reference",
                     NCHUNKS, ORDER_NAMES[o]);
            test_skip(name, "no GPU");
        }
        test_skip("online_md_row_merge on the device: every thread of a row gets the same bits", "no GPU");
        return;
    }
    const size_t n = NCHUNKS * CHUNK;
    float *x = (float *)malloc(n * sizeof(float)), *dx;
    int perm[NCHUNKS], *dperm;
    online_md *dst, *dtmp, *dout, out[NORDERS], st[NCHUNKS];
    make_chunks(x);
    make_perm(perm, NCHUNKS);
    CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dperm, sizeof perm));
    CUDA_CHECK(cudaMalloc(&dst, NCHUNKS * sizeof(online_md)));
    CUDA_CHECK(cudaMalloc(&dtmp, NCHUNKS * sizeof(online_md)));
    CUDA_CHECK(cudaMalloc(&dout, NORDERS * sizeof(online_md)));
    CUDA_CHECK(cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dperm, perm, sizeof perm, cudaMemcpyHostToDevice));
    chunk_states_kernel<<<(NCHUNKS + 127) / 128, 128>>>(dx, NCHUNKS, dst);
    CUDA_CHECK_LAUNCH();
    orders_kernel<<<1, 32>>>(dst, NCHUNKS, dperm, dtmp, dout);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(st, dst, sizeof st, cudaMemcpyDeviceToHost));

    int states_ok = 1;
    for (int c = 0; c < NCHUNKS; c++) states_ok &= same_state(st[c], ref_state(x + c * CHUNK, CHUNK));
    test_expect(states_ok, "online_md_push on the device: each chunk's state matches the float64 reference",
                "a chunk differs");
    const md_state want = ref_state(x, (long long)n);
    for (int o = 0; o < NORDERS; o++) {
        snprintf(name, sizeof name,
                 "online_md (device): merging %d chunk states by %s equals the float64 reference", NCHUNKS,
                 ORDER_NAMES[o]);
        test_expect(same_state(out[o], want), name, "got (%g, %.9g), want (%g, %.9g)", out[o].m, out[o].d,
                    want.m, want.d);
    }

    /* Warp and block merges over the first 256 * CHUNK floats (with the
     * -inf chunks among them). */
    check_row_merge<8, 256>(dx, x);
    check_row_merge<32, 256>(dx, x);
    check_row_merge<256, 256>(dx, x);

    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dperm));
    CUDA_CHECK(cudaFree(dst));
    CUDA_CHECK(cudaFree(dtmp));
    CUDA_CHECK(cudaFree(dout));
    free(x);
}

/* ---- the kernel on hard rows ----------------------------------------------------- */
typedef enum { ROW_MASKED_FIRST_HALF, ROW_ASCENDING, ROW_ONE_NAN, ROW_ALL_NEGINF, NROWKINDS } row_kind;
static const char *ROW_NAMES[NROWKINDS] = {
    "its first half -inf (whole chunks, warps and blocks masked)",
    "sorted ascending (the max grows at every chunk)",
    "one NaN (that row NaN, the others untouched)",
    "all -inf (NaN, as PyTorch; the others untouched)",
};

/* 3 rows: row 1 is of the given kind, rows 0 and 2 are ordinary. */
static void make_hard(float *x, long long cols, row_kind k)
{
    inputs_fill(x, 3, cols, INPUT_NORMAL, 77);
    float *r = x + cols;
    for (long long j = 0; j < cols; j++) {
        switch (k) {
        case ROW_MASKED_FIRST_HALF: if (j < cols / 2) r[j] = -INFINITY; break;
        case ROW_ASCENDING: r[j] = -20.0f + 40.0f * (float)j / (float)cols; break;
        case ROW_ONE_NAN: if (j == cols / 3) r[j] = NAN; break;
        default: r[j] = -INFINITY; break;
        }
    }
}

static void check_hard_rows(int have_gpu)
{
    const struct {
        const char *name;
        softmax_fn fn;
    } K[] = {{"lesson6 online", softmax_online}, {"lesson6 online, one block per row", softmax_online_block_per_row}};
    const long long lens[] = {1000, 1027, 10000, 100003};
    char name[512], desc[512];
    for (int k = 0; k < 2; k++)
        for (int l = 0; l < 4; l++)
            for (int v = 0; v < NROWKINDS; v++) {
                const long long cols = lens[l];
                snprintf(name, sizeof name, "%s on 3 x %lld, middle row %s, matches the reference", K[k].name,
                         cols, ROW_NAMES[v]);
                if (!have_gpu) {
                    test_skip(name, "no GPU");
                    continue;
                }
                const size_t bytes = 3 * (size_t)cols * sizeof(float);
                float *x = (float *)malloc(bytes), *y = (float *)malloc(bytes), *dx, *dy;
                make_hard(x, cols, (row_kind)v);
                CUDA_CHECK(cudaMalloc(&dx, bytes));
                CUDA_CHECK(cudaMalloc(&dy, bytes));
                CUDA_CHECK(cudaMemcpy(dx, x, bytes, cudaMemcpyHostToDevice));
                CUDA_CHECK(cudaMemset(dy, 0xFF, bytes));
                K[k].fn(dx, dy, 3, cols, 0);
                CUDA_CHECK_LAUNCH();
                CUDA_CHECK(cudaMemcpy(y, dy, bytes, cudaMemcpyDeviceToHost));
                CUDA_CHECK(cudaFree(dx));
                CUDA_CHECK(cudaFree(dy));
                verify_report r;
                int ok = verify_softmax(x, y, 3, cols, ref_row_softmax, NULL, verify_rtol(cols), &r);
                verify_describe(&r, desc, sizeof desc);
                test_expect(ok, name, "%s", desc);
                free(x);
                free(y);
            }
}

/* ---- views ------------------------------------------------------------------------- */
static void run_online_strided(const float *x, long long ldx, float *y, long long ldy, long long rows,
                               long long cols, cudaStream_t s)
{
    softmax_online_strided(x, ldx, y, ldy, rows, cols, s);
}

static void check_views(int have_gpu)
{
    const view_case cases[] = {
        {"a padded aligned (float4 with strides)", 5, 1000, 1004, 1008, 0, 0},
        {"a misaligned (both bases 1 float past 16 bytes)", 5, 1000, 1000, 1000, 1, 1},
        {"a padded N % 4 != 0, strides not multiples of 4", 7, 1025, 1027, 1030, 0, 2},
        {"an N = 1, strided and misaligned", 9, 1, 3, 5, 1, 2},
        {"an N = 33, strided and misaligned", 31, 33, 40, 37, 2, 0},
        {"an N = 65537, misaligned", 2, 65537, 65540, 65541, 1, 3},
        {"a 20001-row, N = 3, strided", 20001, 3, 5, 4, 1, 0},
        /* x and y misaligned against each other: cut at y's boundaries (ONLINE_X32) */
        {"an input-misaligned, output-aligned, N = 4096 (a block a row)", 3, 4096, 4096, 4096, 1, 0},
        {"an output-misaligned (3 floats), N = 200 (32 lanes a row)", 9, 200, 204, 203, 0, 3},
        /* x and y equally misaligned row by row: peeled (ONLINE_PEELED) */
        {"a shared-misalignment, stride N + 1", 9, 1000, 1001, 1001, 0, 0},
        {"a shared-misalignment, N = 5 (head 3, tail 2), strides 13 and 9", 12, 5, 13, 9, 1, 1},
        {"a shared-misalignment, N = 2 (the head holds the row)", 11, 2, 3, 3, 3, 3},
        {"a shared-misalignment, N = 33, stride 33 (4 lanes of 4 float4s)", 67, 33, 33, 33, 1, 1},
        {"a shared-misalignment, N = 100, stride N + 1 (8 lanes of 1 float4)", 13, 100, 101, 101, 2, 2},
        {"a shared-misalignment, N = 255, stride N (16 lanes of 1 float4)", 7, 255, 255, 255, 0, 0},
        {"a shared-misalignment, N = 4097, bases 3 floats in (a block a row)", 6, 4097, 4097, 4097, 3, 3},
        {"a shared-misalignment, N = 65537, stride N + 2", 5, 65537, 65539, 65539, 2, 2},
    };
    char name[512], desc[512];
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        const view_case *c = &cases[i];
        snprintf(name, sizeof name,
                 "lesson6 online on %s view (%lld x %lld, ldx %lld, ldy %lld, offsets %lld/%lld) matches the "
                 "reference and leaves the padding untouched",
                 c->what, c->rows, c->cols, c->ldx, c->ldy, c->xoff, c->yoff);
        if (!have_gpu) {
            test_skip(name, "no GPU");
            continue;
        }
        int ok = view_check(run_online_strided, c, INPUT_NORMAL, verify_rtol, desc, sizeof desc);
        test_expect(ok, name, "%s", desc);
    }
}

/* Which accesses a view gets, on fake addresses: no GPU needed. */
static void check_access_rule(void)
{
    const float *a = (const float *)(uintptr_t)0x10000; /* 16-byte aligned */
    test_expect(softmax_online_access(a, 1024, a, 1024, 4, 1024) == ONLINE_FLOAT4,
                "lesson6 views: aligned rows with N, ldx, ldy multiples of 4 get float4 throughout", "not");
    test_expect(softmax_online_access(a + 1, 1000, a + 1, 1000, 4, 1000) == ONLINE_PEELED,
                "lesson6 views: both bases 1 float past 16 bytes are peeled", "not");
    test_expect(softmax_online_access(a + 2, 1001, a + 6, 1005, 4, 1001) == ONLINE_PEELED,
                "lesson6 views: strides that differ by a multiple of 4 are peeled", "not");
    test_expect(softmax_online_access(a + 1, 1024, a, 1024, 4, 1024) == ONLINE_X32,
                "lesson6 views: x misaligned and y aligned are cut at y's boundaries, x read in 32-bit loads",
                "not");
    test_expect(softmax_online_access(a, 1001, a, 1000, 4, 1000) == ONLINE_X32,
                "lesson6 views: rows of x and y misaligned differently (strides 1001 and 1000) are cut at y's "
                "boundaries",
                "not");
    test_expect(softmax_online_access(a, 1001, a, 1000, 1, 1000) == ONLINE_PEELED,
                "lesson6 views: one row is peeled whatever the strides", "not");
    test_expect(softmax_online_access((const float *)((uintptr_t)a + 2), 1000, a, 1000, 1, 1000) ==
                    ONLINE_SCALAR,
                "lesson6 views: an x not 4-byte aligned gets 32-bit accesses throughout", "not");
}

int main(void)
{
    int count = 0;
    int have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError(); /* clear the no-device error, if any */
    check_merge_host();
    check_merge_device(have_gpu);
    check_hard_rows(have_gpu);
    check_views(have_gpu);
    check_access_rule();
    return test_exit_status();
}
