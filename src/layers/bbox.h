/* BBoxLayer (sleap-nn 0.3.5 inference/layers/bbox.py): whole-frame box
 * detection with a bbox_centernet or bbox_ssd model. The layer's outputs
 * hold each frame's boxes (layer_outputs.h: sleapc__layer_outputs_frame_boxes). */
#ifndef SLEAPC_LAYERS_BBOX_H
#define SLEAPC_LAYERS_BBOX_H

#include "layers/layer.h"
#include "layers/ops/bbox_decode.h"
#include "layers/ops/preprocess.h"

/* sleap-nn's DEFAULT_NMS_IOU: off for CenterNet (its peaks are its NMS),
 * 0.45 for SSD. */
float sleapc__bbox_default_nms_iou(sleapc_model_type type);

/* The layer for a box detector. iou_threshold: the class-wise IoU-NMS
 * threshold (sleap-nn's --bbox_nms_iou); NaN: the model type's default, < 0:
 * none. The score threshold is o->peak_threshold and the boxes kept per
 * frame o->max_instances (0: sleap-nn's 100). */
sleapc_status sleapc__bbox_layer_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                        double iou_threshold, sleapc_layer **out);

/* Sample k of an SSD model's outputs (model_heads.h: cls[l], box[l] are
 * "SSDHead.cls.<l>" / "SSDHead.box.<l>", (B, a * n_logits, h, w) and
 * (B, a * 4, h, w)) as SSDHead's one tensor: (A, n_logits + 4) rows in
 * sleap-nn's order (level, row, column, anchor; the logits, then the 4
 * deltas). raw NULL: only the count. Returns A, or -1 (error set) when the
 * maps do not fit together or A is over cap rows. */
int64_t sleapc__bbox_ssd_gather(const sleapc_tensor *const *cls, const sleapc_tensor *const *box,
                                int n_levels, int n_logits, int64_t k, float *raw, int64_t cap);

/* SSDHeadConfig -> the decoder's anchor geometry (data/bboxes.py
 * make_anchors), at the precision the decoder keeps it. */
void sleapc__bbox_ssd_anchors(const sleapc_bbox_config *c, sleapc_ssd_anchors *a);

/* n boxes' model-input corners -> frame pixels (layers/bbox.py postprocess:
 * input scale, then the size matcher's scale). */
void sleapc__bbox_to_frame(sleapc_box *bx, int n, const sleapc_preprocess_plan *pl);

/* The layer for an export of a box detector (sleap-nn ExportedBBoxLayer,
 * exported_bbox.c): the graph gives the decoder's inputs, and everything else
 * is this layer's, as in the checkpoint layer. */
sleapc_status sleapc__exported_bbox_layer_create(const sleapc_model *m,
                                                 const sleapc_predictor_opts *o,
                                                 sleapc_layer **out);

#endif
