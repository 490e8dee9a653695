/* NumPy .npz archives (np.savez / np.savez_compressed): a zip of .npy files,
 * one per array, named <key>.npy. */
#ifndef SLEAPC_IO_NPY_NPZ_READ_H
#define SLEAPC_IO_NPY_NPZ_READ_H

#include "sleapc/tensor.h"

/* Read array `key` of the archive at path, as sleapc__npy_read reads a .npy
 * (same dtypes; out->data from sleapc__malloc). Entries may be stored or
 * deflated; each one's CRC-32 is checked. A missing key, a damaged archive or
 * entry is SLEAPC_ERR_FORMAT naming the file and the key. */
sleapc_status sleapc__npz_read(const char *path, const char *key, sleapc_tensor *out);

#endif
