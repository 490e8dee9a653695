/* Centered boxes and crop extraction for top-down stage 2, mirroring sleap-nn
 * `make_centered_bboxes` (data/instance_cropping.py) and `crop_bboxes`
 * (inference/ops/crops.py), quirks included. Nothing here allocates or keeps
 * a pointer past the call. */
#ifndef SLEAPC_LAYERS_OPS_CROPS_H
#define SLEAPC_LAYERS_OPS_CROPS_H

#include <stdint.h>

#include "sleapc/sleapc.h"

/* Boxes of box_h x box_w centred on each of the n (x, y) centers, as float32
 * corners top-left, top-right, bottom-right, bottom-left with the +-0.5
 * insets, evaluated in sleap-nn's order, e.g. tl = ((x - w/2) + 0.5,
 * (y - h/2) + 0.5), tr = ((x + w/2) - 0.5, (y - h/2) + 0.5).
 * centers: (n, 2). bboxes: (n, 4, 2) out. NaN centers give NaN boxes.
 * Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (NULL with n > 0, box sizes < 1). */
sleapc_status sleapc__crops_make_bboxes(const float *centers, int64_t n, int64_t box_h,
                                        int64_t box_w, float *bboxes);

/* The size every crop of a batch actually gets: sleap-nn takes it from the
 * FIRST box only, as trunc(|bl.y - tl.y|) + 1 by trunc(|tr.x - tl.x|) + 1 with
 * float32 differences, which is box size - 1 for some fractional centers.
 * bbox: (4, 2), normally the batch's first box. out_h, out_w: the crop size.
 * Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (NULL, non-finite or huge box). */
sleapc_status sleapc__crops_size_from_bbox(const float *bbox, int64_t *out_h, int64_t *out_w);

/* Integer top-left pixel of the crop of one box for crop size (crop_h,
 * crop_w): trunc(tl + half) - half per axis, half = crop size // 2, with
 * tl + half in float32. A non-finite or far-out tl (|tl| >= 2^40) gives an
 * origin whose crop lies entirely outside any image. */
void sleapc__crops_origin(const float *bbox, int64_t crop_h, int64_t crop_w, int64_t *x0,
                          int64_t *y0);

/* Extract n crops of (crop_h, crop_w) from images (b, c, h, w): crop k is
 * images[sample_inds[k]] at rows o_y .. o_y + crop_h - 1, columns o_x .. o_x +
 * crop_w - 1 (origin from sleapc__crops_origin on bboxes[k]), zero outside the
 * image; integer gather, no interpolation.
 * bboxes: (n, 4, 2). sample_inds: (n), each in [0, b). dst: (n, c, crop_h,
 * crop_w) out. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (NULL, bad sizes,
 * a sample index out of range). */
sleapc_status sleapc__crops_extract_u8(const uint8_t *images, int64_t b, int64_t c, int64_t h,
                                       int64_t w, const float *bboxes, const int32_t *sample_inds,
                                       int64_t n, int64_t crop_h, int64_t crop_w, uint8_t *dst);

/* The same for float32 images. */
sleapc_status sleapc__crops_extract_f32(const float *images, int64_t b, int64_t c, int64_t h,
                                        int64_t w, const float *bboxes, const int32_t *sample_inds,
                                        int64_t n, int64_t crop_h, int64_t crop_w, float *dst);

#endif
