/* Describing datasets and attributes: class, shape, layout and a canonical
 * text of the on-disk type (used to compare files field by field). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/h5/h5_impl.h"

static sleapc_h5_class class_of(hid_t type)
{
    switch (H5Tget_class(type)) {
    case H5T_INTEGER:
        return SLEAPC_H5_CLASS_INT;
    case H5T_FLOAT:
        return SLEAPC_H5_CLASS_FLOAT;
    case H5T_STRING:
        return SLEAPC_H5_CLASS_STRING;
    case H5T_COMPOUND:
        return SLEAPC_H5_CLASS_COMPOUND;
    case H5T_ENUM:
        return SLEAPC_H5_CLASS_ENUM;
    case H5T_VLEN:
        return SLEAPC_H5_CLASS_VLEN;
    case H5T_ARRAY:
        return SLEAPC_H5_CLASS_ARRAY;
    default:
        return SLEAPC_H5_CLASS_OTHER;
    }
}

bool sleapc__h5_describe(hid_t type, hid_t space, sleapc_h5_info *info)
{
    memset(info, 0, sizeof *info);
    info->gzip = -1;
    info->cls = class_of(type);
    info->elem_size = H5Tget_size(type);
    if (info->cls == SLEAPC_H5_CLASS_INT) {
        info->is_signed = H5Tget_sign(type) == H5T_SGN_2;
    } else if (info->cls == SLEAPC_H5_CLASS_ENUM) {
        hid_t base = H5Tget_super(type);
        info->is_signed = base >= 0 && H5Tget_sign(base) == H5T_SGN_2;
        if (base >= 0)
            H5Tclose(base);
    } else if (info->cls == SLEAPC_H5_CLASS_STRING) {
        info->vlen_string = H5Tis_variable_str(type) > 0;
    } else if (info->cls == SLEAPC_H5_CLASS_COMPOUND) {
        int m = H5Tget_nmembers(type);
        info->n_members = m > 0 ? m : 0;
    }
    int nd = H5Sget_simple_extent_ndims(space);
    if (nd < 0 || nd > SLEAPC_H5_MAX_DIMS)
        return false;
    hsize_t dims[SLEAPC_H5_MAX_DIMS], maxd[SLEAPC_H5_MAX_DIMS];
    if (nd > 0 && H5Sget_simple_extent_dims(space, dims, maxd) < 0)
        return false;
    info->ndim = nd;
    info->n_elems = 1;
    /* A null dataspace (H5S_NULL) holds no elements. */
    if (H5Sget_simple_extent_type(space) == H5S_NULL)
        info->n_elems = 0;
    for (int i = 0; i < nd; i++) {
        if (dims[i] > (hsize_t)INT64_MAX)
            return false;
        info->shape[i] = (int64_t)dims[i];
        info->maxshape[i] = maxd[i] == H5S_UNLIMITED ? -1 : (int64_t)maxd[i];
        /* Saturate instead of overflowing; readers check sizes anyway. */
        if (info->shape[i] && info->n_elems > INT64_MAX / info->shape[i])
            info->n_elems = INT64_MAX;
        else
            info->n_elems *= info->shape[i];
    }
    return true;
}

static void describe_layout(hid_t dset, sleapc_h5_info *info)
{
    hid_t dcpl = H5Dget_create_plist(dset);
    if (dcpl < 0)
        return;
    if (H5Pget_layout(dcpl) == H5D_CHUNKED) {
        hsize_t ch[SLEAPC_H5_MAX_DIMS];
        int nd = H5Pget_chunk(dcpl, SLEAPC_H5_MAX_DIMS, ch);
        info->chunked = nd > 0;
        for (int i = 0; i < nd && i < SLEAPC_H5_MAX_DIMS; i++)
            info->chunk[i] = (int64_t)ch[i];
    }
    int nf = H5Pget_nfilters(dcpl);
    for (int i = 0; i < nf; i++) {
        unsigned flags, cd[4] = {0}, config;
        size_t ncd = 4;
        char name[64];
        H5Z_filter_t id =
            H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, &config);
        if (id == H5Z_FILTER_DEFLATE)
            info->gzip = ncd > 0 ? (int)cd[0] : 0;
    }
    H5Pclose(dcpl);
}

