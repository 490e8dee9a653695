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

#include "core/compat.h"
#include "core/alloc.h"
#include "core/error.h"
#include "layers/box_finder.h"
#include "layers/centroid_finder.h"
#include "layers/centroid_given.h"
#include "layers/layer.h"
#include "layers/ops/coords.h"
#include "layers/ops/crops_bbox.h"
#include "layers/stage_local_peaks.h"
#include "layers/topdown_classes.h"

static const char *const CI_HEAD = "CenteredInstanceConfmapsHead";

typedef struct topdown_layer {
    sleapc_layer base;
    sleapc_centroid_finder finder;
    bool given;                  /* stage 1 is gc: no centroid model */
    sleapc_centroid_given gc;
    /* A box detector as stage 1 instead (BBoxStageLayer): crops on the box
     * centres, or each box resized to the crop (crop_mode: bbox). */
    bool box_stage;
    sleapc_box_finder boxes;
    bool bbox_crop;
    sleapc_bbox_aspect bbox_aspect;
    double bbox_padding, bbox_min_size;
    int64_t crop_max_h, crop_max_w;  /* the crop model's size matcher (crop_max_hw) */
    sleapc_stage ci;             /* stage 2 */
    bool multiclass;
    bool ci_device_peaks;        /* stage 2's backend finds its peaks (backend.h) */
    bool ci_asked;               /* ci_device_peaks was asked for (once stage 2 may) */
    int64_t n_nodes, n_classes;
    int64_t crop_size;
    bool first_box_size; /* sleap-nn 0.3.3: a batch's crops take its first box's size */
    int64_t max_crops;           /* crops per stage-2 network call (--batch_size) */
    double threshold;            /* stage-2 peak threshold */
    int refine_k;
    /* The crop source: frames size-matched as the centroid stage's convention says. */
    sleapc_preprocess_plan sized_plan;
    /* Buffers that grow with the batch; reused across batches. */
    uint8_t *sized;
    size_t sized_cap;
    void *scratch;
    size_t scratch_cap;
    uint8_t *crops;
    size_t crops_cap;
    void *crop_scratch;                       /* the cropper's (SLEAP 1.x: float crops) */
    size_t crop_scratch_cap;
    /* Per crop: */
    float *centers, *bboxes, *peaks, *vals;   /* sized-image centre, box, crop-local peaks */
    float *lifted, *offsets, *cent_xy, *cent_val, *crop_prob;
    float *vecs;                              /* class vectors (multi-class) */
    float *box_xyxy, *windows, *wscales, *keep_half; /* box crops: sized box, window */
    int32_t *crop_sample;
    int64_t *crop_frame, *crop_slot, *crop_class, *class_inds;
    int64_t *crop_origin;                     /* (n, 2): crops cut on the device */
    size_t per_crop_cap;                      /* crops the per-crop arrays hold */
    size_t class_inds_cap;
    sleapc_identity_ws ws;                    /* class assignment scratch */
} topdown_layer;

/* The size-matched frames crops are cut from. */
typedef struct sized_frames {
    const uint8_t *data;
    int64_t c, h, w;
} sized_frames;

/* A batch's crop source: its frames, size-matched on the host only when
 * stage 2's device does not do it. */
typedef struct crop_source {
    const uint8_t *frames;
    int64_t b, c, h, w;
    sized_frames sf;                       /* data NULL until size_match makes it */
    bool device;                           /* stage 2 cuts its crops on its device from... */
    const sleapc_preprocess_plan *on_dev;  /* ...the frames, size-matched there by this
                                              plan; NULL: from sf */
} crop_source;

static sleapc_status grow_bytes(void **p, size_t *cap, size_t need)
{
    if (need <= *cap && *p)
        return SLEAPC_OK;
    sleapc__aligned_free(*p);
    *p = sleapc__aligned_alloc(need ? need : 64);
    *cap = *p ? need : 0;
    return *p ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "top-down: out of memory");
}

