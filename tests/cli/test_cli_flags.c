/* sleap-nn predict command lines run unchanged: short and long spellings give
 * the same file, --device, misspellings, refused options, repeated options,
 * --gui JSON lines, -v, log progress and the summary line, frame selection on
 * a labels file (SLEAP's dance.mp4.labels.slp: user instances on frames
 * 0-2, a prediction on every frame, as its README says), --anchor_part, a
 * centered-instance model alone, options an ONNX export bakes in, and info. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "sleapc/tools.h"
#include "sleapc/video.h"
#include "test_util.h"

static char model[2048], video[2048], tmp[1024];

static void expect_error(const char *args, const char *msg)
{
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 1 && strstr(test_cli_output(), "sleapc: error: ") &&
                  strstr(test_cli_output(), msg),
              "sleapc %s: exit %d, output: %s", args, rc, test_cli_output());
}

static bool same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    unsigned char *x = test_read_file(a, &na), *y = test_read_file(b, &nb);
    bool same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* The frame indices of a sleapc JSON predictions file, as "0,1,2". */
static void json_frames(const char *path, char *out, size_t n)
{
    size_t size = 0;
    unsigned char *text = test_read_file(path, &size);
    cJSON *j = text ? cJSON_ParseWithLength((const char *)text, size) : NULL;
    free(text);
    out[0] = '\0';
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(j, "frames"))
    {
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%d", len ? "," : "",
                 cJSON_GetObjectItem(f, "frame_idx")->valueint);
    }
    cJSON_Delete(j);
}

static void check_spellings(void)
{
    char args[8192], a[1024], b[1024];
    snprintf(a, sizeof a, "%s/short.json", tmp);
    snprintf(b, sizeof b, "%s/long.json", tmp);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' -b 2 -n 1 -d cpu --frames 0-3 -q",
             model, video, a);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(args, sizeof args,
             "predict --model_paths '%s' --data_path '%s' --output_path '%s' --batch_size=2 "
             "--max_instances 1 --device auto --frames=0-3 --quiet --queue_maxsize 8 "
             "--no-ensure_rgb --no-ensure_grayscale --integral-patch-size 5",
             model, video, b);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    CHECK_MSG(same_file(a, b), "short and long spellings wrote different files");
    /* sleap-nn's alias of --peak_threshold. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --frames 0-3 -q "
             "--peak-conf-threshold 0.3", model, video, a);
    CHECK(test_run_cli(args) == 0);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --frames 0-3 -q "
             "--peak_threshold 0.3", model, video, b);
    CHECK(test_run_cli(args) == 0);
    CHECK_MSG(same_file(a, b), "--peak-conf-threshold differs from --peak_threshold");
}

static void check_errors(void)
{
    char args[8192], base[4096];
    snprintf(base, sizeof base, "predict -m '%s' -i '%s' -o '%s/e.slp' --frames 0", model, video,
             tmp);
    const struct {
        const char *extra, *msg;
    } cases[] = {
        /* No such device here (ctest pins the native backend, which runs on
         * the CPU; without the pin there is no ninth NVIDIA GPU). */
        {"--device cuda:9", "cuda:9"},
        {"-d gpu:9", "gpu:9"},
        {"-d tpu", "expected auto, cpu, cuda"},
        {"--peak_treshold 0.3", "did you mean --peak_threshold?"},
        {"--batchsize 4", "did you mean --batch_size?"},
        {"--only_labelled_frames", "did you mean --only_labeled_frames?"},
        {"--fg_threshold 0.5", "segmentation"},
        {"--mask-backend sam", "segmentation"},
        {"--headers {}", "remote"},
        {"-o other.slp", "given twice"},
        {"--runtime tensorrt", "ONNX"},
        {"--only_labeled_frames --exclude_user_labeled", "mutually exclusive"},
        {"--shard 2/2", "--shard"},
        /* fp16 is the vulkan backend's; the CPU backends are refused by name. */
        {"--precision fp16 --backend native", "the CPU backends compute fp32 or bf16"},
        {"--precision fp16 -d cpu", "--precision fp16 runs on the vulkan backend"},
        {"--precision fp8", "expected fp32, bf16, bf16-emulated or fp16"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "%s %s", base, cases[i].extra);
        expect_error(args, cases[i].msg);
    }
    char e[1100];
    snprintf(e, sizeof e, "%s/e.slp", tmp);
    struct stat st;
    CHECK_MSG(stat(e, &st) != 0, "a refused command line left %s behind", e);
}

