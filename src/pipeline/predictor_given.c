/* A lone centered-instance model on a labels file: the predictor swaps its
 * layer for a top-down layer whose stage 1 makes centroids of the labels'
 * instances (sleap-nn 0.3.5 predictor.py: a centered_instance model alone
 * builds TopDownLayer(_build_centroid_layer_gt_only(...), ...)). */
#include <string.h>

#include "core/error.h"
#include "pipeline/predictor_impl.h"

bool sleapc__predictor_takes_given(const sleapc_predictor *p)
{
    const sleapc_model *m = p->models[0];
    return p->n_models == 1 && !m->baked &&
           m->cfg.model_type == SLEAPC_MODEL_TYPE_CENTERED_INSTANCE;
}

static void swap(sleapc_predictor *p)
{
    sleapc_layer *l = p->layer;
    p->layer = p->other;
    p->other = l;
    p->given = !p->given;
}

sleapc_status sleapc__predictor_given_begin(sleapc_predictor *p)
{
    if (p->given)
        return SLEAPC_OK;
    if (!sleapc__predictor_takes_given(p))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "predict: only a centered-instance model "
                            "alone crops around given instances");
    if (!p->other) {
        sleapc_status st = sleapc__topdown_layer_create(NULL, p->models[0], &p->opts, &p->other);
        if (st)
            return st;
    }
    swap(p);
    return SLEAPC_OK;
}

void sleapc__predictor_given_end(sleapc_predictor *p)
{
    if (p->given)
        swap(p);
}

sleapc_status sleapc__predictor_give_instances(sleapc_predictor *p, const float *points,
                                               int64_t b, int64_t slots, int64_t n_nodes)
{
    return sleapc__layer_given_instances(p->layer, points, b, slots, n_nodes);
}

sleapc_status sleapc__predictor_crops_only(const sleapc_predictor *p, int64_t h, int64_t w,
                                           const char *what)
{
    const char *layer = sleapc__predictor_layer_name(p);
    if (strcmp(layer, "CenteredInstanceLayer") != 0 &&
        strcmp(layer, "ExportedCenteredInstanceLayer") != 0)
        return SLEAPC_OK;
    int crop = p->opts.crop_size > 0 ? p->opts.crop_size : p->models[0]->cfg.crop_size;
    if (crop <= 0 || (h <= crop && w <= crop))
        return SLEAPC_OK;
    return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                        "%s: a centered-instance model alone predicts on crops of %dx%d, or on "
                        "a labels file around its instances; these frames are %lldx%lld. Give "
                        "the centroid model too (-m CENTROID_DIR -m CENTERED_INSTANCE_DIR)",
                        what, crop, crop, (long long)h, (long long)w);
}
