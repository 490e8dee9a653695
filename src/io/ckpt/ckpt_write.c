/* Checkpoint writer: the archive layout of torch.save (PyTorchStreamWriter
 * over miniz) and the pickle that Lightning's checkpoint dict produces under
 * pickle protocol 2 (the protocol torch.save uses by default).
 *
 * The pickle is built in memory first (it is small and is the first entry);
 * storages are then streamed to the file with their CRC computed on the way,
 * which is what the data-descriptor flag (0x0808) is for.
 *
 * This file writes the zip container and streams the storages; the pickle is
 * built by ckpt_write_pickle.c. */
#include "io/ckpt/ckpt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "io/ckpt/ckpt_write_impl.h"
#include "io/ckpt/ckpt_zip.h"

#define ARCHIVE_DIR "best/"
#define PAYLOAD_ALIGN 64u
#define ZIP32_LIMIT 0xffffffffu

/* ---- zip emission ---- */

typedef struct zrecord {
    char name[48];
    uint32_t crc;
    uint64_t size;
    uint64_t offset;
} zrecord;

typedef struct zwriter {
    FILE *f;
    uint64_t pos;
    zrecord *recs;
    int n, cap;
    uint32_t crc;     /* of the entry being written */
    uint64_t size;    /* of the entry being written */
} zwriter;

static sleapc_status zw_raw(zwriter *z, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, z->f) != n)
        return sleapc__fail(SLEAPC_ERR_IO, "write failed: %s", strerror(errno));
    z->pos += n;
    return SLEAPC_OK;
}

static void le_bytes(uint8_t *dst, uint64_t x, int k)
{
    for (int i = 0; i < k; i++)
        dst[i] = (uint8_t)(x >> (8 * i));
}

static sleapc_status zw_begin(zwriter *z, const char *name)
{
    size_t name_len = strlen(name);
    if (z->pos >= ZIP32_LIMIT)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "archive reaches 4 GiB (zip64 entries are "
                                                    "not written)");
    zrecord *r = &z->recs[z->n++];
    snprintf(r->name, sizeof r->name, "%s", name);
    r->offset = z->pos;
    /* torch's getPadding: an "FB" extra field pads the payload to 64 bytes. */
    uint64_t start = z->pos + 30 + name_len + 4;
    size_t pad = (size_t)((PAYLOAD_ALIGN - start % PAYLOAD_ALIGN) % PAYLOAD_ALIGN);
    uint8_t h[30 + 4 + PAYLOAD_ALIGN];
    memset(h, 0, sizeof h);
    le_bytes(h, 0x04034b50u, 4);
    le_bytes(h + 6, 0x0808, 2);  /* sizes in a data descriptor; UTF-8 names */
    le_bytes(h + 26, name_len, 2);
    le_bytes(h + 28, 4 + pad, 2);
    sleapc_status st = zw_raw(z, h, 30);
    if (!st)
        st = zw_raw(z, name, name_len);
    h[30] = 'F';
    h[31] = 'B';
    le_bytes(h + 32, pad, 2);
    memset(h + 34, 'Z', pad);
    if (!st)
        st = zw_raw(z, h + 30, 4 + pad);
    z->crc = 0;
    z->size = 0;
    return st;
}

static sleapc_status zw_data(zwriter *z, const void *p, size_t n)
{
    z->crc = sleapc__zip_crc32(z->crc, p, n);
    z->size += n;
    return zw_raw(z, p, n);
}

static sleapc_status zw_end(zwriter *z)
{
    if (z->size >= ZIP32_LIMIT)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "entry of 4 GiB or more (zip64 entries are "
                                                    "not written)");
    zrecord *r = &z->recs[z->n - 1];
    r->crc = z->crc;
    r->size = z->size;
    uint8_t d[16];
    le_bytes(d, 0x08074b50u, 4);
    le_bytes(d + 4, r->crc, 4);
    le_bytes(d + 8, r->size, 4);
    le_bytes(d + 12, r->size, 4);
    return zw_raw(z, d, sizeof d);
}

static sleapc_status zw_entry(zwriter *z, const char *name, const void *p, size_t n)
{
    sleapc_status st = zw_begin(z, name);
    if (!st)
        st = zw_data(z, p, n);
    return st ? st : zw_end(z);
}

