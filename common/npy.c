/* .npy files of float32, float16 and bfloat16 (see npy.h).
 *
 * The format (numpy.lib.format):
 *   6 bytes   magic "\x93NUMPY"
 *   2 bytes   version major, minor: 1.0, 2.0 or 3.0
 *   2 bytes   header length, little-endian (4 bytes in versions 2.0 and 3.0)
 *   header    a Python dict literal, e.g.
 *             {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 *             padded with spaces and ending in '\n'
 *   data      rows * cols little-endian values, row after row (C order):
 *             float32 ('<f4'), float16 ('<f2') or bfloat16 bits ('<u2')
 *
 * A file is untrusted input: every length and number in it is checked
 * before it is used, so a damaged or hostile file gives a message, never a
 * crash. */
#define _POSIX_C_SOURCE 200809L /* fstat, fileno */

#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "options.h" /* OPT_MAX_COLS */

#define MAX_HEADER (1L << 20) /* 1 MiB; NumPy itself refuses more than 10000 bytes by default */

/* "path: message" into err, the path made printable and short so the
 * message stays one line. Always returns -1, for `return fail(...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    char p[96], msg[256];
    size_t i = 0;
    for (; path[i] && i < sizeof p - 4; i++) p[i] = (path[i] >= 32 && path[i] < 127) ? path[i] : '?';
    if (path[i]) {
        memcpy(p + i, "...", 3);
        i += 3;
    }
    p[i] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(err, errlen, "%s: %s", p, msg);
    return -1;
}

/* The data is little-endian; the course runs on x86-64 and aarch64,
 * both little-endian, so the bytes are copied as they are. */
static int host_is_little_endian(void)
{
    const unsigned one = 1;
    return *(const unsigned char *)&one == 1;
}

/* ---- a small parser for the header dict ---------------------------------
 * A cursor over header text [p, end): every read checks it stays inside. */
typedef struct {
    const char *p, *end;
} cursor;

static void skip_space(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

/* Consumes character ch (after spaces) if it is next. */
static int accept(cursor *c, char ch)
{
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string, 'abc' or "abc", copied into out (at most outlen - 1
 * characters; longer strings are an error). */
static int read_string(cursor *c, char *out, size_t outlen)
{
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    char quote = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != quote) {
        if (n + 1 >= outlen || *c->p == '\\' || *c->p == '\n') return 0;
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) return 0; /* no closing quote */
    c->p++;
    out[n] = '\0';
    return 1;
}

/* A word of letters (True, False). */
static int read_word(cursor *c, char *out, size_t outlen)
{
    skip_space(c);
    size_t n = 0;
    while (c->p < c->end && ((*c->p >= 'A' && *c->p <= 'Z') || (*c->p >= 'a' && *c->p <= 'z'))) {
        if (n + 1 >= outlen) return 0;
        out[n++] = *c->p++;
    }
    out[n] = '\0';
    return n > 0;
}

/* A shape tuple: (), (6,), (2, 3), (2, 3,), ... The rank is counted in
 * full; the first two sizes are kept. Returns 0 if malformed, 2 if a size
 * exceeds OPT_MAX_COLS, 1 if fine. */
static int read_shape(cursor *c, int *rank, long long dims[2])
{
    *rank = 0;
    if (!accept(c, '(')) return 0;
    int too_big = 0;
    for (;;) {
        skip_space(c);
        if (accept(c, ')')) return too_big ? 2 : 1;
        if (c->p >= c->end || *c->p < '0' || *c->p > '9') return 0;
        long long v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (v <= OPT_MAX_COLS) v = v * 10 + (*c->p - '0'); /* stops growing once too big */
            c->p++;
        }
        if (v > OPT_MAX_COLS) too_big = 1;
        if (*rank < 2) dims[*rank] = v;
        if (*rank < 1000) ++*rank;
        if (!accept(c, ',')) {
            if (!accept(c, ')')) return 0;
            return too_big ? 2 : 1;
        }
    }
}

