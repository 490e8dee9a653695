/* NumPy .npy files (numpy/lib/format.py): magic "\x93NUMPY", version, header
 * length, then a Python dict literal with 'descr', 'fortran_order' and
 * 'shape', padded with spaces and ended by '\n'; the raw C-order data follows. */
#include "io/npy/npy_file.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/dtype.h"
#include "core/error.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* numpy refuses headers over 10000 bytes by default (max_header_size); allow
 * some slack but never let a length field decide a large allocation. */
#define NPY_HEADER_MAX 65536
/* numpy pads the prefix + header to a multiple of this (ARRAY_ALIGN). */
#define NPY_ALIGN 64

typedef struct npy_header {
    char descr[16];
    bool fortran_order;
    int ndim;
    int64_t shape[SLEAPC_TENSOR_MAX_DIMS];
    int seen; /* bit per key, to refuse a missing or repeated key */
} npy_header;

static bool host_is_little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static void swap_bytes(void *data, size_t n_items, size_t itemsize)
{
    unsigned char *p = data;
    for (size_t i = 0; i < n_items; i++, p += itemsize)
        for (size_t a = 0, b = itemsize - 1; a < b; a++, b--) {
            unsigned char c = p[a];
            p[a] = p[b];
            p[b] = c;
        }
}

/* Where the bytes come from: a file descriptor, or (mem set) a buffer. */
typedef struct npy_src {
    int fd;
    const unsigned char *mem;
    size_t left; /* mem: bytes not read yet */
} npy_src;

/* 0: all read; 1: end of file first; -1: error (errno). */
static int read_exact(npy_src *src, void *buf, size_t n)
{
    if (src->mem) {
        if (n > src->left)
            return 1;
        memcpy(buf, src->mem, n);
        src->mem += n;
        src->left -= n;
        return 0;
    }
    int fd = src->fd;
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0)
            return 1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static bool write_all(FILE *f, const void *buf, size_t n)
{
    return fwrite(buf, 1, n, f) == n;
}

/* The header dict is parsed as the small subset of Python literals numpy writes. */

typedef struct cursor {
    const char *p, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool eat(cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A quoted string without escapes (numpy never writes any) into buf. */
static bool parse_string(cursor *c, char *buf, size_t cap)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return false;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || n + 1 >= cap)
            return false;
        buf[n++] = *c->p++;
    }
    if (c->p >= c->end)
        return false;
    c->p++;
    buf[n] = '\0';
    return true;
}

static bool parse_word(cursor *c, const char *w)
{
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
        return false;
    c->p += n;
    return true;
}

/* A non-negative decimal (Python 2 files may add an 'L'). */
static bool parse_dim(cursor *c, int64_t *out)
{
    skip_ws(c);
    int64_t v = 0;
    const char *start = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        int d = *c->p++ - '0';
        if (v > (INT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (c->p == start)
        return false;
    if (c->p < c->end && *c->p == 'L')
        c->p++;
    *out = v;
    return true;
}

static sleapc_status bad(const char *path, const char *what)
{
    return sleapc__fail(SLEAPC_ERR_FORMAT, "read npy: %s: %s", path, what);
}

/* "()", "(n,)" or "(a, b, ...)" with an optional trailing comma. */
static sleapc_status parse_shape(const char *path, cursor *c, npy_header *h)
{
    if (!eat(c, '('))
        return bad(path, "header 'shape' is not a tuple");
    h->ndim = 0;
    bool trailing_comma = false;
    while (!eat(c, ')')) {
        if (h->ndim == SLEAPC_TENSOR_MAX_DIMS)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "read npy: %s: more than %d dimensions", path,
                                SLEAPC_TENSOR_MAX_DIMS);
        if (!parse_dim(c, &h->shape[h->ndim]))
            return bad(path, "header 'shape' has a bad dimension");
        h->ndim++;
        trailing_comma = eat(c, ',');
        if (!trailing_comma) {
            if (!eat(c, ')'))
                return bad(path, "header 'shape' is not a tuple");
            break;
        }
    }
    /* "(3)" is the integer 3 in Python, not a tuple. */
    if (h->ndim == 1 && !trailing_comma)
        return bad(path, "header 'shape' is not a tuple");
    return SLEAPC_OK;
}

static sleapc_status parse_header(const char *path, const char *text, size_t len, npy_header *h)
{
    memset(h, 0, sizeof *h);
    cursor c = {text, text + len};
    if (!eat(&c, '{'))
        return bad(path, "header is not a dict");
    while (!eat(&c, '}')) {
        char key[32];
        if (!parse_string(&c, key, sizeof key) || !eat(&c, ':'))
            return bad(path, "header dict is malformed");
        int bit;
        if (strcmp(key, "descr") == 0) {
            bit = 1;
            skip_ws(&c);
            if (c.p < c.end && *c.p == '[')
                return bad(path, "structured dtypes are not supported");
            if (!parse_string(&c, h->descr, sizeof h->descr))
                return bad(path, "header 'descr' is not a short string");
        } else if (strcmp(key, "fortran_order") == 0) {
            bit = 2;
            if (parse_word(&c, "True"))
                h->fortran_order = true;
            else if (!parse_word(&c, "False"))
                return bad(path, "header 'fortran_order' is not True or False");
        } else if (strcmp(key, "shape") == 0) {
            bit = 4;
            sleapc_status st = parse_shape(path, &c, h);
            if (st)
                return st;
        } else {
            return sleapc__fail(SLEAPC_ERR_FORMAT, "read npy: %s: unexpected header key '%s'", path,
                                key);
        }
        if (h->seen & bit)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "read npy: %s: header key '%s' repeated", path,
                                key);
        h->seen |= bit;
        if (!eat(&c, ',')) {
            if (!eat(&c, '}'))
                return bad(path, "header dict is malformed");
            break;
        }
    }
    skip_ws(&c);
    if (c.p != c.end)
        return bad(path, "text after the header dict");
    if (h->seen != 7)
        return bad(path, "header lacks 'descr', 'fortran_order' or 'shape'");
    return SLEAPC_OK;
}

