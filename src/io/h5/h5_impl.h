/* Private to src/io/h5/: the handle and the helpers its files share. This
 * is the only header in sleapc that includes hdf5.h. */
#ifndef SLEAPC_IO_H5_IMPL_H
#define SLEAPC_IO_H5_IMPL_H

#include <hdf5.h>

#include "core/atomic_file.h"
#include "io/h5/h5_file.h"

struct sleapc_h5 {
    hid_t fid;
    char *path; /* as given by the caller */
    bool writable;
    bool atomic; /* created through a temporary file: af is live */
    sleapc_atomic_file af;
};

/* Switch off HDF5's automatic error printing for the calling thread (the
 * library keeps one error stack per thread). Called by every entry point. */
void sleapc__h5_quiet(void);

/* Fail with "<action> HDF5: <file>: <obj>: <reason>", adding the innermost
 * reason HDF5 recorded on this thread's error stack, if any. */
sleapc_status sleapc__h5_fail(sleapc_status st, const sleapc_h5 *f, const char *action,
                              const char *obj, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* New datatype ids (the caller closes them), H5I_INVALID_HID on failure.
 * native: the C type of t in memory; SLEAPC_H5_BOOL is an enum over uint8.
 * disk: the little-endian file type; SLEAPC_H5_BOOL is h5py's enum over
 * int8 {FALSE = 0, TRUE = 1}. */
hid_t sleapc__h5_native_type(sleapc_h5_type t);
hid_t sleapc__h5_disk_type(sleapc_h5_type t);

/* Open a dataset or attribute; H5I_INVALID_HID when absent (no message). */
hid_t sleapc__h5_open_dataset(sleapc_h5 *f, const char *dset);
hid_t sleapc__h5_open_attr(sleapc_h5 *f, const char *obj, const char *name);

/* Fill info from a type and dataspace (no layout fields). false when the
 * space has too many dimensions. */
bool sleapc__h5_describe(hid_t type, hid_t space, sleapc_h5_info *info);

/* A transfer property list whose conversion callback aborts on integer
 * overflow when dst_is_int, so out-of-range values fail instead of being
 * clamped. *aborted is set when that happened. Close with H5Pclose. */
hid_t sleapc__h5_checked_xfer(bool dst_is_int, bool *aborted);

/* Product of n dimensions as a byte count of elem bytes each; false on
 * overflow or a negative dimension. */
bool sleapc__h5_nbytes(int n, const int64_t *dims, size_t elem, size_t *out);

/* Create dataset dset of file type ftype and shape (ndim 0 = scalar) with
 * h5py's layout choices for opts (NULL = contiguous), nothing written yet;
 * *out is the open dataset (the caller closes it). */
sleapc_status sleapc__h5_new_dataset(sleapc_h5 *f, const char *dset, hid_t ftype, int ndim,
                                     const int64_t *shape, const sleapc_h5_write_opts *opts,
                                     hid_t *out);

/* Create dataset dset of file type ftype and shape (ndim 0 = scalar) and
 * write data (memory type mtype) into it, with h5py's layout choices for
 * opts (NULL = contiguous). */
sleapc_status sleapc__h5_create_dataset(sleapc_h5 *f, const char *dset, hid_t ftype, hid_t mtype,
                                        int ndim, const int64_t *shape, const void *data,
                                        const sleapc_h5_write_opts *opts);

/* Read the strings of a dataset (attr NULL, o a dataset id) or of attribute
 * attr (o an attribute id); type and info describe o. See read_strings. */
sleapc_status sleapc__h5_read_strings_from(sleapc_h5 *f, const char *obj, const char *attr, hid_t o,
                                           hid_t type, const sleapc_h5_info *info, char ***strs,
                                           int64_t *n);

#endif
