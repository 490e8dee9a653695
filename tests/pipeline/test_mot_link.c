/* Identity linking of the MOT trackers (--link_tracklets, max_tracks) on
 * made-up scenes: a track broken by a gap longer than the track buffer is
 * linked back into one identity; max_tracks 1 keeps one identity and
 * untracks the other animal (tracking score 0); degenerate input (no
 * frames, no visible point, nothing confirmed) is linked without error;
 * the frame-by-frame tracker refuses a MOT tracker (linking needs the
 * whole video).
 * The reference runs against sleap-nn are in test_mot_reference.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/tracking/mot/mot_params.h"
#include "pipeline/tracking/mot/mot_run.h"
#include "pipeline/tracking/tracker.h"
#include "test_util.h"

#define N_FRAMES 60
#define GAP_FROM 30
#define GAP_TO 34 /* animal A unseen in frames 30..34 */

/* Two 2-node animals moving 2 px a frame, far apart; A is missing over the
 * gap when gap is set. */
static void scene(sleapc_predictions *pr, bool gap)
{
    memset(pr, 0, sizeof *pr);
    pr->n_nodes = 2;
    CHECK_OK(sleapc__results_reserve(pr, N_FRAMES, 2 * N_FRAMES));
    for (int t = 0; t < N_FRAMES; t++) {
        const bool a = !gap || t < GAP_FROM || t > GAP_TO;
        sleapc_pred_frame *f = &pr->frames[pr->n_frames++];
        *f = (sleapc_pred_frame){.video = 0, .frame_idx = t, .first = pr->n_insts, .n = 0};
        for (int k = 0; k < 2; k++) {
            if (k == 0 && !a)
                continue;
            const int64_t i = pr->n_insts++;
            f->n++;
            const float x = k == 0 ? 100.0f + 2.0f * (float)t : 300.0f - 2.0f * (float)t;
            const float y = k == 0 ? 100.0f : 300.0f;
            float *p = pr->points + i * 4;
            p[0] = x, p[1] = y, p[2] = x + 14.0f, p[3] = y + 14.0f;
            pr->point_scores[i * 2] = pr->point_scores[i * 2 + 1] = 0.9f;
            pr->insts[i] = (sleapc_pred_instance){
                .score = 0.9f, .track = -1, .tracking_score = NAN, .class_index = -1};
        }
    }
}

static sleapc_mot_params params(bool link, const char *const *kv, int n)
{
    sleapc_mot_named named = {.track_buffer = -1,
                              .min_hits = -1,
                              .track_high_threshold = NAN,
                              .track_low_threshold = NAN,
                              .new_track_threshold = NAN,
                              .min_match_similarity = NAN,
                              .oks_stddev = NAN,
                              .similarity = SLEAPC_MOT_SIM_AUTO,
                              .link_tracklets = link,
                              .max_tracks = -1};
    sleapc_mot_params p;
    CHECK_OK(sleapc__mot_params_resolve(SLEAPC_MOT_BYTETRACK, &named, kv, n, &p));
    return p;
}

/* The distinct tracks among the instances with x below / above 200 at t. */
static void tracks_of(const sleapc_predictions *pr, int *ids_a, int *n_a, int *ids_b, int *n_b)
{
    *n_a = *n_b = 0;
    for (int64_t i = 0; i < pr->n_insts; i++) {
        const int id = pr->insts[i].track;
        if (id < 0)
            continue;
        const bool is_a = pr->points[i * 4 + 1] < 200.0f;
        int *ids = is_a ? ids_a : ids_b, *n = is_a ? n_a : n_b;
        bool seen = false;
        for (int k = 0; k < *n; k++)
            seen = seen || ids[k] == id;
        if (!seen && *n < 8)
            ids[(*n)++] = id;
    }
}