/* descr -> dtype and the file's bytes per item. */
static sleapc_status map_descr(const char *path, const char *descr, sleapc_dtype *dtype,
                               size_t *file_itemsize)
{
    static const struct {
        const char *descr;
        sleapc_dtype dtype;
        size_t size;
    } known[] = {
        {"<f4", SLEAPC_DTYPE_F32, 4}, {"<f8", SLEAPC_DTYPE_F32, 8}, {"|u1", SLEAPC_DTYPE_U8, 1},
        {"<u1", SLEAPC_DTYPE_U8, 1},  {">u1", SLEAPC_DTYPE_U8, 1},  {"|b1", SLEAPC_DTYPE_U8, 1},
        {"<i4", SLEAPC_DTYPE_I32, 4}, {"<i8", SLEAPC_DTYPE_I64, 8},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(descr, known[i].descr) == 0) {
            *dtype = known[i].dtype;
            *file_itemsize = known[i].size;
            return SLEAPC_OK;
        }
    }
    if (descr[0] == '>')
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read npy: %s: big-endian dtype '%s'", path, descr);
    if (strchr(descr, 'O'))
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read npy: %s: object arrays (pickles) are refused",
                            path);
    return sleapc__fail(SLEAPC_ERR_FORMAT, "read npy: %s: unsupported dtype '%s'", path, descr);
}

/* Converting <f8 in chunks keeps the peak memory at the float32 result. */
static sleapc_status read_f64_as_f32(const char *path, npy_src *src, float *dst, int64_t numel)
{
    double chunk[512];
    bool swap = !host_is_little_endian();
    for (int64_t done = 0; done < numel;) {
        size_t n = (size_t)(numel - done < 512 ? numel - done : 512);
        int r = read_exact(src, chunk, n * sizeof(double));
        if (r != 0)
            return sleapc__fail(r < 0 ? SLEAPC_ERR_IO : SLEAPC_ERR_FORMAT, "read npy: %s: %s", path,
                                r < 0 ? strerror(errno) : "data too short");
        if (swap)
            swap_bytes(chunk, n, sizeof(double));
        for (size_t i = 0; i < n; i++) {
            double v = chunk[i];
            /* Out-of-range casts are undefined in C; numpy gives +-inf. */
            if (v > FLT_MAX)
                dst[done + (int64_t)i] = INFINITY;
            else if (v < -FLT_MAX)
                dst[done + (int64_t)i] = -INFINITY;
            else
                dst[done + (int64_t)i] = (float)v;
        }
        done += (int64_t)n;
    }
    return SLEAPC_OK;
}

