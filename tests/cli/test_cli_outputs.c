/* sleapc predict's outputs and inputs: the default output name, several
 * formats in one run equal to one run each, convert between formats, render
 * from JSON, several videos (files, a folder, a list) equal to one-by-one
 * runs, a failing video that does not stop the others, and --shard. The
 * videos are three 4-frame lossless slices of small_robot.mp4. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "sleapc/render.h"
#include "sleapc/video.h"
#include "test_util.h"

static char model[2048], tmp[1024];

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
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

/* Frames first..first+3 of the clip as a lossless video (read back exactly). */
static void write_slice(const char *src, int64_t first, const char *dst)
{
    sleapc_video *v = NULL;
    CHECK_OK(sleapc_video_open(src, &v));
    int64_t h, w, c;
    sleapc_video_shape(v, &h, &w, &c);
    uint8_t *px = malloc((size_t)(4 * h * w * c));
    for (int64_t k = 0; px && k < 4; k++)
        CHECK_OK(sleapc_video_read(v, first + k, px + k * h * w * c));
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {4, h, w, c}, .data = px};
    CHECK_OK(sleapc_video_write(dst, &t, 30.0, true));
    free(px);
    sleapc_video_close(v);
}

static cJSON *load_json(const char *path)
{
    size_t size = 0;
    unsigned char *text = test_read_file(path, &size);
    cJSON *j = text ? cJSON_ParseWithLength((const char *)text, size) : NULL;
    free(text);
    return j;
}

/* Same frames and instances; points and scores within tol (float32 values
 * stored as float64 or printed by JSON come back exactly, so tol is tiny). */
static bool same_predictions(const char *a, const char *b, double tol)
{
    cJSON *x = load_json(a), *y = load_json(b);
    bool same = x && y;
    const cJSON *fx = cJSON_GetObjectItem(x, "frames"), *fy = cJSON_GetObjectItem(y, "frames");
    same = same && cJSON_GetArraySize(fx) == cJSON_GetArraySize(fy);
    for (int f = 0; same && f < cJSON_GetArraySize(fx); f++) {
        const cJSON *ix = cJSON_GetObjectItem(cJSON_GetArrayItem(fx, f), "instances");
        const cJSON *iy = cJSON_GetObjectItem(cJSON_GetArrayItem(fy, f), "instances");
        same = cJSON_GetArraySize(ix) == cJSON_GetArraySize(iy) &&
               cJSON_GetObjectItem(cJSON_GetArrayItem(fx, f), "frame_idx")->valueint ==
                   cJSON_GetObjectItem(cJSON_GetArrayItem(fy, f), "frame_idx")->valueint;
        for (int i = 0; same && i < cJSON_GetArraySize(ix); i++) {
            const cJSON *px = cJSON_GetObjectItem(cJSON_GetArrayItem(ix, i), "points");
            const cJSON *py = cJSON_GetObjectItem(cJSON_GetArrayItem(iy, i), "points");
            for (int n = 0; same && n < cJSON_GetArraySize(px); n++) {
                const cJSON *p = cJSON_GetArrayItem(px, n), *q = cJSON_GetArrayItem(py, n);
                if (cJSON_IsNull(p) || cJSON_IsNull(q)) {
                    same = cJSON_IsNull(p) && cJSON_IsNull(q);
                    continue;
                }
                for (int d = 0; d < 2; d++)
                    same = same && fabs(cJSON_GetArrayItem(p, d)->valuedouble -
                                        cJSON_GetArrayItem(q, d)->valuedouble) <= tol;
            }
            double sx = cJSON_GetObjectItem(cJSON_GetArrayItem(ix, i), "score")->valuedouble;
            double sy = cJSON_GetObjectItem(cJSON_GetArrayItem(iy, i), "score")->valuedouble;
            same = same && fabs(sx - sy) <= tol;
        }
    }
    cJSON_Delete(x);
    cJSON_Delete(y);
    return same;
}

