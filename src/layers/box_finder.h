/* The box-detector stage shared by BBoxLayer and the box-seeded top-down
 * layer (sleap-nn 0.3.5 inference/layers/bbox.py BBoxLayer, BBoxStageLayer):
 * preprocess, one forward, the model type's decoder on each frame, the
 * corners down the coordinate ladder and the clip to the frame. */
#ifndef SLEAPC_LAYERS_BOX_FINDER_H
#define SLEAPC_LAYERS_BOX_FINDER_H

#include "layers/layer_outputs.h"
#include "layers/ops/bbox_decode.h"
#include "layers/stage.h"
#include "sleapc/predictor.h"

typedef struct sleapc_box_finder {
    sleapc_stage stage;
    bool ssd;
    int n_logits;                  /* SSD: categories + background */
    sleapc_bbox_decode_opts dopts; /* score threshold, max detections, NMS */
    sleapc_ssd_anchors anchors;    /* SSD */
    float *raw;                    /* SSD: one frame's (A, n_logits + 4) */
    int64_t raw_rows;
} sleapc_box_finder;

/* threshold: the score threshold; iou_threshold as for the box layer (NaN:
 * the model type's default). Up to o->max_instances boxes a frame (0:
 * sleap-nn's 100). */
sleapc_status sleapc__box_finder_init(sleapc_box_finder *f, const sleapc_model *m,
                                      const sleapc_predictor_opts *o, double threshold,
                                      double iou_threshold);
void sleapc__box_finder_free(sleapc_box_finder *f);

/* b frames (b, c, h, w) through the detector: out's box arrays reset and
 * filled (frame pixels, by descending score; layer_outputs_reset_boxes), its
 * other arrays left as they are. */
sleapc_status sleapc__box_finder_run(sleapc_box_finder *f, const uint8_t *frames, int64_t b,
                                     int64_t c, int64_t h, int64_t w, sleapc_layer_outputs *out);

#endif
