/* Bottom-up grouping of one frame after sleap-nn ops/paf.py
 * (match_candidates_sample, group_instances_sample,
 * assign_connections_to_instances, make_predicted_instances).
 * sleap-nn keeps its bookkeeping in Python dicts keyed by (node, rank); here a
 * peak "slot" is node_start[node] + rank, and a list of slots in first
 * assignment order stands in for the dict's insertion order. */
#include "layers/ops/grouping.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/hungarian.h"

sleapc_grouping_opts sleapc__grouping_opts_default(void)
{
    sleapc_grouping_opts o = {
        .min_line_scores = 0.25,
        .min_instance_peaks = 0.0,
        .min_instance_peaks_is_fraction = false,
    };
    return o;
}

/* A matched connection: edge, source and destination ranks, score. */
typedef struct match {
    int edge;
    int64_t src_rank, dst_rank;
    float score;
} match;

/* Scratch for one frame; freed together. */
typedef struct frame_ws {
    int64_t *node_start; /* (n_nodes + 1) first slot of each node */
    int64_t *node_fill;  /* (n_nodes) */
    int64_t *node_peaks; /* (n_peaks) peak index by node, then peak order */
    int64_t *rank_src;   /* (n_peaks) */
    int64_t *rank_dst;   /* (n_peaks) */
    int64_t *cand;       /* (n_cand) candidates of the current edge */
    match *matches;      /* grown per edge */
    int64_t n_matches, match_cap;
    int64_t *inst;     /* (n_peaks) instance id of each slot, -1 = none */
    int64_t *assigned; /* (n_peaks) slots in first assignment order */
    int64_t n_assigned;
    int64_t *row, *col; /* (n_peaks) assignment output */
    double *cost;       /* grown per edge */
    size_t cost_cap;
} frame_ws;

static void ws_free(frame_ws *w)
{
    sleapc__free(w->node_start);
    sleapc__free(w->node_fill);
    sleapc__free(w->node_peaks);
    sleapc__free(w->rank_src);
    sleapc__free(w->rank_dst);
    sleapc__free(w->cand);
    sleapc__free(w->matches);
    sleapc__free(w->inst);
    sleapc__free(w->assigned);
    sleapc__free(w->row);
    sleapc__free(w->col);
    sleapc__free(w->cost);
}

static sleapc_status ws_init(frame_ws *w, int n_nodes, int64_t n_peaks, int64_t n_cand)
{
    memset(w, 0, sizeof *w);
    size_t np = (size_t)(n_peaks > 0 ? n_peaks : 1);
    w->node_start = sleapc__calloc((size_t)n_nodes + 1, sizeof(int64_t));
    w->node_fill = sleapc__calloc((size_t)n_nodes + 1, sizeof(int64_t));
    w->node_peaks = sleapc__calloc(np, sizeof(int64_t));
    w->rank_src = sleapc__calloc(np, sizeof(int64_t));
    w->rank_dst = sleapc__calloc(np, sizeof(int64_t));
    w->cand = sleapc__calloc((size_t)(n_cand > 0 ? n_cand : 1), sizeof(int64_t));
    w->inst = sleapc__calloc(np, sizeof(int64_t));
    w->assigned = sleapc__calloc(np, sizeof(int64_t));
    w->row = sleapc__calloc(np, sizeof(int64_t));
    w->col = sleapc__calloc(np, sizeof(int64_t));
    if (!w->node_start || !w->node_fill || !w->node_peaks || !w->rank_src || !w->rank_dst ||
        !w->cand || !w->inst || !w->assigned || !w->row || !w->col)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
    return SLEAPC_OK;
}

/* match_candidates_sample for edge k: append scipy's assignment of the
 * edge's candidates to w->matches. */
