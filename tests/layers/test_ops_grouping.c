/* Bottom-up grouping: the edge visiting order on awkward skeletons, instance
 * assembly and its filters, numpy's argsort and the max_instances cut, then
 * every bottom-up reference case from its scored PAF graph to sleap-nn's
 * keypoints, peak values and instance scores. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "layers/ops/grouping.h"
#include "core/paf.h"
#include "ops_bottomup_case.h"
#include "test_util.h"

/* Edge order of a skeleton, compared with what networkx gives sleap-nn. */
static void check_order(const char *what, const int (*edges)[2], int n_edges, int n_nodes,
                        const int *want, int n_want)
{
    int order[16], n = -1;
    CHECK_OK(sleapc__grouping_edge_order(edges, n_edges, n_nodes, order, &n));
    bool same = n == n_want;
    for (int i = 0; same && i < n; i++)
        same = order[i] == want[i];
    CHECK_MSG(same, "%s: edge order differs (%d edges)", what, n);
}

static void test_edge_order(void)
{
    const int chain[3][2] = { { 0, 1 }, { 1, 2 }, { 2, 3 } };
    check_order("chain", chain, 3, 4, (const int[]){ 0, 1, 2 }, 3);
    /* Root is node 0 although node 1 appears first; successors in list order. */
    const int shuffled[4][2] = { { 1, 2 }, { 0, 1 }, { 1, 3 }, { 0, 4 } };
    check_order("shuffled tree", shuffled, 4, 5, (const int[]){ 1, 3, 0, 2 }, 4);
    const int forest[2][2] = { { 0, 1 }, { 2, 3 } };
    check_order("forest", forest, 2, 4, (const int[]){ 0 }, 1);
    const int dag[4][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 2, 3 } };
    check_order("dag", dag, 4, 4, (const int[]){ 0, 1, 2 }, 3);
    const int cycle_below[3][2] = { { 0, 1 }, { 1, 2 }, { 2, 1 } };
    check_order("cycle below root", cycle_below, 3, 3, (const int[]){ 0, 1 }, 2);
    const int two_roots[2][2] = { { 0, 2 }, { 1, 2 } };
    check_order("two roots", two_roots, 2, 3, (const int[]){ 0 }, 1);
    const int late_root[2][2] = { { 1, 0 }, { 2, 1 } };
    check_order("late root", late_root, 2, 3, (const int[]){ 1, 0 }, 2);
    const int dup[3][2] = { { 0, 1 }, { 0, 1 }, { 1, 2 } };
    check_order("duplicate edge", dup, 3, 3, (const int[]){ 0, 2 }, 2);

    int order[4], n;
    const int cycle[2][2] = { { 0, 1 }, { 1, 0 } };
    CHECK(sleapc__grouping_edge_order(cycle, 2, 2, order, &n) == SLEAPC_ERR_INVALID_ARG);
    const int self_loop[2][2] = { { 0, 0 }, { 0, 1 } };
    CHECK(sleapc__grouping_edge_order(self_loop, 2, 2, order, &n) == SLEAPC_ERR_INVALID_ARG);
    const int bad[1][2] = { { 0, 5 } };
    CHECK(sleapc__grouping_edge_order(bad, 1, 3, order, &n) == SLEAPC_ERR_INVALID_ARG);
    CHECK_OK(sleapc__grouping_edge_order(NULL, 0, 3, NULL, &n));
    CHECK(n == 0);
}

/* Two animals on a 3-node chain A -> B -> C, plus a stray C peak. Peaks are
 * listed animal 2 first for node A, so animal 2 becomes instance 0. */
static const float syn_peaks[7][2] = {
    { 100, 10 }, { 10, 10 }, /* A: animal 2, animal 1 */
    { 12, 20 },  { 102, 20 }, /* B */
    { 104, 30 }, { 14, 30 },  /* C */
    { 300, 300 },             /* stray C */
};
static const float syn_vals[7] = { 0.9f, 0.8f, 0.7f, 0.6f, 0.5f, 0.4f, 0.3f };
static const int32_t syn_ch[7] = { 0, 0, 1, 1, 2, 2, 2 };
static const int syn_edges[2][2] = { { 0, 1 }, { 1, 2 } };

