/* The appearance-linking cases of tests/goldens/sleapnn-0.3.5-appearance
 * (ByteTrack with --link_tracklets on detections with re-ID vectors): the
 * appearance part of sleap-nn's recorded calibration, and the comparison of
 * instances' tracks and tracking scores with expected.json
 * (test_mot_link_appearance, test_cli_track_link_appearance). */
#ifndef SLEAPC_TEST_LINK_APPEARANCE_CASE_H
#define SLEAPC_TEST_LINK_APPEARANCE_CASE_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/results.h"
#include "pipeline/tracking/mot/mot_detect.h"
#include "test_util.h"
#include "tracking_case.h"

#define LINK_CASES_DIR SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-appearance"
#define LINK_CASE_DIR LINK_CASES_DIR "/clip_bytetrack_link_appearance"
#define LINK_CASE_INPUT LINK_CASES_DIR "/input.slp"

/* Tracking scores: float64 IoUs of Kalman-predicted boxes (a few ulp of
 * LAPACK order apart); linking only keeps or zeroes them. */
#define LINK_CASE_SCORE_RTOL 1e-9

static inline double link_case_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItem(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN; /* null: None */
}

/* The appearance part of videos[0]'s recorded calibration. */
static inline mot_appearance_calibration link_case_app(const cJSON *options)
{
    const cJSON *rec = cJSON_GetObjectItem(
        cJSON_GetObjectItem(options, "tracking_provenance_in_output"), "tracking");
    const cJSON *c = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(rec, "videos"), 0),
                                         "calibration");
    mot_appearance_calibration a = sleapc__mot_appearance_uncalibrated();
    const cJSON *status = cJSON_GetObjectItem(c, "status");
    if (cJSON_IsString(status))
        a.status = !strcmp(status->valuestring, "ok")             ? MOT_APPEARANCE_OK
                   : !strcmp(status->valuestring, "insufficient") ? MOT_APPEARANCE_INSUFFICIENT
                   : !strcmp(status->valuestring, "skipped")      ? MOT_APPEARANCE_SKIPPED
                                                                  : MOT_APPEARANCE_NO_VECTORS;
    a.n_anchors = (int64_t)link_case_num(c, "n_anchors");
    a.n_trials = (int64_t)link_case_num(c, "n_trials");
    a.assoc_rank1 = link_case_num(c, "assoc_rank1");
    a.m_assoc = link_case_num(c, "m_assoc");
    a.ema_cos_gate = link_case_num(c, "ema_cos_gate");
    a.gallery_cos_gate = link_case_num(c, "gallery_cos_gate");
    a.mu_pos = link_case_num(c, "mu_pos");
    a.mu_neg = link_case_num(c, "mu_neg");
    a.link_thresh = link_case_num(c, "link_thresh");
    a.link_margin = link_case_num(c, "link_margin");
    a.link_recall = link_case_num(c, "link_recall");
    a.neg_collision_rate = link_case_num(c, "neg_collision_rate");
    const cJSON *th = cJSON_GetObjectItem(c, "link_thresh_by_len");
    const cJSON *mg = cJSON_GetObjectItem(c, "link_margin_by_len");
    const int n = cJSON_GetArraySize(th);
    a.n_by_len = n < MOT_LINK_QUERY_LEN ? n : MOT_LINK_QUERY_LEN;
    for (int i = 0; i < a.n_by_len; i++) {
        const cJSON *t = cJSON_GetArrayItem(th, i), *m = cJSON_GetArrayItem(mg, i);
        a.link_thresh_by_len[i] = cJSON_IsNumber(t) ? t->valuedouble : NAN;
        a.link_margin_by_len[i] = cJSON_IsNumber(m) ? m->valuedouble : NAN;
    }
    a.for_association = cJSON_IsTrue(cJSON_GetObjectItem(c, "appearance_for_association"));
    a.for_linking = cJSON_IsTrue(cJSON_GetObjectItem(c, "appearance_for_linking"));
    return a;
}

/* Every instance's track against expected.json (names exact, untracked
 * ones included) and its tracking score: scores (float64) within the
 * relative tolerance, else scores32 as a .slp stores them. ids: tracks
 * are ids of "track_<id>", else indices into pr->track_names. Returns the
 * number of instances that differ; *worst the largest relative score
 * difference. */
static inline int link_case_compare(const char *name, const sleapc_predictions *pr, bool ids,
                                    const double *scores, const float *scores32,
                                    const cJSON *expected, double *worst)
{
    const cJSON *frames = cJSON_GetObjectItem(expected, "frames");
    int bad = 0, k = 0;
    *worst = 0.0;
    for (int fi = 0; fi < cJSON_GetArraySize(frames); fi++) {
        const cJSON *fe = cJSON_GetArrayItem(frames, fi);
        const int64_t fidx = (int64_t)cJSON_GetObjectItem(fe, "frame_idx")->valuedouble;
        const cJSON *tr = cJSON_GetObjectItem(fe, "track");
        const cJSON *ts = cJSON_GetObjectItem(fe, "tracking_score");
        while (k < pr->n_frames && pr->frames[k].frame_idx != fidx)
            k++;
        if (k == pr->n_frames || cJSON_GetArraySize(tr) != pr->frames[k].n) {
            fprintf(stderr, "%s: frame %lld missing or resized\n", name, (long long)fidx);
            return bad + 1;
        }
        const sleapc_pred_frame *f = &pr->frames[k];
        for (int64_t i = 0; i < f->n; i++) {
            const cJSON *want = cJSON_GetArrayItem(tr, (int)i);
            char gname[32];
            const bool same =
                tracking_case_track_is(pr, f->first + i, ids, want, gname, sizeof gname);
            const int got = pr->insts[f->first + i].track;
            if (!same) {
                if (bad++ < 5)
                    fprintf(stderr, "%s: frame %lld instance %lld: track %s, sleap-nn %s\n", name,
                            (long long)fidx, (long long)i, got >= 0 ? gname : "none",
                            cJSON_IsNull(want) ? "none" : want->valuestring);
                continue;
            }
            if (got < 0)
                continue; /* untracked: no score to compare */
            const double w = tracking_case_number(cJSON_GetArrayItem(ts, (int)i));
            if (scores) {
                const double g = scores[f->first + i];
                const double err = fabs(g - w) / fmax(fmax(fabs(g), fabs(w)), 1e-300);
                *worst = err > *worst ? err : *worst;
                bad += !(fabs(g - w) <= LINK_CASE_SCORE_RTOL * fmax(fabs(g), fabs(w)));
            } else {
                bad += scores32[f->first + i] != (float)w;
            }
        }
    }
    return bad;
}

#endif
