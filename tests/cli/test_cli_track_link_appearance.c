/* `sleapc track --tracking --tracker bytetrack --link_tracklets` on the
 * appearance case's input.slp (detections with re-ID vectors) against
 * sleap-nn 0.3.5 end to end: sleapc calibrates appearance itself and links
 * the tracklets by it (tests/goldens/sleapnn-0.3.5-appearance/
 * clip_bytetrack_link_appearance: 51 tracklets to 8 identities). Every
 * instance's track name exactly, the scores as the .slp stores them
 * (float32 of sleap-nn's float64), and the output's track list.
 * test_mot_link_appearance checks the linker given sleap-nn's calibration. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "io/predictions/predictions_format.h"
#include "test_util.h"

#include "../pipeline/link_appearance_case.h"

int main(void)
{
    cJSON *expected = test_load_json(LINK_CASE_DIR "/expected.json");
    CHECK_MSG(expected != NULL, "unreadable expected.json");
    if (!expected)
        return test_finish();
    const char *out = test_tmp_path("linked.slp");
    char args[2048];
    snprintf(args, sizeof args,
             "track --quiet -i '%s' -o '%s' --tracking --tracker bytetrack --link_tracklets",
             LINK_CASE_INPUT, out);
    CHECK_MSG(test_run_cli(args) == 0, "sleapc track failed: %s", test_cli_output());
    sleapc_predictions got;
    if (sleapc__predictions_read(out, &got, NULL) == SLEAPC_OK) {
        float *s32 = malloc((size_t)(got.n_insts > 0 ? got.n_insts : 1) * sizeof *s32);
        for (int64_t i = 0; i < got.n_insts; i++)
            s32[i] = got.insts[i].tracking_score;
        double worst = 0.0;
        const int bad = link_case_compare("sleapc track", &got, false, NULL, s32, expected, &worst);
        CHECK_MSG(bad == 0, "%d instances differ", bad);
        const cJSON *listed = cJSON_GetObjectItem(expected, "tracks_in_output");
        bool listed_ok = cJSON_GetArraySize(listed) == got.n_tracks;
        for (int i = 0; listed_ok && i < got.n_tracks; i++)
            listed_ok = !strcmp(cJSON_GetArrayItem(listed, i)->valuestring, got.track_names[i]);
        CHECK_MSG(listed_ok, "the output's track list differs (%d tracks, sleap-nn %d)",
                  (int)got.n_tracks, cJSON_GetArraySize(listed));
        free(s32);
        sleapc__predictions_free(&got);
    } else {
        CHECK_MSG(false, "%s unreadable", out);
    }
    cJSON_Delete(expected);
    return test_finish();
}