static sleapc_status grow_per_crop(topdown_layer *t, int64_t n_crops)
{
    size_t n = (size_t)(n_crops > 0 ? n_crops : 1);
    if (n <= t->per_crop_cap)
        return SLEAPC_OK;
    size_t nn = (size_t)(t->n_nodes > 0 ? t->n_nodes : 1);
    size_t nc = (size_t)(t->n_classes > 0 ? t->n_classes : 1);
    void **arrays[] = {(void **)&t->centers,     (void **)&t->bboxes,     (void **)&t->peaks,
                       (void **)&t->vals,        (void **)&t->lifted,     (void **)&t->offsets,
                       (void **)&t->cent_xy,     (void **)&t->cent_val,   (void **)&t->crop_prob,
                       (void **)&t->crop_sample, (void **)&t->crop_frame, (void **)&t->crop_slot,
                       (void **)&t->crop_class,  (void **)&t->vecs,       (void **)&t->crop_origin,
                       (void **)&t->box_xyxy,    (void **)&t->windows,    (void **)&t->wscales,
                       (void **)&t->keep_half};
    size_t sizes[] = {
        n * 2 * sizeof(float),  n * 8 * sizeof(float),      n * nn * 2 * sizeof(float),
        n * nn * sizeof(float), n * nn * 2 * sizeof(float), n * 2 * sizeof(float),
        n * 2 * sizeof(float),  n * sizeof(float),          n * sizeof(float),
        n * sizeof(int32_t),    n * sizeof(int64_t),        n * sizeof(int64_t),
        n * sizeof(int64_t),    n * nc * sizeof(float),     n * 2 * sizeof(int64_t),
        n * 4 * sizeof(float),  n * 4 * sizeof(float),      n * 2 * sizeof(float),
        n * 2 * sizeof(float)};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        sleapc__aligned_free(*arrays[k]);
        *arrays[k] = sleapc__aligned_alloc(sizes[k]);
        if (!*arrays[k]) {
            t->per_crop_cap = 0;
            return sleapc__fail(SLEAPC_ERR_NOMEM, "top-down: out of memory");
        }
    }
    t->per_crop_cap = n;
    return SLEAPC_OK;
}

/* Stage 1's convention and its plan for the batch's frames: the centroid
 * model's, the box detector's, or the given centroids'. */
static const sleapc_convention *src_convention(const topdown_layer *t)
{
    return t->given       ? t->gc.convention
           : t->box_stage ? t->boxes.stage.convention
                          : t->finder.stage.convention;
}

static const sleapc_preprocess_plan *src_stage_plan(const topdown_layer *t)
{
    return t->given ? &t->gc.plan : t->box_stage ? &t->boxes.stage.plan : &t->finder.stage.plan;
}

/* Frames through the centroid stage's pipeline part, as its convention cuts
 * crops from them: sleap-nn's size matcher alone (step 3 of §7.4), or SLEAP
 * 1.x's SizeMatcher and colour coercion (the frames its CentroidCrop crops
 * from); planned into t->sized_plan. The centroid stage planned this frame
 * size in this very batch. */
static sleapc_status source_plan(topdown_layer *t)
{
    if (!t->box_stage)
        return src_convention(t)->crop_source_plan(src_stage_plan(t), &t->sized_plan);
    /* Behind a detector the frame is size-matched to the crop model's own
     * training target (predictor.py _attach_bbox_stage: crop_max_hw). */
    sleapc_preprocess_plan p = *src_stage_plan(t);
    p.opts.max_height = t->crop_max_h;
    p.opts.max_width = t->crop_max_w;
    return src_convention(t)->crop_source_plan(&p, &t->sized_plan);
}

/* The crop source on the host, made once. */
static sleapc_status size_match(topdown_layer *t, crop_source *cs)
{
    if (cs->sf.data)
        return SLEAPC_OK;
    const sleapc_convention *cv = src_convention(t);
    const sleapc_preprocess_plan *pl = &t->sized_plan;
    const uint8_t *frames = cs->frames;
    const int64_t b = cs->b;
    sleapc_status st = source_plan(t);
    if (st)
        return st;
    size_t in = (size_t)(cs->c * cs->h * cs->w);
    size_t outn = (size_t)(pl->c * pl->sized_h * pl->sized_w);
    st = grow_bytes((void **)&t->sized, &t->sized_cap, outn * (size_t)b);
    if (!st)
        st = grow_bytes(&t->scratch, &t->scratch_cap, pl->scratch_bytes);
    for (int64_t k = 0; !st && k < b; k++)
        st = cv->crop_source(pl, frames + k * in, t->sized + k * outn, t->scratch);
    if (!st)
        cs->sf = (sized_frames){t->sized, pl->c, pl->sized_h, pl->sized_w};
    return st;
}

/* Boxes, crop size (*ch, *cw) and lift offsets of all n crops: the size is
 * the batch's, whatever calls cut them. */
