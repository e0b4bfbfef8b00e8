/* make bench's yardstick: cuDNN's softmax (CUDNN_SOFTMAX_ACCURATE, one
 * instance per row) in the shapes of the course's kernels, softmax_fn and
 * softmax_typed_fn, so that tests/bench.cu times it with the same code.
 * The handle and descriptor are set up once per shape, outside the timing.
 * Built only with -DHAVE_CUDNN (the Makefile finds cuDNN); declared in
 * tests/bench.h. */
#ifdef HAVE_CUDNN
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#include "bench.h"

static cudnnHandle_t cudnn;
static cudnnTensorDescriptor_t cudnn_desc;

#define CUDNN_CHECK(call)                                                                   \
    do {                                                                                    \
        cudnnStatus_t s_ = (call);                                                          \
        if (s_ != CUDNN_STATUS_SUCCESS) {                                                   \
            fprintf(stderr, "%s:%d: cuDNN error: %s\n", __FILE__, __LINE__,                \
                    cudnnGetErrorString(s_));                                               \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

cudnnStatus_t cudnn_status;

void softmax_cudnn_typed(const void *x, long long ldx, void *y, long long ldy, long long rows,
                         long long cols, dtype t, cudaStream_t stream)
{
    (void)ldx; (void)ldy; (void)rows; (void)cols; (void)t; /* the descriptor holds shape and type */
    const float one = 1.0f, zero = 0.0f; /* float scalars for float, half and bfloat16 data alike */
    CUDNN_CHECK(cudnnSetStream(cudnn, stream));
    cudnn_status = cudnnSoftmaxForward(cudnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE, &one,
                                       cudnn_desc, x, &zero, cudnn_desc, y);
}

void softmax_cudnn(const float *x, float *y, long long rows, long long cols, cudaStream_t stream)
{
    softmax_cudnn_typed(x, cols, y, cols, rows, cols, DTYPE_F32, stream);
    CUDNN_CHECK(cudnn_status);
}

/* cuDNN takes int dimensions: N = rows, C = cols, H = W = 1. */
int cudnn_shape_typed(long long rows, long long cols, dtype t)
{
    if (rows > 2147483647LL || cols > 2147483647LL) return 0;
    const cudnnDataType_t d = t == DTYPE_F16 ? CUDNN_DATA_HALF : t == DTYPE_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(cudnn_desc, CUDNN_TENSOR_NCHW, d, (int)rows, (int)cols, 1, 1));
    return 1;
}

int cudnn_shape(long long rows, long long cols) { return cudnn_shape_typed(rows, cols, DTYPE_F32); }

void cudnn_open(void)
{
    CUDNN_CHECK(cudnnCreate(&cudnn));
    CUDNN_CHECK(cudnnCreateTensorDescriptor(&cudnn_desc));
}

void cudnn_close(void)
{
    CUDNN_CHECK(cudnnDestroyTensorDescriptor(cudnn_desc));
    CUDNN_CHECK(cudnnDestroy(cudnn));
}
#endif
