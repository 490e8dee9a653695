/* Plain-data tensor views passed across the public API. */
#ifndef SLEAPC_TENSOR_H
#define SLEAPC_TENSOR_H

#include "sleapc/sleapc.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SLEAPC_TENSOR_MAX_DIMS 6

typedef enum sleapc_dtype {
    SLEAPC_DTYPE_F32 = 0,
    SLEAPC_DTYPE_U8,
    SLEAPC_DTYPE_I32,
    SLEAPC_DTYPE_I64
} sleapc_dtype;

/* A view: it never owns data. Contiguous, row-major (C order). */
typedef struct sleapc_tensor {
    sleapc_dtype dtype;
    int ndim;
    int64_t shape[SLEAPC_TENSOR_MAX_DIMS];
    void *data;
} sleapc_tensor;

/* Bytes per element of dtype (0 for an unknown dtype). */
SLEAPC_API size_t sleapc_dtype_size(sleapc_dtype dtype);

/* "float32", "uint8", ... Static text. */
SLEAPC_API const char *sleapc_dtype_name(sleapc_dtype dtype);

/* Number of elements (product of the shape; 1 for ndim 0). */
SLEAPC_API int64_t sleapc_tensor_numel(const sleapc_tensor *t);

#ifdef __cplusplus
}
#endif

#endif
