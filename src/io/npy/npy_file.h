/* NumPy .npy v1.0/v2.0 files: C order, little-endian. */
#ifndef SLEAPC_IO_NPY_FILE_H
#define SLEAPC_IO_NPY_FILE_H

#include "sleapc/tensor.h"

/* Read a whole array. Supported dtypes: <f4 (F32), |u1 and |b1 (U8), <i4 (I32),
 * <i8 (I64), <f8 (converted to F32). Fortran order, big-endian data, object
 * arrays and pickles are refused with SLEAPC_ERR_FORMAT naming the file.
 * out->data is allocated with sleapc__malloc; free it with sleapc__free. */
sleapc_status sleapc__npy_read(const char *path, sleapc_tensor *out);

/* The same for a .npy held in memory (an entry of an .npz); label names it
 * in messages. buf is only read. */
sleapc_status sleapc__npy_read_buffer(const void *buf, size_t size, const char *label,
                                      sleapc_tensor *out);

/* Write t as a v1.0 file, atomically (temporary file in the same folder, then
 * rename): an interrupted write never leaves a partial file at path. */
sleapc_status sleapc__npy_write(const char *path, const sleapc_tensor *t);

#endif
