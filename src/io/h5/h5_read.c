/* Reading whole datasets: numbers (converted), raw bytes, strings, and one
 * row of a byte table (embedded images). */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/h5/h5_impl.h"

static bool is_int_type(sleapc_h5_type t)
{
    return t != SLEAPC_H5_F32 && t != SLEAPC_H5_F64;
}

/* Memory type for numeric reads: a bool is read as its uint8 value. */
static hid_t numeric_mem_type(sleapc_h5_type t)
{
    return sleapc__h5_native_type(t == SLEAPC_H5_BOOL ? SLEAPC_H5_U8 : t);
}

typedef struct opened {
    hid_t d, type, space;
    sleapc_h5_info info;
} opened;

static void close_opened(opened *o)
{
    if (o->type >= 0)
        H5Tclose(o->type);
    if (o->space >= 0)
        H5Sclose(o->space);
    if (o->d >= 0)
        H5Dclose(o->d);
}

static sleapc_status open_dataset(sleapc_h5 *f, const char *dset, opened *o)
{
    o->type = o->space = H5I_INVALID_HID;
    o->d = sleapc__h5_open_dataset(f, dset);
    if (o->d < 0)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "no such dataset");
    o->type = H5Dget_type(o->d);
    o->space = H5Dget_space(o->d);
    if (o->type < 0 || o->space < 0 || !sleapc__h5_describe(o->type, o->space, &o->info)) {
        close_opened(o);
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "unreadable type or dataspace");
    }
    return SLEAPC_OK;
}

/* Read n elements of an enum dataset as their integer values in t: HDF5
 * converts enums only to other enums, so read the native enum, then convert
 * its base integers in place. */
static sleapc_status read_enum(sleapc_h5 *f, const char *dset, opened *o, sleapc_h5_type t,
                               void *dst)
{
    hid_t nat = H5Tget_native_type(o->type, H5T_DIR_ASCEND);
    hid_t base = nat >= 0 ? H5Tget_super(nat) : H5I_INVALID_HID;
    hid_t mem = numeric_mem_type(t);
    size_t n = (size_t)o->info.n_elems, elem = sleapc__h5_type_size(t);
    size_t bsize = base >= 0 ? H5Tget_size(base) : 0;
    size_t width = bsize > elem ? bsize : elem, nbytes = 0;
    sleapc_status st = SLEAPC_OK;
    void *tmp = NULL;
    bool aborted = false;
    if (nat < 0 || base < 0 || mem < 0) {
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "unsupported enum type");
    } else if (!sleapc__h5_nbytes(1, &o->info.n_elems, width, &nbytes) ||
               !(tmp = sleapc__malloc(nbytes))) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: %s: out of memory", f->path, dset);
    } else {
        hid_t x = sleapc__h5_checked_xfer(is_int_type(t), &aborted);
        if (x < 0 || H5Dread(o->d, nat, H5S_ALL, H5S_ALL, H5P_DEFAULT, tmp) < 0 ||
            H5Tconvert(base, mem, n, tmp, NULL, x) < 0)
            st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset,
                                 aborted ? "value out of range" : "cannot read the data");
        if (x >= 0)
            H5Pclose(x);
        if (!st)
            memcpy(dst, tmp, n * elem);
    }
    sleapc__free(tmp);
    if (nat >= 0)
        H5Tclose(nat);
    if (base >= 0)
        H5Tclose(base);
    if (mem >= 0)
        H5Tclose(mem);
    return st;
}

