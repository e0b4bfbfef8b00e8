/* .npy files, rank 2, C order (NumPy format versions 1.0-3.0), of three
 * element types:
 *
 *   descr   npy_dtype  element
 *   '<f4'   NPY_F32    float32
 *   '<f2'   NPY_F16    float16 (IEEE binary16), NumPy's np.float16
 *   '<u2'   NPY_BF16   bfloat16, stored as its raw 16-bit patterns
 *
 * NumPy has no bfloat16 type of its own, so a bfloat16 array is kept
 * lossless as the unsigned 16-bit integers holding its bits (the top half
 * of each float32). From NumPy: write one with
 *     np.save(path, (x.astype(np.float32).view(np.uint32) >> 16).astype('<u2'))
 * (that truncates; common/f16.h's bf16_from_float rounds to nearest even),
 * read one with (np.load(path).astype(np.uint32) << 16).view(np.float32).
 * A '<u2' file is therefore always read as bfloat16 here.
 *
 * All data is little-endian: big-endian files ('>f4', '>f2', '>u2') are
 * rejected, as is every other dtype, Fortran order and any rank but 2,
 * each with a one-line message in err. */
#ifndef COMMON_NPY_H
#define COMMON_NPY_H

#include <stddef.h>

#include "f16.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A file's element type is the course's storage type (f16.h). */
typedef dtype npy_dtype;
#define NPY_F32 DTYPE_F32
#define NPY_F16 DTYPE_F16
#define NPY_BF16 DTYPE_BF16

/* Bytes per element: 4 for NPY_F32, 2 for the 16-bit types. */
size_t npy_dtype_size(npy_dtype t);

/* float32 only ('<f4'; a 16-bit file is refused, naming its dtype).
 * On success returns 0 and a malloc'ed array in *data (caller frees).
 * On failure returns -1 with a one-line message in err. */
int npy_read(const char *path, float **data, long long *rows, long long *cols,
             char *err, size_t errlen);

/* Writes a version 1.0 file ('<f4', fortran_order False). 0 or -1. */
int npy_write(const char *path, const float *data, long long rows, long long cols,
              char *err, size_t errlen);

/* Any of the three dtypes: *data is a malloc'ed array of rows * cols
 * elements as stored (float for NPY_F32; uint16_t bit patterns for NPY_F16
 * and NPY_BF16, which common/f16.h widens exactly), *dtype says which.
 * 0, or -1 with a one-line message. */
int npy_read_typed(const char *path, void **data, npy_dtype *dtype, long long *rows, long long *cols,
                   char *err, size_t errlen);

/* Writes data (laid out as npy_read_typed returns it) with dtype's descr,
 * version 1.0. 0 or -1. */
int npy_write_typed(const char *path, const void *data, npy_dtype dtype, long long rows, long long cols,
                    char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
