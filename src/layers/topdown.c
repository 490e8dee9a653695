/* TopDownLayer and TopDownMultiClassLayer (sleap-nn layers/topdown.py,
 * topdown_multiclass.py): centroids, then one crop per centroid through a
 * centered-instance model, keypoints lifted back into the frame.
 *
 * Each stage follows its own model's convention (convention.h): the
 * centroid model's gives the centroids and the size-matched frames crops are
 * cut from; the centered-instance model's gives the crops and their lift
 * (SLEAP 1.x's CentroidCrop + FindInstancePeaks in sleap/nn/inference.py:
 * bilinear crops at the fractional centroid, truncated to uint8, points +
 * centroid - crop_size / 2) and, multi-class, the class assignment
 * (topdown_classes.h).
 *
 * Stage 1 may be a box detector instead (sleap-nn 0.3.5's BBoxStageLayer,
 * box_finder.h): one slot a box, its centre as the centroid and its score as
 * the instance's; crops are then fixed-size on the box centres, or (the crop
 * model's crop_mode: bbox) each box resized to the crop (ops/crops_bbox.h),
 * cut on the host from frames size-matched to the crop model's own target. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/compat.h"
#include "core/error.h"
#include "layers/ops/coords.h"
#include "layers/topdown_impl.h"

/* BBoxStageLayer.predict: the detector's boxes, their centres as the
 * centroids and their scores as the centroid values, one slot a box; the
 * frames' eff_scale is the crop source's (the crop model's size matcher). */
static sleapc_status box_centroids(topdown_layer *t, const uint8_t *frames, int64_t b, int64_t c,
                                   int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    const int64_t I = t->boxes.dopts.max_detections;
    sleapc_status st = sleapc__layer_outputs_reset(out, b, I, t->n_nodes, t->n_classes);
    if (!st)
        st = sleapc__box_finder_run(&t->boxes, frames, b, c, h, w, out);
    if (!st)
        st = sleapc__topdown_source_plan(t);
    if (st)
        return st;
    out->has_centroids = true;
    for (int64_t s = 0; s < b; s++) {
        out->eff_scale[s] = (float)t->sized_plan.eff_scale;
        for (int64_t i = 0; i < out->n_boxes[s]; i++) {
            const sleapc_box *bx = out->boxes + s * out->box_slots + i;
            out->centroids[(s * I + i) * 2] = (bx->x1 + bx->x2) / 2.0f;
            out->centroids[(s * I + i) * 2 + 1] = (bx->y1 + bx->y2) / 2.0f;
            out->centroid_values[s * I + i] = bx->score;
        }
    }
    return SLEAPC_OK;
}

static sleapc_status topdown_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                                 int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    topdown_layer *t = l->impl;
    int64_t N = t->n_nodes;
    sleapc_status st =
        t->given ? sleapc__centroid_given_run(&t->gc, b, c, h, w, N, t->n_classes, out)
        : t->box_stage
            ? box_centroids(t, frames, b, c, h, w, out)
            : sleapc__centroid_finder_run(&t->finder, frames, b, c, h, w, N, t->n_classes, out);
    if (st)
        return st;
    int64_t I = out->n_slots;
    out->has_instance_scores = true;
    out->has_crops = true;
    out->has_classes = t->multiclass;
    out->has_class_vectors = t->multiclass;

    /* Valid centroids, row-major over (frame, slot), mapped into the sized
     * image (x eff). */
    st = sleapc__topdown_grow_per_crop(t, b * I);
    if (st)
        return st;
    int64_t n = 0;
    for (int64_t s = 0; s < b; s++) {
        for (int64_t i = 0; i < I; i++) {
            const float *cxy = out->centroids + (s * I + i) * 2;
            if (isnan(cxy[0]) || isnan(cxy[1]))
                continue;
            t->cent_xy[2 * n] = t->centers[2 * n] = cxy[0];
            t->cent_xy[2 * n + 1] = t->centers[2 * n + 1] = cxy[1];
            t->cent_val[n] = out->centroid_values[s * I + i];
            sleapc__coords_apply_eff_scale(t->centers + 2 * n, 1, out->eff_scale[s]);
            if (t->box_stage) {
                const sleapc_box *bx = out->boxes + s * out->box_slots + i;
                const float xyxy[4] = {bx->x1, bx->y1, bx->x2, bx->y2};
                memcpy(t->box_xyxy + 4 * n, xyxy, sizeof xyxy);
                sleapc__coords_apply_eff_scale(t->box_xyxy + 4 * n, 2, out->eff_scale[s]);
            }
            t->crop_sample[n] = (int32_t)s;
            t->crop_frame[n] = s;
            t->crop_slot[n] = i;
            n++;
        }
    }
    for (int64_t k = 0; k < b * I; k++)
        out->instance_scores[k] = out->centroid_values[k];
    if (n == 0)
        return SLEAPC_OK; /* §7.4 step 9: every slot stays NaN */

    crop_source cs = {.frames = frames, .b = b, .c = c, .h = h, .w = w};
    st = sleapc__topdown_run_crops(t, &cs, n, out->eff_scale);
    if (st)
        return st;
    sleapc_topdown_batch tb = {.n_crops = n,
                               .n_frames = b,
                               .n_slots = I,
                               .n_nodes = N,
                               .n_classes = t->n_classes,
                               .eff_scale = (float)sleapc__topdown_src_stage_plan(t)->eff_scale,
                               .peaks = t->peaks,
                               .lifted = t->lifted,
                               .vals = t->vals,
                               .bboxes = t->bboxes,
                               .cent_xy = t->cent_xy,
                               .cent_val = t->cent_val,
                               .vecs = t->vecs,
                               .crop_frame = t->crop_frame,
                               .crop_slot = t->crop_slot,
                               .crop_class = t->crop_class,
                               .crop_prob = t->crop_prob};
    if (!t->multiclass) {
        sleapc__topdown_place(&tb, out);
        return SLEAPC_OK;
    }
    size_t need = (size_t)(b * I * N) * sizeof(int64_t);
    st = sleapc__topdown_grow_bytes((void **)&t->class_inds, &t->class_inds_cap, need);
    tb.class_inds = t->class_inds;
    return st ? st : t->ci.convention->topdown_classes(&tb, &t->ws, out);
}