static sleapc_status match_edge(frame_ws *w, int k, int64_t n_peaks, const int32_t *edge_inds,
                                const int64_t (*edge_peak_inds)[2], const float *line_scores,
                                int64_t n_cand)
{
    int64_t n_c = 0;
    for (int64_t c = 0; c < n_cand; c++) {
        if (edge_inds[c] == k)
            w->cand[n_c++] = c;
    }
    if (n_c == 0)
        return SLEAPC_OK;
    /* torch.unique (sorted) of source and destination peaks: ranks. */
    for (int64_t p = 0; p < n_peaks; p++)
        w->rank_src[p] = w->rank_dst[p] = -1;
    for (int64_t i = 0; i < n_c; i++) {
        w->rank_src[edge_peak_inds[w->cand[i]][0]] = 0;
        w->rank_dst[edge_peak_inds[w->cand[i]][1]] = 0;
    }
    int64_t n_src = 0, n_dst = 0;
    for (int64_t p = 0; p < n_peaks; p++) {
        if (w->rank_src[p] >= 0)
            w->rank_src[p] = n_src++;
        if (w->rank_dst[p] >= 0)
            w->rank_dst[p] = n_dst++;
    }
    /* n_src and n_dst are at most n_peaks, so the product fits. */
    size_t cells = (size_t)n_src * (size_t)n_dst;
    if (cells > w->cost_cap) {
        double *grown = sleapc__realloc(w->cost, cells * sizeof(double));
        if (!grown)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
        w->cost = grown;
        w->cost_cap = cells;
    }
    for (size_t i = 0; i < cells; i++)
        w->cost[i] = INFINITY;
    for (int64_t i = 0; i < n_c; i++) {
        int64_t c = w->cand[i];
        float score = line_scores[c];
        /* float32 -score, NaN -> +inf, then float64 for scipy. */
        double cost = isnan(score) ? INFINITY : (double)(-score);
        w->cost[w->rank_src[edge_peak_inds[c][0]] * n_dst + w->rank_dst[edge_peak_inds[c][1]]] =
            cost;
    }
    int64_t n_pairs;
    sleapc_status st =
        sleapc__hungarian_solve_partial(w->cost, n_src, n_dst, w->row, w->col, &n_pairs);
    if (st)
        return sleapc__wrap(st, "group instances: edge %d", k);
    /* At most n_peaks pairs per edge, and edges are few: no overflow. */
    if (w->n_matches + n_pairs > w->match_cap) {
        int64_t cap = w->n_matches + n_pairs;
        match *grown = sleapc__realloc(w->matches, (size_t)cap * sizeof(match));
        if (!grown)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
        w->matches = grown;
        w->match_cap = cap;
    }
    for (int64_t i = 0; i < n_pairs; i++) {
        match *m = &w->matches[w->n_matches++];
        m->edge = k;
        m->src_rank = w->row[i];
        m->dst_rank = w->col[i];
        m->score = (float)-w->cost[w->row[i] * n_dst + w->col[i]];
    }
    return SLEAPC_OK;
}

static void assign(frame_ws *w, int64_t slot, int64_t id)
{
    if (w->inst[slot] < 0)
        w->assigned[w->n_assigned++] = slot;
    w->inst[slot] = id;
}

/* Case 3 of assign_connections_to_instances: may dst's old instance merge
 * into src's? Only when their node sets are disjoint. */
static bool node_sets_disjoint(const frame_ws *w, int n_nodes, int64_t a, int64_t b)
{
    for (int n = 0; n < n_nodes; n++) {
        bool in_a = false, in_b = false;
        for (int64_t s = w->node_start[n]; s < w->node_start[n + 1]; s++) {
            in_a = in_a || w->inst[s] == a;
            in_b = in_b || w->inst[s] == b;
        }
        if (in_a && in_b)
            return false;
    }
    return true;
}

/* assign_connections_to_instances over the kept matches, edges in BFS order. */
static void assemble(frame_ws *w, const sleapc_grouping_skeleton *sk)
{
    for (int o = 0; o < sk->n_order; o++) {
        for (int64_t i = 0; i < w->n_matches; i++) {
            const match *m = &w->matches[i];
            if (m->edge != sk->order[o])
                continue;
            int64_t src = w->node_start[sk->edges[m->edge][0]] + m->src_rank;
            int64_t dst = w->node_start[sk->edges[m->edge][1]] + m->dst_rank;
            int64_t src_id = w->inst[src], dst_id = w->inst[dst];
            if (src_id < 0 && dst_id < 0) {
                int64_t id = -1;
                for (int64_t a = 0; a < w->n_assigned; a++) {
                    if (w->inst[w->assigned[a]] > id)
                        id = w->inst[w->assigned[a]];
                }
                assign(w, src, id + 1);
                assign(w, dst, id + 1);
            } else if (src_id >= 0 && dst_id < 0) {
                assign(w, dst, src_id);
            } else if (src_id >= 0 && dst_id >= 0) {
                w->inst[dst] = src_id;
                if (node_sets_disjoint(w, sk->n_nodes, src_id, dst_id)) {
                    for (int64_t a = 0; a < w->n_assigned; a++) {
                        if (w->inst[w->assigned[a]] == dst_id)
                            w->inst[w->assigned[a]] = src_id;
                    }
                }
            }
        }
    }
}

