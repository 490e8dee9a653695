/* Tile grid, importance window and stitching canvas of sleap-nn's tiled
 * inference (data/tiling.py, inference/tile_merger.py). */
#include "layers/ops/tiling.h"

#include <math.h>
#include <string.h>

#include "core/error.h"

/* Sizes stay far below 2^31 so that no product here can overflow int64. */
#define MAX_SIDE ((int64_t)1 << 24)

static bool side_ok(int64_t v)
{
    return v >= 1 && v < MAX_SIDE;
}

sleapc_status sleapc__tiling_axis_origins(int64_t image_dim, int64_t tile_size, int64_t overlap,
                                          int64_t output_stride, int64_t max_stride,
                                          double min_overlap_fraction, int64_t cap,
                                          int64_t *origins, int64_t *n)
{
    if (!n || (cap > 0 && !origins) || !side_ok(image_dim) || !side_ok(tile_size) ||
        !side_ok(output_stride) || !side_ok(max_stride) || overlap < 0 || overlap >= MAX_SIDE ||
        !(min_overlap_fraction >= 0.0 && min_overlap_fraction <= 1.0))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "tile grid: bad arguments (dim %lld, tile %lld, overlap %lld, "
                            "strides %lld/%lld, fraction %g)",
                            (long long)image_dim, (long long)tile_size, (long long)overlap,
                            (long long)output_stride, (long long)max_stride, min_overlap_fraction);
    int64_t count = 0;
    if (image_dim <= tile_size) {
        if (cap > 0)
            origins[0] = 0;
        *n = 1;
        return SLEAPC_OK;
    }
    /* Python: max(overlap, round(fraction * tile_size)); round is half-even,
     * as nearbyint in the default rounding mode. */
    const int64_t floor_overlap = (int64_t)nearbyint(min_overlap_fraction * (double)tile_size);
    const int64_t eff_overlap = overlap > floor_overlap ? overlap : floor_overlap;
    int64_t step = tile_size - eff_overlap;
    const int64_t unit =
        step >= max_stride && max_stride % output_stride == 0 ? max_stride : output_stride;
    /* Python's floor division; a step below output_stride (negative ones
     * included) ends up as output_stride either way. */
    step = step < output_stride ? output_stride : step / unit * unit;

    int64_t last = -1;
    for (int64_t origin = 0; origin + tile_size < image_dim; origin += step) {
        last = origin / output_stride * output_stride;
        if (count < cap)
            origins[count] = last;
        count++;
    }
    const int64_t final_origin = (image_dim - tile_size) / output_stride * output_stride;
    if (count == 0 || last != final_origin) {
        if (count < cap)
            origins[count] = final_origin;
        count++;
    }
    *n = count;
    return SLEAPC_OK;
}

/* One axis of the window, float32 as Torch computes it. */
static void window_axis(int64_t len, sleapc_tile_blend mode, double sigma_scale, float *g)
{
    if (mode == SLEAPC_TILE_BLEND_GAUSSIAN) {
        /* torch.arange(-(len-1)/2, (len-1)/2 + 1): half-integers, exact in
         * float32; y**2 is exact too. The divisor -2*sy**2 is a Python float
         * that Torch rounds to float32 before the float32 division. */
        const double sy = sigma_scale * (double)len;
        const float div = (float)(-2.0 * (sy * sy));
        for (int64_t i = 0; i < len; i++) {
            const float y = (float)(-(double)(len - 1) / 2.0 + (double)i);
            const float q = (y * y) / div;
            g[i] = (float)exp((double)q);
        }
    } else if (mode == SLEAPC_TILE_BLEND_PYRAMID) {
        /* min(i, len + 1 - i) over i = 1..len, divided by its maximum. */
        const float peak = (float)((len + 1) / 2);
        for (int64_t i = 1; i <= len; i++) {
            const int64_t r = i < len + 1 - i ? i : len + 1 - i;
            g[i - 1] = (float)r / peak;
        }
    } else {
        for (int64_t i = 0; i < len; i++)
            g[i] = 1.0f;
    }
}