/* Same animal (x within 50 px): 0.9 on edge 0 and 0.8 on edge 1; else 0.1. */
static void syn_scores(int32_t *ei, int64_t (*epi)[2], float *scores, int64_t *n)
{
    CHECK_OK(sleapc__paf_candidates(syn_ch, 7, 3, syn_edges, 2, 32, ei, epi, n));
    for (int64_t c = 0; c < *n; c++) {
        float dx = syn_peaks[epi[c][0]][0] - syn_peaks[epi[c][1]][0];
        scores[c] = fabsf(dx) < 50.0f ? (ei[c] == 0 ? 0.9f : 0.8f) : 0.1f;
    }
}

static void test_assembly(void)
{
    int32_t ei[32];
    int64_t epi[32][2], n_cand;
    float scores[32];
    syn_scores(ei, epi, scores, &n_cand);
    int order[2], n_order;
    CHECK_OK(sleapc__grouping_edge_order(syn_edges, 2, 3, order, &n_order));
    const sleapc_grouping_skeleton sk = { 3, 2, syn_edges, n_order, order };
    sleapc_grouping_opts opts = sleapc__grouping_opts_default();
    sleapc_grouping_result r = { 0 };
    CHECK_OK(sleapc__grouping_group_frame(&sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei,
                                          (const int64_t(*)[2])epi, scores, n_cand, &opts, &r));
    CHECK(r.n_instances == 2 && r.n_nodes == 3);
    if (r.n_instances == 2) {
        /* Instance 0 = animal 2 (A peak 0), 1 = animal 1; the stray C peak
         * loses its matching and forms nothing. */
        const int want_peak[2][3] = { { 0, 3, 4 }, { 1, 2, 5 } };
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 3; j++) {
                const int p = want_peak[i][j];
                CHECK(r.keypoints[(i * 3 + j) * 2] == syn_peaks[p][0]);
                CHECK(r.keypoints[(i * 3 + j) * 2 + 1] == syn_peaks[p][1]);
                CHECK(r.peak_values[i * 3 + j] == syn_vals[p]);
            }
            CHECK(r.scores[i] == 0.9f + 0.8f);
        }
    }
    sleapc__grouping_result_free(&r);

    /* A weak edge 1 (below min_line_scores) leaves 2-peak instances, which
     * min_instance_peaks = 3 then drops, and a fraction 0.9 (int(0.9 * 3) = 2)
     * keeps. */
    for (int64_t c = 0; c < n_cand; c++) {
        if (ei[c] == 1)
            scores[c] = 0.2f;
    }
    opts.min_instance_peaks = 3;
    CHECK_OK(sleapc__grouping_group_frame(&sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei,
                                          (const int64_t(*)[2])epi, scores, n_cand, &opts, &r));
    CHECK(r.n_instances == 0);
    sleapc__grouping_result_free(&r);
    opts.min_instance_peaks = 0.9;
    opts.min_instance_peaks_is_fraction = true;
    CHECK_OK(sleapc__grouping_group_frame(&sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei,
                                          (const int64_t(*)[2])epi, scores, n_cand, &opts, &r));
    CHECK(r.n_instances == 2);
    if (r.n_instances == 2) {
        CHECK(r.scores[0] == 0.9f && isnan(r.keypoints[2 * 2]) && isnan(r.peak_values[2]));
    }
    sleapc__grouping_result_free(&r);

    /* NaN scores (zero-length candidates) are forbidden pairs, not errors. */
    for (int64_t c = 0; c < n_cand; c++)
        scores[c] = NAN;
    opts = sleapc__grouping_opts_default();
    CHECK_OK(sleapc__grouping_group_frame(&sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei,
                                          (const int64_t(*)[2])epi, scores, n_cand, &opts, &r));
    CHECK(r.n_instances == 0);
    sleapc__grouping_result_free(&r);

    /* A candidate joining the wrong nodes is refused. */
    int64_t bad_epi[1][2] = { { 2, 3 } };
    CHECK(sleapc__grouping_group_frame(&sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei,
                                       (const int64_t(*)[2])bad_epi, scores, 1, &opts,
                                       &r) == SLEAPC_ERR_INVALID_ARG);
    CHECK(r.n_instances == 0 && r.keypoints == NULL);

    /* Every allocation failing in turn: a status, never a leak or crash. */
    for (int64_t fail = 1; fail < 40; fail++) {
        syn_scores(ei, epi, scores, &n_cand);
        sleapc__alloc_fail_after(fail);
        sleapc_status st = sleapc__grouping_group_frame(
            &sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei, (const int64_t(*)[2])epi, scores,
            n_cand, &opts, &r);
        sleapc__alloc_fail_after(0);
        CHECK(st == SLEAPC_OK || st == SLEAPC_ERR_NOMEM);
        CHECK(st == SLEAPC_OK || r.keypoints == NULL);
        sleapc__grouping_result_free(&r);
    }
}

