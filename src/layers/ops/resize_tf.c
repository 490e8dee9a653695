/* TensorFlow bilinear resampling (resize_bilinear_op.cc, crop_and_resize_op.cc)
 * in float32, operation by operation, so that SLEAP 1.x's preprocessing and
 * peak patches come out the same. */
#include "layers/ops/resize_tf.h"

#include <math.h>

#include "core/error.h"

#define MAX_SIDE ((int64_t)1 << 24)

static bool side_ok(int64_t v)
{
    return v >= 1 && v < MAX_SIDE;
}

static float pixel(const void *src, bool src_u8, int64_t i)
{
    return src_u8 ? (float)((const uint8_t *)src)[i] : ((const float *)src)[i];
}

sleapc_status sleapc__resize_tf_scaled_size(int64_t h, int64_t w, double scale, int64_t *out_h,
                                            int64_t *out_w)
{
    if (!out_h || !out_w || !side_ok(h) || !side_ok(w) || !(scale > 0.0) || !isfinite(scale))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "input scale: %lldx%lld by %g: bad argument",
                            (long long)h, (long long)w, scale);
    const float s = (float)scale;
    const float th = truncf((float)h * s), tw = truncf((float)w * s);
    if (!(th >= 1.0f && tw >= 1.0f && th < (float)MAX_SIDE && tw < (float)MAX_SIDE))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "input scale: %lldx%lld by %g: result %gx%g is out of range",
                            (long long)h, (long long)w, scale, (double)th, (double)tw);
    *out_h = (int64_t)th;
    *out_w = (int64_t)tw;
    return SLEAPC_OK;
}

/* compute_interpolation_weights with HalfPixelScaler. */
typedef struct lerp_at {
    int64_t lo, hi;
    float t;
} lerp_at;

static lerp_at weight(int64_t i, float scale, int64_t in_size)
{
    const float in = ((float)i + 0.5f) * scale - 0.5f;
    const float in_f = floorf(in);
    lerp_at r;
    r.lo = (int64_t)in_f > 0 ? (int64_t)in_f : 0;
    r.hi = (int64_t)ceilf(in) < in_size - 1 ? (int64_t)ceilf(in) : in_size - 1;
    r.t = in - in_f;
    return r;
}

/* compute_lerp: the order of TensorFlow's float32 operations. */
static float lerp2(float tl, float tr, float bl, float br, float xt, float yt)
{
    const float top = tl + (tr - tl) * xt;
    const float bottom = bl + (br - bl) * xt;
    return top + (bottom - top) * yt;
}

sleapc_status sleapc__resize_tf_bilinear(const void *src, bool src_u8, int64_t c, int64_t h,
                                         int64_t w, float *dst, int64_t out_h, int64_t out_w)
{
    if (!src || !dst || c < 1 || c > 4096 || !side_ok(h) || !side_ok(w) || !side_ok(out_h) ||
        !side_ok(out_w))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "resize image: (%lld,%lld,%lld) to %lldx%lld: bad argument",
                            (long long)c, (long long)h, (long long)w, (long long)out_h,
                            (long long)out_w);
    /* CalculateResizeScale without align_corners: in / float(out). */
    const float sy = (float)h / (float)out_h, sx = (float)w / (float)out_w;
    for (int64_t y = 0; y < out_h; y++) {
        const lerp_at wy = weight(y, sy, h);
        for (int64_t x = 0; x < out_w; x++) {
            const lerp_at wx = weight(x, sx, w);
            for (int64_t ch = 0; ch < c; ch++) {
                const int64_t base = ch * h * w;
                const float tl = pixel(src, src_u8, base + wy.lo * w + wx.lo);
                const float tr = pixel(src, src_u8, base + wy.lo * w + wx.hi);
                const float bl = pixel(src, src_u8, base + wy.hi * w + wx.lo);
                const float br = pixel(src, src_u8, base + wy.hi * w + wx.hi);
                dst[(ch * out_h + y) * out_w + x] = lerp2(tl, tr, bl, br, wx.t, wy.t);
            }
        }
    }
    return SLEAPC_OK;
}

/* Sample position along one axis (CropAndResizePerBox): the normalised box
 * edge times (size - 1), plus i steps. false when it falls outside the image
 * (or is not finite, which TensorFlow leaves undefined). */
static bool crop_coord(float lo_n, float hi_n, int64_t size, int64_t n_out, int64_t i, float *out)
{
    const float extent = (float)(size - 1);
    float at;
    if (n_out > 1) {
        const float step = (hi_n - lo_n) * extent / (float)(n_out - 1);
        at = lo_n * extent + (float)i * step;
    } else {
        at = 0.5f * (lo_n + hi_n) * extent;
    }
    *out = at;
    return isfinite(at) && at >= 0.0f && at <= extent;
}

sleapc_status sleapc__resize_tf_crop(const void *src, bool src_u8, int64_t c, int64_t h, int64_t w,
                                     const float box[4], int64_t crop_h, int64_t crop_w,
                                     float *dst)
{
    if (!src || !box || !dst || c < 1 || c > 4096 || !side_ok(h) || !side_ok(w) ||
        !side_ok(crop_h) || !side_ok(crop_w))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "crop image: (%lld,%lld,%lld) to %lldx%lld: bad argument",
                            (long long)c, (long long)h, (long long)w, (long long)crop_h,
                            (long long)crop_w);
    /* sleap/nn/data/instance_cropping.py:normalize_bboxes. */
    const float fy = (float)h - 1.0f, fx = (float)w - 1.0f;
    const float y1 = box[0] / fy, x1 = box[1] / fx, y2 = box[2] / fy, x2 = box[3] / fx;
    const int64_t plane = crop_h * crop_w;
    for (int64_t y = 0; y < crop_h; y++) {
        float in_y;
        const bool row_in = crop_coord(y1, y2, h, crop_h, y, &in_y);
        const int64_t top = row_in ? (int64_t)floorf(in_y) : 0;
        const int64_t bottom = row_in ? (int64_t)ceilf(in_y) : 0;
        const float yt = in_y - (float)top;
        for (int64_t x = 0; x < crop_w; x++) {
            float in_x;
            const bool col_in = crop_coord(x1, x2, w, crop_w, x, &in_x);
            for (int64_t ch = 0; ch < c; ch++) {
                float *d = dst + ch * plane + y * crop_w + x;
                if (!row_in || !col_in) {
                    *d = 0.0f;
                    continue;
                }
                const int64_t left = (int64_t)floorf(in_x), right = (int64_t)ceilf(in_x);
                const float xt = in_x - (float)left;
                const int64_t base = ch * h * w;
                *d = lerp2(pixel(src, src_u8, base + top * w + left),
                           pixel(src, src_u8, base + top * w + right),
                           pixel(src, src_u8, base + bottom * w + left),
                           pixel(src, src_u8, base + bottom * w + right), xt, yt);
            }
        }
    }
    return SLEAPC_OK;
}
