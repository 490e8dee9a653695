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

/* Grouping scratch, kept by a result between frames. Each block grows
 * geometrically and is never shrunk, so once a stream's largest frame has
 * been seen, grouping allocates nothing. Nothing in it carries over from one
 * frame to the next: every array is written before it is read. */
struct sleapc_grouping_ws {
    int64_t cap_nodes, cap_peaks, cap_cand, cap_matches, cap_cost;
    int64_t *node_block; /* node_start and node_fill, cap_nodes each */
    int64_t *peak_block; /* the seven per-peak arrays below, cap_peaks each */
    int64_t *node_start; /* (n_nodes + 1) first slot of each node */
    int64_t *node_fill;  /* (n_nodes) */
    int64_t *node_peaks; /* (n_peaks) peak index by node, then peak order */
    int64_t *rank_src;   /* (n_peaks) */
    int64_t *rank_dst;   /* (n_peaks) */
    int64_t *cand;       /* (n_cand) candidates of the current edge */
    match *matches;      /* grown per edge */
    int64_t n_matches;
    int64_t *inst;     /* (n_peaks) instance id of each slot, -1 = none */
    int64_t *assigned; /* (n_peaks) slots in first assignment order */
    int64_t n_assigned;
    int64_t *row, *col; /* (n_peaks) assignment output */
    double *cost;       /* grown per edge */
    sleapc_hungarian_ws hungarian;
};

/* Capacity for need elements of elem bytes: at least twice the old one, so
 * slowly growing frames settle after a few reallocations. 0 when need
 * elements cannot be addressed. */
static int64_t grown_cap(int64_t cap, int64_t need, size_t elem)
{
    uint64_t limit = SIZE_MAX / elem;
    if (limit > (uint64_t)INT64_MAX)
        limit = (uint64_t)INT64_MAX;
    if (need < 1 || (uint64_t)need > limit)
        return 0;
    uint64_t want = (uint64_t)cap * 2;
    if (want < (uint64_t)need)
        want = (uint64_t)need;
    return (int64_t)(want < limit ? want : limit);
}

static void ws_free(sleapc_grouping_ws *w)
{
    if (!w)
        return;
    sleapc__free(w->node_block);
    sleapc__free(w->peak_block);
    sleapc__free(w->cand);
    sleapc__free(w->matches);
    sleapc__free(w->cost);
    sleapc__hungarian_ws_free(&w->hungarian);
    sleapc__free(w);
}

/* Make room for a frame of n_nodes, n_peaks and n_cand. A failure leaves
 * the workspace consistent (capacities match the arrays held). */
static sleapc_status ws_reserve(sleapc_grouping_ws *w, int n_nodes, int64_t n_peaks,
                                int64_t n_cand)
{
    w->n_matches = 0;
    w->n_assigned = 0;
    const int64_t nn = (int64_t)n_nodes + 1;
    const int64_t np = n_peaks > 0 ? n_peaks : 1;
    const int64_t nc = n_cand > 0 ? n_cand : 1;
    if (nn > w->cap_nodes) {
        int64_t cap = grown_cap(w->cap_nodes, nn, 2 * sizeof(int64_t));
        sleapc__free(w->node_block);
        w->node_block = cap ? sleapc__malloc((size_t)cap * 2 * sizeof(int64_t)) : NULL;
        w->cap_nodes = w->node_block ? cap : 0;
        if (!w->node_block)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
    }
    if (np > w->cap_peaks) {
        int64_t cap = grown_cap(w->cap_peaks, np, 7 * sizeof(int64_t));
        sleapc__free(w->peak_block);
        w->peak_block = cap ? sleapc__malloc((size_t)cap * 7 * sizeof(int64_t)) : NULL;
        w->cap_peaks = w->peak_block ? cap : 0;
        if (!w->peak_block)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
    }
    if (nc > w->cap_cand) {
        int64_t cap = grown_cap(w->cap_cand, nc, sizeof(int64_t));
        sleapc__free(w->cand);
        w->cand = cap ? sleapc__malloc((size_t)cap * sizeof(int64_t)) : NULL;
        w->cap_cand = w->cand ? cap : 0;
        if (!w->cand)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
    }
    w->node_start = w->node_block;
    w->node_fill = w->node_block + w->cap_nodes;
    int64_t *p = w->peak_block;
    int64_t **arrays[] = {&w->node_peaks, &w->rank_src, &w->rank_dst, &w->inst,
                          &w->assigned,   &w->row,      &w->col};
    for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++)
        *arrays[k] = p + (int64_t)k * w->cap_peaks;
    /* The slot counts are accumulated from zero. */
    memset(w->node_start, 0, (size_t)nn * sizeof(int64_t));
    return SLEAPC_OK;
}

/* match_candidates_sample for edge k: append scipy's assignment of the
 * edge's candidates to w->matches. */
