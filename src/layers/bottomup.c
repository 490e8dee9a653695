/* BottomUpLayer (sleap-nn layers/bottomup.py, inference/streaming.py):
 * local peaks, PAF line scores between candidate pairs, matching edge by edge
 * and instance assembly. Refinement, line scoring, the input-scale step and
 * the max_instances cut follow the model's convention (SLEAP 1.x's
 * BottomUpInferenceLayer and BottomUpPredictor in sleap/nn/inference.py,
 * paf_grouping.py: SLEAP's refinement and line scoring, "+ 0.5" after the
 * input scale, and max_instances as a stable sort by score). The matching and
 * assembly are the same in both. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/bottomup_common.h"
#include "layers/bottomup_paf.h"
#include "layers/layer.h"
#include "layers/ops/grouping.h"
#include "core/paf.h"
#include "layers/stage.h"
#include "layers/stage_kept_heads.h"

typedef struct bottomup_layer {
    sleapc_layer base;
    sleapc_stage stage;
    double threshold;
    int refine_k;
    int max_instances;
    int n_nodes, n_edges;
    int (*edges)[2];       /* borrowed from the model config */
    int *order;            /* BFS edge order */
    int n_order;
    sleapc_paf_score_opts score_opts;
    sleapc_grouping_opts group_opts;
    sleapc_peak_list peaks;
    /* Per-frame candidates, reused. */
    int64_t cand_cap;
    int32_t *edge_inds;
    int64_t (*edge_peak_inds)[2];
    float *line_scores;
    sleapc_grouping_result *frames; /* (frames_cap) reused by every batch */
    int64_t frames_cap;
    /* Per frame of a batch: where its peaks and candidates start (b + 1 each). */
    int64_t *offsets;
    int64_t offsets_cap;
    sleapc_paf_scorer scorer; /* the line scores, on the device where it can */
    int pafs_kept;            /* the PAFs stay on the device: 1 yes, -1 no, 0 not asked yet */
} bottomup_layer;

static const char *const PAF_HEAD = "PartAffinityFieldsHead";

static sleapc_status grow_candidates(bottomup_layer *bu, int64_t n)
{
    if (n <= bu->cand_cap)
        return SLEAPC_OK;
    /* Doubling: candidate counts vary from frame to frame, and a long run
     * must stop reallocating once it has seen its busiest frames. */
    if (bu->cand_cap <= INT64_MAX / 2 && 2 * bu->cand_cap > n)
        n = 2 * bu->cand_cap;
    sleapc__free(bu->edge_inds);
    sleapc__free(bu->edge_peak_inds);
    sleapc__free(bu->line_scores);
    bu->edge_inds = sleapc__malloc((size_t)n * sizeof *bu->edge_inds);
    bu->edge_peak_inds = sleapc__malloc((size_t)n * sizeof *bu->edge_peak_inds);
    bu->line_scores = sleapc__malloc((size_t)n * sizeof *bu->line_scores);
    bu->cand_cap = n;
    if (!bu->edge_inds || !bu->edge_peak_inds || !bu->line_scores) {
        bu->cand_cap = 0;
        return sleapc__fail(SLEAPC_ERR_NOMEM, "bottom-up: out of memory");
    }
    return SLEAPC_OK;
}

static sleapc_status grow_offsets(bottomup_layer *bu, int64_t b)
{
    if (2 * (b + 1) <= bu->offsets_cap)
        return SLEAPC_OK;
    sleapc__free(bu->offsets);
    bu->offsets = sleapc__malloc((size_t)(2 * (b + 1)) * sizeof *bu->offsets);
    bu->offsets_cap = bu->offsets ? 2 * (b + 1) : 0;
    return bu->offsets ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "bottom-up: out of memory");
}

/* Peaks, candidates and their line scores, the part that needs the
 * device (its peaks, its PAF scores): of frames, or with frames NULL of the
 * stage's collected batch. */
