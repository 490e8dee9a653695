/* Compound tables (the .slp frames/instances/points records): read by
 * member name into C structs, write as packed records. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/h5/h5_impl.h"

static bool is_integer(sleapc_h5_type t)
{
    return t != SLEAPC_H5_F32 && t != SLEAPC_H5_F64 && sleapc__h5_type_size(t) > 0;
}

/* The memory type for one member: HDF5 converts enums only to enums, so an
 * enum member (h5py's bool) is read through its native form, whose values
 * land in the integer field unchanged. */
static hid_t member_mem_type(hid_t fm, sleapc_h5_type t)
{
    H5T_class_t c = H5Tget_class(fm);
    if (c == H5T_ENUM) {
        if (!is_integer(t))
            return H5I_INVALID_HID;
        hid_t m = H5Tget_native_type(fm, H5T_DIR_ASCEND);
        if (m >= 0 && H5Tget_size(m) != sleapc__h5_type_size(t)) {
            H5Tclose(m);
            return H5I_INVALID_HID;
        }
        return m;
    }
    if (c != H5T_INTEGER && c != H5T_FLOAT)
        return H5I_INVALID_HID;
    return sleapc__h5_native_type(t == SLEAPC_H5_BOOL ? SLEAPC_H5_U8 : t);
}

/* Build the memory compound for the fields present in ftype. *n_present
 * counts them; a missing required field or a bad member is an error. */
static sleapc_status memory_compound(sleapc_h5 *f, const char *dset, hid_t ftype,
                                     const sleapc_h5_field *fields, int n_fields,
                                     size_t record_size, hid_t *out, int *n_present)
{
    *n_present = 0;
    hid_t mem = H5Tcreate(H5T_COMPOUND, record_size);
    if (mem < 0)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "cannot build the record type");
    for (int i = 0; i < n_fields; i++) {
        const sleapc_h5_field *fd = &fields[i];
        int idx = H5Tget_member_index(ftype, fd->name);
        if (idx < 0) {
            H5Eclear2(H5E_DEFAULT);
            if (fd->optional)
                continue;
            H5Tclose(mem);
            return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "no member \"%s\"",
                                   fd->name);
        }
        size_t size = sleapc__h5_type_size(fd->type);
        if (!size || fd->offset > record_size || size > record_size - fd->offset) {
            H5Tclose(mem);
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "read HDF5: %s: field \"%s\" outside "
                                "the record",
                                dset, fd->name);
        }
        hid_t fm = H5Tget_member_type(ftype, (unsigned)idx);
        hid_t mm = fm >= 0 ? member_mem_type(fm, fd->type) : H5I_INVALID_HID;
        herr_t rc = mm >= 0 ? H5Tinsert(mem, fd->name, fd->offset, mm) : -1;
        if (fm >= 0)
            H5Tclose(fm);
        if (mm >= 0)
            H5Tclose(mm);
        if (rc < 0) {
            H5Tclose(mem);
            return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset,
                                   "member \"%s\" has an unsupported type", fd->name);
        }
        (*n_present)++;
    }
    *out = mem;
    return SLEAPC_OK;
}

/* Rows [first, first + count) of a 1-D compound table into buf (count = -1:
 * to the end; *n_total gets the table's length either way). */
