/* The classic tracker against sleap-nn 0.3.5 (sleapnn-0.3.5/tracking/
 * clip_classic_default: `sleap-nn predict --tracking --tracker classic` on
 * untracked predictions). The tracker options are sleapc's defaults resolved
 * as `sleapc track` resolves them (0.3.5 behaviour, #745's gate included),
 * and must be the tracking_config sleap-nn recorded. Every instance must get
 * the same track name, in the same output order, with the same creation
 * order of tracks, and a tracking score within 1e-9 relative (the case's
 * README: float64 scores, numpy's exp against glibc's differ in the last
 * bits only). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/tracking/tracker.h"
#include "pipeline/tracking/tracking_config.h"
#include "test_util.h"

#include "tracking_case.h"

#define CASE "sleapnn-0.3.5/tracking/clip_classic_default"
#define REL_TOL 1e-9

static cJSON *load(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, CASE "/%s", name);
    return tracking_case_load(test_data_path(rel));
}

/* The resolved options are the ones sleap-nn ran with. */
static void check_options(const cJSON *options, const sleapc_tracker_opts *o)
{
    const cJSON *prov = cJSON_GetObjectItem(options, "tracking_provenance_in_output");
    const cJSON *c = cJSON_GetObjectItem(prov, "tracking_config");
    CHECK_MSG(c != NULL, "options.json: no tracking_config");
    if (!c)
        return;
    static const char *const feat[] = {"keypoints", "centroids", "bboxes"};
    static const char *const scor[] = {"oks", "iou", "cosine_sim", "euclidean_dist"};
    static const char *const red[] = {"mean", "max", "robust_quantile"};
    static const char *const match[] = {"hungarian", "greedy"};
    const char *cand = o->candidates == SLEAPC_TRACK_FIXED_WINDOW ? "fixed_window" : "local_queues";
#define STR_IS(key, want)                                                                          \
    CHECK_MSG(cJSON_IsString(cJSON_GetObjectItem(c, key)) &&                                       \
                  !strcmp(cJSON_GetObjectItem(c, key)->valuestring, want),                         \
              "%s: sleap-nn ran another value than %s", key, want)
    STR_IS("candidates_method", cand);
    STR_IS("features", feat[o->features]);
    STR_IS("scoring_method", scor[o->scoring]);
    STR_IS("scoring_reduction", red[o->reduction]);
    STR_IS("track_matching_method", match[o->matching]);
#undef STR_IS
    CHECK(case_num(c, "window_size", -1) == o->window_size);
    CHECK(case_num(c, "min_new_track_points", -1) == o->min_new_track_points);
    CHECK(case_num(c, "min_match_points", -1) == o->min_match_points);
    CHECK(case_num(c, "robust_best_instance", -1) == o->robust_best_instance);
    CHECK(case_num(c, "use_flow", -1) == o->use_flow);
    CHECK(case_num(c, "post_connect_single_breaks", -1) == o->post_connect_single_breaks);
    CHECK(case_num(c, "tracking_clean_instance_count", -1) == o->clean_instance_count);
    CHECK(!o->keep_infeasible);
}