static void broken_track_linked(void)
{
    static const char *const kv[] = {"track_buffer=3"};
    int a[8], b[8], na, nb, n_ids;
    sleapc_predictions pr;

    scene(&pr, true);
    sleapc_mot_params p = params(false, kv, 1);
    CHECK_OK(sleapc__mot_track_predictions(&pr, &p, &n_ids, NULL));
    tracks_of(&pr, a, &na, b, &nb);
    CHECK_MSG(na == 2 && nb == 1, "without linking: A has %d tracks, B %d", na, nb);
    sleapc__predictions_free(&pr);

    scene(&pr, true);
    p = params(true, kv, 1);
    CHECK_OK(sleapc__mot_track_predictions(&pr, &p, &n_ids, NULL));
    tracks_of(&pr, a, &na, b, &nb);
    CHECK_MSG(na == 1 && nb == 1 && a[0] != b[0], "linked: A has %d tracks, B %d", na, nb);
    CHECK(n_ids == 3); /* names minted: the merged-away one is not reused */
    int64_t untracked = 0;
    for (int64_t i = 0; i < pr.n_insts; i++)
        untracked += pr.insts[i].track < 0;
    CHECK_MSG(untracked <= 4, "%lld untracked", (long long)untracked); /* before min_hits */
    sleapc__predictions_free(&pr);
}

static void closed_set_one_animal(void)
{
    static const char *const kv[] = {"track_buffer=3", "max_tracks=1"};
    int a[8], b[8], na, nb, n_ids;
    sleapc_predictions pr;
    scene(&pr, true);
    sleapc_mot_params p = params(false, kv, 2);
    CHECK(sleapc__mot_params_link(&p));
    double *scores = malloc((size_t)pr.n_insts * sizeof *scores);
    CHECK_OK(sleapc__mot_track_predictions(&pr, &p, &n_ids, scores));
    tracks_of(&pr, a, &na, b, &nb);
    CHECK_MSG(na + nb == 1, "max_tracks 1: %d + %d tracks", na, nb);
    for (int64_t i = 0; i < pr.n_insts; i++)
        if (pr.insts[i].track < 0)
            CHECK(scores[i] == 0.0 && pr.insts[i].tracking_score == 0.0f);
    free(scores);
    sleapc__predictions_free(&pr);
}

static void degenerate_input(void)
{
    static const char *const kv[] = {"max_tracks=2"};
    const sleapc_mot_params p = params(true, kv, 1);
    int n_ids = -1;

    sleapc_predictions pr = {.n_nodes = 2};
    CHECK_OK(sleapc__mot_track_predictions(&pr, &p, &n_ids, NULL)); /* no frames */
    CHECK(n_ids == 0);
    sleapc__predictions_free(&pr);

    scene(&pr, false); /* every point missing: no valid detection */
    for (int64_t i = 0; i < pr.n_insts * 4; i++)
        pr.points[i] = NAN;
    CHECK_OK(sleapc__mot_track_predictions(&pr, &p, &n_ids, NULL));
    CHECK(n_ids == 0);
    sleapc__predictions_free(&pr);

    scene(&pr, false); /* one frame: nothing is confirmed */
    pr.n_frames = 1;
    pr.n_insts = 2;
    CHECK_OK(sleapc__mot_track_predictions(&pr, &p, &n_ids, NULL));
    CHECK(pr.insts[0].track < 0 && pr.insts[1].track < 0);
    sleapc__predictions_free(&pr);
}

static void frame_by_frame_refused(void)
{
    sleapc_tracker_opts o = sleapc__tracker_opts_default();
    o.mot = true;
    o.mot_params = params(true, NULL, 0);
    sleapc_tracker *t = NULL;
    CHECK(sleapc__tracker_create(&o, 2, &t) == SLEAPC_ERR_UNSUPPORTED && !t);
    CHECK(strstr(sleapc_last_error(), "--link_tracklets") != NULL);
}

int main(void)
{
    broken_track_linked();
    closed_set_one_animal();
    degenerate_input();
    frame_by_frame_refused();
    return test_finish();
}
