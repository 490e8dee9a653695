/* The exported adapters that only translate (sleap-nn layers/exported.py:
 * ExportedSingleInstanceLayer, ExportedCenteredInstanceLayer,
 * ExportedCentroidLayer, ExportedTopDownLayer): the graph's peaks are already
 * in frame pixels; invalid slots become NaN. As in sleap-nn, no instance
 * scores come with them, so an instance's score is the NaN-ignoring sum of
 * its node values (a standalone centroid's is its value). The standalone
 * multi_class_topdown export (class vectors on crops), which sleap-nn routes
 * to an adapter expecting centroids and so cannot run, is read here as a
 * centered-instance model plus the best class of each crop. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/exported.h"

typedef struct points_layer {
    sleapc_layer base;
    sleapc_exported_stage stage;
    sleapc_export_kind kind;
    int64_t n_nodes;
    int64_t n_classes;  /* multi_class_topdown only */
    int64_t anchor;     /* centroid only: the node that holds the centroid */
} points_layer;

static bool valid_at(const sleapc_tensor *valid, int64_t k)
{
    return ((const uint8_t *)valid->data)[k] != 0;
}

/* (B, N, 2) peaks of one instance per frame (single / centered instance,
 * multi-class crops). */
static sleapc_status run_instances(points_layer *pl, int64_t b, sleapc_layer_outputs *out)
{
    const int64_t N = pl->n_nodes, C = pl->n_classes;
    const sleapc_tensor *peaks, *vals, *cls = NULL;
    sleapc_status st = sleapc__exported_stage_output(&pl->stage, "peaks", SLEAPC_DTYPE_F32, 3,
                                                     (int64_t[]){b, N, 2}, &peaks);
    if (!st)
        st = sleapc__exported_stage_output(&pl->stage, "peak_vals", SLEAPC_DTYPE_F32, 2,
                                           (int64_t[]){b, N}, &vals);
    if (!st && C > 0)
        st = sleapc__exported_stage_output(&pl->stage, "class_logits", SLEAPC_DTYPE_F32, 2,
                                           (int64_t[]){b, C}, &cls);
    if (!st)
        st = sleapc__layer_outputs_reset(out, b, 1, N, C);
    if (st)
        return st;
    memcpy(out->keypoints, peaks->data, (size_t)(b * N * 2) * sizeof(float));
    memcpy(out->peak_values, vals->data, (size_t)(b * N) * sizeof(float));
    if (!cls)
        return SLEAPC_OK;
    /* One crop per frame: the assignment of a single row is its best class
     * (the first of equal ones); class_logits already are probabilities. */
    out->has_classes = true;
    for (int64_t s = 0; s < b; s++) {
        const float *p = (const float *)cls->data + s * C;
        int64_t best = 0;
        for (int64_t k = 1; k < C; k++)
            best = p[k] > p[best] ? k : best;
        out->class_inds[s] = (int32_t)best;
        out->tracking_scores[s] = p[best];
    }
    return SLEAPC_OK;
}

/* Centroids (B, I, 2) with instance_valid; top-down adds (B, I, N, 2) peaks. */
static sleapc_status run_centroids(points_layer *pl, int64_t b, sleapc_layer_outputs *out)
{
    const bool topdown = pl->kind == SLEAPC_EXPORT_TOPDOWN;
    const int64_t N = pl->n_nodes;
    const sleapc_tensor *cen, *cvals, *valid, *peaks = NULL, *vals = NULL;
    sleapc_status st = sleapc__exported_stage_output(&pl->stage, "centroids", SLEAPC_DTYPE_F32, 3,
                                                     (int64_t[]){b, -1, 2}, &cen);
    const int64_t I = st ? 0 : cen->shape[1];
    if (!st)
        st = sleapc__exported_stage_output(&pl->stage, "centroid_vals", SLEAPC_DTYPE_F32, 2,
                                           (int64_t[]){b, I}, &cvals);
    if (!st)
        st = sleapc__exported_stage_output(&pl->stage, "instance_valid", SLEAPC_DTYPE_U8, 2,
                                           (int64_t[]){b, I}, &valid);
    if (!st && topdown)
        st = sleapc__exported_stage_output(&pl->stage, "peaks", SLEAPC_DTYPE_F32, 4,
                                           (int64_t[]){b, I, N, 2}, &peaks);
    if (!st && topdown)
        st = sleapc__exported_stage_output(&pl->stage, "peak_vals", SLEAPC_DTYPE_F32, 3,
                                           (int64_t[]){b, I, N}, &vals);
    if (!st)
        st = sleapc__layer_outputs_reset(out, b, I > 0 ? I : 1, N, 0);
    if (st || I == 0)
        return st;
    out->has_centroids = true;
    out->centroid_only = !topdown;
    out->has_instance_scores = !topdown;
    const float *c = cen->data, *cv = cvals->data;
    for (int64_t k = 0; k < b * I; k++) {
        if (!valid_at(valid, k))
            continue;  /* left NaN: the Outputs convention for invalid slots */
        out->centroids[2 * k] = c[2 * k];
        out->centroids[2 * k + 1] = c[2 * k + 1];
        out->centroid_values[k] = cv[k];
        if (topdown) {
            memcpy(out->keypoints + k * N * 2, (const float *)peaks->data + k * N * 2,
                   (size_t)N * 2 * sizeof(float));
            memcpy(out->peak_values + k * N, (const float *)vals->data + k * N,
                   (size_t)N * sizeof(float));
        } else {
            out->keypoints[(k * N + pl->anchor) * 2] = c[2 * k];
            out->keypoints[(k * N + pl->anchor) * 2 + 1] = c[2 * k + 1];
            out->peak_values[k * N + pl->anchor] = cv[k];
            out->instance_scores[k] = cv[k];
        }
    }
    return SLEAPC_OK;
}