static sleapc_status read_rows(sleapc_h5 *f, const char *dset, const sleapc_h5_field *fields,
                               int n_fields, size_t record_size, int64_t first, int64_t count,
                               void **rows, int64_t *n_rows, int64_t *n_total)
{
    *rows = NULL;
    *n_rows = 0;
    hid_t d = sleapc__h5_open_dataset(f, dset);
    if (d < 0)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "no such dataset");
    hid_t ftype = H5Dget_type(d), space = H5Dget_space(d), mem = H5I_INVALID_HID;
    hid_t mspace = H5I_INVALID_HID;
    sleapc_h5_info info;
    sleapc_status st = SLEAPC_OK;
    void *buf = NULL;
    size_t nbytes = 0;
    int n_present = 0;
    if (ftype < 0 || space < 0 || !sleapc__h5_describe(ftype, space, &info))
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "unreadable type or dataspace");
    else if (info.cls != SLEAPC_H5_CLASS_COMPOUND || info.ndim != 1)
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "not a 1-D compound table");
    else
        st = memory_compound(f, dset, ftype, fields, n_fields, record_size, &mem, &n_present);
    if (!st) {
        *n_total = info.n_elems;
        if (count < 0)
            count = info.n_elems - first;
        if (first < 0 || count < 0 || first > info.n_elems || count > info.n_elems - first)
            st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset,
                                 "rows [%lld, %lld) outside the %lld rows", (long long)first,
                                 (long long)(first + count), (long long)info.n_elems);
    }
    if (!st && !sleapc__h5_nbytes(1, &count, record_size, &nbytes))
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "table too large");
    if (!st && !(buf = sleapc__calloc(1, nbytes ? nbytes : 1)))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: %s: out of memory (%zu bytes)", f->path,
                          dset, nbytes);
    if (!st && nbytes && n_present > 0) {
        hsize_t start = (hsize_t)first, n = (hsize_t)count;
        mspace = H5Screate_simple(1, &n, NULL);
        if (mspace < 0 || H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &n, NULL) < 0)
            st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "cannot select the rows");
    }
    if (!st && nbytes && n_present > 0) {
        /* Abort on any out-of-range member instead of clamping silently. */
        bool aborted = false;
        hid_t x = sleapc__h5_checked_xfer(true, &aborted);
        /* The conversion buffer sized to the rows (HDF5 takes 1 MiB for any
         * read otherwise, which small slices pay for on every call). */
        const size_t fsize = H5Tget_size(ftype);
        const size_t tconv = (size_t)count * (fsize > record_size ? fsize : record_size);
        if (x >= 0 && tconv < ((size_t)1 << 20) && H5Pset_buffer(x, tconv, NULL, NULL) < 0) {
            H5Pclose(x);
            x = H5I_INVALID_HID;
        }
        if (x < 0 || H5Dread(d, mem, mspace, space, x, buf) < 0)
            st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "%s",
                                 aborted ? "a value is out of range of its field"
                                         : "cannot read the table");
        if (x >= 0)
            H5Pclose(x);
    }
    if (mspace >= 0)
        H5Sclose(mspace);
    if (mem >= 0)
        H5Tclose(mem);
    if (ftype >= 0)
        H5Tclose(ftype);
    if (space >= 0)
        H5Sclose(space);
    H5Dclose(d);
    if (st) {
        sleapc__free(buf);
        return st;
    }
    *rows = buf;
    *n_rows = count;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_read_compound(sleapc_h5 *f, const char *dset,
                                       const sleapc_h5_field *fields, int n_fields,
                                       size_t record_size, void **rows, int64_t *n_rows)
{
    int64_t total = 0;
    return read_rows(f, dset, fields, n_fields, record_size, 0, -1, rows, n_rows, &total);
}

sleapc_status sleapc__h5_read_compound_rows(sleapc_h5 *f, const char *dset,
                                            const sleapc_h5_field *fields, int n_fields,
                                            size_t record_size, int64_t first, int64_t count,
                                            void **rows, int64_t *n_total)
{
    int64_t n = 0;
    *n_total = 0;
    return read_rows(f, dset, fields, n_fields, record_size, first, count, rows, &n, n_total);
}

