/* sleap-nn 0.3.4/0.3.5's new predict options, in `sleapc predict` and
 * `sleapc track`: --tracker classic and the new options at their defaults
 * (or where they do not apply) are accepted and change nothing; the motion
 * trackers' options given to the classic tracker, identity linking with the
 * classic tracker, the appearance trackers without re-ID vectors and re-ID
 * embeddings are refused with the reason, before any work;
 * --appearance_threshold is its --mot_param (the motion trackers themselves and
 * their identity linking: test_mot_reference). --frames given twice: the
 * last counts, as in sleap-nn. --compat reaches `sleapc track`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

static char dir[1024], model[2048], video[2048], input[2048], args[8192];

static bool same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    unsigned char *da = test_read_file(a, &na), *db = test_read_file(b, &nb);
    const bool same = da && db && na == nb && na > 0 && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return same;
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Accepted options: the same tracks as without them. */
static void test_accepted(void)
{
    char plain[1200], with[1200];
    snprintf(plain, sizeof plain, "%s/plain.csv", dir);
    snprintf(with, sizeof with, "%s/with.csv", dir);
    snprintf(args, sizeof args, "track -i '%s' -o '%s' --quiet", input, plain);
    CHECK_MSG(test_run_cli(args) == 0, "track: %s", test_cli_output());
    snprintf(args, sizeof args,
             "track -i '%s' -o '%s' --quiet --tracker classic --save_embeddings none "
             "--appearance_weight 0 --euclidean_scale 25 --bbox_nms_iou=0.45",
             input, with);
    CHECK_MSG(test_run_cli(args) == 0, "track with the new options: %s", test_cli_output());
    CHECK_MSG(same_file(plain, with), "the accepted options changed the tracks");
    /* --compat 0.3.3 is taken (the classic case tracks alike: no infeasible
     * pairing arises in it); an unknown release is refused. */
    snprintf(args, sizeof args, "track -i '%s' -o '%s' --quiet --compat 0.3.3", input, with);
    CHECK_MSG(test_run_cli(args) == 0 && same_file(plain, with), "--compat 0.3.3: %s",
              test_cli_output());
    snprintf(args, sizeof args, "track -i '%s' -o '%s' --compat 0.2", input, with);
    CHECK_MSG(test_run_cli(args) == 1 && strstr(test_cli_output(), "--compat"), "--compat 0.2: %s",
              test_cli_output());
}

typedef struct refusal {
    const char *option;
    const char *says[2]; /* what the message must hold */
} refusal;

static const refusal REFUSED[] = {
    /* no re-ID vectors: predict produces none, the .slp carries none */
    {"--tracker botsort", {"--tracker botsort associates by appearance", NULL}},
    {"--tracker deepsort", {"--tracker deepsort associates by appearance", NULL}},
    {"--tracker strongsort", {"--tracker strongsort associates by appearance", NULL}},
    {"--tracker=deepocsort", {"--tracker deepocsort associates by appearance", NULL}},
    {"--features embeddings", {"--features embeddings tracks by the detections' re-ID", NULL}},
    {"--tracker kalman", {"is not one of classic", NULL}},
    {"--track_buffer 30", {"--track_buffer only applies to the MOT trackers", NULL}},
    {"--min_hits 3", {"--min_hits only applies", NULL}},
    {"--track_high_threshold 0.6", {"--track_high_threshold only applies", NULL}},
    {"--track_low_threshold 0.1", {"--track_low_threshold only applies", NULL}},
    {"--new_track_threshold 0.7", {"--new_track_threshold only applies", NULL}},
    {"--min_match_similarity 0.2", {"--min_match_similarity only applies", NULL}},
    {"--appearance_threshold auto", {"--appearance_threshold only applies to the MOT", NULL}},
    {"--tracker bytetrack --appearance_threshold 0.5",
     {"--appearance_threshold only applies to the appearance trackers", NULL}},
    {"--mot_param preset=paper", {"--mot_param only applies", NULL}},
    {"--link_tracklets", {"--link_tracklets", "not supported"}},
    {"--save_embeddings slp", {"--save_embeddings slp", "re-ID"}},
    {"--save_embeddings all", {"not one of none, slp", NULL}},
    {"--appearance_weight 0.3", {"--appearance_weight 0.3", "re-ID embeddings"}},
    {"--appearance_weight x", {"expected a number", NULL}},
    {"--euclidean_scale far", {"--euclidean_scale: expected a number", NULL}},
    {"--bbox_nms_iou", {"--bbox_nms_iou: expected a number", NULL}},
};