static sleapc_status read_body(const char *path, npy_src *src, off_t file_size, sleapc_tensor *out)
{
    unsigned char prefix[12];
    if (file_size < 10 || read_exact(src, prefix, 10) != 0)
        return bad(path, "truncated header");
    if (memcmp(prefix, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return bad(path, "not a .npy file (bad magic)");
    int major = prefix[6], minor = prefix[7];
    size_t prefix_len, header_len;
    if (major == 1 && minor == 0) {
        prefix_len = 10;
        header_len = (size_t)prefix[8] | (size_t)prefix[9] << 8;
    } else if ((major == 2 || major == 3) && minor == 0) {
        /* 3.0 differs from 2.0 only in allowing UTF-8 field names. */
        if (file_size < 12 || read_exact(src, prefix + 10, 2) != 0)
            return bad(path, "truncated header");
        prefix_len = 12;
        header_len = (size_t)prefix[8] | (size_t)prefix[9] << 8 | (size_t)prefix[10] << 16 |
                     (size_t)prefix[11] << 24;
    } else {
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read npy: %s: unknown format version %d.%d", path,
                            major, minor);
    }
    if (header_len > NPY_HEADER_MAX)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read npy: %s: header of %zu bytes is too long",
                            path, header_len);
    if ((uintmax_t)file_size - prefix_len < header_len)
        return bad(path, "truncated header");

    char *text = sleapc__malloc(header_len + 1);
    if (!text)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "read npy: %s: out of memory", path);
    npy_header h;
    sleapc_status st = SLEAPC_OK;
    int r = read_exact(src, text, header_len);
    if (r != 0)
        st = r < 0 ? sleapc__fail(SLEAPC_ERR_IO, "read npy: %s: %s", path, strerror(errno))
                   : bad(path, "truncated header");
    else if (header_len == 0 || text[header_len - 1] != '\n')
        st = bad(path, "header does not end with a newline");
    else
        st = parse_header(path, text, header_len, &h);
    sleapc__free(text);
    if (st)
        return st;

    sleapc_dtype dtype = SLEAPC_DTYPE_F32;
    size_t file_itemsize = 0;
    st = map_descr(path, h.descr, &dtype, &file_itemsize);
    if (st)
        return st;
    if (h.fortran_order)
        return bad(path, "Fortran-order arrays are not supported");

    /* numel and byte counts, refusing any product that would overflow. */
    int64_t numel = 1, span = 1;
    for (int i = 0; i < h.ndim; i++) {
        int64_t d = h.shape[i] > 0 ? h.shape[i] : 1;
        if (span > INT64_MAX / 8 / d)
            return bad(path, "shape too large");
        span *= d;
        numel *= h.shape[i];
    }
    uintmax_t data_len = (uintmax_t)file_size - prefix_len - header_len;
    uintmax_t want = (uintmax_t)numel * file_itemsize;
    if (data_len != want)
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "read npy: %s: data is %ju bytes, shape and dtype '%s' need %ju", path,
                            data_len, h.descr, want);
    size_t itemsize = sleapc__dtype_size(dtype);
    if ((uintmax_t)numel > SIZE_MAX / itemsize)
        return bad(path, "shape too large");

    void *data = sleapc__malloc((size_t)numel * itemsize);
    if (!data)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "read npy: %s: out of memory", path);
    if (file_itemsize != itemsize) {
        st = read_f64_as_f32(path, src, data, numel);
    } else {
        r = read_exact(src, data, (size_t)numel * itemsize);
        if (r != 0)
            st = sleapc__fail(r < 0 ? SLEAPC_ERR_IO : SLEAPC_ERR_FORMAT, "read npy: %s: %s", path,
                              r < 0 ? strerror(errno) : "data too short");
        else if (itemsize > 1 && !host_is_little_endian())
            swap_bytes(data, (size_t)numel, itemsize);
        else if (strcmp(h.descr, "|b1") == 0)
            for (int64_t i = 0; i < numel; i++)
                ((unsigned char *)data)[i] = ((unsigned char *)data)[i] != 0;
    }
    if (st) {
        sleapc__free(data);
        return st;
    }
    out->dtype = dtype;
    out->ndim = h.ndim;
    for (int i = 0; i < h.ndim; i++)
        out->shape[i] = h.shape[i];
    out->data = data;
    return SLEAPC_OK;
}

