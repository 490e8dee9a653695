/* What sleap-nn users type works: `track --data_path V --model_paths M`
 * (sleap-nn's legacy track: predicts as predict does, tracking with
 * --tracking), the four --kf_* options refused as clearly as --use_kalman,
 * `info MODEL_DIR`, a mistyped command answered with the command meant,
 * `help COMMAND` printing that command's usage, and -v / --version printing
 * the version as sleap-nn prints its own ("sleap-nn X.Y.Z"). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

static char dir[1024], model[2048], video[2048], args[8192];

static long summary_instances(const char *text)
{
    const char *e = strstr(text, " frames, ");
    long n = -1;
    return e && sscanf(e + 9, "%ld instances", &n) == 1 ? n : -1;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int main(void)
{
    test_require_data();
    snprintf(dir, sizeof dir, "%s", test_tmp_dir());
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(video, sizeof video, "%s",
             test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));

    /* sleap-nn's legacy track with models: the predictions predict makes. */
    snprintf(args, sizeof args,
             "track --data_path '%s' --model_paths '%s' --frames 0-3 --tracking "
             "--max_tracks 1 -o '%s/track.slp'",
             video, model, dir);
    CHECK_MSG(test_run_cli(args) == 0, "track with models: %s", test_cli_output());
    long by_track = summary_instances(test_cli_output());
    char path[1200];
    snprintf(path, sizeof path, "%s/track.slp", dir);
    CHECK(exists(path));
    snprintf(args, sizeof args,
             "predict -i '%s' -m '%s' --frames 0-3 --tracking --max_tracks 1 -o '%s/pred.slp'",
             video, model, dir);
    CHECK_MSG(test_run_cli(args) == 0, "predict: %s", test_cli_output());
    long by_predict = summary_instances(test_cli_output());
    CHECK_MSG(by_track == by_predict && by_track > 0, "track %ld instances, predict %ld",
              by_track, by_predict);
    /* Without models it retracks, as before: the file track made. */
    snprintf(args, sizeof args, "track -i '%s/pred.slp' -o '%s/retracked.slp'", dir, dir);
    CHECK_MSG(test_run_cli(args) == 0 && strstr(test_cli_output(), "retracked.slp"),
              "retrack: %s", test_cli_output());

    /* The Kalman tracker's settings: refused as --use_kalman is, by predict
     * and track alike, before anything is written. */
    static const char *const kf[] = {"--kf_track_features keypoints",
                                     "--kf_init_frame_count 5", "--kf_node_indices 0,1",
                                     "--kf_reset_gap_size 3"};
    for (int k = 0; k < 4; k++) {
        snprintf(args, sizeof args, "predict -i '%s' -m '%s' --tracking %s -o '%s/kf.slp'",
                 video, model, kf[k], dir);
        CHECK_MSG(test_run_cli(args) == 1 && strstr(test_cli_output(), "--use_kalman") &&
                      strstr(test_cli_output(), "not supported") &&
                      !strstr(test_cli_output(), "unknown option"),
                  "predict %s: %s", kf[k], test_cli_output());
        snprintf(args, sizeof args, "track -i '%s/pred.slp' %s -o '%s/kf.slp'", dir, kf[k], dir);
        CHECK_MSG(test_run_cli(args) == 1 && strstr(test_cli_output(), "--use_kalman") &&
                      strstr(test_cli_output(), "not supported"),
                  "track %s: %s", kf[k], test_cli_output());
    }
    snprintf(path, sizeof path, "%s/kf.slp", dir);
    CHECK(!exists(path));

    /* info MODEL_DIR, as -m MODEL_DIR. */
    snprintf(args, sizeof args, "info '%s'", model);
    CHECK_MSG(test_run_cli(args) == 0 && strstr(test_cli_output(), "type:           centroid"),
              "info: %s", test_cli_output());

    /* A mistyped command: the one meant. */
    CHECK(test_run_cli("predcit -i x") == 1 &&
          strstr(test_cli_output(), "did you mean \"sleapc predict\"?"));
    CHECK(test_run_cli("trak") == 1 && strstr(test_cli_output(), "did you mean \"sleapc track\"?"));
    CHECK(test_run_cli("frobnicate") == 1 && strstr(test_cli_output(), "unknown command") &&
          !strstr(test_cli_output(), "did you mean"));

    /* help COMMAND: that command's usage, for each command. */
    static const char *const cmds[] = {"info", "forward", "predict", "track",
                                       "render", "convert", "demo", "bench"};
    for (int k = 0; k < 8; k++) {
        char want[64];
        snprintf(want, sizeof want, "usage: sleapc %s", cmds[k]);
        snprintf(args, sizeof args, "help %s", cmds[k]);
        CHECK_MSG(test_run_cli_stdout(args) == 0 && strstr(test_cli_output(), want),
                  "help %s: %s", cmds[k], test_cli_output());
    }
    CHECK(test_run_cli("help predcit") == 1 && strstr(test_cli_output(), "did you mean predict"));

    /* -v, --version, version: "sleapc X.Y.Z", as sleap-nn prints "sleap-nn X.Y.Z". */
    char want[64];
    snprintf(want, sizeof want, "sleapc %s\n", SLEAPC_VERSION_STRING);
    static const char *const forms[] = {"-v", "--version", "version"};
    for (int k = 0; k < 3; k++)
        CHECK_MSG(test_run_cli_stdout(forms[k]) == 0 && strcmp(test_cli_output(), want) == 0,
                  "%s: \"%s\"", forms[k], test_cli_output());
    return test_finish();
}
