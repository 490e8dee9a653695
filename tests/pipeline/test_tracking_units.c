/* Tracker behaviours the reference cases do not reach: the fixed window's
 * column order (CPython's set order, expectations printed by CPython 3.11's
 * list(set(...)) for these insertion orders), the None pseudo-track of
 * sleap-nn's fixed window (spec tracking.md §9.1, traced by hand through
 * sleap-nn's FixedWindowCandidates), and the pre-cull keeping the best
 * instances (sleapc's documented difference, §9.3); the infinite-cost
 * pairings of sleap-nn 0.3.5 (#745) and 0.3.3; a crowded frame (the
 * tracker's scratch lives on the heap, not the stack) and every allocation
 * failing in turn. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "pipeline/tracking/track_match.h"
#include "pipeline/tracking/tracker.h"
#include "test_util.h"

typedef struct set_case {
    int n;
    int64_t keys[32];
    int64_t order[32];
} set_case;

static const set_case set_cases[] = {
    {2, {3, 9}, {9, 3}},
    {2, {8, 1}, {8, 1}},
    {6, {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}},
    {4, {17, 3, 33, 1}, {17, 3, 1, 33}},
    {5, {5, 13, 21, 29, 2}, {2, 5, 13, 21, 29}},
    {8, {100, 7, 64, 3, 200, 1, 9, 40}, {64, 1, 3, 100, 7, 200, 9, 40}},
    {6, {291, 32, 130, 60, 253, 230}, {32, 130, 291, 230, 60, 253}},
    {17,
     {194, 107, 48, 249, 14, 199, 221, 1, 228, 136, 117, 52, 162, 15, 11, 13, 277},
     {1, 194, 162, 228, 199, 136, 107, 11, 13, 14, 15, 48, 52, 117, 277, 249, 221}},
    {2, {195, 110}, {195, 110}},
    {15,
     {14, 270, 113, 224, 253, 283, 119, 176, 118, 112, 235, 148, 11, 213, 284},
     {224, 235, 11, 14, 270, 176, 113, 112, 148, 213, 118, 119, 283, 284, 253}},
};

static void test_set_order(void)
{
    sleapc_track_match_ws ws;
    memset(&ws, 0, sizeof ws);
    for (size_t c = 0; c < sizeof set_cases / sizeof set_cases[0]; c++) {
        int64_t out[32];
        const int m = sleapc__pyset_order(set_cases[c].keys, set_cases[c].n, &ws, out);
        int distinct = 0; /* the keys are distinct in every case */
        distinct = set_cases[c].n;
        CHECK_MSG(m == distinct, "case %zu: %d keys, expected %d", c, m, distinct);
        bool same = true;
        for (int i = 0; i < m && same; i++)
            same = out[i] == set_cases[c].order[i];
        CHECK_MSG(same, "case %zu: another order than CPython's", c);
    }
    sleapc__track_match_ws_free(&ws);
}

/* One frame through t; returns the number kept. */
static int step(sleapc_tracker *t, int64_t idx, const double *pts, const double *scores, int n,
                int *track)
{
    int out[8];
    double ts[8];
    sleapc_track_frame_in in = {.frame_idx = idx, .n_insts = n, .points = pts, .scores = scores};
    sleapc_track_frame_out o = {.out = out, .track = track, .tracking_score = ts};
    CHECK_OK(sleapc__tracker_track_frame(t, &in, &o));
    return o.n_out;
}

