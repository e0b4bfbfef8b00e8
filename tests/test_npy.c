/* .npy files: what we write is what NumPy writes, what NumPy writes we
 * read, and every malformed file is refused with a clear line, not a
 * crash. Files live in a fresh mkdtemp directory, removed at the end. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, rmdir, unlink */

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "f16.h"
#include "inputs.h"
#include "npy.h"
#include "test.h"

static char dir[64];
static char path_buf[200];

/* A file name in the temporary directory. */
static const char *tmp(const char *name)
{
    snprintf(path_buf, sizeof path_buf, "%s/%s", dir, name);
    return path_buf;
}

static void write_bytes(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, n, f) != n || fclose(f) != 0) {
        printf("FAIL npy: cannot write the test file %s\n", path);
        exit(1);
    }
}

static long file_size(const char *path, unsigned char *head, size_t headlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t got = fread(head, 1, headlen, f);
    (void)got;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

/* np.save("f.npy", np.arange(1, 7, dtype=np.float32).reshape(2, 3)), byte
 * by byte: magic, version 1.0, header length 118 (0x76 0x00), the dict,
 * 58 spaces and '\n' (data at byte 128, a multiple of 64), then 1.0 to 6.0
 * as little-endian float32. */
static const char NUMPY_2x3[] =
    "\x93NUMPY\x01\x00\x76\x00"
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
    "          " "          " "          " "          " "          " "        " /* 58 spaces */
    "\n"
    "\x00\x00\x80\x3f" "\x00\x00\x00\x40" "\x00\x00\x40\x40"
    "\x00\x00\x80\x40" "\x00\x00\xa0\x40" "\x00\x00\xc0\x40";
#define NUMPY_2x3_LEN (sizeof NUMPY_2x3 - 1)

static void test_round_trip(void)
{
    const char *name = "npy: write then read gives the same shape and bits (incl. -inf, +-FLT_MAX, denormals, NaN, -0)";
    const long long shapes[][2] = {{1, 1}, {5, 7}, {10, 1000}, {1000, 3}};
    for (int s = 0; s < 4; s++) {
        long long r = shapes[s][0], c = shapes[s][1], n = r * c;
        float *x = malloc((size_t)n * sizeof *x), *back = NULL;
        inputs_fill(x, r, c, INPUT_SPECIAL, 3);
        if (n > 2) {
            unsigned bits = 0x7fc01234u; /* a NaN with a payload */
            memcpy(&x[n - 1], &bits, sizeof bits);
            x[n - 2] = -0.0f;
        }
        char err[300];
        long long rr = 0, cc = 0;
        if (npy_write(tmp("rt.npy"), x, r, c, err, sizeof err) != 0 ||
            npy_read(tmp("rt.npy"), &back, &rr, &cc, err, sizeof err) != 0) {
            test_fail(name, "%s", err);
            free(x);
            return;
        }
        int same = rr == r && cc == c && memcmp(x, back, (size_t)n * sizeof *x) == 0;
        free(x);
        free(back);
        if (!same) {
            test_fail(name, "shape %lld x %lld came back %lld x %lld or with other bits", r, c, rr, cc);
            return;
        }
    }
    test_pass(name);
}

static void test_numpy_bytes(void)
{
    /* Our writer produces exactly NumPy's bytes. */
    const float x[6] = {1, 2, 3, 4, 5, 6};
    char err[300];
    unsigned char got[256];
    int r = npy_write(tmp("ours.npy"), x, 2, 3, err, sizeof err);
    long n = file_size(tmp("ours.npy"), got, sizeof got);
    test_expect(r == 0 && n == (long)NUMPY_2x3_LEN && memcmp(got, NUMPY_2x3, NUMPY_2x3_LEN) == 0,
                "npy: a 2 x 3 array is written byte for byte as NumPy's np.save writes it", "r %d, %ld bytes: %s", r, n,
                r ? err : "bytes differ");

    /* And we read NumPy's bytes. */
    write_bytes(tmp("numpy.npy"), NUMPY_2x3, NUMPY_2x3_LEN);
    float *y = NULL;
    long long rows = 0, cols = 0;
    r = npy_read(tmp("numpy.npy"), &y, &rows, &cols, err, sizeof err);
    test_expect(r == 0 && rows == 2 && cols == 3 && y[0] == 1 && y[2] == 3 && y[3] == 4 && y[5] == 6,
                "npy: reads a hand-written NumPy version 1.0 file (2 x 3, 1.0 .. 6.0)", "r %d: %s", r, r ? err : "");
    free(y);

    /* The data starts on a 64-byte boundary after a header ending in '\n'. */
    const long long shapes[][2] = {{1, 1}, {7, 13}, {1, 100000}, {100000, 1}, {12345, 67}};
    int ok = 1;
    for (int s = 0; s < 5 && ok; s++) {
        long long rr = shapes[s][0], cc = shapes[s][1];
        float *z = calloc((size_t)(rr * cc), sizeof *z);
        ok = npy_write(tmp("align.npy"), z, rr, cc, err, sizeof err) == 0;
        free(z);
        unsigned char head[256];
        long size = file_size(tmp("align.npy"), head, sizeof head);
        long start = 10 + head[8] + 256L * head[9];
        if (!ok || start % 64 != 0 || head[start - 1] != '\n' || size != start + 4 * rr * cc) ok = 0;
    }
    test_expect(ok, "npy: written files have a version 1.0 header ending in '\\n', data on a 64-byte boundary",
                "misaligned or wrong size");
}

/* A file with the given version and dict, padded as NumPy pads it, then
 * `data` bytes of 1.0f. */
static void make_npy(const char *path, int major, const char *dict, size_t data)
{
    size_t lenbytes = major == 1 ? 2 : 4, pre = 8 + lenbytes;
    size_t d = strlen(dict), pad = (64 - (pre + d + 1) % 64) % 64, hlen = d + pad + 1;
    size_t total = pre + hlen + data;
    unsigned char *b = malloc(total);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[7] = 0;
    for (size_t i = 0; i < lenbytes; i++) b[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(b + pre, dict, d);
    memset(b + pre + d, ' ', pad);
    b[pre + hlen - 1] = '\n';
    for (size_t i = 0; i < data; i++) b[pre + hlen + i] = "\x00\x00\x80\x3f"[i % 4];
    write_bytes(path, b, total);
    free(b);
}

static void expect_read(const char *name, const char *path, long long rows, long long cols)
{
    float *y = NULL;
    long long r = 0, c = 0;
    char err[300];
    int ret = npy_read(path, &y, &r, &c, err, sizeof err);
    test_expect(ret == 0 && r == rows && c == cols && y[0] == 1.0f && y[r * c - 1] == 1.0f, name,
                "got %d, %lld x %lld: %s", ret, r, c, ret ? err : "");
    free(y);
}

static void test_versions_and_spellings(void)
{
    const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
    make_npy(tmp("v2.npy"), 2, dict, 48);
    expect_read("npy: reads a version 2.0 file (4-byte header length)", tmp("v2.npy"), 3, 4);
    make_npy(tmp("v3.npy"), 3, dict, 48);
    expect_read("npy: reads a version 3.0 file", tmp("v3.npy"), 3, 4);
    make_npy(tmp("spell.npy"), 1, "{\"shape\":(3,4),\"fortran_order\":False,\"descr\":\"<f4\"}", 48);
    expect_read("npy: reads a header with other key order, double quotes, no spaces, no trailing comma",
                tmp("spell.npy"), 3, 4);
    make_npy(tmp("comma.npy"), 1, "{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 3 , 4 , ) , }", 48);
    expect_read("npy: reads a header with extra spaces and a trailing comma in the shape", tmp("comma.npy"), 3, 4);
}

/* Each must fail: -1, no data, one non-empty line containing `want`. */
static void expect_reject(const char *name, const char *path, const char *want)
{
    float *y = (float *)&y; /* any non-NULL value: it must come back NULL */
    long long r = 0, c = 0;
    char err[300] = "";
    int ret = npy_read(path, &y, &r, &c, err, sizeof err);
    test_expect(ret == -1 && y == NULL && err[0] && !strchr(err, '\n') && strstr(err, want), name,
                "returned %d, message '%s', want one containing '%s'", ret, err, want);
}

static void test_rejections(void)
{
    expect_reject("npy: rejects a missing file, saying so", tmp("nope.npy"), "No such file");
    write_bytes(tmp("magic.npy"), "NOT A NUMPY FILE AT ALL", 23);
    expect_reject("npy: rejects a file without the \\x93NUMPY magic", tmp("magic.npy"), "bad magic");
    write_bytes(tmp("empty.npy"), "", 0);
    expect_reject("npy: rejects an empty file", tmp("empty.npy"), "bad magic");
    write_bytes(tmp("pre.npy"), "\x93NUMPY\x01\x00\x76", 9);
    expect_reject("npy: rejects a file that ends inside the preamble", tmp("pre.npy"), "truncated");
    expect_reject("npy: rejects a directory", dir, "not a regular file");

    make_npy(tmp("v4.npy"), 4, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24);
    expect_reject("npy: rejects format version 4.0, naming it", tmp("v4.npy"), "version 4.0");

    struct {
        const char *name, *dict, *want;
        size_t data;
    } bad[] = {
        {"npy: rejects float64 ('<f8'), naming the dtype", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
         "dtype '<f8'", 48},
        {"npy: rejects big-endian float32 ('>f4'), naming the dtype",
         "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", "dtype '>f4'", 24},
        {"npy: rejects '|f4' too (only '<f4' is float32 little-endian)",
         "{'descr': '|f4', 'fortran_order': False, 'shape': (2, 3), }", "dtype '|f4'", 24},
        {"npy: rejects a structured dtype", "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }",
         "descr", 24},
        {"npy: rejects fortran_order True", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
         "fortran_order True", 24},
        {"npy: rejects a rank-1 array, naming the rank", "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }",
         "rank 1", 24},
        {"npy: rejects a rank-3 array, naming the rank",
         "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }", "rank 3", 24},
        {"npy: rejects a rank-0 array (a scalar)", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", "rank 0",
         4},
        {"npy: rejects a zero dimension", "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }",
         "zero dimension", 0},
        {"npy: rejects truncated data, saying how many bytes are missing",
         "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "needs 24 data bytes, the file has 8", 8},
        {"npy: rejects trailing bytes after the data", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
         "4 extra bytes", 28},
        {"npy: rejects a dimension above 2^40",
         "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 3), }", "exceeds", 24},
        {"npy: rejects more than 2^31-1 rows (one grid dimension)",
         "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 1), }", "too large", 24},
        {"npy: rejects a header without 'shape'", "{'descr': '<f4', 'fortran_order': False, }", "lacks 'shape'", 24},
        {"npy: rejects an unknown header key", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}",
         "unexpected key 'x'", 24},
        {"npy: rejects an unterminated string in the header", "{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3)",
         "malformed", 24},
        {"npy: rejects a header dict that never closes", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)",
         "malformed", 24},
        {"npy: rejects text after the header dict", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)} junk",
         "after the header", 24},
        {"npy: rejects a header that is not a dict", "[1, 2, 3]", "not a Python dict", 24},
        {"npy: rejects a non-numeric shape", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }",
         "'shape' is not a tuple", 24},
        {"npy: rejects fortran_order that is not True or False",
         "{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }", "'fortran_order' is not True or False", 24},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        make_npy(tmp("bad.npy"), 1, bad[i].dict, bad[i].data);
        expect_reject(bad[i].name, tmp("bad.npy"), bad[i].want);
    }

    /* Lengths in the preamble that lie. */
    write_bytes(tmp("hlen.npy"), "\x93NUMPY\x01\x00\xff\xff{'descr'", 17);
    expect_reject("npy: rejects a header length beyond the end of the file", tmp("hlen.npy"), "truncated");
    write_bytes(tmp("huge.npy"), "\x93NUMPY\x02\x00\xff\xff\xff\xff{", 13);
    expect_reject("npy: rejects a 4 GiB header length (over the 1 MiB cap)", tmp("huge.npy"), "too large");
}