/* The packed file type and the caller's memory type of a record layout. */
static sleapc_status record_types(sleapc_h5 *f, const char *dset, const sleapc_h5_field *fields,
                                  int n_fields, size_t record_size, hid_t *ftype_out,
                                  hid_t *mtype_out)
{
    *ftype_out = *mtype_out = H5I_INVALID_HID;
    size_t packed = 0;
    for (int i = 0; i < n_fields; i++) {
        sleapc_h5_type ft = fields[i].file_type ? fields[i].file_type : fields[i].type;
        size_t ms = sleapc__h5_type_size(fields[i].type);
        if (!ms || !sleapc__h5_type_size(ft) || fields[i].offset > record_size ||
            ms > record_size - fields[i].offset)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write HDF5: %s: bad field \"%s\"", dset,
                                fields[i].name);
        packed += sleapc__h5_type_size(ft);
    }
    /* Packed on disk (no alignment padding), as numpy structured dtypes
     * are written by h5py; in memory, the caller's struct layout. */
    hid_t ftype = H5Tcreate(H5T_COMPOUND, packed ? packed : 1);
    hid_t mtype = H5Tcreate(H5T_COMPOUND, record_size);
    bool ok = ftype >= 0 && mtype >= 0;
    size_t off = 0;
    for (int i = 0; ok && i < n_fields; i++) {
        sleapc_h5_type ft = fields[i].file_type ? fields[i].file_type : fields[i].type;
        hid_t a = sleapc__h5_disk_type(ft), b = sleapc__h5_native_type(fields[i].type);
        ok = a >= 0 && b >= 0 && H5Tinsert(ftype, fields[i].name, off, a) >= 0 &&
             H5Tinsert(mtype, fields[i].name, fields[i].offset, b) >= 0;
        off += sleapc__h5_type_size(ft);
        if (a >= 0)
            H5Tclose(a);
        if (b >= 0)
            H5Tclose(b);
    }
    if (!ok) {
        if (ftype >= 0)
            H5Tclose(ftype);
        if (mtype >= 0)
            H5Tclose(mtype);
        return sleapc__h5_fail(SLEAPC_ERR_INVALID_ARG, f, "write", dset,
                               "cannot build the record type");
    }
    *ftype_out = ftype;
    *mtype_out = mtype;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_write_compound(sleapc_h5 *f, const char *dset,
                                        const sleapc_h5_field *fields, int n_fields,
                                        size_t record_size, const void *rows, int64_t n_rows,
                                        const sleapc_h5_write_opts *opts)
{
    hid_t ftype, mtype;
    sleapc_status st = record_types(f, dset, fields, n_fields, record_size, &ftype, &mtype);
    if (st)
        return st;
    st = sleapc__h5_create_dataset(f, dset, ftype, mtype, 1, &n_rows, rows, opts);
    H5Tclose(ftype);
    H5Tclose(mtype);
    return st;
}

struct sleapc_h5_table {
    sleapc_h5 *f;
    char *name;
    hid_t d, mtype;
    int64_t n_rows;
};

sleapc_status sleapc__h5_table_create(sleapc_h5 *f, const char *dset,
                                      const sleapc_h5_field *fields, int n_fields,
                                      size_t record_size, int64_t n_rows, sleapc_h5_table **out)
{
    *out = NULL;
    if (n_rows < 0)
        return sleapc__h5_fail(SLEAPC_ERR_INVALID_ARG, f, "write", dset, "negative shape");
    sleapc_h5_table *t = sleapc__calloc(1, sizeof *t);
    if (!t || !(t->name = sleapc__strdup(dset))) {
        sleapc__free(t);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "write HDF5: %s: out of memory", dset);
    }
    t->f = f;
    t->n_rows = n_rows;
    t->d = H5I_INVALID_HID;
    hid_t ftype;
    sleapc_status st = record_types(f, dset, fields, n_fields, record_size, &ftype, &t->mtype);
    if (!st) {
        st = sleapc__h5_new_dataset(f, dset, ftype, 1, &n_rows, NULL, &t->d);
        H5Tclose(ftype);
    }
    if (st) {
        if (t->mtype >= 0)
            H5Tclose(t->mtype);
        sleapc__free(t->name);
        sleapc__free(t);
        return st;
    }
    *out = t;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_table_write(sleapc_h5_table *t, int64_t first, const void *rows,
                                     int64_t n)
{
    if (first < 0 || n < 0 || first > t->n_rows - n || (n > 0 && !rows))
        return sleapc__h5_fail(SLEAPC_ERR_INVALID_ARG, t->f, "write", t->name, "bad row range");
    if (n == 0)
        return SLEAPC_OK;
    hsize_t start = (hsize_t)first, count = (hsize_t)n;
    hid_t fspace = H5Dget_space(t->d);
    hid_t mspace = H5Screate_simple(1, &count, NULL);
    herr_t rc = -1;
    if (fspace >= 0 && mspace >= 0 &&
        H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &start, NULL, &count, NULL) >= 0)
        rc = H5Dwrite(t->d, t->mtype, mspace, fspace, H5P_DEFAULT, rows);
    if (fspace >= 0)
        H5Sclose(fspace);
    if (mspace >= 0)
        H5Sclose(mspace);
    if (rc < 0)
        return sleapc__h5_fail(SLEAPC_ERR_IO, t->f, "write", t->name, "cannot write the dataset");
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_table_close(sleapc_h5_table *t)
{
    if (!t)
        return SLEAPC_OK;
    sleapc_status st = SLEAPC_OK;
    if (H5Dclose(t->d) < 0)
        st = sleapc__h5_fail(SLEAPC_ERR_IO, t->f, "write", t->name, "cannot write the dataset");
    H5Tclose(t->mtype);
    sleapc__free(t->name);
    sleapc__free(t);
    return st;
}