static sleapc_status plan_crops(topdown_layer *t, int64_t n, int64_t *ch, int64_t *cw)
{
    if (t->bbox_crop) {
        sleapc__bbox_crop_windows(t->box_xyxy, n, t->crop_size, t->bbox_aspect, t->bbox_padding,
                                  t->bbox_min_size, t->windows, t->wscales, t->keep_half);
        for (int64_t k = 0; k < n; k++)
            sleapc__bbox_crop_corners(t->windows + 4 * k, t->bboxes + 8 * k);
        *ch = *cw = t->crop_size;
        return SLEAPC_OK;
    }
    return t->ci.convention->crop_boxes(t->centers, n, t->crop_size, t->first_box_size,
                                        t->bboxes, t->offsets, ch, cw);
}

/* Cut crops k0 .. k0 + m - 1 into t->crops. */
static sleapc_status cut_crops(topdown_layer *t, const sized_frames *sf, int64_t b, int64_t k0,
                               int64_t m, int64_t ch, int64_t cw)
{
    const sleapc_convention *cv = t->ci.convention;
    sleapc_status st = grow_bytes((void **)&t->crops, &t->crops_cap, (size_t)(m * sf->c * ch * cw));
    if (!st && t->bbox_crop)
        return sleapc__bbox_crop_cut_u8(
            sf->data, b, sf->c, sf->h, sf->w, t->windows + 4 * k0,
            t->bbox_aspect == SLEAPC_BBOX_ASPECT_LETTERBOX ? t->keep_half + 2 * k0 : NULL,
            t->crop_sample + k0, m, ch, t->crops);
    if (!st)
        st = grow_bytes(&t->crop_scratch, &t->crop_scratch_cap,
                        cv->crop_scratch_size(sf->c, ch, cw));
    if (!st)
        st = cv->crop_cut(sf->data, b, sf->c, sf->h, sf->w, t->bboxes, t->crop_sample, k0, m, ch,
                          cw, t->crop_scratch, t->crops);
    return st;
}

static sleapc_status finish_stage2(topdown_layer *t, int64_t k0, int64_t m, float *peaks);
static sleapc_status stage2_outputs(topdown_layer *t, int64_t k0, int64_t m);

/* Stage 2's device peaks, asked for once before a run, after a reduced
 * precision's first-batch check (which needs the maps). */
static void ask_device_peaks(topdown_layer *t)
{
    if (t->ci_asked || !sleapc__stage_device_local_peaks_due(&t->ci))
        return;
    t->ci_asked = true;
    t->ci_device_peaks =
        sleapc__stage_device_global_peaks(&t->ci, CI_HEAD, t->threshold, t->refine_k);
}

/* Stage 2 on crops k0 .. k0 + m - 1 (in t->crops): peaks in t->peaks
 * (crop-local, original scale) and t->vals, class vectors in t->vecs. */
static sleapc_status run_stage2(topdown_layer *t, const sized_frames *sf, int64_t k0, int64_t m,
                                int64_t ch, int64_t cw)
{
    sleapc_status st = sleapc__stage_run(&t->ci, t->crops, m, sf->c, ch, cw);
    return st ? st : stage2_outputs(t, k0, m);
}

/* Stage 2's outputs of its last run, on crops k0 .. k0 + m - 1. */
static sleapc_status stage2_outputs(topdown_layer *t, int64_t k0, int64_t m)
{
    const int64_t N = t->n_nodes;
    float *peaks = t->peaks + k0 * N * 2, *vals = t->vals + k0 * N;
    sleapc_status st = SLEAPC_OK;
    if (t->ci_device_peaks) {
        const float *pk = NULL, *v = NULL;
        st = sleapc__stage_device_peaks(&t->ci, m, N, &pk, &v);
        if (st)
            return st;
        memcpy(peaks, pk, (size_t)(m * N * 2) * sizeof(float));
        memcpy(vals, v, (size_t)(m * N) * sizeof(float));
        return finish_stage2(t, k0, m, peaks);
    }
    const sleapc_tensor *cms = NULL;
    if (!st)
        st = sleapc__stage_head(&t->ci, CI_HEAD, false, &cms);
    if (!st && cms->shape[1] != N)
        st = sleapc__fail(SLEAPC_ERR_BACKEND,
                          "centered-instance head has %lld channels, the skeleton %lld nodes",
                          (long long)cms->shape[1], (long long)N);
    if (!st)
        st = t->ci.convention->find_global(cms->data, m, N, cms->shape[2], cms->shape[3],
                                           t->threshold, t->refine_k, peaks, vals);
    return st ? st : finish_stage2(t, k0, m, peaks);
}

