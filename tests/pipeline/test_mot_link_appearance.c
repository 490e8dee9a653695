/* Identity linking by appearance (--link_tracklets on detections with
 * re-ID vectors) against sleap-nn 0.3.5, given sleap-nn's calibration:
 * the *_link_appearance* cases of tests/goldens/sleapnn-0.3.5-appearance
 * (ByteTrack, 51 tracklets linked to 8 identities by appearance; the same
 * with max_tracks=2, where the closed set forces tracklets onto the two
 * animals by appearance tier, then geometry; OC-SORT with max_tracks=2)
 * and the bounce/ cases (a synthetic scene whose vectors say the tracker
 * swapped two animals at two crossings: swap correction relabels them;
 * with SORT and max_tracks=8 also gap links and a closed set). The
 * appearance part of the calibration (thresholds and margins per query
 * length, whether appearance is usable for linking) is taken from each
 * case's recorded provenance, so this checks the linker alone: the
 * tracker, the geometric calibration and the linker run as sleapc runs
 * them. Every instance's track name exactly, untracked ones included, the
 * tracks created in order, and the tracking scores within 1e-9 relative
 * (link_appearance_case.h). Without the recorded calibration (appearance
 * uncalibrated) the same tracks are linked by position and must differ:
 * the cases exercise the appearance decisions. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/predictions/predictions_format.h"
#include "pipeline/tracking/mot/mot_run.h"
#include "pipeline/tracking/tracking_config.h"
#include "test_util.h"

#include "link_appearance_case.h"
#include "mot_case.h"

/* Tracks and links input.slp with app (NULL: as calibrated by sleapc);
 * returns the instances that differ from expected. */
static int run(const char *input, const cJSON *options, const cJSON *expected,
               const mot_appearance_calibration *app, const char *name)
{
    const char *kv[16];
    sleapc_tracking_opts t;
    CHECK_MSG(mot_case_opts(options, &t, kv, 16), "%s: options not understood", name);
    sleapc_predictions pr;
    CHECK_OK(sleapc__predictions_read(input, &pr, NULL));
    sleapc_tracker_opts to;
    CHECK_OK(sleapc__tracking_resolve(&t, pr.n_nodes, &to));
    CHECK(sleapc__mot_params_link(&to.mot_params));
    double *scores = malloc((size_t)(pr.n_insts > 0 ? pr.n_insts : 1) * sizeof *scores);
    int n_ids = 0;
    CHECK_OK(sleapc__mot_track_predictions_app(&pr, &to.mot_params, app, &n_ids, scores));
    double worst = 0.0;
    const int bad = link_case_compare(name, &pr, true, scores, NULL, expected, &worst);
    fprintf(stderr, "%s: %lld instances, %d differ, worst score difference %.3g relative\n", name,
            (long long)pr.n_insts, bad, worst);
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
    return bad;
}

/* The case dir/case_name, on dir/input.slp. */
static void run_case(const char *dir, const char *case_name)
{
    char path[1024], input[1024], name[256];
    snprintf(input, sizeof input, "%s/input.slp", dir);
    snprintf(path, sizeof path, "%s/%s/options.json", dir, case_name);
    cJSON *options = test_load_json(path);
    snprintf(path, sizeof path, "%s/%s/expected.json", dir, case_name);
    cJSON *expected = test_load_json(path);
    CHECK_MSG(options && expected, "%s: unreadable case files", case_name);
    if (options && expected) {
        const mot_appearance_calibration app = link_case_app(options);
        CHECK(app.for_linking && app.n_by_len == MOT_LINK_QUERY_LEN);
        snprintf(name, sizeof name, "%s, given sleap-nn's calibration", case_name);
        const int bad = run(input, options, expected, &app, name);
        CHECK_MSG(bad == 0, "%s: %d instances differ", name, bad);

        const mot_appearance_calibration none = sleapc__mot_appearance_uncalibrated();
        snprintf(name, sizeof name, "%s, linked by position", case_name);
        CHECK_MSG(run(input, options, expected, &none, name) > 0,
                  "%s: linking by position gives the appearance result: the case does not test "
                  "appearance",
                  case_name);
    }
    cJSON_Delete(options);
    cJSON_Delete(expected);
}

/* The cases in dir whose name holds pattern; returns how many. */
static int run_cases(const char *dir, const char *pattern)
{
    char *names[64];
    const int n = test_list_dir(dir, names, 64);
    int n_cases = 0;
    for (int i = 0; i < n; i++) {
        if (strstr(names[i], pattern)) {
            run_case(dir, names[i]);
            n_cases++;
        }
        free(names[i]);
    }
    return n_cases;
}

int main(void)
{
    const int n_clip = run_cases(LINK_CASES_DIR, "_link_appearance");
    const int n_bounce = run_cases(LINK_CASES_DIR "/bounce", "_link_");
    CHECK_MSG(n_clip >= 2 && n_bounce >= 1, "%d + %d appearance-linking cases found", n_clip,
              n_bounce);
    return test_finish();
}
