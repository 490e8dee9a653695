/* TopDownLayer and TopDownMultiClassLayer (sleap-nn layers/topdown.py,
 * topdown_multiclass.py): centroids, then one crop per centroid through a
 * centered-instance model, keypoints lifted back into the frame. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/centroid_finder.h"
#include "layers/layer.h"
#include "layers/ops/coords.h"
#include "layers/ops/crops.h"
#include "layers/ops/identity.h"
#include "layers/ops/peaks.h"

typedef struct topdown_layer {
    sleapc_layer base;
    sleapc_centroid_finder finder;
    sleapc_stage ci;             /* stage 2 */
    bool multiclass;
    int64_t n_nodes, n_classes;
    int64_t crop_size;
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
    float *centers, *bboxes, *peaks, *vals;   /* per crop */
    int32_t *crop_sample;
    int64_t *crop_frame, *crop_slot, *class_inds;
    size_t per_crop_cap;                      /* crops the per-crop arrays hold */
    size_t class_inds_cap;
} topdown_layer;

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
    void **arrays[] = {(void **)&t->centers, (void **)&t->bboxes, (void **)&t->peaks,
                       (void **)&t->vals,    (void **)&t->crop_sample, (void **)&t->crop_frame,
                       (void **)&t->crop_slot};
    size_t sizes[] = {n * 2 * sizeof(float), n * 8 * sizeof(float), n * nn * 2 * sizeof(float),
                      n * nn * sizeof(float), n * sizeof(int32_t), n * sizeof(int64_t),
                      n * sizeof(int64_t)};
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

