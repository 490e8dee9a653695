/* PyTorch 2.x's uint8 antialiased bilinear resize (aten's
 * `_upsample_bilinear2d_aa` on uint8 input, a port of Pillow-SIMD's
 * resampler): per axis, filter weights in double, normalised, scaled to int16
 * with the most precision bits that keep the largest weight below 2^15; per
 * pass, sum = 2^(p-1) + sum(pixel * weight) in int32, shifted right by p and
 * clamped to 0..255. The width pass runs first into uint8 rows, then the
 * height pass; an axis whose size does not change is not resampled. */
#include "core/resize_aa_u8.h"

#include <math.h>
#include <string.h>

#include "core/error.h"

typedef struct axis_int {
    int64_t in, out, max_taps;
    int64_t *bounds;  /* (out, 2): first tap, tap count */
    int16_t *weights; /* (out, max_taps) */
    int precision;    /* bits */
} axis_int;

static double axis_scale(int64_t in, int64_t out)
{
    return (double)in / (double)out;
}

static int64_t axis_max_taps(int64_t in, int64_t out)
{
    const double scale = axis_scale(in, out);
    const double support = scale >= 1.0 ? scale : 1.0;
    return (int64_t)ceil(support) * 2 + 1;
}

/* The weights of every output of the axis in double (w: (out, max_taps)),
 * then as int16 in ax->weights; w may share no memory with ax->weights. */
static void axis_fill(axis_int *ax, double *w)
{
    const double scale = axis_scale(ax->in, ax->out);
    const double support = scale >= 1.0 ? scale : 1.0;
    const double invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
    double wt_max = 0.0;
    for (int64_t i = 0; i < ax->out; i++) {
        const double center = scale * ((double)i + 0.5);
        int64_t lo = (int64_t)(center - support + 0.5);
        if (lo < 0)
            lo = 0;
        int64_t hi = (int64_t)(center + support + 0.5);
        if (hi > ax->in)
            hi = ax->in;
        int64_t n = hi - lo;
        if (n < 0)
            n = 0;
        if (n > ax->max_taps)
            n = ax->max_taps;
        double *wi = w + i * ax->max_taps;
        double total = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double a = fabs(((double)(j + lo) - center + 0.5) * invscale);
            wi[j] = a < 1.0 ? 1.0 - a : 0.0;
            total += wi[j];
        }
        if (total != 0.0)
            for (int64_t j = 0; j < n; j++) {
                wi[j] /= total;
                if (wi[j] > wt_max)
                    wt_max = wi[j];
            }
        for (int64_t j = n; j < ax->max_taps; j++)
            wi[j] = 0.0;
        ax->bounds[2 * i] = lo;
        ax->bounds[2 * i + 1] = n;
    }
    int p = 0;
    for (; p < 22; p++)
        if ((int)(0.5 + wt_max * (double)(1 << (p + 1))) >= (1 << 15))
            break;
    ax->precision = p;
    for (int64_t k = 0; k < ax->out * ax->max_taps; k++) {
        const double v = w[k] * (double)(1 << p);
        ax->weights[k] = (int16_t)(v < 0 ? (int)(v - 0.5) : (int)(v + 0.5));
    }
}

static uint8_t clamp_u8(int32_t s, int p)
{
    const int32_t v = s >> p;
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

static int checked_mul(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out) && *out >= 0;
}

/* Scratch in this order: bounds of both axes (int64), double weights of the
 * larger axis, int16 weights of both axes, the width pass (c, in_h, out_w)
 * uint8. Counts in elements. */
typedef struct layout {
    int64_t n_bounds, n_dbl, n_w16_w, n_w16_h, n_tmp;
    size_t bytes;
} layout;

static sleapc_status layout_make(int64_t c, int64_t in_h, int64_t in_w, int64_t out_h,
                                 int64_t out_w, layout *l)
{
    memset(l, 0, sizeof *l);
    if (c < 1 || in_h < 1 || in_w < 1 || out_h < 1 || out_w < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "resize image: (%lld,%lld,%lld) to (%lld,%lld): sizes must be >= 1",
                            (long long)c, (long long)in_h, (long long)in_w, (long long)out_h,
                            (long long)out_w);
    if (in_h == out_h && in_w == out_w)
        return SLEAPC_OK;
    int64_t t, a, b, bytes = 0;
    int ok = checked_mul(out_w + out_h, 2, &l->n_bounds) &&
             checked_mul(out_w, axis_max_taps(in_w, out_w), &l->n_w16_w) &&
             checked_mul(out_h, axis_max_taps(in_h, out_h), &l->n_w16_h) &&
             checked_mul(c, in_h, &t) && checked_mul(t, out_w, &l->n_tmp);
    l->n_dbl = l->n_w16_w > l->n_w16_h ? l->n_w16_w : l->n_w16_h;
    ok = ok && checked_mul(l->n_bounds, 8, &a) && checked_mul(l->n_dbl, 8, &b) &&
         !__builtin_add_overflow(a, b, &bytes) &&
         !__builtin_add_overflow(bytes, 2 * (l->n_w16_w + l->n_w16_h), &bytes) &&
         !__builtin_add_overflow(bytes, l->n_tmp, &bytes) && (uint64_t)bytes <= SIZE_MAX;
    if (!ok)
        return sleapc__fail(
            SLEAPC_ERR_INVALID_ARG, "resize image: (%lld,%lld,%lld) to (%lld,%lld): too large",
            (long long)c, (long long)in_h, (long long)in_w, (long long)out_h, (long long)out_w);
    l->bytes = (size_t)bytes;
    return SLEAPC_OK;
}

