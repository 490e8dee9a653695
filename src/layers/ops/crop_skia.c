/* Skia's drawImage of the frame under setScale(s) . preTranslate(-x1, -y1)
 * with kLinear sampling and anti-aliasing, over a canvas cleared to opaque
 * black, reproduced step by step in float32 (the order matters to the last
 * grey level; checked byte for byte against skia-python on random frames
 * and crops reaching off the frame):
 * - the forward matrix: s = size / (x2 - x1), translate s * -x1; Skia maps
 *   a device pixel centre back with the inverse: 1 / s and -t * (1 / s);
 * - highp bilinear (bilerp_clamp_8888): the four taps at +-0.5 around the
 *   mapped point, clamped to the frame, weighted by fract(u + 0.5) products,
 *   bytes read as b * (1/255), accumulated in tap order;
 * - the image rectangle's edges in 24.8 fixed point: a device pixel's
 *   coverage is its covered span in 1/256 steps per axis, the two multiplied
 *   and shifted back (capped at 255);
 * - the store: round-half-even of v * 255.
 * ISO C mode keeps the compiler from fusing multiply-adds here. */
#include "layers/ops/crop_skia.h"

#include <math.h>

/* Per-axis geometry of one crop: where each output index samples, and how
 * much of it the frame covers (0 .. 256). */
typedef struct axis_map {
    int32_t lo, hi;   /* the two taps, clamped to the frame */
    float w_lo, w_hi; /* their weights */
    int32_t cover;    /* 1/256 units */
} axis_map;

/* The frame's [0, n) edge in device pixels, in 24.8 fixed point. */
static int64_t fixed_8(float v)
{
    return (int64_t)floor((double)v * 256.0 + 0.5);
}

static void map_axis(float centre, int64_t size, int64_t n, axis_map *m)
{
    const float half = (float)size / 2.0f;
    const float a = (centre - half) + 0.5f; /* make_centered_bboxes' corners */
    const float b = (centre + half) - 0.5f;
    const float s = (float)size / (b - a);
    const float t = s * -a;
    const float inv_s = 1.0f / s;
    const float inv_t = -t * inv_s;
    const int64_t edge_lo = fixed_8(t);
    const int64_t edge_hi = fixed_8((float)n * s + t);
    for (int64_t i = 0; i < size; i++) {
        const float u = ((float)i + 0.5f) * inv_s + inv_t;
        const float r = u + 0.5f;
        const float f = r - floorf(r);
        float lo = floorf(u - 0.5f), hi = floorf(r);
        lo = lo < 0.0f ? 0.0f : lo > (float)(n - 1) ? (float)(n - 1) : lo;
        hi = hi < 0.0f ? 0.0f : hi > (float)(n - 1) ? (float)(n - 1) : hi;
        m[i].lo = (int32_t)lo;
        m[i].hi = (int32_t)hi;
        m[i].w_lo = 1.0f - f;
        m[i].w_hi = f;
        const int64_t p0 = i * 256 > edge_lo ? i * 256 : edge_lo;
        const int64_t p1 = (i + 1) * 256 < edge_hi ? (i + 1) * 256 : edge_hi;
        m[i].cover = p1 > p0 ? (int32_t)(p1 - p0) : 0;
    }
}

/* Round half to even, as the store's float-to-int conversion does. */
static float round_even(float v)
{
    return nearbyintf(v);
}

void sleapc__crop_skia(const uint8_t *frame, int64_t c, int64_t h, int64_t w, float cx, float cy,
                       int64_t size, float *dst)
{
    axis_map mx[SLEAPC_CROP_SKIA_MAX_SIDE], my[SLEAPC_CROP_SKIA_MAX_SIDE];
    if (size < 1 || size > SLEAPC_CROP_SKIA_MAX_SIDE)
        return;
    map_axis(cx, size, w, mx);
    map_axis(cy, size, h, my);
    const float unit = 1.0f / 255.0f;
    for (int64_t ch = 0; ch < c; ch++) {
        const uint8_t *plane = frame + ch * h * w;
        float *out = dst + ch * size * size;
        for (int64_t y = 0; y < size; y++) {
            const uint8_t *row_lo = plane + (int64_t)my[y].lo * w;
            const uint8_t *row_hi = plane + (int64_t)my[y].hi * w;
            for (int64_t x = 0; x < size; x++) {
                const int32_t cov = (my[y].cover * mx[x].cover) >> 8;
                if (cov == 0) {
                    out[y * size + x] = 0.0f;
                    continue;
                }
                float acc = 0.0f;
                acc += (float)row_lo[mx[x].lo] * unit * (my[y].w_lo * mx[x].w_lo);
                acc += (float)row_lo[mx[x].hi] * unit * (my[y].w_lo * mx[x].w_hi);
                acc += (float)row_hi[mx[x].lo] * unit * (my[y].w_hi * mx[x].w_lo);
                acc += (float)row_hi[mx[x].hi] * unit * (my[y].w_hi * mx[x].w_hi);
                acc = acc < 0.0f ? 0.0f : acc > 1.0f ? 1.0f : acc;
                if (cov < 255)
                    acc *= (float)cov * unit;
                out[y * size + x] = round_even(acc * 255.0f);
            }
        }
    }
}
