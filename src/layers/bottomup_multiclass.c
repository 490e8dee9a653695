/* BottomUpMultiClassLayer (sleap-nn layers/bottomup_multiclass.py): local
 * peaks given identities by class maps; one instance slot per class.
 * Refinement, the class-map look-up, the input-scale step and the
 * max_instances cap follow the model's convention (SLEAP 1.x's
 * BottomUpMultiClassInferenceLayer in sleap/nn/inference.py: SLEAP's
 * refinement, class-map look-ups outside the map read 0, "+ 0.5" after the
 * input scale, and no max_instances cap, as BottomUpMultiClassPredictor has
 * none). */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/bottomup_common.h"
#include "layers/layer.h"
#include "layers/ops/identity.h"
#include "layers/stage.h"
#include "layers/stage_kept_heads.h"

typedef struct bumc_layer {
    sleapc_layer base;
    sleapc_stage stage;
    double threshold;
    int refine_k;
    int max_instances;
    int64_t n_nodes, n_classes;
    sleapc_peak_list peaks;
    float *class_probs;   /* (B, C, N) */
    size_t probs_cap;
    sleapc_identity_ws ws; /* classification scratch, kept across batches */
    /* The class maps' one use is their values at the peaks: read on the
     * device where the convention reads them as sleap-nn does (the maps
     * then stay there), else on the host. */
    bool sample_on_device;  /* cleared after a refusal or failure */
    int maps_kept;          /* 1 yes, -1 no, 0 not asked yet */
    int32_t (*cells)[3];    /* (cells_cap) each peak's cell */
    float *sampled;         /* (cells_cap, n_classes) the class vectors there */
    int64_t cells_cap;
    /* The batch between its device work and its host work (bumc_device,
     * bumc_host): its class maps (fetched if the host reads them), and
     * whether their vectors at the peaks are in sampled instead. */
    const sleapc_tensor *cls;
    bool cls_sampled;
} bumc_layer;

static const char *const CLASS_HEAD = "ClassMapsHead";

static sleapc_status grow_cells(bumc_layer *bm, int64_t n)
{
    if (n <= bm->cells_cap)
        return SLEAPC_OK;
    if (bm->cells_cap <= INT64_MAX / 2 && 2 * bm->cells_cap > n)
        n = 2 * bm->cells_cap; /* peak counts vary frame to frame */
    sleapc__free(bm->cells);
    sleapc__free(bm->sampled);
    bm->cells = sleapc__malloc((size_t)n * sizeof *bm->cells);
    bm->sampled = sleapc__malloc((size_t)(n * bm->n_classes) * sizeof *bm->sampled);
    bm->cells_cap = bm->cells && bm->sampled ? n : 0;
    return bm->cells_cap ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
}

/* The class vectors at the peaks read on the device into sampled; *done
 * false when the device refused or failed (logged once; the host reads
 * from then on). */
static sleapc_status sample_on_device(bumc_layer *bm, const sleapc_tensor *cls, int cls_stride,
                                      bool *done)
{
    const sleapc_peak_list *pk = &bm->peaks;
    *done = false;
    sleapc_status st = grow_cells(bm, pk->n > 0 ? pk->n : 1);
    if (st)
        return st;
    sleapc__identity_class_cells(pk->peaks, pk->sample_inds, pk->n, cls->shape[2], cls->shape[3],
                                 cls_stride, bm->cells);
    st = sleapc__backend_device_sample_head(bm->stage.be, CLASS_HEAD, pk->n,
                                            (const int32_t(*)[3])bm->cells, bm->sampled);
    if (st) {
        if (st != SLEAPC_ERR_UNSUPPORTED)
            sleapc__log(SLEAPC_LOG_WARN,
                        "class maps at the peaks on the device failed (%s); read on the host "
                        "from now on",
                        sleapc__last_error());
        sleapc__clear_error();
        bm->sample_on_device = false;
        return SLEAPC_OK;
    }
    *done = true;
    return SLEAPC_OK;
}

