/* The MOT trackers (SORT, OC-SORT, ByteTrack) against sleap-nn 0.3.5's on
 * the same detections: every case under sleapnn-0.3.5/tracking/ whose
 * tracker sleapc runs. The options (options.json "options", the argv after
 * --tracking) go through the public option struct and its resolution; the
 * resolved MOT parameters must equal those sleap-nn recorded, and the
 * tracks must be sleap-nn's:
 *  - every instance's track name exactly, untracked ones (null) included;
 *  - the output order (a MOT tracker keeps every instance in place);
 *  - the tracks created, in creation order, and the output's track list;
 *  - tracking scores within 1e-9 relative in float64 (they are IoUs of
 *    Kalman-predicted and detected boxes computed in float64; what may
 *    differ is the order of float operations in the filter's linear algebra
 *    (LAPACK there), a few ulp, while any other match moves a score by far
 *    more).
 * Then `sleapc track` on input.slp must write the same tracks, with the
 * scores float32-rounded as a .slp stores them. Identity linking
 * (--link_tracklets) runs after tracking and must give sleap-nn's merged
 * tracks. A case sleap-nn refused (an appearance tracker without re-ID
 * vectors) must be refused by sleapc with the same first sentence. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/predictions/predictions_format.h"
#include "pipeline/tracking/mot/mot_run.h"
#include "pipeline/tracking/predictions_track.h"
#include "pipeline/tracking/tracking_config.h"
#include "test_util.h"

#include "mot_case.h"
#include "tracking_case.h"

#define SCORE_RTOL 1e-9

/* The resolved parameters against sleap-nn's record. */
static void check_params(const char *name, const sleapc_mot_params *p, const cJSON *rec)
{
    const struct {
        const char *key;
        double got;
    } nums[] = {
        {"track_buffer", p->track_buffer},
        {"min_hits", p->min_hits},
        {"track_high_threshold", p->track_high_threshold},
        {"track_low_threshold", p->track_low_threshold},
        {"new_track_threshold", p->new_track_threshold},
        {"min_match_similarity", p->min_match_similarity},
        {"low_stage_min_similarity", p->low_stage_min_similarity},
        {"unconfirmed_min_similarity", p->unconfirmed_min_similarity},
        {"duplicate_similarity", p->duplicate_similarity},
        {"box_padding", p->box_padding},
        {"oks_stddev", p->oks_stddev},
        {"delta_t", p->delta_t},
        {"inertia", p->inertia},
        {"normalize_scores", p->normalize_scores},
        {"fuse_score", p->fuse_score},
        {"use_byte", p->use_byte},
        {"nsa", p->nsa},
        {"link_tracklets", p->link_tracklets},
        {"link_spatial_gate_frames", p->link_spatial_gate_frames},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        const cJSON *v = cJSON_GetObjectItem(rec, nums[i].key);
        const double want = cJSON_IsBool(v) ? cJSON_IsTrue(v) : (v ? v->valuedouble : NAN);
        CHECK_MSG(v && want == nums[i].got, "%s: %s = %g, sleap-nn %g", name, nums[i].key,
                  nums[i].got, want);
    }
    static const char *const kalman[] = {"auto", "xywh", "xyah", "xysr"};
    const cJSON *k = cJSON_GetObjectItem(rec, "kalman");
    CHECK_MSG(cJSON_IsString(k) && !strcmp(k->valuestring, kalman[p->kalman]), "%s: kalman %s",
              name, kalman[p->kalman]);
    const cJSON *pre = cJSON_GetObjectItem(rec, "preset");
    CHECK_MSG(cJSON_IsString(pre) && !strcmp(pre->valuestring, p->paper ? "paper" : "animal"),
              "%s: preset", name);
}

/* Frame k of pr whose frame index is frame_idx (one video), or -1. */
static int64_t find_frame(const sleapc_predictions *pr, int64_t frame_idx, int64_t hint)
{
    if (hint >= 0 && hint < pr->n_frames && pr->frames[hint].frame_idx == frame_idx)
        return hint;
    for (int64_t k = 0; k < pr->n_frames; k++)
        if (pr->frames[k].frame_idx == frame_idx)
            return k;
    return -1;
}

/* Compares pr's tracks (names as "track_<id>" when ids, else
 * pr->track_names) and scores with expected. */