/* Frames through the size matcher alone: the crop source (step 3 of §7.4). */
static sleapc_status size_match(topdown_layer *t, const uint8_t *frames, int64_t b, int64_t c,
                                int64_t h, int64_t w)
{
    sleapc_status st;
    if (!t->have_sized_plan || t->sized_plan.src_c != c || t->sized_plan.src_h != h ||
        t->sized_plan.src_w != w) {
        st = sleapc__preprocess_plan_make(&t->sized_pp, c, h, w, &t->sized_plan);
        if (st)
            return st;
        t->have_sized_plan = true;
    }
    const sleapc_preprocess_plan *pl = &t->sized_plan;
    size_t in = (size_t)(c * h * w), outn = (size_t)(pl->c * pl->out_h * pl->out_w);
    st = grow_bytes((void **)&t->sized, &t->sized_cap, outn * (size_t)b);
    if (!st)
        st = grow_bytes(&t->scratch, &t->scratch_cap, pl->scratch_bytes);
    for (int64_t k = 0; !st && k < b; k++)
        st = sleapc__preprocess_run_u8(pl, frames + k * in, t->sized + k * outn, t->scratch);
    return st;
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
            t->centers[2 * n] = cxy[0];
            t->centers[2 * n + 1] = cxy[1];
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

    st = size_match(t, frames, b, c, h, w);
    if (st)
        return st;
    const sleapc_preprocess_plan *sp = &t->sized_plan;
    st = sleapc__crops_make_bboxes(t->centers, n, t->crop_size, t->crop_size, t->bboxes);
    int64_t ch = 0, cw = 0;
    /* Quirk (ops/crops.py:crop_bboxes): every crop takes the first box's size. */
    if (!st)
        st = sleapc__crops_size_from_bbox(t->bboxes, &ch, &cw);
    if (!st)
        st = grow_bytes((void **)&t->crops, &t->crops_cap, (size_t)(n * sp->c * ch * cw));
    if (!st)
        st = sleapc__crops_extract_u8(t->sized, b, sp->c, sp->out_h, sp->out_w, t->bboxes,
                                      t->crop_sample, n, ch, cw, t->crops);
    if (!st)
        st = sleapc__stage_run(&t->ci, t->crops, n, sp->c, ch, cw);
    const sleapc_tensor *cms = NULL;
    if (!st)
        st = sleapc__stage_head(&t->ci, "CenteredInstanceConfmapsHead", false, &cms);
    if (!st && cms->shape[1] != N)
        st = sleapc__fail(SLEAPC_ERR_BACKEND, "centered-instance head has %lld channels, the skeleton %lld nodes",
                          (long long)cms->shape[1], (long long)N);
    if (!st)
        st = sleapc__peaks_find_global(cms->data, n, N, cms->shape[2], cms->shape[3],
                                       t->threshold, t->refine_k, t->peaks, t->vals);
    if (st)
        return st;
    sleapc__coords_undo_stride(t->peaks, n * N,
                               sleapc__stage_head_stride(&t->ci, "CenteredInstanceConfmapsHead"));
    sleapc__coords_undo_input_scale(t->peaks, n * N, t->ci.plan.opts.scale);

    for (int64_t k = 0; k < n; k++) {
        int64_t s = t->crop_frame[k], slot = s * I + t->crop_slot[k];
        const float *crop_kp = t->peaks + k * N * 2;
        float *ckp = out->crop_keypoints + slot * N * 2;
        float *kp = out->keypoints + slot * N * 2;
        memcpy(ckp, crop_kp, (size_t)N * 2 * sizeof(float));
        memcpy(kp, crop_kp, (size_t)N * 2 * sizeof(float));
        /* Lift with the fractional top-left (+0.5 included), then / eff. */
        const float *tl = t->bboxes + k * 8;
        sleapc__coords_add_offset(kp, N, tl[0], tl[1]);
        sleapc__coords_undo_eff_scale(kp, N, out->eff_scale[s]);
        memcpy(out->peak_values + slot * N, t->vals + k * N, (size_t)N * sizeof(float));
        memcpy(out->bboxes + slot * 8, t->bboxes + k * 8, 8 * sizeof(float));
        sleapc__coords_undo_eff_scale(out->bboxes + slot * 8, 4, out->eff_scale[s]);
    }

    if (t->multiclass) {
        const sleapc_tensor *vec = NULL;
        st = sleapc__stage_head(&t->ci, "ClassVectorsHead", true, &vec);
        if (!st && vec->shape[1] != t->n_classes)
            st = sleapc__fail(SLEAPC_ERR_BACKEND, "class vectors have %lld classes, the config %lld",
                              (long long)vec->shape[1], (long long)t->n_classes);
        size_t need = (size_t)(b * I * N) * sizeof(int64_t);
        if (!st)
            st = grow_bytes((void **)&t->class_inds, &t->class_inds_cap, need);
        if (!st)
            st = sleapc__identity_topdown_assign(vec->data, n, t->n_classes, t->crop_frame,
                                                 t->crop_slot, b, I, N > 0 ? N : 1, t->class_inds,
                                                 out->tracking_scores, out->class_vectors);
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
    void *bufs[] = {t->sized,  t->scratch,     t->crops,      t->centers,   t->bboxes,
                    t->peaks,  t->vals,        t->crop_sample, t->crop_frame, t->crop_slot,
                    t->class_inds};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        sleapc__aligned_free(bufs[k]);
    sleapc__free(t);
}

static const struct sleapc_layer_ops topdown_ops = {
    .name = "TopDownLayer", .run = topdown_run, .destroy = topdown_destroy};
static const struct sleapc_layer_ops topdown_multiclass_ops = {
    .name = "TopDownMultiClassLayer", .run = topdown_run, .destroy = topdown_destroy};

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
    sleapc_status st = SLEAPC_OK;
    if (t->crop_size <= 0)
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "%s: the config has no crop_size; pass --crop_size", ci->dir);
    double cthr = o->centroid_peak_threshold == o->centroid_peak_threshold
                      ? o->centroid_peak_threshold
                      : o->peak_threshold;
    if (!st)
        st = sleapc__centroid_finder_init(&t->finder, centroid, o, cthr);
    /* Stage 2 gets only its own input scale and stride pad (predictor.py
     * _build_topdown_layer). */
    sleapc_preprocess_opts pp2 = sleapc__layer_preprocess_opts(ci, o, false);
    if (!st)
        st = sleapc__stage_init(&t->ci, ci, o->backend, o->n_threads, &pp2);
    if (st) {
        topdown_destroy(&t->base);
        return st;
    }
    t->sized_pp.max_height = t->finder.stage.pp.max_height;
    t->sized_pp.max_width = t->finder.stage.pp.max_width;
    t->sized_pp.scale = 1.0;
    *out = &t->base;
    return SLEAPC_OK;
}
