/* SLEAP 1.x preprocessing: sleap/nn/data/resizing.py (SizeMatcher,
 * resize_image, pad_to_stride), sleap/nn/data/normalization.py
 * (ensure_grayscale / ensure_rgb, ensure_float) and TensorFlow's
 * resize_with_pad, as the legacy predictors chain them. */
#include "layers/ops/preprocess_tf.h"

#include <math.h>
#include <string.h>

#include "core/channels_u8.h"
#include "core/error.h"
#include "layers/ops/resize_tf.h"

#define MAX_SIDE ((int64_t)1 << 24)

static bool side_ok(int64_t v)
{
    return v >= 1 && v < MAX_SIDE;
}

uint8_t sleapc__preprocess_tf_luma_u8(uint8_t r, uint8_t g, uint8_t b)
{
    /* rgb_to_grayscale: convert_image_dtype to float32 (x * (1/255)), a dot
     * product with the weights, convert_image_dtype back (x * 255.5, cast). */
    const float k = 1.0f / 255.0f;
    float y = ((float)r * k) * 0.2989f;
    y = y + ((float)g * k) * 0.5870f;
    y = y + ((float)b * k) * 0.1140f;
    const float v = y * 255.5f;
    return v >= 255.0f ? 255 : (uint8_t)v;
}

sleapc_status sleapc__preprocess_tf_size_match(int64_t h, int64_t w, int64_t max_h, int64_t max_w,
                                               sleapc_preprocess_plan *out)
{
    if (!out || !side_ok(h) || !side_ok(w) || max_h < 0 || max_w < 0 || max_h >= MAX_SIDE ||
        max_w >= MAX_SIDE)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "size matcher: frame %lldx%lld to %lldx%lld: bad size", (long long)h,
                            (long long)w, (long long)max_h, (long long)max_w);
    sleapc_preprocess_plan *p = out;
    p->match_h = p->sized_h = h;
    p->match_w = p->sized_w = w;
    p->eff_scale = 1.0;
    out->pad_top = out->pad_left = 0;
    if (max_h == 0 || max_w == 0 || (h == max_h && w == max_w))
        return SLEAPC_OK;

    /* SizeMatcher.transform_dataset: float32 ratios; the bottleneck axis
     * fills its target, the other is truncated. */
    const float hr = (float)max_h / (float)h, wr = (float)max_w / (float)w;
    float eff;
    int64_t th, tw;
    if (hr > wr) {
        eff = wr;
        th = (int64_t)((float)h * wr);
        tw = max_w;
    } else {
        eff = hr;
        th = max_h;
        tw = (int64_t)((float)w * hr);
    }
    if (th < 1 || tw < 1 || th > max_h || tw > max_w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "size matcher: frame %lldx%lld to %lldx%lld: resize target %lldx%lld "
                            "is out of range",
                            (long long)h, (long long)w, (long long)max_h, (long long)max_w,
                            (long long)th, (long long)tw);
    /* tf.image.resize_with_pad(image, th, tw): its own aspect-preserving
     * fit, centred in (th, tw). */
    const float ratio_w = (float)w / (float)tw, ratio_h = (float)h / (float)th;
    const float ratio = ratio_w > ratio_h ? ratio_w : ratio_h;
    const float rh = (float)h / ratio, rw = (float)w / ratio;
    const int64_t ch = (int64_t)floorf(rh), cw = (int64_t)floorf(rw);
    const int64_t ph = (int64_t)floorf(((float)th - rh) / 2.0f);
    const int64_t pw = (int64_t)floorf(((float)tw - rw) / 2.0f);
    out->pad_top = ph > 0 ? ph : 0;
    out->pad_left = pw > 0 ? pw : 0;
    if (ch < 1 || cw < 1 || out->pad_top + ch > max_h || out->pad_left + cw > max_w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "size matcher: frame %lldx%lld to %lldx%lld: content %lldx%lld does "
                            "not fit",
                            (long long)h, (long long)w, (long long)max_h, (long long)max_w,
                            (long long)ch, (long long)cw);
    p->match_h = ch;
    p->match_w = cw;
    p->sized_h = max_h;
    p->sized_w = max_w;
    p->eff_scale = (double)eff;
    return SLEAPC_OK;
}