/* Central directory, then the zip64 end record and locator that miniz always
 * writes in torch's mode, then the classic end record. */
static sleapc_status zw_finish(zwriter *z)
{
    uint64_t cd_off = z->pos;
    sleapc_status st = SLEAPC_OK;
    for (int i = 0; i < z->n && !st; i++) {
        const zrecord *r = &z->recs[i];
        size_t name_len = strlen(r->name);
        uint8_t c[46];
        memset(c, 0, sizeof c);
        le_bytes(c, 0x02014b50u, 4);
        le_bytes(c + 8, 0x0808, 2);
        le_bytes(c + 16, r->crc, 4);
        le_bytes(c + 20, r->size, 4);
        le_bytes(c + 24, r->size, 4);
        le_bytes(c + 28, name_len, 2);
        le_bytes(c + 42, r->offset, 4);
        st = zw_raw(z, c, sizeof c);
        if (!st)
            st = zw_raw(z, r->name, name_len);
    }
    if (st)
        return st;
    uint64_t cd_size = z->pos - cd_off, z64_off = z->pos;
    if (z64_off >= ZIP32_LIMIT)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "archive reaches 4 GiB (zip64 entries are "
                                                    "not written)");
    uint8_t e[56 + 20 + 22];
    memset(e, 0, sizeof e);
    le_bytes(e, 0x06064b50u, 4);
    le_bytes(e + 4, 44, 8);
    le_bytes(e + 12, 0x031e, 2);
    le_bytes(e + 14, 0x002d, 2);
    le_bytes(e + 24, (uint64_t)z->n, 8);
    le_bytes(e + 32, (uint64_t)z->n, 8);
    le_bytes(e + 40, cd_size, 8);
    le_bytes(e + 48, cd_off, 8);
    uint8_t *loc = e + 56;
    le_bytes(loc, 0x07064b50u, 4);
    le_bytes(loc + 8, z64_off, 8);
    le_bytes(loc + 16, 1, 4);
    uint8_t *end = loc + 20;
    uint64_t n16 = z->n < 0xffff ? (uint64_t)z->n : 0xffff;
    le_bytes(end, 0x06054b50u, 4);
    le_bytes(end + 8, n16, 2);
    le_bytes(end + 10, n16, 2);
    le_bytes(end + 12, cd_size, 4);
    le_bytes(end + 16, cd_off, 4);
    return zw_raw(z, e, sizeof e);
}

/* ---- storages ---- */

static int host_is_big_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 0;
}

static sleapc_status write_storage(zwriter *z, const sleapc_weights *w, const sleapc_ckptw_src *s)
{
    if (s->kind == SRC_STEP) {
        int64_t step = 0;
        return zw_data(z, &step, sizeof step);
    }
    if (s->kind == SRC_SCORE) {
        float score = 0.0123f;
        return zw_data(z, &score, sizeof score);
    }
    const sleapc_weight *t = &w->items[s->weight];
    size_t numel = (size_t)sleapc__weight_numel(t);
    if (s->kind == SRC_WEIGHT)
        return zw_data(z, t->data, numel * sizeof(float));
    /* Made-up but deterministic Adam moments, so a reader sees real values. */
    float chunk[1024];
    sleapc_status st = SLEAPC_OK;
    for (size_t i = 0; i < numel && !st; i += 1024) {
        size_t k = numel - i < 1024 ? numel - i : 1024;
        for (size_t j = 0; j < k; j++) {
            float x = t->data[i + j];
            chunk[j] = s->kind == SRC_EXP_AVG ? 0.1f * x : 0.01f * x * x;
        }
        st = zw_data(z, chunk, k * sizeof(float));
    }
    return st;
}

/* torch.save writes storages sorted by key as strings: 0, 1, 10, 11, 2 ... */
static int cmp_key_text(const void *pa, const void *pb)
{
    char a[16], b[16];
    snprintf(a, sizeof a, "%d", *(const int *)pa);
    snprintf(b, sizeof b, "%d", *(const int *)pb);
    return strcmp(a, b);
}

