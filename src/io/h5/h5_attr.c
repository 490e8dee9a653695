/* Attributes: reading scalars and strings, writing scalars and strings. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/h5/h5_impl.h"

typedef struct attr {
    hid_t a, type, space;
    sleapc_h5_info info;
} attr;

static void attr_close(attr *x)
{
    if (x->type >= 0)
        H5Tclose(x->type);
    if (x->space >= 0)
        H5Sclose(x->space);
    if (x->a >= 0)
        H5Aclose(x->a);
}

static sleapc_status attr_open(sleapc_h5 *f, const char *obj, const char *name, attr *x)
{
    x->type = x->space = H5I_INVALID_HID;
    x->a = sleapc__h5_open_attr(f, obj, name);
    if (x->a < 0)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj, "no attribute \"%s\"", name);
    x->type = H5Aget_type(x->a);
    x->space = H5Aget_space(x->a);
    if (x->type < 0 || x->space < 0 || !sleapc__h5_describe(x->type, x->space, &x->info)) {
        attr_close(x);
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj,
                               "attribute \"%s\": unreadable type or dataspace", name);
    }
    return SLEAPC_OK;
}

/* A string stored as a 1-D array of bytes (sleap-io accepts this form). */
static sleapc_status bytes_to_string(sleapc_h5 *f, const char *obj, const char *name, attr *x,
                                     char **s)
{
    size_t n = (size_t)x->info.n_elems;
    char *buf = sleapc__malloc(n + 1);
    if (!buf)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: out of memory", f->path);
    hid_t mem = H5Tcopy(x->info.is_signed ? H5T_NATIVE_SCHAR : H5T_NATIVE_UCHAR);
    herr_t rc = mem >= 0 && n ? H5Aread(x->a, mem, buf) : mem >= 0 ? 0 : -1;
    if (mem >= 0)
        H5Tclose(mem);
    if (rc < 0) {
        sleapc__free(buf);
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj, "attribute \"%s\": cannot read",
                               name);
    }
    buf[n] = '\0';
    *s = buf;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_attr_string(sleapc_h5 *f, const char *obj, const char *name, char **s)
{
    *s = NULL;
    attr x;
    sleapc_status st = attr_open(f, obj, name, &x);
    if (st)
        return st;
    if (x.info.cls == SLEAPC_H5_CLASS_INT && x.info.elem_size == 1 && x.info.ndim <= 1) {
        st = bytes_to_string(f, obj, name, &x, s);
    } else if (x.info.cls == SLEAPC_H5_CLASS_STRING && x.info.n_elems == 1) {
        char **strs = NULL;
        int64_t n = 0;
        st = sleapc__h5_read_strings_from(f, obj, name, x.a, x.type, &x.info, &strs, &n);
        if (!st) {
            *s = strs[0];
            strs[0] = NULL;
            sleapc__h5_free_strings(strs, n);
        }
    } else {
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj,
                             "attribute \"%s\" is not a single string", name);
    }
    attr_close(&x);
    return st;
}

sleapc_status sleapc__h5_attr_strings(sleapc_h5 *f, const char *obj, const char *name, char ***strs,
                                      int64_t *n)
{
    *strs = NULL;
    *n = 0;
    attr x;
    sleapc_status st = attr_open(f, obj, name, &x);
    if (st)
        return st;
    st = sleapc__h5_read_strings_from(f, obj, name, x.a, x.type, &x.info, strs, n);
    attr_close(&x);
    return st;
}

/* Read a one-element numeric attribute as int64 or double. */
static sleapc_status attr_number(sleapc_h5 *f, const char *obj, const char *name, bool as_int,
                                 int64_t *iv, double *dv)
{
    attr x;
    sleapc_status st = attr_open(f, obj, name, &x);
    if (st)
        return st;
    sleapc_h5_class c = x.info.cls;
    if ((c != SLEAPC_H5_CLASS_INT && c != SLEAPC_H5_CLASS_FLOAT) || x.info.n_elems != 1) {
        attr_close(&x);
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj,
                               "attribute \"%s\" is not a single number", name);
    }
    bool read_int = as_int && c == SLEAPC_H5_CLASS_INT;
    hid_t mem = H5Tcopy(read_int ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE);
    bool aborted = false;
    hid_t xfer = sleapc__h5_checked_xfer(read_int, &aborted);
    int64_t i = 0;
    double d = 0;
    /* H5Aread takes no transfer list; convert explicitly to catch overflow. */
    unsigned char raw[64] = {0};
    herr_t rc = -1;
    if (mem >= 0 && xfer >= 0 && x.info.elem_size <= sizeof raw && H5Aread(x.a, x.type, raw) >= 0 &&
        H5Tconvert(x.type, mem, 1, raw, NULL, xfer) >= 0) {
        rc = 0;
        if (read_int)
            memcpy(&i, raw, sizeof i);
        else
            memcpy(&d, raw, sizeof d);
    }
    if (mem >= 0)
        H5Tclose(mem);
    if (xfer >= 0)
        H5Pclose(xfer);
    attr_close(&x);
    if (rc < 0)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj, "attribute \"%s\": %s", name,
                               aborted ? "value out of range" : "cannot read");
    if (as_int && !read_int) {
        /* A float attribute is accepted as an integer only when it is one. */
        if (!(d >= -9.2e18 && d <= 9.2e18) || floor(d) != d)
            return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj,
                                   "attribute \"%s\" is not an integer", name);
        i = (int64_t)d;
    }
    if (iv)
        *iv = i;
    if (dv)
        *dv = read_int ? (double)i : d;
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_attr_int(sleapc_h5 *f, const char *obj, const char *name, int64_t *v)
{
    *v = 0;
    return attr_number(f, obj, name, true, v, NULL);
}