sleapc_status sleapc__h5_dataset_info(sleapc_h5 *f, const char *dset, sleapc_h5_info *out)
{
    memset(out, 0, sizeof *out);
    hid_t d = sleapc__h5_open_dataset(f, dset);
    if (d < 0)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset, "no such dataset");
    hid_t t = H5Dget_type(d), s = H5Dget_space(d);
    bool ok = t >= 0 && s >= 0 && sleapc__h5_describe(t, s, out);
    if (ok)
        describe_layout(d, out);
    if (t >= 0)
        H5Tclose(t);
    if (s >= 0)
        H5Sclose(s);
    H5Dclose(d);
    if (!ok)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", dset,
                               "unreadable type or dataspace (at most %d dimensions)",
                               SLEAPC_H5_MAX_DIMS);
    return SLEAPC_OK;
}

sleapc_status sleapc__h5_attr_info(sleapc_h5 *f, const char *obj, const char *name,
                                   sleapc_h5_info *out)
{
    memset(out, 0, sizeof *out);
    hid_t a = sleapc__h5_open_attr(f, obj, name);
    if (a < 0)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj, "no attribute \"%s\"", name);
    hid_t t = H5Aget_type(a), s = H5Aget_space(a);
    bool ok = t >= 0 && s >= 0 && sleapc__h5_describe(t, s, out);
    if (t >= 0)
        H5Tclose(t);
    if (s >= 0)
        H5Sclose(s);
    H5Aclose(a);
    if (!ok)
        return sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj,
                               "attribute \"%s\": unreadable type or dataspace", name);
    for (int i = 0; i < out->ndim; i++)
        out->maxshape[i] = out->shape[i];
    return SLEAPC_OK;
}

/* ---- Type text -------------------------------------------------------- */