static sleapc_status points_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                                int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    points_layer *pl = l->impl;
    sleapc_status st = sleapc__exported_stage_run(&pl->stage, frames, b, c, h, w);
    if (st)
        return st;
    bool centroids = pl->kind == SLEAPC_EXPORT_CENTROID || pl->kind == SLEAPC_EXPORT_TOPDOWN;
    st = centroids ? run_centroids(pl, b, out) : run_instances(pl, b, out);
    if (st)
        return st;
    for (int64_t s = 0; s < b; s++)
        out->eff_scale[s] = 1.0f;  /* no size matcher on this path */
    return SLEAPC_OK;
}

static void points_destroy(sleapc_layer *l)
{
    points_layer *pl = l->impl;
    sleapc__exported_stage_free(&pl->stage);
    sleapc__free(pl);
}

/* sleap-nn's class names, by export kind. */
static int points_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const points_layer *pl = l->impl;
    out[0] = sleapc__exported_stage_info(&pl->stage);
    return 1;
}

static const struct sleapc_layer_ops single_ops = {
    .name = "ExportedSingleInstanceLayer", .run = points_run, .destroy = points_destroy,
    .stages = points_stages};
static const struct sleapc_layer_ops centered_ops = {
    .name = "ExportedCenteredInstanceLayer", .run = points_run, .destroy = points_destroy,
    .stages = points_stages};
static const struct sleapc_layer_ops centroid_ops = {
    .name = "ExportedCentroidLayer", .run = points_run, .destroy = points_destroy,
    .stages = points_stages};
static const struct sleapc_layer_ops topdown_ops = {
    .name = "ExportedTopDownLayer", .run = points_run, .destroy = points_destroy,
    .stages = points_stages};

/* ExportedCentroidLayer's anchor: anchor_part's index in the node names,
 * node 0 when the export names none. */
static sleapc_status find_anchor(const sleapc_model *m, const sleapc_predictor_opts *o,
                                 int64_t *anchor)
{
    const sleapc_skeleton_config *sk = &m->cfg.skeleton;
    const char *part = m->export_meta.anchor_part ? m->export_meta.anchor_part : m->cfg.anchor_part;
    if (o->anchor_part)
        part = o->anchor_part;
    *anchor = 0;
    if (!part)
        return SLEAPC_OK;
    for (int i = 0; i < sk->n_nodes; i++)
        if (strcmp(sk->node_names[i], part) == 0) {
            *anchor = i;
            return SLEAPC_OK;
        }
    return sleapc__fail(SLEAPC_ERR_FORMAT, "%s: anchor part \"%s\" is not a node of the skeleton",
                        m->dir, part);
}

sleapc_status sleapc__exported_points_layer_create(const sleapc_model *m,
                                                   const sleapc_predictor_opts *o,
                                                   sleapc_layer **out)
{
    points_layer *pl = sleapc__calloc(1, sizeof *pl);
    if (!pl)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    pl->base.impl = pl;
    pl->kind = m->export_meta.kind;
    pl->base.ops = pl->kind == SLEAPC_EXPORT_SINGLE_INSTANCE ? &single_ops
                   : pl->kind == SLEAPC_EXPORT_CENTROID      ? &centroid_ops
                   : pl->kind == SLEAPC_EXPORT_TOPDOWN       ? &topdown_ops
                                                             : &centered_ops;
    pl->n_nodes = sleapc__model_n_nodes(m);
    if (pl->n_nodes < 1)
        pl->n_nodes = 1;
    static const char *const instance_outputs[] = {"peaks", "peak_vals", NULL};
    static const char *const class_outputs[] = {"peaks", "peak_vals", "class_logits", NULL};
    static const char *const centroid_outputs[] = {"centroids", "centroid_vals", "instance_valid",
                                                   NULL};
    static const char *const topdown_outputs[] = {"centroids", "centroid_vals", "peaks",
                                                  "peak_vals", "instance_valid", NULL};
    const char *const *outputs = instance_outputs;
    sleapc_status st = SLEAPC_OK;
    if (pl->kind == SLEAPC_EXPORT_MULTI_CLASS_TOPDOWN) {
        outputs = class_outputs;
        pl->n_classes = m->cfg.n_classes;
        if (pl->n_classes < 1)
            st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: multi_class_topdown export lists no classes",
                              m->dir);
    } else if (pl->kind == SLEAPC_EXPORT_CENTROID) {
        outputs = centroid_outputs;
        st = find_anchor(m, o, &pl->anchor);
    } else if (pl->kind == SLEAPC_EXPORT_TOPDOWN) {
        outputs = topdown_outputs;
    }
    if (!st)
        st = sleapc__exported_stage_init(&pl->stage, m, o, outputs);
    if (st) {
        points_destroy(&pl->base);
        return st;
    }
    *out = &pl->base;
    return SLEAPC_OK;
}
