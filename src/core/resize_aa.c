/* Antialiased bilinear resize, matching Torch's separable AA kernel
 * (aten `_upsample_bilinear2d_aa`, as called by torchvision v2 `resize` with
 * antialias=True) on its float path.
 *
 * Every float operation below copies one of Torch's, including the float/double
 * mix in the index and weight computation and the float32 accumulation order;
 * changing any of them moves some outputs by one ulp, which after the final
 * rounding of uint8 images shows up as +-1 on a few pixels per 100k. Products
 * are written as separate statements so no compiler fuses them into an FMA
 * on its own. */
#include "core/resize_aa.h"

#include <math.h>
#include <string.h>

#include "core/error.h"

/* Per output axis: the first input tap and the tap count of each output
 * index, and a (out, max_taps) table of normalised weights. */
typedef struct axis_plan {
    int64_t in;
    int64_t out;
    int64_t max_taps;
    int64_t *bounds; /* (out, 2): first tap, tap count */
    float *weights;  /* (out, max_taps) */
} axis_plan;

static int64_t axis_max_taps(int64_t in, int64_t out)
{
    /* Torch: support = interp_size/2 * scale when downscaling, else 1;
     * max_interp_size = ceil(support) * 2 + 1. */
    const float scale = (float)in / (float)out;
    const float support = scale >= 1.0f ? scale : 1.0f;
    return (int64_t)ceilf(support) * 2 + 1;
}

/* Torch `_compute_indices_min_size_weights_aa` with the bilinear AA filter. */
static void axis_plan_fill(axis_plan *ax)
{
    const float scale = (float)ax->in / (float)ax->out;
    const float support = scale >= 1.0f ? scale : 1.0f;
    const float invscale = scale >= 1.0f ? (float)(1.0 / scale) : 1.0f;

    for (int64_t i = 0; i < ax->out; i++) {
        const float center = (float)(scale * ((double)i + 0.5));
        int64_t lo = (int64_t)((double)(center - support) + 0.5);
        int64_t hi = (int64_t)((double)(center + support) + 0.5);
        if (lo < 0)
            lo = 0;
        if (hi > ax->in)
            hi = ax->in;
        int64_t n = hi - lo;
        if (n < 0)
            n = 0;
        if (n > ax->max_taps)
            n = ax->max_taps;

        float *w = ax->weights + i * ax->max_taps;
        float total = 0.0f;
        for (int64_t j = 0; j < n; j++) {
            const float d = (float)(lo + j) - center;
            float a = (float)(((double)d + 0.5) * (double)invscale);
            a = fabsf(a);
            w[j] = a < 1.0f ? 1.0f - a : 0.0f;
            total += w[j];
        }
        if (total != 0.0f) {
            for (int64_t j = 0; j < n; j++)
                w[j] = w[j] / total;
        }
        for (int64_t j = n; j < ax->max_taps; j++)
            w[j] = 0.0f;
        ax->bounds[2 * i] = lo;
        ax->bounds[2 * i + 1] = n;
    }
}

int64_t sleapc__resize_aa_max_taps(int64_t in, int64_t out)
{
    return axis_max_taps(in, out);
}

void sleapc__resize_aa_axis(int64_t in, int64_t out, int64_t *bounds, float *weights)
{
    axis_plan ax = {in, out, axis_max_taps(in, out), bounds, weights};
    axis_plan_fill(&ax);
}

/* One output sample: the first product rounded, then the taps in groups of
 * four as rounded product + rounded sum, then the remaining (< 4) taps fused.
 * This is how the reference x86-64 Torch build evaluates the loop (vectorised
 * groups of four, FMA scalar tail); plain sequential sums differ in the last
 * bit often enough to flip rounded uint8 values. */
static float taps_dot(const float *x, const float *w, int64_t n)
{
    if (n <= 0)
        return 0.0f;
    float acc = x[0] * w[0];
    int64_t j = 1;
    const int64_t n_plain = 1 + ((n - 1) / 4) * 4;
    for (; j < n_plain; j++) {
        const float p = x[j] * w[j];
        acc = acc + p;
    }
    for (; j < n; j++)
        acc = fmaf(x[j], w[j], acc);
    return acc;
}

/* The same sequence of operations as taps_dot, for a whole row of outputs
 * whose taps are rows of src (stride row_len): acc[x] for x in [0, len). */
