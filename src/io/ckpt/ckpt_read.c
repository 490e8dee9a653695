/* best.ckpt -> named float32 tensors: the zip archive, its data.pkl and the
 * tensors of result["state_dict"] (what torch.load(path)["state_dict"] gives,
 * without running any Python). */
#include "io/ckpt/ckpt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/ckpt/ckpt_pickle.h"
#include "io/ckpt/ckpt_zip.h"

#define PKL_SUFFIX "data.pkl"
#define MAX_ENTRY_NAME 4096

static sleapc_status read_whole_file(const char *path, uint8_t **out, size_t *size)
{
    *out = NULL;
    *size = 0;
    /* O_NONBLOCK: a FIFO or device must not hang the open; it is refused
     * below as not a regular file (the flag means nothing for those). */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return sleapc__fail(SLEAPC_ERR_IO, "cannot open: %s", strerror(errno));
    struct stat sb;
    sleapc_status st = SLEAPC_OK;
    uint8_t *buf = NULL;
    if (fstat(fd, &sb) != 0) {
        st = sleapc__fail(SLEAPC_ERR_IO, "cannot stat: %s", strerror(errno));
        goto done;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = sleapc__fail(SLEAPC_ERR_IO, "not a regular file");
        goto done;
    }
    if (sb.st_size < 0 || (uint64_t)sb.st_size > SIZE_MAX / 2) {
        st = sleapc__fail(SLEAPC_ERR_IO, "file too large");
        goto done;
    }
    size_t n = (size_t)sb.st_size;
    buf = sleapc__malloc(n ? n : 1);
    if (!buf) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory (%zu bytes)", n);
        goto done;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            st = sleapc__fail(SLEAPC_ERR_IO, "read failed: %s", strerror(errno));
            goto done;
        }
        if (r == 0) {
            st = sleapc__fail(SLEAPC_ERR_IO, "file shrank while reading");
            goto done;
        }
        got += (size_t)r;
    }
    *out = buf;
    *size = n;
    buf = NULL;
done:
    sleapc__free(buf);
    close(fd);
    return st;
}

/* True when entry e is <prefix>data.pkl, with prefix empty or ending in '/';
 * *flat tells whether the prefix is a single folder level. */
static int is_pickle_entry(const sleapc_zip_entry *e, int *flat)
{
    const size_t k = strlen(PKL_SUFFIX);
    if (e->name_len < k || memcmp(e->name + e->name_len - k, PKL_SUFFIX, k) != 0)
        return 0;
    size_t plen = e->name_len - k;
    if (plen > 0 && e->name[plen - 1] != '/')
        return 0;
    *flat = plen <= 1 || !memchr(e->name, '/', plen - 1);
    return 1;
}

/* torch names the archive's top folder freely ("best/", "archive/", ...);
 * the pickle is <prefix>/data.pkl. Prefer a single-level prefix, the layout
 * torch writes, over deeper ones. */
static sleapc_status find_pickle(const sleapc_zip *z, const sleapc_zip_entry **pkl,
                                 size_t *prefix_len)
{
    const sleapc_zip_entry *best = NULL;
    int best_flat = 0;
    for (int i = 0; i < z->n; i++) {
        int flat;
        if (is_pickle_entry(&z->entries[i], &flat) && (!best || (flat && !best_flat))) {
            best = &z->entries[i];
            best_flat = flat;
        }
    }
    if (!best)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "no data.pkl entry in the archive");
    *pkl = best;
    *prefix_len = best->name_len - strlen(PKL_SUFFIX); /* includes the trailing '/' */
    return SLEAPC_OK;
}

/* P/byteorder is "little" or "big"; absent means little (older torch). */
static sleapc_status read_byteorder(const sleapc_zip *z, const char *prefix, size_t prefix_len,
                                    int *big_endian)
{
    char name[MAX_ENTRY_NAME];
    *big_endian = 0;
    if (prefix_len + sizeof "byteorder" > sizeof name)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "archive folder name is too long");
    memcpy(name, prefix, prefix_len);
    memcpy(name + prefix_len, "byteorder", sizeof "byteorder");
    const sleapc_zip_entry *e = sleapc__zip_find(z, name, strlen(name));
    if (!e)
        return SLEAPC_OK;
    const uint8_t *p;
    size_t n;
    sleapc_status st = sleapc__zip_entry_data(z, e, &p, &n);
    if (st)
        return st;
    if (n == 3 && memcmp(p, "big", 3) == 0)
        *big_endian = 1;
    else if (!(n == 6 && memcmp(p, "little", 6) == 0))
        return sleapc__fail(SLEAPC_ERR_FORMAT, "byteorder record is neither \"little\" nor "
                                               "\"big\"");
    return SLEAPC_OK;
}

