/* The device's 16-bit conversions against common/f16.c, bit for bit.
 *
 * Kernels convert every one of the 65536 float16 and bfloat16 patterns to
 * float, and about 1.5 million floats (every pattern's value, every
 * halfway point between neighbouring patterns and the floats beside it,
 * zeros, infinities, NaNs, float subnormals, random bits) to float16 and
 * bfloat16, through each conversion intrinsic a 16-bit softmax uses. The
 * host compares each result with common/f16.c's. One more kernel takes
 * the 16-bit types through static and dynamic shared memory, and one
 * takes __hmax2 over every pattern against 16 chosen ones (NaNs, zeros,
 * infinities), against CUDA's documented rule.
 *   On the CPU emulator this shows that its <cuda_fp16.h> and
 *   <cuda_bf16.h> pass values through as CUDA's do (same intrinsics, same
 *   halves of a pair, same layout); the rounding itself is f16.c's, which
 *   tests/test_f16.c checks against the definition.
 *   On a GPU it shows that f16.c, and so the emulator, rounds as the GPU
 *   does.
 * Narrowing is compared bit for bit, NaN included (CUDA's NaN is 0x7FFF).
 * Widening is compared bit for bit for every pattern that is not a NaN; a
 * NaN pattern must widen to a NaN, and a NOTE line says whether its bits
 * are f16.c's too (a GPU's instructions differ there: some keep a NaN's
 * payload, some do not, and nothing in the course depends on it). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "check.h"
#include "f16.h"
#include "../tests/test.h"

#define NPAT 65536

/* ---- kernels: grid-stride loops, so the CPU emulator runs few threads ---- */

/* Pattern i, alone and as the low half of a pair whose high half is
 * pattern i ^ 0x8001 (another sign and last bit, so swapped halves show). */
__global__ void widen_half(float *one, float *pair, float *lohi, unsigned short *back)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < NPAT; i += gridDim.x * blockDim.x) {
        const __half h = __ushort_as_half((unsigned short)i);
        const __half2 h2 = __halves2half2(h, __ushort_as_half((unsigned short)(i ^ 0x8001)));
        one[i] = __half2float(h);
        const float2 f2 = __half22float2(h2);
        pair[2 * i] = f2.x;
        pair[2 * i + 1] = f2.y;
        lohi[2 * i] = __low2float(h2);
        lohi[2 * i + 1] = __high2float(h2);
        back[2 * i] = __half_as_ushort(__low2half(h2));
        back[2 * i + 1] = __half_as_ushort(__high2half(h2));
    }
}

__global__ void widen_bf16(float *one, float *pair, float *lohi, unsigned short *back)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < NPAT; i += gridDim.x * blockDim.x) {
        const __nv_bfloat16 h = __ushort_as_bfloat16((unsigned short)i);
        const __nv_bfloat162 h2 = __halves2bfloat162(h, __ushort_as_bfloat16((unsigned short)(i ^ 0x8001)));
        one[i] = __bfloat162float(h);
        const float2 f2 = __bfloat1622float2(h2);
        pair[2 * i] = f2.x;
        pair[2 * i + 1] = f2.y;
        lohi[2 * i] = __low2float(h2);
        lohi[2 * i + 1] = __high2float(h2);
        back[2 * i] = __bfloat16_as_ushort(__low2bfloat16(h2));
        back[2 * i + 1] = __bfloat16_as_ushort(__high2bfloat16(h2));
    }
}

/* Float i alone (two intrinsics), and as the low half of a pair whose
 * high half is float n-1-i (two more). The pairs are stored as __half2, so
 * the host also sees where in memory each half lies. */
__global__ void narrow_half(const float *x, long n, unsigned short *plain, unsigned short *rn, __half2 *pair,
                            __half2 *pair2)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        plain[i] = __half_as_ushort(__float2half(x[i]));
        rn[i] = __half_as_ushort(__float2half_rn(x[i]));
        pair[i] = __floats2half2_rn(x[i], x[n - 1 - i]);
        pair2[i] = __float22half2_rn(make_float2(x[i], x[n - 1 - i]));
    }
}

