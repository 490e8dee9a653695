/* SLEAP 1.x's convention, for legacy models (sleap/nn/inference.py: the
 * predictors' data pipeline, InferenceLayer, CentroidCrop,
 * FindInstancePeaks, SingleInstanceInferenceLayer, BottomUpPredictor;
 * sleap/nn/peak_finding.py, paf_grouping.py, identity.py). */
#include <math.h>

#include "layers/convention.h"
#include "layers/ops/coords.h"
#include "layers/ops/crops_sleap1.h"
#include "layers/ops/peaks_sleap1.h"
#include "layers/ops/preprocess_tf.h"

/* SLEAP 1.x (inference.py): colour always follows the model's input channels
 * (Predictor.is_grayscale, InferenceLayer.ensure_grayscale), the size matcher
 * runs only with resize_and_pad_to_target, and the centroid stage pads to its
 * config's pad_to_stride (TopDownPredictor) where the other models pad to the
 * backbone's maximum stride. A pad that the backbone could not take falls
 * back to the maximum stride (SLEAP would fail there). */
static sleapc_preprocess_opts preprocess_opts(const sleapc_model *m, const sleapc_predictor_opts *o,
                                              bool full)
{
    const sleapc_model_config *c = &m->cfg;
    sleapc_preprocess_opts pp = {0};
    pp.scale = o->input_scale > 0 ? o->input_scale : c->scale;
    pp.max_stride = m->graph.max_stride;
    int64_t ms = m->graph.max_stride > 1 ? m->graph.max_stride : 1;
    if (c->model_type == SLEAPC_MODEL_TYPE_CENTROID && c->pad_to_stride > 1 &&
        c->pad_to_stride % ms == 0)
        pp.max_stride = c->pad_to_stride;
    pp.ensure_grayscale = m->graph.in_channels == 1;
    pp.ensure_rgb = m->graph.in_channels == 3;
    if (full) {
        bool match = c->resize_and_pad_to_target;
        pp.max_height = o->max_height > 0 ? o->max_height : (match ? c->max_height : 0);
        pp.max_width = o->max_width > 0 ? o->max_width : (match ? c->max_width : 0);
    }
    return pp;
}

static sleapc_status preprocess(const sleapc_preprocess_plan *plan, const uint8_t *src, void *dst,
                                void *scratch)
{
    return sleapc__preprocess_tf_run(plan, src, dst, scratch);
}

/* CentroidCrop crops from the frames of the predictor's pipeline (size
 * matcher and colour), which the centroid stage planned. */
static sleapc_status crop_source_plan(const sleapc_preprocess_plan *stage,
                                      sleapc_preprocess_plan *out)
{
    *out = *stage;
    return SLEAPC_OK;
}

/* SingleInstancePredictor's instance score: np.nansum(confidences) over
 * every node, those below the threshold included; the points SLEAP leaves
 * out are stored with score 0. */
static void global_scores(sleapc_layer_outputs *out, int64_t b, int64_t n)
{
    out->has_instance_scores = true;
    for (int64_t k = 0; k < b; k++) {
        float sum = 0.0f;
        for (int64_t j = 0; j < n; j++) {
            float *v = out->peak_values + k * n + j;
            sum += isnan(*v) ? 0.0f : *v;
            if (isnan(out->keypoints[(k * n + j) * 2]))
                *v = 0.0f;
        }
        out->instance_scores[k] = sum;
    }
}

static void unfound_scores(const float *xy, float *vals, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        if (isnan(xy[2 * j]))
            vals[j] = 0.0f;
}

/* Boxes of 4 floats (y1, x1, y2, x2) a crop; crop_corners widens them. */
static sleapc_status crop_boxes(const float *centers, int64_t n, int64_t crop_size,
                                bool first_box_size, float *bboxes, float *offsets,
                                int64_t *crop_h, int64_t *crop_w)
{
    (void)first_box_size; /* SLEAP 1.x sizes its crops its own way */
    sleapc_status st = sleapc__crops_sleap1_boxes(centers, n, crop_size, bboxes);
    if (!st)
        st = sleapc__crops_sleap1_size(bboxes, crop_h, crop_w);
    sleapc__crops_sleap1_offsets(centers, n, crop_size, offsets);
    return st;
}

