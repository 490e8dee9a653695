/* sleap-nn 0.3.5's exports (sleapnn-0.3.5/exports/<export>/model.onnx, the
 * post-processing baked in) run by the host interpreter with their networks
 * on the native backend, against onnxruntime's outputs of the same graph on
 * every stored case (cases/<id>/input.npy -> ort_outputs.npz, one array per
 * graph output). Exports and cases are discovered by listing.
 *
 * Judged as ort_cases.h judges the 0.3.3 exports, on the slots the export's
 * own mask marks valid (padded top-k slots are in arbitrary order; the data's
 * README): masks exactly, coordinates 1e-3 px (grid positions times a stride,
 * divided by the input scale: exact unless a near-tie flips, a whole
 * stride), values 1e-4 absolute. The masks: peak_mask for a bottom-up
 * graph's peaks, peak values and class probabilities, candidate_mask for its
 * line scores, instance_valid for a centroid or top-down graph's per-instance
 * outputs; single-instance and crop graphs mark a missing peak with NaN,
 * which must match. */
#include <string.h>

#include "backends/onnx/onnxrt.h"
#include "backends/onnx/ort_cases.h"
#include "io/npy/npz_read.h"
#include "io/onnx/onnx_read.h"

#define EXPORTS "sleapnn-0.3.5/exports"

static bool is_mask(const char *name)
{
    return strcmp(name, "peak_mask") == 0 || strcmp(name, "candidate_mask") == 0 ||
           strcmp(name, "instance_valid") == 0;
}

/* The output whose true slots say where `name` is valid, or NULL. */
static const char *mask_of(const sleapc_tensor_map *got, const char *name)
{
    if (is_mask(name))
        return NULL;
    if (strcmp(name, "line_scores") == 0)
        return sleapc__tensor_map_get(got, "candidate_mask") ? "candidate_mask" : NULL;
    if (sleapc__tensor_map_get(got, "peak_mask"))
        return "peak_mask";
    if (sleapc__tensor_map_get(got, "instance_valid"))
        return "instance_valid";
    return NULL;
}

static int check_case(const char *case_dir, const char *id, sleapc_onnxrt *rt)
{
    char path[4096], npz[4096];
    snprintf(path, sizeof path, "%s/input.npy", case_dir);
    snprintf(npz, sizeof npz, "%s/ort_outputs.npz", case_dir);
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(path, &x));
    sleapc_tensor_map got = {0};
    if (!x.data || sleapc__onnxrt_run(rt, &x, &got) != SLEAPC_OK) {
        CHECK_MSG(false, "%s: %s", id, sleapc_last_error());
        free(x.data);
        return 0;
    }
    free(x.data);
    snprintf(path, sizeof path, "%s/manifest.json", case_dir);
    cJSON *man = ort_read_json(path);
    const cJSON *outputs = cJSON_GetObjectItem(man, "outputs"), *o;
    CHECK_MSG(cJSON_GetArraySize(outputs) == got.n, "%s: %d outputs, the manifest lists %d", id,
              got.n, cJSON_GetArraySize(outputs));
    int n_checked = 0;
    cJSON_ArrayForEach(o, outputs)
    {
        const sleapc_tensor *t = sleapc__tensor_map_get(&got, o->string);
        CHECK_MSG(t != NULL, "%s: no output %s", id, o->string);
        const char *mask_name = mask_of(&got, o->string);
        sleapc_tensor want = {0}, want_mask = {0};
        CHECK_OK(sleapc__npz_read(npz, o->string, &want));
        /* The reference mask, so both sides are judged on the same slots;
         * the mask itself is compared as an output of its own. */
        if (mask_name)
            CHECK_OK(sleapc__npz_read(npz, mask_name, &want_mask));
        if (t && want.data && (!mask_name || want_mask.data)) {
            ort_compare(id, o->string, t, &want, mask_name ? &want_mask : NULL);
            n_checked++;
        }
        free(want.data);
        free(want_mask.data);
    }
    cJSON_Delete(man);
    return n_checked;
}

static bool check_export(const char *name)
{
    char dir[4096], path[4096];
    snprintf(dir, sizeof dir, "%s/%s", test_data_path(EXPORTS), name);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    fclose(f);
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = NULL;
    CHECK_OK(sleapc__onnx_read(path, &om));
    if (om)
        CHECK_MSG(sleapc__onnxrt_create(om, "native", 2, &rt) == SLEAPC_OK, "%s: %s", name,
                  sleapc_last_error());
    if (rt) {
        /* One network per exported model: a training_config*.yaml each. */
        char *files[ORT_MAX_NAMES];
        int n_files = ort_list_dir(dir, files), n_models = 0;
        for (int i = 0; i < n_files; i++) {
            n_models += strncmp(files[i], "training_config", 15) == 0;
            free(files[i]);
        }
        CHECK_MSG(sleapc__onnxrt_n_segments(rt) == n_models, "%s: %d networks, %d configs", name,
                  sleapc__onnxrt_n_segments(rt), n_models);
        char *cases[ORT_MAX_NAMES];
        snprintf(path, sizeof path, "%s/cases", dir);
        int n_cases = ort_list_dir(path, cases);
        CHECK_MSG(n_cases > 0, "%s: no cases", name);
        for (int i = 0; i < n_cases; i++) {
            snprintf(path, sizeof path, "%s/cases/%s", dir, cases[i]);
            char id[256];
            snprintf(id, sizeof id, "%s/%s", name, cases[i]);
            CHECK_MSG(check_case(path, id, rt) > 0, "%s: nothing compared", id);
            free(cases[i]);
        }
    }
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
    return true;
}

int main(void)
{
    test_require_data();
    char *names[ORT_MAX_NAMES];
    int n = ort_list_dir(test_data_path(EXPORTS), names);
    if (n <= 0) {
        printf("SKIP: no %s\n", EXPORTS);
        return 77;
    }
    int n_exports = 0;
    for (int i = 0; i < n; i++) {
        n_exports += check_export(names[i]);
        free(names[i]);
    }
    CHECK_MSG(n_exports == 8, "%d exports with model.onnx found, 8 expected", n_exports);
    return test_finish();
}