sleapc_status sleapc__npy_read(const char *path, sleapc_tensor *out)
{
    if (!path || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read npy: path and out are required");
    memset(out, 0, sizeof *out);
    /* O_NONBLOCK: a FIFO or device must not hang the open; it is refused
     * below as not a regular file (the flag means nothing for those). */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return sleapc__fail(SLEAPC_ERR_IO, "read npy: %s: %s", path, strerror(errno));
    struct stat sb;
    sleapc_status st;
    if (fstat(fd, &sb) != 0)
        st = sleapc__fail(SLEAPC_ERR_IO, "read npy: %s: %s", path, strerror(errno));
    else if (S_ISDIR(sb.st_mode))
        st = sleapc__fail(SLEAPC_ERR_IO, "read npy: %s: is a directory", path);
    else if (!S_ISREG(sb.st_mode))
        st = sleapc__fail(SLEAPC_ERR_IO, "read npy: %s: not a regular file", path);
    else
        st = read_body(path, &(npy_src){.fd = fd}, sb.st_size, out);
    close(fd);
    return st;
}

sleapc_status sleapc__npy_read_buffer(const void *buf, size_t size, const char *label,
                                      sleapc_tensor *out)
{
    if (!buf || !label || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read npy: buffer, label and out are required");
    memset(out, 0, sizeof *out);
    if ((uintmax_t)size > (uintmax_t)INT64_MAX / 2)
        return bad(label, "buffer too large");
    npy_src src = {.fd = -1, .mem = buf, .left = size};
    return read_body(label, &src, (off_t)size, out);
}

/* numpy's own rendering: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } */
static size_t format_header(const sleapc_tensor *t, char *buf, size_t cap)
{
    static const char *const descrs[] = {
        [SLEAPC_DTYPE_F32] = "<f4",
        [SLEAPC_DTYPE_U8] = "|u1",
        [SLEAPC_DTYPE_I32] = "<i4",
        [SLEAPC_DTYPE_I64] = "<i8",
    };
    char shape[SLEAPC_TENSOR_MAX_DIMS * 24 + 4];
    size_t n = 0;
    shape[n++] = '(';
    for (int i = 0; i < t->ndim; i++)
        n += (size_t)snprintf(shape + n, sizeof shape - n, "%s%lld", i ? ", " : "",
                              (long long)t->shape[i]);
    if (t->ndim == 1)
        shape[n++] = ',';
    shape[n++] = ')';
    shape[n] = '\0';
    int len = snprintf(buf + 10, cap - 10, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                       descrs[t->dtype], shape);
    size_t total = 10 + (size_t)len + 1;
    size_t padded = (total + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    memset(buf + 10 + len, ' ', padded - total);
    buf[padded - 1] = '\n';
    size_t header_len = padded - 10;
    memcpy(buf, NPY_MAGIC, NPY_MAGIC_LEN);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (char)(header_len & 0xff);
    buf[9] = (char)(header_len >> 8);
    return padded;
}

static bool write_data(FILE *f, const sleapc_tensor *t, size_t nbytes)
{
    size_t itemsize = sleapc__dtype_size(t->dtype);
    if (itemsize == 1 || host_is_little_endian())
        return write_all(f, t->data, nbytes);
    unsigned char chunk[4096];
    const unsigned char *src = t->data;
    for (size_t done = 0; done < nbytes;) {
        size_t n = nbytes - done < sizeof chunk ? nbytes - done : sizeof chunk;
        memcpy(chunk, src + done, n);
        swap_bytes(chunk, n / itemsize, itemsize);
        if (!write_all(f, chunk, n))
            return false;
        done += n;
    }
    return true;
}

sleapc_status sleapc__npy_write(const char *path, const sleapc_tensor *t)
{
    if (!path || !t)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write npy: path and tensor are required");
    size_t itemsize = sleapc__dtype_size(t->dtype);
    if (itemsize == 0 || t->ndim < 0 || t->ndim > SLEAPC_TENSOR_MAX_DIMS)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write npy: %s: bad dtype or ndim", path);
    uint64_t numel = 1;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write npy: %s: negative dimension", path);
        if (t->shape[i] > 0 && numel > SIZE_MAX / itemsize / (uint64_t)t->shape[i])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write npy: %s: shape too large", path);
        numel *= (uint64_t)t->shape[i];
    }
    size_t nbytes = (size_t)numel * itemsize;
    if (nbytes > 0 && !t->data)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write npy: %s: data is NULL", path);

    char header[512];
    size_t header_bytes = format_header(t, header, sizeof header);

    sleapc_atomic_file af;
    sleapc_status st = sleapc__atomic_open(path, &af);
    if (st)
        return sleapc__wrap(st, "write npy");
    if (!write_all(af.f, header, header_bytes) || !write_data(af.f, t, nbytes)) {
        sleapc__atomic_abort(&af);
        return sleapc__fail(SLEAPC_ERR_IO, "write npy: %s: write failed", path);
    }
    st = sleapc__atomic_commit(&af);
    if (st)
        return sleapc__wrap(st, "write npy");
    return SLEAPC_OK;
}