static uint16_t get16(const uint8_t *p, int big)
{
    return big ? (uint16_t)((p[0] << 8) | p[1]) : (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t get32(const uint8_t *p, int big)
{
    uint32_t x = 0;
    for (int i = 0; i < 4; i++)
        x |= (uint32_t)p[big ? 3 - i : i] << (8 * i);
    return x;
}

static uint64_t get64(const uint8_t *p, int big)
{
    uint64_t lo = get32(p + (big ? 4 : 0), big), hi = get32(p + (big ? 0 : 4), big);
    return lo | (hi << 32);
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13); /* inf / nan */
    } else if (exp != 0) {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    } else if (mant == 0) {
        bits = sign;
    } else {
        /* Subnormal half: renormalise into a normal float. */
        int e = -1;
        do {
            e++;
            mant <<= 1;
        } while (!(mant & 0x400u));
        bits = sign | ((uint32_t)(112 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static float element(const uint8_t *p, sleapc_pk_dtype dtype, int big)
{
    uint32_t u32;
    uint64_t u64;
    float f;
    double d;
    switch (dtype) {
    case SLEAPC_PK_DTYPE_F32:
        u32 = get32(p, big);
        memcpy(&f, &u32, sizeof f);
        return f;
    case SLEAPC_PK_DTYPE_F64:
        u64 = get64(p, big);
        memcpy(&d, &u64, sizeof d);
        return (float)d;
    case SLEAPC_PK_DTYPE_F16:
        return half_to_float(get16(p, big));
    case SLEAPC_PK_DTYPE_BF16:
        u32 = (uint32_t)get16(p, big) << 16;
        memcpy(&f, &u32, sizeof f);
        return f;
    case SLEAPC_PK_DTYPE_I64:
        return (float)(int64_t)get64(p, big);
    case SLEAPC_PK_DTYPE_I32:
        return (float)(int32_t)get32(p, big);
    case SLEAPC_PK_DTYPE_I16:
        return (float)(int16_t)get16(p, big);
    case SLEAPC_PK_DTYPE_I8:
        return (float)(int8_t)p[0];
    case SLEAPC_PK_DTYPE_U8:
        return (float)p[0];
    case SLEAPC_PK_DTYPE_BOOL:
        return p[0] ? 1.0f : 0.0f;
    case SLEAPC_PK_DTYPE_UNKNOWN:
        break;
    }
    return 0.0f;
}

/* Shape, stride and offset of one tensor, checked against its storage. */
typedef struct tensor_view {
    int ndim;
    int64_t shape[SLEAPC_WEIGHT_MAX_DIMS];
    int64_t stride[SLEAPC_WEIGHT_MAX_DIMS];
    int64_t offset;
    int64_t numel;
} tensor_view;

static sleapc_status check_view(const char *name, const sleapc_pk_obj *t, int64_t storage_numel,
                                tensor_view *tv)
{
    const sleapc_pk_obj *size = t->u.tensor.size, *stride = t->u.tensor.stride;
    if (size->u.seq.n > SLEAPC_WEIGHT_MAX_DIMS)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\" has %zu dimensions (at most %d)",
                            name, size->u.seq.n, SLEAPC_WEIGHT_MAX_DIMS);
    tv->ndim = (int)size->u.seq.n;
    tv->offset = t->u.tensor.offset;
    tv->numel = 1;
    int64_t last = tv->offset; /* highest element index touched */
    for (int i = 0; i < tv->ndim; i++) {
        int64_t d = size->u.seq.items[i]->u.i, s = stride->u.seq.items[i]->u.i;
        if (d < 0 || s < 0)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\": negative size or stride",
                                name);
        tv->shape[i] = d;
        tv->stride[i] = s;
        if (d != 0 && tv->numel > INT64_MAX / d)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\": element count overflows",
                                name);
        tv->numel *= d;
    }
    if (tv->numel == 0)
        return SLEAPC_OK;
    for (int i = 0; i < tv->ndim; i++) {
        int64_t d = tv->shape[i], s = tv->stride[i];
        if (s != 0 && d - 1 > (INT64_MAX - last) / s)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\": strides overflow", name);
        last += (d - 1) * s;
    }
    if (last >= storage_numel)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\": needs storage element %lld but "
                                               "the storage has %lld",
                            name, (long long)last, (long long)storage_numel);
    if ((uint64_t)tv->numel > SIZE_MAX / sizeof(float))
        return sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\" is too large", name);
    return SLEAPC_OK;
}