static sleapc_status bottomup_scores(bottomup_layer *bu, const uint8_t *frames, int64_t b,
                                     int64_t c, int64_t h, int64_t w)
{
    const sleapc_tensor *cms = NULL, *pafs = NULL;
    /* The PAFs' one use is the line scores: they stay on the device while it
     * scores them; once the host scores (a refusal or failure), they come
     * back (that batch fetched them). */
    if (bu->pafs_kept > 0 && !bu->scorer.device)
        bu->pafs_kept = sleapc__stage_keep_head(&bu->stage, PAF_HEAD, false) ? -1 : 1;
    sleapc_status st = sleapc__bottomup_stage_peaks(
        &bu->stage, &bu->peaks, frames, b, c, h, w, bu->threshold, bu->refine_k, PAF_HEAD,
        bu->scorer.device ? &bu->pafs_kept : NULL, &cms, &pafs);
    if (!st)
        st = sleapc__bottomup_frames_reserve(&bu->frames, &bu->frames_cap, b, "bottom-up");
    if (st)
        return st;
    const sleapc_peak_list *pk = &bu->peaks;
    st = grow_offsets(bu, b);
    if (st)
        return st;
    /* Candidates of every frame first, so that the device scores the batch
     * in one submission. */
    int64_t *peak_off = bu->offsets, *cand_off = bu->offsets + (b + 1);
    peak_off[0] = cand_off[0] = 0;
    for (int64_t s = 0; s < b && !st; s++) {
        int64_t end = peak_off[s], n_cand = 0;
        while (end < pk->n && pk->sample_inds[end] == s)
            end++;
        peak_off[s + 1] = end;
        st = sleapc__paf_count_candidates(pk->channel_inds + peak_off[s], end - peak_off[s],
                                          bu->n_nodes, (const int(*)[2])bu->edges, bu->n_edges,
                                          &n_cand);
        if (!st && n_cand > INT64_MAX - cand_off[s])
            st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "bottom-up: too many candidates");
        if (!st)
            cand_off[s + 1] = cand_off[s] + n_cand;
    }
    if (!st)
        st = grow_candidates(bu, cand_off[b] > 0 ? cand_off[b] : 1);
    for (int64_t s = 0; s < b && !st; s++) {
        int64_t n_written = 0;
        st = sleapc__paf_candidates(pk->channel_inds + peak_off[s], peak_off[s + 1] - peak_off[s],
                                    bu->n_nodes, (const int(*)[2])bu->edges, bu->n_edges,
                                    cand_off[s + 1] - cand_off[s], bu->edge_inds + cand_off[s],
                                    bu->edge_peak_inds + cand_off[s], &n_written);
    }
    if (!st)
        st = sleapc__paf_scorer_run(&bu->scorer, &bu->stage, PAF_HEAD, pafs,
                                    bu->n_edges, pk, peak_off, cand_off, b, bu->edge_inds,
                                    (const int64_t(*)[2])bu->edge_peak_inds, &bu->score_opts,
                                    bu->line_scores);
    return st;
}

/* Matching and assembly of the scored batch of b frames into out. */
static sleapc_status bottomup_group(bottomup_layer *bu, int64_t b, sleapc_layer_outputs *out)
{
    const sleapc_peak_list *pk = &bu->peaks;
    const int64_t *peak_off = bu->offsets, *cand_off = bu->offsets + (b + 1);
    sleapc_status st = SLEAPC_OK;
    for (int64_t s = 0; s < b && !st; s++) {
        /* frames[s] is reused from batch to batch: grouping overwrites it
         * and keeps its arrays and scratch (freed in bottomup_destroy). */
        sleapc_grouping_skeleton sk = {.n_nodes = bu->n_nodes, .n_edges = bu->n_edges,
                                       .edges = (const int(*)[2])bu->edges,
                                       .n_order = bu->n_order, .order = bu->order};
        const int64_t p0 = peak_off[s], c0 = cand_off[s];
        st = sleapc__grouping_group_frame(&sk, pk->peaks + p0 * 2, pk->vals + p0,
                                          pk->channel_inds + p0, peak_off[s + 1] - p0,
                                          bu->edge_inds + c0,
                                          (const int64_t(*)[2])bu->edge_peak_inds + c0,
                                          bu->line_scores + c0, cand_off[s + 1] - c0,
                                          &bu->group_opts, &bu->frames[s]);
    }
    if (st)
        return st;
    /* The input scale is undone here, so the packing undoes only eff_scale. */
    const sleapc_preprocess_plan *pl = &bu->stage.plan;
    const sleapc_convention *cv = bu->stage.convention;
    for (int64_t s = 0; s < b; s++) {
        sleapc_grouping_result *r = &bu->frames[s];
        cv->undo_input_scale(r->keypoints, r->n_instances * r->n_nodes, pl->opts.scale);
        cv->bottomup_keep(r, bu->max_instances);
    }
    return sleapc__bottomup_outputs(bu->frames, b, bu->n_nodes, bu->max_instances, 1.0f,
                                    (float)pl->eff_scale, true, out);
}