/* ---- 16-bit dtypes: '<f2' float16 and '<u2' bfloat16 bits ----------------- */

/* np.save("h.npy", np.array([[1, -2, 65504], [np.inf, 2**-24, -0.0]], dtype=np.float16)),
 * byte by byte: the header of NUMPY_2x3 with '<f2', then six little-endian
 * float16 patterns. */
static const char NUMPY_F16_2x3[] =
    "\x93NUMPY\x01\x00\x76\x00"
    "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }"
    "          " "          " "          " "          " "          " "        " /* 58 spaces */
    "\n"
    "\x00\x3c" "\x00\xc0" "\xff\x7b" "\x00\x7c" "\x01\x00" "\x00\x80";
#define NUMPY_F16_2x3_LEN (sizeof NUMPY_F16_2x3 - 1)

static void test_16_bit(void)
{
    char err[300] = "";
    long long r = 0, c = 0;
    npy_dtype t = NPY_F32;
    void *v = NULL;

    /* Every 16-bit pattern, as a 256 x 256 array, in each 16-bit dtype. */
    uint16_t *all = malloc(65536 * sizeof *all);
    for (uint32_t i = 0; i < 65536; i++) all[i] = (uint16_t)i;
    const npy_dtype types[2] = {NPY_F16, NPY_BF16};
    const char *names[2] = {"npy: float16 ('<f2'): all 65536 patterns written and read back bit for bit, dtype NPY_F16",
                            "npy: bfloat16 ('<u2' bits): all 65536 patterns written and read back bit for bit, dtype NPY_BF16"};
    for (int k = 0; k < 2; k++) {
        int ret = npy_write_typed(tmp("h16.npy"), all, types[k], 256, 256, err, sizeof err);
        if (ret == 0) ret = npy_read_typed(tmp("h16.npy"), &v, &t, &r, &c, err, sizeof err);
        test_expect(ret == 0 && t == types[k] && r == 256 && c == 256 && memcmp(v, all, 65536 * 2) == 0, names[k],
                    "ret %d, dtype %d, %lld x %lld: %s", ret, (int)t, r, c, ret ? err : "other bits");
        free(v);
        v = NULL;
    }
    free(all);

    /* NumPy's float16 bytes, read: the values widen exactly. */
    write_bytes(tmp("h16.npy"), NUMPY_F16_2x3, NUMPY_F16_2x3_LEN);
    int ret = npy_read_typed(tmp("h16.npy"), &v, &t, &r, &c, err, sizeof err);
    const uint16_t *h = v;
    int ok = ret == 0 && t == NPY_F16 && r == 2 && c == 3 && f16_to_float(h[0]) == 1.0f &&
             f16_to_float(h[1]) == -2.0f && f16_to_float(h[2]) == 65504.0f && isinf(f16_to_float(h[3])) &&
             f16_to_float(h[4]) == ldexpf(1, -24) && f16_to_float(h[5]) == 0 && signbit(f16_to_float(h[5]));
    test_expect(ok, "npy: a hand-made NumPy float16 file reads as 1, -2, 65504, inf, 2^-24, -0", "ret %d: %s", ret,
                ret ? err : "other values");
    free(v);
    v = NULL;

    /* And written: exactly NumPy's bytes. */
    const uint16_t six[6] = {0x3C00, 0xC000, 0x7BFF, 0x7C00, 0x0001, 0x8000};
    unsigned char got[256];
    ret = npy_write_typed(tmp("h16.npy"), six, NPY_F16, 2, 3, err, sizeof err);
    long n = file_size(tmp("h16.npy"), got, sizeof got);
    test_expect(ret == 0 && n == (long)NUMPY_F16_2x3_LEN && memcmp(got, NUMPY_F16_2x3, NUMPY_F16_2x3_LEN) == 0,
                "npy: a 2 x 3 float16 array is written byte for byte as NumPy's np.save writes it", "ret %d, %ld bytes: %s",
                ret, n, ret ? err : "bytes differ");

    /* A bfloat16 file made by hand: '<u2', the top halves of 1.0, -2.0,
     * the largest finite bfloat16, -inf, 2^-133, -0. */
    const uint16_t b6[6] = {0x3F80, 0xC000, 0x7F7F, 0xFF80, 0x0001, 0x8000};
    const char *dict = "{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }";
    make_npy(tmp("b16.npy"), 1, dict, 0);
    FILE *f = fopen(tmp("b16.npy"), "ab");
    ok = f && fwrite(b6, 2, 6, f) == 6;
    if (f) fclose(f);
    ret = ok ? npy_read_typed(tmp("b16.npy"), &v, &t, &r, &c, err, sizeof err) : -1;
    h = v;
    ok = ret == 0 && t == NPY_BF16 && r == 2 && c == 3 && bf16_to_float(h[0]) == 1.0f &&
         bf16_to_float(h[1]) == -2.0f && bf16_to_float(h[2]) == ldexpf(255, 120) && bf16_to_float(h[3]) == -INFINITY &&
         bf16_to_float(h[4]) == ldexpf(1, -133) && bf16_to_float(h[5]) == 0 && signbit(bf16_to_float(h[5]));
    test_expect(ok, "npy: a hand-made bfloat16 ('<u2') file reads as 1, -2, ~3.39e38, -inf, 2^-133, -0", "ret %d: %s",
                ret, ret ? err : "other values");
    free(v);
    v = NULL;

    /* float32 through the typed reader: NPY_F32, the same floats. */
    write_bytes(tmp("numpy.npy"), NUMPY_2x3, NUMPY_2x3_LEN);
    ret = npy_read_typed(tmp("numpy.npy"), &v, &t, &r, &c, err, sizeof err);
    const float *x = v;
    test_expect(ret == 0 && t == NPY_F32 && r == 2 && c == 3 && x[0] == 1 && x[5] == 6,
                "npy: npy_read_typed reads a float32 file as NPY_F32 with its values", "ret %d: %s", ret, ret ? err : "");
    free(v);
    v = NULL;

    /* The float32 reader stays float32: a 16-bit file is a one-line error. */
    expect_reject("npy: npy_read (float32) refuses a float16 file, naming '<f2'", tmp("h16.npy"), "dtype '<f2'");
    expect_reject("npy: npy_read (float32) refuses a bfloat16 file, naming '<u2'", tmp("b16.npy"), "dtype '<u2'");

    /* What the typed reader refuses, each with one line. */
    struct {
        const char *name, *dict, *want;
        size_t data;
    } bad[] = {
        {"npy: typed: rejects big-endian float16 ('>f2'), naming the dtype",
         "{'descr': '>f2', 'fortran_order': False, 'shape': (2, 3), }", "dtype '>f2'", 12},
        {"npy: typed: rejects big-endian uint16 ('>u2'), naming the dtype",
         "{'descr': '>u2', 'fortran_order': False, 'shape': (2, 3), }", "dtype '>u2'", 12},
        {"npy: typed: rejects int16 ('<i2'), naming the dtype",
         "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }", "dtype '<i2'", 12},
        {"npy: typed: rejects float64 ('<f8'), naming the dtype",
         "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", "dtype '<f8'", 48},
        {"npy: typed: rejects float16 data cut short, counting 2 bytes an element",
         "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", "needs 12 data bytes, the file has 8", 8},
        {"npy: typed: rejects float16 data with bytes left over",
         "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3), }", "2 extra bytes", 14},
        {"npy: typed: rejects a rank-1 bfloat16 array", "{'descr': '<u2', 'fortran_order': False, 'shape': (6,), }",
         "rank 1", 12},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        make_npy(tmp("bad.npy"), 1, bad[i].dict, bad[i].data);
        v = (void *)&v; /* any non-NULL value: it must come back NULL */
        err[0] = 0;
        ret = npy_read_typed(tmp("bad.npy"), &v, &t, &r, &c, err, sizeof err);
        test_expect(ret == -1 && v == NULL && err[0] && !strchr(err, '\n') && strstr(err, bad[i].want), bad[i].name,
                    "returned %d, message '%s', want one containing '%s'", ret, err, bad[i].want);
    }
}