/* Stage 2's peaks of crops k0 .. k0 + m - 1 into crop pixels; the class
 * vectors. */
static sleapc_status finish_stage2(topdown_layer *t, int64_t k0, int64_t m, float *peaks)
{
    const int64_t N = t->n_nodes;
    const sleapc_convention *cv = t->ci.convention;
    sleapc_status st = SLEAPC_OK;
    sleapc__coords_undo_stride(peaks, m * N, sleapc__stage_head_stride(&t->ci, CI_HEAD));
    cv->undo_input_scale(peaks, m * N, t->ci.plan.opts.scale);
    if (t->multiclass) {
        const sleapc_tensor *vec = NULL;
        st = sleapc__stage_head(&t->ci, "ClassVectorsHead", true, &vec);
        if (!st && vec->shape[1] != t->n_classes)
            st =
                sleapc__fail(SLEAPC_ERR_BACKEND, "class vectors have %lld classes, the config %lld",
                             (long long)vec->shape[1], (long long)t->n_classes);
        if (!st)
            memcpy(t->vecs + k0 * t->n_classes, vec->data,
                   (size_t)(m * t->n_classes) * sizeof(float));
    }
    return st;
}

/* The batch's crop source on stage 2's device, when its crops can be cut
 * there (stage_windows.c): the frames as they are, when the centroid
 * stage's convention size-matches as the device does (sleap-nn's), else
 * the host's size-matched frames. cs->device says whether they will be. */
static sleapc_status crops_on_device(topdown_layer *t, crop_source *cs)
{
    cs->device = false;
    cs->on_dev = NULL;
    /* Box-scaled crops resample: cut on the host. */
    if (t->bbox_crop || !t->ci.convention->crop_origins || !sleapc__stage_windows(&t->ci))
        return SLEAPC_OK;
    sleapc_status st = SLEAPC_ERR_UNSUPPORTED;
    if (src_convention(t)->device_windows && !sleapc__plan_int_resize(src_stage_plan(t))) {
        st = source_plan(t);
        if (!st)
            st = sleapc__stage_upload_frames(&t->ci, cs->frames, cs->b, cs->c, cs->h, cs->w);
        cs->on_dev = st ? NULL : &t->sized_plan;
    }
    if (st == SLEAPC_ERR_UNSUPPORTED) {
        st = size_match(t, cs);
        if (!st)
            st = sleapc__stage_upload_frames(&t->ci, cs->sf.data, cs->b, cs->sf.c, cs->sf.h,
                                             cs->sf.w);
    }
    cs->device = st == SLEAPC_OK;
    return st == SLEAPC_ERR_UNSUPPORTED ? SLEAPC_OK : st;
}

/* Crops k0 .. k0 + m - 1 through stage 2: cut on its device from the
 * uploaded crop source (*device), or on the host (from then on, when the
 * device declines). */
static sleapc_status stage2_chunk(topdown_layer *t, crop_source *cs, int64_t k0, int64_t m,
                                  int64_t ch, int64_t cw)
{
    ask_device_peaks(t);
    if (cs->device) {
        t->ci.convention->crop_origins(t->bboxes, k0, m, ch, cw, t->crop_origin);
        sleapc_status st =
            sleapc__stage_run_crops(&t->ci, m, t->crop_sample + k0, t->crop_origin,
                                    cs->on_dev ? cs->on_dev->c : cs->sf.c, ch, cw, cs->on_dev);
        if (st != SLEAPC_ERR_UNSUPPORTED)
            return st ? st : stage2_outputs(t, k0, m);
        cs->device = false;
    }
    sleapc_status st = size_match(t, cs);
    if (!st)
        st = cut_crops(t, &cs->sf, cs->b, k0, m, ch, cw);
    return st ? st : run_stage2(t, &cs->sf, k0, m, ch, cw);
}

/* All n crops: cut and through the network at most t->max_crops at a time,
 * so memory follows --batch_size, not the number of centroids; then the
 * keypoints lifted into original-frame pixels in t->lifted and the boxes as
 * corner lists (4, 2) in original-frame pixels back into t->bboxes. */