static void compare(const char *name, const sleapc_predictions *pr, bool ids, const double *scores,
                    const float *scores32, const cJSON *expected)
{
    const cJSON *frames = cJSON_GetObjectItem(expected, "frames");
    const int nf = cJSON_GetArraySize(frames);
    CHECK_MSG(nf == pr->n_frames, "%s: %d frames expected, %lld", name, nf,
              (long long)pr->n_frames);
    int track_bad = 0, score_bad = 0, order_bad = 0, n = 0;
    double worst = 0;
    for (int fi = 0; fi < nf; fi++) {
        const cJSON *fe = cJSON_GetArrayItem(frames, fi);
        const int64_t k =
            find_frame(pr, (int64_t)cJSON_GetObjectItem(fe, "frame_idx")->valuedouble, fi);
        const cJSON *tr = cJSON_GetObjectItem(fe, "track");
        const cJSON *ts = cJSON_GetObjectItem(fe, "tracking_score");
        const cJSON *out = cJSON_GetObjectItem(fe, "out");
        if (k < 0 || cJSON_GetArraySize(tr) != pr->frames[k].n) {
            track_bad++;
            continue;
        }
        const sleapc_pred_frame *f = &pr->frames[k];
        for (int i = 0; i < cJSON_GetArraySize(out); i++)
            order_bad += cJSON_GetArrayItem(out, i)->valueint != i;
        order_bad += cJSON_GetArraySize(out) != f->n;
        for (int64_t i = 0; i < f->n; i++, n++) {
            const cJSON *want = cJSON_GetArrayItem(tr, (int)i);
            char gname[32];
            const bool same =
                tracking_case_track_is(pr, f->first + i, ids, want, gname, sizeof gname);
            const int got = pr->insts[f->first + i].track;
            if (!same) {
                if (track_bad++ < 5)
                    fprintf(stderr, "%s: frame %d instance %lld: track %s, sleap-nn %s\n", name, fi,
                            (long long)i, got >= 0 ? gname : "none",
                            cJSON_IsNull(want) ? "none" : want->valuestring);
                continue;
            }
            if (got < 0)
                continue;
            const double w = tracking_case_number(cJSON_GetArrayItem(ts, (int)i));
            if (scores) {
                const double g = scores[f->first + i];
                const double err = fabs(g - w) / fmax(fmax(fabs(g), fabs(w)), 1e-300);
                worst = err > worst ? err : worst;
                score_bad += !(fabs(g - w) <= SCORE_RTOL * fmax(fabs(g), fabs(w)));
            } else {
                score_bad += scores32[f->first + i] != (float)w;
            }
        }
    }
    fprintf(stderr, "%s: %d instances, %d tracks differ, %d scores differ (worst %.3g), %d order\n",
            name, n, track_bad, score_bad, worst, order_bad);
    CHECK_MSG(track_bad == 0, "%s: %d tracks differ", name, track_bad);
    CHECK_MSG(score_bad == 0, "%s: %d scores differ", name, score_bad);
    CHECK_MSG(order_bad == 0, "%s: output order differs", name);
}

/* A case sleap-nn refused (an appearance tracker on detections without
 * re-ID vectors): sleapc refuses it too, its message opening with the
 * sentence of sleap-nn's up to the first period or colon. */
static void check_refusal(const char *dir, const char *name, const cJSON *options,
                          const cJSON *expected)
{
    const char *kv[16];
    sleapc_tracking_opts t;
    const cJSON *msg = cJSON_GetObjectItem(cJSON_GetObjectItem(expected, "error"), "message");
    if (!mot_case_opts(options, &t, kv, 16) || !t.tracker || !cJSON_IsString(msg))
        return;
    char in_path[1024];
    snprintf(in_path, sizeof in_path, "%s/../input.slp", dir);
    sleapc_predictions pr;
    CHECK_OK(sleapc__predictions_read(in_path, &pr, NULL));
    sleapc_tracker_opts to;
    sleapc_status st = sleapc__tracking_resolve(&t, pr.n_nodes, &to);
    int n_ids = 0;
    if (st == SLEAPC_OK)
        st = sleapc__mot_track_predictions(&pr, &to.mot_params, &n_ids, NULL);
    const char *want = msg->valuestring;
    const size_t n = strcspn(want, ".:");
    CHECK_MSG(st == SLEAPC_ERR_INVALID_ARG && !strncmp(sleapc_last_error(), want, n),
              "%s: sleap-nn refused (%s), sleapc: %s", name, want,
              st ? sleapc_last_error() : "tracked");
    fprintf(stderr, "%s: refused: %s\n", name, st ? sleapc_last_error() : "");
    sleapc__predictions_free(&pr);
}