static void taps_rows(const float *src, int64_t row_len, int64_t first, const float *w, int64_t n,
                      float *acc, int64_t len)
{
    if (n <= 0) {
        memset(acc, 0, (size_t)len * sizeof *acc);
        return;
    }
    const float *r = src + first * row_len;
    for (int64_t x = 0; x < len; x++)
        acc[x] = r[x] * w[0];
    int64_t j = 1;
    const int64_t n_plain = 1 + ((n - 1) / 4) * 4;
    for (; j < n_plain; j++) {
        r = src + (first + j) * row_len;
        for (int64_t x = 0; x < len; x++) {
            const float p = r[x] * w[j];
            acc[x] = acc[x] + p;
        }
    }
    for (; j < n; j++) {
        r = src + (first + j) * row_len;
        for (int64_t x = 0; x < len; x++)
            acc[x] = fmaf(r[x], w[j], acc[x]);
    }
}

static uint8_t round_u8(float v)
{
    /* torchvision: round_() (half to even), then a plain cast. Bilinear weights
     * are non-negative and sum to one, so the clamp never changes a value; it
     * only keeps the cast defined. */
    const float r = nearbyintf(v);
    if (!(r > 0.0f))
        return 0;
    if (r > 255.0f)
        return 255;
    return (uint8_t)r;
}

static int checked_mul(int64_t a, int64_t b, int64_t *out)
{
    return !__builtin_mul_overflow(a, b, out) && *out >= 0;
}

/* Scratch layout, in this order: bounds of both axes (int64), weight tables
 * of both axes, the width-pass result (c, in_h, out_w), one input row and one
 * output row (all float). Counts in elements. */
typedef struct scratch_layout {
    int64_t n_bounds;
    int64_t n_weights_w;
    int64_t n_weights_h;
    int64_t n_tmp;
    int64_t n_rows;
    size_t bytes;
} scratch_layout;

static sleapc_status layout_make(int64_t c, int64_t in_h, int64_t in_w, int64_t out_h,
                                 int64_t out_w, scratch_layout *l)
{
    memset(l, 0, sizeof *l);
    if (c < 1 || in_h < 1 || in_w < 1 || out_h < 1 || out_w < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "resize image: (%lld,%lld,%lld) to (%lld,%lld): sizes must be >= 1",
                            (long long)c, (long long)in_h, (long long)in_w, (long long)out_h,
                            (long long)out_w);
    int64_t t;
    int ok = checked_mul(c, in_h, &t) && checked_mul(t, in_w, &t) &&
             (uint64_t)t <= SIZE_MAX / sizeof(float) && checked_mul(c, out_h, &t) &&
             checked_mul(t, out_w, &t) && (uint64_t)t <= SIZE_MAX / sizeof(float);
    if (ok && in_h == out_h && in_w == out_w)
        return SLEAPC_OK;

    ok = ok && checked_mul(out_w + out_h, 2, &l->n_bounds) &&
         checked_mul(out_w, axis_max_taps(in_w, out_w), &l->n_weights_w) &&
         checked_mul(out_h, axis_max_taps(in_h, out_h), &l->n_weights_h) &&
         checked_mul(c, in_h, &t) && checked_mul(t, out_w, &l->n_tmp) &&
         !__builtin_add_overflow(in_w, out_w, &l->n_rows);
    int64_t n_floats = 0;
    ok = ok && !__builtin_add_overflow(l->n_weights_w, l->n_weights_h, &n_floats) &&
         !__builtin_add_overflow(n_floats, l->n_tmp, &n_floats) &&
         !__builtin_add_overflow(n_floats, l->n_rows, &n_floats);
    int64_t bytes_b = 0, bytes_f = 0, bytes = 0;
    ok = ok && checked_mul(l->n_bounds, (int64_t)sizeof(int64_t), &bytes_b) &&
         checked_mul(n_floats, (int64_t)sizeof(float), &bytes_f) &&
         !__builtin_add_overflow(bytes_b, bytes_f, &bytes) && (uint64_t)bytes <= SIZE_MAX;
    if (!ok)
        return sleapc__fail(
            SLEAPC_ERR_INVALID_ARG, "resize image: (%lld,%lld,%lld) to (%lld,%lld): too large",
            (long long)c, (long long)in_h, (long long)in_w, (long long)out_h, (long long)out_w);
    l->bytes = (size_t)bytes;
    return SLEAPC_OK;
}

sleapc_status sleapc__resize_aa_scratch_size(int64_t c, int64_t in_h, int64_t in_w, int64_t out_h,
                                             int64_t out_w, size_t *out)
{
    if (!out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "resize image: out is required");
    *out = 0;
    scratch_layout l;
    sleapc_status st = layout_make(c, in_h, in_w, out_h, out_w, &l);
    if (st)
        return st;
    *out = l.bytes;
    return SLEAPC_OK;
}