/* What a batch needs of the device: of frames, or with frames NULL of the
 * stage's collected batch (the run in steps does it at collect, before the
 * next batch is begun): its peaks, and its class vectors at the peaks or
 * its class maps. */
static sleapc_status bumc_device(bumc_layer *bm, const uint8_t *frames, int64_t b, int64_t c,
                                 int64_t h, int64_t w)
{
    const sleapc_tensor *cms = NULL, *cls = NULL;
    bm->cls = NULL;
    bm->cls_sampled = false;
    /* Once the host reads the class maps, they come back with the forward
     * (that batch fetched them). */
    if (bm->maps_kept > 0 && !bm->sample_on_device)
        bm->maps_kept = sleapc__stage_keep_head(&bm->stage, CLASS_HEAD, false) ? -1 : 1;
    sleapc_status st = sleapc__bottomup_stage_peaks(
        &bm->stage, &bm->peaks, frames, b, c, h, w, bm->threshold, bm->refine_k, CLASS_HEAD,
        bm->sample_on_device ? &bm->maps_kept : NULL, &cms, &cls);
    if (!st && cls->shape[1] != bm->n_classes)
        st = sleapc__fail(SLEAPC_ERR_BACKEND, "class maps have %lld channels, the config %lld classes",
                          (long long)cls->shape[1], (long long)bm->n_classes);
    const int cls_stride = sleapc__stage_head_stride(&bm->stage, CLASS_HEAD);
    if (!st && bm->sample_on_device)
        st = sample_on_device(bm, cls, cls_stride, &bm->cls_sampled);
    if (!st && !bm->cls_sampled)
        st = sleapc__stage_head_maps(&bm->stage, CLASS_HEAD, &cls); /* kept: fetched */
    bm->cls = st ? NULL : cls;
    return st;
}

/* The host's part of the batch bumc_device prepared: classes, instances. */
static sleapc_status bumc_host(bumc_layer *bm, int64_t b, sleapc_layer_outputs *out)
{
    const sleapc_tensor *cls = bm->cls;
    if (!cls)
        return sleapc__fail(SLEAPC_ERR_STATE, "multi-class bottom-up: no batch collected");
    sleapc_status st = sleapc__layer_outputs_reset(out, b, bm->n_classes, bm->n_nodes,
                                                   bm->n_classes);
    size_t need = (size_t)(b * bm->n_classes * bm->n_nodes) * sizeof(float);
    if (!st && need > bm->probs_cap) {
        sleapc__free(bm->class_probs);
        bm->class_probs = sleapc__malloc(need);
        bm->probs_cap = bm->class_probs ? need : 0;
        if (!bm->class_probs)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    if (st)
        return st;
    const sleapc_peak_list *pk = &bm->peaks;
    const int cls_stride = sleapc__stage_head_stride(&bm->stage, CLASS_HEAD);
    const sleapc_convention *cv = bm->stage.convention;
    if (bm->cls_sampled)
        st = sleapc__identity_classify_sampled(
            bm->sampled, b, bm->n_classes, cls->shape[2], cls->shape[3], cls_stride, pk->peaks,
            pk->vals, pk->sample_inds, pk->channel_inds, pk->n, bm->n_nodes, &bm->ws,
            out->keypoints, out->peak_values, bm->class_probs);
    else
        st = cv->classify_peaks(cls->data, b, bm->n_classes, cls->shape[2], cls->shape[3],
                                cls_stride, pk->peaks, pk->vals, pk->sample_inds,
                                pk->channel_inds, pk->n, bm->n_nodes, &bm->ws, out->keypoints,
                                out->peak_values, bm->class_probs);
    bm->cls = NULL;
    const sleapc_preprocess_plan *pl = &bm->stage.plan;
    for (int64_t s = 0; s < b; s++)
        out->eff_scale[s] = (float)pl->eff_scale;
    /* The input scale is undone here, the size-matcher scale by the finish
     * (SLEAP 1.x: by the predictor, Predictor._predict_generator). */
    if (!st)
        cv->undo_input_scale(out->keypoints, b * bm->n_classes * bm->n_nodes, pl->opts.scale);
    const int64_t max_instances = cv->multiclass_max_instances ? bm->max_instances : 0;
    if (!st)
        st = sleapc__identity_bottomup_finish(b, bm->n_classes, bm->n_nodes, 1.0f,
                                              out->eff_scale, max_instances, &bm->ws,
                                              out->keypoints, out->peak_values, bm->class_probs,
                                              out->instance_scores, out->tracking_scores);
    if (st)
        return st;
    out->has_instance_scores = true;
    out->has_classes = true;
    for (int64_t s = 0; s < b; s++)
        for (int64_t k = 0; k < bm->n_classes; k++)
            out->class_inds[s * bm->n_classes + k] = (int32_t)k;  /* slot == class */
    return SLEAPC_OK;
}

static sleapc_status bumc_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                              int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    bumc_layer *bm = l->impl;
    sleapc_status st = bumc_device(bm, frames, b, c, h, w);
    return st ? st : bumc_host(bm, b, out);
}