/* Row-major with no gaps (what torch.save writes for ordinary tensors). */
static int is_contiguous(const tensor_view *tv)
{
    int64_t expect = 1;
    for (int i = tv->ndim - 1; i >= 0; i--) {
        if (tv->shape[i] != 1 && tv->stride[i] != expect)
            return 0;
        expect *= tv->shape[i];
    }
    return 1;
}

static int host_is_big_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 0;
}

/* Gather the tensor's elements in C order into dst, converting to float. */
static void gather(const uint8_t *base, size_t esize, sleapc_pk_dtype dtype, int big,
                   const tensor_view *tv, float *dst)
{
    /* The common case is a plain copy: float32 in host order, contiguous. */
    if (dtype == SLEAPC_PK_DTYPE_F32 && big == host_is_big_endian() && is_contiguous(tv)) {
        memcpy(dst, base + (size_t)tv->offset * esize, (size_t)tv->numel * sizeof(float));
        return;
    }
    int64_t idx[SLEAPC_WEIGHT_MAX_DIMS] = {0};
    int64_t pos = tv->offset;
    for (int64_t k = 0; k < tv->numel; k++) {
        dst[k] = element(base + (size_t)pos * esize, dtype, big);
        /* Odometer over the index, innermost dimension fastest. */
        for (int i = tv->ndim - 1; i >= 0; i--) {
            if (++idx[i] < tv->shape[i]) {
                pos += tv->stride[i];
                break;
            }
            pos -= (idx[i] - 1) * tv->stride[i];
            idx[i] = 0;
        }
    }
}

static const char *storage_type_name(const sleapc_pk_obj *storage, char *buf, size_t cap)
{
    const sleapc_pk_obj *g = storage->u.storage.type;
    snprintf(buf, cap, "%s.%s", g->u.global.module, g->u.global.name);
    return buf;
}

static sleapc_status add_tensor(const sleapc_zip *z, const char *prefix, size_t prefix_len,
                                int big, const char *name, const sleapc_pk_obj *t,
                                sleapc_weights *w)
{
    const sleapc_pk_obj *s = t->u.tensor.storage;
    char tmp[256];
    size_t esize = sleapc__pk_dtype_size(s->u.storage.dtype);
    if (!esize)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\": unsupported storage type %s",
                            name, storage_type_name(s, tmp, sizeof tmp));
    const sleapc_pk_obj *key = s->u.storage.key;
    char ename[MAX_ENTRY_NAME];
    if (key->u.str.n == 0 || memchr(key->u.str.p, '\0', key->u.str.n) ||
        prefix_len + 5 + key->u.str.n >= sizeof ename)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\": bad storage key", name);
    memcpy(ename, prefix, prefix_len);
    memcpy(ename + prefix_len, "data/", 5);
    memcpy(ename + prefix_len + 5, key->u.str.p, key->u.str.n);
    size_t elen = prefix_len + 5 + key->u.str.n;
    ename[elen] = '\0';
    const sleapc_zip_entry *e = sleapc__zip_find(z, ename, elen);
    if (!e)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\": storage entry \"%s\" is missing",
                            name, ename);
    const uint8_t *bytes;
    size_t nbytes;
    sleapc_status st = sleapc__zip_entry_data(z, e, &bytes, &nbytes);
    if (st)
        return st;
    int64_t storage_numel = s->u.storage.numel;
    if ((uint64_t)storage_numel > nbytes / esize)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\": storage \"%s\" has %zu bytes, "
                                               "%lld elements of %zu bytes declared",
                            name, ename, nbytes, (long long)storage_numel, esize);
    tensor_view tv;
    st = check_view(name, t, storage_numel, &tv);
    if (st)
        return st;
    float *data = sleapc__aligned_alloc((size_t)tv.numel * sizeof(float));
    if (!data)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    gather(bytes, esize, s->u.storage.dtype, big, &tv, data);
    return sleapc__weights_add(w, name, tv.ndim, tv.shape, data);
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A state dict maps each name once; a repeated name would make lookups
 * depend on order. */
