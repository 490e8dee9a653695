/* Stage 2 of the top-down layer (see topdown_impl.h): crops cut on the
 * host or on stage 2's device from the size-matched frames, through the
 * centered-instance model at most --batch_size at a time, their peaks
 * lifted back into the frame; box-scaled crops (crop_mode: bbox) resize each
 * box to the crop (ops/crops_bbox.h). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/coords.h"
#include "layers/stage_local_peaks.h"
#include "layers/topdown_impl.h"

static const char *const CI_HEAD = "CenteredInstanceConfmapsHead";

sleapc_status sleapc__topdown_grow_bytes(void **p, size_t *cap, size_t need)
{
    if (need <= *cap && *p)
        return SLEAPC_OK;
    sleapc__aligned_free(*p);
    *p = sleapc__aligned_alloc(need ? need : 64);
    *cap = *p ? need : 0;
    return *p ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "top-down: out of memory");
}

sleapc_status sleapc__topdown_grow_per_crop(topdown_layer *t, int64_t n_crops)
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

const sleapc_preprocess_plan *sleapc__topdown_src_stage_plan(const topdown_layer *t)
{
    return t->given ? &t->gc.plan : t->box_stage ? &t->boxes.stage.plan : &t->finder.stage.plan;
}

/* Frames through the centroid stage's pipeline part, as its convention cuts
 * crops from them: sleap-nn's size matcher alone (step 3 of §7.4), or SLEAP
 * 1.x's SizeMatcher and colour coercion (the frames its CentroidCrop crops
 * from); planned into t->sized_plan. The centroid stage planned this frame
 * size in this very batch. */
sleapc_status sleapc__topdown_source_plan(topdown_layer *t)
{
    if (!t->box_stage)
        return src_convention(t)->crop_source_plan(sleapc__topdown_src_stage_plan(t),
                                                   &t->sized_plan);
    /* Behind a detector the frame is size-matched to the crop model's own
     * training target (predictor.py _attach_bbox_stage: crop_max_hw). */
    sleapc_preprocess_plan p = *sleapc__topdown_src_stage_plan(t);
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
    sleapc_status st = sleapc__topdown_source_plan(t);
    if (st)
        return st;
    size_t in = (size_t)(cs->c * cs->h * cs->w);
    size_t outn = (size_t)(pl->c * pl->sized_h * pl->sized_w);
    st = sleapc__topdown_grow_bytes((void **)&t->sized, &t->sized_cap, outn * (size_t)b);
    if (!st)
        st = sleapc__topdown_grow_bytes(&t->scratch, &t->scratch_cap, pl->scratch_bytes);
    for (int64_t k = 0; !st && k < b; k++)
        st = cv->crop_source(pl, frames + k * in, t->sized + k * outn, t->scratch);
    if (!st)
        cs->sf = (sized_frames){t->sized, pl->c, pl->sized_h, pl->sized_w};
    return st;
}

/* Boxes, crop size (*ch, *cw) and lift offsets of all n crops: the size is
 * the batch's, whatever calls cut them. */
sleapc_status sleapc__topdown_plan_crops(topdown_layer *t, int64_t n, int64_t *ch, int64_t *cw)
{
    if (t->bbox_crop) {
        sleapc__bbox_crop_windows(t->box_xyxy, n, t->crop_size, t->bbox_aspect, t->bbox_padding,
                                  t->bbox_min_size, t->windows, t->wscales, t->keep_half);
        for (int64_t k = 0; k < n; k++)
            sleapc__bbox_crop_corners(t->windows + 4 * k, t->bboxes + 8 * k);
        *ch = *cw = t->crop_size;
        return SLEAPC_OK;
    }
    return t->ci.convention->crop_boxes(t->centers, n, t->crop_size, t->first_box_size, t->bboxes,
                                        t->offsets, ch, cw);
}

/* Cut crops k0 .. k0 + m - 1 into t->crops. */
static sleapc_status cut_crops(topdown_layer *t, const sized_frames *sf, int64_t b, int64_t k0,
                               int64_t m, int64_t ch, int64_t cw)
{
    const sleapc_convention *cv = t->ci.convention;
    sleapc_status st = sleapc__topdown_grow_bytes((void **)&t->crops, &t->crops_cap,
                                                  (size_t)(m * sf->c * ch * cw));
    if (!st && t->bbox_crop)
        return sleapc__bbox_crop_cut_u8(
            sf->data, b, sf->c, sf->h, sf->w, t->windows + 4 * k0,
            t->bbox_aspect == SLEAPC_BBOX_ASPECT_LETTERBOX ? t->keep_half + 2 * k0 : NULL,
            t->crop_sample + k0, m, ch, t->crops);
    if (!st)
        st = sleapc__topdown_grow_bytes(&t->crop_scratch, &t->crop_scratch_cap,
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
sleapc_status sleapc__topdown_crops_on_device(topdown_layer *t, crop_source *cs)
{
    cs->device = false;
    cs->on_dev = NULL;
    /* Box-scaled crops resample: cut on the host. */
    if (t->bbox_crop || !t->ci.convention->crop_origins || !sleapc__stage_windows(&t->ci))
        return SLEAPC_OK;
    sleapc_status st = SLEAPC_ERR_UNSUPPORTED;
    if (src_convention(t)->device_windows &&
        !sleapc__plan_int_resize(sleapc__topdown_src_stage_plan(t))) {
        st = sleapc__topdown_source_plan(t);
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
sleapc_status sleapc__topdown_stage2_chunk(topdown_layer *t, crop_source *cs, int64_t k0, int64_t m,
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
sleapc_status sleapc__topdown_run_crops(topdown_layer *t, crop_source *cs, int64_t n,
                                        const float *eff_scale)
{
    const int64_t N = t->n_nodes;
    int64_t ch = 0, cw = 0;
    sleapc_status st = sleapc__topdown_plan_crops(t, n, &ch, &cw);
    if (!st)
        st = sleapc__topdown_crops_on_device(t, cs);
    for (int64_t k0 = 0; !st && k0 < n; k0 += t->max_crops) {
        const int64_t m = n - k0 < t->max_crops ? n - k0 : t->max_crops;
        st = sleapc__topdown_stage2_chunk(t, cs, k0, m, ch, cw);
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
