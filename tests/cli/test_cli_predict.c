/* sleapc predict on every sleap-nn checkpoint case's frame.npy: the JSON it
 * writes holds sleap-nn's keypoints (non-empty slots, in order), within the
 * end-to-end tolerance of 0.02 px. Plus the CLI's errors for bad options. */
#include <math.h>

#include "../layers/ops_ref_cases.h"

#define PX_TOL 0.02


static int n_cases;

static void check_case(const char *id)
{
    cJSON *m = ref_manifest(id);
    if (!m)
        return;
    char args[16384] = "predict";
    size_t len = strlen(args);
    const cJSON *it;
    bool ckpt = true;
    cJSON_ArrayForEach(it, ref_obj(m, "model_dirs"))
    {
        const char *rel = cJSON_GetStringValue(it);
        const char *dir = test_data_path(rel + strlen("shared/data/"));
        char path[4096];
        snprintf(path, sizeof path, "%s/best.ckpt", dir);
        struct stat st;
        ckpt = ckpt && stat(path, &st) == 0;
        len += (size_t)snprintf(args + len, sizeof args - len, " -m '%s'", dir);
    }
    const cJSON *pc = ref_obj(m, "predict_call");
    bool reliable = ref_bool(m, "reliable");
    if (!ckpt || !reliable || !ref_has(id, "out.pred_keypoints")) {
        cJSON_Delete(m);
        return;
    }
    char out_path[1024];
    snprintf(out_path, sizeof out_path, "%s/%s.json", test_tmp_dir(), id);
    len += (size_t)snprintf(args + len, sizeof args - len,
                            " -i '%s' -o '%s' --threads 2 --compat 0.3.3 --peak_threshold %.17g",
                            ref_path(id, "frame.npy"), out_path, ref_num(pc, "peak_threshold", 0.2));
    if (ref_num(pc, "max_instances", 0) > 0)
        snprintf(args + len, sizeof args - len, " --max_instances %d",
                 (int)ref_num(pc, "max_instances", 0));
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "%s: exit %d: %s", id, rc, test_cli_output());
    size_t size = 0;
    unsigned char *text = test_read_file(out_path, &size);
    cJSON *j = text ? cJSON_ParseWithLength((const char *)text, size) : NULL;
    free(text);
    CHECK_MSG(j != NULL, "%s: no JSON output", id);
    sleapc_tensor kp = {0};
    if (j && ref_load(id, "out.pred_keypoints", &kp)) {
        CHECK(strcmp(cJSON_GetStringValue(ref_obj(j, "format")), "sleapc-predictions") == 0);
        const cJSON *frame = cJSON_GetArrayItem(ref_obj(j, "frames"), 0);
        const cJSON *insts = ref_obj(frame, "instances");
        int64_t I = kp.shape[1], N = kp.shape[2];
        const float *want = kp.data;
        int k = 0;
        double worst = 0;
        for (int64_t i = 0; i < I; i++) {
            bool any = false;
            for (int64_t q = 0; q < 2 * N; q++)
                any = any || !isnan(want[i * N * 2 + q]);
            if (!any)
                continue;  /* sleap-nn writes no instance for an empty slot */
            const cJSON *pts = ref_obj(cJSON_GetArrayItem(insts, k++), "points");
            for (int64_t nd = 0; nd < N; nd++) {
                const cJSON *pt = cJSON_GetArrayItem(pts, (int)nd);
                const float *w = want + (i * N + nd) * 2;
                if (isnan(w[0])) {
                    CHECK_MSG(cJSON_IsNull(pt), "%s: instance %lld node %lld should be null", id,
                              (long long)i, (long long)nd);
                } else if (cJSON_IsArray(pt)) {
                    worst = fmax(worst, fabs(cJSON_GetArrayItem(pt, 0)->valuedouble - w[0]));
                    worst = fmax(worst, fabs(cJSON_GetArrayItem(pt, 1)->valuedouble - w[1]));
                } else {
                    CHECK_MSG(0, "%s: instance %lld node %lld missing", id, (long long)i,
                              (long long)nd);
                }
            }
        }
        CHECK_MSG(k == cJSON_GetArraySize(insts), "%s: %d instances expected, JSON has %d", id, k,
                  cJSON_GetArraySize(insts));
        CHECK_MSG(worst <= PX_TOL, "%s: max keypoint error %.3g px", id, worst);
        n_cases++;
    }
    sleapc__free(kp.data);
    cJSON_Delete(j);
    cJSON_Delete(m);
}