/* Parses the header dict into its three entries. Returns 0 or fails. */
static int parse_header(const char *text, size_t len, const char *path, char *descr,
                        size_t descrlen, int *fortran, int *rank, long long dims[2], char *err,
                        size_t errlen)
{
    cursor c = {text, text + len};
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    if (!accept(&c, '{')) return fail(err, errlen, path, "header is not a Python dict");
    while (!accept(&c, '}')) {
        char key[32], word[16];
        if (!read_string(&c, key, sizeof key) || !accept(&c, ':'))
            return fail(err, errlen, path, "malformed header dict near byte %ld", (long)(c.p - text));
        if (strcmp(key, "descr") == 0) {
            if (!read_string(&c, descr, descrlen))
                return fail(err, errlen, path, "'descr' is not a simple dtype string (a structured array?)");
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (!read_word(&c, word, sizeof word) || (strcmp(word, "True") && strcmp(word, "False")))
                return fail(err, errlen, path, "'fortran_order' is not True or False");
            *fortran = strcmp(word, "True") == 0;
            have_fortran = 1;
        } else if (strcmp(key, "shape") == 0) {
            int r = read_shape(&c, rank, dims);
            if (r == 0) return fail(err, errlen, path, "'shape' is not a tuple of whole numbers");
            if (r == 2) return fail(err, errlen, path, "a dimension in 'shape' exceeds %lld", OPT_MAX_COLS);
            have_shape = 1;
        } else {
            return fail(err, errlen, path, "unexpected key '%s' in the header", key);
        }
        if (!accept(&c, ',')) { /* the last entry: the dict must close here */
            if (!accept(&c, '}'))
                return fail(err, errlen, path, "malformed header dict near byte %ld", (long)(c.p - text));
            break;
        }
    }
    skip_space(&c);
    if (c.p != c.end) return fail(err, errlen, path, "unexpected text after the header dict");
    if (!have_descr || !have_fortran || !have_shape)
        return fail(err, errlen, path, "header lacks '%s'",
                    !have_descr ? "descr" : !have_fortran ? "fortran_order" : "shape");
    return 0;
}

/* The dtypes a .npy descr names here, and their element sizes. */
static int dtype_of(const char *descr, npy_dtype *t)
{
    if (strcmp(descr, "<f4") == 0) *t = NPY_F32;
    else if (strcmp(descr, "<f2") == 0) *t = NPY_F16;
    else if (strcmp(descr, "<u2") == 0) *t = NPY_BF16;
    else return 0;
    return 1;
}

static const char *descr_of(npy_dtype t) { return t == NPY_F16 ? "<f2" : t == NPY_BF16 ? "<u2" : "<f4"; }

size_t npy_dtype_size(npy_dtype t) { return t == NPY_F32 ? 4 : 2; }

/* npy_read and npy_read_typed: `typed` says whether the 16-bit dtypes are
 * accepted (the float32 reader keeps its message and its one dtype). */
static int read_array(const char *path, int typed, void **data, npy_dtype *dtype, long long *rows,
                      long long *cols, char *err, size_t errlen)
{
    *data = NULL;
    if (!host_is_little_endian()) return fail(err, errlen, path, "big-endian hosts are not supported");
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, path, "cannot open: %s", strerror(errno));

    int ret = -1;
    char *header = NULL;
    void *x = NULL;

    /* The file size first: every length below is checked against it. */
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fail(err, errlen, path, "not a regular file");
        goto done;
    }
    long long size = (long long)st.st_size;

    /* Preamble: magic (6 bytes), version (2), header length (2 or 4). */
    unsigned char pre[12] = {0};
    size_t got = fread(pre, 1, 8, f);
    if (got < 6 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        fail(err, errlen, path, "not a .npy file (bad magic; want \\x93NUMPY)");
        goto done;
    }
    int major = pre[6], minor = pre[7];
    if (got == 8 && !((major == 1 || major == 2 || major == 3) && minor == 0)) {
        fail(err, errlen, path, "unsupported .npy format version %d.%d (want 1.0, 2.0 or 3.0)", major, minor);
        goto done;
    }
    /* Version 1.0 stores the header length in 2 bytes, 2.0 and 3.0 in 4. */
    size_t lenbytes = major == 1 ? 2 : 4;
    if (got < 8 || fread(pre + 8, 1, lenbytes, f) != lenbytes) {
        fail(err, errlen, path, "truncated: the file ends inside the preamble");
        goto done;
    }
    unsigned long hlen = 0;
    for (size_t i = 0; i < lenbytes; i++) hlen |= (unsigned long)pre[8 + i] << (8 * i);
    if (hlen > MAX_HEADER) {
        fail(err, errlen, path, "header length %lu is too large (at most %ld)", hlen, MAX_HEADER);
        goto done;
    }
    long long data_start = 8 + (long long)lenbytes + (long long)hlen;
    if (data_start > size) {
        fail(err, errlen, path, "truncated: the header says %lu bytes, the file ends before", hlen);
        goto done;
    }
    header = malloc(hlen + 1);
    if (!header || fread(header, 1, hlen, f) != hlen) {
        fail(err, errlen, path, header ? "cannot read the header" : "out of memory");
        goto done;
    }
    header[hlen] = '\0';

    char descr[32];
    int fortran = 0, rank = 0;
    long long dims[2] = {0, 0};
    if (parse_header(header, hlen, path, descr, sizeof descr, &fortran, &rank, dims, err, errlen)) goto done;
    npy_dtype t;
    if (!dtype_of(descr, &t) || (!typed && t != NPY_F32)) {
        if (typed)
            fail(err, errlen, path,
                 "dtype '%s' is not supported (want '<f4' float32, '<f2' float16 or '<u2' bfloat16 bits, little-endian)",
                 descr);
        else
            fail(err, errlen, path, "dtype '%s' is not supported (want '<f4', little-endian float32)", descr);
        goto done;
    }
    if (fortran) {
        fail(err, errlen, path, "fortran_order True is not supported (want C order; use np.ascontiguousarray)");
        goto done;
    }
    if (rank != 2) {
        fail(err, errlen, path, "array has rank %d, want rank 2 (rows, cols)", rank);
        goto done;
    }
    if (dims[0] < 1 || dims[1] < 1) {
        fail(err, errlen, path, "shape (%lld, %lld) has a zero dimension", dims[0], dims[1]);
        goto done;
    }
    if (dims[0] > OPT_MAX_ROWS || dims[0] > OPT_MAX_ELEMENTS / dims[1]) {
        fail(err, errlen, path, "shape (%lld, %lld) is too large (at most %lld rows, 2^40 elements)",
             dims[0], dims[1], OPT_MAX_ROWS);
        goto done;
    }
    /* At most 2^40 elements, so the byte count cannot overflow. */
    long long need = dims[0] * dims[1] * (long long)npy_dtype_size(t);
    long long have = size - data_start;
    if (have < need) {
        fail(err, errlen, path, "truncated: shape (%lld, %lld) needs %lld data bytes, the file has %lld",
             dims[0], dims[1], need, have);
        goto done;
    }
    if (have > need) {
        fail(err, errlen, path, "file has %lld extra bytes after the (%lld, %lld) data", have - need,
             dims[0], dims[1]);
        goto done;
    }
    if ((unsigned long long)need > (size_t)-1 || !(x = malloc((size_t)need))) {
        fail(err, errlen, path, "out of memory for %lld bytes", need);
        goto done;
    }
    if (fread(x, 1, (size_t)need, f) != (size_t)need) {
        fail(err, errlen, path, "cannot read the data");
        goto done;
    }
    *data = x;
    *dtype = t;
    *rows = dims[0];
    *cols = dims[1];
    x = NULL;
    ret = 0;