static void run_case(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/options.json", dir);
    cJSON *options = tracking_case_load(path);
    snprintf(path, sizeof path, "%s/expected.json", dir);
    cJSON *expected = tracking_case_load(path);
    CHECK_MSG(options && expected, "%s: unreadable case files", name);
    if (options && expected && cJSON_GetObjectItem(expected, "error"))
        check_refusal(dir, name, options, expected);
    if (!options || !expected || cJSON_GetObjectItem(expected, "error")) {
        cJSON_Delete(options);
        cJSON_Delete(expected);
        return;
    }
    const char *kv[16];
    sleapc_tracking_opts t;
    CHECK_MSG(mot_case_opts(options, &t, kv, 16), "%s: options not understood", name);
    if (!t.tracker || !strcmp(t.tracker, "classic")) {
        cJSON_Delete(options);
        cJSON_Delete(expected);
        return; /* the classic tracker: test_tracking_reference */
    }
    char in_path[1024];
    snprintf(in_path, sizeof in_path, "%s/../input.slp", dir);
    sleapc_predictions pr;
    CHECK_OK(sleapc__predictions_read(in_path, &pr, NULL));
    sleapc_tracker_opts to;
    const sleapc_status rs = sleapc__tracking_resolve(&t, pr.n_nodes, &to);
    const cJSON *rec = cJSON_GetObjectItem(
        cJSON_GetObjectItem(options, "tracking_provenance_in_output"), "tracking");
    if (rs == SLEAPC_ERR_UNSUPPORTED) {
        fprintf(stderr, "%s: refused: %s\n", name, sleapc_last_error());
        const sleapc_mot_tracker k = to.mot_params.tracker;
        CHECK_MSG(k != SLEAPC_MOT_SORT && k != SLEAPC_MOT_BYTETRACK && k != SLEAPC_MOT_OCSORT,
                  "%s: refused", name);
        sleapc__predictions_free(&pr);
        cJSON_Delete(options);
        cJSON_Delete(expected);
        return;
    }
    CHECK_OK(rs);
    check_params(name, &to.mot_params, cJSON_GetObjectItem(rec, "params"));
    double *scores = malloc((size_t)(pr.n_insts > 0 ? pr.n_insts : 1) * sizeof *scores);
    int n_ids = 0;
    CHECK_OK(sleapc__mot_track_predictions(&pr, &to.mot_params, &n_ids, scores));
    compare(name, &pr, true, scores, NULL, expected);
    const cJSON *created = cJSON_GetObjectItem(expected, "tracks_created");
    bool created_ok = cJSON_GetArraySize(created) == n_ids;
    for (int i = 0; created_ok && i < n_ids; i++) {
        char want[32];
        snprintf(want, sizeof want, "track_%d", i);
        created_ok = !strcmp(cJSON_GetArrayItem(created, i)->valuestring, want);
    }
    CHECK_MSG(created_ok, "%s: %d tracks created, sleap-nn %d", name, n_ids,
              cJSON_GetArraySize(created));
    free(scores);
    sleapc__predictions_free(&pr);

    /* the command line on the .slp: the file's tracks, in its order */
    char out_path[1024], args[4096];
    snprintf(out_path, sizeof out_path, "%s/%s.slp", test_tmp_dir(), name);
    int k = snprintf(args, sizeof args, "track --quiet -i '%s' -o '%s' --tracking --tracker %s%s",
                     in_path, out_path, t.tracker, t.link_tracklets ? " --link_tracklets" : "");
    for (int i = 0; i < t.n_mot_params; i++)
        k += snprintf(args + k, sizeof args - (size_t)k, " --mot_param %s", t.mot_params[i]);
    CHECK_MSG(test_run_cli(args) == 0, "%s: sleapc track failed: %s", name, test_cli_output());
    sleapc_predictions got;
    if (sleapc__predictions_read(out_path, &got, NULL) == SLEAPC_OK) {
        float *s32 = malloc((size_t)(got.n_insts > 0 ? got.n_insts : 1) * sizeof *s32);
        for (int64_t i = 0; i < got.n_insts; i++)
            s32[i] = got.insts[i].tracking_score;
        char cli_name[160];
        snprintf(cli_name, sizeof cli_name, "%s (sleapc track)", name);
        compare(cli_name, &got, false, NULL, s32, expected);
        const cJSON *listed = cJSON_GetObjectItem(expected, "tracks_in_output");
        bool listed_ok = cJSON_GetArraySize(listed) == got.n_tracks;
        for (int i = 0; listed_ok && i < got.n_tracks; i++)
            listed_ok = !strcmp(cJSON_GetArrayItem(listed, i)->valuestring, got.track_names[i]);
        CHECK_MSG(listed_ok, "%s: the output's track list differs", cli_name);
        free(s32);
        sleapc__predictions_free(&got);
    } else {
        CHECK_MSG(false, "%s: %s unreadable", name, out_path);
    }
    cJSON_Delete(options);
    cJSON_Delete(expected);
}

int main(void)
{
    test_require_data();
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", test_data_path("sleapnn-0.3.5/tracking"));
    char *names[64];
    const int n = test_list_dir(dir, names, 64);
    if (n <= 0) {
        fprintf(stderr, "no sleapnn-0.3.5/tracking cases; skipping\n");
        return 77;
    }
    for (int i = 0; i < n; i++) {
        char sub[1200];
        snprintf(sub, sizeof sub, "%s/%s", dir, names[i]);
        char probe[1300];
        snprintf(probe, sizeof probe, "%s/expected.json", sub);
        FILE *f = fopen(probe, "rb");
        if (f) {
            fclose(f);
            run_case(sub, names[i]);
        }
        free(names[i]);
    }
    return test_finish();
}
