/* TensorFlow's image resampling as SLEAP 1.x runs it, for legacy models:
 * `tf.image.resize` (bilinear, half-pixel centres, no antialiasing, float32
 * output, no rounding) and `tf.image.crop_and_resize` (bilinear, boxes
 * normalised by size - 1, zero outside the image). Both mirror the float32
 * arithmetic of TensorFlow's CPU kernels (resize_bilinear_op.cc,
 * crop_and_resize_op.cc).
 *
 * Images are (C,H,W), C order, uint8 or float32 sources, float32 results.
 * Nothing here allocates or keeps a pointer past the call. */
#ifndef SLEAPC_LAYERS_OPS_RESIZE_TF_H
#define SLEAPC_LAYERS_OPS_RESIZE_TF_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* sleap/nn/data/resizing.py:resize_image sizes: int32(float32(h) *
 * float32(scale)), likewise w (truncation in float32, unlike sleap-nn's
 * double). Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (scale <= 0 or not
 * finite, a size that becomes 0 or 2^24 or more). */
sleapc_status sleapc__resize_tf_scaled_size(int64_t h, int64_t w, double scale, int64_t *out_h,
                                            int64_t *out_w);

/* tf.image.resize(method="bilinear", antialias=False) of src (c, h, w) into
 * dst (c, out_h, out_w) float32: source coordinate (i + 0.5) * (in / out) -
 * 0.5 in float32, neighbours clamped to the image, lerp = coordinate -
 * floor(coordinate). At scale 1/2 every output is the mean of a 2x2 block.
 * src_u8 selects the source type: uint8 (src is const uint8_t *) or float32.
 * src and dst must not overlap. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG
 * (NULL, a size < 1 or >= 2^24). */
sleapc_status sleapc__resize_tf_bilinear(const void *src, bool src_u8, int64_t c, int64_t h,
                                         int64_t w, float *dst, int64_t out_h, int64_t out_w);

/* tf.image.crop_and_resize(method="bilinear", extrapolation_value=0) of one
 * box of image (c, h, w): box = (y1, x1, y2, x2) in pixels, normalised as
 * SLEAP's normalize_bboxes does (float32 / (size - 1)) and sampled at crop_h x
 * crop_w points spread evenly from the top-left to the bottom-right corner.
 * A sample row or column outside [0, size - 1] reads 0. dst: (c, crop_h,
 * crop_w) float32. src_u8 as for sleapc__resize_tf_bilinear. Returns SLEAPC_OK
 * or SLEAPC_ERR_INVALID_ARG (NULL, sizes < 1). */
sleapc_status sleapc__resize_tf_crop(const void *src, bool src_u8, int64_t c, int64_t h, int64_t w,
                                     const float box[4], int64_t crop_h, int64_t crop_w,
                                     float *dst);

#endif
