/* The appearance (re-ID) MOT trackers against sleap-nn 0.3.5's on the same
 * detections and vectors (tests/goldens/sleapnn-0.3.5-appearance: input.slp
 * with one vector per instance; a case per tracker). The options
 * (options.json "options") go through the public option struct; every
 * instance must get sleap-nn's track name (untracked ones included), the
 * tracks must be created in sleap-nn's order, and the tracking scores
 * (IoUs of Kalman-predicted and detected boxes in float64) must agree
 * within 1e-9 relative: the filter's linear algebra (LAPACK there) may
 * differ in the last bits, while any other match moves a score by far
 * more. Then `sleapc track` on input.slp must write the same tracks. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/predictions/predictions_format.h"
#include "pipeline/tracking/mot/mot_run.h"
#include "pipeline/tracking/tracking_config.h"
#include "test_util.h"

#include "mot_case.h"
#include "tracking_case.h"

#define REF SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-appearance"
#define SCORE_RTOL 1e-9

/* pr's tracks ("track_<id>") and scores (float64, or float32 from a file)
 * against expected. */
static void compare(const char *name, const sleapc_predictions *pr, const double *scores,
                    const cJSON *expected)
{
    const cJSON *frames = cJSON_GetObjectItem(expected, "frames");
    const int nf = cJSON_GetArraySize(frames);
    CHECK_MSG(nf == pr->n_frames, "%s: %d frames expected, %lld", name, nf,
              (long long)pr->n_frames);
    int track_bad = 0, score_bad = 0, n = 0;
    double worst = 0;
    for (int fi = 0; fi < nf && fi < pr->n_frames; fi++) {
        const cJSON *fe = cJSON_GetArrayItem(frames, fi);
        const sleapc_pred_frame *f = &pr->frames[fi];
        const cJSON *tr = cJSON_GetObjectItem(fe, "track");
        const cJSON *ts = cJSON_GetObjectItem(fe, "tracking_score");
        if (f->frame_idx != (int64_t)cJSON_GetObjectItem(fe, "frame_idx")->valuedouble ||
            cJSON_GetArraySize(tr) != f->n) {
            track_bad++;
            continue;
        }
        for (int64_t i = 0; i < f->n; i++, n++) {
            const cJSON *want = cJSON_GetArrayItem(tr, (int)i);
            char gname[64];
            const bool same =
                tracking_case_track_is(pr, f->first + i, scores, want, gname, sizeof gname);
            const int got = pr->insts[f->first + i].track;
            if (!same) {
                if (track_bad++ < 5)
                    fprintf(stderr, "%s: frame %lld instance %lld: track %s, sleap-nn %s\n", name,
                            (long long)f->frame_idx, (long long)i, got >= 0 ? gname : "none",
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
                score_bad += pr->insts[f->first + i].tracking_score != (float)w;
            }
        }
    }
    fprintf(stderr, "%s: %d instances, %d tracks differ, %d scores differ (worst %.3g)\n", name, n,
            track_bad, score_bad, worst);
    CHECK_MSG(track_bad == 0, "%s: %d tracks differ", name, track_bad);
    CHECK_MSG(score_bad == 0, "%s: %d scores differ", name, score_bad);
}

static void run_case(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, REF "/%s/options.json", name);
    cJSON *options = tracking_case_load(path);
    snprintf(path, sizeof path, REF "/%s/expected.json", name);
    cJSON *expected = tracking_case_load(path);
    CHECK_MSG(options && expected, "%s: unreadable case files", name);
    if (!options || !expected) {
        cJSON_Delete(options);
        cJSON_Delete(expected);
        return;
    }
    const char *kv[16];
    sleapc_tracking_opts t;
    CHECK_MSG(mot_case_opts(options, &t, kv, 16), "%s: options not understood", name);
    sleapc_predictions pr;
    CHECK_OK(sleapc__predictions_read(REF "/input.slp", &pr, NULL));
    sleapc_tracker_opts to;
    CHECK_OK(sleapc__tracking_resolve(&t, pr.n_nodes, &to));
    double *scores = malloc((size_t)(pr.n_insts > 0 ? pr.n_insts : 1) * sizeof *scores);
    int n_ids = 0;
    const sleapc_status st = sleapc__mot_track_predictions(&pr, &to.mot_params, &n_ids, scores);
    CHECK_MSG(st == SLEAPC_OK, "%s: %s", name, sleapc_last_error());
    if (st == SLEAPC_OK) {
        compare(name, &pr, scores, expected);
        const cJSON *created = cJSON_GetObjectItem(expected, "tracks_created");
        CHECK_MSG(cJSON_GetArraySize(created) == n_ids, "%s: %d tracks created, sleap-nn %d", name,
                  n_ids, cJSON_GetArraySize(created));
    }
    free(scores);
    sleapc__predictions_free(&pr);

    /* the command line on the .slp: the file's tracks, float32 scores */
    char out_path[1024], args[4096];
    snprintf(out_path, sizeof out_path, "%s/%s.slp", test_tmp_dir(), name);
    snprintf(args, sizeof args, "track --quiet -i '%s' -o '%s' --tracking --tracker %s",
             REF "/input.slp", out_path, t.tracker);
    CHECK_MSG(test_run_cli(args) == 0, "%s: sleapc track failed: %s", name, test_cli_output());
    sleapc_predictions got;
    if (sleapc__predictions_read(out_path, &got, NULL) == SLEAPC_OK) {
        char cli_name[160];
        snprintf(cli_name, sizeof cli_name, "%s (sleapc track)", name);
        compare(cli_name, &got, NULL, expected);
        sleapc__predictions_free(&got);
    } else {
        CHECK_MSG(false, "%s: %s unreadable", name, out_path);
    }
    cJSON_Delete(options);
    cJSON_Delete(expected);
}

int main(int argc, char **argv)
{
    static const char *const cases[] = {"clip_deepsort", "clip_strongsort", "clip_botsort",
                                        "clip_deepocsort"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (argc < 2 || !strcmp(argv[1], cases[i]))
            run_case(cases[i]);
    return test_finish();
}
