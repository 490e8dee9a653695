/* SLEAP 1.x instance cropping (make_centered_bboxes, crop_bboxes,
 * CentroidCrop's crop offsets) on top of TensorFlow's crop_and_resize. */
#include "layers/ops/crops_sleap1.h"

#include <math.h>

#include "core/error.h"
#include "layers/ops/resize_tf.h"

#define MAX_SIDE ((int64_t)1 << 24)

sleapc_status sleapc__crops_sleap1_boxes(const float *centers, int64_t n, int64_t crop_size,
                                         float *boxes)
{
    if (n < 0 || (n > 0 && (!centers || !boxes)) || crop_size < 1 || crop_size >= MAX_SIDE)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "make crop boxes: bad arguments");
    /* delta = float32([-h + 1, -w + 1, h - 1, w - 1]) * 0.5, added to (y, x, y, x). */
    const float d = (float)(crop_size - 1) * 0.5f;
    for (int64_t i = 0; i < n; i++) {
        const float x = centers[2 * i], y = centers[2 * i + 1];
        float *bx = boxes + 4 * i;
        bx[0] = y + -d;
        bx[1] = x + -d;
        bx[2] = y + d;
        bx[3] = x + d;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__crops_sleap1_size(const float *box, int64_t *out_h, int64_t *out_w)
{
    if (!box || !out_h || !out_w)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "crop size: box and outputs are required");
    const float fh = rintf((box[2] - box[0]) + 1.0f);
    const float fw = rintf((box[3] - box[1]) + 1.0f);
    if (!(fh >= 1.0f && fh < (float)MAX_SIDE && fw >= 1.0f && fw < (float)MAX_SIDE))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "crop size: first box is %g x %g: out of range",
                            (double)fh, (double)fw);
    *out_h = (int64_t)fh;
    *out_w = (int64_t)fw;
    return SLEAPC_OK;
}

size_t sleapc__crops_sleap1_scratch_size(int64_t c, int64_t crop_h, int64_t crop_w)
{
    if (c < 1 || crop_h < 1 || crop_w < 1 || c > 4096 || crop_h >= MAX_SIDE || crop_w >= MAX_SIDE)
        return 0;
    return (size_t)c * (size_t)crop_h * (size_t)crop_w * sizeof(float);
}

sleapc_status sleapc__crops_sleap1_extract(const uint8_t *images, int64_t b, int64_t c, int64_t h,
                                           int64_t w, const float *boxes,
                                           const int32_t *sample_inds, int64_t n, int64_t crop_h,
                                           int64_t crop_w, void *scratch, uint8_t *dst)
{
    if (n < 0 || b < 1 || c < 1 || h < 1 || w < 1 || crop_h < 1 || crop_w < 1 ||
        (n > 0 && (!images || !boxes || !sample_inds || !scratch || !dst)) ||
        sleapc__crops_sleap1_scratch_size(c, crop_h, crop_w) == 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "crop instances: bad arguments");
    const size_t per_crop = (size_t)(c * crop_h * crop_w);
    const size_t per_image = (size_t)(c * h * w);
    float *f = scratch;
    for (int64_t k = 0; k < n; k++) {
        if (sample_inds[k] < 0 || sample_inds[k] >= b)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "crop instances: crop %lld: sample %d "
                                "out of range", (long long)k, (int)sample_inds[k]);
        sleapc_status st = sleapc__resize_tf_crop(images + (size_t)sample_inds[k] * per_image,
                                                  true, c, h, w, boxes + 4 * k, crop_h, crop_w, f);
        if (st)
            return sleapc__wrap(st, "crop instances");
        /* tf.cast(crops, uint8) truncates; bilinear values stay in [0, 255]. */
        uint8_t *d = dst + (size_t)k * per_crop;
        for (size_t i = 0; i < per_crop; i++)
            d[i] = f[i] >= 255.0f ? 255 : (f[i] > 0.0f ? (uint8_t)f[i] : 0);
    }
    return SLEAPC_OK;
}

void sleapc__crops_sleap1_offsets(const float *centers, int64_t n, int64_t crop_size,
                                  float *offsets)
{
    /* Python crop_size / 2 is a float, exact in float32 for any crop size. */
    const float half = (float)((double)crop_size / 2.0);
    for (int64_t i = 0; i < 2 * n; i++)
        offsets[i] = centers[i] - half;
}