static sleapc_status match_edge(sleapc_grouping_ws *w, int k, int64_t n_peaks,
                                const int32_t *edge_inds, const int64_t (*edge_peak_inds)[2],
                                const float *line_scores, int64_t n_cand)
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
    if (n_dst > INT64_MAX / n_src)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "group instances: edge %d: too many peaks", k);
    const int64_t cells = n_src * n_dst;
    if (cells > w->cap_cost) {
        int64_t cap = grown_cap(w->cap_cost, cells, sizeof(double));
        sleapc__free(w->cost);
        w->cost = cap ? sleapc__malloc((size_t)cap * sizeof(double)) : NULL;
        w->cap_cost = w->cost ? cap : 0;
        if (!w->cost)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
    }
    for (int64_t i = 0; i < cells; i++)
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
    sleapc_status st = sleapc__hungarian_solve_partial_ws(w->cost, n_src, n_dst, &w->hungarian,
                                                          w->row, w->col, &n_pairs);
    if (st)
        return sleapc__wrap(st, "group instances: edge %d", k);
    /* At most n_peaks pairs per edge, and edges are few: no overflow. */
    if (w->n_matches + n_pairs > w->cap_matches) {
        int64_t cap = grown_cap(w->cap_matches, w->n_matches + n_pairs, sizeof(match));
        match *grown = cap ? sleapc__realloc(w->matches, (size_t)cap * sizeof(match)) : NULL;
        if (!grown)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
        w->matches = grown;
        w->cap_matches = cap;
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

static void assign(sleapc_grouping_ws *w, int64_t slot, int64_t id)
{
    if (w->inst[slot] < 0)
        w->assigned[w->n_assigned++] = slot;
    w->inst[slot] = id;
}

/* Case 3 of assign_connections_to_instances: may dst's old instance merge
 * into src's? Only when their node sets are disjoint. */
static bool node_sets_disjoint(const sleapc_grouping_ws *w, int n_nodes, int64_t a, int64_t b)
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
static void assemble(sleapc_grouping_ws *w, const sleapc_grouping_skeleton *sk)
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
static void drop_small_instances(sleapc_grouping_ws *w, int n_nodes,
                                 const sleapc_grouping_opts *opts)
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
    sleapc__free(r->order);
    ws_free(r->ws);
    memset(r, 0, sizeof *r);
}

/* Room in out for n_inst instances of n_nodes; contents are not kept. */
static sleapc_status reserve_result(sleapc_grouping_result *out, int64_t n_inst, int64_t n_nodes)
{
    if (n_inst > out->cap_instances) {
        int64_t cap = grown_cap(out->cap_instances, n_inst, sizeof(int64_t));
        sleapc__free(out->scores);
        sleapc__free(out->order);
        out->scores = cap ? sleapc__malloc((size_t)cap * sizeof(float)) : NULL;
        out->order = cap ? sleapc__malloc((size_t)cap * sizeof(int64_t)) : NULL;
        out->cap_instances = out->scores && out->order ? cap : 0;
        if (!out->cap_instances)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
    }
    /* check_frame bounds n_peaks x n_nodes x 2 floats, and n_inst <= n_peaks. */
    const int64_t cells = n_inst * n_nodes;
    if (cells > out->cap_points) {
        int64_t cap = grown_cap(out->cap_points, cells, 2 * sizeof(float));
        sleapc__free(out->keypoints);
        sleapc__free(out->peak_values);
        out->keypoints = cap ? sleapc__malloc((size_t)cap * 2 * sizeof(float)) : NULL;
        out->peak_values = cap ? sleapc__malloc((size_t)cap * sizeof(float)) : NULL;
        out->cap_points = out->keypoints && out->peak_values ? cap : 0;
        if (!out->cap_points)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
    }
    return SLEAPC_OK;
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
static sleapc_status build_result(sleapc_grouping_ws *w, const sleapc_grouping_skeleton *sk,
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
    out->n_nodes = n_nodes;
    if (n_inst == 0)
        return SLEAPC_OK;
    sleapc_status st = reserve_result(out, n_inst, n_nodes);
    if (st)
        return st;
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
    out->n_instances = n_inst;
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
    out->n_instances = 0;
    sleapc_grouping_ws *w = NULL;
    sleapc_status st = check_frame(sk, peaks, peak_vals, peak_channel_inds, n_peaks, edge_inds,
                                   edge_peak_inds, line_scores, n_cand, opts);
    if (st)
        goto done;
    if (!out->ws) {
        out->ws = sleapc__calloc(1, sizeof *out->ws);
        if (!out->ws) {
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "group instances: out of memory");
            goto done;
        }
    }
    w = out->ws;
    st = ws_reserve(w, sk->n_nodes, n_peaks, n_cand);
    if (st)
        goto done;
    /* Slots: each node's peaks in peak order (the grouping's per-node lists). */
    for (int64_t p = 0; p < n_peaks; p++)
        w->node_start[peak_channel_inds[p] + 1]++;
    for (int n = 0; n < sk->n_nodes; n++) {
        w->node_start[n + 1] += w->node_start[n];
        w->node_fill[n] = w->node_start[n];
    }
    for (int64_t p = 0; p < n_peaks; p++) {
        w->node_peaks[w->node_fill[peak_channel_inds[p]]++] = p;
        w->inst[p] = -1;
    }

    for (int k = 0; k < sk->n_edges; k++) {
        st = match_edge(w, k, n_peaks, edge_inds, edge_peak_inds, line_scores, n_cand);
        if (st)
            goto done;
    }
    /* group_instances_sample: drop weak matches (numpy compares in float32). */
    const float min_score = (float)opts->min_line_scores;
    int64_t kept = 0;
    for (int64_t i = 0; i < w->n_matches; i++) {
        if (w->matches[i].score >= min_score)
            w->matches[kept++] = w->matches[i];
    }
    w->n_matches = kept;

    assemble(w, sk);
    drop_small_instances(w, sk->n_nodes, opts);
    st = build_result(w, sk, peaks, peak_vals, peak_channel_inds, out);
done:
    if (st)
        sleapc__grouping_result_free(out);
    return st;
}
