/* `sleapc track --features embeddings` (the classic tracker by appearance
 * alone: cosine similarity of the detections' re-ID vectors, local queues)
 * on the appearance case's input.slp against sleap-nn 0.3.5
 * (tests/goldens/sleapnn-0.3.5-appearance/clip_classic_embeddings: 1500
 * frames, 2 tracks). Every output instance in sleap-nn's output order: its
 * track name exactly, its tracking score as the .slp stores it (float32 of
 * sleap-nn's float64, equal); the output's track list exactly. */
#include <cjson/cJSON.h>
#include <string.h>

#include "io/predictions/predictions_format.h"
#include "test_util.h"

#define CASES SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-appearance"

/* Frame fe of expected.json against sleapc's frame f; the instances that differ. */
static int compare_frame(const sleapc_predictions *pr, const sleapc_pred_frame *f, const cJSON *fe)
{
    const cJSON *out = cJSON_GetObjectItem(fe, "out");
    const cJSON *track = cJSON_GetObjectItem(fe, "track");
    const cJSON *score = cJSON_GetObjectItem(fe, "tracking_score");
    if (cJSON_GetArraySize(out) != f->n)
        return 1;
    int bad = 0;
    for (int j = 0; j < f->n; j++) {
        const int k = (int)cJSON_GetArrayItem(out, j)->valuedouble;
        const cJSON *want = cJSON_GetArrayItem(track, k);
        const sleapc_pred_instance *in = &pr->insts[f->first + j];
        if (cJSON_IsNull(want)) {
            bad += in->track >= 0;
            continue;
        }
        if (in->track < 0 || strcmp(pr->track_names[in->track], want->valuestring)) {
            bad++;
            continue;
        }
        bad += in->tracking_score != (float)cJSON_GetArrayItem(score, k)->valuedouble;
    }
    return bad;
}

int main(void)
{
    cJSON *expected = test_load_json(CASES "/clip_classic_embeddings/expected.json");
    CHECK_MSG(expected != NULL, "unreadable expected.json");
    if (!expected)
        return test_finish();
    const char *out = test_tmp_path("classic_embeddings.slp");
    char args[2048];
    snprintf(args, sizeof args, "track --quiet -i '%s' -o '%s' --features embeddings",
             CASES "/input.slp", out);
    CHECK_MSG(test_run_cli(args) == 0, "sleapc track failed: %s", test_cli_output());
    sleapc_predictions pr;
    if (sleapc__predictions_read(out, &pr, NULL) == SLEAPC_OK) {
        const cJSON *frames = cJSON_GetObjectItem(expected, "frames");
        CHECK_MSG(pr.n_frames == cJSON_GetArraySize(frames), "%lld frames, sleap-nn %d",
                  (long long)pr.n_frames, cJSON_GetArraySize(frames));
        int bad = 0;
        for (int64_t f = 0; f < pr.n_frames && f < cJSON_GetArraySize(frames); f++)
            bad += compare_frame(&pr, &pr.frames[f], cJSON_GetArrayItem(frames, (int)f));
        CHECK_MSG(bad == 0, "%d instances differ", bad);
        const cJSON *listed = cJSON_GetObjectItem(expected, "tracks_in_output");
        bool listed_ok = cJSON_GetArraySize(listed) == pr.n_tracks;
        for (int i = 0; listed_ok && i < pr.n_tracks; i++)
            listed_ok = !strcmp(cJSON_GetArrayItem(listed, i)->valuestring, pr.track_names[i]);
        CHECK_MSG(listed_ok, "the output's track list differs");
        sleapc__predictions_free(&pr);
    } else {
        CHECK_MSG(false, "%s unreadable", out);
    }
    cJSON_Delete(expected);
    return test_finish();
}