static void check_formats(const char *clip)
{
    char args[8192], a[1200], b[1200];
    /* No -o: sleap-nn's "<input>.slp" beside the input. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -q", model, clip);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(a, sizeof a, "%s.slp", clip);
    CHECK_MSG(exists(a), "%s missing", a);
    /* Four formats in one run, named after -o, equal to one run each. */
    snprintf(args, sizeof args,
             "predict -m '%s' -i '%s' -o '%s/f.predictions.slp' -q --output_format slp,analysis_h5 "
             "--output_format csv,json", model, clip, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    static const char *const names[] = {"f.predictions.slp", "f.analysis.h5", "f.csv", "f.json"};
    static const char *const single[] = {"s.slp", "s.h5", "s.csv", "s.json"};
    for (int i = 0; i < 4; i++) {
        snprintf(a, sizeof a, "%s/%s", tmp, names[i]);
        snprintf(b, sizeof b, "%s/%s", tmp, single[i]);
        snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' -q", model, clip, b);
        CHECK(test_run_cli(args) == 0);
        if (i >= 2) /* text formats hold no time stamps */
            CHECK_MSG(same_file(a, b), "%s differs from a run of its own", names[i]);
        else
            CHECK_MSG(exists(a), "%s missing", a);
    }
    /* convert: .slp -> .json equals the JSON written directly; JSON -> .slp
     * -> JSON round trip; the others from the .slp. */
    snprintf(a, sizeof a, "%s/conv.json", tmp);
    snprintf(args, sizeof args, "convert '%s/f.predictions.slp' '%s' -q", tmp, a);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(b, sizeof b, "%s/f.json", tmp);
    CHECK_MSG(same_predictions(a, b, 1e-6), "convert .slp -> .json differs from predict's JSON");
    snprintf(args, sizeof args, "convert '%s' '%s/round.slp' -q && '%s' convert '%s/round.slp' "
             "'%s/round.json' -q", b, tmp, SLEAPC_CLI_PATH, tmp, tmp);
    CHECK(test_run_cli(args) == 0);
    snprintf(a, sizeof a, "%s/round.json", tmp);
    CHECK_MSG(same_predictions(a, b, 1e-6), "JSON -> .slp -> JSON changed the predictions");
    snprintf(args, sizeof args, "convert '%s/f.predictions.slp' '%s/conv.csv' -q", tmp, tmp);
    CHECK(test_run_cli(args) == 0);
    snprintf(a, sizeof a, "%s/conv.csv", tmp);
    snprintf(b, sizeof b, "%s/f.csv", tmp);
    CHECK_MSG(same_file(a, b), "convert .slp -> .csv differs from predict's CSV");
    snprintf(args, sizeof args, "convert '%s/f.predictions.slp' '%s/conv.h5' -q", tmp, tmp);
    CHECK(test_run_cli(args) == 0);
    /* Analysis HDF5 back to JSON: the same predictions (every frame of a
     * single-instance run has its instance, so no frame is missing). */
    snprintf(args, sizeof args, "convert '%s/f.analysis.h5' '%s/h5.json' -q", tmp, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(a, sizeof a, "%s/h5.json", tmp);
    snprintf(b, sizeof b, "%s/f.json", tmp);
    CHECK_MSG(same_predictions(a, b, 1e-6), "convert .h5 -> .json differs from predict's JSON");
    snprintf(args, sizeof args, "render '%s/f.analysis.h5' -i '%s' -o '%s/rh.png' --frames 1 -q",
             tmp, clip, tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(args, sizeof args, "convert '%s/f.csv' '%s/x.slp'", tmp, tmp);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "f.csv"));
    snprintf(args, sizeof args, "convert '%s/f.json' '%s/x.txt'", tmp, tmp);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "x.txt"));
    snprintf(a, sizeof a, "%s/x.txt", tmp);
    CHECK(!exists(a));
    /* render draws sleapc's JSON too. */
    snprintf(args, sizeof args, "render '%s/f.json' -i '%s' -o '%s/r.png' --frames 1 -q", tmp, clip,
             tmp);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    snprintf(a, sizeof a, "%s/r.png", tmp);
    CHECK(exists(a));
}