__global__ void narrow_bf16(const float *x, long n, unsigned short *plain, unsigned short *rn,
                            __nv_bfloat162 *pair, __nv_bfloat162 *pair2)
{
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        plain[i] = __bfloat16_as_ushort(__float2bfloat16(x[i]));
        rn[i] = __bfloat16_as_ushort(__float2bfloat16_rn(x[i]));
        pair[i] = __floats2bfloat162_rn(x[i], x[n - 1 - i]);
        pair2[i] = __float22bfloat162_rn(make_float2(x[i], x[n - 1 - i]));
    }
}

/* The 16-bit types in shared memory, as a 16-bit kernel stages a row:
 * each CTA of 256 threads takes 256 __half and 256 __nv_bfloat162 through
 * a static and a dynamic shared array and writes them back reversed. */
__global__ void through_shared(const __half *h, const __nv_bfloat162 *b, __half *h_out, __nv_bfloat162 *b_out)
{
    __shared__ __half tile[256];
    extern __shared__ __nv_bfloat162 dyn[];
    const int i = blockIdx.x * 256 + threadIdx.x;
    tile[threadIdx.x] = h[i];
    dyn[threadIdx.x] = b[i];
    __syncthreads();
    h_out[i] = tile[255 - threadIdx.x];
    b_out[i] = dyn[255 - threadIdx.x];
}

/* __hmax2 on every pattern i (low half; high half i ^ 0x8001) against
 * NSPEC chosen patterns (low half spec[k], high half spec[NSPEC-1-k]):
 * lesson 8's path 2 for 16-bit rows takes the row's max this way. */
#define NSPEC 16
__global__ void max2_pairs(const unsigned short *spec, unsigned *h_out, unsigned *b_out)
{
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < NPAT * NSPEC; t += gridDim.x * blockDim.x) {
        const int i = t / NSPEC, k = t % NSPEC;
        const unsigned short lo = (unsigned short)i, hi = (unsigned short)(i ^ 0x8001);
        const __half2 ha = __halves2half2(__ushort_as_half(lo), __ushort_as_half(hi));
        const __half2 hb = __halves2half2(__ushort_as_half(spec[k]), __ushort_as_half(spec[NSPEC - 1 - k]));
        const __half2 hm = __hmax2(ha, hb);
        h_out[t] = __half_as_ushort(__low2half(hm)) | (unsigned)__half_as_ushort(__high2half(hm)) << 16;
        const __nv_bfloat162 ba = __halves2bfloat162(__ushort_as_bfloat16(lo), __ushort_as_bfloat16(hi));
        const __nv_bfloat162 bb =
            __halves2bfloat162(__ushort_as_bfloat16(spec[k]), __ushort_as_bfloat16(spec[NSPEC - 1 - k]));
        const __nv_bfloat162 bm = __hmax2(ba, bb);
        b_out[t] = __bfloat16_as_ushort(__low2bfloat16(bm)) | (unsigned)__bfloat16_as_ushort(__high2bfloat16(bm)) << 16;
    }
}

/* ---- host ---------------------------------------------------------------- */
typedef struct {
    const char *name; /* "half" or "bf16" */
    float (*widen)(uint16_t);
    uint16_t (*narrow)(float);
} format;

static const format HALF = {"half", f16_to_float, f16_from_float};
static const format BF16 = {"bf16", bf16_to_float, bf16_from_float};

static void *device_alloc(size_t bytes, int poison)
{
    void *p;
    CUDA_CHECK(cudaMalloc(&p, bytes));
    CUDA_CHECK(cudaMemset(p, poison, bytes));
    return p;
}

static void *to_host(const void *d, size_t bytes)
{
    void *h = malloc(bytes);
    if (!h) {
        fprintf(stderr, "test_half: out of memory\n");
        exit(1);
    }
    CUDA_CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
    return h;
}

/* A widened result against f16.c: bit for bit, or for a NaN pattern any
 * NaN (counting in *nan_same those with f16.c's bits). */
