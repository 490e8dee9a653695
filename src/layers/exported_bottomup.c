/* ExportedBottomUpLayer (sleap-nn layers/exported.py): the graph found the
 * top-k peaks per node and scored every candidate pair of every edge; the
 * host rebuilds each frame's candidate lists from the fixed-size outputs and
 * runs the same matching and assembly as BottomUpLayer (inference.md §7.8).
 * Valid peaks are those of peak_mask, numbered node-major in slot order; a
 * candidate (edge e, slot i*k + j) is used when candidate_mask is set, both
 * peaks are valid and both values pass the runtime gate (> the threshold
 * baked into the graph, sleapc__exported_peak_gate). Peaks are already in
 * model-input pixels; the input scale of the metadata is undone at packing.
 * Caveat kept from sleap-nn: a gate tighter than the graph's threshold can
 * drop some of a node's peaks from the candidates only. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/bottomup_common.h"
#include "layers/exported.h"
#include "layers/ops/grouping.h"

typedef struct ebu_layer {
    sleapc_layer base;
    sleapc_exported_stage stage;
    int n_nodes, n_edges;
    const int (*edges)[2];   /* borrowed from the model */
    int *order;              /* BFS edge order */
    int n_order;
    int max_instances;
    double gate;
    float input_scale;
    sleapc_grouping_opts group_opts;
    /* One frame's compacted peaks and candidates, reused. */
    int64_t peak_cap, cand_cap;
    float *peaks, *vals;
    int32_t *chan;
    int64_t *compact;        /* (N*k) slot -> compact index, -1 = invalid */
    int32_t *edge_inds;
    int64_t (*edge_peak_inds)[2];
    float *line_scores;
    sleapc_grouping_result *frames;
    int64_t frames_cap;
} ebu_layer;

static sleapc_status grow_peaks(ebu_layer *e, int64_t n_slots, int64_t n_cand)
{
    if (n_slots > e->peak_cap) {
        sleapc__free(e->peaks);
        sleapc__free(e->vals);
        sleapc__free(e->chan);
        sleapc__free(e->compact);
        e->peaks = sleapc__malloc((size_t)n_slots * 2 * sizeof *e->peaks);
        e->vals = sleapc__malloc((size_t)n_slots * sizeof *e->vals);
        e->chan = sleapc__malloc((size_t)n_slots * sizeof *e->chan);
        e->compact = sleapc__malloc((size_t)n_slots * sizeof *e->compact);
        e->peak_cap = e->peaks && e->vals && e->chan && e->compact ? n_slots : 0;
        if (!e->peak_cap)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "exported bottom-up: out of memory");
    }
    if (n_cand > e->cand_cap) {
        sleapc__free(e->edge_inds);
        sleapc__free(e->edge_peak_inds);
        sleapc__free(e->line_scores);
        e->edge_inds = sleapc__malloc((size_t)n_cand * sizeof *e->edge_inds);
        e->edge_peak_inds = sleapc__malloc((size_t)n_cand * sizeof *e->edge_peak_inds);
        e->line_scores = sleapc__malloc((size_t)n_cand * sizeof *e->line_scores);
        e->cand_cap = e->edge_inds && e->edge_peak_inds && e->line_scores ? n_cand : 0;
        if (!e->cand_cap)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "exported bottom-up: out of memory");
    }
    return SLEAPC_OK;
}

/* _build_scored_batch for frame f, then the grouping. */
static sleapc_status group_frame(ebu_layer *e, int64_t f, int64_t k, const sleapc_tensor *peaks,
                                 const sleapc_tensor *vals, const sleapc_tensor *mask,
                                 const sleapc_tensor *scores, const sleapc_tensor *cands)
{
    const int64_t N = e->n_nodes, E = e->n_edges, nk = N * k, kk = k * k;
    const float *pk = (const float *)peaks->data + f * nk * 2;
    const float *pv = (const float *)vals->data + f * nk;
    const uint8_t *pm = (const uint8_t *)mask->data + f * nk;
    int64_t np = 0;
    for (int64_t g = 0; g < nk; g++) {
        e->compact[g] = -1;
        if (!pm[g])
            continue;
        e->compact[g] = np;
        e->peaks[2 * np] = pk[2 * g];
        e->peaks[2 * np + 1] = pk[2 * g + 1];
        e->vals[np] = pv[g];
        e->chan[np] = (int32_t)(g / k);
        np++;
    }
    const float gate = (float)e->gate;
    int64_t nc = 0;
    for (int64_t ei = 0; ei < E; ei++) {
        const uint8_t *cm = (const uint8_t *)cands->data + (f * E + ei) * kk;
        const float *ls = (const float *)scores->data + (f * E + ei) * kk;
        for (int64_t q = 0; q < kk; q++) {
            if (!cm[q])
                continue;
            const int64_t src = e->edges[ei][0] * k + q / k, dst = e->edges[ei][1] * k + q % k;
            if (e->compact[src] < 0 || e->compact[dst] < 0 || !(pv[src] > gate) ||
                !(pv[dst] > gate))
                continue;
            e->edge_inds[nc] = (int32_t)ei;
            e->edge_peak_inds[nc][0] = e->compact[src];
            e->edge_peak_inds[nc][1] = e->compact[dst];
            e->line_scores[nc] = ls[q];
            nc++;
        }
    }
    sleapc_grouping_skeleton sk = {.n_nodes = e->n_nodes, .n_edges = e->n_edges,
                                   .edges = e->edges, .n_order = e->n_order, .order = e->order};
    return sleapc__grouping_group_frame(&sk, e->peaks, e->vals, e->chan, np, e->edge_inds,
                                        (const int64_t(*)[2])e->edge_peak_inds, e->line_scores,
                                        nc, &e->group_opts, &e->frames[f]);
}

