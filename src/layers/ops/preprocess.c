/* Input preprocessing chain of sleap-nn's `InferenceLayer._apply_full_preprocess`
 * (layers/base.py) with the helpers of data/resizing.py and
 * data/normalization.py, for one (C,H,W) uint8 frame. */
#include "layers/ops/preprocess.h"

#include <math.h>
#include <string.h>

#include "core/channels_u8.h"
#include "core/error.h"
#include "core/resize_aa.h"
#include "core/resize_aa_u8.h"

/* Sizes stay below 2^24 so every index the resize turns into a float is exact. */
#define MAX_SIDE ((int64_t)1 << 24)

static bool side_ok(int64_t v)
{
    return v >= 1 && v < MAX_SIDE;
}

/* c*h*w elements, checked against overflow; -1 when too large. */
static int64_t image_numel(int64_t c, int64_t h, int64_t w)
{
    int64_t n;
    if (c < 1 || h < 1 || w < 1 || __builtin_mul_overflow(c, h, &n) ||
        __builtin_mul_overflow(n, w, &n) || (uint64_t)n > SIZE_MAX / sizeof(float))
        return -1;
    return n;
}

sleapc_status sleapc__preprocess_size_match(int64_t h, int64_t w, int64_t max_h, int64_t max_w,
                                            int64_t *out_h, int64_t *out_w, double *eff_scale)
{
    if (!out_h || !out_w || !eff_scale)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "size matcher: outputs are required");
    if (!side_ok(h) || !side_ok(w) || max_h < 0 || max_w < 0 || max_h >= MAX_SIDE ||
        max_w >= MAX_SIDE)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "size matcher: frame %lldx%lld to %lldx%lld: bad size", (long long)h,
                            (long long)w, (long long)max_h, (long long)max_w);
    if (max_h == 0)
        max_h = h;
    if (max_w == 0)
        max_w = w;
    *out_h = h;
    *out_w = w;
    *eff_scale = 1.0;
    if (h == max_h && w == max_w)
        return SLEAPC_OK;

    /* data/resizing.py:apply_sizematcher: Python floats, ties pick hr. */
    const double hr = (double)max_h / (double)h;
    const double wr = (double)max_w / (double)w;
    const double eff = hr > wr ? wr : hr;
    /* Python round() is half-to-even, which is what nearbyint does in the
     * default rounding mode. */
    const double th = nearbyint((double)h * eff);
    const double tw = nearbyint((double)w * eff);
    if (!(th >= 1.0 && tw >= 1.0 && th <= (double)max_h && tw <= (double)max_w))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "size matcher: frame %lldx%lld to %lldx%lld: resize target %gx%g "
                            "is out of range",
                            (long long)h, (long long)w, (long long)max_h, (long long)max_w, th, tw);
    *out_h = (int64_t)th;
    *out_w = (int64_t)tw;
    *eff_scale = eff;
    return SLEAPC_OK;
}

sleapc_status sleapc__preprocess_scaled_size(int64_t h, int64_t w, double scale, int64_t *out_h,
                                             int64_t *out_w)
{
    if (!out_h || !out_w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "input scale: outputs are required");
    if (!side_ok(h) || !side_ok(w) || !(scale > 0.0) || !isfinite(scale))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "input scale: %lldx%lld by %g: bad argument",
                            (long long)h, (long long)w, scale);
    /* data/resizing.py:resize_image: int(h * scale), truncating. */
    const double th = trunc((double)h * scale);
    const double tw = trunc((double)w * scale);
    if (!(th >= 1.0 && tw >= 1.0 && th < (double)MAX_SIDE && tw < (double)MAX_SIDE))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "input scale: %lldx%lld by %g: result %gx%g is out of range",
                            (long long)h, (long long)w, scale, th, tw);
    *out_h = (int64_t)th;
    *out_w = (int64_t)tw;
    return SLEAPC_OK;
}