static sleapc_status write_archive(FILE *f, const sleapc_ckptw_pickle *pk, const sleapc_weights *w)
{
    zwriter z;
    memset(&z, 0, sizeof z);
    z.f = f;
    z.cap = pk->n_srcs + 4;
    z.recs = sleapc__calloc((size_t)z.cap, sizeof *z.recs);
    int *order = sleapc__calloc((size_t)pk->n_srcs + 1, sizeof *order);
    if (!z.recs || !order) {
        sleapc__free(z.recs);
        sleapc__free(order);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < pk->n_srcs; i++)
        order[i] = i;
    qsort(order, (size_t)pk->n_srcs, sizeof *order, cmp_key_text);

    const char *byteorder = host_is_big_endian() ? "big" : "little";
    sleapc_status st = zw_entry(&z, ARCHIVE_DIR "data.pkl", pk->p, pk->n);
    if (!st)
        st = zw_entry(&z, ARCHIVE_DIR "byteorder", byteorder, strlen(byteorder));
    for (int i = 0; i < pk->n_srcs && !st; i++) {
        char name[48];
        snprintf(name, sizeof name, ARCHIVE_DIR "data/%d", order[i]);
        st = zw_begin(&z, name);
        if (!st)
            st = write_storage(&z, w, &pk->srcs[order[i]]);
        if (!st)
            st = zw_end(&z);
    }
    if (!st)
        st = zw_entry(&z, ARCHIVE_DIR "version", "3\n", 2);
    if (!st) {
        /* An opaque 40-digit id; derive it from the content so equal
         * inputs give equal files. */
        uint32_t h = 0;
        for (int i = 0; i < z.n; i++)
            h = sleapc__zip_crc32(h, &z.recs[i].crc, sizeof z.recs[i].crc);
        char id[48];
        snprintf(id, sizeof id, "%010u%010u%010u%010u", (unsigned)h, (unsigned)z.recs[0].crc,
                 (unsigned)(z.pos % 1000000007u), (unsigned)pk->n_srcs);
        st = zw_entry(&z, ARCHIVE_DIR ".data/serialization_id", id, 40);
    }
    if (!st)
        st = zw_finish(&z);
    sleapc__free(order);
    sleapc__free(z.recs);
    return st;
}

static sleapc_status check_weights(const sleapc_weights *w)
{
    if (!w || w->n < 0 || (w->n && !w->items))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "no weights given");
    for (int i = 0; i < w->n; i++) {
        const sleapc_weight *t = &w->items[i];
        if (!t->name || !t->name[0])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tensor %d has no name", i);
        if (t->ndim < 0 || t->ndim > SLEAPC_WEIGHT_MAX_DIMS)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tensor \"%s\" has %d dimensions",
                                t->name, t->ndim);
        int64_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            if (t->shape[d] < 0 || (t->shape[d] && numel > INT64_MAX / 4 / t->shape[d]))
                return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tensor \"%s\" has a bad shape",
                                    t->name);
            numel *= t->shape[d];
        }
        if (numel > 0 && !t->data)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tensor \"%s\" has no data", t->name);
        if ((uint64_t)numel * 4 >= ZIP32_LIMIT)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "tensor \"%s\" is 4 GiB or more",
                                t->name);
    }
    return SLEAPC_OK;
}

/* Written into a temporary file beside path, renamed into place when whole. */
static sleapc_status write_file(const char *path, const sleapc_ckptw_pickle *pk,
                                const sleapc_weights *w)
{
    sleapc_atomic_file af;
    sleapc_status st = sleapc__atomic_open(path, &af);
    if (st)
        return st;
    st = write_archive(af.f, pk, w);
    if (st) {
        sleapc__atomic_abort(&af);
        return st;
    }
    return sleapc__atomic_commit(&af);
}

sleapc_status sleapc__ckpt_write(const char *path, const sleapc_weights *w,
                                 bool with_training_state)
{
    if (!path || !path[0])
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "write checkpoint: a path is required");
    sleapc_status st = check_weights(w);
    if (st)
        return sleapc__wrap(st, "write checkpoint: %s", path);
    sleapc_ckptw_pickle pk;
    sleapc__ckptw_pickle_build(&pk, w, with_training_state);
    if (pk.oom)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    else
        st = write_file(path, &pk, w);
    sleapc__free(pk.p);
    sleapc__free(pk.srcs);
    if (st)
        return sleapc__wrap(st, "write checkpoint: %s", path);
    return SLEAPC_OK;
}
