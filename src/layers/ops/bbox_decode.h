/* Decoding of sleap-nn 0.3.5's box detectors (inference/bbox.py): the
 * CenterNet heatmap peaks with their sizes and offsets, the SSD anchors with
 * their class probabilities and deltas, the class-wise IoU-NMS both may use
 * (torchvision's batched_nms), and the clipping to the model input and to
 * the frame. One frame at a time; boxes come out sorted by descending score,
 * as sleap-nn pads them. Model-input pixels unless said otherwise. */
#ifndef SLEAPC_LAYERS_OPS_BBOX_DECODE_H
#define SLEAPC_LAYERS_OPS_BBOX_DECODE_H

#include <stdint.h>

#include "sleapc/sleapc.h"

typedef struct sleapc_box {
    float x1, y1, x2, y2;
    float score;
    int category;          /* index into the model's categories */
} sleapc_box;

/* What a decode keeps; <= 0 thresholds are taken as given (sleap-nn's
 * peak_threshold is the score threshold). iou_threshold < 0: no IoU-NMS. */
typedef struct sleapc_bbox_decode_opts {
    float score_threshold;
    int max_detections;    /* sleap-nn's max_instances, default 100 */
    float iou_threshold;
    int in_h, in_w;        /* the model input, to clip to */
} sleapc_bbox_decode_opts;

/* CenterNet: heat (C, h, w) probabilities, size and offset (2, h, w) in grid
 * cells (offset may be NULL). Writes at most opts->max_detections boxes to
 * out (room for that many) and their count to *n. */
sleapc_status sleapc__bbox_decode_centernet(const float *heat, int n_categories,
                                            const float *size, const float *offset, int h,
                                            int w, int stride,
                                            const sleapc_bbox_decode_opts *opts,
                                            sleapc_box *out, int *n);

/* SSD anchor geometry of one model (its config), for one input size. */
typedef struct sleapc_ssd_anchors {
    int n_levels;
    int strides[8];
    /* Doubles: sleap-nn shapes its anchors in Python floats and rounds only
     * the finished (w, h) to float32. */
    double sizes[8];
    int n_scales, n_ratios;
    double scales[8], ratios[8];
    float variances[4];
} sleapc_ssd_anchors;

/* Anchors per cell, and in all for an in_h x in_w input (levels of
 * ceil(in / stride) cells). */
int sleapc__ssd_anchors_per_cell(const sleapc_ssd_anchors *a);
int64_t sleapc__ssd_anchor_count(const sleapc_ssd_anchors *a, int in_h, int in_w);

/* SSD: raw (A, n_logits + 4) in sleap-nn's head order (level, row, column,
 * anchor shape; background logit first). pre_nms_top_k as sleap-nn (1000). */
sleapc_status sleapc__bbox_decode_ssd(const float *raw, int64_t n_anchors, int n_logits,
                                      const sleapc_ssd_anchors *a,
                                      const sleapc_bbox_decode_opts *opts, sleapc_box *out,
                                      int *n);

/* After the coordinate mapping back to the frame: clip to frame_w x
 * frame_h and drop boxes left with no area (clip_boxes_to_frame), keeping
 * the order. */
void sleapc__bbox_clip_to_frame(sleapc_box *boxes, int *n, int frame_h, int frame_w);

#endif