static sleapc_status check_unique(const sleapc_weights *w)
{
    if (w->n < 2)
        return SLEAPC_OK;
    const char **names = sleapc__malloc((size_t)w->n * sizeof *names);
    if (!names)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < w->n; i++)
        names[i] = w->items[i].name;
    qsort(names, (size_t)w->n, sizeof *names, cmp_name);
    sleapc_status st = SLEAPC_OK;
    for (int i = 1; i < w->n && !st; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            st = sleapc__fail(SLEAPC_ERR_FORMAT, "tensor \"%s\" appears twice in state_dict",
                              names[i]);
    sleapc__free(names);
    return st;
}

static sleapc_status read_state_dict(const sleapc_zip *z, const char *prefix, size_t prefix_len,
                                     int big, const sleapc_pk_obj *root, sleapc_weights *w)
{
    if (root->kind != SLEAPC_PK_DICT)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "the pickled object is not a dict");
    const sleapc_pk_obj *sd = sleapc__pk_dict_get(root, "state_dict");
    if (!sd)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "no \"state_dict\" in the checkpoint");
    if (sd->kind != SLEAPC_PK_DICT)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "\"state_dict\" is not a dict");
    for (size_t i = 0; i + 1 < sd->u.seq.n; i += 2) {
        const sleapc_pk_obj *k = sd->u.seq.items[i], *val = sd->u.seq.items[i + 1];
        /* Modules may store non-tensor "_extra_state" values; only tensors
         * are weights. */
        if (val->kind != SLEAPC_PK_TENSOR)
            continue;
        if (k->kind != SLEAPC_PK_STR || k->u.str.n == 0 || memchr(k->u.str.p, '\0', k->u.str.n))
            return sleapc__fail(SLEAPC_ERR_FORMAT, "state_dict key %zu is not a tensor name",
                                i / 2);
        char *name = sleapc__malloc(k->u.str.n + 1);
        if (!name)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        memcpy(name, k->u.str.p, k->u.str.n);
        name[k->u.str.n] = '\0';
        sleapc_status st = add_tensor(z, prefix, prefix_len, big, name, val, w);
        sleapc__free(name);
        if (st)
            return st;
    }
    return check_unique(w);
}

/* Everything after the file is in memory; messages say only what is wrong. */
static sleapc_status read_archive(const uint8_t *buf, size_t size, sleapc_weights *w)
{
    sleapc_zip zip;
    sleapc_pickle *pk = NULL;
    sleapc_status st = sleapc__zip_open(buf, size, &zip);
    if (st)
        return st;
    const sleapc_zip_entry *pkl = NULL;
    size_t prefix_len = 0;
    st = find_pickle(&zip, &pkl, &prefix_len);
    int big = 0;
    if (!st)
        st = read_byteorder(&zip, pkl->name, prefix_len, &big);
    const uint8_t *pkl_data = NULL;
    size_t pkl_size = 0;
    if (!st)
        st = sleapc__zip_entry_data(&zip, pkl, &pkl_data, &pkl_size);
    if (!st) {
        st = sleapc__pickle_load(pkl_data, pkl_size, &pk);
        if (st)
            sleapc__wrap(st, "%.*s", (int)pkl->name_len, pkl->name);
    }
    if (!st)
        st = read_state_dict(&zip, pkl->name, prefix_len, big, sleapc__pickle_root(pk), w);
    sleapc__pickle_destroy(pk);
    sleapc__zip_close(&zip);
    return st;
}

sleapc_status sleapc__ckpt_read_buffer(const uint8_t *buf, size_t size, const char *label,
                                       sleapc_weights *out)
{
    if (!label)
        label = "(memory)";
    if ((!buf && size) || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read checkpoint: %s: buffer and out are "
                                                    "required",
                            label);
    if (out->n || out->items)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read checkpoint: %s: out must be empty",
                            label);
    sleapc_weights w;
    memset(&w, 0, sizeof w);
    sleapc_status st = read_archive(buf ? buf : (const uint8_t *)"", size, &w);
    if (st) {
        sleapc__weights_clear(&w);
        return sleapc__wrap(st, "read checkpoint: %s", label);
    }
    *out = w;
    return SLEAPC_OK;
}

sleapc_status sleapc__ckpt_read(const char *path, sleapc_weights *out)
{
    if (!path || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read checkpoint: path and out are required");
    if (out->n || out->items)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read checkpoint: %s: out must be empty",
                            path);
    uint8_t *buf = NULL;
    size_t size = 0;
    sleapc_status st = read_whole_file(path, &buf, &size);
    if (st)
        return sleapc__wrap(st, "read checkpoint: %s", path);
    st = sleapc__ckpt_read_buffer(buf, size, path, out);
    sleapc__free(buf);
    return st;
}