/* Scratch regions, each rounded up to 16 bytes. */
typedef struct tf_layout {
    size_t match_f32; /* size-matcher resize output, float (src_c, match) */
    size_t sized_u8;  /* size-matched frame, uint8 (src_c, sized) */
    size_t color_u8;  /* colour-coerced frame, uint8 (c, sized) */
    size_t norm_f32;  /* float frame (c, sized) */
    size_t scale_f32; /* input-scale resize (c, scaled) */
    size_t total;
} tf_layout;

static size_t up16(size_t v)
{
    return (v + 15) / 16 * 16;
}

static void layout_of(const sleapc_preprocess_plan *p, tf_layout *l)
{
    const size_t sized = (size_t)(p->sized_h * p->sized_w);
    l->match_f32 = up16((size_t)(p->src_c * p->match_h * p->match_w) * sizeof(float));
    l->sized_u8 = up16((size_t)p->src_c * sized);
    l->color_u8 = up16((size_t)p->c * sized);
    l->norm_f32 = up16((size_t)p->c * sized * sizeof(float));
    l->scale_f32 = up16((size_t)(p->c * p->scaled_h * p->scaled_w) * sizeof(float));
    l->total = l->match_f32 + l->sized_u8 + l->color_u8 + l->norm_f32 + l->scale_f32;
}

sleapc_status sleapc__preprocess_tf_plan_make(const sleapc_preprocess_opts *opts, int64_t c,
                                              int64_t h, int64_t w,
                                              sleapc_preprocess_plan *out)
{
    if (!opts || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "plan preprocessing: opts and out are required");
    memset(out, 0, sizeof *out);
    if (c < 1 || c > 4 || !side_ok(h) || !side_ok(w))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "plan preprocessing: bad frame size (%lld,%lld,%lld)", (long long)c,
                            (long long)h, (long long)w);
    sleapc_preprocess_plan t;
    memset(&t, 0, sizeof t);
    sleapc_preprocess_plan *p = &t;
    p->opts = *opts;
    p->src_c = c;
    p->src_h = h;
    p->src_w = w;
    p->c = sleapc__channels_coerced(c, opts->ensure_rgb, opts->ensure_grayscale);
    if (p->c < 0)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "plan preprocessing: %lld-channel frame: cannot make it %s",
                            (long long)c, opts->ensure_rgb ? "RGB" : "grayscale");
    sleapc_status st =
        sleapc__preprocess_tf_size_match(h, w, opts->max_height, opts->max_width, &t);
    if (!st) {
        p->scaled_h = p->sized_h;
        p->scaled_w = p->sized_w;
        if (opts->scale != 1.0)
            st = sleapc__resize_tf_scaled_size(p->sized_h, p->sized_w, opts->scale, &p->scaled_h,
                                               &p->scaled_w);
    }
    if (!st)
        st = sleapc__preprocess_stride_size(p->scaled_h, p->scaled_w, opts->max_stride, &p->out_h,
                                            &p->out_w);
    if (st)
        return sleapc__wrap(st, "plan preprocessing");
    /* Every side is below 2^24 and c <= 4, so the byte counts fit size_t. */
    tf_layout l;
    layout_of(p, &l);
    p->scratch_bytes = l.total;
    *out = t;
    return SLEAPC_OK;
}

/* ensure_grayscale / ensure_rgb on uint8 (TensorFlow's formulas). */
static void coerce(const uint8_t *src, int64_t c, int64_t c_out, size_t plane, uint8_t *dst)
{
    if (c_out == c) {
        memcpy(dst, src, plane * (size_t)c);
    } else if (c_out == 3) {
        for (int64_t k = 0; k < 3; k++)
            memcpy(dst + (size_t)k * plane, src + (c == 1 ? 0 : (size_t)k * plane), plane);
    } else {
        for (size_t i = 0; i < plane; i++)
            dst[i] = sleapc__preprocess_tf_luma_u8(src[i], src[plane + i], src[2 * plane + i]);
    }
}

