/* float32 .npy files, rank 2, C order (NumPy format versions 1.0-3.0).
 * Anything else is rejected with a one-line message in err. */
#ifndef COMMON_NPY_H
#define COMMON_NPY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* On success returns 0 and a malloc'ed array in *data (caller frees).
 * On failure returns -1 with a one-line message in err. */
int npy_read(const char *path, float **data, long long *rows, long long *cols,
             char *err, size_t errlen);

/* Writes a version 1.0 file ('<f4', fortran_order False). 0 or -1. */
int npy_write(const char *path, const float *data, long long rows, long long cols,
              char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