static void check_many(char clips[3][1100])
{
    char args[16384], a[1300], b[1300];
    /* One-by-one runs first. */
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s.one.json' -q", model,
                 clips[i], clips[i]);
        CHECK(test_run_cli(args) == 0);
    }
    /* Several files after -i (a shell glob), outputs in --output_dir, which
     * predict creates with its parents (as sleap-nn's writer does). */
    snprintf(a, sizeof a, "%s/made/by/predict", tmp);
    CHECK(!exists(a));
    snprintf(args, sizeof args,
             "predict -m '%s' -i '%s' '%s' -i '%s' --output_dir '%s' --output_format json -q",
             model, clips[0], clips[1], clips[2], a);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    CHECK_MSG(strstr(test_cli_output(), "3 of 3 inputs done, 0 failed"), "%s", test_cli_output());
    for (int i = 0; i < 3; i++) {
        const char *base = strrchr(clips[i], '/') + 1;
        snprintf(a, sizeof a, "%s/made/by/predict/%s.json", tmp, base);
        snprintf(b, sizeof b, "%s.one.json", clips[i]);
        CHECK_MSG(same_file(a, b), "%s: several inputs differ from one run", base);
    }
    /* An --output_dir through a file cannot be made: refused before any work. */
    snprintf(b, sizeof b, "%s/a_file", tmp);
    CHECK(test_write_file(b, "x", 1));
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' --output_dir '%s/x' -q", model,
             clips[0], b);
    CHECK(test_run_cli(args) == 1);
    CHECK_MSG(strstr(test_cli_output(), "is not a folder"), "%s", test_cli_output());
    /* -o with several inputs names one file for many. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -i '%s' -o '%s/x.slp'", model, clips[0],
             clips[1], tmp);
    CHECK(test_run_cli(args) == 1 && strstr(test_cli_output(), "--output_dir"));
    /* A list with a broken video: reported, the others written, exit 1. */
    char list[1200], bad[1200];
    snprintf(bad, sizeof bad, "%s/vids/broken.mkv", tmp);
    CHECK(test_write_file(bad, "not a video\n", 12));
    snprintf(list, sizeof list, "%s/list.txt", tmp);
    char text[4096];
    snprintf(text, sizeof text, "# videos\nvids/a.mkv\n%s\n\nvids/c.mkv\n", bad);
    CHECK(test_write_file(list, text, strlen(text)));
    snprintf(a, sizeof a, "%s/listed", tmp);
    mkdir(a, 0777);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' --output_dir '%s' --output_format json -q",
             model, list, a);
    CHECK(test_run_cli(args) == 1);
    CHECK_MSG(strstr(test_cli_output(), "broken.mkv") &&
                  strstr(test_cli_output(), "2 of 3 inputs done, 1 failed"),
              "%s", test_cli_output());
    snprintf(a, sizeof a, "%s/listed/c.mkv.json", tmp);
    snprintf(b, sizeof b, "%s.one.json", clips[2]);
    CHECK_MSG(same_file(a, b), "the input after a broken one was not predicted");
    /* A folder of videos (a, b, broken, c by name), --shard 1/4: b only. */
    snprintf(a, sizeof a, "%s/sharded", tmp);
    mkdir(a, 0777);
    snprintf(args, sizeof args,
             "predict -m '%s' -i '%s/vids' --output_dir '%s' --output_format json -q --shard 1/4",
             model, tmp, a);
    CHECK_MSG(test_run_cli(args) == 0, "%s", test_cli_output());
    char *names[8];
    int n = test_list_dir(a, names, 8);
    CHECK_MSG(n == 1 && strcmp(names[0], "b.mkv.json") == 0, "shard 1/4 wrote %d files", n);
    for (int i = 0; i < n; i++)
        free(names[i]);
    /* One input: --shard K/N takes the K-th of N frame ranges. */
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/half.json' -q --shard 1/2", model,
             clips[0], tmp);
    CHECK(test_run_cli(args) == 0);
    snprintf(a, sizeof a, "%s/half.json", tmp);
    cJSON *j = load_json(a);
    const cJSON *frames = cJSON_GetObjectItem(j, "frames");
    CHECK(cJSON_GetArraySize(frames) == 2 &&
          cJSON_GetObjectItem(cJSON_GetArrayItem(frames, 0), "frame_idx")->valueint == 2);
    cJSON_Delete(j);
}

int main(void)
{
    test_require_data();
    snprintf(tmp, sizeof tmp, "%s", test_tmp_dir());
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    char video[2048], dir[1100], clips[3][1100];
    snprintf(video, sizeof video, "%s", test_data_path("sleap-nn-assets/datasets/small_robot.mp4"));
    snprintf(dir, sizeof dir, "%s/vids", tmp);
    mkdir(dir, 0777);
    for (int i = 0; i < 3; i++) {
        snprintf(clips[i], sizeof clips[i], "%s/%c.mkv", dir, 'a' + i);
        write_slice(video, 10 * i, clips[i]);
    }
    check_formats(clips[0]);
    check_many(clips);
    return test_finish();
}
