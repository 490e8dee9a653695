/* TopDownLayer and TopDownMultiClassLayer (sleap-nn layers/topdown.py,
 * topdown_multiclass.py): centroids, then one crop per centroid through a
 * centered-instance model, keypoints lifted back into the frame.
 *
 * Each stage follows its own model's convention. A legacy centroid model
 * gives SLEAP 1.x's centroids and size-matched frames (centroid_finder.c); a
 * legacy centered-instance model gets SLEAP 1.x's crops and lift
 * (CentroidCrop + FindInstancePeaks in sleap/nn/inference.py: bilinear crops
 * at the fractional centroid, truncated to uint8, points + centroid -
 * crop_size / 2) and, multi-class, SLEAP's TopDownMultiClassFindPeaks and
 * TopDownMultiClassPredictor grouping (one slot per class). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/centroid_finder.h"
#include "layers/layer.h"
#include "layers/ops/coords.h"
#include "layers/ops/crops.h"
#include "layers/ops/crops_sleap1.h"
#include "layers/ops/identity.h"
#include "layers/ops/peaks.h"
#include "layers/ops/peaks_sleap1.h"

static const char *const CI_HEAD = "CenteredInstanceConfmapsHead";

typedef struct topdown_layer {
    sleapc_layer base;
    sleapc_centroid_finder finder;
    sleapc_stage ci;             /* stage 2 */
    bool multiclass;
    bool ci_legacy;              /* stage 2 is a SLEAP 1.x model */
    bool ci_device_peaks;        /* stage 2's backend finds its peaks (backend.h) */
    int64_t n_nodes, n_classes;
    int64_t crop_size;
    int64_t max_crops;           /* crops per stage-2 network call (--batch_size) */
    double threshold;            /* stage-2 peak threshold */
    int refine_k;
    /* The crop source: frames through the centroid stage's size matcher only. */
    sleapc_preprocess_opts sized_pp;
    sleapc_preprocess_plan sized_plan;
    bool have_sized_plan;
    /* Buffers that grow with the batch; reused across batches. */
    uint8_t *sized;
    size_t sized_cap;
    void *scratch;
    size_t scratch_cap;
    uint8_t *crops;
    size_t crops_cap;
    void *crop_scratch;                       /* float crop of the legacy cropper */
    size_t crop_scratch_cap;
    /* Per crop: */
    float *centers, *bboxes, *peaks, *vals;   /* sized-image centre, box, crop-local peaks */
    float *lifted, *offsets, *cent_xy, *cent_val, *crop_prob;
    float *vecs;                              /* class vectors (multi-class) */
    int32_t *crop_sample;
    int64_t *crop_frame, *crop_slot, *crop_class, *class_inds;
    size_t per_crop_cap;                      /* crops the per-crop arrays hold */
    size_t class_inds_cap;
    sleapc_identity_ws ws;                    /* class assignment scratch */
} topdown_layer;

/* The size-matched frames crops are cut from. */
typedef struct sized_frames {
    const uint8_t *data;
    int64_t c, h, w;
} sized_frames;

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
                       (void **)&t->crop_class,  (void **)&t->vecs};
    size_t sizes[] = {
        n * 2 * sizeof(float),  n * 8 * sizeof(float),      n * nn * 2 * sizeof(float),
        n * nn * sizeof(float), n * nn * 2 * sizeof(float), n * 2 * sizeof(float),
        n * 2 * sizeof(float),  n * sizeof(float),          n * sizeof(float),
        n * sizeof(int32_t),    n * sizeof(int64_t),        n * sizeof(int64_t),
        n * sizeof(int64_t),    n * nc * sizeof(float)};
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

/* Frames through the centroid stage's pipeline part: sleap-nn's size matcher
 * alone (step 3 of §7.4), or for a legacy centroid model SLEAP's SizeMatcher
 * and colour coercion (the frames its CentroidCrop crops from). */