done:
    free(x);
    free(header);
    fclose(f);
    return ret;
}

int npy_read(const char *path, float **data, long long *rows, long long *cols, char *err,
             size_t errlen)
{
    void *x;
    npy_dtype t;
    int r = read_array(path, 0, &x, &t, rows, cols, err, errlen);
    *data = (float *)x;
    return r;
}

int npy_read_typed(const char *path, void **data, npy_dtype *dtype, long long *rows, long long *cols,
                   char *err, size_t errlen)
{
    return read_array(path, 1, data, dtype, rows, cols, err, errlen);
}

int npy_write(const char *path, const float *data, long long rows, long long cols, char *err,
              size_t errlen)
{
    return npy_write_typed(path, data, NPY_F32, rows, cols, err, errlen);
}

int npy_write_typed(const char *path, const void *data, npy_dtype dtype, long long rows, long long cols,
                    char *err, size_t errlen)
{
    if (!host_is_little_endian()) return fail(err, errlen, path, "big-endian hosts are not supported");
    if (rows < 1 || cols < 1 || rows > OPT_MAX_COLS || cols > OPT_MAX_COLS)
        return fail(err, errlen, path, "cannot write shape (%lld, %lld)", rows, cols);

    /* The dict exactly as NumPy writes it, then spaces and '\n' so that the
     * data starts at a multiple of 64 bytes (NumPy aligns it too, which lets
     * np.load memory-map the data with aligned floats). */
    char header[256]; /* dict <= 80 bytes + up to 63 spaces + '\n' */
    if (dtype != NPY_F32 && dtype != NPY_F16 && dtype != NPY_BF16)
        return fail(err, errlen, path, "cannot write dtype %d", (int)dtype);
    int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %lld), }",
                     descr_of(dtype), rows, cols);
    int total = 10 + n + 1; /* preamble + dict + '\n' */
    int pad = (64 - total % 64) % 64;
    memset(header + n, ' ', (size_t)pad);
    header[n + pad] = '\n';
    int hlen = n + pad + 1;
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff),
                             (unsigned char)(hlen >> 8)};

    FILE *f = fopen(path, "wb");
    if (!f) return fail(err, errlen, path, "cannot create: %s", strerror(errno));
    size_t count = (size_t)(rows * cols);
    int ok = fwrite(pre, 1, sizeof pre, f) == sizeof pre &&
             fwrite(header, 1, (size_t)hlen, f) == (size_t)hlen &&
             fwrite(data, npy_dtype_size(dtype), count, f) == count;
    int saved = errno;
    if (fclose(f) != 0 && ok) ok = 0, saved = errno; /* a full disk shows up here */
    /* A half-written file is left as it is: its data is short of what its
     * header promises, so npy_read refuses it. */
    if (!ok) return fail(err, errlen, path, "cannot write: %s", strerror(saved));
    return 0;
}