static sleapc_status crop_cut(const uint8_t *images, int64_t b, int64_t c, int64_t h, int64_t w,
                              const float *bboxes, const int32_t *sample_inds, int64_t k0,
                              int64_t n, int64_t crop_h, int64_t crop_w, void *scratch,
                              uint8_t *dst)
{
    return sleapc__crops_sleap1_extract(images, b, c, h, w, bboxes + 4 * k0, sample_inds + k0, n,
                                        crop_h, crop_w, scratch, dst);
}

/* (y1, x1, y2, x2) -> corners tl, tr, br, bl like sleap-nn's; descending k,
 * so box k's 4 floats are read before anything writes over them. */
static void crop_corners(float *bboxes, int64_t k)
{
    const float *src = bboxes + k * 4;
    const float y1 = src[0], x1 = src[1], y2 = src[2], x2 = src[3];
    const float corners[8] = {x1, y1, x2, y1, x2, y2, x1, y2};
    for (int i = 0; i < 8; i++)
        bboxes[k * 8 + i] = corners[i];
}

/* Swap instances a and b of one frame's result. */
static void swap_instances(sleapc_grouping_result *r, int64_t a, int64_t b)
{
    const int64_t n = r->n_nodes;
    for (int64_t k = 0; k < 2 * n; k++) {
        float t = r->keypoints[a * 2 * n + k];
        r->keypoints[a * 2 * n + k] = r->keypoints[b * 2 * n + k];
        r->keypoints[b * 2 * n + k] = t;
    }
    for (int64_t k = 0; k < n; k++) {
        float t = r->peak_values[a * n + k];
        r->peak_values[a * n + k] = r->peak_values[b * n + k];
        r->peak_values[b * n + k] = t;
    }
    float t = r->scores[a];
    r->scores[a] = r->scores[b];
    r->scores[b] = t;
}

/* BottomUpPredictor._make_labeled_frames_from_generator: with max_instances,
 * sorted(instances, key=score, reverse=True), a stable sort, then the first
 * max_instances. (sleap-nn only reorders when it must cut.) */
static void bottomup_keep(sleapc_grouping_result *r, int64_t max_instances)
{
    if (max_instances <= 0)
        return;
    for (int64_t i = 1; i < r->n_instances; i++)
        for (int64_t j = i; j > 0 && r->scores[j - 1] < r->scores[j]; j--)
            swap_instances(r, j - 1, j);
    if (r->n_instances > max_instances)
        r->n_instances = max_instances;
}

/* SLEAP 1.x keeps strict maxima whatever sleap-nn release is chosen. */
static sleapc_status find_local(const float *cms, int64_t s, int64_t c, int64_t h, int64_t w,
                                double threshold, int refine_k, bool flat_tops, int64_t capacity,
                                float *peaks, float *vals, int32_t *sample_inds,
                                int32_t *channel_inds, int64_t *n_found)
{
    (void)flat_tops;
    return sleapc__peaks_sleap1_find_local(cms, s, c, h, w, threshold, refine_k, capacity, peaks,
                                           vals, sample_inds, channel_inds, n_found);
}

const sleapc_convention sleapc__convention_sleap1 = {
    .name = "SLEAP 1.x",
    .preprocess_opts = preprocess_opts,
    .plan_make = sleapc__preprocess_tf_plan_make,
    .input_dtype = SLEAPC_DTYPE_F32,
    .preprocess = preprocess,
    .crop_source_plan = crop_source_plan,
    .crop_source = sleapc__preprocess_tf_run_u8,
    .find_global = sleapc__peaks_sleap1_find_global,
    .find_local = find_local,
    .undo_input_scale = sleapc__coords_undo_input_scale_sleap1,
    .global_scores = global_scores,
    .unfound_scores = unfound_scores,
    .crop_boxes = crop_boxes,
    .crop_scratch_size = sleapc__crops_sleap1_scratch_size,
    .crop_cut = crop_cut,
    .crop_corners = crop_corners,
    .topdown_classes = sleapc__topdown_classes_sleap1,
    .paf_sleap1 = true,
    .classify_peaks = sleapc__identity_classify_peaks_sleap1,
    .bottomup_keep = bottomup_keep,
    .multiclass_max_instances = false,
    .device_global_peaks = false,
    .device_windows = false,
    .crop_origins = NULL,
};
