/* Layer selection (sleap-nn inference/predictor.py:_select_layer) and the
 * helpers every layer shares. */
#include "layers/layer.h"

#include <math.h>

#include "core/error.h"
#include "layers/exported.h"

/* SLEAP 1.x (inference.py): colour always follows the model's input channels
 * (Predictor.is_grayscale, InferenceLayer.ensure_grayscale), the size matcher
 * runs only with resize_and_pad_to_target, and the centroid stage pads to its
 * config's pad_to_stride (TopDownPredictor) where the other models pad to the
 * backbone's maximum stride. A pad that the backbone could not take falls
 * back to the maximum stride (SLEAP would fail there). */
static sleapc_preprocess_opts legacy_opts(const sleapc_model *m, const sleapc_predictor_opts *o,
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

sleapc_preprocess_opts sleapc__layer_preprocess_opts(const sleapc_model *m,
                                                     const sleapc_predictor_opts *o, bool full)
{
    if (m->cfg.legacy)
        return legacy_opts(m, o, full);
    const sleapc_model_config *c = &m->cfg;
    sleapc_preprocess_opts pp = {0};
    pp.scale = o->input_scale > 0 ? o->input_scale : c->scale;
    pp.max_stride = m->graph.max_stride;
    if (full) {
        pp.ensure_rgb = o->ensure_rgb >= 0 ? o->ensure_rgb != 0 : c->ensure_rgb;
        pp.ensure_grayscale = o->ensure_grayscale >= 0 ? o->ensure_grayscale != 0 : c->ensure_grayscale;
        pp.max_height = o->max_height > 0 ? o->max_height : c->max_height;
        pp.max_width = o->max_width > 0 ? o->max_width : c->max_width;
    }
    return pp;
}

int sleapc__layer_refine_k(const sleapc_predictor_opts *o)
{
    return o->integral_refinement ? o->integral_patch_size : 0;
}

static bool is_type(const sleapc_model *m, sleapc_model_type t)
{
    return m->cfg.model_type == t;
}

sleapc_status sleapc__layer_create(sleapc_model *const *models, int n_models,
                                   const sleapc_predictor_opts *o, sleapc_layer **out)
{
    *out = NULL;
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
            return sleapc__centered_instance_layer_create(m, o, out);
        case SLEAPC_MODEL_TYPE_BOTTOMUP:
            return sleapc__bottomup_layer_create(m, o, out);
        case SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP:
            return sleapc__bottomup_multiclass_layer_create(m, o, out);
        case SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN:
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "%s: a multi_class_topdown model needs a centroid model too (give two -m folders)",
                                m->dir);
        case SLEAPC_MODEL_TYPE_UNKNOWN:
            break;
        }
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: unknown model type", m->dir);
    }
    if (n_models == 2) {
        const sleapc_model *a = models[0], *b = models[1];
        if (!is_type(a, SLEAPC_MODEL_TYPE_CENTROID)) {
            const sleapc_model *t = a;
            a = b;
            b = t;
        }
        if (is_type(a, SLEAPC_MODEL_TYPE_CENTROID) &&
            (is_type(b, SLEAPC_MODEL_TYPE_CENTERED_INSTANCE) ||
             is_type(b, SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN)))
            return sleapc__topdown_layer_create(a, b, o, out);
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "models %s (%s) and %s (%s) do not form a top-down pair: give a centroid "
                            "model and a centered_instance or multi_class_topdown model",
                            models[0]->dir, sleapc__model_type_name(models[0]->cfg.model_type),
                            models[1]->dir, sleapc__model_type_name(models[1]->cfg.model_type));
    }
    return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "give one or two model folders, not %d", n_models);
}

void sleapc__layer_destroy(sleapc_layer *l)
{
    if (l)
        l->ops->destroy(l);
}