/* Size matcher and colour: into dst (c, sized) uint8. */
static sleapc_status pipeline_part(const sleapc_preprocess_plan *p, const uint8_t *src,
                                   uint8_t *dst, uint8_t *scratch, const tf_layout *l)
{
    const uint8_t *cur = src;
    if (p->sized_h != p->src_h || p->sized_w != p->src_w) {
        float *resized = (float *)scratch;
        uint8_t *sized = scratch + l->match_f32;
        sleapc_status st = sleapc__resize_tf_bilinear(src, true, p->src_c, p->src_h, p->src_w,
                                                      resized, p->match_h, p->match_w);
        if (st)
            return st;
        /* pad_to_bounding_box with zeros, then SizeMatcher's cast back to
         * uint8, which truncates. */
        memset(sized, 0, (size_t)(p->src_c * p->sized_h * p->sized_w));
        for (int64_t ch = 0; ch < p->src_c; ch++)
            for (int64_t y = 0; y < p->match_h; y++)
                for (int64_t x = 0; x < p->match_w; x++) {
                    float v = resized[(ch * p->match_h + y) * p->match_w + x];
                    v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
                    sized[(ch * p->sized_h + y + p->pad_top) * p->sized_w + x + p->pad_left] =
                        (uint8_t)v;
                }
        cur = sized;
    }
    coerce(cur, p->src_c, p->c, (size_t)(p->sized_h * p->sized_w), dst);
    return SLEAPC_OK;
}

sleapc_status sleapc__preprocess_tf_run_u8(const sleapc_preprocess_plan *plan,
                                           const uint8_t *src, uint8_t *dst, void *scratch)
{
    if (!plan || !src || !dst || (!scratch && plan->scratch_bytes))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "preprocess frame: plan, src, dst and scratch are required");
    tf_layout l;
    layout_of(plan, &l);
    sleapc_status st = pipeline_part(plan, src, dst, scratch, &l);
    return st ? sleapc__wrap(st, "preprocess frame") : SLEAPC_OK;
}

sleapc_status sleapc__preprocess_tf_run(const sleapc_preprocess_plan *plan, const uint8_t *src,
                                        float *dst, void *scratch)
{
    if (!plan || !src || !dst || (!scratch && plan->scratch_bytes))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "preprocess frame: plan, src, dst and scratch are required");
    const sleapc_preprocess_plan *p = plan;
    tf_layout l;
    layout_of(p, &l);
    uint8_t *base = scratch;
    uint8_t *color = base + l.match_f32 + l.sized_u8;
    float *norm = (float *)(color + l.color_u8);
    float *scaled = (float *)((uint8_t *)norm + l.norm_f32);
    sleapc_status st = pipeline_part(plan, src, color, base, &l);
    if (st)
        return sleapc__wrap(st, "preprocess frame");

    /* ensure_float: convert_image_dtype multiplies by float32(1 / 255). */
    const size_t n = (size_t)(p->c * p->sized_h * p->sized_w);
    const float k = 1.0f / 255.0f;
    for (size_t i = 0; i < n; i++)
        norm[i] = (float)color[i] * k;

    const float *cur = norm;
    if (p->scaled_h != p->sized_h || p->scaled_w != p->sized_w) {
        st = sleapc__resize_tf_bilinear(norm, false, p->c, p->sized_h, p->sized_w, scaled,
                                        p->scaled_h, p->scaled_w);
        if (st)
            return sleapc__wrap(st, "preprocess frame");
        cur = scaled;
    }
    /* pad_to_stride: zeros at the bottom and right. */
    for (int64_t ch = 0; ch < p->c; ch++)
        for (int64_t y = 0; y < p->out_h; y++) {
            float *d = dst + (ch * p->out_h + y) * p->out_w;
            if (y < p->scaled_h) {
                memcpy(d, cur + (ch * p->scaled_h + y) * p->scaled_w,
                       (size_t)p->scaled_w * sizeof(float));
                for (int64_t x = p->scaled_w; x < p->out_w; x++)
                    d[x] = 0.0f;
            } else {
                for (int64_t x = 0; x < p->out_w; x++)
                    d[x] = 0.0f;
            }
        }
    return SLEAPC_OK;
}