int main(void)
{
    test_require_data();
    cJSON *options = load("options.json"), *input = load("input.json");
    cJSON *expected = load("expected.json");
    CHECK_MSG(options && input && expected, CASE ": unreadable case files");
    if (!options || !input || !expected)
        return test_finish();
    const int n_nodes = tracking_case_n_nodes(input);
    sleapc_tracking_opts pub = sleapc__tracking_opts_default();
    pub.tracking = true;
    sleapc_tracker_opts o;
    CHECK_OK(sleapc__tracking_resolve(&pub, n_nodes, &o));
    check_options(options, &o);
    sleapc_tracker *t = NULL;
    CHECK_OK(sleapc__tracker_create(&o, n_nodes, &t));
    const cJSON *in_frames = cJSON_GetObjectItem(input, "frames");
    const cJSON *ex_frames = cJSON_GetObjectItem(expected, "frames");
    const int n_frames = cJSON_GetArraySize(in_frames);
    CHECK(n_frames > 0 && n_frames == cJSON_GetArraySize(ex_frames));
    int track_bad = 0, score_bad = 0, order_bad = 0, n_insts = 0;
    double worst = 0;
    tracking_case_frame f = {0};
    for (int fi = 0; t && fi < n_frames; fi++) {
        const cJSON *fex = cJSON_GetArrayItem(ex_frames, fi);
        if (!tracking_case_frame_read(cJSON_GetArrayItem(in_frames, fi), n_nodes, &f)) {
            CHECK_MSG(false, "frame %d unreadable", fi);
            break;
        }
        sleapc_track_frame_in in = {
            .frame_idx = f.frame_idx, .n_insts = f.n, .points = f.points, .scores = f.scores};
        sleapc_track_frame_out out = {.out = f.out, .track = f.track, .tracking_score = f.tscore};
        if (sleapc__tracker_track_frame(t, &in, &out)) {
            CHECK_MSG(false, "frame %lld: %s", (long long)f.frame_idx, sleapc_last_error());
            break;
        }
        n_insts += f.n;
        const cJSON *etrack = cJSON_GetObjectItem(fex, "track");
        const cJSON *escore = cJSON_GetObjectItem(fex, "tracking_score");
        for (int k = 0; k < f.n; k++) {
            const cJSON *et = cJSON_GetArrayItem(etrack, k);
            char name[32] = "";
            const bool in_out = tracking_case_in_out(&out, k);
            if (in_out && f.track[k] >= 0)
                snprintf(name, sizeof name, "track_%d", f.track[k]);
            const bool same =
                cJSON_IsNull(et) ? !name[0] : cJSON_IsString(et) && !strcmp(et->valuestring, name);
            if (!same) {
                if (track_bad++ < 10)
                    fprintf(stderr, "frame %lld instance %d: expected %s, got %s\n",
                            (long long)f.frame_idx, k,
                            cJSON_IsString(et) ? et->valuestring : "none", name[0] ? name : "none");
                continue;
            }
            const cJSON *es = cJSON_GetArrayItem(escore, k);
            if (cJSON_IsNull(es))
                continue;
            const double want = tracking_case_number(es), got = f.tscore[k];
            const double err = want == got ? 0 : fabs(want - got);
            const double scale = fmax(fabs(want), fabs(got));
            if (!(err <= REL_TOL * scale)) {
                if (score_bad++ < 10)
                    fprintf(stderr, "frame %lld instance %d: score %.17g, expected %.17g\n",
                            (long long)f.frame_idx, k, got, want);
            } else if (scale > 0 && err / scale > worst) {
                worst = err / scale;
            }
        }
        const cJSON *eout = cJSON_GetObjectItem(fex, "out");
        bool same_order = cJSON_GetArraySize(eout) == out.n_out;
        for (int k = 0; same_order && k < out.n_out; k++)
            same_order = cJSON_GetArrayItem(eout, k)->valueint == out.out[k];
        order_bad += !same_order;
    }
    /* Tracks are created as track_0, track_1, ... in sleapc: the names
     * sleap-nn created, in its order. */
    const cJSON *created = cJSON_GetObjectItem(expected, "tracks_created");
    const int n_created = t ? sleapc__tracker_n_tracks(t) : -1;
    CHECK_MSG(cJSON_GetArraySize(created) == n_created, "%d tracks created, sleap-nn %d", n_created,
              cJSON_GetArraySize(created));
    for (int i = 0; i < cJSON_GetArraySize(created); i++) {
        char name[32];
        snprintf(name, sizeof name, "track_%d", i);
        const cJSON *c = cJSON_GetArrayItem(created, i);
        CHECK_MSG(cJSON_IsString(c) && !strcmp(c->valuestring, name), "track %d: %s", i, name);
    }
    CHECK_MSG(track_bad == 0, "%d instance tracks differ", track_bad);
    CHECK_MSG(score_bad == 0, "%d tracking scores differ", score_bad);
    CHECK_MSG(order_bad == 0, "%d frames in another output order", order_bad);
    printf(CASE ": %d frames, %d instances: %d track differences, %d score differences "
                "(largest relative error %.3g), %d order differences\n",
           n_frames, n_insts, track_bad, score_bad, worst, order_bad);
    tracking_case_frame_free(&f);
    sleapc__tracker_destroy(t);
    cJSON_Delete(options);
    cJSON_Delete(input);
    cJSON_Delete(expected);
    return test_finish();
}