/* Random damage to a valid file: every result must be a clean success or
 * a clean one-line failure, never a crash or a read out of bounds. */
static void test_fuzz(void)
{
    const char *name = "npy: 3000 randomly damaged files never crash the reader and fail with one line";
    unsigned char buf[NUMPY_2x3_LEN + 8];
    unsigned long long s = 12345;
    int ok = 1, failures = 0;
    for (int t = 0; t < 3000 && ok; t++) {
        memcpy(buf, NUMPY_2x3, NUMPY_2x3_LEN);
        size_t len = NUMPY_2x3_LEN;
        for (int k = 0; k < 1 + t % 4; k++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL; /* an LCG is enough here */
            size_t at = (size_t)(s >> 33) % 128;                     /* damage the header */
            buf[at] = (t & 1) ? (unsigned char)(s >> 20) : "{}(),:' \n0123TF<f4x"[(s >> 20) % 19];
        }
        if (t % 5 == 0) len = (size_t)(s >> 40) % len; /* and sometimes cut it short */
        write_bytes(tmp("fuzz.npy"), buf, len);
        float *y = NULL;
        long long r, c;
        char err[300] = "";
        if (npy_read(tmp("fuzz.npy"), &y, &r, &c, err, sizeof err) == 0) {
            if (r * c != 6) ok = 0; /* the data size must still match */
            free(y);
        } else {
            failures++;
            if (!err[0] || strchr(err, '\n') || y) ok = 0;
        }
    }
    test_expect(ok && failures > 1500, name, "bad result (ok %d, %d failures)", ok, failures);
}