static sleapc_status ebu_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                             int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    ebu_layer *e = l->impl;
    const sleapc_exported_stage *s = &e->stage;
    const int64_t N = e->n_nodes, E = e->n_edges;
    const sleapc_tensor *peaks, *vals, *mask, *scores, *cands;
    int64_t k = 0;
    sleapc_status st = sleapc__exported_stage_peaks(&e->stage, frames, b, c, h, w, N, &peaks,
                                                    &vals, &mask, &k);
    if (!st)
        st = sleapc__exported_stage_output(s, "line_scores", SLEAPC_DTYPE_F32, 3,
                                           (int64_t[]){b, E, k * k}, &scores);
    if (!st)
        st = sleapc__exported_stage_output(s, "candidate_mask", SLEAPC_DTYPE_U8, 3,
                                           (int64_t[]){b, E, k * k}, &cands);
    if (!st)
        st = grow_peaks(e, N * k > 0 ? N * k : 1, E * k * k > 0 ? E * k * k : 1);
    if (!st)
        st = sleapc__bottomup_frames_reserve(&e->frames, &e->frames_cap, b, "exported bottom-up");
    for (int64_t f = 0; f < b && !st; f++)
        st = group_frame(e, f, k, peaks, vals, mask, scores, cands);
    if (st)
        return st;
    return sleapc__bottomup_outputs(e->frames, b, N, e->max_instances, e->input_scale, 1.0f, false,
                                    out);
}

static void ebu_destroy(sleapc_layer *l)
{
    ebu_layer *e = l->impl;
    sleapc__exported_stage_free(&e->stage);
    sleapc__bottomup_frames_free(e->frames, e->frames_cap);
    sleapc__free(e->peaks);
    sleapc__free(e->vals);
    sleapc__free(e->chan);
    sleapc__free(e->compact);
    sleapc__free(e->edge_inds);
    sleapc__free(e->edge_peak_inds);
    sleapc__free(e->line_scores);
    sleapc__free(e->order);
    sleapc__free(e);
}

static int ebu_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const ebu_layer *e = l->impl;
    out[0] = sleapc__exported_stage_info(&e->stage);
    return 1;
}

static const struct sleapc_layer_ops ebu_ops = {
    .name = "ExportedBottomUpLayer", .run = ebu_run, .destroy = ebu_destroy,
    .stages = ebu_stages};

sleapc_status sleapc__exported_bottomup_layer_create(const sleapc_model *m,
                                                     const sleapc_predictor_opts *o,
                                                     sleapc_layer **out)
{
    ebu_layer *e = sleapc__calloc(1, sizeof *e);
    if (!e)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    e->base.ops = &ebu_ops;
    e->base.impl = e;
    const sleapc_export_meta *meta = &m->export_meta;
    e->n_nodes = sleapc__model_n_nodes(m);
    /* The adapter indexes line_scores with the metadata's edge_inds; older
     * exports without them fall back to the config's PAF edges. */
    e->n_edges = meta->n_edges ? meta->n_edges : m->cfg.n_paf_edges;
    e->edges = meta->n_edges ? (const int(*)[2])meta->edges : (const int(*)[2])m->cfg.paf_edges;
    e->max_instances = o->max_instances;
    e->gate = sleapc__exported_peak_gate(m);
    e->input_scale = (float)meta->input_scale;
    e->group_opts = sleapc__bottomup_grouping_opts(o);
    sleapc_status st = SLEAPC_OK;
    for (int i = 0; i < e->n_edges && !st; i++)
        if (e->edges[i][0] < 0 || e->edges[i][0] >= e->n_nodes || e->edges[i][1] < 0 ||
            e->edges[i][1] >= e->n_nodes)
            st = sleapc__fail(SLEAPC_ERR_FORMAT, "%s: edge %d names a node the skeleton lacks",
                              m->dir, i);
    if (!st)
        st = sleapc__bottomup_edge_order(e->edges, e->n_edges, e->n_nodes, &e->order, &e->n_order);
    static const char *const outputs[] = {"peaks", "peak_vals", "peak_mask", "line_scores",
                                          "candidate_mask", NULL};
    if (!st)
        st = sleapc__exported_stage_init(&e->stage, m, o, outputs);
    if (st) {
        ebu_destroy(&e->base);
        return sleapc__wrap(st, "exported bottom-up layer");
    }
    *out = &e->base;
    return SLEAPC_OK;
}
