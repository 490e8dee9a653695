/* sleap-nn 0.3.5 data/instance_cropping.py: bbox_crop_windows, crop_windows
 * (F.grid_sample, bilinear, border padding, align_corners=False, then the
 * frame-coverage weight), letterbox_crops, points_from_crop, window_corners.
 * Each float expression keeps torch's float32 order (no contraction under
 * -std=c11), so a crop pixel lands on the same side of .5 before rounding. */
#include "layers/ops/crops_bbox.h"

#include <math.h>

#include "core/error.h"

void sleapc__bbox_crop_windows(const float *boxes, int64_t n, int64_t crop_size,
                               sleapc_bbox_aspect aspect, double padding, double min_size,
                               float *windows, float *scales, float *keep_half)
{
    const float pad2 = (float)(2.0 * padding);
    const float floor_side = (float)(min_size > 1.0 ? min_size : 1.0);
    for (int64_t k = 0; k < n; k++) {
        const float *b = boxes + 4 * k;
        float bw = b[2] - b[0], bh = b[3] - b[1];
        bw = bw > 0.0f ? bw : 0.0f;
        bh = bh > 0.0f ? bh : 0.0f;
        const float margin = pad2 * (bw > bh ? bw : bh);
        const float padded[2] = {bw + margin, bh + margin};
        float side[2] = {padded[0], padded[1]};
        if (aspect != SLEAPC_BBOX_ASPECT_STRETCH)
            side[0] = side[1] = padded[0] >= padded[1] ? padded[0] : padded[1];
        float center[2] = {(b[0] + b[2]) / 2.0f + 0.5f, (b[1] + b[3]) / 2.0f + 0.5f};
        for (int a = 0; a < 2; a++) {
            if (side[a] < floor_side)
                side[a] = floor_side;
            windows[4 * k + a] = center[a] - side[a] / 2.0f;
            windows[4 * k + 2 + a] = center[a] + side[a] / 2.0f;
            const float s = (float)crop_size / side[a];
            const float kp = padded[a] * s, ks = side[a] * s;
            scales[2 * k + a] = s;
            keep_half[2 * k + a] = (kp < ks ? kp : ks) / 2.0f;
        }
    }
}

/* _frame_coverage for one window axis: cov (crop) in [0, 1]. */
static void coverage(float lo, float hi, int64_t crop, int64_t extent, float *cov)
{
    const float step = (hi - lo) / (float)crop;
    for (int64_t i = 0; i < crop; i++) {
        const float start = lo + (float)i * step, end = start + step;
        const float e = end < (float)extent ? end : (float)extent;
        const float s = start > 0.0f ? start : 0.0f;
        float inside = e - s;
        inside = inside > 0.0f ? inside : 0.0f;
        const float r = inside / step;
        cov[i] = r < 1.0f ? r : 1.0f;
    }
}

/* The sample positions along one axis: grid_sample's unnormalised, border-
 * clipped coordinate of each crop pixel centre. */
static void sample_at(float lo, float hi, int64_t crop, int64_t extent, float *pos)
{
    const float step = (hi - lo) / (float)crop;
    const float half = (float)extent / 2.0f, max_val = (float)(extent - 1);
    for (int64_t i = 0; i < crop; i++) {
        const float xs = lo + ((float)i + 0.5f) * step;
        const float g = 2.0f * xs / (float)extent - 1.0f;
        float x = (g + 1.0f) * half - 0.5f;
        x = x > 0.0f ? x : 0.0f;
        pos[i] = x < max_val ? x : max_val;
    }
}

/* One crop of one channel plane. */
static void cut_plane(const uint8_t *img, int64_t h, int64_t w, const float *xs, const float *ys,
                      const float *cx, const float *cy, const float *keep_half, int64_t crop,
                      uint8_t *dst)
{
    for (int64_t r = 0; r < crop; r++) {
        const float y = ys[r], yn = floorf(y);
        const float n = y - yn, s = 1.0f - n;
        const int64_t iy = (int64_t)yn;
        const float ky = (float)r + 0.5f - (float)crop / 2.0f;
        for (int64_t q = 0; q < crop; q++) {
            const float x = xs[q], xw = floorf(x);
            const float wd = x - xw, e = 1.0f - wd;
            const int64_t ix = (int64_t)xw;
            const bool east = ix + 1 < w, south = iy + 1 < h;
            const float nw = (float)img[iy * w + ix];
            const float ne = east ? (float)img[iy * w + ix + 1] : 0.0f;
            const float sw = south ? (float)img[(iy + 1) * w + ix] : 0.0f;
            const float se = east && south ? (float)img[(iy + 1) * w + ix + 1] : 0.0f;
            float v = nw * (s * e) + ne * (s * wd) + sw * (n * e) + se * (n * wd);
            v = v * (cy[r] * cx[q]);
            if (keep_half) {
                const float kx = (float)q + 0.5f - (float)crop / 2.0f;
                if (!(fabsf(kx) <= keep_half[0] && fabsf(ky) <= keep_half[1]))
                    v = v * 0.0f;
            }
            v = nearbyintf(v);
            dst[r * crop + q] = (uint8_t)(v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v);
        }
    }
}

sleapc_status sleapc__bbox_crop_cut_u8(const uint8_t *images, int64_t b, int64_t c, int64_t h,
                                       int64_t w, const float *windows, const float *keep_half,
                                       const int32_t *sample_inds, int64_t n, int64_t crop,
                                       uint8_t *dst)
{
    if (n <= 0)
        return SLEAPC_OK;
    if (!images || !windows || !sample_inds || !dst || b <= 0 || c <= 0 || h <= 0 || w <= 0 ||
        crop <= 0 || crop > 2048)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "box crops: bad arguments");
    float xs[2048], ys[2048], cx[2048], cy[2048]; /* 32 KB: crop sides up to 2048 */
    for (int64_t k = 0; k < n; k++) {
        const float *win = windows + 4 * k;
        if (sample_inds[k] < 0 || sample_inds[k] >= b)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "box crops: sample index out of range");
        if (!isfinite(win[0]) || !isfinite(win[1]) || !isfinite(win[2]) || !isfinite(win[3]))
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "box crops: a window is not finite");
        sample_at(win[0], win[2], crop, w, xs);
        sample_at(win[1], win[3], crop, h, ys);
        coverage(win[0], win[2], crop, w, cx);
        coverage(win[1], win[3], crop, h, cy);
        for (int64_t ch = 0; ch < c; ch++)
            cut_plane(images + ((int64_t)sample_inds[k] * c + ch) * h * w, h, w, xs, ys, cx, cy,
                      keep_half ? keep_half + 2 * k : NULL, crop,
                      dst + (k * c + ch) * crop * crop);
    }
    return SLEAPC_OK;
}

void sleapc__bbox_crop_lift(float *xy, int64_t n, const float *window, const float *scale)
{
    for (int64_t i = 0; i < n; i++)
        for (int a = 0; a < 2; a++)
            xy[2 * i + a] = (xy[2 * i + a] + 0.5f) / scale[a] + window[a] - 0.5f;
}

void sleapc__bbox_crop_corners(const float *window, float *corners)
{
    const float x1 = window[0] - 0.5f, y1 = window[1] - 0.5f;
    const float x2 = window[2] - 0.5f, y2 = window[3] - 0.5f;
    const float c[8] = {x1, y1, x2, y1, x2, y2, x1, y2};
    for (int i = 0; i < 8; i++)
        corners[i] = c[i];
}