static int widened_ok(const format *f, uint16_t p, float got, long *nan_same)
{
    float want = f->widen(p);
    if (isnan(want)) {
        if (isnan(got) && f32_bits(got) == f32_bits(want)) ++*nan_same;
        return isnan(got) != 0;
    }
    return f32_bits(got) == f32_bits(want);
}

static void check_widening(const format *f)
{
    /* Poison: bytes 0x7F make the float 0x7F7F7F7F, finite (not a NaN,
     * which a NaN pattern could pass for) and not the widening of any
     * 16-bit pattern (its low 16 bits are not zero). */
    float *d_one = (float *)device_alloc(NPAT * sizeof(float), 0x7F);
    float *d_pair = (float *)device_alloc(2 * NPAT * sizeof(float), 0x7F);
    float *d_lohi = (float *)device_alloc(2 * NPAT * sizeof(float), 0x7F);
    unsigned short *d_back = (unsigned short *)device_alloc(2 * NPAT * sizeof(unsigned short), 0xFF);
    if (f == &HALF) widen_half<<<64, 256>>>(d_one, d_pair, d_lohi, d_back);
    else widen_bf16<<<64, 256>>>(d_one, d_pair, d_lohi, d_back);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    float *one = (float *)to_host(d_one, NPAT * sizeof(float));
    float *pair = (float *)to_host(d_pair, 2 * NPAT * sizeof(float));
    float *lohi = (float *)to_host(d_lohi, 2 * NPAT * sizeof(float));
    unsigned short *back = (unsigned short *)to_host(d_back, 2 * NPAT * sizeof(unsigned short));

    long bad_one = 0, bad_pair = 0, bad_back = 0, nan_same = 0, nans = 0, ignore = 0;
    long first_one = -1, first_pair = -1, first_back = -1;
    for (long i = 0; i < NPAT; i++) {
        const uint16_t lo = (uint16_t)i, hi = (uint16_t)(i ^ 0x8001);
        if (isnan(f->widen(lo))) nans++;
        if (!widened_ok(f, lo, one[i], &nan_same) && bad_one++ == 0) first_one = i;
        int ok = widened_ok(f, lo, pair[2 * i], &ignore) && widened_ok(f, hi, pair[2 * i + 1], &ignore) &&
                 widened_ok(f, lo, lohi[2 * i], &ignore) && widened_ok(f, hi, lohi[2 * i + 1], &ignore);
        if (!ok && bad_pair++ == 0) first_pair = i;
        if ((back[2 * i] != lo || back[2 * i + 1] != hi) && bad_back++ == 0) first_back = i;
    }
    char name[200];
    const int h = f == &HALF;
    snprintf(name, sizeof name,
             "%s: %s widens each of the 65536 patterns as common/f16.c does (bit for bit but NaN payloads)",
             f->name, h ? "__half2float" : "__bfloat162float");
    test_expect(bad_one == 0, name, "%ld differ, the first 0x%04lX -> 0x%08X, f16.c 0x%08X", bad_one, first_one,
                bad_one ? f32_bits(one[first_one]) : 0, bad_one ? f32_bits(f->widen((uint16_t)first_one)) : 0);
    snprintf(name, sizeof name, "%s: %s, __low2float and __high2float widen a pair's low and high halves",
             f->name, h ? "__half22float2" : "__bfloat1622float2");
    test_expect(bad_pair == 0, name, "%ld pairs differ, the first made of 0x%04lX (low) and 0x%04lX (high)", bad_pair,
                first_pair, first_pair ^ 0x8001);
    snprintf(name, sizeof name, "%s: %s and %s give back the halves given to %s", f->name,
             h ? "__low2half" : "__low2bfloat16", h ? "__high2half" : "__high2bfloat16",
             h ? "__halves2half2" : "__halves2bfloat162");
    test_expect(bad_back == 0, name, "%ld pairs differ, the first (0x%04lX, 0x%04lX) came back as (0x%04X, 0x%04X)",
                bad_back, first_back, first_back ^ 0x8001, bad_back ? back[2 * first_back] : 0,
                bad_back ? back[2 * first_back + 1] : 0);
    printf("NOTE %s: %ld of the %ld NaN patterns widen to common/f16.c's bits on this device\n", f->name, nan_same,
           nans);
    free(one);
    free(pair);
    free(lohi);
    free(back);
    CUDA_CHECK(cudaFree(d_one));
    CUDA_CHECK(cudaFree(d_pair));
    CUDA_CHECK(cudaFree(d_lohi));
    CUDA_CHECK(cudaFree(d_back));
}

