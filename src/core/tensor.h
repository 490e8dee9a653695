/* Tensor element types: the bodies of the public dtype functions. */
#ifndef SLEAPC_CORE_TENSOR_H
#define SLEAPC_CORE_TENSOR_H

#include "sleapc/tensor.h"

size_t sleapc__dtype_size(sleapc_dtype dtype);   /* 0 for an unknown dtype */
const char *sleapc__dtype_name(sleapc_dtype dtype);  /* "unknown" for an unknown dtype */
int64_t sleapc__tensor_numel(const sleapc_tensor *t);  /* 0 for NULL */

#endif