static void check_refused(const char *cmd, const refusal *r)
{
    const char *out = test_cli_output();
    bool ok = !strstr(out, "unknown option");
    for (int k = 0; k < 2; k++)
        ok = ok && (!r->says[k] || strstr(out, r->says[k]));
    CHECK_MSG(ok, "%s %s: %s", cmd, r->option, out);
}

static void test_refused(void)
{
    char out[1200];
    snprintf(out, sizeof out, "%s/refused.slp", dir);
    for (size_t k = 0; k < sizeof REFUSED / sizeof REFUSED[0]; k++) {
        snprintf(args, sizeof args, "predict -i '%s' -m '%s' --tracking %s -o '%s'", video, model,
                 REFUSED[k].option, out);
        CHECK_MSG(test_run_cli(args) == 1, "predict %s: accepted", REFUSED[k].option);
        check_refused("predict", &REFUSED[k]);
        snprintf(args, sizeof args, "track -i '%s' %s -o '%s'", input, REFUSED[k].option, out);
        CHECK_MSG(test_run_cli(args) == 1, "track %s: accepted", REFUSED[k].option);
        check_refused("track", &REFUSED[k]);
    }
    CHECK(!exists(out));
}

/* --appearance_threshold by name is its --mot_param; given both ways it
 * is refused, as sleap-nn refuses it. */
static void test_appearance_threshold(void)
{
    char appearance[2048], named[1200], param[1200];
    snprintf(appearance, sizeof appearance, "%s",
             SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-appearance/input.slp");
    snprintf(named, sizeof named, "%s/named.csv", dir);
    snprintf(param, sizeof param, "%s/param.csv", dir);
    snprintf(args, sizeof args,
             "track -i '%s' -o '%s' --quiet --tracker deepsort --appearance_threshold 0.6",
             appearance, named);
    CHECK_MSG(test_run_cli(args) == 0, "--appearance_threshold 0.6: %s", test_cli_output());
    snprintf(args, sizeof args,
             "track -i '%s' -o '%s' --quiet --tracker deepsort --mot_param "
             "appearance_threshold=0.6",
             appearance, param);
    CHECK_MSG(test_run_cli(args) == 0, "--mot_param appearance_threshold=0.6: %s",
              test_cli_output());
    CHECK_MSG(same_file(named, param), "--appearance_threshold differs from its --mot_param");
    snprintf(args, sizeof args,
             "track -i '%s' -o '%s/both.csv' --tracker deepsort --appearance_threshold auto "
             "--mot_param appearance_threshold=0.6",
             appearance, dir);
    CHECK_MSG(test_run_cli(args) == 1 && strstr(test_cli_output(), "given both"),
              "given both ways: %s", test_cli_output());
}

/* --frames twice: the last list is the one predicted. */
static void test_frames_twice(void)
{
    snprintf(args, sizeof args,
             "predict -i '%s' -m '%s' --frames 0-3 --frames 5,7 -o '%s/frames.slp'", video, model,
             dir);
    CHECK_MSG(test_run_cli(args) == 0, "--frames twice: %s", test_cli_output());
    const char *e = strstr(test_cli_output(), " frames, ");
    const char *s = e;
    while (s && s > test_cli_output() && s[-1] >= '0' && s[-1] <= '9')
        s--;
    CHECK_MSG(e && atoi(s) == 2, "--frames 0-3 --frames 5,7: %s", test_cli_output());
}

int main(void)
{
    test_require_data();
    snprintf(dir, sizeof dir, "%s", test_tmp_dir());
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(video, sizeof video, "%s",
             test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));
    snprintf(input, sizeof input, "%s", test_data_path("sleapnn-0.3.5/tracking/input.slp"));
    test_accepted();
    test_refused();
    test_appearance_threshold();
    test_frames_twice();
    return test_finish();
}