static void topdown_destroy(sleapc_layer *l)
{
    topdown_layer *t = l->impl;
    sleapc__centroid_finder_free(&t->finder);
    sleapc__centroid_given_free(&t->gc);
    if (t->box_stage)
        sleapc__box_finder_free(&t->boxes);
    sleapc__stage_free(&t->ci);
    void *bufs[] = {t->sized,     t->scratch,    t->crops,      t->crop_scratch, t->centers,
                    t->bboxes,    t->peaks,      t->vals,       t->lifted,       t->offsets,
                    t->cent_xy,   t->cent_val,   t->crop_prob,  t->crop_sample,  t->crop_frame,
                    t->crop_slot, t->crop_class, t->class_inds, t->vecs,         t->crop_origin,
                    t->box_xyxy,  t->windows,    t->wscales,    t->keep_half};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        sleapc__aligned_free(bufs[k]);
    sleapc__identity_ws_free(&t->ws);
    sleapc__free(t);
}

/* Blank frames hold no centroid, so their run never reaches stage 2: warm it
 * here on crops at the frame centre, for every crop count a network call can
 * have (max_crops down to 1), with the per-crop buffers grown to a call. */
static sleapc_status topdown_warmup(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                                    int64_t h, int64_t w, int64_t instances)
{
    topdown_layer *t = l->impl;
    crop_source cs = {.frames = frames, .b = b, .c = c, .h = h, .w = w};
    sleapc_status st = t->given ? sleapc__centroid_given_plan(&t->gc, c, h, w) : SLEAPC_OK;
    if (!st)
        st = sleapc__topdown_source_plan(t);
    if (!st)
        st = sleapc__topdown_grow_per_crop(t, b * instances > t->max_crops ? b * instances
                                                                           : t->max_crops);
    for (int64_t k = 0; !st && k < t->max_crops; k++) {
        const float cx = (float)t->sized_plan.sized_w / 2.0f;
        const float cy = (float)t->sized_plan.sized_h / 2.0f, r = (float)t->crop_size / 2.0f;
        const float box[4] = {cx - r, cy - r, cx + r, cy + r};
        t->centers[2 * k] = cx;
        t->centers[2 * k + 1] = cy;
        memcpy(t->box_xyxy + 4 * k, box, sizeof box);
        t->crop_sample[k] = 0;
        t->crop_frame[k] = 0;
    }
    if (!st)
        st = sleapc__topdown_crops_on_device(t, &cs);
    for (int64_t m = t->max_crops; !st && m >= 1; m--) {
        int64_t ch = 0, cw = 0;
        st = sleapc__topdown_plan_crops(t, m, &ch, &cw);
        if (!st)
            st = sleapc__topdown_stage2_chunk(t, &cs, 0, m, ch, cw);
    }
    return st;
}

static int topdown_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const topdown_layer *t = l->impl;
    if (t->given) {
        out[0] = sleapc__stage_info(&t->ci);
        return 1;
    }
    out[0] = sleapc__stage_info(t->box_stage ? &t->boxes.stage : &t->finder.stage);
    out[1] = sleapc__stage_info(&t->ci);
    return 2;
}

static sleapc_status topdown_given_instances(sleapc_layer *l, const float *points, int64_t b,
                                             int64_t slots, int64_t n_nodes)
{
    topdown_layer *t = l->impl;
    if (!t->given)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "top-down: the centroid model finds the "
                                                    "centroids; instances cannot be given");
    return sleapc__centroid_given_set(&t->gc, points, b, slots, n_nodes);
}