/* ---- the floats to narrow -------------------------------------------------- */
static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static uint32_t next_u32(void) /* xorshift64*, fixed seed */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

/* Every finite pattern's value of both formats, each halfway point to the
 * next pattern and the floats just below and above it (positive and
 * negative), special values, then random floats: half any bits, half
 * with exponents around float16's range. Returns the count. */
static long make_floats(float *x, long cap)
{
    long n = 0;
    const format *fs[2] = {&HALF, &BF16};
    for (int k = 0; k < 2; k++) {
        for (uint32_t p = 0; p < 0x8000u; p++) {
            float v = fs[k]->widen((uint16_t)p), w = fs[k]->widen((uint16_t)(p + 1));
            if (isnan(v) || isinf(v) || isnan(w)) continue;
            if (isinf(w)) w = (float)(2.0 * v - fs[k]->widen((uint16_t)(p - 1)));
            float mid = (float)(((double)v + (double)w) / 2); /* exact: one bit more than the format */
            const float xs[4] = {v, mid, nextafterf(mid, 0), nextafterf(mid, INFINITY)};
            for (int j = 0; j < 4; j++) {
                x[n++] = xs[j];
                x[n++] = -xs[j];
            }
        }
    }
    const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
                                0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FA00000u, 0x7F801000u,
                                0x7F807FFFu, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F7F8000u, 0x7F7F7FFFu, 0x00000001u,
                                0x80000001u, 0x007FFFFFu, 0x00800000u, 0x477FE000u, 0x477FEFFFu, 0x477FF000u,
                                0x477FF001u, 0x33000000u, 0x33000001u, 0x387FE000u, 0x387FF000u, 0x38800000u};
    for (size_t j = 0; j < sizeof special / sizeof *special; j++) x[n++] = f32_from_bits(special[j]);
    while (n < cap) {
        uint32_t u = next_u32();
        if (n & 1) u = (u & 0x807FFFFFu) | (100u + next_u32() % 48u) << 23; /* 2^-27 ... 2^20 */
        x[n++] = f32_from_bits(u);
    }
    return n;
}

