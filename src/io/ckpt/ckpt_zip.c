/* ZIP central-directory reader for torch.save archives (PKZIP APPNOTE 6.3).
 * torch writes stored entries whose local headers carry zero sizes (flag bit 3,
 * data descriptors follow the payload) and an "FB" padding extra field that
 * the central record lacks, so sizes come from the central directory and the
 * payload offset from the local header's own name/extra lengths. */
#include "io/ckpt/ckpt_zip.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/alloc.h"
#include "core/error.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_EOCD64_LOCATOR 0x07064b50u

#define LOCAL_HEADER_SIZE 30u
#define CENTRAL_HEADER_SIZE 46u
#define EOCD_SIZE 22u
#define EOCD64_SIZE 56u
#define EOCD64_LOCATOR_SIZE 20u
#define ZIP64_EXTRA_ID 0x0001u

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32);
}

/* True when [off, off + len) lies inside [0, limit), without overflow. */
static int span_ok(uint64_t off, uint64_t len, uint64_t limit)
{
    return off <= limit && len <= limit - off;
}

uint32_t sleapc__zip_crc32(uint32_t crc, const void *data, size_t n)
{
    /* zlib's CRC-32 (the ZIP polynomial) is several GB/s, so checking every
     * record on load costs milliseconds; it takes at most UINT_MAX bytes a call. */
    const uint8_t *p = data;
    uLong c = crc;
    while (n > 0) {
        uInt chunk = n > 0x40000000u ? 0x40000000u : (uInt)n;
        c = crc32(c, p, chunk);
        p += chunk;
        n -= chunk;
    }
    return (uint32_t)c;
}

/* Where the central directory is, from the (zip64) end records. */
typedef struct cd_info {
    uint64_t offset;
    uint64_t size;
    uint64_t n_entries;
    uint64_t limit;  /* the directory must end before this (its end record) */
} cd_info;

static sleapc_status find_eocd(const uint8_t *buf, size_t size, size_t *pos)
{
    if (size < EOCD_SIZE)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "not a zip archive (%zu bytes, no end record)",
                            size);
    /* The record sits at the end, followed only by a comment of at most 64 KiB;
     * scan backwards and take the last signature whose comment fits. */
    size_t lowest = size - EOCD_SIZE > 0xffffu ? size - EOCD_SIZE - 0xffffu : 0;
    for (size_t p = size - EOCD_SIZE + 1; p-- > lowest;) {
        if (rd32(buf + p) == SIG_EOCD && rd16(buf + p + 20) <= size - p - EOCD_SIZE) {
            *pos = p;
            return SLEAPC_OK;
        }
    }
    return sleapc__fail(SLEAPC_ERR_FORMAT, "not a zip archive (no end-of-central-directory "
                                           "record)");
}

static sleapc_status read_end_records(const uint8_t *buf, size_t size, cd_info *cd)
{
    size_t eocd = 0;
    sleapc_status st = find_eocd(buf, size, &eocd);
    if (st)
        return st;
    const uint8_t *e = buf + eocd;
    uint16_t disk = rd16(e + 4), cd_disk = rd16(e + 6);
    uint16_t n_disk = rd16(e + 8), n_total = rd16(e + 10);
    cd->n_entries = n_total;
    cd->size = rd32(e + 12);
    cd->offset = rd32(e + 16);
    cd->limit = eocd;

    /* torch (miniz) always adds zip64 records; when present they are the truth. */
    if (eocd >= EOCD64_LOCATOR_SIZE && rd32(e - EOCD64_LOCATOR_SIZE) == SIG_EOCD64_LOCATOR) {
        const uint8_t *loc = e - EOCD64_LOCATOR_SIZE;
        uint64_t z64 = rd64(loc + 8);
        uint64_t loc_pos = eocd - EOCD64_LOCATOR_SIZE;
        if (rd32(loc + 4) != 0 || rd32(loc + 16) > 1)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "multi-disk zip archives are not "
                                                        "supported");
        if (!span_ok(z64, EOCD64_SIZE, loc_pos) || rd32(buf + z64) != SIG_EOCD64)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "zip64 end record offset %llu is invalid",
                                (unsigned long long)z64);
        const uint8_t *r = buf + z64;
        if (rd64(r + 4) < EOCD64_SIZE - 12 || rd32(r + 16) != 0 || rd32(r + 20) != 0 ||
            rd64(r + 24) != rd64(r + 32))
            return sleapc__fail(SLEAPC_ERR_FORMAT, "zip64 end record is inconsistent");
        cd->n_entries = rd64(r + 32);
        cd->size = rd64(r + 40);
        cd->offset = rd64(r + 48);
        cd->limit = z64;
    } else if (disk != 0 || cd_disk != 0 || n_disk != n_total) {
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "multi-disk zip archives are not supported");
    }
    if (!span_ok(cd->offset, cd->size, cd->limit))
        return sleapc__fail(SLEAPC_ERR_FORMAT, "central directory (offset %llu, %llu bytes) "
                                               "runs past its end record at %llu",
                            (unsigned long long)cd->offset, (unsigned long long)cd->size,
                            (unsigned long long)cd->limit);
    if (cd->n_entries > cd->size / CENTRAL_HEADER_SIZE || cd->n_entries > 0x7fffffffu)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "central directory claims %llu entries in %llu "
                                               "bytes",
                            (unsigned long long)cd->n_entries, (unsigned long long)cd->size);
    return SLEAPC_OK;
}

