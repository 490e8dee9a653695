/* Box-scaled top-down crops (sleap-nn 0.3.5 preprocessing.crop_mode: bbox,
 * data/instance_cropping.py): each box padded, squared (or not) and resized
 * to a crop_size x crop_size crop, and the crop's keypoints mapped back
 * through the same window. Float32 throughout, in torch's order of
 * operations, so the crops round to the same uint8 pixels. */
#ifndef SLEAPC_LAYERS_OPS_CROPS_BBOX_H
#define SLEAPC_LAYERS_OPS_CROPS_BBOX_H

#include <stdint.h>

#include "sleapc/sleapc.h"

/* preprocessing.crop_bbox_aspect (BBOX_CROP_ASPECTS). */
typedef enum sleapc_bbox_aspect {
    SLEAPC_BBOX_ASPECT_SQUARE = 0,
    SLEAPC_BBOX_ASPECT_LETTERBOX,
    SLEAPC_BBOX_ASPECT_STRETCH
} sleapc_bbox_aspect;

/* bbox_crop_windows for n boxes (x1, y1, x2, y2) in keypoint coordinates:
 * windows (n, 4) edge-coordinate (X1, Y1, X2, Y2), scales (n, 2) frame ->
 * crop (sx, sy), keep_half (n, 2) the letterbox's kept half-extent in crop
 * pixels. min_size <= 0: none (the floor is then 1 px). */
void sleapc__bbox_crop_windows(const float *boxes, int64_t n, int64_t crop_size,
                               sleapc_bbox_aspect aspect, double padding, double min_size,
                               float *windows, float *scales, float *keep_half);

/* crop_windows (+ letterbox_crops when keep_half is not NULL), rounded to
 * uint8 as sleap-nn rounds crops of uint8 frames: one bilinear sample per
 * crop pixel at its centre (grid_sample, border padding), weighted by how
 * much of the pixel's footprint lies inside the frame. images (b, c, h, w);
 * crop k is of frame sample_inds[k] through windows[k]; dst (n, c, crop,
 * crop). Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__bbox_crop_cut_u8(const uint8_t *images, int64_t b, int64_t c, int64_t h,
                                       int64_t w, const float *windows, const float *keep_half,
                                       const int32_t *sample_inds, int64_t n, int64_t crop,
                                       uint8_t *dst);

/* points_from_crop: n crop points (x, y) back to the frame through one
 * window and its scales, in place. */
void sleapc__bbox_crop_lift(float *xy, int64_t n, const float *window, const float *scale);

/* window_corners - 0.5: the window's TL, TR, BR, BL in keypoint coordinates
 * (the crop box a top-down layer reports), corners (4, 2) out. */
void sleapc__bbox_crop_corners(const float *window, float *corners);

#endif