sleapc_status sleapc__tiling_window(int64_t th, int64_t tw, sleapc_tile_blend mode,
                                    double sigma_scale, float *out)
{
    if (!out || !side_ok(th) || !side_ok(tw) || th > 4096 || tw > 4096 ||
        (mode != SLEAPC_TILE_BLEND_GAUSSIAN && mode != SLEAPC_TILE_BLEND_PYRAMID &&
         mode != SLEAPC_TILE_BLEND_CONSTANT) ||
        (mode == SLEAPC_TILE_BLEND_GAUSSIAN && !(sigma_scale > 0.0 && isfinite(sigma_scale))))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "importance window: bad arguments (%lldx%lld, mode %d, sigma_scale %g)",
                            (long long)th, (long long)tw, (int)mode, sigma_scale);
    float gy[4096], gx[4096];
    window_axis(th, mode, sigma_scale, gy);
    window_axis(tw, mode, sigma_scale, gx);
    float lo = INFINITY;
    for (int64_t y = 0; y < th; y++)
        for (int64_t x = 0; x < tw; x++) {
            const float v = gy[y] * gx[x];
            out[y * tw + x] = v;
            lo = v < lo ? v : lo;
        }
    /* max(w.min().item(), 1e-3) is a Python float; clamp rounds it to
     * float32. */
    const float floor_w = (float)fmax((double)lo, 1e-3);
    for (int64_t k = 0; k < th * tw; k++)
        out[k] = out[k] < floor_w ? floor_w : out[k];
    return SLEAPC_OK;
}

sleapc_status sleapc__tiling_extract_u8(const uint8_t *frame, int64_t c, int64_t h, int64_t w,
                                        int64_t y0, int64_t x0, int64_t tile, uint8_t *dst)
{
    if (!frame || !dst || !side_ok(c) || !side_ok(h) || !side_ok(w) || !side_ok(tile) || y0 < 0 ||
        x0 < 0 || y0 >= MAX_SIDE || x0 >= MAX_SIDE)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "extract tile: bad arguments");
    const int64_t rows = y0 < h ? (h - y0 < tile ? h - y0 : tile) : 0;
    const int64_t cols = x0 < w ? (w - x0 < tile ? w - x0 : tile) : 0;
    for (int64_t k = 0; k < c; k++) {
        uint8_t *d = dst + k * tile * tile;
        const uint8_t *s = frame + (k * h + y0) * w + x0;
        for (int64_t y = 0; y < rows; y++) {
            memcpy(d + y * tile, s + y * w, (size_t)cols);
            memset(d + y * tile + cols, 0, (size_t)(tile - cols));
        }
        memset(d + rows * tile, 0, (size_t)((tile - rows) * tile));
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__tiling_accumulate(float *acc, float *cnt, int64_t n_ch, int64_t ch,
                                        int64_t cw, const float *tile, const float *window,
                                        int64_t th, int64_t tw, int64_t y0, int64_t x0)
{
    if (!acc || !cnt || !tile || !window || !side_ok(n_ch) || !side_ok(ch) || !side_ok(cw) ||
        !side_ok(th) || !side_ok(tw) || y0 < 0 || x0 < 0 || y0 > ch - th || x0 > cw - tw)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "stitch tile: a %lldx%lld tile at (%lld, %lld) does not fit a "
                            "%lldx%lld canvas",
                            (long long)th, (long long)tw, (long long)y0, (long long)x0,
                            (long long)ch, (long long)cw);
    /* Torch computes tile * w into a temporary, then adds it: two roundings,
     * no fused multiply-add (the build does not contract). */
    for (int64_t k = 0; k < n_ch; k++)
        for (int64_t y = 0; y < th; y++) {
            float *a = acc + (k * ch + y0 + y) * cw + x0;
            const float *t = tile + (k * th + y) * tw, *wr = window + y * tw;
            for (int64_t x = 0; x < tw; x++) {
                const float p = t[x] * wr[x];
                a[x] = a[x] + p;
            }
        }
    for (int64_t y = 0; y < th; y++) {
        float *cr = cnt + (y0 + y) * cw + x0;
        const float *wr = window + y * tw;
        for (int64_t x = 0; x < tw; x++)
            cr[x] = cr[x] + wr[x];
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__tiling_normalise(const float *acc, const float *cnt, int64_t n_ch, int64_t ch,
                                       int64_t cw, int64_t h, int64_t w, float *out)
{
    if (!acc || !cnt || !out || !side_ok(n_ch) || !side_ok(ch) || !side_ok(cw) || !side_ok(h) ||
        !side_ok(w) || h > ch || w > cw)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "normalise canvas: bad arguments");
    for (int64_t k = 0; k < n_ch; k++)
        for (int64_t y = 0; y < h; y++) {
            const float *a = acc + (k * ch + y) * cw, *cr = cnt + y * cw;
            float *o = out + (k * h + y) * w;
            for (int64_t x = 0; x < w; x++)
                o[x] = a[x] / cr[x];
        }
    return SLEAPC_OK;
}