/* The whole resize, for either element type: src_u8 or src_f32 is set, and
 * dst_u8 or dst_f32. */
static sleapc_status resize(const uint8_t *src_u8, const float *src_f32, int64_t c, int64_t in_h,
                            int64_t in_w, uint8_t *dst_u8, float *dst_f32, int64_t out_h,
                            int64_t out_w, void *scratch)
{
    if ((!src_u8 && !src_f32) || (!dst_u8 && !dst_f32))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "resize image: src and dst are required");
    scratch_layout l;
    sleapc_status st = layout_make(c, in_h, in_w, out_h, out_w, &l);
    if (st)
        return st;
    const int64_t n_plane = in_h * in_w;
    if (l.bytes == 0) {
        /* Same size: torchvision returns the image untouched. */
        if (src_u8)
            memcpy(dst_u8, src_u8, (size_t)(c * n_plane));
        else
            memcpy(dst_f32, src_f32, (size_t)(c * n_plane) * sizeof(float));
        return SLEAPC_OK;
    }
    if (!scratch)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "resize image: scratch is required");

    axis_plan ax_w = {in_w, out_w, axis_max_taps(in_w, out_w), NULL, NULL};
    axis_plan ax_h = {in_h, out_h, axis_max_taps(in_h, out_h), NULL, NULL};
    ax_w.bounds = scratch;
    ax_h.bounds = ax_w.bounds + 2 * out_w;
    ax_w.weights = (float *)(ax_h.bounds + 2 * out_h);
    ax_h.weights = ax_w.weights + l.n_weights_w;
    float *tmp = ax_h.weights + l.n_weights_h;
    float *row_in = tmp + l.n_tmp;
    float *row_out = row_in + in_w;
    axis_plan_fill(&ax_w);
    axis_plan_fill(&ax_h);

    /* Width pass into tmp (c, in_h, out_w); skipped, as in Torch, when the
     * width does not change. */
    for (int64_t ch = 0; ch < c; ch++) {
        for (int64_t y = 0; y < in_h; y++) {
            const int64_t off = ch * n_plane + y * in_w;
            const float *row;
            if (src_u8) {
                for (int64_t x = 0; x < in_w; x++)
                    row_in[x] = (float)src_u8[off + x];
                row = row_in;
            } else {
                row = src_f32 + off;
            }
            float *t = tmp + (ch * in_h + y) * out_w;
            if (in_w == out_w) {
                memcpy(t, row, (size_t)in_w * sizeof *t);
                continue;
            }
            for (int64_t ox = 0; ox < out_w; ox++) {
                const int64_t lo = ax_w.bounds[2 * ox];
                const int64_t n = ax_w.bounds[2 * ox + 1];
                t[ox] = taps_dot(row + lo, ax_w.weights + ox * ax_w.max_taps, n);
            }
        }
    }

    /* Height pass from tmp into dst. */
    for (int64_t ch = 0; ch < c; ch++) {
        const float *plane = tmp + ch * in_h * out_w;
        for (int64_t oy = 0; oy < out_h; oy++) {
            const int64_t off = (ch * out_h + oy) * out_w;
            float *acc = dst_f32 ? dst_f32 + off : row_out;
            if (in_h == out_h)
                memcpy(acc, plane + oy * out_w, (size_t)out_w * sizeof *acc);
            else
                taps_rows(plane, out_w, ax_h.bounds[2 * oy], ax_h.weights + oy * ax_h.max_taps,
                          ax_h.bounds[2 * oy + 1], acc, out_w);
            if (dst_u8) {
                for (int64_t x = 0; x < out_w; x++)
                    dst_u8[off + x] = round_u8(acc[x]);
            }
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__resize_aa_u8(const uint8_t *src, int64_t c, int64_t in_h, int64_t in_w,
                                   uint8_t *dst, int64_t out_h, int64_t out_w, void *scratch)
{
    if (!src || !dst)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "resize image: src and dst are required");
    return resize(src, NULL, c, in_h, in_w, dst, NULL, out_h, out_w, scratch);
}

sleapc_status sleapc__resize_aa_f32(const float *src, int64_t c, int64_t in_h, int64_t in_w,
                                    float *dst, int64_t out_h, int64_t out_w, void *scratch)
{
    if (!src || !dst)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "resize image: src and dst are required");
    return resize(NULL, src, c, in_h, in_w, NULL, dst, out_h, out_w, scratch);
}
