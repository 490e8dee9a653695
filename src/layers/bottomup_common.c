#include "layers/bottomup_common.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/coords.h"
#include "core/peaks.h"
#include "layers/stage_kept_heads.h"
#include "layers/stage_local_peaks.h"

void sleapc__peak_list_free(sleapc_peak_list *pl)
{
    if (!pl)
        return;
    sleapc__free(pl->peaks);
    sleapc__free(pl->vals);
    sleapc__free(pl->sample_inds);
    sleapc__free(pl->channel_inds);
    memset(pl, 0, sizeof *pl);
}

/* Room for bound peaks in pl's arrays (the device answer is kept). */
static sleapc_status reserve(sleapc_peak_list *pl, int64_t bound)
{
    if (bound < 1)
        bound = 1;
    if (bound > pl->cap) {
        int device = pl->device;
        int64_t device_channels = pl->device_channels;
        sleapc__peak_list_free(pl);
        pl->device = device;
        pl->device_channels = device_channels;
        size_t n = (size_t)bound;
        pl->peaks = sleapc__malloc(n * 2 * sizeof(float));
        pl->vals = sleapc__malloc(n * sizeof(float));
        pl->sample_inds = sleapc__malloc(n * sizeof(int32_t));
        pl->channel_inds = sleapc__malloc(n * sizeof(int32_t));
        if (!pl->peaks || !pl->vals || !pl->sample_inds || !pl->channel_inds) {
            sleapc__peak_list_free(pl);
            return sleapc__fail(SLEAPC_ERR_NOMEM, "peaks: out of memory");
        }
        pl->cap = bound;
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__peak_list_find(sleapc_peak_list *pl, const sleapc_convention *cv,
                                     bool flat_tops, const float *cms, int64_t b, int64_t c,
                                     int64_t h, int64_t w, double threshold, int refine_k,
                                     int stride)
{
    int64_t bound = sleapc__peaks_local_max_count(b, c, h, w);
    if (bound < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "peaks: confidence maps too large");
    sleapc_status st = reserve(pl, bound);
    if (st)
        return st;
    st = cv->find_local(cms, b, c, h, w, threshold, refine_k, flat_tops, pl->cap, pl->peaks,
                        pl->vals, pl->sample_inds, pl->channel_inds, &pl->n);
    if (st)
        return st;
    sleapc__coords_undo_stride(pl->peaks, pl->n, stride);
    return SLEAPC_OK;
}

sleapc_status sleapc__bottomup_stage_peaks(sleapc_stage *stage, sleapc_peak_list *pl,
                                           const uint8_t *frames, int64_t b, int64_t c, int64_t h,
                                           int64_t w, double threshold, int refine_k,
                                           const char *second_head, int *keep_second,
                                           const sleapc_tensor **cms,
                                           const sleapc_tensor **second)
{
    static const char *const head = "MultiInstanceConfmapsHead";
    if (frames && pl->device == 0 && sleapc__stage_device_local_peaks_due(stage))
        pl->device = sleapc__stage_device_local_peaks(stage, head, threshold, refine_k,
                                                      &pl->device_channels)
                         ? 1
                         : -1;
    /* After the peaks' request, which reads the last run's outputs that a
     * kept head's request drops. */
    if (keep_second && *keep_second == 0 && pl->device != 0)
        *keep_second = sleapc__stage_keep_head(stage, second_head, true) ? 1 : -1;
    const int stride = sleapc__stage_head_stride(stage, head);
    sleapc_status st = frames ? sleapc__stage_run(stage, frames, b, c, h, w) : SLEAPC_OK;
    if (!st)
        st = sleapc__stage_head(stage, second_head, false, second);
    bool found = false;
    sleapc_stage_local_peaks lp;
    if (!st && pl->device > 0)
        st = sleapc__stage_local_peaks(stage, b, pl->device_channels, &lp, &found);
    if (!st && found) {
        *cms = NULL;
        st = reserve(pl, lp.n);
        if (st)
            return st;
        sleapc__stage_local_peaks_copy(&lp, pl->peaks, pl->vals, pl->sample_inds,
                                       pl->channel_inds);
        pl->n = lp.n;
        sleapc__coords_undo_stride(pl->peaks, pl->n, stride);
        return SLEAPC_OK;
    }
    if (!st)
        st = sleapc__stage_head(stage, head, false, cms);
    if (st)
        return st;
    const sleapc_tensor *t = *cms;
    return sleapc__peak_list_find(pl, stage->convention, stage->flat_tops, t->data, b,
                                  t->shape[1], t->shape[2], t->shape[3], threshold, refine_k,
                                  stride);
}

sleapc_grouping_opts sleapc__bottomup_grouping_opts(const sleapc_predictor_opts *o)
{
    sleapc_grouping_opts g = sleapc__grouping_opts_default();
    g.min_line_scores = o->min_line_scores;
    g.min_instance_peaks = o->min_instance_peaks;
    g.min_instance_peaks_is_fraction = o->min_instance_peaks > 0 && o->min_instance_peaks < 1;
    return g;
}

sleapc_status sleapc__bottomup_edge_order(const int (*edges)[2], int n_edges, int n_nodes,
                                          int **order, int *n_order)
{
    *order = sleapc__malloc((size_t)(n_edges > 0 ? n_edges : 1) * sizeof(int));
    if (!*order)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    return sleapc__grouping_edge_order(edges, n_edges, n_nodes, *order, n_order);
}

sleapc_status sleapc__bottomup_frames_reserve(sleapc_grouping_result **frames, int64_t *cap,
                                              int64_t b, const char *who)
{
    if (b <= *cap)
        return SLEAPC_OK;
    sleapc__bottomup_frames_free(*frames, *cap);
    *frames = sleapc__calloc((size_t)b, sizeof **frames);
    *cap = *frames ? b : 0;
    if (!*frames)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "%s: out of memory", who);
    return SLEAPC_OK;
}

void sleapc__bottomup_frames_free(sleapc_grouping_result *frames, int64_t cap)
{
    for (int64_t k = 0; k < cap; k++)
        sleapc__grouping_result_free(&frames[k]);
    sleapc__free(frames);
}

sleapc_status sleapc__bottomup_outputs(sleapc_grouping_result *frames, int64_t b, int64_t n_nodes,
                                       int64_t max_instances, float input_scale, float eff_scale,
                                       bool undo_eff_scale, sleapc_layer_outputs *out)
{
    int64_t slots = sleapc__grouping_n_slots(frames, b, max_instances);
    sleapc_status st = sleapc__layer_outputs_reset(out, b, slots, n_nodes, 0);
    if (st)
        return st;
    for (int64_t s = 0; s < b; s++)
        out->eff_scale[s] = eff_scale;
    out->has_instance_scores = true;
    return sleapc__grouping_pack(frames, b, n_nodes, max_instances, slots, input_scale,
                                 undo_eff_scale ? out->eff_scale : NULL, out->keypoints,
                                 out->peak_values, out->instance_scores);
}