typedef struct text {
    char *s;
    size_t n, cap;
    bool bad;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(text *t, const char *fmt, ...)
{
    if (t->bad)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
        t->bad = true;
        return;
    }
    if (t->n + (size_t)k + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 64;
        while (cap < t->n + (size_t)k + 1)
            cap *= 2;
        char *p = sleapc__realloc(t->s, cap);
        if (!p) {
            t->bad = true;
            return;
        }
        t->s = p;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
    va_end(ap);
    t->n += (size_t)k;
}

static const char *order_text(hid_t type)
{
    return H5Tget_order(type) == H5T_ORDER_BE ? "be" : "le";
}

static void type_text(text *t, hid_t type, int depth);

static void put_member_name(text *t, hid_t type, unsigned i)
{
    char *name = H5Tget_member_name(type, i);
    put(t, "%s", name ? name : "?");
    if (name)
        H5free_memory(name);
}

static void enum_text(text *t, hid_t type, int depth)
{
    hid_t base = H5Tget_super(type);
    put(t, "enum:");
    type_text(t, base, depth + 1);
    put(t, "{");
    int n = H5Tget_nmembers(type);
    for (int i = 0; i < n; i++) {
        long long v = 0;
        unsigned char raw[16] = {0};
        /* Member values come in the base type; widen them to print. */
        if (H5Tget_member_value(type, (unsigned)i, raw) >= 0 && base >= 0)
            H5Tconvert(base, H5T_NATIVE_LLONG, 1, raw, NULL, H5P_DEFAULT);
        memcpy(&v, raw, sizeof v);
        put(t, "%s", i ? "," : "");
        put_member_name(t, type, (unsigned)i);
        put(t, "=%lld", v);
    }
    put(t, "}");
    if (base >= 0)
        H5Tclose(base);
}

static void type_text(text *t, hid_t type, int depth)
{
    if (type < 0 || depth > 8) {
        put(t, "?");
        return;
    }
    size_t size = H5Tget_size(type);
    switch (H5Tget_class(type)) {
    case H5T_INTEGER:
        put(t, "%c%zu%s", H5Tget_sign(type) == H5T_SGN_2 ? 'i' : 'u', size * 8, order_text(type));
        break;
    case H5T_FLOAT:
        put(t, "f%zu%s", size * 8, order_text(type));
        break;
    case H5T_STRING: {
        const char *cset = H5Tget_cset(type) == H5T_CSET_UTF8 ? "utf8" : "ascii";
        H5T_str_t pad = H5Tget_strpad(type);
        const char *pads = pad == H5T_STR_NULLPAD    ? "nullpad"
                           : pad == H5T_STR_SPACEPAD ? "spacepad"
                                                     : "nullterm";
        if (H5Tis_variable_str(type) > 0)
            put(t, "vlen-str[%s,%s]", pads, cset);
        else
            put(t, "str[%zu,%s,%s]", size, pads, cset);
        break;
    }
    case H5T_COMPOUND: {
        put(t, "compound[%zu]{", size);
        int n = H5Tget_nmembers(type);
        for (int i = 0; i < n; i++) {
            put(t, "%s", i ? "," : "");
            put_member_name(t, type, (unsigned)i);
            put(t, "@%zu:", H5Tget_member_offset(type, (unsigned)i));
            hid_t m = H5Tget_member_type(type, (unsigned)i);
            type_text(t, m, depth + 1);
            if (m >= 0)
                H5Tclose(m);
        }
        put(t, "}");
        break;
    }
    case H5T_ENUM:
        enum_text(t, type, depth);
        break;
    case H5T_VLEN: {
        hid_t base = H5Tget_super(type);
        put(t, "vlen<");
        type_text(t, base, depth + 1);
        put(t, ">");
        if (base >= 0)
            H5Tclose(base);
        break;
    }
    case H5T_ARRAY: {
        hsize_t dims[SLEAPC_H5_MAX_DIMS];
        int nd = H5Tget_array_ndims(type);
        put(t, "array[");
        if (nd > 0 && nd <= SLEAPC_H5_MAX_DIMS && H5Tget_array_dims2(type, dims) >= 0)
            for (int i = 0; i < nd; i++)
                put(t, "%s%llu", i ? "," : "", (unsigned long long)dims[i]);
        put(t, "]<");
        hid_t base = H5Tget_super(type);
        type_text(t, base, depth + 1);
        put(t, ">");
        if (base >= 0)
            H5Tclose(base);
        break;
    }
    default:
        put(t, "class%d[%zu]", (int)H5Tget_class(type), size);
        break;
    }
}

sleapc_status sleapc__h5_type_text(sleapc_h5 *f, const char *obj, const char *attr, char **out)
{
    *out = NULL;
    hid_t o = attr ? sleapc__h5_open_attr(f, obj, attr) : sleapc__h5_open_dataset(f, obj);
    if (o < 0)
        return attr
                   ? sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj, "no attribute \"%s\"", attr)
                   : sleapc__h5_fail(SLEAPC_ERR_FORMAT, f, "read", obj, "no such dataset");
    hid_t type = attr ? H5Aget_type(o) : H5Dget_type(o);
    text t = {0};
    type_text(&t, type, 0);
    if (type >= 0)
        H5Tclose(type);
    if (attr)
        H5Aclose(o);
    else
        H5Dclose(o);
    H5Eclear2(H5E_DEFAULT);
    if (t.bad || !t.s) {
        sleapc__free(t.s);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "read HDF5: %s: %s: out of memory", f->path, obj);
    }
    *out = t.s;
    return SLEAPC_OK;
}

/* ---- Checked conversions ----------------------------------------------- */

typedef struct conv_ctx {
    bool dst_is_int;
    bool *aborted;
} conv_ctx;

/* One context per thread is enough: a transfer list lives for one call. */
static _Thread_local conv_ctx tls_conv;

static H5T_conv_ret_t conv_cb(H5T_conv_except_t e, hid_t src, hid_t dst, void *src_buf,
                              void *dst_buf, void *user)
{
    (void)src;
    (void)dst;
    (void)src_buf;
    (void)dst_buf;
    conv_ctx *c = user;
    bool range =
        e == H5T_CONV_EXCEPT_RANGE_HI || e == H5T_CONV_EXCEPT_RANGE_LOW || e == H5T_CONV_EXCEPT_NAN;
    if (c->dst_is_int && range) {
        *c->aborted = true;
        return H5T_CONV_ABORT;
    }
    return H5T_CONV_UNHANDLED;
}

hid_t sleapc__h5_checked_xfer(bool dst_is_int, bool *aborted)
{
    *aborted = false;
    tls_conv.dst_is_int = dst_is_int;
    tls_conv.aborted = aborted;
    hid_t x = H5Pcreate(H5P_DATASET_XFER);
    if (x >= 0 && H5Pset_type_conv_cb(x, conv_cb, &tls_conv) < 0) {
        H5Pclose(x);
        return H5I_INVALID_HID;
    }
    return x;
}