static void test_none_pseudo_track(void)
{
    sleapc_tracker_opts o = sleapc__tracker_opts_default();
    o.min_new_track_points = 1; /* spawn only with 2 visible points */
    sleapc_tracker *t = NULL;
    CHECK_OK(sleapc__tracker_create(&o, 2, &t));
    if (!t)
        return;
    int track[2];
    /* frame 0: animal A alone: track 0 */
    const double f0[] = {10, 10, 20, 20};
    CHECK(step(t, 0, f0, NULL, 1, track) == 1 && track[0] == 0);
    /* frame 1: A, and B with one visible point: B cannot spawn a track and
     * stays in the window with track None; it is dropped */
    const double f1[] = {11, 10, 21, 20, 300, 300, NAN, NAN};
    CHECK(step(t, 1, f1, NULL, 2, track) == 1 && track[0] == 0 && track[1] == -1);
    /* frame 2: B back with both points, on its old spot: the None column
     * matches it best (OKS 0.5), every row is matched, so no new track is
     * made and B is dropped again (sleap-nn's behaviour, spec §9.1) */
    const double f2[] = {12, 10, 22, 20, 300, 300, 310, 310};
    CHECK(step(t, 2, f2, NULL, 2, track) == 1 && track[0] == 0 && track[1] == -1);
    CHECK(sleapc__tracker_n_tracks(t) == 1);
    sleapc__tracker_destroy(t);
}

/* One frame through t with its tracking scores. */
static void step_scores(sleapc_tracker *t, int64_t idx, const double *pts, int n, int *track,
                        double *ts)
{
    int out[8];
    sleapc_track_frame_in in = {.frame_idx = idx, .n_insts = n, .points = pts};
    sleapc_track_frame_out o = {.out = out, .track = track, .tracking_score = ts};
    CHECK_OK(sleapc__tracker_track_frame(t, &in, &o));
}

/* An infinite-cost pairing (sleap-nn #745): with min_match_points 1, a track
 * whose only candidate has 1 visible point gets a NaN score (cost +inf) from
 * every detection. The Hungarian matcher still pairs a detection with it.
 * 0.3.3 keeps the pairing (score -inf); 0.3.5 drops it when the detection
 * can start a track (enough points, and a free track under max_tracks), so
 * it does with score 1. sleap-nn 0.3.5's Tracker, run on these frames, gives
 * the tracks checked here. */
static void run_infeasible(sleapc_track_candidates cand, int max_tracks, bool keep_infeasible,
                           int want_track, double want_score)
{
    sleapc_tracker_opts o = sleapc__tracker_opts_default();
    o.min_match_points = 1;
    o.candidates = cand;
    o.max_tracks = max_tracks;
    o.keep_infeasible = keep_infeasible;
    sleapc_tracker *t = NULL;
    CHECK_OK(sleapc__tracker_create(&o, 2, &t));
    if (!t)
        return;
    int track[2];
    double ts[2];
    /* frame 0: A, and B with its head only: tracks 0 and 1 */
    const double f0[] = {10, 10, 20, 20, 100, 100, NAN, NAN};
    step_scores(t, 0, f0, 2, track, ts);
    CHECK(track[0] == 0 && track[1] == 1);
    /* frame 1: both whole; track 1's candidate (B) has too few points */
    const double f1[] = {11, 11, 21, 21, 101, 101, 111, 111};
    step_scores(t, 1, f1, 2, track, ts);
    CHECK_MSG(track[0] == 0 && isfinite(ts[0]), "candidates %d max_tracks %d: A on %d", cand,
              max_tracks, track[0]);
    CHECK_MSG(track[1] == want_track && ts[1] == want_score,
              "candidates %d max_tracks %d keep %d: B on %d score %g, want %d score %g", cand,
              max_tracks, keep_infeasible, track[1], ts[1], want_track, want_score);
    CHECK(sleapc__tracker_n_tracks(t) == (want_track == 2 ? 3 : 2));
    sleapc__tracker_destroy(t);
}

/* A detection that cannot start a track keeps the forced pairing, so it is
 * never dropped from the output; one that can, later, starts one. */