sleapc_status sleapc__preprocess_stride_size(int64_t h, int64_t w, int64_t stride, int64_t *out_h,
                                             int64_t *out_w)
{
    if (!out_h || !out_w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "pad to stride: outputs are required");
    if (!side_ok(h) || !side_ok(w) || stride >= MAX_SIDE)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "pad to stride: %lldx%lld, stride %lld: bad size", (long long)h,
                            (long long)w, (long long)stride);
    *out_h = h;
    *out_w = w;
    if (stride > 1) {
        *out_h = h + (stride - h % stride) % stride;
        *out_w = w + (stride - w % stride) % stride;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__preprocess_pad_u8(const uint8_t *src, int64_t c, int64_t h, int64_t w,
                                        uint8_t *dst, int64_t dst_h, int64_t dst_w)
{
    if (!src || !dst)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "pad image: src and dst are required");
    if (image_numel(c, h, w) < 0 || image_numel(c, dst_h, dst_w) < 0 || dst_h < h || dst_w < w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "pad image: (%lld,%lld,%lld) into %lldx%lld: bad size", (long long)c,
                            (long long)h, (long long)w, (long long)dst_h, (long long)dst_w);
    for (int64_t ch = 0; ch < c; ch++) {
        for (int64_t y = 0; y < dst_h; y++) {
            uint8_t *d = dst + (size_t)((ch * dst_h + y) * dst_w);
            if (y < h) {
                memcpy(d, src + (size_t)((ch * h + y) * w), (size_t)w);
                memset(d + w, 0, (size_t)(dst_w - w));
            } else {
                memset(d, 0, (size_t)dst_w);
            }
        }
    }
    return SLEAPC_OK;
}

/* Bytes the run needs for intermediates: two ping-pong images of the largest
 * intermediate size, after the scratch of the larger of the two resizes. */
typedef struct run_layout {
    size_t resize_bytes;
    size_t image_bytes;
} run_layout;

/* Scratch bytes of one resize by the plan's kernel. */
static sleapc_status resize_scratch_size(const sleapc_preprocess_opts *o, int64_t c, int64_t in_h,
                                         int64_t in_w, int64_t out_h, int64_t out_w, size_t *out)
{
    return o->u8_int_resize
               ? sleapc__resize_aa_u8_int_scratch_size(c, in_h, in_w, out_h, out_w, out)
               : sleapc__resize_aa_scratch_size(c, in_h, in_w, out_h, out_w, out);
}

static sleapc_status resize_u8(const sleapc_preprocess_opts *o, const uint8_t *src, int64_t c,
                               int64_t in_h, int64_t in_w, uint8_t *dst, int64_t out_h,
                               int64_t out_w, void *scratch)
{
    return o->u8_int_resize
               ? sleapc__resize_aa_u8_int(src, c, in_h, in_w, dst, out_h, out_w, scratch)
               : sleapc__resize_aa_u8(src, c, in_h, in_w, dst, out_h, out_w, scratch);
}

static void run_layout_of(const sleapc_preprocess_plan *p, run_layout *l)
{
    size_t a = 0, b = 0;
    /* The plan was validated, so these cannot fail. */
    (void)resize_scratch_size(&p->opts, p->c, p->src_h, p->src_w, p->match_h, p->match_w, &a);
    (void)resize_scratch_size(&p->opts, p->c, p->sized_h, p->sized_w, p->scaled_h, p->scaled_w,
                              &b);
    l->resize_bytes = a > b ? a : b;
    /* Keep the images that follow int64_t-aligned. */
    l->resize_bytes = (l->resize_bytes + 7) / 8 * 8;
    int64_t n = p->src_h * p->src_w;
    const int64_t sizes[] = {p->match_h * p->match_w, p->sized_h * p->sized_w,
                             p->scaled_h * p->scaled_w};
    for (int i = 0; i < 3; i++)
        n = sizes[i] > n ? sizes[i] : n;
    l->image_bytes = (size_t)(n * p->c);
}

sleapc_status sleapc__preprocess_plan_make(const sleapc_preprocess_opts *opts, int64_t c, int64_t h,
                                           int64_t w, sleapc_preprocess_plan *out)
{
    if (!opts || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "plan preprocessing: opts and out are required");
    memset(out, 0, sizeof *out);
    if (image_numel(c, h, w) < 0 || !side_ok(h) || !side_ok(w))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "plan preprocessing: bad frame size (%lld,%lld,%lld)", (long long)c,
                            (long long)h, (long long)w);
    sleapc_preprocess_plan p = {0};
    p.opts = *opts;
    p.src_c = c;
    p.src_h = h;
    p.src_w = w;
    p.c = sleapc__channels_coerced(c, opts->ensure_rgb, opts->ensure_grayscale);
    if (p.c < 0)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "plan preprocessing: %lld-channel frame: cannot make it %s",
                            (long long)c, opts->ensure_rgb ? "RGB" : "grayscale");

    sleapc_status st = sleapc__preprocess_size_match(h, w, opts->max_height, opts->max_width,
                                                     &p.match_h, &p.match_w, &p.eff_scale);
    if (st)
        return sleapc__wrap(st, "plan preprocessing");
    p.sized_h = opts->max_height > 0 ? opts->max_height : h;
    p.sized_w = opts->max_width > 0 ? opts->max_width : w;

    p.scaled_h = p.sized_h;
    p.scaled_w = p.sized_w;
    if (opts->scale != 1.0) {
        st = sleapc__preprocess_scaled_size(p.sized_h, p.sized_w, opts->scale, &p.scaled_h,
                                            &p.scaled_w);
        if (st)
            return sleapc__wrap(st, "plan preprocessing");
    }
    st = sleapc__preprocess_stride_size(p.scaled_h, p.scaled_w, opts->max_stride, &p.out_h,
                                        &p.out_w);
    if (st)
        return sleapc__wrap(st, "plan preprocessing");

    if (image_numel(p.c, p.match_h, p.match_w) < 0 || image_numel(p.c, p.sized_h, p.sized_w) < 0 ||
        image_numel(p.c, p.scaled_h, p.scaled_w) < 0 || image_numel(p.c, p.out_h, p.out_w) < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "plan preprocessing: images too large");
    size_t rb = 0;
    st = resize_scratch_size(opts, p.c, h, w, p.match_h, p.match_w, &rb);
    if (!st)
        st = resize_scratch_size(opts, p.c, p.sized_h, p.sized_w, p.scaled_h, p.scaled_w, &rb);
    if (st)
        return sleapc__wrap(st, "plan preprocessing");

    run_layout l;
    run_layout_of(&p, &l);
    if (l.image_bytes > (SIZE_MAX - l.resize_bytes) / 2)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "plan preprocessing: images too large");
    p.scratch_bytes = l.resize_bytes + 2 * l.image_bytes;
    *out = p;
    return SLEAPC_OK;
}

