/* `sleapc forward` and `sleapc predict` on sleap-nn's ONNX export folders.
 * forward: every case under onnx/<export>/cases/ (discovered by listing)
 * gives onnxruntime's outputs (ort_cases.h says how they are judged); the
 * sanitizer build runs the first case of each export, the cases of a folder
 * differing only in the frame. predict: a few video frames through each
 * export's layer into a .slp. Errors: a cut graph, an op sleapc does not
 * have, metadata that disagrees with the graph, frames with the wrong
 * channel count. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/onnx/ort_cases.h"


static void expect_error(const char *args, const char *msg_part)
{
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 1 && strstr(test_cli_output(), "sleapc: error: ") && strstr(test_cli_output(), msg_part),
              "sleapc %s: exit %d, \"%s\" expected in: %s", args, rc, msg_part, test_cli_output());
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* forward on one case; the outputs read back from OUT_DIR/<name>.npy. */
static void check_forward(const char *dir, const char *export_name, const char *case_id)
{
    char case_dir[4096], out_dir[4096], args[12288];
    snprintf(case_dir, sizeof case_dir, "%s/cases/%s", dir, case_id);
    snprintf(out_dir, sizeof out_dir, "%s/fwd_%s_%s", test_tmp_dir(), export_name, case_id);
    snprintf(args, sizeof args, "forward -m '%s' -i '%s/input.npy' -o '%s' --threads 2", dir,
             case_dir, out_dir);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "sleapc %s: exit %d: %s", args, rc, test_cli_output());
    if (rc != 0)
        return;
    char *files[ORT_MAX_NAMES];
    int n = ort_list_dir(out_dir, files);
    sleapc_tensor_map got = {0};
    sleapc_tensor ts[ORT_MAX_NAMES] = {{0}};
    for (int i = 0; i < n; i++) {
        char path[8192], name[256];
        snprintf(path, sizeof path, "%s/%s", out_dir, files[i]);
        snprintf(name, sizeof name, "%s", files[i]);
        char *dot = strstr(name, ".npy");
        if (dot)
            *dot = '\0';
        CHECK_OK(sleapc__npy_read(path, &ts[i]));
        CHECK_OK(sleapc__tensor_map_set(&got, name, &ts[i]));
        free(files[i]);
    }
    ort_check_case(case_dir, case_id, &got);
    for (int i = 0; i < n; i++)
        free(ts[i].data);
}

static bool check_export(const char *name)
{
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/%s", test_data_path("onnx"), name);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    if (!exists(path))
        return false;
    char *cases[ORT_MAX_NAMES];
    snprintf(path, sizeof path, "%s/cases", dir);
    int n = ort_list_dir(path, cases);
    CHECK_MSG(n > 0, "%s: no cases", name);
#ifdef SLEAPC_SANITIZED
    const int n_run = n > 0 ? 1 : 0;
#else
    const int n_run = n;
#endif
    for (int i = 0; i < n; i++) {
        if (i < n_run)
            check_forward(dir, name, cases[i]);
        free(cases[i]);
    }
    return true;
}

/* A few frames of a video through each export that takes whole frames. */
static void check_predict(void)
{
    static const char *const exports[] = {"centroid", "topdown", "bottomup",
                                          "multi_class_bottomup"};
    char args[12288], out[4096], onnx[4096], video[4096];
    snprintf(onnx, sizeof onnx, "%s", test_data_path("onnx"));
    snprintf(video, sizeof video, "%s",
             test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));
    for (size_t i = 0; i < sizeof exports / sizeof exports[0]; i++) {
        snprintf(out, sizeof out, "%s/predict_%s.slp", test_tmp_dir(), exports[i]);
        snprintf(args, sizeof args,
                 "predict -m '%s/%s' -i '%s' --frames 0-5 --batch_size 4 -o '%s' --quiet",
                 onnx, exports[i], video, out);
        int rc = test_run_cli(args);
        CHECK_MSG(rc == 0 && exists(out), "sleapc %s: exit %d: %s", args, rc, test_cli_output());
    }
}

/* A copy of an export folder, with `file` replaced by `data` (size bytes),
 * or left out when data is NULL. */
static const char *variant(const char *export_name, const char *tag, const char *file,
                           const void *data, size_t size)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s_%s", test_tmp_dir(), export_name, tag);
    mkdir(dir, 0700);
    char *files[ORT_MAX_NAMES], src_dir[4096];
    snprintf(src_dir, sizeof src_dir, "%s/%s", test_data_path("onnx"), export_name);
    int n = ort_list_dir(src_dir, files);
    for (int i = 0; i < n; i++) {
        char src[8192], dst[8192];
        snprintf(src, sizeof src, "%s/%s", src_dir, files[i]);
        snprintf(dst, sizeof dst, "%s/%s", dir, files[i]);
        bool replace = strcmp(files[i], file) == 0;
        if (strcmp(files[i], "cases") != 0 && (!replace || data)) {
            size_t len = 0;
            unsigned char *bytes = replace ? NULL : test_read_file(src, &len);
            CHECK(test_write_file(dst, bytes ? bytes : data, bytes ? len : size));
            free(bytes);
        }
        free(files[i]);
    }
    return dir;
}

