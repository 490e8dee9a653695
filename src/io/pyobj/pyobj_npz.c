/* The value tree as np.savez_compressed(path, key=tree) writes it: a zip
 * (deflate) holding key.npy, a 0-d object array whose data is a pickle
 * (protocol 3) of the tree, numpy arrays and scalars pickled the way numpy
 * reduces them (numpy.core.multiarray._reconstruct / scalar), so that
 * np.load(path, allow_pickle=True)[key].item() returns the dict. */
#include <stdio.h>
#include <string.h>
#include <zlib.h>

#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "io/pyobj/pyobj.h"

typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
    bool failed;
} bytes;

static void put(bytes *b, const void *src, size_t n)
{
    if (b->failed)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 65536;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *p = sleapc__realloc(b->p, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void op(bytes *b, uint8_t c)
{
    put(b, &c, 1);
}

static void u32(bytes *b, uint32_t v)
{
    const uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, x, 4);
}

static void u16(bytes *b, uint16_t v)
{
    const uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(b, x, 2);
}

/* Pickle opcodes used (protocol 3). */
enum {
    MARK = '(',
    STOP = '.',
    BININT = 'J',
    LONG1 = 0x8a,
    NONE = 'N',
    BINFLOAT = 'G',
    BINUNICODE = 'X',
    BINBYTES = 'B',
    EMPTY_LIST = ']',
    APPENDS = 'e',
    EMPTY_DICT = '}',
    SETITEMS = 'u',
    TUPLE = 't',
    EMPTY_TUPLE = ')',
    TUPLE1 = 0x85,
    TUPLE3 = 0x87,
    GLOBAL = 'c',
    REDUCE = 'R',
    BUILD = 'b',
    NEWTRUE = 0x88,
    NEWFALSE = 0x89,
    PROTO = 0x80
};

static void p_int(bytes *b, int64_t v)
{
    if (v >= INT32_MIN && v <= INT32_MAX) {
        op(b, BININT);
        u32(b, (uint32_t)(int32_t)v);
        return;
    }
    op(b, LONG1);
    op(b, 8);
    for (int k = 0; k < 8; k++)
        op(b, (uint8_t)((uint64_t)v >> (8 * k)));
}

static void p_float(bytes *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    op(b, BINFLOAT);
    for (int k = 7; k >= 0; k--) /* big-endian */
        op(b, (uint8_t)(u >> (8 * k)));
}

static void p_str(bytes *b, const char *s)
{
    op(b, BINUNICODE);
    u32(b, (uint32_t)strlen(s));
    put(b, s, strlen(s));
}

static void p_bytes(bytes *b, const void *p, size_t n)
{
    op(b, BINBYTES);
    u32(b, (uint32_t)n);
    put(b, p, n);
}

static void p_global(bytes *b, const char *module, const char *name)
{
    op(b, GLOBAL);
    put(b, module, strlen(module));
    op(b, '\n');
    put(b, name, strlen(name));
    op(b, '\n');
}

/* numpy.dtype(name, False, True) with its state (3, order, None, None,
 * None, -1, -1, flags). */
static void p_dtype(bytes *b, const char *name, const char *order, int flags)
{
    p_global(b, "numpy", "dtype");
    p_str(b, name);
    op(b, NEWFALSE);
    op(b, NEWTRUE);
    op(b, TUPLE3);
    op(b, REDUCE);
    op(b, MARK);
    p_int(b, 3);
    p_str(b, order);
    op(b, NONE);
    op(b, NONE);
    op(b, NONE);
    p_int(b, -1);
    p_int(b, -1);
    p_int(b, flags);
    op(b, TUPLE);
    op(b, BUILD);
}

static void p_obj(bytes *b, const sleapc_pyobj *o);

/* _reconstruct(ndarray, (0,), b'b') with state (1, shape, dtype, False,
 * data); data is raw bytes, or a list for object arrays (one element). */
static void p_ndarray(bytes *b, int ndim, const int64_t *shape, const char *dt, const char *order,
                      int flags, const void *data, size_t n_bytes, const sleapc_pyobj *object)
{
    p_global(b, "numpy.core.multiarray", "_reconstruct");
    p_global(b, "numpy", "ndarray");
    p_int(b, 0);
    op(b, TUPLE1);
    p_bytes(b, "b", 1);
    op(b, TUPLE3);
    op(b, REDUCE);
    op(b, MARK);
    p_int(b, 1);
    if (ndim == 0) {
        op(b, EMPTY_TUPLE);
    } else {
        op(b, MARK);
        for (int d = 0; d < ndim; d++)
            p_int(b, shape[d]);
        op(b, TUPLE);
    }
    p_dtype(b, dt, order, flags);
    op(b, NEWFALSE);
    if (object) {
        op(b, EMPTY_LIST);
        op(b, MARK);
        p_obj(b, object);
        op(b, APPENDS);
    } else {
        p_bytes(b, data, n_bytes);
    }
    op(b, TUPLE);
    op(b, BUILD);
}

/* numpy.core.multiarray.scalar(dtype, raw bytes) */
static void p_scalar(bytes *b, const char *dt, const void *raw)
{
    p_global(b, "numpy.core.multiarray", "scalar");
    p_dtype(b, dt, "<", 0);
    p_bytes(b, raw, 8);
    op(b, 0x86); /* TUPLE2 */
    op(b, REDUCE);
}

static void p_obj(bytes *b, const sleapc_pyobj *o)
{
    switch (o->kind) {
    case SLEAPC_PYOBJ_DICT:
        op(b, EMPTY_DICT);
        if (!o->n)
            break;
        op(b, MARK);
        for (int64_t k = 0; k < o->n; k++) {
            p_str(b, o->keys[k]);
            p_obj(b, o->vals[k]);
        }
        op(b, SETITEMS);
        break;
    case SLEAPC_PYOBJ_INT:
        p_int(b, o->i);
        break;
    case SLEAPC_PYOBJ_FLOAT:
        p_float(b, o->f);
        break;
    case SLEAPC_PYOBJ_NP_F64:
        p_scalar(b, "f8", &o->f);
        break;
    case SLEAPC_PYOBJ_NP_I64:
        p_scalar(b, "i8", &o->i);
        break;
    case SLEAPC_PYOBJ_ARRAY_F64:
        p_ndarray(b, o->ndim, o->shape, "f8", "<", 0, o->f64, sizeof(double) * (size_t)o->n, NULL);
        break;
    case SLEAPC_PYOBJ_ARRAY_BOOL:
        p_ndarray(b, o->ndim, o->shape, "b1", "|", 0, o->b, (size_t)o->n, NULL);
        break;
    case SLEAPC_PYOBJ_STR:
        p_str(b, o->strs[0]);
        break;
    case SLEAPC_PYOBJ_BOOL:
        op(b, o->i ? NEWTRUE : NEWFALSE);
        break;
    case SLEAPC_PYOBJ_NONE:
        op(b, NONE);
        break;
    case SLEAPC_PYOBJ_LIST_INT:
    case SLEAPC_PYOBJ_LIST_STR:
        op(b, EMPTY_LIST);
        if (!o->n)
            break;
        op(b, MARK);
        for (int64_t k = 0; k < o->n; k++) {
            if (o->kind == SLEAPC_PYOBJ_LIST_INT)
                p_int(b, o->ints[k]);
            else
                p_str(b, o->strs[k]);
        }
        op(b, APPENDS);
        break;
    }
}

/* key.npy: a v1.0 header padded to 64 bytes, then the pickle. */
static void npy(bytes *b, const sleapc_pyobj *o)
{
    static const char head[] = "{'descr': '|O', 'fortran_order': False, 'shape': (), }";
    size_t len = 10 + strlen(head) + 1;
    const size_t padded = (len + 63) / 64 * 64;
    put(b, "\x93NUMPY\x01\x00", 8);
    u16(b, (uint16_t)(padded - 10));
    put(b, head, strlen(head));
    for (; len < padded; len++)
        op(b, ' ');
    op(b, '\n');
    op(b, PROTO);
    op(b, 3);
    const int64_t no_shape[1] = {0};
    p_ndarray(b, 0, no_shape, "O8", "|", 63, NULL, 0, o);
    op(b, STOP);
}

/* One deflated member (no data descriptor), the central directory and its
 * end record. */
static sleapc_status zip_one(bytes *z, const char *name, const bytes *data)
{
    uLongf n_out = compressBound((uLong)data->n) + 64;
    uint8_t *out = sleapc__malloc(n_out);
    if (!out)
        return SLEAPC_ERR_NOMEM;
    z_stream s;
    memset(&s, 0, sizeof s);
    if (deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        sleapc__free(out);
        return SLEAPC_ERR_NOMEM;
    }
    s.next_in = data->p;
    s.avail_in = (uInt)data->n;
    s.next_out = out;
    s.avail_out = (uInt)n_out;
    const int rc = deflate(&s, Z_FINISH);
    const size_t n_comp = n_out - s.avail_out;
    deflateEnd(&s);
    if (rc != Z_STREAM_END) {
        sleapc__free(out);
        return SLEAPC_ERR_NOMEM;
    }
    const uint32_t crc = (uint32_t)crc32(crc32(0, NULL, 0), data->p, (uInt)data->n);
    const uint16_t name_len = (uint16_t)strlen(name);
    /* local header; DOS date 1980-01-01 00:00 as numpy's zipfile writes */
    u32(z, 0x04034b50);
    u16(z, 20);
    u16(z, 0);
    u16(z, 8);
    u16(z, 0);
    u16(z, 0x21);
    u32(z, crc);
    u32(z, (uint32_t)n_comp);
    u32(z, (uint32_t)data->n);
    u16(z, name_len);
    u16(z, 0);
    put(z, name, name_len);
    put(z, out, n_comp);
    sleapc__free(out);
    const size_t central = z->n;
    u32(z, 0x02014b50);
    u16(z, 20);
    u16(z, 20);
    u16(z, 0);
    u16(z, 8);
    u16(z, 0);
    u16(z, 0x21);
    u32(z, crc);
    u32(z, (uint32_t)n_comp);
    u32(z, (uint32_t)data->n);
    u16(z, name_len);
    u16(z, 0);
    u16(z, 0);
    u16(z, 0);
    u16(z, 0);
    u32(z, 0x01800000); /* external attributes: a regular file, rw------- */
    u32(z, 0);
    put(z, name, name_len);
    const size_t central_size = z->n - central;
    u32(z, 0x06054b50);
    u16(z, 0);
    u16(z, 0);
    u16(z, 1);
    u16(z, 1);
    u32(z, (uint32_t)central_size);
    u32(z, (uint32_t)central);
    u16(z, 0);
    return z->failed ? SLEAPC_ERR_NOMEM : SLEAPC_OK;
}

sleapc_status sleapc__pyobj_write_npz(const sleapc_pyobj *o, const char *key, const char *path)
{
    bytes data = {0}, z = {0};
    npy(&data, o);
    char name[256];
    snprintf(name, sizeof name, "%s.npy", key);
    sleapc_status st =
        data.failed || data.n > 0xFFFFFFF0u ? SLEAPC_ERR_NOMEM : zip_one(&z, name, &data);
    sleapc__free(data.p);
    if (st) {
        sleapc__free(z.p);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "save metrics: %s: out of memory", path);
    }
    sleapc_atomic_file af;
    st = sleapc__atomic_open(path, &af);
    if (!st && fwrite(z.p, 1, z.n, af.f) != z.n) {
        sleapc__atomic_abort(&af);
        st = sleapc__fail(SLEAPC_ERR_IO, "save metrics: %s: write failed", path);
    } else if (!st) {
        st = sleapc__atomic_commit(&af);
    }
    sleapc__free(z.p);
    return st;
}