static sleapc_status size_match(topdown_layer *t, const uint8_t *frames, int64_t b, int64_t c,
                                int64_t h, int64_t w, sized_frames *out)
{
    sleapc_status st;
    size_t in = (size_t)(c * h * w);
    if (t->finder.legacy) {
        /* The centroid stage planned this frame size in this very batch. */
        const sleapc_preprocess_tf_plan *tp = &t->finder.stage.tf_plan;
        const sleapc_preprocess_plan *pl = &tp->base;
        size_t outn = (size_t)(pl->c * pl->sized_h * pl->sized_w);
        st = grow_bytes((void **)&t->sized, &t->sized_cap, outn * (size_t)b);
        if (!st)
            st = grow_bytes(&t->scratch, &t->scratch_cap, pl->scratch_bytes);
        for (int64_t k = 0; !st && k < b; k++)
            st = sleapc__preprocess_tf_run_u8(tp, frames + k * in, t->sized + k * outn,
                                              t->scratch);
        *out = (sized_frames){t->sized, pl->c, pl->sized_h, pl->sized_w};
        return st;
    }
    if (!t->have_sized_plan || t->sized_plan.src_c != c || t->sized_plan.src_h != h ||
        t->sized_plan.src_w != w) {
        st = sleapc__preprocess_plan_make(&t->sized_pp, c, h, w, &t->sized_plan);
        if (st)
            return st;
        t->have_sized_plan = true;
    }
    const sleapc_preprocess_plan *pl = &t->sized_plan;
    size_t outn = (size_t)(pl->c * pl->out_h * pl->out_w);
    st = grow_bytes((void **)&t->sized, &t->sized_cap, outn * (size_t)b);
    if (!st)
        st = grow_bytes(&t->scratch, &t->scratch_cap, pl->scratch_bytes);
    for (int64_t k = 0; !st && k < b; k++)
        st = sleapc__preprocess_run_u8(pl, frames + k * in, t->sized + k * outn, t->scratch);
    *out = (sized_frames){t->sized, pl->c, pl->out_h, pl->out_w};
    return st;
}

/* Boxes, crop size (*ch, *cw) and lift offsets of all n crops: the size is
 * the batch's (the first box's, below), whatever calls cut them. */
static sleapc_status plan_crops(topdown_layer *t, int64_t n, int64_t *ch, int64_t *cw)
{
    sleapc_status st;
    if (t->ci_legacy) {
        st = sleapc__crops_sleap1_boxes(t->centers, n, t->crop_size, t->bboxes);
        if (!st)
            st = sleapc__crops_sleap1_size(t->bboxes, ch, cw);
        sleapc__crops_sleap1_offsets(t->centers, n, t->crop_size, t->offsets);
        return st;
    }
    st = sleapc__crops_make_bboxes(t->centers, n, t->crop_size, t->crop_size, t->bboxes);
    /* Quirk (ops/crops.py:crop_bboxes): every crop takes the first box's size. */
    if (!st)
        st = sleapc__crops_size_from_bbox(t->bboxes, ch, cw);
    /* The lift adds the fractional top-left, the +0.5 included. */
    for (int64_t k = 0; !st && k < n; k++) {
        t->offsets[2 * k] = t->bboxes[8 * k];
        t->offsets[2 * k + 1] = t->bboxes[8 * k + 1];
    }
    return st;
}

/* Cut crops k0 .. k0 + m - 1 into t->crops (legacy boxes are 4 floats a
 * crop, sleap-nn's 8). */
static sleapc_status cut_crops(topdown_layer *t, const sized_frames *sf, int64_t b, int64_t k0,
                               int64_t m, int64_t ch, int64_t cw)
{
    sleapc_status st = grow_bytes((void **)&t->crops, &t->crops_cap, (size_t)(m * sf->c * ch * cw));
    if (st)
        return st;
    if (t->ci_legacy) {
        st = grow_bytes(&t->crop_scratch, &t->crop_scratch_cap,
                        sleapc__crops_sleap1_scratch_size(sf->c, ch, cw));
        if (!st)
            st = sleapc__crops_sleap1_extract(sf->data, b, sf->c, sf->h, sf->w, t->bboxes + 4 * k0,
                                              t->crop_sample + k0, m, ch, cw, t->crop_scratch,
                                              t->crops);
        return st;
    }
    return sleapc__crops_extract_u8(sf->data, b, sf->c, sf->h, sf->w, t->bboxes + 8 * k0,
                                    t->crop_sample + k0, m, ch, cw, t->crops);
}

