/* Instance crops as SLEAP 1.x's top-down layer cuts them (sleap/nn/inference.py
 * CentroidCrop, sleap/nn/peak_finding.py crop_bboxes): a box of crop_size - 1
 * pixels around each (fractional) centroid, sampled bilinearly with
 * tf.image.crop_and_resize, then cast back to uint8 (truncation). Peaks found
 * in a crop are lifted by centroid - crop_size / 2. Nothing here allocates or
 * keeps a pointer past the call. */
#ifndef SLEAPC_LAYERS_OPS_CROPS_SLEAP1_H
#define SLEAPC_LAYERS_OPS_CROPS_SLEAP1_H

#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* make_centered_bboxes: box k = (y - d, x - d, y + d, x + d) with d =
 * float32(crop_size - 1) * 0.5, in float32. centers: (n, 2) (x, y). boxes:
 * (n, 4) out. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__crops_sleap1_boxes(const float *centers, int64_t n, int64_t crop_size,
                                         float *boxes);

/* The crop size of a batch (crop_bboxes): round-half-even((y2 - y1) + 1) by
 * round((x2 - x1) + 1) of the FIRST box, in float32. Returns SLEAPC_OK or
 * SLEAPC_ERR_INVALID_ARG (NULL, a non-finite or huge box). */
sleapc_status sleapc__crops_sleap1_size(const float *box, int64_t *out_h, int64_t *out_w);

/* Bytes of float scratch sleapc__crops_sleap1_extract needs. */
size_t sleapc__crops_sleap1_scratch_size(int64_t c, int64_t crop_h, int64_t crop_w);

/* Cut n crops (crop_h, crop_w) of images (b, c, h, w) uint8: crop k from
 * image sample_inds[k] (in [0, b)) with boxes[k]; outside the image reads 0.
 * dst: (n, c, crop_h, crop_w) uint8. scratch: the bytes above, float
 * aligned. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__crops_sleap1_extract(const uint8_t *images, int64_t b, int64_t c, int64_t h,
                                           int64_t w, const float *boxes,
                                           const int32_t *sample_inds, int64_t n, int64_t crop_h,
                                           int64_t crop_w, void *scratch, uint8_t *dst);

/* crop_offsets = centroid - crop_size / 2 (float32), the lift of crop-local
 * points. centers: (n, 2); offsets: (n, 2) out. */
void sleapc__crops_sleap1_offsets(const float *centers, int64_t n, int64_t crop_size,
                                  float *offsets);

#endif