static void expect_error(const char *args, const char *msg)
{
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 1 && strstr(test_cli_output(), "sleapc: error: ") && strstr(test_cli_output(), msg),
              "sleapc %s: exit %d, output: %s", args, rc, test_cli_output());
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Broken inputs and outputs: a clear error, exit 1, and no output file. */
static void check_bad_inputs(const char *model)
{
    char args[8192], out[1024], bad[1024];
    snprintf(out, sizeof out, "%s/never.slp", test_tmp_dir());
    size_t n = 0;
    unsigned char *mp4 = test_read_file(test_data_path("sleap-nn-assets/datasets/small_robot.mp4"), &n);
    CHECK(mp4 != NULL);
    struct {
        const char *name;
        const void *data;
        size_t size;
    } files[] = {
        {"truncated.mp4", mp4, n / 3},
        {"text.mp4", "this is not a video\n", 20},
        {"empty.mp4", "", 0},
    };
    for (size_t i = 0; mp4 && i < sizeof files / sizeof files[0]; i++) {
        snprintf(bad, sizeof bad, "%s/%s", test_tmp_dir(), files[i].name);
        test_write_file(bad, files[i].data, files[i].size);
        snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --quiet", model, bad, out);
        expect_error(args, files[i].name);
        CHECK_MSG(!file_exists(out), "%s left an output file behind", files[i].name);
    }
    free(mp4);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s/missing.mp4' -o '%s'", model,
             test_tmp_dir(), out);
    expect_error(args, "missing.mp4");
    const char *video = test_data_path("sleap-nn-assets/datasets/small_robot.mp4");
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o /nonexistent-dir/out.slp --frames 0",
             model, video);
    expect_error(args, "nonexistent-dir");
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --frames 160-170", model, video,
             out);
    expect_error(args, "beyond the end");
    CHECK(!file_exists(out));
}

int main(void)
{
    test_require_data();
    static ref_cases cases;
    ref_list_cases(&cases);
    for (int i = 0; i < cases.n; i++)
        check_case(cases.ids[i]);
    CHECK_MSG(n_cases >= 10, "only %d cases ran", n_cases);

    char args[8192];
    const char *bu = "sleap-nn-assets/model_ckpts/minimal_instance_bottomup";
    char model[2048], frame[2048];
    snprintf(model, sizeof model, "%s", test_data_path(bu));
    snprintf(frame, sizeof frame, "%s", ref_path("bottomup__pkg_f0000", "frame.npy"));
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/x.json' --bogus", model, frame,
             test_tmp_dir());
    expect_error(args, "--bogus");
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/x.json' --integral_refinement local",
             model, frame, test_tmp_dir());
    expect_error(args, "integral_refinement");
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/x.json' --batch_size 0", model,
             frame, test_tmp_dir());
    expect_error(args, "batch_size");
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/x.txt'", model, frame,
             test_tmp_dir());
    expect_error(args, "x.txt");
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o /nonexistent-folder/x.json", model,
             frame);
    expect_error(args, "nonexistent-folder");
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s/x.json' --ensure_rgb --ensure_grayscale",
             model, frame, test_tmp_dir());
    expect_error(args, "contradict");
    snprintf(args, sizeof args, "predict -i '%s' -o '%s/x.json'", frame, test_tmp_dir());
    expect_error(args, "-m MODEL_DIR");
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    check_bad_inputs(model);
    return test_finish();
}
