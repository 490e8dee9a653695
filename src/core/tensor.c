#include "core/tensor.h"

size_t sleapc__dtype_size(sleapc_dtype dtype)
{
    switch (dtype) {
    case SLEAPC_DTYPE_F32: return 4;
    case SLEAPC_DTYPE_U8: return 1;
    case SLEAPC_DTYPE_I32: return 4;
    case SLEAPC_DTYPE_I64: return 8;
    }
    return 0;
}

const char *sleapc__dtype_name(sleapc_dtype dtype)
{
    switch (dtype) {
    case SLEAPC_DTYPE_F32: return "float32";
    case SLEAPC_DTYPE_U8: return "uint8";
    case SLEAPC_DTYPE_I32: return "int32";
    case SLEAPC_DTYPE_I64: return "int64";
    }
    return "unknown";
}

int64_t sleapc__tensor_numel(const sleapc_tensor *t)
{
    if (!t)
        return 0;
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++)
        n *= t->shape[i];
    return n;
}