static sleapc_status read_numeric(sleapc_h5 *f, const char *dset, opened *o, sleapc_h5_type t,
                                  void *dst)
{
    sleapc_h5_class c = o->info.cls;
    if (c != SLEAPC_H5_CLASS_INT && c != SLEAPC_H5_CLASS_FLOAT && c != SLEAPC_H5_CLASS_ENUM)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "not a numeric dataset");
    if (o->info.n_elems == 0)
        return SLEAPC_OK;
    if (c == SLEAPC_H5_CLASS_ENUM)
        return read_enum(f, dset, o, t, dst);
    hid_t mem = numeric_mem_type(t);
    bool aborted = false;
    hid_t x = sleapc__h5_checked_xfer(is_int_type(t), &aborted);
    herr_t rc = mem >= 0 && x >= 0 ? H5Dread(o->d, mem, H5S_ALL, H5S_ALL, x, dst) : -1;
    if (mem >= 0)
        H5Tclose(mem);
    if (x >= 0)
        H5Pclose(x);
    if (rc < 0)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "%s",
                               aborted ? "value out of range of the requested type"
                                       : "cannot read the data");
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_read(sleapc_h5 *f, const char *dset, sleapc_h5_type t, void **data,
                              sleapc_h5_info *info)
{
    *data = NULL;
    if (info)
        memset(info, 0, sizeof *info);
    size_t elem = sleapc__h5_type_size(t), nbytes = 0;
    if (!elem)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read HDF5: %s: bad element type", dset);
    opened o;
    sleapc_status st = open_dataset(f, dset, &o);
    if (st)
        return st;
    void *buf = NULL;
    if (!sleapc__h5_nbytes(1, &o.info.n_elems, elem, &nbytes))
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "dataset too large");
    else if (!(buf = sleapc__malloc(nbytes ? nbytes : 1)))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: %s: out of memory (%zu bytes)", f->path,
                          dset, nbytes);
    else
        st = read_numeric(f, dset, &o, t, buf);
    if (!st && info)
        *info = o.info;
    close_opened(&o);
    if (st) {
        sleapc__free(buf);
        return st;
    }
    *data = buf;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_read_into(sleapc_h5 *f, const char *dset, sleapc_h5_type t, void *dst,
                                   int64_t n_elems)
{
    if (!sleapc__h5_type_size(t) || (!dst && n_elems > 0))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read HDF5: %s: bad arguments", dset);
    opened o;
    sleapc_status st = open_dataset(f, dset, &o);
    if (st)
        return st;
    if (o.info.n_elems != n_elems)
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "has %lld elements, expected %lld",
                             (long long)o.info.n_elems, (long long)n_elems);
    else
        st = read_numeric(f, dset, &o, t, dst);
    close_opened(&o);
    return st;
}

sleapc_status sleapc__h5_read_raw(sleapc_h5 *f, const char *dset, void **data, size_t *n_bytes)
{
    *data = NULL;
    *n_bytes = 0;
    opened o;
    sleapc_status st = open_dataset(f, dset, &o);
    if (st)
        return st;
    size_t nbytes = 0;
    void *buf = NULL;
    if (H5Tdetect_class(o.type, H5T_VLEN) != 0 || H5Tis_variable_str(o.type) != 0)
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "variable-length data");
    else if (!sleapc__h5_nbytes(1, &o.info.n_elems, o.info.elem_size, &nbytes))
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "dataset too large");
    else if (!(buf = sleapc__malloc(nbytes ? nbytes : 1)))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: %s: out of memory", f->path, dset);
    else if (nbytes && H5Dread(o.d, o.type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "cannot read the data");
    close_opened(&o);
    if (st) {
        sleapc__free(buf);
        return st;
    }
    *data = buf;
    *n_bytes = nbytes;
    return SLEAPC_OK;
}

/* Copy n bytes of a fixed-length string, cut at the first NUL and, when
 * space-padded, without the trailing spaces. */
static char *fixed_string(const char *src, size_t n, bool spacepad)
{
    size_t len = 0;
    while (len < n && src[len])
        len++;
    while (spacepad && len > 0 && src[len - 1] == ' ')
        len--;
    char *s = sleapc__malloc(len + 1);
    if (s) {
        memcpy(s, src, len);
        s[len] = '\0';
    }
    return s;
}

/* Turn n elements of a string type read into buf into strdup'ed strings;
 * for variable-length strings buf holds char* owned by libhdf5, released
 * here whatever happens. */