enum step_kind {
    STEP_COERCE,
    STEP_RESIZE_MATCH,
    STEP_PAD_MATCH,
    STEP_RESIZE_SCALE,
    STEP_PAD_STRIDE
};

sleapc_status sleapc__preprocess_run_u8(const sleapc_preprocess_plan *plan, const uint8_t *src,
                                        uint8_t *dst, void *scratch)
{
    if (!plan || !src || !dst)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "preprocess frame: plan, src and dst are required");
    const sleapc_preprocess_plan *p = plan;
    enum step_kind steps[5];
    int n_steps = 0;
    if (p->c != p->src_c)
        steps[n_steps++] = STEP_COERCE;
    if (p->match_h != p->src_h || p->match_w != p->src_w)
        steps[n_steps++] = STEP_RESIZE_MATCH;
    if (p->sized_h != p->match_h || p->sized_w != p->match_w)
        steps[n_steps++] = STEP_PAD_MATCH;
    if (p->scaled_h != p->sized_h || p->scaled_w != p->sized_w)
        steps[n_steps++] = STEP_RESIZE_SCALE;
    if (p->out_h != p->scaled_h || p->out_w != p->scaled_w)
        steps[n_steps++] = STEP_PAD_STRIDE;
    if (n_steps == 0) {
        memcpy(dst, src, (size_t)(p->src_c * p->src_h * p->src_w));
        return SLEAPC_OK;
    }
    if (!scratch && p->scratch_bytes > 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "preprocess frame: scratch is required");

    run_layout l;
    run_layout_of(p, &l);
    void *resize_scratch = scratch;
    uint8_t *bufs[2] = {(uint8_t *)scratch + l.resize_bytes,
                        (uint8_t *)scratch + l.resize_bytes + l.image_bytes};

    const uint8_t *cur = src;
    int64_t c = p->src_c, h = p->src_h, w = p->src_w;
    sleapc_status st = SLEAPC_OK;
    for (int i = 0; i < n_steps && !st; i++) {
        uint8_t *next = i == n_steps - 1 ? dst : bufs[i % 2];
        switch (steps[i]) {
        case STEP_COERCE:
            st = sleapc__channels_coerce_u8(cur, c, h, w, p->opts.ensure_rgb,
                                              p->opts.ensure_grayscale, next);
            c = p->c;
            break;
        case STEP_RESIZE_MATCH:
            st = resize_u8(&p->opts, cur, c, h, w, next, p->match_h, p->match_w, resize_scratch);
            h = p->match_h;
            w = p->match_w;
            break;
        case STEP_PAD_MATCH:
            st = sleapc__preprocess_pad_u8(cur, c, h, w, next, p->sized_h, p->sized_w);
            h = p->sized_h;
            w = p->sized_w;
            break;
        case STEP_RESIZE_SCALE:
            st = resize_u8(&p->opts, cur, c, h, w, next, p->scaled_h, p->scaled_w, resize_scratch);
            h = p->scaled_h;
            w = p->scaled_w;
            break;
        case STEP_PAD_STRIDE:
            st = sleapc__preprocess_pad_u8(cur, c, h, w, next, p->out_h, p->out_w);
            h = p->out_h;
            w = p->out_w;
            break;
        }
        cur = next;
    }
    return st ? sleapc__wrap(st, "preprocess frame") : SLEAPC_OK;
}