static void check_narrowing(const format *f, const float *x, long n)
{
    float *d_x = (float *)device_alloc(n * sizeof(float), 0);
    CUDA_CHECK(cudaMemcpy(d_x, x, n * sizeof(float), cudaMemcpyHostToDevice));
    /* Poison: 0xFFFF is a NaN pattern that no narrowing gives (NaN gives 0x7FFF). */
    unsigned short *d_plain = (unsigned short *)device_alloc(n * 2, 0xFF);
    unsigned short *d_rn = (unsigned short *)device_alloc(n * 2, 0xFF);
    void *d_pair = device_alloc(n * 4, 0xFF), *d_pair2 = device_alloc(n * 4, 0xFF);
    if (f == &HALF)
        narrow_half<<<128, 256>>>(d_x, n, d_plain, d_rn, (__half2 *)d_pair, (__half2 *)d_pair2);
    else
        narrow_bf16<<<128, 256>>>(d_x, n, d_plain, d_rn, (__nv_bfloat162 *)d_pair, (__nv_bfloat162 *)d_pair2);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    unsigned short *plain = (unsigned short *)to_host(d_plain, n * 2);
    unsigned short *rn = (unsigned short *)to_host(d_rn, n * 2);
    unsigned short *pair = (unsigned short *)to_host(d_pair, n * 4); /* [2i] the low half, [2i+1] the high */
    unsigned short *pair2 = (unsigned short *)to_host(d_pair2, n * 4);

    long bad = 0, bad_pair = 0, first = -1, first_pair = -1;
    for (long i = 0; i < n; i++) {
        const uint16_t want = f->narrow(x[i]), want_hi = f->narrow(x[n - 1 - i]);
        if ((plain[i] != want || rn[i] != want) && bad++ == 0) first = i;
        if ((pair[2 * i] != want || pair[2 * i + 1] != want_hi || pair2[2 * i] != want || pair2[2 * i + 1] != want_hi) &&
            bad_pair++ == 0)
            first_pair = i;
    }
    char name[200];
    const int h = f == &HALF;
    snprintf(name, sizeof name, "%s: %s and %s round %ld floats (halfway points, specials, random) as common/f16.c does",
             f->name, h ? "__float2half" : "__float2bfloat16", h ? "__float2half_rn" : "__float2bfloat16_rn", n);
    test_expect(bad == 0, name, "%ld differ, the first %a (0x%08X) -> 0x%04X and 0x%04X, f16.c 0x%04X", bad,
                bad ? (double)x[first] : 0.0, bad ? f32_bits(x[first]) : 0, bad ? plain[first] : 0,
                bad ? rn[first] : 0, bad ? f->narrow(x[first]) : 0);
    snprintf(name, sizeof name, "%s: %s and %s put the first float in the low half (first in memory), rounded as f16.c",
             f->name, h ? "__floats2half2_rn" : "__floats2bfloat162_rn", h ? "__float22half2_rn" : "__float22bfloat162_rn");
    test_expect(bad_pair == 0, name, "%ld pairs differ, the first from (%a, %a)", bad_pair,
                bad_pair ? (double)x[first_pair] : 0.0, bad_pair ? (double)x[n - 1 - first_pair] : 0.0);
    free(plain);
    free(rn);
    free(pair);
    free(pair2);
    CUDA_CHECK(cudaFree(d_x));
    CUDA_CHECK(cudaFree(d_plain));
    CUDA_CHECK(cudaFree(d_rn));
    CUDA_CHECK(cudaFree(d_pair));
    CUDA_CHECK(cudaFree(d_pair2));
}

static void check_shared(void)
{
    /* Every 16-bit pattern as __half; pairs (i, i ^ 0x8001) as __nv_bfloat162. */
    unsigned short *h = (unsigned short *)malloc(NPAT * 2), *b = (unsigned short *)malloc(NPAT * 4);
    if (!h || !b) {
        fprintf(stderr, "test_half: out of memory\n");
        exit(1);
    }
    for (int i = 0; i < NPAT; i++) {
        h[i] = (unsigned short)i;
        b[2 * i] = (unsigned short)i;
        b[2 * i + 1] = (unsigned short)(i ^ 0x8001);
    }
    void *d_h = device_alloc(NPAT * 2, 0), *d_b = device_alloc(NPAT * 4, 0);
    void *d_ho = device_alloc(NPAT * 2, 0xFF), *d_bo = device_alloc(NPAT * 4, 0xFF);
    CUDA_CHECK(cudaMemcpy(d_h, h, NPAT * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_b, b, NPAT * 4, cudaMemcpyHostToDevice));
    through_shared<<<NPAT / 256, 256, 256 * sizeof(__nv_bfloat162)>>>((const __half *)d_h, (const __nv_bfloat162 *)d_b,
                                                                     (__half *)d_ho, (__nv_bfloat162 *)d_bo);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    unsigned short *ho = (unsigned short *)to_host(d_ho, NPAT * 2), *bo = (unsigned short *)to_host(d_bo, NPAT * 4);
    long bad = 0;
    for (int i = 0; i < NPAT; i++) {
        const int j = (i & ~255) + 255 - (i & 255); /* where element i went */
        if (ho[j] != h[i] || bo[2 * j] != b[2 * i] || bo[2 * j + 1] != b[2 * i + 1]) bad++;
    }
    test_expect(bad == 0, "half and bf16: __half and __nv_bfloat162 pass through static and dynamic shared memory bit for bit",
                "%ld of %d elements differ", bad, NPAT);
    free(h);
    free(b);
    free(ho);
    free(bo);
    CUDA_CHECK(cudaFree(d_h));
    CUDA_CHECK(cudaFree(d_b));
    CUDA_CHECK(cudaFree(d_ho));
    CUDA_CHECK(cudaFree(d_bo));
}

