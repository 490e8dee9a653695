/* Identity linking by appearance (--link_tracklets on detections with
 * re-ID vectors) against sleap-nn 0.3.5, given sleap-nn's calibration:
 * tests/goldens/sleapnn-0.3.5-appearance/clip_bytetrack_link_appearance
 * (ByteTrack, 51 tracklets linked to 8 identities by appearance). The
 * appearance part of the calibration (thresholds and margins per query
 * length, whether appearance is usable for linking) is taken from the
 * case's recorded provenance, so this checks the linker alone: the
 * tracker, the geometric calibration and the linker run as sleapc runs
 * them. Every instance's track name exactly, untracked ones included, the
 * tracks created in order, and the tracking scores within 1e-9 relative
 * (link_appearance_case.h). Without the recorded calibration (appearance
 * uncalibrated) the same tracks are linked by position and must differ:
 * the case exercises the appearance decisions. */
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
static int run(const cJSON *options, const cJSON *expected, const mot_appearance_calibration *app,
               const char *name)
{
    const char *kv[16];
    sleapc_tracking_opts t;
    CHECK_MSG(mot_case_opts(options, &t, kv, 16), "options not understood");
    sleapc_predictions pr;
    CHECK_OK(sleapc__predictions_read(LINK_CASE_INPUT, &pr, NULL));
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

int main(void)
{
    cJSON *options = test_load_json(LINK_CASE_DIR "/options.json");
    cJSON *expected = test_load_json(LINK_CASE_DIR "/expected.json");
    CHECK_MSG(options && expected, "unreadable case files");
    if (!options || !expected)
        return test_finish();
    const mot_appearance_calibration app = link_case_app(options);
    CHECK(app.for_linking && app.n_by_len == MOT_LINK_QUERY_LEN);
    const int bad = run(options, expected, &app, "given sleap-nn's calibration");
    CHECK_MSG(bad == 0, "%d instances differ", bad);

    mot_appearance_calibration none = sleapc__mot_appearance_uncalibrated();
    const int bad_geo = run(options, expected, &none, "linked by position");
    CHECK_MSG(bad_geo > 0, "linking by position gives the appearance result: the case does not "
                           "test appearance");
    cJSON_Delete(options);
    cJSON_Delete(expected);
    return test_finish();
}
