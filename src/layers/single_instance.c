/* SingleInstanceLayer (sleap-nn layers/single_instance.py): one global peak
 * per node. The standalone CenteredInstanceLayer (layers/centered_instance.py)
 * is the same computation on frames that already are crops: it applies only
 * the input scale and the stride pad. Peaks, the input-scale step and
 * scores follow the model's convention (SLEAP 1.x's
 * SingleInstanceInferenceLayer / FindInstancePeaks in sleap/nn/inference.py:
 * SLEAP's refinement, "+ 0.5" after the input scale, and the instance score
 * of SingleInstancePredictor, the sum of every node's peak value, those
 * below the threshold included). A backend that finds global peaks as
 * sleap-nn's peaks.c does (backend.h: device_global_peaks) returns the peaks
 * instead of the maps. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/layer.h"
#include "layers/ops/coords.h"
#include "layers/stage.h"
#include "layers/stage_local_peaks.h"

typedef struct global_layer {
    sleapc_layer base;
    sleapc_stage stage;
    const char *head;   /* confidence-map head name */
    double threshold;
    int refine_k;
    bool device_peaks;  /* the backend finds the peaks (backend.h) */
    bool asked;         /* device_peaks was asked for (once the stage may) */
    int64_t n_nodes;    /* the head's channels, for device_peaks */
} global_layer;

/* Peaks (in map cells) of the maps the last run brought back. */
static sleapc_status host_peaks(global_layer *g, int64_t b, sleapc_layer_outputs *out)
{
    const sleapc_tensor *cms = NULL;
    sleapc_status st = sleapc__stage_head(&g->stage, g->head, false, &cms);
    if (!st)
        st = sleapc__layer_outputs_reset(out, b, 1, cms->shape[1], 0);
    if (st)
        return st;
    return g->stage.convention->find_global(cms->data, b, cms->shape[1], cms->shape[2],
                                            cms->shape[3], g->threshold, g->refine_k,
                                            out->keypoints, out->peak_values);
}

/* The peaks the backend found (map cells, as host_peaks finds them). */
static sleapc_status device_peaks(global_layer *g, int64_t b, sleapc_layer_outputs *out)
{
    const float *pk = NULL, *v = NULL;
    int64_t n = g->n_nodes;
    sleapc_status st = sleapc__stage_device_peaks(&g->stage, b, n, &pk, &v);
    if (!st)
        st = sleapc__layer_outputs_reset(out, b, 1, n, 0);
    if (st)
        return st;
    memcpy(out->keypoints, pk, (size_t)(b * n * 2) * sizeof(float));
    memcpy(out->peak_values, v, (size_t)(b * n) * sizeof(float));
    return SLEAPC_OK;
}

/* The post-processing of the last run (or collected batch) of b frames. */
static sleapc_status global_finish(sleapc_layer *l, int64_t b, sleapc_layer_outputs *out)
{
    global_layer *g = l->impl;
    sleapc_status st = g->device_peaks ? device_peaks(g, b, out) : host_peaks(g, b, out);
    if (st)
        return st;
    int64_t n = out->n_nodes;
    const sleapc_convention *cv = g->stage.convention;
    /* Ladder (ops/coord.py): stride, input scale, eff scale. */
    const sleapc_preprocess_plan *pl = &g->stage.plan;
    sleapc__coords_undo_stride(out->keypoints, b * n, sleapc__stage_head_stride(&g->stage, g->head));
    cv->undo_input_scale(out->keypoints, b * n, pl->opts.scale);
    cv->global_scores(out, b, n);
    for (int64_t k = 0; k < b; k++) {
        sleapc__coords_undo_eff_scale(out->keypoints + k * n * 2, n, pl->eff_scale);
        out->eff_scale[k] = (float)pl->eff_scale;
    }
    return SLEAPC_OK;
}

static sleapc_status global_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                                int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    global_layer *g = l->impl;
    /* Asked before a run, after a reduced precision's first-batch check. */
    if (!g->asked && sleapc__stage_device_local_peaks_due(&g->stage)) {
        g->asked = true;
        g->device_peaks =
            sleapc__stage_device_global_peaks(&g->stage, g->head, g->threshold, g->refine_k);
    }
    sleapc_status st = sleapc__stage_run(&g->stage, frames, b, c, h, w);
    return st ? st : global_finish(l, b, out);
}

/* The run in steps (layer.h). */
static sleapc_stage *global_stage(sleapc_layer *l)
{
    return &((global_layer *)l->impl)->stage;
}

static bool global_asked(const sleapc_layer *l)
{
    return ((const global_layer *)l->impl)->asked;
}

static sleapc_status global_collect(sleapc_layer *l, int64_t b)
{
    (void)b;
    return sleapc__stage_collect(global_stage(l));
}

static void global_destroy(sleapc_layer *l)
{
    global_layer *g = l->impl;
    sleapc__stage_free(&g->stage);
    sleapc__free(g);
}

static int global_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const global_layer *g = l->impl;
    out[0] = sleapc__stage_info(&g->stage);
    return 1;
}

static const struct sleapc_layer_ops single_instance_ops = {
    .name = "SingleInstanceLayer", .run = global_run, .destroy = global_destroy,
    .stages = global_stages, .stage = global_stage, .asked = global_asked,
    .collect = global_collect, .finish = global_finish};
static const struct sleapc_layer_ops centered_instance_ops = {
    .name = "CenteredInstanceLayer", .run = global_run, .destroy = global_destroy,
    .stages = global_stages, .stage = global_stage, .asked = global_asked,
    .collect = global_collect, .finish = global_finish};

static sleapc_status create(const sleapc_model *m, const sleapc_predictor_opts *o, bool full,
                            const char *head, const struct sleapc_layer_ops *ops,
                            sleapc_layer **out)
{
    global_layer *g = sleapc__calloc(1, sizeof *g);
    if (!g)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    g->base.ops = ops;
    g->base.impl = g;
    g->head = head;
    g->threshold = o->peak_threshold;
    g->refine_k = sleapc__layer_refine_k(o);
    sleapc_preprocess_opts pp = sleapc__layer_preprocess_opts(m, o, full);
    sleapc_status st = sleapc__stage_init(&g->stage, m, o, &pp);
    if (st) {
        global_destroy(&g->base);
        return st;
    }
    /* A backend that can find the peaks as peaks.c does keeps the maps. */
    const sleapc_tensor *cms = NULL;
    st = sleapc__stage_head(&g->stage, head, false, &cms);
    if (st) {
        global_destroy(&g->base);
        return st;
    }
    g->n_nodes = cms->shape[1];
    *out = &g->base;
    return SLEAPC_OK;
}

sleapc_status sleapc__single_instance_layer_create(const sleapc_model *m,
                                                   const sleapc_predictor_opts *o,
                                                   sleapc_layer **out)
{
    return create(m, o, true, "SingleInstanceConfmapsHead", &single_instance_ops, out);
}

sleapc_status sleapc__centered_instance_layer_create(const sleapc_model *m,
                                                     const sleapc_predictor_opts *o,
                                                     sleapc_layer **out)
{
    return create(m, o, false, "CenteredInstanceConfmapsHead", &centered_instance_ops, out);
}