sleapc_status sleapc__resize_aa_u8_int_scratch_size(int64_t c, int64_t in_h, int64_t in_w,
                                                    int64_t out_h, int64_t out_w, size_t *out)
{
    if (!out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "resize image: out is required");
    *out = 0;
    layout l;
    sleapc_status st = layout_make(c, in_h, in_w, out_h, out_w, &l);
    if (!st)
        *out = l.bytes;
    return st;
}

sleapc_status sleapc__resize_aa_u8_int(const uint8_t *src, int64_t c, int64_t in_h, int64_t in_w,
                                       uint8_t *dst, int64_t out_h, int64_t out_w, void *scratch)
{
    if (!src || !dst)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "resize image: src and dst are required");
    layout l;
    sleapc_status st = layout_make(c, in_h, in_w, out_h, out_w, &l);
    if (st)
        return st;
    if (l.bytes == 0) {
        memcpy(dst, src, (size_t)(c * in_h * in_w));
        return SLEAPC_OK;
    }
    if (!scratch)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "resize image: scratch is required");
    axis_int aw = {in_w, out_w, axis_max_taps(in_w, out_w), NULL, NULL, 0};
    axis_int ah = {in_h, out_h, axis_max_taps(in_h, out_h), NULL, NULL, 0};
    aw.bounds = scratch;
    ah.bounds = aw.bounds + 2 * out_w;
    double *dbl = (double *)(ah.bounds + 2 * out_h);
    aw.weights = (int16_t *)(dbl + l.n_dbl);
    ah.weights = aw.weights + l.n_w16_w;
    uint8_t *tmp = (uint8_t *)(ah.weights + l.n_w16_h);

    /* Width pass into tmp (c, in_h, out_w), or a copy when the width stays. */
    if (in_w == out_w) {
        memcpy(tmp, src, (size_t)(c * in_h * in_w));
    } else {
        axis_fill(&aw, dbl);
        const int32_t half = aw.precision > 0 ? 1 << (aw.precision - 1) : 0;
        for (int64_t r = 0; r < c * in_h; r++) {
            const uint8_t *row = src + r * in_w;
            uint8_t *t = tmp + r * out_w;
            for (int64_t ox = 0; ox < out_w; ox++) {
                const int64_t lo = aw.bounds[2 * ox], n = aw.bounds[2 * ox + 1];
                const int16_t *k = aw.weights + ox * aw.max_taps;
                int32_t s = half;
                for (int64_t j = 0; j < n; j++)
                    s += (int32_t)row[lo + j] * (int32_t)k[j];
                t[ox] = clamp_u8(s, aw.precision);
            }
        }
    }
    /* Height pass from tmp into dst, or a copy when the height stays. */
    if (in_h == out_h) {
        memcpy(dst, tmp, (size_t)(c * in_h * out_w));
        return SLEAPC_OK;
    }
    axis_fill(&ah, dbl);
    const int32_t half = ah.precision > 0 ? 1 << (ah.precision - 1) : 0;
    for (int64_t ch = 0; ch < c; ch++) {
        const uint8_t *plane = tmp + ch * in_h * out_w;
        for (int64_t oy = 0; oy < out_h; oy++) {
            const int64_t lo = ah.bounds[2 * oy], n = ah.bounds[2 * oy + 1];
            const int16_t *k = ah.weights + oy * ah.max_taps;
            uint8_t *d = dst + (ch * out_h + oy) * out_w;
            for (int64_t x = 0; x < out_w; x++) {
                int32_t s = half;
                for (int64_t j = 0; j < n; j++)
                    s += (int32_t)plane[(lo + j) * out_w + x] * (int32_t)k[j];
                d[x] = clamp_u8(s, ah.precision);
            }
        }
    }
    return SLEAPC_OK;
}