/* Same instances, bit for bit (NaN included), in the same order. */
static bool same_result(const sleapc_grouping_result *a, const sleapc_grouping_result *b)
{
    const int64_t n = a->n_instances, cells = n * a->n_nodes;
    return n == b->n_instances && a->n_nodes == b->n_nodes &&
           (n == 0 ||
            (memcmp(a->keypoints, b->keypoints, (size_t)cells * 2 * sizeof(float)) == 0 &&
             memcmp(a->peak_values, b->peak_values, (size_t)cells * sizeof(float)) == 0 &&
             memcmp(a->scores, b->scores, (size_t)n * sizeof(float)) == 0));
}

/* A result passed again is overwritten: growing from a smaller frame gives
 * what a fresh result gives, and once sized, grouping a frame and packing it
 * (with a max_instances cut) allocate nothing. */
static void test_reuse(void)
{
    int32_t ei[32];
    int64_t epi[32][2], n_cand;
    float scores[32];
    syn_scores(ei, epi, scores, &n_cand);
    int order[2], n_order;
    CHECK_OK(sleapc__grouping_edge_order(syn_edges, 2, 3, order, &n_order));
    const sleapc_grouping_skeleton sk = { 3, 2, syn_edges, n_order, order };
    const sleapc_grouping_opts opts = sleapc__grouping_opts_default();
    sleapc_grouping_result fresh = { 0 }, r = { 0 };
    CHECK_OK(sleapc__grouping_group_frame(&sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei,
                                          (const int64_t(*)[2])epi, scores, n_cand, &opts,
                                          &fresh));

    /* First a frame of animal 1 alone: peaks 1, 2, 5 of the full list. */
    const float one_peaks[3][2] = { { 10, 10 }, { 12, 20 }, { 14, 30 } };
    const float one_vals[3] = { 0.8f, 0.7f, 0.4f };
    const int32_t one_ch[3] = { 0, 1, 2 };
    const int32_t one_ei[2] = { 0, 1 };
    const int64_t one_epi[2][2] = { { 0, 1 }, { 1, 2 } };
    const float one_scores[2] = { 0.9f, 0.8f };
    CHECK_OK(sleapc__grouping_group_frame(&sk, &one_peaks[0][0], one_vals, one_ch, 3, one_ei,
                                          one_epi, one_scores, 2, &opts, &r));
    CHECK(r.n_instances == 1);
    CHECK_OK(sleapc__grouping_group_frame(&sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei,
                                          (const int64_t(*)[2])epi, scores, n_cand, &opts, &r));
    CHECK(same_result(&fresh, &r));

    float kp[2][3][2], vals[2][3], sc[2];
    CHECK_OK(sleapc__grouping_pack(&r, 1, 3, 1, 1, 1.0f, NULL, &kp[0][0][0], &vals[0][0], sc));
    const int64_t before = sleapc__alloc_count();
    CHECK_OK(sleapc__grouping_group_frame(&sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei,
                                          (const int64_t(*)[2])epi, scores, n_cand, &opts, &r));
    CHECK_OK(sleapc__grouping_pack(&r, 1, 3, 1, 1, 1.0f, NULL, &kp[0][0][0], &vals[0][0], sc));
    CHECK_OK(sleapc__grouping_group_frame(&sk, &one_peaks[0][0], one_vals, one_ch, 3, one_ei,
                                          one_epi, one_scores, 2, &opts, &r));
    CHECK_MSG(sleapc__alloc_count() == before, "%lld allocations on a sized result",
              (long long)(sleapc__alloc_count() - before));
    CHECK(r.n_instances == 1 && r.keypoints[0] == 10.0f && r.peak_values[2] == 0.4f);
    /* Both instances score 1.7: the cut keeps the later one. */
    CHECK(sc[0] == 0.9f + 0.8f && kp[0][0][0] == 10.0f);

    /* A refused frame frees the result; it can be passed again. */
    const int64_t bad_epi[1][2] = { { 2, 3 } };
    CHECK(sleapc__grouping_group_frame(&sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei, bad_epi,
                                       scores, 1, &opts, &r) == SLEAPC_ERR_INVALID_ARG);
    CHECK(r.n_instances == 0 && r.keypoints == NULL && r.ws == NULL);
    CHECK_OK(sleapc__grouping_group_frame(&sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei,
                                          (const int64_t(*)[2])epi, scores, n_cand, &opts, &r));
    CHECK(same_result(&fresh, &r));

    /* Growth failing at every allocation in turn: a status and a freed
     * result, or the right answer; never a leak. */
    for (int64_t fail = 1; fail < 40; fail++) {
        sleapc__grouping_result_free(&r);
        CHECK_OK(sleapc__grouping_group_frame(&sk, &one_peaks[0][0], one_vals, one_ch, 3,
                                              one_ei, one_epi, one_scores, 2, &opts, &r));
        sleapc__alloc_fail_after(fail);
        sleapc_status st = sleapc__grouping_group_frame(
            &sk, &syn_peaks[0][0], syn_vals, syn_ch, 7, ei, (const int64_t(*)[2])epi, scores,
            n_cand, &opts, &r);
        sleapc__alloc_fail_after(0);
        CHECK(st == SLEAPC_OK || st == SLEAPC_ERR_NOMEM);
        CHECK(st == SLEAPC_OK ? same_result(&fresh, &r) : r.keypoints == NULL && r.ws == NULL);
    }
    sleapc__grouping_result_free(&r);
    sleapc__grouping_result_free(&fresh);
}

