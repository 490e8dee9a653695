/* PNG in memory and base64 (see png_mem.h). */
#include "io/html/png_mem.h"

#include <string.h>
#include <zlib.h>

#include "core/alloc.h"
#include "core/error.h"

static void be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* A chunk: length, type, data, CRC of type + data. Returns bytes written. */
static size_t chunk(uint8_t *dst, const char *type, const uint8_t *data, size_t n)
{
    be32(dst, (uint32_t)n);
    memcpy(dst + 4, type, 4);
    if (n)
        memcpy(dst + 8, data, n);
    be32(dst + 8 + n, (uint32_t)crc32(crc32(0, NULL, 0), dst + 4, (uInt)(n + 4)));
    return n + 12;
}

sleapc_status sleapc__png_encode_rgb(const uint8_t *rgb, int64_t height, int64_t width,
                                     uint8_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (height < 1 || width < 1 || height > 16384 || width > 16384)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "png: bad size %lldx%lld", (long long)height,
                            (long long)width);
    const size_t row = (size_t)width * 3 + 1, raw_n = row * (size_t)height;
    uint8_t *raw = sleapc__malloc(raw_n);
    uLongf z_n = compressBound((uLong)raw_n);
    uint8_t *z = sleapc__malloc(z_n);
    uint8_t *png = z ? sleapc__malloc(z_n + 64) : NULL;
    sleapc_status st = SLEAPC_OK;
    if (!raw || !z || !png) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "png: out of memory");
        goto done;
    }
    for (int64_t y = 0; y < height; y++) {
        raw[(size_t)y * row] = 0; /* filter: none */
        memcpy(raw + (size_t)y * row + 1, rgb + (size_t)y * (size_t)width * 3, (size_t)width * 3);
    }
    if (compress2(z, &z_n, raw, (uLong)raw_n, 6) != Z_OK) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "png: compression failed");
        goto done;
    }
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    uint8_t ihdr[13];
    be32(ihdr, (uint32_t)width);
    be32(ihdr + 4, (uint32_t)height);
    ihdr[8] = 8;  /* bit depth */
    ihdr[9] = 2;  /* colour type: RGB */
    ihdr[10] = 0; /* deflate */
    ihdr[11] = 0; /* filter method */
    ihdr[12] = 0; /* no interlace */
    size_t k = 0;
    memcpy(png, sig, 8);
    k += 8;
    k += chunk(png + k, "IHDR", ihdr, 13);
    k += chunk(png + k, "IDAT", z, z_n);
    k += chunk(png + k, "IEND", NULL, 0);
    *out = png;
    *n = k;
    png = NULL;
done:
    sleapc__free(raw);
    sleapc__free(z);
    sleapc__free(png);
    return st;
}

char *sleapc__base64(const uint8_t *data, size_t n)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *s = sleapc__malloc((n + 2) / 3 * 4 + 1);
    if (!s)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        const uint32_t v = (uint32_t)data[i] << 16 | (i + 1 < n ? (uint32_t)data[i + 1] << 8 : 0) |
                           (i + 2 < n ? data[i + 2] : 0);
        s[k++] = tab[v >> 18 & 63];
        s[k++] = tab[v >> 12 & 63];
        s[k++] = i + 1 < n ? tab[v >> 6 & 63] : '=';
        s[k++] = i + 2 < n ? tab[v & 63] : '=';
    }
    s[k] = '\0';
    return s;
}