static bool strings_from(hid_t type, void *buf, size_t n, char **out)
{
    bool ok = true;
    if (H5Tis_variable_str(type) > 0) {
        char **p = buf;
        for (size_t i = 0; i < n; i++) {
            if (ok && !(out[i] = sleapc__strdup(p[i] ? p[i] : "")))
                ok = false;
            if (p[i])
                H5free_memory(p[i]);
        }
        return ok;
    }
    size_t size = H5Tget_size(type);
    bool spacepad = H5Tget_strpad(type) == H5T_STR_SPACEPAD;
    for (size_t i = 0; ok && i < n; i++)
        ok = (out[i] = fixed_string((const char *)buf + i * size, size, spacepad)) != NULL;
    return ok;
}

/* Memory type for reading a string type as stored: the same fixed size, or
 * C strings for variable length. */
static hid_t string_mem_type(hid_t ftype)
{
    if (H5Tis_variable_str(ftype) > 0) {
        hid_t m = H5Tcopy(H5T_C_S1);
        if (m >= 0 &&
            (H5Tset_size(m, H5T_VARIABLE) < 0 || H5Tset_cset(m, H5Tget_cset(ftype)) < 0)) {
            H5Tclose(m);
            return H5I_INVALID_HID;
        }
        return m;
    }
    return H5Tcopy(ftype);
}

sleapc_status sleapc__h5_read_strings_from(sleapc_h5 *f, const char *obj, const char *attr, hid_t o,
                                           hid_t type, const sleapc_h5_info *info, char ***strs,
                                           int64_t *n)
{
    *strs = NULL;
    *n = 0;
    size_t count = (size_t)info->n_elems, nbytes = 0, nptrs = 0;
    if (info->n_elems == 0) {
        *strs = sleapc__calloc(1, sizeof(char *));
        return *strs ? SLEAPC_OK
                     : sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: out of memory", f->path);
    }
    if (info->cls != SLEAPC_H5_CLASS_STRING)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj, "%s%s is not a string",
                               attr ? "attribute " : "data", attr ? attr : "");
    hid_t mem = string_mem_type(type);
    size_t esize = mem >= 0 ? H5Tget_size(mem) : 0;
    void *buf = NULL;
    char **out = NULL;
    sleapc_status st = SLEAPC_OK;
    if (mem < 0 || !sleapc__h5_nbytes(1, &info->n_elems, esize, &nbytes) ||
        !sleapc__h5_nbytes(1, &info->n_elems, sizeof(char *), &nptrs)) {
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj, "unsupported string type");
    } else if (!(buf = sleapc__calloc(1, nbytes)) || !(out = sleapc__calloc(count, sizeof *out))) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: %s: out of memory", f->path, obj);
    } else {
        herr_t rc =
            attr ? H5Aread(o, mem, buf) : H5Dread(o, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
        if (rc < 0)
            st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj, "cannot read the strings");
        else if (!strings_from(mem, buf, count, out))
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: %s: out of memory", f->path, obj);
    }
    if (mem >= 0)
        H5Tclose(mem);
    sleapc__free(buf);
    if (st) {
        sleapc__h5_free_strings(out, (int64_t)count);
        return st;
    }
    *strs = out;
    *n = (int64_t)count;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_read_strings(sleapc_h5 *f, const char *dset, char ***strs, int64_t *n)
{
    *strs = NULL;
    *n = 0;
    opened o;
    sleapc_status st = open_dataset(f, dset, &o);
    if (st)
        return st;
    st = sleapc__h5_read_strings_from(f, dset, NULL, o.d, o.type, &o.info, strs, n);
    close_opened(&o);
    return st;
}

