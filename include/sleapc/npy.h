/* NumPy .npy files, for tensors in and out of the CLI and the bindings. */
#ifndef SLEAPC_NPY_H
#define SLEAPC_NPY_H

#include "sleapc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Read a .npy (v1/v2, C order, little-endian; float32, uint8, bool, int32,
 * int64, float64 -> float32). out->data is owned by the caller: free it with
 * sleapc_tensor_free. Returns SLEAPC_ERR_IO or SLEAPC_ERR_FORMAT on failure. */
SLEAPC_API sleapc_status sleapc_npy_read(const char *path, sleapc_tensor *out);

/* Write t as a .npy v1.0 file, atomically (temporary file, then rename). */
SLEAPC_API sleapc_status sleapc_npy_write(const char *path, const sleapc_tensor *t);

/* Free data returned by the library in a tensor (e.g. sleapc_npy_read) and
 * clear the view. Accepts NULL and an empty tensor. */
SLEAPC_API void sleapc_tensor_free(sleapc_tensor *t);

#ifdef __cplusplus
}
#endif

#endif