static sleapc_status bottomup_run(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                                  int64_t h, int64_t w, sleapc_layer_outputs *out)
{
    bottomup_layer *bu = l->impl;
    sleapc_status st = bottomup_scores(bu, frames, b, c, h, w);
    return st ? st : bottomup_group(bu, b, out);
}

/* The run in steps (layer.h): the scores need the device, so collect
 * finds them before the next batch is submitted. */
static sleapc_stage *bottomup_stage(sleapc_layer *l)
{
    return &((bottomup_layer *)l->impl)->stage;
}

static bool bottomup_asked(const sleapc_layer *l)
{
    return ((const bottomup_layer *)l->impl)->peaks.device != 0;
}

static sleapc_status bottomup_collect(sleapc_layer *l, int64_t b)
{
    sleapc_status st = sleapc__stage_collect(bottomup_stage(l));
    return st ? st : bottomup_scores(l->impl, NULL, b, 0, 0, 0);
}

static sleapc_status bottomup_finish(sleapc_layer *l, int64_t b, sleapc_layer_outputs *out)
{
    return bottomup_group(l->impl, b, out);
}

static void bottomup_destroy(sleapc_layer *l)
{
    bottomup_layer *bu = l->impl;
    sleapc__stage_free(&bu->stage);
    sleapc__peak_list_free(&bu->peaks);
    sleapc__bottomup_frames_free(bu->frames, bu->frames_cap);
    sleapc__free(bu->edge_inds);
    sleapc__free(bu->edge_peak_inds);
    sleapc__free(bu->line_scores);
    sleapc__free(bu->order);
    sleapc__free(bu->offsets);
    sleapc__paf_scorer_free(&bu->scorer);
    sleapc__free(bu);
}

static int bottomup_stages(const sleapc_layer *l, sleapc_stage_info *out)
{
    const bottomup_layer *bu = l->impl;
    out[0] = sleapc__stage_info(&bu->stage);
    return 1;
}

static const struct sleapc_layer_ops bottomup_ops = {
    .name = "BottomUpLayer", .run = bottomup_run, .destroy = bottomup_destroy,
    .stages = bottomup_stages, .stage = bottomup_stage, .asked = bottomup_asked,
    .collect = bottomup_collect, .finish = bottomup_finish};

sleapc_status sleapc__bottomup_layer_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                            sleapc_layer **out)
{
    bottomup_layer *bu = sleapc__calloc(1, sizeof *bu);
    if (!bu)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    bu->base.ops = &bottomup_ops;
    bu->base.impl = bu;
    bu->threshold = o->peak_threshold;
    bu->refine_k = sleapc__layer_refine_k(o);
    bu->max_instances = o->max_instances;
    bu->n_nodes = m->cfg.n_part_names;
    bu->n_edges = m->cfg.n_paf_edges;
    bu->edges = m->cfg.paf_edges;
    bu->score_opts = sleapc__paf_score_opts_default();
    bu->score_opts.n_points = o->n_points;
    bu->score_opts.max_edge_length_ratio = o->max_edge_length_ratio;
    bu->score_opts.dist_penalty_weight = o->dist_penalty_weight;
    bu->score_opts.paf_stride = m->cfg.pafs_stride;
    bu->group_opts = sleapc__bottomup_grouping_opts(o);
    sleapc_status st = sleapc__bottomup_edge_order((const int(*)[2])bu->edges, bu->n_edges,
                                                   bu->n_nodes, &bu->order, &bu->n_order);
    if (st)
        st = sleapc__wrap(st, "%s: PAF edges", m->dir);
    sleapc_preprocess_opts pp = sleapc__layer_preprocess_opts(m, o, true);
    if (!st)
        st = sleapc__stage_init(&bu->stage, m, o, &pp);
    if (st) {
        bottomup_destroy(&bu->base);
        return st;
    }
    bu->score_opts.sleap1 = bu->stage.convention->paf_sleap1;
    /* The device scores as sleap-nn does; SLEAP 1.x's scoring stays on the host. */
    sleapc__paf_scorer_init(&bu->scorer, !bu->score_opts.sleap1);
    *out = &bu->base;
    return SLEAPC_OK;
}
