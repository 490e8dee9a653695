/* .npz reading: the archive is read whole (the zip directory is at its end),
 * its central directory parsed by io/ckpt's zip view, and the one entry
 * inflated when np.savez_compressed deflated it. */
#include "io/npy/npz_read.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/ckpt/ckpt_zip.h"
#include "io/npy/npy_file.h"

/* An archive larger than this is not a set of reference arrays. */
#define NPZ_MAX_BYTES ((size_t)1 << 31)

static sleapc_status read_whole(const char *path, uint8_t **out, size_t *size)
{
    *out = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return sleapc__fail(SLEAPC_ERR_IO, "read npz: %s: %s", path, strerror(errno));
    struct stat sb;
    sleapc_status st = SLEAPC_OK;
    if (fstat(fd, &sb) != 0)
        st = sleapc__fail(SLEAPC_ERR_IO, "read npz: %s: %s", path, strerror(errno));
    else if (!S_ISREG(sb.st_mode))
        st = sleapc__fail(SLEAPC_ERR_IO, "read npz: %s: not a regular file", path);
    else if (sb.st_size < 0 || (uintmax_t)sb.st_size > NPZ_MAX_BYTES)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "read npz: %s: file too large", path);
    size_t n = st ? 0 : (size_t)sb.st_size, got = 0;
    uint8_t *buf = st ? NULL : sleapc__malloc(n ? n : 1);
    if (!st && !buf)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "read npz: %s: out of memory", path);
    while (!st && got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            st = sleapc__fail(SLEAPC_ERR_IO, "read npz: %s: %s", path,
                              r < 0 ? strerror(errno) : "file shrank while reading");
        else
            got += (size_t)r;
    }
    close(fd);
    if (st) {
        sleapc__free(buf);
        return st;
    }
    *out = buf;
    *size = n;
    return SLEAPC_OK;
}

/* A deflated entry into a new buffer of exactly its recorded size, CRC
 * checked. */
static sleapc_status inflate_entry(const sleapc_zip *z, const sleapc_zip_entry *e, uint8_t **out)
{
    *out = NULL;
    if (e->flags & 1u)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "the entry is encrypted");
    if (e->size > NPZ_MAX_BYTES || e->comp_size > UINT_MAX || e->size > UINT_MAX)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "the entry is too large");
    uint8_t *buf = sleapc__malloc(e->size ? (size_t)e->size : 1);
    if (!buf)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    /* Raw deflate: the zip entry has no zlib header. */
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
        sleapc__free(buf);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "cannot start inflating");
    }
    zs.next_in = (Bytef *)(uintptr_t)(z->buf + e->data_offset);
    zs.avail_in = (uInt)e->comp_size;
    zs.next_out = buf;
    zs.avail_out = (uInt)e->size;
    int r = inflate(&zs, Z_FINISH);
    bool whole = r == Z_STREAM_END && zs.total_out == e->size;
    inflateEnd(&zs);
    sleapc_status st = SLEAPC_OK;
    if (!whole)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "the deflated data is damaged or not %llu bytes",
                          (unsigned long long)e->size);
    else if (sleapc__zip_crc32(0, buf, (size_t)e->size) != e->crc32)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "the entry is damaged (CRC-32 mismatch)");
    if (st) {
        sleapc__free(buf);
        return st;
    }
    *out = buf;
    return SLEAPC_OK;
}

static sleapc_status read_entry(const sleapc_zip *z, const char *path, const char *key,
                                sleapc_tensor *out)
{
    char name[512];
    int len = snprintf(name, sizeof name, "%s.npy", key);
    if (len < 0 || (size_t)len >= sizeof name)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read npz: %s: key too long", path);
    const sleapc_zip_entry *e = sleapc__zip_find(z, name, (size_t)len);
    if (!e)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "read npz: %s: no array \"%s\"", path, key);
    const uint8_t *data = NULL;
    uint8_t *inflated = NULL;
    size_t size = (size_t)e->size;
    sleapc_status st = e->method == 8 ? inflate_entry(z, e, &inflated)
                                      : sleapc__zip_entry_data(z, e, &data, &size);
    if (st)
        return sleapc__wrap(st, "read npz: %s: array \"%s\"", path, key);
    char label[1024];
    snprintf(label, sizeof label, "%s[%s]", path, key);
    st = sleapc__npy_read_buffer(inflated ? inflated : data, size, label, out);
    sleapc__free(inflated);
    return st;
}

sleapc_status sleapc__npz_read(const char *path, const char *key, sleapc_tensor *out)
{
    if (!path || !key || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "read npz: path, key and out are required");
    memset(out, 0, sizeof *out);
    uint8_t *buf = NULL;
    size_t size = 0;
    sleapc_status st = read_whole(path, &buf, &size);
    if (st)
        return st;
    sleapc_zip z;
    st = sleapc__zip_open(buf, size, &z);
    if (st)
        st = sleapc__wrap(st, "read npz: %s", path);
    else
        st = read_entry(&z, path, key, out);
    sleapc__zip_close(&z);
    sleapc__free(buf);
    return st;
}
