/* sleap-nn's convention (inference/layers/base.py, inference/ops/) and the
 * choice between it and SLEAP 1.x's (convention_sleap1.c). */
#include "layers/convention.h"

#include "core/compat.h"
#include "layers/ops/coords.h"
#include "layers/ops/crops.h"
#include "core/peaks.h"

const sleapc_convention *sleapc__convention_of(const sleapc_model *m)
{
    return m->cfg.legacy ? &sleapc__convention_sleap1 : &sleapc__convention_sleap_nn;
}

/* sleap-nn _resolve_preprocess_config: options override the config. */
static sleapc_preprocess_opts preprocess_opts(const sleapc_model *m, const sleapc_predictor_opts *o,
                                              bool full)
{
    const sleapc_model_config *c = &m->cfg;
    sleapc_preprocess_opts pp = {0};
    pp.scale = o->input_scale > 0 ? o->input_scale : c->scale;
    pp.max_stride = m->graph.max_stride;
    pp.u8_int_resize = !sleapc__compat_is_0_3_3(o->compat);
    if (full) {
        pp.ensure_rgb = o->ensure_rgb >= 0 ? o->ensure_rgb != 0 : c->ensure_rgb;
        pp.ensure_grayscale =
            o->ensure_grayscale >= 0 ? o->ensure_grayscale != 0 : c->ensure_grayscale;
        pp.max_height = o->max_height > 0 ? o->max_height : c->max_height;
        pp.max_width = o->max_width > 0 ? o->max_width : c->max_width;
    }
    return pp;
}

static sleapc_status preprocess(const sleapc_preprocess_plan *plan, const uint8_t *src, void *dst,
                                void *scratch)
{
    return sleapc__preprocess_run_u8(plan, src, dst, scratch);
}

/* Step 3 of the top-down chain: the size matcher alone, no colour, scale or
 * pad, so out_h/w are sized_h/w. */
static sleapc_status crop_source_plan(const sleapc_preprocess_plan *stage,
                                      sleapc_preprocess_plan *out)
{
    sleapc_preprocess_opts so = {.max_height = stage->opts.max_height,
                                 .max_width = stage->opts.max_width,
                                 .scale = 1.0,
                                 .u8_int_resize = stage->opts.u8_int_resize};
    return sleapc__preprocess_plan_make(&so, stage->src_c, stage->src_h, stage->src_w, out);
}

static void no_scores(sleapc_layer_outputs *out, int64_t b, int64_t n)
{
    (void)out;
    (void)b;
    (void)n;
}

static void keep_values(const float *xy, float *vals, int64_t n)
{
    (void)xy;
    (void)vals;
    (void)n;
}

static sleapc_status crop_boxes(const float *centers, int64_t n, int64_t crop_size,
                                bool first_box_size, float *bboxes, float *offsets,
                                int64_t *crop_h, int64_t *crop_w)
{
    sleapc_status st = sleapc__crops_make_bboxes(centers, n, crop_size, crop_size, bboxes);
    /* sleap-nn 0.3.3 (ops/crops.py:crop_bboxes): every crop takes the first
     * box's size, truncated, 1 px short for ~5% of centroids; 0.3.5 (#778)
     * always cuts crop_size. */
    *crop_h = *crop_w = crop_size;
    if (!st && first_box_size)
        st = sleapc__crops_size_from_bbox(bboxes, crop_h, crop_w);
    /* The lift adds the fractional top-left, the +0.5 included. */
    for (int64_t k = 0; !st && k < n; k++) {
        offsets[2 * k] = bboxes[8 * k];
        offsets[2 * k + 1] = bboxes[8 * k + 1];
    }
    return st;
}

static size_t no_crop_scratch(int64_t c, int64_t crop_h, int64_t crop_w)
{
    (void)c;
    (void)crop_h;
    (void)crop_w;
    return 0;
}

static sleapc_status crop_cut(const uint8_t *images, int64_t b, int64_t c, int64_t h, int64_t w,
                              const float *bboxes, const int32_t *sample_inds, int64_t k0,
                              int64_t n, int64_t crop_h, int64_t crop_w, void *scratch,
                              uint8_t *dst)
{
    (void)scratch;
    return sleapc__crops_extract_u8(images, b, c, h, w, bboxes + 8 * k0, sample_inds + k0, n,
                                    crop_h, crop_w, dst);
}

/* crop_boxes already wrote corners. */
static void crop_corners(float *bboxes, int64_t k)
{
    (void)bboxes;
    (void)k;
}

static void crop_origins(const float *bboxes, int64_t k0, int64_t n, int64_t crop_h,
                         int64_t crop_w, int64_t *origins)
{
    for (int64_t k = 0; k < n; k++)
        sleapc__crops_origin(bboxes + 8 * (k0 + k), crop_h, crop_w, &origins[2 * k],
                             &origins[2 * k + 1]);
}

/* 0.3.5's local peaks, or 0.3.3's strict maxima. */
static sleapc_status find_local(const float *cms, int64_t s, int64_t c, int64_t h, int64_t w,
                                double threshold, int refine_k, bool flat_tops, int64_t capacity,
                                float *peaks, float *vals, int32_t *sample_inds,
                                int32_t *channel_inds, int64_t *n_found)
{
    return (flat_tops ? sleapc__peaks_find_local_flat : sleapc__peaks_find_local)(
        cms, s, c, h, w, threshold, refine_k, capacity, peaks, vals, sample_inds, channel_inds,
        n_found);
}

/* sleapc__grouping_pack cuts to max_instances itself. */
static void bottomup_keep(sleapc_grouping_result *r, int64_t max_instances)
{
    (void)r;
    (void)max_instances;
}

const sleapc_convention sleapc__convention_sleap_nn = {
    .name = "sleap-nn",
    .preprocess_opts = preprocess_opts,
    .plan_make = sleapc__preprocess_plan_make,
    .input_dtype = SLEAPC_DTYPE_U8,
    .preprocess = preprocess,
    .crop_source_plan = crop_source_plan,
    .crop_source = sleapc__preprocess_run_u8,
    .find_global = sleapc__peaks_find_global,
    .find_local = find_local,
    .undo_input_scale = sleapc__coords_undo_input_scale,
    .global_scores = no_scores,
    .unfound_scores = keep_values,
    .crop_boxes = crop_boxes,
    .crop_scratch_size = no_crop_scratch,
    .crop_cut = crop_cut,
    .crop_corners = crop_corners,
    .topdown_classes = sleapc__topdown_classes,
    .paf_sleap1 = false,
    .classify_peaks = sleapc__identity_classify_peaks,
    .bottomup_keep = bottomup_keep,
    .multiclass_max_instances = true,
    .device_global_peaks = true,
    .device_windows = true,
    .crop_origins = crop_origins,
};