/* CUDA's __hmax2 against common/f16.c's f16_max / bf16_max, bit for bit
 * but for two NaNs, which must give a NaN (CUDA: the canonical one). */
static long max_bad(uint16_t (*max_ref)(uint16_t, uint16_t), const format *f, const unsigned short *spec,
                    const unsigned *got)
{
    long bad = 0;
    for (long t = 0; t < (long)NPAT * NSPEC; t++) {
        const int i = (int)(t / NSPEC), k = (int)(t % NSPEC);
        const uint16_t want[2] = {max_ref((uint16_t)i, spec[k]), max_ref((uint16_t)(i ^ 0x8001), spec[NSPEC - 1 - k])};
        const uint16_t have[2] = {(uint16_t)(got[t] & 0xFFFFu), (uint16_t)(got[t] >> 16)};
        for (int h = 0; h < 2; h++) {
            const int both_nan = isnan(f->widen(want[h])) && isnan(f->widen(have[h]));
            if (have[h] != want[h] && !both_nan) bad++;
        }
    }
    return bad;
}

static void check_max2(void)
{
    /* Zeros, ones, the largest and smallest numbers, infinities and NaNs
     * of both formats (0x7E00, 0xFE00: float16 NaNs; 0x7FC0, 0xFFC0:
     * bfloat16 NaNs, which are float16 numbers, and the reverse). */
    static const unsigned short spec[NSPEC] = {0x0000, 0x8000, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x0001, 0x8001,
                                               0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7F7F, 0xFF80, 0x7FC0, 0xFFC0};
    unsigned short *d_spec = (unsigned short *)device_alloc(sizeof spec, 0);
    CUDA_CHECK(cudaMemcpy(d_spec, spec, sizeof spec, cudaMemcpyHostToDevice));
    const size_t bytes = (size_t)NPAT * NSPEC * sizeof(unsigned);
    unsigned *d_h = (unsigned *)device_alloc(bytes, 0xFF), *d_b = (unsigned *)device_alloc(bytes, 0xFF);
    max2_pairs<<<1024, 256>>>(d_spec, d_h, d_b);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    unsigned *h = (unsigned *)to_host(d_h, bytes), *b = (unsigned *)to_host(d_b, bytes);
    const long bad_h = max_bad(f16_max, &HALF, spec, h), bad_b = max_bad(bf16_max, &BF16, spec, b);
    test_expect(bad_h == 0, "half: __hmax2 keeps the larger half, a number over a NaN, +0 over -0",
                "%ld of %ld halves differ", bad_h, 2L * NPAT * NSPEC);
    test_expect(bad_b == 0, "bf16: __hmax2 keeps the larger half, a number over a NaN, +0 over -0",
                "%ld of %ld halves differ", bad_b, 2L * NPAT * NSPEC);
    free(h);
    free(b);
    CUDA_CHECK(cudaFree(d_spec));
    CUDA_CHECK(cudaFree(d_h));
    CUDA_CHECK(cudaFree(d_b));
}

int main(void)
{
    int count = 0;
    int have_gpu = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    cudaGetLastError(); /* clear the no-device error, if any */
    if (!have_gpu) {
        test_skip("half and bf16: device conversions against common/f16.c", "no CUDA device");
        return test_exit_status();
    }
    check_widening(&HALF);
    check_widening(&BF16);
    check_shared();
    check_max2();

    const long cap = 1600000; /* 2 formats x 32768 x 8 edge floats, the specials, random floats */
    float *x = (float *)malloc(cap * sizeof(float));
    if (!x) {
        fprintf(stderr, "test_half: out of memory\n");
        return 1;
    }
    long n = make_floats(x, cap);
    check_narrowing(&HALF, x, n);
    check_narrowing(&BF16, x, n);
    free(x);
    return test_exit_status();
}
