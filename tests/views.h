/* Checking a strided softmax on views: x and y are rows x cols windows
 * inside larger buffers, at any offset and with any row strides, as
 * x[:, a:b] or a padded matrix would be. Used by tests/test_lesson5.cu and
 * tests/test_lesson6.cu.
 *
 * Every float of both buffers outside the view is poisoned: the input's
 * with NaN (a kernel that reads one turns its row into NaN, and the check
 * fails), the output's with the bits 0xDEADBEEF (a kernel that writes one
 * changes them). The output view itself starts as NaN, so an element the
 * kernel forgets fails too. After the run the output view must match the
 * float64 reference, every padding float of the output must still be
 * 0xDEADBEEF, and the input buffer must be unchanged, bit for bit. */
#ifndef TESTS_VIEWS_H
#define TESTS_VIEWS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "f16.h" /* f32_bits, f32_from_bits */
#include "inputs.h"
#include "reference.h"
#include "verify.h"

/* A kernel that takes row strides (in elements). */
typedef void (*strided_fn)(const float *x, long long ldx, float *y, long long ldy, long long rows,
                           long long cols, cudaStream_t stream);

typedef struct {
    const char *what;            /* what is special about it, for the test name */
    long long rows, cols;
    long long ldx, ldy;          /* row strides, >= cols                         */
    long long xoff, yoff;        /* floats from a 256-byte aligned cudaMalloc    */
} view_case;

#define VIEW_TAIL 5 /* poisoned floats after the last row, to catch overruns */
#define VIEW_PAD_BITS 0xDEADBEEFu

/* Runs fn on the view c with inputs of the given kind. Returns 1 if the
 * view matches the reference (within rtol(cols)), the output padding is
 * untouched and the input unchanged; desc says what went wrong, or gives
 * the verifier's summary. */
static int view_check(strided_fn fn, const view_case *c, input_kind kind, rtol_fn rtol,
                      char *desc, size_t len)
{
    const size_t nx = (size_t)(c->xoff + (c->rows - 1) * c->ldx + c->cols + VIEW_TAIL);
    const size_t ny = (size_t)(c->yoff + (c->rows - 1) * c->ldy + c->cols + VIEW_TAIL);
    const size_t nv = (size_t)(c->rows * c->cols);
    float *hx = (float *)malloc(nx * sizeof(float)), *hx_after = (float *)malloc(nx * sizeof(float));
    float *hy = (float *)malloc(ny * sizeof(float));
    float *xv = (float *)malloc(nv * sizeof(float)), *yv = (float *)malloc(nv * sizeof(float));
    if (!hx || !hx_after || !hy || !xv || !yv) {
        fprintf(stderr, "view_check: out of host memory\n");
        exit(1);
    }
    const float nan_bits = f32_from_bits(0xFFFFFFFFu), pad = f32_from_bits(VIEW_PAD_BITS);

    inputs_fill(xv, c->rows, c->cols, kind, (unsigned long long)(c->rows * 31 + c->cols));
    for (size_t i = 0; i < nx; i++) hx[i] = nan_bits;
    for (size_t i = 0; i < ny; i++) hy[i] = pad;
    for (long long r = 0; r < c->rows; r++)
        for (long long j = 0; j < c->cols; j++) {
            hx[c->xoff + r * c->ldx + j] = xv[r * c->cols + j];
            hy[c->yoff + r * c->ldy + j] = nan_bits;
        }

    float *dx, *dy;
    CUDA_CHECK(cudaMalloc(&dx, nx * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&dy, ny * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(dx, hx, nx * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dy, hy, ny * sizeof(float), cudaMemcpyHostToDevice));
    fn(dx + c->xoff, c->ldx, dy + c->yoff, c->ldy, c->rows, c->cols, 0);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(hy, dy, ny * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hx_after, dx, nx * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dx));
    CUDA_CHECK(cudaFree(dy));

    /* Padding: every output float outside the view. */
    long long touched = 0, first = -1;
    size_t next = 0; /* index of the next view element in hy */
    for (long long r = 0; r <= c->rows; r++) {
        size_t start = r < c->rows ? (size_t)(c->yoff + r * c->ldy) : ny;
        for (size_t i = next; i < start; i++)
            if (f32_bits(hy[i]) != VIEW_PAD_BITS && touched++ == 0) first = (long long)i;
        next = start + (size_t)c->cols;
        if (r < c->rows)
            for (long long j = 0; j < c->cols; j++) yv[r * c->cols + j] = hy[start + j];
    }
    int x_same = memcmp(hx, hx_after, nx * sizeof(float)) == 0;

    verify_report rep;
    int ok = verify_softmax(xv, yv, c->rows, c->cols, ref_row_softmax, NULL, rtol(c->cols), &rep);
    if (touched)
        snprintf(desc, len, "%lld padding floats of the output were written (first at buffer index %lld)",
                 touched, first);
    else if (!x_same)
        snprintf(desc, len, "the input buffer was modified");
    else
        verify_describe(&rep, desc, len);

    free(hx);
    free(hx_after);
    free(hy);
    free(xv);
    free(yv);
    return ok && !touched && x_same;
}

#endif
