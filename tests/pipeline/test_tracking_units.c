/* Tracker behaviours the reference cases do not reach: the fixed window's
 * column order (CPython's set order, expectations printed by CPython 3.11's
 * list(set(...)) for these insertion orders), the None pseudo-track of
 * sleap-nn's fixed window (spec tracking.md §9.1, traced by hand through
 * sleap-nn's FixedWindowCandidates), and the pre-cull keeping the best
 * instances (sleapc's documented difference, §9.3). */
#include <math.h>
#include <string.h>

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
    o.scoring = SLEAPC_TRACK_COSINE_SIM; /* on keypoints: only 2 nodes */
    CHECK(sleapc__tracker_create(&o, 13, &t) == SLEAPC_ERR_INVALID_ARG && !t);
    CHECK(strstr(sleapc_last_error(), "cosine_sim") != NULL);
    CHECK_OK(sleapc__tracker_create(&o, 2, &t));
    sleapc__tracker_destroy(t);
    o = sleapc__tracker_opts_default();
    o.post_connect_single_breaks = true;
    CHECK(sleapc__tracker_create(&o, 2, &t) == SLEAPC_ERR_INVALID_ARG);
}

int main(void)
{
    test_set_order();
    test_none_pseudo_track();
    test_pre_cull_keeps_best();
    test_refusals();
    return test_finish();
}
