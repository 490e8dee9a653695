/* sleapc predict --tracking end to end: the top-down pair on the two flies
 * of centered_pair_small.mp4 (a slice). Tracking inside predict must give
 * exactly what "sleapc track" gives on predict's untracked output (one
 * tracker, the same frames in the same order), through the .slp writer;
 * every instance gets one of two tracks with --max_tracks 2; the same with
 * the OC-SORT tracker; the analysis .h5 of the untracked output warns how
 * many instances it cannot hold. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include "../pipeline/tracking_case.h"

/* The tracks of every instance, frame by frame, as one string. */
static char *tracks_of(const char *json_path)
{
    cJSON *j = tracking_case_load(json_path);
    if (!j)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *s = malloc(cap);
    const cJSON *f, *in;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(j, "frames"))
    {
        n += (size_t)snprintf(s + n, cap - n,
                              "%d:", (int)cJSON_GetObjectItem(f, "frame_idx")->valuedouble);
        cJSON_ArrayForEach(in, cJSON_GetObjectItem(f, "instances"))
        {
            const cJSON *t = cJSON_GetObjectItem(in, "track");
            const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(in, "points"), 0);
            n += (size_t)snprintf(
                s + n, cap - n, "%s@%.2f ",
                cJSON_IsNumber(t)
                    ? cJSON_GetArrayItem(cJSON_GetObjectItem(j, "tracks"), t->valueint)->valuestring
                    : "-",
                cJSON_IsArray(p) ? cJSON_GetArrayItem(p, 0)->valuedouble : -1);
            if (n > cap - 256)
                break;
        }
    }
    cJSON_Delete(j);
    return s;
}

int main(void)
{
    test_require_data();
    const char *tmp = test_tmp_dir();
#ifdef SLEAPC_SANITIZED
    const char *frames = "0-5";
#else
    const char *frames = "0-29";
#endif
    char models[2048], args[4096], video[1024];
    snprintf(models, sizeof models, "-m '%s' ",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(models + strlen(models), sizeof models - strlen(models), "-m '%s'",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"));
    snprintf(video, sizeof video, "%s",
             test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));

    snprintf(args, sizeof args, "predict --quiet %s -i '%s' --frames %s -o %s/plain.json", models,
             video, frames, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(args, sizeof args,
             "predict --quiet %s -i '%s' --frames %s -t --max_tracks 2 -o %s/tracked.slp", models,
             video, frames, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(args, sizeof args, "track --quiet --no_tracking -i %s/tracked.slp -o %s/tracked.json",
             tmp, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(args, sizeof args,
             "track --quiet -t --max_tracks 2 -i %s/plain.json -o %s/retracked.json", tmp, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());

    char path[1200];
    snprintf(path, sizeof path, "%s/tracked.json", tmp);
    char *a = tracks_of(path);
    snprintf(path, sizeof path, "%s/retracked.json", tmp);
    char *b = tracks_of(path);
    CHECK_MSG(a && b && strcmp(a, b) == 0, "predict --tracking:\n%s\nsleapc track:\n%s", a ? a : "",
              b ? b : "");
    CHECK(a && !strstr(a, "-@") && strstr(a, "track_0@") && strstr(a, "track_1@") &&
          !strstr(a, "track_2@"));
    free(a);
    free(b);

    /* a MOT tracker inside predict (a calibration pass over the run, then
     * frame by frame) gives what sleapc track gives on the untracked run */
    snprintf(args, sizeof args,
             "predict --quiet %s -i '%s' --frames %s -t --tracker ocsort -o %s/ocsort.json", models,
             video, frames, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(args, sizeof args,
             "track --quiet -t --tracker ocsort -i %s/plain.json -o %s/reocsort.json", tmp, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(path, sizeof path, "%s/ocsort.json", tmp);
    a = tracks_of(path);
    snprintf(path, sizeof path, "%s/reocsort.json", tmp);
    b = tracks_of(path);
    CHECK_MSG(a && b && *a && strcmp(a, b) == 0, "predict --tracker ocsort:\n%s\nsleapc track:\n%s",
              a ? a : "", b ? b : "");
    free(a);
    free(b);

    /* the untracked two-fly output in an analysis .h5: each frame's
     * instances in columns of their own (sleap-io 0.9.5), no warning;
     * tracked: none either */
    snprintf(args, sizeof args, "track --quiet --no_tracking -i %s/plain.json -o %s/plain.h5", tmp,
             tmp);
    CHECK(test_run_cli(args) == 0 && !strstr(test_cli_output(), "left out"));
    snprintf(args, sizeof args, "track --quiet --no_tracking -i %s/tracked.slp -o %s/tracked.h5",
             tmp, tmp);
    CHECK(test_run_cli(args) == 0 && !strstr(test_cli_output(), "left out"));

    /* bad tracking options fail before any work, naming the option */
    snprintf(args, sizeof args, "predict %s -i '%s' -o %s/x.slp -t --scoring_method nope", models,
             video, tmp);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "--scoring_method"));
    return test_finish();
}
