/* CentroidLayer used alone ("animals as points", sleap-nn layers/centroid.py).
 * Each centroid becomes an instance whose anchor node (anchor_part, else the
 * first node) holds the centroid; its score is the centroid value. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/centroid_finder.h"
#include "layers/layer.h"

typedef struct centroid_layer {
    sleapc_layer base;
    sleapc_centroid_finder finder;
    int64_t n_nodes;
    int64_t anchor;
} centroid_layer;

/* Each centroid an instance (found: the finder's outputs of b frames). */
static void centroid_instances(centroid_layer *cl, int64_t b, sleapc_layer_outputs *out)
{
    out->centroid_only = true;
    out->has_instance_scores = true;
    for (int64_t k = 0; k < b * out->n_slots; k++) {
        float *kp = out->keypoints + (k * cl->n_nodes + cl->anchor) * 2;
        kp[0] = out->centroids[2 * k];
        kp[1] = out->centroids[2 * k + 1];
        out->peak_values[k * cl->n_nodes + cl->anchor] = out->centroid_values[k];
        out->instance_scores[k] = out->centroid_values[k];
    }
}

static sleapc_status centroid_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                                  int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    centroid_layer *cl = l->impl;
    sleapc_status st = sleapc__centroid_finder_run(&cl->finder, frames, b, c, h, w, cl->n_nodes, 0,
                                                   out);
    if (!st)
        centroid_instances(cl, b, out);
    return st;
}

/* The run in steps (layer.h). */
static sleapc_stage *centroid_stage(sleapc_layer *l)
{
    return &((centroid_layer *)l->impl)->finder.stage;
}

static bool centroid_asked(const sleapc_layer *l)
{
    return ((const centroid_layer *)l->impl)->finder.device != 0;
}

static sleapc_status centroid_collect(sleapc_layer *l, int64_t b)
{
    (void)b;
    return sleapc__stage_collect(centroid_stage(l));
}

static sleapc_status centroid_finish(sleapc_layer *l, int64_t b, sleapc_layer_outputs *out)
{
    centroid_layer *cl = l->impl;
    sleapc_status st = sleapc__centroid_finder_finish(&cl->finder, b, cl->n_nodes, 0, out);
    if (!st)
        centroid_instances(cl, b, out);
    return st;
}

static void centroid_destroy(sleapc_layer *l)
{
    centroid_layer *cl = l->impl;
    sleapc__centroid_finder_free(&cl->finder);
    sleapc__free(cl);
}

static int centroid_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const centroid_layer *cl = l->impl;
    out[0] = sleapc__stage_info(&cl->finder.stage);
    return 1;
}

static const struct sleapc_layer_ops centroid_ops = {
    .name = "CentroidLayer", .run = centroid_run, .destroy = centroid_destroy,
    .stages = centroid_stages, .stage = centroid_stage, .asked = centroid_asked,
    .collect = centroid_collect, .finish = centroid_finish};

sleapc_status sleapc__centroid_layer_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                            sleapc_layer **out)
{
    centroid_layer *cl = sleapc__calloc(1, sizeof *cl);
    if (!cl)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    cl->base.ops = &centroid_ops;
    cl->base.impl = cl;
    const sleapc_skeleton_config *sk = &m->cfg.skeleton;
    cl->n_nodes = sk->n_nodes > 0 ? sk->n_nodes : 1;
    /* --anchor_part overrides the config's; a name the skeleton lacks is an
     * error only when the user gave it. */
    const char *part = o->anchor_part ? o->anchor_part : m->cfg.anchor_part;
    bool found = false;
    for (int i = 0; part && i < sk->n_nodes; i++)
        if (strcmp(sk->node_names[i], part) == 0) {
            cl->anchor = i;
            found = true;
        }
    if (o->anchor_part && !found) {
        sleapc__free(cl);
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%s: anchor part \"%s\" is not a node of the "
                            "skeleton", m->dir, o->anchor_part);
    }
    double thr = o->centroid_peak_threshold == o->centroid_peak_threshold
                     ? o->centroid_peak_threshold
                     : o->peak_threshold;
    sleapc_status st = sleapc__centroid_finder_init(&cl->finder, m, o, thr);
    if (st) {
        centroid_destroy(&cl->base);
        return st;
    }
    *out = &cl->base;
    return SLEAPC_OK;
}