static sleapc_status run_crops(topdown_layer *t, crop_source *cs, int64_t n,
                               const float *eff_scale)
{
    const int64_t N = t->n_nodes;
    int64_t ch = 0, cw = 0;
    sleapc_status st = plan_crops(t, n, &ch, &cw);
    if (!st)
        st = crops_on_device(t, cs);
    for (int64_t k0 = 0; !st && k0 < n; k0 += t->max_crops) {
        const int64_t m = n - k0 < t->max_crops ? n - k0 : t->max_crops;
        st = stage2_chunk(t, cs, k0, m, ch, cw);
    }
    if (st)
        return st;
    /* Descending: a box may widen to 8 floats in place (crop_corners). */
    const sleapc_convention *cv = t->ci.convention;
    for (int64_t k = n - 1; k >= 0; k--) {
        const float eff = eff_scale[t->crop_frame[k]];
        float *kp = t->lifted + k * N * 2;
        memcpy(kp, t->peaks + k * N * 2, (size_t)N * 2 * sizeof(float));
        if (t->bbox_crop)
            sleapc__bbox_crop_lift(kp, N, t->windows + 4 * k, t->wscales + 2 * k);
        else
            sleapc__coords_add_offset(kp, N, t->offsets[2 * k], t->offsets[2 * k + 1]);
        sleapc__coords_undo_eff_scale(kp, N, eff);
        if (!t->bbox_crop)
            cv->crop_corners(t->bboxes, k);
        cv->unfound_scores(kp, t->vals + k * N, N);
        sleapc__coords_undo_eff_scale(t->bboxes + k * 8, 4, eff);
    }
    return SLEAPC_OK;
}

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
        st = source_plan(t);
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
        t->given       ? sleapc__centroid_given_run(&t->gc, b, c, h, w, N, t->n_classes, out)
        : t->box_stage ? box_centroids(t, frames, b, c, h, w, out)
                       : sleapc__centroid_finder_run(&t->finder, frames, b, c, h, w, N,
                                                     t->n_classes, out);
    if (st)
        return st;
    int64_t I = out->n_slots;
    out->has_instance_scores = true;
    out->has_crops = true;
    out->has_classes = t->multiclass;
    out->has_class_vectors = t->multiclass;

    /* Valid centroids, row-major over (frame, slot), mapped into the sized
     * image (x eff). */
    st = grow_per_crop(t, b * I);
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
        return SLEAPC_OK;  /* §7.4 step 9: every slot stays NaN */

    crop_source cs = {.frames = frames, .b = b, .c = c, .h = h, .w = w};
    st = run_crops(t, &cs, n, out->eff_scale);
    if (st)
        return st;
    sleapc_topdown_batch tb = {
        .n_crops = n, .n_frames = b, .n_slots = I, .n_nodes = N, .n_classes = t->n_classes,
        .eff_scale = (float)src_stage_plan(t)->eff_scale, .peaks = t->peaks,
        .lifted = t->lifted, .vals = t->vals, .bboxes = t->bboxes, .cent_xy = t->cent_xy,
        .cent_val = t->cent_val, .vecs = t->vecs, .crop_frame = t->crop_frame,
        .crop_slot = t->crop_slot, .crop_class = t->crop_class, .crop_prob = t->crop_prob};
    if (!t->multiclass) {
        sleapc__topdown_place(&tb, out);
        return SLEAPC_OK;
    }
    size_t need = (size_t)(b * I * N) * sizeof(int64_t);
    st = grow_bytes((void **)&t->class_inds, &t->class_inds_cap, need);
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
        st = source_plan(t);
    if (!st)
        st = grow_per_crop(t, b * instances > t->max_crops ? b * instances : t->max_crops);
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
        st = crops_on_device(t, &cs);
    for (int64_t m = t->max_crops; !st && m >= 1; m--) {
        int64_t ch = 0, cw = 0;
        st = plan_crops(t, m, &ch, &cw);
        if (!st)
            st = stage2_chunk(t, &cs, 0, m, ch, cw);
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

static const struct sleapc_layer_ops topdown_ops = {
    .name = "TopDownLayer", .run = topdown_run, .destroy = topdown_destroy,
    .warmup = topdown_warmup, .stages = topdown_stages,
    .given_instances = topdown_given_instances};
static const struct sleapc_layer_ops topdown_multiclass_ops = {
    .name = "TopDownMultiClassLayer", .run = topdown_run, .destroy = topdown_destroy,
    .warmup = topdown_warmup, .stages = topdown_stages};

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
    if (centroid && (co.precision == SLEAPC_PRECISION_BF16 ||
                     co.precision == SLEAPC_PRECISION_BF16_EMULATED ||
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
