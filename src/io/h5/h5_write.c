/* Writing datasets: numbers, fixed and variable-length strings. Layout and
 * properties follow what h5py produces for the same call, so files we
 * write look like the Python tools' files. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/h5/h5_impl.h"

/* h5py filters.guess_chunk: start from the shape (0 -> 1024), pick a target
 * chunk size that grows with the data, then halve the axes in turn until
 * the chunk fits. */
void sleapc__h5_guess_chunk(int ndim, const int64_t *shape, size_t elem_size, int64_t *chunk)
{
    const double base = 16.0 * 1024, lo = 8.0 * 1024, hi = 1024.0 * 1024;
    double c[SLEAPC_H5_MAX_DIMS];
    double n = 1;
    for (int i = 0; i < ndim; i++) {
        c[i] = shape[i] > 0 ? (double)shape[i] : 1024;
        n *= c[i];
    }
    double target = base * pow(2.0, log10(n * (double)elem_size / (1024.0 * 1024)));
    if (target > hi)
        target = hi;
    else if (target < lo)
        target = lo;
    for (int idx = 0; ndim > 0; idx++) {
        double prod = 1;
        for (int i = 0; i < ndim; i++)
            prod *= c[i];
        double bytes = prod * (double)elem_size;
        if ((bytes < target || fabs(bytes - target) / target < 0.5) && bytes < hi)
            break;
        if (prod == 1)
            break;
        c[idx % ndim] = ceil(c[idx % ndim] / 2.0);
    }
    for (int i = 0; i < ndim; i++)
        chunk[i] = (int64_t)c[i];
}

/* The creation property list for opts (NULL: contiguous). Chunking is
 * implied by unlimited or gzip, as in h5py. A fixed axis of length 0 keeps
 * a contiguous layout, except with gzip, where h5py chunks it with the
 * guessed chunk (1024 along that axis) and libhdf5 accepts it. */
static hid_t creation_plist(int ndim, const int64_t *shape, size_t fsize,
                            const sleapc_h5_write_opts *o)
{
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    if (dcpl < 0)
        return dcpl;
    /* No timestamps, so the same content always gives the same bytes. */
    if (H5Pset_obj_track_times(dcpl, 0) < 0)
        goto fail;
    bool chunked =
        o && (o->chunked || o->unlimited || o->unlimited_first || o->gzip > 0) && ndim > 0;
    for (int i = 0; chunked && i < ndim; i++)
        if (shape[i] == 0 && !o->unlimited && o->gzip <= 0)
            chunked = false;
    if (!chunked)
        return dcpl;
    int64_t ch[SLEAPC_H5_MAX_DIMS];
    hsize_t hch[SLEAPC_H5_MAX_DIMS];
    if (o->chunk)
        memcpy(ch, o->chunk, (size_t)ndim * sizeof *ch);
    else
        sleapc__h5_guess_chunk(ndim, shape, fsize, ch);
    for (int i = 0; i < ndim; i++) {
        if (ch[i] < 1)
            ch[i] = 1;
        if (!o->unlimited && ch[i] > shape[i] && shape[i] > 0)
            ch[i] = shape[i];
        hch[i] = (hsize_t)ch[i];
    }
    if (H5Pset_chunk(dcpl, ndim, hch) < 0)
        goto fail;
    /* h5py allocates chunk storage at creation for chunked datasets. */
    if (H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC) < 0)
        goto fail;
    if (o->gzip > 0 && H5Pset_deflate(dcpl, (unsigned)(o->gzip > 9 ? 9 : o->gzip)) < 0)
        goto fail;
    return dcpl;
fail:
    H5Pclose(dcpl);
    return H5I_INVALID_HID;
}