/* Replace 0xFFFFFFFF placeholders with the 64-bit values of the zip64 extra
 * field; the values appear only for the fields that carry the placeholder, in
 * this order (APPNOTE 4.5.3). */
static sleapc_status apply_zip64_extra(const uint8_t *extra, size_t len, sleapc_zip_entry *e)
{
    size_t pos = 0;
    while (len - pos >= 4) {
        uint16_t id = rd16(extra + pos), flen = rd16(extra + pos + 2);
        pos += 4;
        if (flen > len - pos)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "extra field runs past its record");
        if (id == ZIP64_EXTRA_ID) {
            const uint8_t *f = extra + pos;
            size_t used = 0;
            uint64_t *fields[3] = {&e->size, &e->comp_size, &e->header_offset};
            for (int i = 0; i < 3; i++) {
                if (*fields[i] != 0xffffffffu)
                    continue;
                if (flen - used < 8)
                    return sleapc__fail(SLEAPC_ERR_FORMAT, "zip64 extra field is too short");
                *fields[i] = rd64(f + used);
                used += 8;
            }
        }
        pos += flen;
    }
    return SLEAPC_OK;
}

static sleapc_status parse_entry(const uint8_t *buf, size_t size, const uint8_t *c,
                                 size_t avail, sleapc_zip_entry *e, size_t *rec_len)
{
    if (avail < CENTRAL_HEADER_SIZE || rd32(c) != SIG_CENTRAL)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "bad central directory record");
    size_t name_len = rd16(c + 28), extra_len = rd16(c + 30), comment_len = rd16(c + 32);
    size_t total = CENTRAL_HEADER_SIZE + name_len + extra_len + comment_len;
    if (total > avail)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "central directory record runs past the "
                                               "directory");
    e->flags = rd16(c + 8);
    e->method = rd16(c + 10);
    e->crc32 = rd32(c + 16);
    e->comp_size = rd32(c + 20);
    e->size = rd32(c + 24);
    e->header_offset = rd32(c + 42);
    e->name = (const char *)(c + CENTRAL_HEADER_SIZE);
    e->name_len = name_len;
    sleapc_status st = apply_zip64_extra(c + CENTRAL_HEADER_SIZE + name_len, extra_len, e);
    if (st)
        return st;

    /* The local header repeats the name and has its own extra length. */
    uint64_t lh = e->header_offset;
    if (!span_ok(lh, LOCAL_HEADER_SIZE, size) || rd32(buf + lh) != SIG_LOCAL)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "entry \"%.*s\": local header offset %llu is "
                                               "invalid",
                            (int)name_len, e->name, (unsigned long long)lh);
    size_t l_name = rd16(buf + lh + 26), l_extra = rd16(buf + lh + 28);
    uint64_t data = lh + LOCAL_HEADER_SIZE + l_name + l_extra;
    if (!span_ok(lh + LOCAL_HEADER_SIZE, (uint64_t)l_name + l_extra, size) ||
        l_name != name_len || memcmp(buf + lh + LOCAL_HEADER_SIZE, e->name, name_len) != 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "entry \"%.*s\": local header does not match "
                                               "the central directory",
                            (int)name_len, e->name);
    if (!span_ok(data, e->comp_size, size))
        return sleapc__fail(SLEAPC_ERR_FORMAT, "entry \"%.*s\": %llu bytes at offset %llu run "
                                               "past the end of the file",
                            (int)name_len, e->name, (unsigned long long)e->comp_size,
                            (unsigned long long)data);
    if (e->method == 0 && e->comp_size != e->size)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "entry \"%.*s\": stored entry has %llu bytes but "
                                               "claims %llu",
                            (int)name_len, e->name, (unsigned long long)e->comp_size,
                            (unsigned long long)e->size);
    e->data_offset = data;
    *rec_len = total;
    return SLEAPC_OK;
}