static void test_infeasible_forced(void)
{
    sleapc_tracker_opts o = sleapc__tracker_opts_default();
    o.window_size = 1;
    o.min_match_points = 1;
    o.min_new_track_points = 1;
    sleapc_tracker *t = NULL;
    CHECK_OK(sleapc__tracker_create(&o, 2, &t));
    if (!t)
        return;
    int track[2];
    double ts[2];
    const double f0[] = {10, 10, 20, 20, 100, 100, 110, 110};
    step_scores(t, 0, f0, 2, track, ts);
    /* frame 1: B's thorax lost; it still matches track 1 (B had 2 points) */
    const double f1[] = {11, 11, 21, 21, 101, 101, NAN, NAN};
    step_scores(t, 1, f1, 2, track, ts);
    CHECK(track[1] == 1 && isfinite(ts[1]));
    /* frame 2: track 1's candidate now has 1 point: infinite cost, and the
     * 1-point detection cannot start a track: the pairing stands */
    const double f2[] = {12, 12, 22, 22, 102, 102, NAN, NAN};
    step_scores(t, 2, f2, 2, track, ts);
    CHECK_MSG(track[1] == 1 && ts[1] == -INFINITY, "forced: track %d score %g", track[1], ts[1]);
    /* frame 3: whole again, so it can start a track: it does */
    const double f3[] = {13, 13, 23, 23, 103, 103, 113, 113};
    step_scores(t, 3, f3, 2, track, ts);
    CHECK_MSG(track[1] == 2 && ts[1] == 1.0, "dropped: track %d score %g", track[1], ts[1]);
    sleapc__tracker_destroy(t);
}

static void test_infeasible_pairs(void)
{
    run_infeasible(SLEAPC_TRACK_FIXED_WINDOW, -1, false, 2, 1.0);
    run_infeasible(SLEAPC_TRACK_LOCAL_QUEUES, -1, false, 2, 1.0);
    run_infeasible(SLEAPC_TRACK_LOCAL_QUEUES, 3, false, 2, 1.0);
    /* max_tracks 2: no free track, so the pairing stands */
    run_infeasible(SLEAPC_TRACK_LOCAL_QUEUES, 2, false, 1, -INFINITY);
    /* 0.3.3 */
    run_infeasible(SLEAPC_TRACK_FIXED_WINDOW, -1, true, 1, -INFINITY);
    run_infeasible(SLEAPC_TRACK_LOCAL_QUEUES, -1, true, 1, -INFINITY);
    test_infeasible_forced();
}

static void test_pre_cull_keeps_best(void)
{
    sleapc_tracker_opts o = sleapc__tracker_opts_default();
    o.target_instance_count = 2;
    o.pre_cull_to_target = true;
    sleapc_tracker *t = NULL;
    CHECK_OK(sleapc__tracker_create(&o, 2, &t));
    if (!t)
        return;
    int track[3];
    const double pts[] = {0, 0, 5, 5, 100, 100, 105, 105, 200, 200, 205, 205};
    const double scores[] = {0.9, 0.5, 0.7};
    CHECK(step(t, 0, pts, scores, 3, track) == 2);
    CHECK(track[0] >= 0 && track[1] == -1 && track[2] >= 0);
    sleapc__tracker_destroy(t);
}

static void test_refusals(void)
{
    sleapc_tracker_opts o = sleapc__tracker_opts_default();
    sleapc_tracker *t = NULL;
    o.scoring = SLEAPC_TRACK_COSINE_SIM;
    o.cosine_matrix = true; /* 0.3.3's, on keypoints: only 2 nodes */
    CHECK(sleapc__tracker_create(&o, 13, &t) == SLEAPC_ERR_INVALID_ARG && !t);
    CHECK(strstr(sleapc_last_error(), "cosine_sim") != NULL);
    CHECK_OK(sleapc__tracker_create(&o, 2, &t));
    sleapc__tracker_destroy(t);
    o.cosine_matrix = false; /* 0.3.5's: the raveled points, any skeleton */
    CHECK_OK(sleapc__tracker_create(&o, 13, &t));
    sleapc__tracker_destroy(t);
    o = sleapc__tracker_opts_default();
    o.post_connect_single_breaks = true;
    CHECK(sleapc__tracker_create(&o, 2, &t) == SLEAPC_ERR_INVALID_ARG);
}

/* Instance i of a crowded frame: nn points on a diagonal of its own (every
 * pose distinct), some nodes missing; score falls with i. */