static void test_argsort(void)
{
    /* Up to 17 values numpy's argsort is an insertion sort: stable. */
    const float v[6] = { 0.5f, NAN, 0.2f, 0.5f, -1.0f, 0.2f };
    int64_t o[6];
    sleapc__grouping_argsort(v, 6, o);
    const int64_t want[6] = { 4, 2, 5, 0, 3, 1 };
    CHECK(memcmp(o, want, sizeof want) == 0);
    /* Longer arrays: a valid ascending order, NaN last, every index once. */
    float big[300];
    int64_t ob[300];
    for (int i = 0; i < 300; i++)
        big[i] = i % 17 == 0 ? NAN : (float)((i * 7919) % 23);
    sleapc__grouping_argsort(big, 300, ob);
    bool seen[300] = { false }, ok = true;
    for (int i = 0; i < 300; i++) {
        ok = ok && ob[i] >= 0 && ob[i] < 300 && !seen[ob[i]];
        if (!ok)
            break;
        seen[ob[i]] = true;
        if (i) {
            float a = big[ob[i - 1]], b = big[ob[i]];
            ok = isnan(b) || (!isnan(a) && a <= b);
        }
    }
    CHECK(ok);
}

static void test_pack(void)
{
    /* Three one-node instances scoring 0.5, 0.9, 0.5; two slots. The cut
     * keeps np.argsort(scores)[::-1][:2] = [1, 2]: ties later-index first. */
    float kp[3][2] = { { 10, 20 }, { 30, 40 }, { 50, 60 } };
    float vals[3] = { 0.1f, 0.2f, 0.3f };
    float sc[3] = { 0.5f, 0.9f, 0.5f };
    sleapc_grouping_result f = {
        .n_instances = 3, .n_nodes = 1, .keypoints = &kp[0][0], .peak_values = vals, .scores = sc
    };
    CHECK(sleapc__grouping_n_slots(&f, 1, 2) == 2);
    CHECK(sleapc__grouping_n_slots(&f, 1, 0) == 3);
    sleapc_grouping_result empty = { 0 };
    CHECK(sleapc__grouping_n_slots(&empty, 1, 0) == 1);

    float out_kp[2][2], out_vals[2], out_sc[2];
    const float eff = 2.0f;
    CHECK_OK(sleapc__grouping_pack(&f, 1, 1, 2, 2, 0.5f, &eff, &out_kp[0][0], out_vals,
                                   out_sc));
    /* x / 0.5 / 2 = x. */
    CHECK(out_kp[0][0] == 30 && out_kp[0][1] == 40 && out_vals[0] == 0.2f && out_sc[0] == 0.9f);
    CHECK(out_kp[1][0] == 50 && out_kp[1][1] == 60 && out_vals[1] == 0.3f && out_sc[1] == 0.5f);

    /* Without max_instances, assembly order is kept and spare slots are NaN. */
    float kp4[4][2], vals4[4], sc4[4];
    CHECK_OK(sleapc__grouping_pack(&f, 1, 1, 0, 4, 1.0f, NULL, &kp4[0][0], vals4, sc4));
    CHECK(kp4[0][0] == 10 && kp4[2][0] == 50 && sc4[1] == 0.9f);
    CHECK(isnan(kp4[3][0]) && isnan(vals4[3]) && isnan(sc4[3]));
    CHECK(sleapc__grouping_pack(&f, 1, 1, 0, 2, 1.0f, NULL, &kp4[0][0], vals4, sc4) ==
          SLEAPC_ERR_INVALID_ARG);
}