static const struct sleapc_layer_ops topdown_ops = {.name = "TopDownLayer",
                                                    .run = topdown_run,
                                                    .destroy = topdown_destroy,
                                                    .warmup = topdown_warmup,
                                                    .stages = topdown_stages,
                                                    .given_instances = topdown_given_instances};
static const struct sleapc_layer_ops topdown_multiclass_ops = {.name = "TopDownMultiClassLayer",
                                                               .run = topdown_run,
                                                               .destroy = topdown_destroy,
                                                               .warmup = topdown_warmup,
                                                               .stages = topdown_stages};

sleapc_status sleapc__topdown_layer_create(const sleapc_model *centroid, const sleapc_model *ci,
                                           const sleapc_predictor_opts *o, sleapc_layer **out)
{
    topdown_layer *t = sleapc__calloc(1, sizeof *t);
    if (!t)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    t->multiclass = ci->cfg.model_type == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN;
    t->base.ops = t->multiclass ? &topdown_multiclass_ops : &topdown_ops;
    t->base.impl = t;
    t->n_nodes = ci->cfg.n_part_names;
    t->n_classes = t->multiclass ? ci->cfg.n_classes : 0;
    t->threshold = o->peak_threshold;
    t->refine_k = sleapc__layer_refine_k(o);
    t->crop_size = o->crop_size > 0 ? o->crop_size : ci->cfg.crop_size;
    t->first_box_size = sleapc__compat_is_0_3_3(o->compat);
    t->max_crops = o->batch_size > 0 ? o->batch_size : 4;
    sleapc_status st = SLEAPC_OK;
    if (t->crop_size <= 0)
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "%s: the config has no crop_size; pass --crop_size", ci->dir);
    double cthr = o->centroid_peak_threshold == o->centroid_peak_threshold
                      ? o->centroid_peak_threshold
                      : o->peak_threshold;
    /* Under bf16 the centroid stage stays float32: each centroid places its
     * crop on whole pixels (crops.h: trunc(x + 0.5)), so bf16's centroid
     * shifts of ~0.01 px move a crop by one pixel for ~1-2% of instances,
     * and the centered-instance network's keypoints with it (measured on
     * centered_pair_small: 98.0% within 0.5 px with a bf16 centroid stage;
     * bench/README.md). */
    sleapc_predictor_opts co = *o;
    if (centroid &&
        (co.precision == SLEAPC_PRECISION_BF16 || co.precision == SLEAPC_PRECISION_BF16_EMULATED ||
         co.precision == SLEAPC_PRECISION_FP16)) {
        sleapc__log(SLEAPC_LOG_INFO,
                    "%s: %s: the top-down centroid stage runs in float32 (its centroids place "
                    "the crops on whole pixels)",
                    sleapc__precision_name(co.precision), centroid->dir);
        co.precision = SLEAPC_PRECISION_FP32;
    }
    t->given = centroid == NULL;
    t->box_stage = centroid && (centroid->cfg.model_type == SLEAPC_MODEL_TYPE_BBOX_CENTERNET ||
                                centroid->cfg.model_type == SLEAPC_MODEL_TYPE_BBOX_SSD);
    t->bbox_crop = ci->cfg.crop_bbox;
    t->bbox_aspect = (sleapc_bbox_aspect)ci->cfg.crop_bbox_aspect;
    t->bbox_padding = ci->cfg.crop_bbox_padding;
    t->bbox_min_size = ci->cfg.crop_bbox_min_size;
    t->crop_max_h = ci->cfg.max_height;
    t->crop_max_w = ci->cfg.max_width;
    if (!st && t->given)
        st = sleapc__centroid_given_init(&t->gc, ci, o);
    else if (!st && t->box_stage)
        st = sleapc__box_finder_init(&t->boxes, centroid, &co, cthr, o->bbox_nms_iou);
    else if (!st)
        st = sleapc__centroid_finder_init(&t->finder, centroid, &co, cthr);
    /* Stage 2 gets only its own input scale and stride pad (predictor.py
     * _build_topdown_layer); SLEAP's FindInstancePeaks also its colour. */
    sleapc_preprocess_opts pp2 = sleapc__layer_preprocess_opts(ci, o, false);
    if (!st)
        st = sleapc__stage_init(&t->ci, ci, o, &pp2);
    if (st) {
        topdown_destroy(&t->base);
        return st;
    }
    /* SLEAP 1.x's TopDownMultiClassPredictor takes no max_instances. */
    if (t->multiclass && !t->ci.convention->multiclass_max_instances)
        t->finder.max_instances = t->gc.max_instances = 0;
    *out = &t->base;
    return SLEAPC_OK;
}