sleapc_status sleapc__h5_attr_double(sleapc_h5 *f, const char *obj, const char *name, double *v)
{
    *v = 0;
    return attr_number(f, obj, name, false, NULL, v);
}

sleapc_status sleapc__h5_attr_raw(sleapc_h5 *f, const char *obj, const char *name, void **data,
                                  size_t *n_bytes)
{
    *data = NULL;
    *n_bytes = 0;
    attr x;
    sleapc_status st = attr_open(f, obj, name, &x);
    if (st)
        return st;
    size_t nbytes = 0;
    void *buf = NULL;
    if (H5Tdetect_class(x.type, H5T_VLEN) != 0 || H5Tis_variable_str(x.type) != 0)
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj,
                             "attribute \"%s\" is variable-length", name);
    else if (!sleapc__h5_nbytes(1, &x.info.n_elems, x.info.elem_size, &nbytes))
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj, "attribute too large");
    else if (!(buf = sleapc__malloc(nbytes ? nbytes : 1)))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: out of memory", f->path);
    else if (nbytes && H5Aread(x.a, x.type, buf) < 0)
        st = sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj, "attribute \"%s\": cannot read",
                             name);
    attr_close(&x);
    if (st) {
        sleapc__free(buf);
        return st;
    }
    *data = buf;
    *n_bytes = nbytes;
    return SLEAPC_OK;
}

/* ---- Writing ---------------------------------------------------------- */

/* Create (replacing) a scalar attribute of file type ftype from mem data. */
static sleapc_status set_attr(sleapc_h5 *f, const char *obj, const char *name, hid_t ftype,
                              hid_t mtype, const void *data)
{
    if (!f->writable)
        return sleapc__h5_fail(SLEAPC_ERR_STATE, f, "write", obj, "file is read-only");
    sleapc_h5_kind k = sleapc__h5_kind(f, obj);
    if (k != SLEAPC_H5_KIND_GROUP && k != SLEAPC_H5_KIND_DATASET)
        return sleapc__h5_fail(SLEAPC_ERR_INVALID_ARG, f, "write", obj, "no such group or dataset");
    const char *o = obj[0] ? obj : "/";
    if (H5Aexists_by_name(f->fid, o, name, H5P_DEFAULT) > 0)
        H5Adelete_by_name(f->fid, o, name, H5P_DEFAULT);
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t a = space >= 0 && ftype >= 0 && mtype >= 0
                  ? H5Acreate_by_name(f->fid, o, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT,
                                      H5P_DEFAULT)
                  : H5I_INVALID_HID;
    herr_t rc = a >= 0 ? H5Awrite(a, mtype, data) : -1;
    if (a >= 0 && H5Aclose(a) < 0)
        rc = -1;
    if (space >= 0)
        H5Sclose(space);
    if (rc < 0)
        return sleapc__h5_fail(SLEAPC_ERR_IO, f, "write", obj, "attribute \"%s\"", name);
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_set_attr_string(sleapc_h5 *f, const char *obj, const char *name,
                                         const char *s, bool vlen)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    herr_t rc = t >= 0 ? 0 : -1;
    if (vlen) {
        /* h5py's str: variable length, NUL-terminated, UTF-8. */
        if (rc >= 0)
            rc = H5Tset_size(t, H5T_VARIABLE);
        if (rc >= 0)
            rc = H5Tset_cset(t, H5T_CSET_UTF8);
    } else {
        /* h5py's numpy bytes: exactly the string's length, NUL-padded. */
        size_t len = strlen(s);
        if (rc >= 0)
            rc = H5Tset_size(t, len ? len : 1);
        if (rc >= 0)
            rc = H5Tset_strpad(t, H5T_STR_NULLPAD);
    }
    sleapc_status st;
    if (rc < 0)
        st = sleapc__h5_fail(SLEAPC_ERR_IO, f, "write", obj, "attribute \"%s\": string type", name);
    else
        st = set_attr(f, obj, name, t, t, vlen ? (const void *)&s : (const void *)s);
    if (t >= 0)
        H5Tclose(t);
    return st;
}

sleapc_status sleapc__h5_set_attr_int(sleapc_h5 *f, const char *obj, const char *name, int64_t v)
{
    hid_t ft = H5Tcopy(H5T_STD_I64LE), mt = H5Tcopy(H5T_NATIVE_INT64);
    sleapc_status st = set_attr(f, obj, name, ft, mt, &v);
    if (ft >= 0)
        H5Tclose(ft);
    if (mt >= 0)
        H5Tclose(mt);
    return st;
}

sleapc_status sleapc__h5_set_attr_double(sleapc_h5 *f, const char *obj, const char *name, double v)
{
    hid_t ft = H5Tcopy(H5T_IEEE_F64LE), mt = H5Tcopy(H5T_NATIVE_DOUBLE);
    sleapc_status st = set_attr(f, obj, name, ft, mt, &v);
    if (ft >= 0)
        H5Tclose(ft);
    if (mt >= 0)
        H5Tclose(mt);
    return st;
}