static int name_cmp(const char *a, size_t na, const char *b, size_t nb)
{
    int c = memcmp(a, b, na < nb ? na : nb);
    if (c)
        return c;
    return na < nb ? -1 : na > nb;
}

static int entry_cmp(const void *pa, const void *pb)
{
    const sleapc_zip_entry *a = pa, *b = pb;
    return name_cmp(a->name, a->name_len, b->name, b->name_len);
}

sleapc_status sleapc__zip_open(const uint8_t *buf, size_t size, sleapc_zip *out)
{
    memset(out, 0, sizeof *out);
    cd_info cd;
    sleapc_status st = read_end_records(buf, size, &cd);
    if (st)
        return st;
    sleapc_zip_entry *entries = sleapc__calloc(cd.n_entries ? (size_t)cd.n_entries : 1,
                                               sizeof *entries);
    if (!entries)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    size_t pos = (size_t)cd.offset, end = (size_t)(cd.offset + cd.size);
    for (uint64_t i = 0; i < cd.n_entries; i++) {
        size_t rec_len = 0;
        st = parse_entry(buf, size, buf + pos, end - pos, &entries[i], &rec_len);
        if (st) {
            sleapc__free(entries);
            return st;
        }
        pos += rec_len;
    }
    /* Sorted names give a binary-search lookup and make duplicates adjacent;
     * a duplicate name would make "which payload is meant" ambiguous. */
    qsort(entries, (size_t)cd.n_entries, sizeof *entries, entry_cmp);
    for (uint64_t i = 1; i < cd.n_entries; i++) {
        if (entry_cmp(&entries[i - 1], &entries[i]) == 0) {
            st = sleapc__fail(SLEAPC_ERR_FORMAT, "duplicate entry \"%.*s\"",
                              (int)entries[i].name_len, entries[i].name);
            sleapc__free(entries);
            return st;
        }
    }
    out->buf = buf;
    out->size = size;
    out->entries = entries;
    out->n = (int)cd.n_entries;
    return SLEAPC_OK;
}

const sleapc_zip_entry *sleapc__zip_find(const sleapc_zip *z, const char *name, size_t len)
{
    int lo = 0, hi = z->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const sleapc_zip_entry *e = &z->entries[mid];
        int c = name_cmp(e->name, e->name_len, name, len);
        if (c == 0)
            return e;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

sleapc_status sleapc__zip_entry_data(const sleapc_zip *z, const sleapc_zip_entry *e,
                                     const uint8_t **data, size_t *size)
{
    if (e->flags & 1u)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "entry \"%.*s\" is encrypted",
                            (int)e->name_len, e->name);
    if (e->method != 0)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "entry \"%.*s\" is compressed (method %u); "
                                                    "only stored entries are supported",
                            (int)e->name_len, e->name, (unsigned)e->method);
    /* zip_open checked data_offset + size against the buffer. A damaged
     * payload (most of a checkpoint is tensor bytes) would otherwise load as
     * wrong weights, so the recorded CRC-32 is checked on every read. */
    const uint8_t *p = z->buf + e->data_offset;
    uint32_t crc = sleapc__zip_crc32(0, p, (size_t)e->size);
    if (crc != e->crc32)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "entry \"%.*s\" is damaged (CRC-32 %08x, the "
                                               "archive records %08x)",
                            (int)e->name_len, e->name, (unsigned)crc, (unsigned)e->crc32);
    *data = p;
    *size = (size_t)e->size;
    return SLEAPC_OK;
}

void sleapc__zip_close(sleapc_zip *z)
{
    if (!z)
        return;
    sleapc__free(z->entries);
    memset(z, 0, sizeof *z);
}