/* One result reused by every reference case, freed at the end. */
static sleapc_grouping_result shared_result;

/* Group one frame from the given scored graph and compare with out.*. */
static void check_case_outputs(bu_case *c, const int32_t *ei, const int64_t (*epi)[2],
                               const float *scores, int64_t n_cand, const char *what)
{
    int order[BU_MAX_EDGES], n_order;
    CHECK_OK(sleapc__grouping_edge_order(c->edges, c->n_edges, c->n_nodes, order, &n_order));
    const sleapc_grouping_skeleton sk = { c->n_nodes, c->n_edges, c->edges, n_order, order };
    sleapc_grouping_result r = { 0 };
    CHECK_OK(sleapc__grouping_group_frame(&sk, c->peaks.data, c->peak_vals.data,
                                          c->peak_channel_inds.data, c->peaks.shape[0], ei, epi,
                                          scores, n_cand, &c->group_opts, &r));
    /* The same frame grouped into the result every case before it filled
     * (other skeletons, other sizes) comes out bit for bit the same. */
    CHECK_OK(sleapc__grouping_group_frame(&sk, c->peaks.data, c->peak_vals.data,
                                          c->peak_channel_inds.data, c->peaks.shape[0], ei, epi,
                                          scores, n_cand, &c->group_opts, &shared_result));
    CHECK_MSG(same_result(&r, &shared_result), "%s (%s): reused result differs", c->id, what);
    sleapc_tensor kp_want, vals_want, sc_want;
    if (ref_load(c->id, "out.pred_keypoints", &kp_want) &&
        ref_load(c->id, "out.pred_peak_values", &vals_want) &&
        ref_load(c->id, "out.instance_scores", &sc_want)) {
        const int64_t n_slots = sleapc__grouping_n_slots(&r, 1, c->max_instances);
        CHECK_MSG(kp_want.shape[0] == 1 && kp_want.shape[1] == n_slots &&
                      kp_want.shape[2] == c->n_nodes,
                  "%s: %lld slots, want %lld", c->id, (long long)n_slots,
                  (long long)kp_want.shape[1]);
        if (kp_want.shape[1] == n_slots) {
            const int64_t n_pts = n_slots * c->n_nodes;
            float *kp = sleapc__malloc((size_t)n_pts * 2 * sizeof(float));
            float *vals = sleapc__malloc((size_t)n_pts * sizeof(float));
            float *sc = sleapc__malloc((size_t)n_slots * sizeof(float));
            CHECK_OK(sleapc__grouping_pack(&r, 1, c->n_nodes, c->max_instances, n_slots,
                                           c->input_scale, c->eff_scale, kp, vals, sc));
            ref_diff dk = { 0 }, dv = { 0 }, ds = { 0 };
            ref_diff_add(&dk, kp, kp_want.data, n_pts * 2);
            ref_diff_add(&dv, vals, vals_want.data, n_pts);
            ref_diff_add(&ds, sc, sc_want.data, n_slots);
            /* README tolerances: ~1e-3 px for refined keypoints (here only
             * the float32 scale undo runs), ~1e-5 for values and scores.
             * Instance order must match, so slots are compared in place. */
            CHECK_MSG(dk.max_abs <= 1e-3 && dk.n_nan_mismatch == 0,
                      "%s (%s): keypoints max |err| %.3g, %lld NaN mismatches", c->id, what,
                      dk.max_abs, (long long)dk.n_nan_mismatch);
            CHECK_MSG(dv.max_abs <= 1e-5 && dv.n_nan_mismatch == 0,
                      "%s (%s): peak values max |err| %.3g", c->id, what, dv.max_abs);
            CHECK_MSG(ds.max_abs <= 1e-5 && ds.n_nan_mismatch == 0,
                      "%s (%s): instance scores max |err| %.3g", c->id, what, ds.max_abs);
            printf("%-44s %-8s %lld instances: keypoints %.3g px, values %.3g, scores %.3g "
                   "(bits differ: %lld/%lld/%lld)\n",
                   c->id, what, (long long)r.n_instances, dk.max_abs, dv.max_abs, ds.max_abs,
                   (long long)dk.n_diff_bits, (long long)dv.n_diff_bits,
                   (long long)ds.n_diff_bits);
            sleapc__free(kp);
            sleapc__free(vals);
            sleapc__free(sc);
        }
    }
    sleapc__free(kp_want.data);
    sleapc__free(vals_want.data);
    sleapc__free(sc_want.data);
    sleapc__grouping_result_free(&r);
}

