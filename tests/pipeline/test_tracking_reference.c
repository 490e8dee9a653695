/* The tracker against sleap-nn's own tracker: every case folder under
 * tracking/ holds real untracked predictions (input.json), the options
 * (options.json) and what sleap-nn's tracker made of them (expected.json).
 * Every instance must get the same track (or be dropped) on every frame, in
 * the same output order, and the same tracking score within 1e-5.
 *
 * Why 1e-5: the scores are -costs of the matched cells, OKS means (or
 * negated distances) computed in float64 from the very float64 inputs
 * sleap-nn read, with numpy's order of operations. What may still differ is
 * exp() (numpy's SIMD exp and glibc's agree to 1-2 ulp) and BLAS dot
 * products (FMA), a few 1e-16 relative; distances are < 2e3 px, so even a
 * distance score stays many orders under 1e-5, while any real disagreement
 * (another candidate set, another match) moves a score by far more.
 *
 * The flow case runs the optical flow on the decoded video frames; sleapc's
 * Lucas-Kanade reproduces OpenCV's bit for bit (same integer pyramid and
 * patches, float sums in the order of OpenCV's SSE2 build), so the same
 * 1e-5 holds. Decoding 1024x1024 frames dominates its time, so it checks
 * the first FLOW_FRAMES frames (tracking is online: a prefix of the run is
 * exactly sleap-nn's prefix) unless SLEAPC_TEST_FULL is set. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/tracking/tracker.h"
#include "test_util.h"

#include "tracking_case.h"

enum { FLOW_FRAMES = 150 };

static int run_case(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/options.json", dir);
    cJSON *options = tracking_case_load(path);
    snprintf(path, sizeof path, "%s/input.json", dir);
    cJSON *input = tracking_case_load(path);
    snprintf(path, sizeof path, "%s/expected.json", dir);
    cJSON *expected = tracking_case_load(path);
    CHECK_MSG(options && input && expected, "%s: unreadable case files", dir);
    if (!options || !input || !expected) {
        cJSON_Delete(options);
        cJSON_Delete(input);
        cJSON_Delete(expected);
        return 1;
    }
    sleapc_tracker_opts o;
    const int n_nodes = tracking_case_n_nodes(input);
    const bool ok_opts = tracking_case_options(options, &o);
    CHECK_MSG(ok_opts, "%s: options.json not understood", dir);
    o.keep_infeasible = true; /* sleap-nn 0.3.3's data (docs/compatibility.md, #745) */
    tracking_case_frames *frames = NULL;
    if (o.use_flow) {
        frames = tracking_case_frames_open(test_data_path("sleap-assets/tracks/clip.mp4"));
        CHECK_MSG(frames != NULL, "%s: video frames unavailable", dir);
    }
    sleapc_tracker *t = NULL;
    CHECK_OK(sleapc__tracker_create(&o, n_nodes, &t));
    const cJSON *in_frames = cJSON_GetObjectItem(input, "frames");
    const cJSON *ex_frames = cJSON_GetObjectItem(expected, "frames");
    CHECK(cJSON_GetArraySize(in_frames) == cJSON_GetArraySize(ex_frames));
    int n_frames = cJSON_GetArraySize(in_frames), track_bad = 0, score_bad = 0,
        order_bad = 0, n_insts = 0;
    double worst = 0;
    if (o.use_flow && !getenv("SLEAPC_TEST_FULL") && n_frames > FLOW_FRAMES)
        n_frames = FLOW_FRAMES;
    tracking_case_frame f = { 0 };
    for (int fi = 0; t && fi < n_frames && ok_opts; fi++) {
        const cJSON *fin = cJSON_GetArrayItem(in_frames, fi);
        const cJSON *fex = cJSON_GetArrayItem(ex_frames, fi);
        if (!tracking_case_frame_read(fin, n_nodes, &f)) {
            CHECK_MSG(false, "%s: frame %d unreadable", dir, fi);
            break;
        }
        sleapc_track_frame_in in = { .frame_idx = f.frame_idx, .n_insts = f.n,
                                     .points = f.points, .scores = f.scores };
        if (frames && !tracking_case_frame_image(frames, f.frame_idx, &in)) {
            CHECK_MSG(false, "%s: frame %lld not decoded", dir, (long long)f.frame_idx);
            break;
        }
        sleapc_track_frame_out out = { .out = f.out, .track = f.track,
                                       .tracking_score = f.tscore };
        sleapc_status st = sleapc__tracker_track_frame(t, &in, &out);
        if (st) {
            CHECK_MSG(false, "%s: frame %lld: %s", dir, (long long)f.frame_idx,
                      sleapc_last_error());
            break;
        }
        n_insts += f.n;
        const cJSON *etrack = cJSON_GetObjectItem(fex, "track");
        const cJSON *escore = cJSON_GetObjectItem(fex, "tracking_score");
        const cJSON *eout = cJSON_GetObjectItem(fex, "out");
        for (int k = 0; k < f.n; k++) {
            const cJSON *et = cJSON_GetArrayItem(etrack, k);
            char name[32] = "";
            const bool in_out = tracking_case_in_out(&out, k);
            if (in_out && f.track[k] >= 0)
                snprintf(name, sizeof name, "track_%d", f.track[k]);
            const bool same = cJSON_IsNull(et) ? !in_out || f.track[k] < 0
                                               : (cJSON_IsString(et) &&
                                                  strcmp(et->valuestring, name) == 0);
            if (!same) {
                if (track_bad++ < 10)
                    fprintf(stderr, "%s: frame %lld instance %d: expected %s, got %s\n", dir,
                            (long long)f.frame_idx, k,
                            cJSON_IsString(et) ? et->valuestring : "none",
                            name[0] ? name : "none");
                continue;
            }
            const cJSON *es = cJSON_GetArrayItem(escore, k);
            if (cJSON_IsNull(es))
                continue;
            const double want = tracking_case_number(es), got = f.tscore[k];
            const double err = isfinite(want) ? fabs(want - got) : (want == got ? 0 : INFINITY);
            if (!(err <= 1e-5) && !(isnan(want) && isnan(got))) {
                if (score_bad++ < 10)
                    fprintf(stderr, "%s: frame %lld instance %d: score %.17g, expected %.17g\n",
                            dir, (long long)f.frame_idx, k, got, want);
            } else if (isfinite(err) && err > worst) {
                worst = err;
            }
        }
        bool same_order = cJSON_GetArraySize(eout) == out.n_out;
        for (int k = 0; same_order && k < out.n_out; k++)
            same_order = cJSON_GetArrayItem(eout, k)->valueint == out.out[k];
        order_bad += !same_order;
    }
    const cJSON *created = cJSON_GetObjectItem(expected, "tracks_created");
    const bool whole = n_frames == cJSON_GetArraySize(in_frames);
    CHECK_MSG(t && (!whole || cJSON_GetArraySize(created) == sleapc__tracker_n_tracks(t)),
              "%s: %d tracks created, sleap-nn %d", dir, sleapc__tracker_n_tracks(t),
              cJSON_GetArraySize(created));
    CHECK_MSG(track_bad == 0, "%s: %d instance tracks differ", dir, track_bad);
    CHECK_MSG(score_bad == 0, "%s: %d tracking scores differ", dir, score_bad);
    CHECK_MSG(order_bad == 0, "%s: %d frames in another output order", dir, order_bad);
    printf("%s: %d frames, %d instances: %d track differences, %d score differences "
           "(largest matching error %.3g), %d order differences\n",
           dir, n_frames, n_insts, track_bad, score_bad, worst, order_bad);
    tracking_case_frame_free(&f);
    tracking_case_frames_close(frames);
    sleapc__tracker_destroy(t);
    cJSON_Delete(options);
    cJSON_Delete(input);
    cJSON_Delete(expected);
    return 0;
}

int main(void)
{
    test_require_data();
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", test_data_path("tracking"));
    char *names[64];
    const int n = test_list_dir(dir, names, 64);
    int cases = 0;
    for (int i = 0; i < n; i++) {
        char sub[1200], probe[1300];
        snprintf(sub, sizeof sub, "%s/%s", dir, names[i]);
        snprintf(probe, sizeof probe, "%s/expected.json", sub);
        FILE *fp = fopen(probe, "rb");
        if (fp) {
            fclose(fp);
            run_case(sub);
            cases++;
        }
        free(names[i]);
    }
    CHECK_MSG(cases > 0, "no tracking cases under %s", dir);
    return test_finish();
}
