/* The convention a model's layer follows: sleap-nn's (inference/layers/,
 * inference/ops/) or, for legacy models, SLEAP 1.x's (sleap/nn/inference.py,
 * peak_finding.py, paf_grouping.py, identity.py). Each entry is one thing the
 * two do differently: preprocessing, peak refinement, the input-scale step of
 * the coordinate ladder, top-down crops, scores and grouping. The stage and
 * the layers call through it and never ask which one they run.
 * sleapc__convention_of picks it once per model: it is the only reader of the
 * model's legacy flag. */
#ifndef SLEAPC_LAYERS_CONVENTION_H
#define SLEAPC_LAYERS_CONVENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layers/layer_outputs.h"
#include "layers/ops/grouping.h"
#include "layers/ops/identity.h"
#include "core/paf.h"
#include "layers/ops/preprocess.h"
#include "layers/topdown_classes.h"
#include "model/model_impl.h"
#include "sleapc/predictor.h"
#include "sleapc/tensor.h"

typedef struct sleapc_convention {
    const char *name; /* "sleap-nn", "SLEAP 1.x" */

    /* ---- Preprocessing (stage.c) ---- */
    /* The options a model's frames are preprocessed with (predictor options
     * override the config); full = false gives only the input scale and
     * stride pad (top-down stage 2). */
    sleapc_preprocess_opts (*preprocess_opts)(const sleapc_model *m,
                                              const sleapc_predictor_opts *o, bool full);
    /* Every size of the chain for a (c, h, w) frame (preprocess.h). */
    sleapc_status (*plan_make)(const sleapc_preprocess_opts *opts, int64_t c, int64_t h, int64_t w,
                               sleapc_preprocess_plan *out);
    sleapc_dtype input_dtype; /* of the model input: uint8, or SLEAP 1.x's float32 in [0, 1] */
    /* One frame src (src_c, src_h, src_w) uint8 into dst (c, out_h, out_w) of
     * input_dtype; scratch: plan->scratch_bytes. */
    sleapc_status (*preprocess)(const sleapc_preprocess_plan *plan, const uint8_t *src, void *dst,
                                void *scratch);
    /* The frames top-down crops are cut from, size-matched as the centroid
     * stage's plan `stage` says (sleap-nn: size matcher only; SLEAP 1.x: its
     * pipeline part, size matcher and colour): *out plans (c, sized_h,
     * sized_w) uint8 frames, crop_source runs it on one frame. */
    sleapc_status (*crop_source_plan)(const sleapc_preprocess_plan *stage,
                                      sleapc_preprocess_plan *out);
    sleapc_status (*crop_source)(const sleapc_preprocess_plan *plan, const uint8_t *src,
                                 uint8_t *dst, void *scratch);

    /* ---- Peaks and coordinates (peaks.h, peaks_sleap1.h, coords.h) ---- */
    sleapc_status (*find_global)(const float *cms, int64_t s, int64_t c, int64_t h, int64_t w,
                                 double threshold, int refine_k, float *peaks, float *vals);
    /* flat_tops: sleap-nn 0.3.5's flat-topped peaks (peaks.h), the run's
     * compat choice (stage.h); SLEAP 1.x's finder ignores it. */
    sleapc_status (*find_local)(const float *cms, int64_t s, int64_t c, int64_t h, int64_t w,
                                double threshold, int refine_k, bool flat_tops,
                                int64_t capacity, float *peaks,
                                float *vals, int32_t *sample_inds, int32_t *channel_inds,
                                int64_t *n_found);
    void (*undo_input_scale)(float *xy, int64_t n, double input_scale);
    /* Scores of the global peaks of b samples x n nodes in out (keypoints,
     * peak_values): SLEAP 1.x's instance score and its score 0 for a point
     * left out; nothing for sleap-nn. */
    void (*global_scores)(sleapc_layer_outputs *out, int64_t b, int64_t n);
    /* Values of n points xy that were left out (NaN): SLEAP 1.x stores 0. */
    void (*unfound_scores)(const float *xy, float *vals, int64_t n);

    /* ---- Top-down crops (crops.h, crops_sleap1.h) ---- */
    /* Boxes of n crops around centers (n, 2) in the crop source, into bboxes
     * (room for 8 floats a crop), the batch's crop size and the lift offsets
     * (n, 2) of crop-local points. first_box_size: sleap-nn 0.3.3's size
     * rule (the first box's, truncated) where the convention has one. */
    sleapc_status (*crop_boxes)(const float *centers, int64_t n, int64_t crop_size,
                                bool first_box_size, float *bboxes, float *offsets,
                                int64_t *crop_h, int64_t *crop_w);
    size_t (*crop_scratch_size)(int64_t c, int64_t crop_h, int64_t crop_w);
    /* Cut crops k0 .. k0 + n - 1 (boxes and sample_inds of every crop) of
     * images (b, c, h, w) into dst (n, c, crop_h, crop_w). */
    sleapc_status (*crop_cut)(const uint8_t *images, int64_t b, int64_t c, int64_t h, int64_t w,
                              const float *bboxes, const int32_t *sample_inds, int64_t k0,
                              int64_t n, int64_t crop_h, int64_t crop_w, void *scratch,
                              uint8_t *dst);
    /* Box k of crop_boxes' bboxes as corners tl, tr, br, bl at bboxes + 8 k;
     * called for k descending. */
    void (*crop_corners)(float *bboxes, int64_t k);
    /* The class assignment of multi-class top-down (topdown_classes.h). */
    sleapc_status (*topdown_classes)(const sleapc_topdown_batch *tb, sleapc_identity_ws *ws,
                                     sleapc_layer_outputs *out);

    /* ---- Bottom-up (paf.h, identity.h) ---- */
    bool paf_sleap1; /* PAF line scoring: SLEAP 1.x's (sleapc_paf_score_opts.sleap1) */
    /* Peaks to identities through class maps. */
    sleapc_status (*classify_peaks)(const float *class_maps, int64_t n_samples, int64_t n_classes,
                                    int64_t map_h, int64_t map_w, int class_maps_stride,
                                    const float *peaks, const float *peak_vals,
                                    const int32_t *sample_inds, const int32_t *channel_inds,
                                    int64_t n_peaks, int64_t n_nodes, sleapc_identity_ws *ws,
                                    float *points, float *point_vals, float *class_probs);
    /* A grouped frame's instances before packing, given the max_instances
     * option (0: none): SLEAP 1.x sorts them by score and keeps the best;
     * sleap-nn leaves the cut to the packing. */
    void (*bottomup_keep)(sleapc_grouping_result *r, int64_t max_instances);
    /* Whether multi-class models honour max_instances (SLEAP 1.x's
     * multi-class predictors take none). */
    bool multiclass_max_instances;
    /* A backend's device peak finding (backend.h: device_global_peaks and
     * device_local_peaks, which are peaks.c's) is this convention's: its
     * peaks may stay on the device. */
    bool device_global_peaks;
    /* Whether a backend's windows (backend.h: forward_windows, uint8 frames
     * cut, resized as preprocess.h, zero-padded and normalised on the device)
     * are this convention's preprocessing: sleap-nn's; SLEAP 1.x resizes
     * with TensorFlow's rules into float32 (stage_windows.c). */
    bool device_windows;
    /* The top-left pixels (origins: (n, 2) x, y) of crops k0 .. k0 + n - 1
     * of crop_boxes' bboxes, when a crop is the integer window there with 0
     * outside the frame (crops.h, sleap-nn); NULL when crops are cut
     * otherwise (SLEAP 1.x: bilinear at the fractional centroid). */
    void (*crop_origins)(const float *bboxes, int64_t k0, int64_t n, int64_t crop_h,
                         int64_t crop_w, int64_t *origins);
} sleapc_convention;

/* The convention of model m: SLEAP 1.x's for a legacy model, else sleap-nn's. */
const sleapc_convention *sleapc__convention_of(const sleapc_model *m);

/* The two conventions (convention.c, convention_sleap1.c). */
extern const sleapc_convention sleapc__convention_sleap_nn;
extern const sleapc_convention sleapc__convention_sleap1;

#endif