static void crowded_frame(int n, int nn, double *pts, double *scores)
{
    for (int i = 0; i < n; i++) {
        scores[i] = 1.0 - (double)i / n;
        for (int k = 0; k < nn; k++) {
            double *p = pts + ((size_t)i * nn + k) * 2;
            p[0] = k % 7 == 3 ? NAN : 3.0 * i + 0.5 * k;
            p[1] = k % 7 == 3 ? NAN : 2.0 * i + 0.25 * k;
        }
    }
}

/* Runs two frames (a crowded one, then two animals) through a tracker with
 * every per-frame buffer in play: centroids (the median scratch), pre-cull
 * with NMS, post-tracking clean-up with NMS and connect_single_breaks. */
static sleapc_status run_crowded(int n, int nn, int *n_out)
{
    sleapc_tracker_opts o = sleapc__tracker_opts_default();
    o.features = SLEAPC_TRACK_CENTROIDS;
    o.scoring = SLEAPC_TRACK_EUCLIDEAN_DIST;
    o.target_instance_count = n - 1;
    o.pre_cull_to_target = true;
    o.pre_cull_iou_threshold = 0.8;
    o.clean_instance_count = 2;
    o.clean_iou_threshold = 0.8;
    o.post_connect_single_breaks = true;
    double *pts = sleapc__malloc((size_t)n * nn * 2 * sizeof *pts);
    double *scores = sleapc__malloc((size_t)n * sizeof *scores);
    double *ts = sleapc__malloc((size_t)n * sizeof *ts);
    int *out = sleapc__malloc((size_t)n * sizeof *out);
    int *track = sleapc__malloc((size_t)n * sizeof *track);
    sleapc_tracker *t = NULL;
    sleapc_status st = SLEAPC_ERR_NOMEM;
    if (!pts || !scores || !ts || !out || !track)
        goto done;
    crowded_frame(n, nn, pts, scores);
    if ((st = sleapc__tracker_create(&o, nn, &t)))
        goto done;
    sleapc_track_frame_out fo = {.out = out, .track = track, .tracking_score = ts};
    sleapc_track_frame_in in = {.frame_idx = 0, .n_insts = n, .points = pts, .scores = scores};
    if ((st = sleapc__tracker_track_frame(t, &in, &fo)))
        goto done;
    *n_out = fo.n_out;
    in = (sleapc_track_frame_in){.frame_idx = 1, .n_insts = 2, .points = pts, .scores = scores};
    st = sleapc__tracker_track_frame(t, &in, &fo);
done:
    sleapc__tracker_destroy(t);
    sleapc__free(pts);
    sleapc__free(scores);
    sleapc__free(ts);
    sleapc__free(out);
    sleapc__free(track);
    return st;
}

/* 4000 instances of 200 nodes: the clean-up's copy of their points alone is
 * 12.8 MB, more than a default thread stack holds. */
static void test_crowded_frame(void)
{
    int n_out = -1;
    CHECK_OK(run_crowded(4000, 200, &n_out));
    CHECK_MSG(n_out == 2, "kept %d instances of a crowded frame, want 2", n_out);
}

/* Every allocation of a small crowded run fails in turn: each gives NOMEM
 * (or, past the last allocation, success), never a crash or a leak. */
static void test_out_of_memory(void)
{
    int fails = 0;
    for (int k = 1; k < 400; k++) {
        int n_out = -1;
        sleapc__alloc_fail_after(k);
        const sleapc_status st = run_crowded(40, 9, &n_out);
        sleapc__alloc_fail_after(0);
        if (st == SLEAPC_OK) {
            CHECK(n_out == 2);
            break;
        }
        CHECK_MSG(st == SLEAPC_ERR_NOMEM, "allocation %d: status %d, want NOMEM", k, (int)st);
        fails++;
    }
    CHECK_MSG(fails > 10, "only %d allocations were reached", fails);
}

int main(void)
{
    test_crowded_frame();
    test_out_of_memory();
    test_set_order();
    test_none_pseudo_track();
    test_infeasible_pairs();
    test_pre_cull_keeps_best();
    test_refusals();
    return test_finish();
}