/* data with every `from` replaced by `to` (same length): node names and
 * value names change with an op's name, and stay consistent. */
static unsigned char *patched(const char *path, const char *from, const char *to, size_t *size)
{
    unsigned char *data = test_read_file(path, size);
    size_t n = strlen(from);
    int hits = 0;
    for (size_t i = 0; data && i + n <= *size; i++)
        if (memcmp(data + i, from, n) == 0) {
            memcpy(data + i, to, n);
            hits++;
        }
    CHECK_MSG(hits > 0, "%s: \"%s\" not found", path, from);
    return data;
}

static void check_errors(void)
{
    char graph[4096], meta[4096], args[12288], video[4096];
    snprintf(graph, sizeof graph, "%s/centroid/model.onnx", test_data_path("onnx"));
    snprintf(meta, sizeof meta, "%s/centroid/export_metadata.json", test_data_path("onnx"));
    snprintf(video, sizeof video, "%s",
             test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));

    size_t size = 0;
    unsigned char *bytes = test_read_file(graph, &size);
    const char *cut = variant("centroid", "cut", "model.onnx", bytes, size / 3);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o x.slp --quiet", cut, video);
    expect_error(args, "model.onnx");
    free(bytes);

    bytes = patched(graph, "TopK", "TopQ", &size);
    const char *unknown = variant("centroid", "unknown_op", "model.onnx", bytes, size);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o x.slp --quiet", unknown, video);
    expect_error(args, "TopQ");
    free(bytes);

    bytes = patched(meta, "\"input_channels\": 1", "\"input_channels\": 3", &size);
    const char *channels = variant("centroid", "channels", "export_metadata.json", bytes, size);
    snprintf(args, sizeof args, "info -m '%s'", channels);
    expect_error(args, "input_channels");
    free(bytes);

    /* A colour frame for a grayscale graph is converted; a 2-channel array
     * for forward, which takes the graph's input as it is, is refused. */
    char npy[4096];
    snprintf(npy, sizeof npy, "%s/two_channels.npy", test_tmp_dir());
    uint8_t px[2 * 2 * 64 * 64] = {0};
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {1, 2, 64, 64}, .data = px};
    CHECK_OK(sleapc__npy_write(npy, &t));
    snprintf(args, sizeof args, "forward -m '%s' -i '%s' -o '%s/fwd_bad'",
             variant("centroid", "forward", "", NULL, 0), npy, test_tmp_dir());
    expect_error(args, "image");

    /* The combined export has no metadata embedded in the graph. */
    const char *no_meta =
        variant("multi_class_topdown_combined", "no_meta", "export_metadata.json", NULL, 0);
    snprintf(args, sizeof args, "info -m '%s'", no_meta);
    expect_error(args, "export_metadata.json");
}

/* Folders that lack what sleapc can do without: the metadata (read from the
 * copy embedded in the graph) and the training config (the skeleton then
 * comes from the metadata). */
static void check_fallbacks(void)
{
    char args[12288], video[4096], out[4096];
    snprintf(video, sizeof video, "%s",
             test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"));
    const char *dirs[] = {"", ""};
    static char a[4096], b[4096];
    snprintf(a, sizeof a, "%s", variant("bottomup", "embedded_meta", "export_metadata.json", NULL, 0));
    snprintf(b, sizeof b, "%s", variant("bottomup", "no_config", "training_config.yaml", NULL, 0));
    dirs[0] = a;
    dirs[1] = b;
    for (int i = 0; i < 2; i++) {
        snprintf(out, sizeof out, "%s/fallback_%d.json", test_tmp_dir(), i);
        snprintf(args, sizeof args, "predict -m '%s' -i '%s' --frames 0 -o '%s' --quiet", dirs[i],
                 video, out);
        int rc = test_run_cli(args);
        CHECK_MSG(rc == 0, "sleapc %s: exit %d: %s", args, rc, test_cli_output());
        size_t n = 0;
        char *json = (char *)test_read_file(out, &n);
        /* Node names from the config or the metadata, and two animals. */
        CHECK_MSG(json && strstr(json, "\"nodes\":[\"A\",\"B\"]") &&
                      strstr(json, "\"instances\":[{") && strstr(json, "},{"),
                  "%s: %.400s", dirs[i], json ? json : "(no file)");
        free(json);
    }
}

int main(void)
{
    test_require_data();
    char *names[ORT_MAX_NAMES];
    int n = ort_list_dir(test_data_path("onnx"), names), n_exports = 0;
    for (int i = 0; i < n; i++) {
        n_exports += check_export(names[i]);
        free(names[i]);
    }
    CHECK_MSG(n_exports >= 8, "only %d exports with model.onnx found", n_exports);
    check_predict();
    check_errors();
    check_fallbacks();
    return test_finish();
}
