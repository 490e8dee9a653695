#include "core/channels_u8.h"

#include <string.h>

#include "core/error.h"

/* c*h*w elements, checked against overflow; -1 when too large. */
static int64_t image_numel(int64_t c, int64_t h, int64_t w)
{
    int64_t n;
    if (c < 1 || h < 1 || w < 1 || __builtin_mul_overflow(c, h, &n) ||
        __builtin_mul_overflow(n, w, &n) || (uint64_t)n > SIZE_MAX / sizeof(float))
        return -1;
    return n;
}

int64_t sleapc__channels_coerced(int64_t c, bool ensure_rgb, bool ensure_grayscale)
{
    /* sleap-nn checks ensure_rgb first; only one of the two ever applies. */
    if (ensure_rgb && c != 3)
        return c == 1 || c == 4 ? 3 : -1;
    if (ensure_grayscale && c != 1)
        return c == 3 || c == 4 ? 1 : -1;
    return c >= 1 ? c : -1;
}

uint8_t sleapc__channels_luma_u8(uint8_t r, uint8_t g, uint8_t b)
{
    /* torchvision v2 `_rgb_to_grayscale_image`: r*0.2989, then + 0.587*g, then
     * + 0.114*b, in float32 with float32 coefficients, then `.to(uint8)`, which
     * truncates. The coefficients sum to 0.9999, hence v -> v-1 on gray. */
    const float pr = 0.2989f * (float)r;
    const float pg = 0.587f * (float)g;
    const float s = pr + pg;
    const float pb = 0.114f * (float)b;
    const float l = s + pb;
    return (uint8_t)l;
}

sleapc_status sleapc__channels_coerce_u8(const uint8_t *src, int64_t c, int64_t h, int64_t w,
                                         bool ensure_rgb, bool ensure_grayscale, uint8_t *dst)
{
    if (!src || !dst)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "convert channels: src and dst are required");
    const int64_t n_plane = image_numel(1, h, w);
    if (c < 1 || n_plane < 0 || image_numel(c, h, w) < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "convert channels: bad image size (%lld,%lld,%lld)", (long long)c,
                            (long long)h, (long long)w);
    const int64_t c_out = sleapc__channels_coerced(c, ensure_rgb, ensure_grayscale);
    if (c_out < 0)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "convert channels: %lld-channel image: cannot make it %s", (long long)c,
                            ensure_rgb ? "RGB" : "grayscale");
    const size_t plane = (size_t)n_plane;

    if (c_out == c) {
        memcpy(dst, src, plane * (size_t)c);
    } else if (c_out == 3) {
        /* 1 -> 3 replicates the plane (sleap-nn repeats the channel axis);
         * 4 -> 3 keeps RGB and drops alpha instead of sleap-nn's 12 channels. */
        for (int64_t k = 0; k < 3; k++)
            memcpy(dst + (size_t)k * plane, src + (c == 1 ? 0 : (size_t)k * plane), plane);
    } else {
        const uint8_t *r = src, *g = src + plane, *b = src + 2 * plane;
        for (size_t i = 0; i < plane; i++)
            dst[i] = sleapc__channels_luma_u8(r[i], g[i], b[i]);
    }
    return SLEAPC_OK;
}