/* min_instance_peaks: drop the slots of instances with fewer peaks. */
static void drop_small_instances(frame_ws *w, int n_nodes, const sleapc_grouping_opts *opts)
{
    if (!(opts->min_instance_peaks > 0.0))
        return;
    double threshold = opts->min_instance_peaks;
    if (opts->min_instance_peaks_is_fraction)
        threshold = (double)(int64_t)(opts->min_instance_peaks * (double)n_nodes);
    /* Mark with ~id (< 0) so that counting still sees every instance. */
    for (int64_t a = 0; a < w->n_assigned; a++) {
        int64_t id = w->inst[w->assigned[a]];
        if (id < 0)
            continue;
        int64_t count = 0;
        for (int64_t b = 0; b < w->n_assigned; b++) {
            int64_t other = w->inst[w->assigned[b]];
            count += other == id || other == ~id;
        }
        if ((double)count < threshold)
            w->inst[w->assigned[a]] = ~id;
    }
    int64_t kept = 0;
    for (int64_t a = 0; a < w->n_assigned; a++) {
        int64_t slot = w->assigned[a];
        if (w->inst[slot] >= 0)
            w->assigned[kept++] = slot;
        else
            w->inst[slot] = -1;
    }
    w->n_assigned = kept;
}

void sleapc__grouping_result_free(sleapc_grouping_result *r)
{
    if (!r)
        return;
    sleapc__free(r->keypoints);
    sleapc__free(r->peak_values);
    sleapc__free(r->scores);
    memset(r, 0, sizeof *r);
}

static sleapc_status check_frame(const sleapc_grouping_skeleton *sk, const float *peaks,
                                 const float *peak_vals, const int32_t *peak_channel_inds,
                                 int64_t n_peaks, const int32_t *edge_inds,
                                 const int64_t (*edge_peak_inds)[2], const float *line_scores,
                                 int64_t n_cand, const sleapc_grouping_opts *opts)
{
    if (!sk || !opts || sk->n_nodes < 1 || sk->n_edges < 0 || sk->n_order < 0 ||
        sk->n_order > sk->n_edges || (sk->n_edges && !sk->edges) || (sk->n_order && !sk->order) ||
        n_peaks < 0 || n_cand < 0 || (n_peaks && (!peaks || !peak_vals || !peak_channel_inds)) ||
        (n_cand && (!edge_inds || !edge_peak_inds || !line_scores)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "group instances: bad arguments");
    /* Result arrays hold up to n_peaks x n_nodes x 2 floats. */
    if (n_peaks && (uint64_t)sk->n_nodes > SIZE_MAX / (2 * sizeof(float)) / (uint64_t)n_peaks)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "group instances: too many peaks");
    for (int k = 0; k < sk->n_edges; k++) {
        for (int e = 0; e < 2; e++) {
            if (sk->edges[k][e] < 0 || sk->edges[k][e] >= sk->n_nodes)
                return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                    "group instances: edge %d: node %d not in [0, %d)", k,
                                    sk->edges[k][e], sk->n_nodes);
        }
    }
    for (int o = 0; o < sk->n_order; o++) {
        if (sk->order[o] < 0 || sk->order[o] >= sk->n_edges)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "group instances: edge order entry %d out of range", o);
    }
    for (int64_t p = 0; p < n_peaks; p++) {
        if (peak_channel_inds[p] < 0 || peak_channel_inds[p] >= sk->n_nodes)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "group instances: peak %lld: node %d not in [0, %d)", (long long)p,
                                (int)peak_channel_inds[p], sk->n_nodes);
    }
    /* sleap-nn reads the matched ranks as ranks within each node's peaks; that
     * holds when every candidate joins peaks of its edge's nodes. */
    for (int64_t c = 0; c < n_cand; c++) {
        int32_t k = edge_inds[c];
        int64_t s = edge_peak_inds[c][0], d = edge_peak_inds[c][1];
        if (k < 0 || k >= sk->n_edges || s < 0 || s >= n_peaks || d < 0 || d >= n_peaks ||
            peak_channel_inds[s] != sk->edges[k][0] || peak_channel_inds[d] != sk->edges[k][1])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "group instances: candidate %lld does not join the nodes of "
                                "a skeleton edge",
                                (long long)c);
    }
    return SLEAPC_OK;
}

/* make_predicted_instances: dense ids by ascending original id, scores as
 * float32 sums in edge / match order, peaks written in assignment order. */