static sleapc_status finish_stage2(topdown_layer *t, int64_t k0, int64_t m, float *peaks);

/* Stage 2 on crops k0 .. k0 + m - 1 (in t->crops): peaks in t->peaks
 * (crop-local, original scale) and t->vals, class vectors in t->vecs. */
static sleapc_status run_stage2(topdown_layer *t, const sized_frames *sf, int64_t k0, int64_t m,
                                int64_t ch, int64_t cw)
{
    const int64_t N = t->n_nodes;
    float *peaks = t->peaks + k0 * N * 2, *vals = t->vals + k0 * N;
    sleapc_status st = sleapc__stage_run(&t->ci, t->crops, m, sf->c, ch, cw);
    if (!st && t->ci_device_peaks) {
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
    if (!st && t->ci_legacy)
        st = sleapc__peaks_sleap1_find_global(cms->data, m, N, cms->shape[2], cms->shape[3],
                                              t->threshold, t->refine_k, peaks, vals);
    else if (!st)
        st = sleapc__peaks_find_global(cms->data, m, N, cms->shape[2], cms->shape[3], t->threshold,
                                       t->refine_k, peaks, vals);
    return st ? st : finish_stage2(t, k0, m, peaks);
}

/* Stage 2's peaks of crops k0 .. k0 + m - 1 into crop pixels; the class
 * vectors. */
static sleapc_status finish_stage2(topdown_layer *t, int64_t k0, int64_t m, float *peaks)
{
    const int64_t N = t->n_nodes;
    sleapc_status st = SLEAPC_OK;
    sleapc__coords_undo_stride(peaks, m * N, sleapc__stage_head_stride(&t->ci, CI_HEAD));
    if (t->ci_legacy)
        sleapc__coords_undo_input_scale_sleap1(peaks, m * N, t->ci.plan.opts.scale);
    else
        sleapc__coords_undo_input_scale(peaks, m * N, t->ci.plan.opts.scale);
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

/* All n crops: cut and through the network at most t->max_crops at a time,
 * so memory follows --batch_size, not the number of centroids; then the
 * keypoints lifted into original-frame pixels in t->lifted and the boxes as
 * corner lists (4, 2) in original-frame pixels back into t->bboxes. */
static sleapc_status run_crops(topdown_layer *t, const sized_frames *sf, int64_t b, int64_t n,
                               const float *eff_scale)
{
    const int64_t N = t->n_nodes;
    int64_t ch = 0, cw = 0;
    sleapc_status st = plan_crops(t, n, &ch, &cw);
    for (int64_t k0 = 0; !st && k0 < n; k0 += t->max_crops) {
        const int64_t m = n - k0 < t->max_crops ? n - k0 : t->max_crops;
        st = cut_crops(t, sf, b, k0, m, ch, cw);
        if (!st)
            st = run_stage2(t, sf, k0, m, ch, cw);
    }
    if (st)
        return st;
    /* Descending: a legacy box widens from 4 to 8 floats in place. */
    for (int64_t k = n - 1; k >= 0; k--) {
        const float eff = eff_scale[t->crop_frame[k]];
        float *kp = t->lifted + k * N * 2;
        memcpy(kp, t->peaks + k * N * 2, (size_t)N * 2 * sizeof(float));
        sleapc__coords_add_offset(kp, N, t->offsets[2 * k], t->offsets[2 * k + 1]);
        sleapc__coords_undo_eff_scale(kp, N, eff);
        float *box = t->bboxes + k * 8;
        if (t->ci_legacy) {
            /* (y1, x1, y2, x2) -> corners tl, tr, br, bl like sleap-nn's. */
            const float *src = t->bboxes + k * 4;
            const float y1 = src[0], x1 = src[1], y2 = src[2], x2 = src[3];
            const float corners[8] = {x1, y1, x2, y1, x2, y2, x1, y2};
            memcpy(box, corners, sizeof corners);
            /* SLEAP stores the points it leaves out with score 0. */
            for (int64_t j = 0; j < N; j++)
                if (isnan(kp[2 * j]))
                    t->vals[k * N + j] = 0.0f;
        }
        sleapc__coords_undo_eff_scale(box, 4, eff);
    }
    return SLEAPC_OK;
}

/* Crop k's results into output slot `slot`. */
static void put_crop(const topdown_layer *t, int64_t k, int64_t slot, sleapc_layer_outputs *out)
{
    const int64_t N = t->n_nodes;
    memcpy(out->crop_keypoints + slot * N * 2, t->peaks + k * N * 2, (size_t)N * 2 * sizeof(float));
    memcpy(out->keypoints + slot * N * 2, t->lifted + k * N * 2, (size_t)N * 2 * sizeof(float));
    memcpy(out->peak_values + slot * N, t->vals + k * N, (size_t)N * sizeof(float));
    memcpy(out->bboxes + slot * 8, t->bboxes + k * 8, 8 * sizeof(float));
}

/* SLEAP 1.x TopDownMultiClassFindPeaks + TopDownMultiClassPredictor: slot =
 * class; a crop keeps its class only where that is its best class
 * (classify_peaks_from_vectors). The predictor zips the class slots with the
 * frame's centroid values padded with NaN to the batch's largest centroid
 * count, so slot i scores the i-th centroid's value (whichever crop took
 * class i) and slots beyond that count are dropped. */
static sleapc_status multiclass_sleap1(topdown_layer *t, const float *vecs, int64_t n, int64_t b,
                                       sleapc_layer_outputs *out)
{
    const int64_t C = t->n_classes, N = t->n_nodes;
    sleapc_status st = sleapc__identity_topdown_classes_sleap1(
        vecs, n, C, t->crop_frame, b, &t->ws, t->crop_class, t->crop_prob);
    if (st)
        return st;
    const float eff = (float)t->finder.stage.plan.eff_scale;
    st = sleapc__layer_outputs_reset(out, b, C, N, C);
    if (st)
        return st;
    out->has_instance_scores = out->has_crops = out->has_centroids = true;
    out->has_classes = out->has_class_vectors = true;
    int64_t max_count = 0;
    for (int64_t s = 0, k = 0; s < b; s++) {
        int64_t count = 0;
        out->eff_scale[s] = eff;
        for (; k < n && t->crop_frame[k] == s; k++, count++) {
            if (count < C)
                out->instance_scores[s * C + count] = t->cent_val[k];
        }
        max_count = count > max_count ? count : max_count;
    }
    for (int64_t k = 0; k < n; k++) {
        const int64_t c = t->crop_class[k];
        if (c < 0 || c >= max_count)
            continue;
        const int64_t slot = t->crop_frame[k] * C + c;
        put_crop(t, k, slot, out);
        out->centroids[2 * slot] = t->cent_xy[2 * k];
        out->centroids[2 * slot + 1] = t->cent_xy[2 * k + 1];
        out->centroid_values[slot] = t->cent_val[k];
        out->tracking_scores[slot] = t->crop_prob[k];
        out->class_inds[slot] = (int32_t)c;
        memcpy(out->class_vectors + slot * C, vecs + k * C, (size_t)C * sizeof(float));
    }
    return SLEAPC_OK;
}

static sleapc_status topdown_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                                 int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    topdown_layer *t = l->impl;
    int64_t N = t->n_nodes;
    sleapc_status st = sleapc__centroid_finder_run(&t->finder, frames, b, c, h, w, N,
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

    sized_frames sf;
    st = size_match(t, frames, b, c, h, w, &sf);
    if (!st)
        st = run_crops(t, &sf, b, n, out->eff_scale);
    if (st)
        return st;
    if (t->multiclass && t->ci_legacy)
        return multiclass_sleap1(t, t->vecs, n, b, out);
    for (int64_t k = 0; k < n; k++)
        put_crop(t, k, t->crop_frame[k] * I + t->crop_slot[k], out);
    if (t->multiclass) {
        size_t need = (size_t)(b * I * N) * sizeof(int64_t);
        st = grow_bytes((void **)&t->class_inds, &t->class_inds_cap, need);
        if (!st)
            st = sleapc__identity_topdown_assign(
                t->vecs, n, t->n_classes, t->crop_frame, t->crop_slot, b, I, N > 0 ? N : 1, &t->ws,
                t->class_inds, out->tracking_scores, out->class_vectors);
        if (st)
            return st;
        for (int64_t k = 0; k < b * I; k++)
            out->class_inds[k] = (int32_t)t->class_inds[k * (N > 0 ? N : 1)];
    }
    return SLEAPC_OK;
}

static void topdown_destroy(sleapc_layer *l)
{
    topdown_layer *t = l->impl;
    sleapc__centroid_finder_free(&t->finder);
    sleapc__stage_free(&t->ci);
    void *bufs[] = {t->sized,     t->scratch,    t->crops,      t->crop_scratch, t->centers,
                    t->bboxes,    t->peaks,      t->vals,       t->lifted,       t->offsets,
                    t->cent_xy,   t->cent_val,   t->crop_prob,  t->crop_sample,  t->crop_frame,
                    t->crop_slot, t->crop_class, t->class_inds, t->vecs};
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
    sized_frames sf;
    sleapc_status st = size_match(t, frames, b, c, h, w, &sf);
    if (!st)
        st = grow_per_crop(t, b * instances > t->max_crops ? b * instances : t->max_crops);
    for (int64_t k = 0; !st && k < t->max_crops; k++) {
        t->centers[2 * k] = (float)sf.w / 2.0f;
        t->centers[2 * k + 1] = (float)sf.h / 2.0f;
        t->crop_sample[k] = 0;
        t->crop_frame[k] = 0;
    }
    for (int64_t m = t->max_crops; !st && m >= 1; m--) {
        int64_t ch = 0, cw = 0;
        st = plan_crops(t, m, &ch, &cw);
        if (!st)
            st = cut_crops(t, &sf, b, 0, m, ch, cw);
        if (!st)
            st = run_stage2(t, &sf, 0, m, ch, cw);
    }
    return st;
}

static int topdown_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const topdown_layer *t = l->impl;
    out[0] = sleapc__stage_info(&t->finder.stage);
    out[1] = sleapc__stage_info(&t->ci);
    return 2;
}

static const struct sleapc_layer_ops topdown_ops = {
    .name = "TopDownLayer", .run = topdown_run, .destroy = topdown_destroy,
    .warmup = topdown_warmup, .stages = topdown_stages};
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
    t->ci_legacy = ci->cfg.legacy;
    t->base.ops = t->multiclass ? &topdown_multiclass_ops : &topdown_ops;
    t->base.impl = t;
    t->n_nodes = ci->cfg.n_part_names;
    t->n_classes = t->multiclass ? ci->cfg.n_classes : 0;
    t->threshold = o->peak_threshold;
    t->refine_k = sleapc__layer_refine_k(o);
    t->crop_size = o->crop_size > 0 ? o->crop_size : ci->cfg.crop_size;
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
    if (co.precision == SLEAPC_PRECISION_BF16 || co.precision == SLEAPC_PRECISION_BF16_EMULATED) {
        co.precision = SLEAPC_PRECISION_FP32;
        sleapc__log(SLEAPC_LOG_INFO,
                    "bf16: %s: the top-down centroid stage runs in float32 (its centroids place "
                    "the crops on whole pixels)",
                    centroid->dir);
    }
    if (!st)
        st = sleapc__centroid_finder_init(&t->finder, centroid, &co, cthr);
    /* SLEAP 1.x's TopDownMultiClassPredictor takes no max_instances. */
    if (t->multiclass && t->ci_legacy)
        t->finder.max_instances = 0;
    /* Stage 2 gets only its own input scale and stride pad (predictor.py
     * _build_topdown_layer); SLEAP's FindInstancePeaks also its colour. */
    sleapc_preprocess_opts pp2 = sleapc__layer_preprocess_opts(ci, o, false);
    if (!st)
        st = sleapc__stage_init(&t->ci, ci, o, &pp2);
    if (st) {
        topdown_destroy(&t->base);
        return st;
    }
    t->ci_device_peaks =
        sleapc__stage_device_global_peaks(&t->ci, CI_HEAD, t->threshold, t->refine_k);
    t->sized_pp.max_height = t->finder.stage.pp.max_height;
    t->sized_pp.max_width = t->finder.stage.pp.max_width;
    t->sized_pp.scale = 1.0;
    *out = &t->base;
    return SLEAPC_OK;
}
