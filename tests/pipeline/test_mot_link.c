/* Identity linking of the MOT trackers (--link_tracklets, max_tracks) on
 * made-up scenes: a track broken by a gap longer than the track buffer is
 * linked back into one identity; max_tracks 1 keeps one identity and
 * untracks the other animal (tracking score 0); degenerate input (no
 * frames, no visible point, nothing confirmed) is linked without error;
 * the frame-by-frame tracker refuses a MOT tracker (linking needs the
 * whole video). With re-ID vectors and an appearance calibration that
 * allows linking, a gap too long for a link by position is linked by
 * appearance; unusable vectors (NaN, zero) are no vectors, and vectors
 * that contradict the animals do not link them.
 * The reference runs against sleap-nn are in test_mot_reference.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/tracking/mot/mot_detect.h"
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

#define LONG_GAP_FROM 30
#define LONG_GAP_TO 49 /* A unseen for 20 frames: past 4 track buffers of 3 */

/* Two animals far apart, A missing over a long gap, with 3-float vectors:
 * A's are e0, B's e1; kind 1 gives A after the gap B's vector, kind 2
 * NaN vectors to every other instance and zero ones to the rest. */
static void vector_scene(sleapc_predictions *pr, int kind)
{
    memset(pr, 0, sizeof *pr);
    pr->n_nodes = 2;
    CHECK_OK(sleapc__results_reserve(pr, N_FRAMES, 2 * N_FRAMES));
    CHECK_OK(sleapc__results_set_emb_dim(pr, 3));
    for (int t = 0; t < N_FRAMES; t++) {
        const bool a = t < LONG_GAP_FROM || t > LONG_GAP_TO;
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
            float *e = pr->embeddings + i * 3;
            const int axis = kind == 1 && k == 0 && t > LONG_GAP_TO ? 1 : k;
            e[0] = e[1] = e[2] = 0.0f;
            e[axis] = 1.0f;
            if (kind == 2)
                e[0] = e[1] = e[2] = i % 2 ? NAN : 0.0f;
        }
    }
}

/* An appearance calibration that links at a statistic of 0.5 or more by a
 * margin of 0.1 for every query length. */
static mot_appearance_calibration linking_app(void)
{
    mot_appearance_calibration app = sleapc__mot_appearance_uncalibrated();
    app.status = MOT_APPEARANCE_OK;
    app.for_linking = app.for_association = true;
    app.link_thresh = 0.5;
    app.link_margin = 0.1;
    app.n_by_len = MOT_LINK_QUERY_LEN;
    for (int n = 0; n < MOT_LINK_QUERY_LEN; n++) {
        app.link_thresh_by_len[n] = 0.5;
        app.link_margin_by_len[n] = 0.1;
    }
    return app;
}

static void linked_by_appearance(void)
{
    static const char *const kv[] = {"track_buffer=3"};
    const sleapc_mot_params p = params(true, kv, 1);
    const mot_appearance_calibration app = linking_app();
    int a[8], b[8], na, nb, n_ids;
    sleapc_predictions pr;

    vector_scene(&pr, 0); /* by position: the gap is too long */
    CHECK_OK(sleapc__mot_track_predictions(&pr, &p, &n_ids, NULL));
    tracks_of(&pr, a, &na, b, &nb);
    CHECK_MSG(na == 2 && nb == 1, "by position: A has %d tracks, B %d", na, nb);
    sleapc__predictions_free(&pr);

    vector_scene(&pr, 0); /* by appearance: A's vectors agree across it */
    CHECK_OK(sleapc__mot_track_predictions_app(&pr, &p, &app, &n_ids, NULL));
    tracks_of(&pr, a, &na, b, &nb);
    CHECK_MSG(na == 1 && nb == 1 && a[0] != b[0], "by appearance: A has %d tracks, B %d", na, nb);
    sleapc__predictions_free(&pr);

    vector_scene(&pr, 1); /* A's vectors after the gap are B's: no link */
    CHECK_OK(sleapc__mot_track_predictions_app(&pr, &p, &app, &n_ids, NULL));
    tracks_of(&pr, a, &na, b, &nb);
    CHECK_MSG(na == 2 && nb == 1, "contradicting vectors: A has %d tracks, B %d", na, nb);
    sleapc__predictions_free(&pr);

    vector_scene(&pr, 2); /* no usable vector: linked by position, no error */
    CHECK_OK(sleapc__mot_track_predictions_app(&pr, &p, &app, &n_ids, NULL));
    tracks_of(&pr, a, &na, b, &nb);
    CHECK_MSG(na == 2 && nb == 1, "unusable vectors: A has %d tracks, B %d", na, nb);
    sleapc__predictions_free(&pr);

    static const char *const kv2[] = {"track_buffer=3", "max_tracks=2"};
    const sleapc_mot_params p2 = params(true, kv2, 2); /* closed set with appearance */
    vector_scene(&pr, 0);
    CHECK_OK(sleapc__mot_track_predictions_app(&pr, &p2, &app, &n_ids, NULL));
    tracks_of(&pr, a, &na, b, &nb);
    CHECK_MSG(na == 1 && nb == 1 && a[0] != b[0], "max_tracks 2: A has %d tracks, B %d", na, nb);
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
    linked_by_appearance();
    frame_by_frame_refused();
    return test_finish();
}