static void test_write_errors(void)
{
    const float x[1] = {1};
    char err[300] = "";
    int r = npy_write(tmp("no/such/dir/out.npy"), x, 1, 1, err, sizeof err);
    test_expect(r == -1 && strstr(err, "cannot create") && strstr(err, "No such file") && !strchr(err, '\n'),
                "npy: writing into a missing directory fails with one line", "r %d: '%s'", r, err);
    /* /dev/full accepts the open and fails the write (ENOSPC): the error
     * shows up at fwrite or only at fclose, and must be reported either way. */
    if (access("/dev/full", W_OK) == 0) {
        r = npy_write("/dev/full", x, 1, 1, err, sizeof err);
        test_expect(r == -1 && strstr(err, "No space left") && !strchr(err, '\n'),
                    "npy: a write that fails for lack of space is reported", "r %d: '%s'", r, err);
    } else {
        test_skip("npy: a write that fails for lack of space is reported", "no writable /dev/full");
    }
    r = npy_write(tmp("zero.npy"), x, 0, 1, err, sizeof err);
    test_expect(r == -1 && access(tmp("zero.npy"), F_OK) != 0, "npy: refuses to write a zero-row array",
                "r %d", r);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_npy_XXXXXX");
    if (!mkdtemp(dir)) {
        printf("FAIL npy: cannot create a temporary directory\n");
        return 1;
    }
    test_round_trip();
    test_numpy_bytes();
    test_versions_and_spellings();
    test_rejections();
    test_fuzz();
    test_write_errors();
    test_16_bit();

    const char *files[] = {"rt.npy", "ours.npy", "numpy.npy", "align.npy", "v2.npy", "v3.npy", "spell.npy",
                           "comma.npy", "magic.npy", "empty.npy", "pre.npy", "v4.npy", "bad.npy", "hlen.npy",
                           "huge.npy", "fuzz.npy", "h16.npy", "b16.npy"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) unlink(tmp(files[i]));
    test_expect(rmdir(dir) == 0, "npy: the tests leave no file behind", "%s is not empty", dir);
    return test_exit_status();
}