/* One element of a 1-D dataset of variable-length byte sequences. */
static sleapc_status vlen_row(sleapc_h5 *f, const char *dset, opened *o, int64_t row,
                              uint8_t **bytes, size_t *n)
{
    hid_t base = H5Tget_super(o->type);
    bool ok = base >= 0 && H5Tget_class(base) == H5T_INTEGER && H5Tget_size(base) == 1 &&
              o->info.ndim == 1;
    /* Same signedness as stored, so bytes pass through unconverted. */
    hid_t mbase = ok ? H5Tcopy(H5Tget_sign(base) == H5T_SGN_2 ? H5T_NATIVE_SCHAR : H5T_NATIVE_UCHAR)
                     : H5I_INVALID_HID;
    hid_t mem = mbase >= 0 ? H5Tvlen_create(mbase) : H5I_INVALID_HID;
    if (base >= 0)
        H5Tclose(base);
    if (mbase >= 0)
        H5Tclose(mbase);
    if (!ok || mem < 0) {
        if (mem >= 0)
            H5Tclose(mem);
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset,
                               "not a 1-D dataset of byte sequences");
    }
    hsize_t start = (hsize_t)row, one = 1;
    hid_t ms = H5Screate_simple(1, &one, NULL);
    hvl_t v = {0, NULL};
    sleapc_status st = SLEAPC_OK;
    if (ms < 0 || H5Sselect_hyperslab(o->space, H5S_SELECT_SET, &start, NULL, &one, NULL) < 0 ||
        H5Dread(o->d, mem, ms, o->space, H5P_DEFAULT, &v) < 0) {
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "cannot read row %lld",
                             (long long)row);
    } else {
        *bytes = sleapc__malloc(v.len ? v.len : 1);
        if (!*bytes)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: %s: out of memory", f->path, dset);
        else if (v.len)
            memcpy(*bytes, v.p, v.len);
        *n = v.len;
    }
    if (v.p)
        H5free_memory(v.p);
    if (ms >= 0)
        H5Sclose(ms);
    H5Tclose(mem);
    return st;
}

/* Row `row` of an N-D dataset of 1-byte integers. */
static sleapc_status fixed_row(sleapc_h5 *f, const char *dset, opened *o, int64_t row,
                               uint8_t **bytes, size_t *n)
{
    const sleapc_h5_info *in = &o->info;
    if (in->ndim < 1 || in->elem_size != 1)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset,
                               "not a table of 1-byte integers");
    size_t len = 0;
    if (!sleapc__h5_nbytes(in->ndim - 1, in->shape + 1, 1, &len))
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "row too large");
    hsize_t start[SLEAPC_H5_MAX_DIMS] = {0}, count[SLEAPC_H5_MAX_DIMS];
    start[0] = (hsize_t)row;
    count[0] = 1;
    for (int i = 1; i < in->ndim; i++)
        count[i] = (hsize_t)in->shape[i];
    hid_t mem = H5Tcopy(in->is_signed ? H5T_NATIVE_SCHAR : H5T_NATIVE_UCHAR);
    hid_t ms = H5Screate_simple(in->ndim, count, NULL);
    uint8_t *buf = sleapc__malloc(len ? len : 1);
    sleapc_status st = SLEAPC_OK;
    if (!buf)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: %s: out of memory", f->path, dset);
    else if (len && (mem < 0 || ms < 0 ||
                     H5Sselect_hyperslab(o->space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
                     H5Dread(o->d, mem, ms, o->space, H5P_DEFAULT, buf) < 0))
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "cannot read row %lld",
                             (long long)row);
    if (mem >= 0)
        H5Tclose(mem);
    if (ms >= 0)
        H5Sclose(ms);
    if (st) {
        sleapc__free(buf);
        return st;
    }
    *bytes = buf;
    *n = len;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_read_row_bytes(sleapc_h5 *f, const char *dset, int64_t row,
                                        uint8_t **bytes, size_t *n)
{
    *bytes = NULL;
    *n = 0;
    opened o;
    sleapc_status st = open_dataset(f, dset, &o);
    if (st)
        return st;
    if (o.info.ndim < 1 || row < 0 || row >= o.info.shape[0])
        st =
            sleapc__h5_fail(SLEAPC_ERR_INVALID_ARG, f, "read", dset, "no row %lld", (long long)row);
    else if (o.info.cls == SLEAPC_H5_CLASS_VLEN)
        st = vlen_row(f, dset, &o, row, bytes, n);
    else if (o.info.cls == SLEAPC_H5_CLASS_INT)
        st = fixed_row(f, dset, &o, row, bytes, n);
    else
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "not a table of bytes");
    close_opened(&o);
    return st;
}