static void check_progress(void)
{
    char args[8192];
    /* --gui: sleap-nn's JSON lines on stdout, the last one complete. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/g.slp' --frames 0-5 -b 2 --gui",
             model, video, tmp);
    CHECK(test_run_cli_stdout(args) == 0);
    const char *out = test_cli_output();
    const char *last = strstr(out, "{\"n_processed\": 6, \"n_total\": 6, \"rate\": ");
    CHECK_MSG(last && strstr(last, "\"eta\": 0.0}"), "gui output: %s", out);
    CHECK_MSG(strncmp(out, "{\"n_processed\": ", 16) == 0, "gui output: %s", out);
    /* --gui failures: sleap-nn's JSON error line on stdout. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s/missing.mp4' --gui", model, tmp);
    CHECK(test_run_cli_stdout(args) == 1);
    const char *prefix = "{\"error\": true, \"type\": \"Error\", \"message\": \"";
    CHECK_MSG(strncmp(test_cli_output(), prefix, strlen(prefix)) == 0 &&
                  strstr(test_cli_output(), "missing.mp4"),
              "gui error: %s", test_cli_output());
    /* -v: the backend the library built; the summary line names it. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/v.slp' --frames 0-3 -v", model,
             video, tmp);
    CHECK(test_run_cli(args) == 0);
    out = test_cli_output();
    CHECK_MSG(strstr(out, "sleapc: backend: "), "%s", out);
    CHECK_MSG(strstr(out, ": 4 frames, 4 instances in ") && strstr(out, " FPS), single-instance "
                                                                         "model on ") &&
                  strstr(out, "/v.slp\n") && !strstr(out, "Layer"),
              "summary: %s", out);
    /* stderr is not a terminal here: no bar, progress lines every 0.05 s.
     * The top-down pair, one thread, one frame a batch: a run of several
     * seconds on any CPU, so at least one line is due. */
    char centroid[2048], centered[2048];
    snprintf(centroid, sizeof centroid, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(centered, sizeof centered, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"));
    snprintf(args, sizeof args,
             "predict -m '%s' -m '%s' -i '%s' -o '%s/p.slp' --frames 0-29 -b 1 --threads 1 "
             "--progress_interval 0.05", centroid, centered,
             test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"), tmp);
    CHECK(test_run_cli(args) == 0);
    out = test_cli_output();
    CHECK_MSG(!strchr(out, '\r'), "a progress bar went to a log: %s", out);
    CHECK_MSG(strstr(out, "/30 frames (") && strstr(out, "FPS, ETA "), "no progress line: %s",
              out);
}

static void check_frame_selection(void)
{
    char args[8192], labels[1100], link[1100], got[256];
    snprintf(labels, sizeof labels, "%s/dance.mp4.labels.slp", tmp);
    snprintf(link, sizeof link, "%s/dance.mp4", tmp);
    size_t n = 0;
    unsigned char *slp = test_read_file(test_data_path("sleap-assets/slp_hdf5/dance.mp4.labels.slp"), &n);
    CHECK(slp && test_write_file(labels, slp, n));
    free(slp);
    /* The file names its video by an absolute path of another machine; SLEAP
     * then looks beside the labels file. */
    CHECK(symlink(test_data_path("sleap-assets/videos/dance.mp4"), link) == 0);
    const struct {
        const char *flags, *want;
    } cases[] = {
        {"--only_labeled_frames", "0,1,2"},
        /* Both must hold under the 0.3.3 choice; sleap-nn 0.3.5 ignores
         * --frames beside a filter (test_cli_predict_frame_positions). */
        {"--exclude_user_labeled --frames 0-4 --compat 0.3.3", "3,4"},
        {"--only_predicted_frames --frames 0-4 --compat 0.3.3", "0,1,2,3,4"},
        /* Positions in the labeled-frame list (0.3.5), here also the frame numbers. */
        {"--frames 1,3", "1,3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/sel.json' -q %s", model,
                 labels, tmp, cases[i].flags);
        CHECK_MSG(test_run_cli(args) == 0, "%s: %s", cases[i].flags, test_cli_output());
        snprintf(link, sizeof link, "%s/sel.json", tmp);
        json_frames(link, got, sizeof got);
        CHECK_MSG(strcmp(got, cases[i].want) == 0, "%s: frames %s, expected %s", cases[i].flags,
                  got, cases[i].want);
    }
    /* No -o with --video_index on a labels file: sleap-nn's
     * "<labels stem>.<video stem>.predictions.slp". */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -q --only_labeled_frames --video_index 0",
             model, labels);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(link, sizeof link, "%s/dance.mp4.labels.dance.predictions.slp", tmp);
    struct stat st;
    CHECK_MSG(stat(link, &st) == 0, "%s missing: %s", link, test_cli_output());
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/sug.json' -q --only_suggested_frames",
             model, labels, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    /* On a video the filters have nothing to select by: a warning, all frames. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/w.slp' --frames 0 "
             "--only_labeled_frames", model, video, tmp);
    CHECK(test_run_cli(args) == 0 && strstr(test_cli_output(), "warning: ") &&
          strstr(test_cli_output(), "need a .slp input"));
}

static void check_models(void)
{
    char args[8192], cen[2048], ci[2048], out[1100];
    snprintf(cen, sizeof cen, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(ci, sizeof ci, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"));
    /* A centered-instance model alone on whole frames names what is missing. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/ci.slp' --frames 0", ci, video, tmp);
    expect_error(args, "Give the centroid model too");
    /* --anchor_part B: the centroid is node B's point, written as sleap-nn
     * writes a centroid model's output: a one-node "centroid" skeleton, the
     * same points as the anchor node's. */
    snprintf(out, sizeof out, "%s/anchor.json", tmp);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --frames 0 -q --anchor_part B",
             cen, video, out);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    size_t size = 0;
    unsigned char *text = test_read_file(out, &size);
    cJSON *j = text ? cJSON_ParseWithLength((const char *)text, size) : NULL;
    free(text);
    const cJSON *insts = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "frames"), 0),
                                             "instances");
    const cJSON *nodes = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "skeleton"), "nodes");
    CHECK(cJSON_GetArraySize(nodes) == 1 &&
          strcmp(cJSON_GetArrayItem(nodes, 0)->valuestring, "centroid") == 0);
    const cJSON *in;
    int n = 0;
    cJSON_ArrayForEach(in, insts)
    {
        const cJSON *pts = cJSON_GetObjectItem(in, "points");
        const cJSON *c0 = cJSON_GetObjectItem(in, "centroid");
        CHECK(cJSON_GetArraySize(pts) == 1 && cJSON_IsArray(cJSON_GetArrayItem(pts, 0)) &&
              cJSON_GetArrayItem(cJSON_GetArrayItem(pts, 0), 0)->valuedouble ==
                  cJSON_GetArrayItem(c0, 0)->valuedouble);
        n++;
    }
    CHECK_MSG(n > 0, "no centroids");
    /* --no_empty_frames: sleap-nn's clean_empty_frames. Black frames hold
     * no animal, so no centroid passes the threshold. */
    char frames_got[256], empty[1100], black[1100];
    snprintf(empty, sizeof empty, "%s/empty.json", tmp);
    snprintf(black, sizeof black, "%s/black.npy", tmp);
    static uint8_t zeros[2 * 64 * 64];
    sleapc_tensor bt = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {2, 64, 64, 1}, .data = zeros};
    CHECK_OK(sleapc_npy_write(black, &bt));
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' -q", cen, black, empty);
    CHECK(test_run_cli(args) == 0);
    json_frames(empty, frames_got, sizeof frames_got);
    CHECK_MSG(strcmp(frames_got, "0,1") == 0, "empty frames kept: %s", frames_got);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' -q --no_empty_frames", cen, black,
             empty);
    CHECK(test_run_cli(args) == 0);
    json_frames(empty, frames_got, sizeof frames_got);
    CHECK_MSG(strcmp(frames_got, "") == 0, "--no_empty_frames kept: %s", frames_got);
    cJSON_Delete(j);
    /* --centroid_only with both top-down models: the centroid model alone,
     * the same file as giving it alone. */
    char both[1100];
    snprintf(both, sizeof both, "%s/both.json", tmp);
    snprintf(args, sizeof args,
             "predict -m '%s' -m '%s' -i '%s' -o '%s' --frames 0 -q --anchor_part B --centroid-only",
             ci, cen, video, both);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    size_t na = 0, nb = 0;
    unsigned char *x = test_read_file(out, &na), *y = test_read_file(both, &nb);
    CHECK_MSG(x && y && na == nb && memcmp(x, y, na) == 0, "--centroid_only differs");
    free(x);
    free(y);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --frames 0 --anchor_part nosuchnode",
             cen, video, out);
    expect_error(args, "\"nosuchnode\" is not a node");
    /* An ONNX export bakes peak finding in: options that cannot apply warn. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/onnx.slp' --frames 0 -q "
             "--peak_threshold 0.3 --integral_refinement none",
             test_data_path("onnx/single_instance"), video, tmp);
    CHECK(test_run_cli(args) == 0);
    CHECK_MSG(strstr(test_cli_output(), "--peak_threshold has no effect on an ONNX export") &&
                  strstr(test_cli_output(), "--integral_refinement has no effect"),
              "%s", test_cli_output());
    /* info: class names and the crop the network sees. */
    snprintf(args, sizeof args, "info -m '%s'",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_multiclass_centered_instance"));
    CHECK(test_run_cli(args) == 0 && strstr(test_cli_output(), "female male") &&
          strstr(test_cli_output(), "per instance crop at "));
    CHECK(test_run_cli("info --help") == 0 && strstr(test_cli_output(), "training_config.json") &&
          strstr(test_cli_output(), "model.onnx") && strstr(test_cli_output(), "best.ckpt"));
    /* Other commands suggest too. */
    CHECK(test_run_cli("info -m x --sise 64x64") == 1 &&
          strstr(test_cli_output(), "did you mean --size?"));
    CHECK(test_run_cli("render p.slp -o x.png --node_radus 3") == 1 &&
          strstr(test_cli_output(), "did you mean --node_radius?"));
    CHECK(test_run_cli("forward --threds 2") == 1 &&
          strstr(test_cli_output(), "did you mean --threads?"));
    CHECK(test_run_cli("forward --help") == 0 && strstr(test_cli_output(), "best_model.h5") &&
          strstr(test_cli_output(), "model_raw.onnx"));
}

int main(void)
{
    test_require_data();
    snprintf(tmp, sizeof tmp, "%s", test_tmp_dir());
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    snprintf(video, sizeof video, "%s", test_data_path("sleap-nn-assets/datasets/small_robot.mp4"));
    check_spellings();
    check_errors();
    check_progress();
    check_frame_selection();
    check_models();
    return test_finish();
}