sleapc_status sleapc__h5_new_dataset(sleapc_h5 *f, const char *dset, hid_t ftype, int ndim,
                                     const int64_t *shape, const sleapc_h5_write_opts *opts,
                                     hid_t *out)
{
    *out = H5I_INVALID_HID;
    if (!f->writable)
        return sleapc__h5_fail(SLEAPC_ERR_STATE, f, "write", dset, "file is read-only");
    if (ndim < 0 || ndim > SLEAPC_H5_MAX_DIMS || (ndim > 0 && !shape))
        return sleapc__h5_fail(SLEAPC_ERR_INVALID_ARG, f, "write", dset, "bad shape");
    if (sleapc__h5_kind(f, dset) != SLEAPC_H5_KIND_NONE)
        return sleapc__h5_fail(SLEAPC_ERR_INVALID_ARG, f, "write", dset, "already exists");
    hsize_t dims[SLEAPC_H5_MAX_DIMS], maxd[SLEAPC_H5_MAX_DIMS];
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return sleapc__h5_fail(SLEAPC_ERR_INVALID_ARG, f, "write", dset, "negative shape");
        dims[i] = (hsize_t)shape[i];
        const bool grows = opts && (opts->unlimited || (opts->unlimited_first && i == 0));
        maxd[i] = grows ? H5S_UNLIMITED : dims[i];
    }
    hid_t space = ndim == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(ndim, dims, maxd);
    hid_t dcpl = creation_plist(ndim, shape, ftype >= 0 ? H5Tget_size(ftype) : 1, opts);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t d = H5I_INVALID_HID;
    if (space >= 0 && dcpl >= 0 && lcpl >= 0 && ftype >= 0 &&
        H5Pset_create_intermediate_group(lcpl, 1) >= 0)
        d = H5Dcreate2(f->fid, dset, ftype, space, lcpl, dcpl, H5P_DEFAULT);
    if (space >= 0)
        H5Sclose(space);
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (lcpl >= 0)
        H5Pclose(lcpl);
    if (d < 0)
        return sleapc__h5_fail(SLEAPC_ERR_IO, f, "write", dset, "cannot write the dataset");
    *out = d;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_create_dataset(sleapc_h5 *f, const char *dset, hid_t ftype, hid_t mtype,
                                        int ndim, const int64_t *shape, const void *data,
                                        const sleapc_h5_write_opts *opts)
{
    int64_t n = 1;
    for (int i = 0; shape && i < ndim; i++)
        n *= shape[i] > 0 ? shape[i] : 0;
    if (n > 0 && !data)
        return sleapc__h5_fail(SLEAPC_ERR_INVALID_ARG, f, "write", dset, "no data");
    if (mtype < 0)
        return sleapc__h5_fail(SLEAPC_ERR_IO, f, "write", dset, "cannot write the dataset");
    hid_t d;
    sleapc_status st = sleapc__h5_new_dataset(f, dset, ftype, ndim, shape, opts, &d);
    if (st)
        return st;
    herr_t rc = n > 0 ? H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) : 0;
    if (H5Dclose(d) < 0)
        rc = -1;
    if (rc < 0)
        return sleapc__h5_fail(SLEAPC_ERR_IO, f, "write", dset, "cannot write the dataset");
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_write(sleapc_h5 *f, const char *dset, sleapc_h5_type t, int ndim,
                               const int64_t *shape, const void *data,
                               const sleapc_h5_write_opts *opts)
{
    sleapc_h5_type ft = opts && opts->file_type ? opts->file_type : t;
    if (!sleapc__h5_type_size(t) || !sleapc__h5_type_size(ft))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write HDF5: %s: bad element type", dset);
    hid_t ftype = sleapc__h5_disk_type(ft), mtype = sleapc__h5_native_type(t);
    sleapc_status st = sleapc__h5_create_dataset(f, dset, ftype, mtype, ndim, shape, data, opts);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (mtype >= 0)
        H5Tclose(mtype);
    return st;
}

sleapc_status sleapc__h5_write_strings(sleapc_h5 *f, const char *dset, int ndim,
                                       const int64_t *shape, const char *const *strs,
                                       const sleapc_h5_write_opts *opts)
{
    size_t count = 1, longest = 1;
    for (int i = 0; i < ndim; i++)
        count *= shape && shape[i] > 0 ? (size_t)shape[i] : 0;
    for (size_t i = 0; i < count; i++) {
        size_t len = strs[i] ? strlen(strs[i]) : 0;
        if (len > longest)
            longest = len;
    }
    if (count && longest > SIZE_MAX / count)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write HDF5: %s: strings too long", dset);
    char *buf = sleapc__calloc(count ? count : 1, longest);
    if (!buf)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write HDF5: %s: %s: out of memory", f->path, dset);
    for (size_t i = 0; i < count; i++)
        if (strs[i])
            memcpy(buf + i * longest, strs[i], strlen(strs[i]));
    /* numpy 'S<n>' through h5py: fixed length, NUL-padded, ASCII. */
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, longest) < 0 || H5Tset_strpad(t, H5T_STR_NULLPAD) < 0)) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    sleapc_h5_write_opts o = opts ? *opts : (sleapc_h5_write_opts){0};
    o.file_type = SLEAPC_H5_TYPE_DEFAULT;
    sleapc_status st = sleapc__h5_create_dataset(f, dset, t, t, ndim, shape, buf, &o);
    if (t >= 0)
        H5Tclose(t);
    sleapc__free(buf);
    return st;
}

sleapc_status sleapc__h5_write_vlen_string(sleapc_h5 *f, const char *dset, const char *s)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    const char *p = s ? s : "";
    sleapc_status st = sleapc__h5_create_dataset(f, dset, t, t, 0, NULL, &p, NULL);
    if (t >= 0)
        H5Tclose(t);
    return st;
}

sleapc_status sleapc__h5_write_vlen_strings(sleapc_h5 *f, const char *dset, int64_t n,
                                            const char *const *strs,
                                            const sleapc_h5_write_opts *opts)
{
    if (n < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write HDF5: %s: bad shape", dset);
    const char **rows = sleapc__calloc((size_t)n + 1, sizeof *rows);
    if (!rows)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write HDF5: %s: %s: out of memory", f->path, dset);
    for (int64_t i = 0; i < n; i++)
        rows[i] = strs[i] ? strs[i] : "";
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
        H5Tclose(t);
        t = H5I_INVALID_HID;
    }
    sleapc_h5_write_opts o = opts ? *opts : (sleapc_h5_write_opts){0};
    o.file_type = SLEAPC_H5_TYPE_DEFAULT;
    sleapc_status st = sleapc__h5_create_dataset(f, dset, t, t, 1, &n, rows, &o);
    if (t >= 0)
        H5Tclose(t);
    sleapc__free(rows);
    return st;
}