static sleapc_status build_result(frame_ws *w, const sleapc_grouping_skeleton *sk,
                                  const float *peaks, const float *peak_vals,
                                  const int32_t *peak_channel_inds, sleapc_grouping_result *out)
{
    const int64_t n_nodes = sk->n_nodes;
    /* Distinct ids, ascending (np.unique); rank_src is free scratch here. */
    int64_t *ids = w->rank_src;
    int64_t n_inst = 0;
    for (int64_t a = 0; a < w->n_assigned; a++) {
        int64_t id = w->inst[w->assigned[a]];
        int64_t pos = 0;
        while (pos < n_inst && ids[pos] < id)
            pos++;
        if (pos < n_inst && ids[pos] == id)
            continue;
        memmove(ids + pos + 1, ids + pos, (size_t)(n_inst - pos) * sizeof *ids);
        ids[pos] = id;
        n_inst++;
    }
    out->n_instances = n_inst;
    out->n_nodes = n_nodes;
    if (n_inst == 0)
        return SLEAPC_OK;
    out->keypoints = sleapc__malloc((size_t)(n_inst * n_nodes * 2) * sizeof(float));
    out->peak_values = sleapc__malloc((size_t)(n_inst * n_nodes) * sizeof(float));
    out->scores = sleapc__malloc((size_t)n_inst * sizeof(float));
    if (!out->keypoints || !out->peak_values || !out->scores)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
    for (int64_t i = 0; i < n_inst * n_nodes * 2; i++)
        out->keypoints[i] = NAN;
    for (int64_t i = 0; i < n_inst * n_nodes; i++)
        out->peak_values[i] = NAN;
    for (int64_t i = 0; i < n_inst; i++)
        out->scores[i] = 0.0f;

    /* Dense index of each slot's instance, kept in rank_dst. */
    int64_t *dense = w->rank_dst;
    for (int64_t s = 0; s < w->node_start[n_nodes]; s++)
        dense[s] = -1;
    for (int64_t a = 0; a < w->n_assigned; a++) {
        int64_t slot = w->assigned[a], id = w->inst[slot], pos = 0;
        while (ids[pos] != id)
            pos++;
        dense[slot] = pos;
    }
    for (int o = 0; o < sk->n_order; o++) {
        for (int64_t i = 0; i < w->n_matches; i++) {
            const match *m = &w->matches[i];
            if (m->edge != sk->order[o])
                continue;
            int64_t src = w->node_start[sk->edges[m->edge][0]] + m->src_rank;
            if (dense[src] >= 0)
                out->scores[dense[src]] = out->scores[dense[src]] + m->score;
        }
    }
    for (int64_t a = 0; a < w->n_assigned; a++) {
        int64_t slot = w->assigned[a];
        int64_t p = w->node_peaks[slot];
        int64_t at = dense[slot] * n_nodes + peak_channel_inds[p];
        out->keypoints[2 * at] = peaks[2 * p];
        out->keypoints[2 * at + 1] = peaks[2 * p + 1];
        out->peak_values[at] = peak_vals[p];
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__grouping_group_frame(const sleapc_grouping_skeleton *sk, const float *peaks,
                                           const float *peak_vals, const int32_t *peak_channel_inds,
                                           int64_t n_peaks, const int32_t *edge_inds,
                                           const int64_t (*edge_peak_inds)[2],
                                           const float *line_scores, int64_t n_cand,
                                           const sleapc_grouping_opts *opts,
                                           sleapc_grouping_result *out)
{
    if (!out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "group instances: out is required");
    memset(out, 0, sizeof *out);
    sleapc_status st = check_frame(sk, peaks, peak_vals, peak_channel_inds, n_peaks, edge_inds,
                                   edge_peak_inds, line_scores, n_cand, opts);
    if (st)
        return st;

    frame_ws w;
    st = ws_init(&w, sk->n_nodes, n_peaks, n_cand);
    if (st)
        goto done;
    /* Slots: each node's peaks in peak order (the grouping's per-node lists). */
    for (int64_t p = 0; p < n_peaks; p++)
        w.node_start[peak_channel_inds[p] + 1]++;
    for (int n = 0; n < sk->n_nodes; n++) {
        w.node_start[n + 1] += w.node_start[n];
        w.node_fill[n] = w.node_start[n];
    }
    for (int64_t p = 0; p < n_peaks; p++) {
        w.node_peaks[w.node_fill[peak_channel_inds[p]]++] = p;
        w.inst[p] = -1;
    }

    for (int k = 0; k < sk->n_edges; k++) {
        st = match_edge(&w, k, n_peaks, edge_inds, edge_peak_inds, line_scores, n_cand);
        if (st)
            goto done;
    }
    /* group_instances_sample: drop weak matches (numpy compares in float32). */
    const float min_score = (float)opts->min_line_scores;
    int64_t kept = 0;
    for (int64_t i = 0; i < w.n_matches; i++) {
        if (w.matches[i].score >= min_score)
            w.matches[kept++] = w.matches[i];
    }
    w.n_matches = kept;

    assemble(&w, sk);
    drop_small_instances(&w, sk->n_nodes, opts);
    st = build_result(&w, sk, peaks, peak_vals, peak_channel_inds, out);
done:
    ws_free(&w);
    if (st)
        sleapc__grouping_result_free(out);
    return st;
}