static void test_reference_case(const char *id)
{
    bu_case c;
    if (!bu_case_load(id, &c)) {
        bu_case_free(&c);
        return;
    }
    /* 1: sleap-nn's own scored graph -> grouping alone. */
    const int64_t k = c.edge_inds.shape[0];
    check_case_outputs(&c, c.edge_inds.data, (const int64_t(*)[2])c.edge_peak_inds.data,
                       c.line_scores.data, k, "stored");

    /* 2: the whole chain from the stored peaks and PAFs. */
    int64_t n = 0;
    CHECK_OK(sleapc__paf_count_candidates(c.peak_channel_inds.data, c.peaks.shape[0], c.n_nodes,
                                          c.edges, c.n_edges, &n));
    int32_t *ei = sleapc__malloc((size_t)(n > 0 ? n : 1) * sizeof *ei);
    int64_t(*epi)[2] = sleapc__malloc((size_t)(n > 0 ? n : 1) * sizeof *epi);
    float *scores = sleapc__malloc((size_t)(n > 0 ? n : 1) * sizeof *scores);
    CHECK_OK(sleapc__paf_candidates(c.peak_channel_inds.data, c.peaks.shape[0], c.n_nodes,
                                    c.edges, c.n_edges, n, ei, epi, &n));
    CHECK_OK(sleapc__paf_score_lines(c.pafs.data, c.n_edges, c.pafs.shape[2], c.pafs.shape[3],
                                     c.peaks.data, c.peaks.shape[0], ei,
                                     (const int64_t(*)[2])epi, n, &c.score_opts, scores));
    check_case_outputs(&c, ei, (const int64_t(*)[2])epi, scores, n, "chain");
    sleapc__free(ei);
    sleapc__free(epi);
    sleapc__free(scores);
    bu_case_free(&c);
}

int main(void)
{
    test_edge_order();
    test_assembly();
    test_reuse();
    test_argsort();
    test_pack();

    test_require_data();
    static ref_cases all;
    const char *ids[REF_MAX_CASES];
    int n = bu_list_cases(&all, ids, REF_MAX_CASES);
    CHECK_MSG(n >= 9, "found only %d bottom-up cases", n);
    for (int i = 0; i < n; i++)
        test_reference_case(ids[i]);
    sleapc__grouping_result_free(&shared_result);
    return test_finish();
}
