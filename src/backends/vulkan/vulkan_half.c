/* IEEE binary16 on the host, for --precision fp16: the input is converted
 * before it goes up, the outputs after they come down, the weights once at
 * create. Round to nearest, ties to even, as the shaders' stores on the
 * devices tested; NaN stays NaN, beyond the range becomes infinity. */
#include <string.h>

#include "backends/vulkan/vulkan_impl.h"

static uint16_t half_of(float x)
{
    uint32_t f;
    memcpy(&f, &x, sizeof f);
    uint32_t sign = (f >> 16) & 0x8000u;
    uint32_t mag = f & 0x7fffffffu;
    if (mag > 0x7f800000u) /* NaN: keep it quiet */
        return (uint16_t)(sign | 0x7e00u);
    if (mag >= 0x477ff000u) /* rounds to beyond 65504: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (mag < 0x38800000u) { /* below 2^-14: a subnormal (or zero) */
        if (mag < 0x33000000u) /* below half the smallest subnormal */
            return (uint16_t)sign;
        uint32_t e = mag >> 23, m = (mag & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - e; /* 14..24: bits dropped from m */
        uint32_t h = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rest > half || (rest == half && (h & 1u)))
            h++;
        return (uint16_t)(sign | h);
    }
    /* Normal: rebias the exponent, round the 13 dropped bits to even. */
    uint32_t h = ((mag >> 13) - ((127u - 15u) << 10));
    uint32_t rest = mag & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

static float float_of(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, f;
    if (e == 0x1fu) {
        f = sign | 0x7f800000u | (m << 13);
    } else if (e) {
        f = sign | ((e + 112u) << 23) | (m << 13);
    } else if (m) { /* subnormal: normalise */
        int k = 0;
        while (!(m & 0x400u)) {
            m <<= 1;
            k++;
        }
        f = sign | ((uint32_t)(113 - k) << 23) | ((m & 0x3ffu) << 13);
    } else {
        f = sign;
    }
    float x;
    memcpy(&x, &f, sizeof x);
    return x;
}

void sleapc__vk_half_from_float(void *buf, int64_t n)
{
    /* Front to back: half i (bytes 2i) never overwrites a float not yet read. */
    float *src = buf;
    uint16_t *dst = buf;
    for (int64_t i = 0; i < n; i++) {
        float x = src[i];
        dst[i] = half_of(x);
    }
}

void sleapc__vk_half_to_float(void *buf, int64_t n)
{
    /* Back to front: float i (bytes 4i) never overwrites a half not yet read. */
    const uint16_t *src = buf;
    float *dst = buf;
    for (int64_t i = n - 1; i >= 0; i--) {
        uint16_t h = src[i];
        dst[i] = float_of(h);
    }
}