/* The run in steps (layer.h): the peaks and class vectors need the device,
 * so collect does them. */
static sleapc_stage *bumc_stage(sleapc_layer *l)
{
    return &((bumc_layer *)l->impl)->stage;
}

static bool bumc_asked(const sleapc_layer *l)
{
    return ((const bumc_layer *)l->impl)->peaks.device != 0;
}

static sleapc_status bumc_collect(sleapc_layer *l, int64_t b)
{
    sleapc_status st = sleapc__stage_collect(bumc_stage(l));
    return st ? st : bumc_device(l->impl, NULL, b, 0, 0, 0);
}

static sleapc_status bumc_finish(sleapc_layer *l, int64_t b, sleapc_layer_outputs *out)
{
    return bumc_host(l->impl, b, out);
}

static void bumc_destroy(sleapc_layer *l)
{
    bumc_layer *bm = l->impl;
    sleapc__stage_free(&bm->stage);
    sleapc__peak_list_free(&bm->peaks);
    sleapc__free(bm->class_probs);
    sleapc__identity_ws_free(&bm->ws);
    sleapc__free(bm->cells);
    sleapc__free(bm->sampled);
    sleapc__free(bm);
}

static int bumc_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const bumc_layer *bm = l->impl;
    out[0] = sleapc__stage_info(&bm->stage);
    return 1;
}

static const struct sleapc_layer_ops bumc_ops = {
    .name = "BottomUpMultiClassLayer", .run = bumc_run, .destroy = bumc_destroy,
    .stages = bumc_stages, .stage = bumc_stage, .asked = bumc_asked, .collect = bumc_collect,
    .finish = bumc_finish};

sleapc_status sleapc__bottomup_multiclass_layer_create(const sleapc_model *m,
                                                       const sleapc_predictor_opts *o,
                                                       sleapc_layer **out)
{
    bumc_layer *bm = sleapc__calloc(1, sizeof *bm);
    if (!bm)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    bm->base.ops = &bumc_ops;
    bm->base.impl = bm;
    bm->threshold = o->peak_threshold;
    bm->refine_k = sleapc__layer_refine_k(o);
    bm->max_instances = o->max_instances;
    bm->n_nodes = m->cfg.n_part_names;
    bm->n_classes = m->cfg.n_classes;
    sleapc_status st = SLEAPC_OK;
    if (bm->n_classes < 1)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: multi_class_bottomup config lists no classes",
                          m->dir);
    sleapc_preprocess_opts pp = sleapc__layer_preprocess_opts(m, o, true);
    if (!st)
        st = sleapc__stage_init(&bm->stage, m, o, &pp);
    if (st) {
        bumc_destroy(&bm->base);
        return st;
    }
    /* The device reads the class maps as classify_peaks reads them where
     * that is sleap-nn's clamped look-up (identity.h); SLEAP 1.x's reads
     * on the host. */
    bm->sample_on_device = bm->stage.convention->classify_peaks == sleapc__identity_classify_peaks;
    *out = &bm->base;
    return SLEAPC_OK;
}
