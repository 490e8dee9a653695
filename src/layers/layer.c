/* Layer selection (sleap-nn inference/predictor.py:_select_layer) and the
 * helpers every layer shares. */
#include "layers/layer.h"

#include <math.h>

#include "core/error.h"
#include "layers/bbox.h"
#include "layers/convention.h"
#include "layers/exported.h"
#include "layers/stage.h"
#include "layers/topdown_pair.h"

sleapc_preprocess_opts sleapc__layer_preprocess_opts(const sleapc_model *m,
                                                     const sleapc_predictor_opts *o, bool full)
{
    return sleapc__convention_of(m)->preprocess_opts(m, o, full);
}

int sleapc__layer_refine_k(const sleapc_predictor_opts *o)
{
    return o->integral_refinement ? o->integral_patch_size : 0;
}

bool sleapc__layer_can_overlap(sleapc_layer *l)
{
    const struct sleapc_layer_ops *o = l->ops;
    return o->stage && o->asked && o->collect && o->finish && sleapc__stage_overlap_on(o->stage(l));
}

bool sleapc__layer_can_begin(sleapc_layer *l, int64_t c, int64_t h, int64_t w)
{
    return sleapc__layer_can_overlap(l) && l->ops->asked(l) &&
           sleapc__stage_async(l->ops->stage(l), c, h, w);
}

sleapc_status sleapc__layer_begin(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                                  int64_t h, int64_t w)
{
    return sleapc__stage_begin(l->ops->stage(l), frames, b, c, h, w);
}

sleapc_status sleapc__layer_collect(sleapc_layer *l, int64_t b)
{
    return l->ops->collect(l, b);
}

sleapc_status sleapc__layer_finish(sleapc_layer *l, int64_t b, sleapc_layer_outputs *out)
{
    return l->ops->finish(l, b, out);
}

void sleapc__layer_drop(sleapc_layer *l)
{
    if (l->ops->stage)
        sleapc__stage_drain(l->ops->stage(l));
}

sleapc_status sleapc__layer_create(sleapc_model *const *models, int n_models,
                                   const sleapc_predictor_opts *o, sleapc_layer **out)
{
    *out = NULL;
    /* A tiled model never runs untiled: the tiled layer takes it or refuses
     * it (exports, SLEAP 1.x models, other model types). */
    for (int i = 0; i < n_models && n_models > 1; i++)
        if (models[i]->cfg.tiling.enabled)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "%s: data_config.preprocessing.tiling.enabled: a tiled model runs "
                                "alone (sleap-nn tiles single-instance models only)",
                                models[i]->cfg.source_path ? models[i]->cfg.source_path
                                                           : models[i]->dir);
    if (n_models == 1 && models[0]->cfg.tiling.enabled)
        return sleapc__tiled_layer_create(models[0], o, out);
    for (int i = 0; i < n_models && n_models > 1; i++)
        if (models[i]->baked)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "%s: an exported model.onnx runs alone (a top-down export holds "
                                "both stages in one graph); give only that folder",
                                models[i]->dir);
    if (n_models == 1 && models[0]->baked)
        return sleapc__exported_layer_create(models[0], o, out);
    if (n_models == 1) {
        const sleapc_model *m = models[0];
        switch (m->cfg.model_type) {
        case SLEAPC_MODEL_TYPE_SINGLE_INSTANCE:
            return sleapc__single_instance_layer_create(m, o, out);
        case SLEAPC_MODEL_TYPE_CENTROID:
            return sleapc__centroid_layer_create(m, o, out);
        case SLEAPC_MODEL_TYPE_CENTERED_INSTANCE:
            if (m->cfg.crop_bbox)
                return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                    "%s: preprocessing.crop_mode: bbox crops each instance's "
                                    "box: give a bbox_centernet / bbox_ssd detector too (-m "
                                    "DETECTOR -m %s); sleap-nn's ground-truth boxes of a labels "
                                    "file are not run",
                                    m->dir, m->dir);
            return sleapc__centered_instance_layer_create(m, o, out);
        case SLEAPC_MODEL_TYPE_BOTTOMUP:
            return sleapc__bottomup_layer_create(m, o, out);
        case SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP:
            return sleapc__bottomup_multiclass_layer_create(m, o, out);
        case SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN:
            return sleapc__fail(
                SLEAPC_ERR_INVALID_ARG,
                "%s: a multi_class_topdown model needs a centroid model too (give two -m folders)",
                m->dir);
        case SLEAPC_MODEL_TYPE_BBOX_CENTERNET:
        case SLEAPC_MODEL_TYPE_BBOX_SSD:
            return sleapc__bbox_layer_create(m, o, o->bbox_nms_iou, out);
        case SLEAPC_MODEL_TYPE_EMBEDDING:
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "%s is an embedding (re-ID) model: it embeds the detections "
                                "of a .slp, or of detection models beside it (sleapc predict "
                                "--data_path DETECTIONS.slp -m %s with --save_embeddings slp "
                                "to persist the vectors or --tracking to track by them; "
                                "sleapc_embed_detections, sleapc_embed_and_track)",
                                m->dir, m->dir);
        case SLEAPC_MODEL_TYPE_UNKNOWN:
            break;
        }
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: unknown model type", m->dir);
    }
    if (n_models == 2) {
        /* Either order: stage 1 (a centroid model or a box detector) first. */
        const sleapc_model *a = models[0], *b = models[1];
        if (!sleapc__topdown_is_stage1(a)) {
            const sleapc_model *t = a;
            a = b;
            b = t;
        }
        if (sleapc__topdown_is_stage1(a) && sleapc__topdown_is_stage2(b)) {
            sleapc_status st = sleapc__topdown_pair_check(a, b);
            return st ? st : sleapc__topdown_layer_create(a, b, o, out);
        }
        return sleapc__fail(
            SLEAPC_ERR_INVALID_ARG,
            "models %s (%s) and %s (%s) do not form a top-down pair: give a centroid "
            "model or a bbox_centernet / bbox_ssd detector, and a centered_instance "
            "or multi_class_topdown model",
            models[0]->dir, sleapc__model_type_name(models[0]->cfg.model_type), models[1]->dir,
            sleapc__model_type_name(models[1]->cfg.model_type));
    }
    return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "give one or two model folders, not %d", n_models);
}

void sleapc__layer_destroy(sleapc_layer *l)
{
    if (l)
        l->ops->destroy(l);
}

sleapc_status sleapc__layer_given_instances(sleapc_layer *l, const float *points, int64_t b,
                                            int64_t slots, int64_t n_nodes)
{
    if (!l->ops->given_instances)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "%s takes no given instances", l->ops->name);
    return l->ops->given_instances(l, points, b, slots, n_nodes);
}
