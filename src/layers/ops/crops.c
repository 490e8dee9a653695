/* Centered boxes (`make_centered_bboxes`, data/instance_cropping.py) and crop
 * extraction (`crop_bboxes`, inference/ops/crops.py) of sleap-nn. */
#include "layers/ops/crops.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "core/error.h"

/* Crop sides stay below 2^24, where float32 holds every integer. */
#define MAX_SIDE ((int64_t)1 << 24)
/* Origins of boxes too far out to touch any image. */
#define FAR_AWAY ((int64_t)1 << 50)

sleapc_status sleapc__crops_make_bboxes(const float *centers, int64_t n, int64_t box_h,
                                        int64_t box_w, float *bboxes)
{
    if (n < 0 || (n > 0 && (!centers || !bboxes)) || box_h < 1 || box_w < 1 || box_h >= MAX_SIDE ||
        box_w >= MAX_SIDE || (uint64_t)n > SIZE_MAX / (8 * sizeof(float)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "make crop boxes: bad arguments");
    /* Python box_w / 2 is a float; Torch rounds it to float32 (exact here). */
    const float half_w = (float)((double)box_w / 2.0);
    const float half_h = (float)((double)box_h / 2.0);
    for (int64_t i = 0; i < n; i++) {
        const float x = centers[2 * i];
        const float y = centers[2 * i + 1];
        const float left = x - half_w, right = x + half_w;
        const float top = y - half_h, bottom = y + half_h;
        float *b = bboxes + 8 * i;
        /* corners + [[+.5,+.5], [-.5,+.5], [-.5,-.5], [+.5,-.5]] */
        b[0] = left + 0.5f;
        b[1] = top + 0.5f;
        b[2] = right - 0.5f;
        b[3] = top + 0.5f;
        b[4] = right - 0.5f;
        b[5] = bottom - 0.5f;
        b[6] = left + 0.5f;
        b[7] = bottom - 0.5f;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__crops_size_from_bbox(const float *bbox, int64_t *out_h, int64_t *out_w)
{
    if (!bbox || !out_h || !out_w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "crop size: bbox and outputs are required");
    /* `crop_bboxes`: int(abs(bl.y - tl.y)) + 1, int(abs(tr.x - tl.x)) + 1, the
     * differences in float32. */
    const float dh = fabsf(bbox[7] - bbox[1]);
    const float dw = fabsf(bbox[2] - bbox[0]);
    if (!(dh < (float)(MAX_SIDE - 1)) || !(dw < (float)(MAX_SIDE - 1)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "crop size: first box is %g x %g: out of range",
                            (double)dh, (double)dw);
    *out_h = (int64_t)dh + 1;
    *out_w = (int64_t)dw + 1;
    return SLEAPC_OK;
}

static int64_t origin_1d(float tl, int64_t crop)
{
    const int64_t half = crop / 2;
    const float v = tl + (float)half;
    if (!(fabsf(v) < (float)((int64_t)1 << 40)))
        return v > 0.0f ? FAR_AWAY : -FAR_AWAY;
    /* Torch `.to(torch.long)` truncates toward zero. */
    return (int64_t)v - half;
}

void sleapc__crops_origin(const float *bbox, int64_t crop_h, int64_t crop_w, int64_t *x0,
                          int64_t *y0)
{
    *x0 = origin_1d(bbox[0], crop_w);
    *y0 = origin_1d(bbox[1], crop_h);
}

/* Element-size generic gather; zero bytes are 0 for uint8 and float32 alike. */
static sleapc_status extract(const unsigned char *images, size_t elem, int64_t b, int64_t c,
                             int64_t h, int64_t w, const float *bboxes, const int32_t *sample_inds,
                             int64_t n, int64_t crop_h, int64_t crop_w, unsigned char *dst)
{
    int64_t img_numel, crop_numel, total;
    bool ok = n >= 0 && b >= 1 && c >= 1 && h >= 1 && w >= 1 && crop_h >= 1 && crop_w >= 1 &&
              crop_h < MAX_SIDE && crop_w < MAX_SIDE && !__builtin_mul_overflow(c, h, &img_numel) &&
              !__builtin_mul_overflow(img_numel, w, &img_numel) &&
              !__builtin_mul_overflow(img_numel, b, &total) && (uint64_t)total <= SIZE_MAX / elem &&
              !__builtin_mul_overflow(c, crop_h, &crop_numel) &&
              !__builtin_mul_overflow(crop_numel, crop_w, &crop_numel) &&
              !__builtin_mul_overflow(crop_numel, n, &total) && (uint64_t)total <= SIZE_MAX / elem;
    if (!ok || (n > 0 && (!images || !bboxes || !sample_inds || !dst)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "extract crops: bad arguments");

    for (int64_t k = 0; k < n; k++) {
        const int32_t s = sample_inds[k];
        if (s < 0 || s >= b)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "extract crops: crop %lld: sample index %d not in [0, %lld)",
                                (long long)k, (int)s, (long long)b);
        int64_t x0, y0;
        sleapc__crops_origin(bboxes + 8 * k, crop_h, crop_w, &x0, &y0);
        /* Columns [xa, xb) of the crop fall inside the image. */
        int64_t xa = x0 < 0 ? -x0 : 0;
        int64_t xb = w - x0 < crop_w ? w - x0 : crop_w;
        if (xa > crop_w)
            xa = crop_w;
        if (xb < xa)
            xb = xa;
        const unsigned char *img = images + (size_t)(s * img_numel) * elem;
        unsigned char *out = dst + (size_t)(k * crop_numel) * elem;
        for (int64_t ch = 0; ch < c; ch++) {
            for (int64_t r = 0; r < crop_h; r++) {
                unsigned char *row = out + (size_t)((ch * crop_h + r) * crop_w) * elem;
                const int64_t y = y0 + r;
                if (y < 0 || y >= h || xa == xb) {
                    memset(row, 0, (size_t)crop_w * elem);
                    continue;
                }
                const unsigned char *src = img + (size_t)((ch * h + y) * w + x0 + xa) * elem;
                memset(row, 0, (size_t)xa * elem);
                memcpy(row + (size_t)xa * elem, src, (size_t)(xb - xa) * elem);
                memset(row + (size_t)xb * elem, 0, (size_t)(crop_w - xb) * elem);
            }
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__crops_extract_u8(const uint8_t *images, int64_t b, int64_t c, int64_t h,
                                       int64_t w, const float *bboxes, const int32_t *sample_inds,
                                       int64_t n, int64_t crop_h, int64_t crop_w, uint8_t *dst)
{
    return extract(images, 1, b, c, h, w, bboxes, sample_inds, n, crop_h, crop_w, dst);
}

sleapc_status sleapc__crops_extract_f32(const float *images, int64_t b, int64_t c, int64_t h,
                                        int64_t w, const float *bboxes, const int32_t *sample_inds,
                                        int64_t n, int64_t crop_h, int64_t crop_w, float *dst)
{
    return extract((const unsigned char *)images, sizeof(float), b, c, h, w, bboxes, sample_inds, n,
                   crop_h, crop_w, (unsigned char *)dst);
}
