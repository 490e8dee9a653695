/* Every sleap-nn export folder with a model_raw.onnx (backbone + heads):
 * loaded as a model, its imported graph must compute what the checkpoint it
 * was exported from computes, on the reference input of a stored case.
 * Folders and cases are discovered by listing.
 *
 * Tolerances (relative L2 per head):
 *  - vs the checkpoint model on the same backend: 1e-5 (the requirement). The
 *    two graphs hold the same weights in the same op order, so anything above
 *    float32 rounding would be an import error.
 *  - vs onnxruntime's output of the same file (cases/<id>/ort_raw.<head>.npy):
 *    1e-4, as for sleap-nn's own outputs in test_forward_reference: float32
 *    summation order alone gives up to ~3e-5.
 *
 * SLEAPC_TEST_BACKEND=NAME runs both graphs on that backend instead of the
 * native one (ctest's test_onnx_raw_vulkan); on a software device (lavapipe,
 * about 1 GFLOP/s) only the cases of at most SOFTWARE_GFLOP unless
 * SLEAPC_TEST_FULL is set. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/backend.h"
#include "io/npy/npy_file.h"
#include "model/model_impl.h"
#include "test_util.h"

#define REL_L2_VS_CKPT 1e-5
#define REL_L2_VS_ORT 1e-4
#define MAX_NAMES 64
#define SOFTWARE_GFLOP 2.0

static int n_compared, n_left_out;

/* The backend under test: SLEAPC_TEST_BACKEND or the native one. */
static const char *backend_name(void)
{
    const char *only = getenv("SLEAPC_TEST_BACKEND");
    return only && *only ? only : "native";
}

/* A case too slow for a software device (see the top). */
static bool left_out(const sleapc_graph *g, const sleapc_tensor *x)
{
    const char *full = getenv("SLEAPC_TEST_FULL");
    if ((full && *full && strcmp(full, "0") != 0) || !test_backend_software_only(backend_name()))
        return false;
    return sleapc__graph_flops(g, x->shape[0], x->shape[2], x->shape[3]) * 1e-9 > SOFTWARE_GFLOP;
}

static cJSON *read_json(const char *path)
{
    size_t n = 0;
    unsigned char *text = test_read_file(path, &n);
    if (!text)
        return NULL;
    cJSON *j = cJSON_ParseWithLength((const char *)text, n);
    free(text);
    return j;
}

static bool same_shape(const sleapc_tensor *a, const sleapc_tensor *b)
{
    bool same = a->ndim == b->ndim;
    for (int d = 0; same && d < a->ndim; d++)
        same = a->shape[d] == b->shape[d];
    return same;
}

static bool exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

/* The stage input named by the manifest's raw head reference file
 * ("shared/data/reference/<case>/<stage>.head.<Head>.npy"). */
static bool stage_input_path(const cJSON *man, char *out, size_t cap)
{
    const cJSON *outs = cJSON_GetObjectItem(cJSON_GetObjectItem(man, "raw"), "outputs");
    const cJSON *first = outs ? outs->child : NULL;
    const char *ref = cJSON_GetStringValue(cJSON_GetObjectItem(first, "reference_file"));
    const char *prefix = "shared/data/";
    if (!ref || strncmp(ref, prefix, strlen(prefix)) != 0 || !strstr(ref, ".head."))
        return false;
    snprintf(out, cap, "%s", test_data_path(ref + strlen(prefix)));
    snprintf(strstr(out, ".head."), cap - (size_t)(strstr(out, ".head.") - out), ".input.npy");
    return true;
}

static void check_case(const char *export_dir, const char *case_id, sleapc_model *onnx,
                       sleapc_model *ckpt)
{
    char case_dir[4096], path[4096];
    snprintf(case_dir, sizeof case_dir, "%s/cases/%s", export_dir, case_id);
    snprintf(path, sizeof path, "%s/manifest.json", case_dir);
    cJSON *man = read_json(path);
    CHECK_MSG(man != NULL, "%s: no manifest", case_dir);
    if (!man || !stage_input_path(man, path, sizeof path)) {
        CHECK_MSG(false, "%s: manifest names no raw reference input", case_dir);
        cJSON_Delete(man);
        return;
    }
    cJSON_Delete(man);
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(path, &x));
    if (!x.data)
        return;
    /* (B, n_samples=1, C, H, W) -> (B, C, H, W) */
    CHECK(x.ndim == 5 && x.shape[1] == 1);
    for (int d = 1; d < 4; d++)
        x.shape[d] = x.shape[d + 1];
    x.ndim = 4;

    if (left_out(&ckpt->graph, &x)) {
        n_left_out++;
        free(x.data);
        return;
    }
    sleapc_backend_opts opts = {.n_threads = 2};
    sleapc_backend *be_onnx = NULL, *be_ckpt = NULL;
    CHECK_OK(sleapc__backend_create(backend_name(), &onnx->graph, &opts, &be_onnx));
    CHECK_OK(sleapc__backend_create(backend_name(), &ckpt->graph, &opts, &be_ckpt));
    sleapc_tensor_map out_onnx = {0}, out_ckpt = {0};
    if (be_onnx && be_ckpt) {
        CHECK_OK(sleapc__backend_forward(be_onnx, &x, &out_onnx));
        CHECK_OK(sleapc__backend_forward(be_ckpt, &x, &out_ckpt));
    }
    for (int h = 0; h < ckpt->n_heads; h++) {
        const char *head = ckpt->heads[h].name;
        const sleapc_tensor *a = sleapc__tensor_map_get(&out_onnx, head);
        const sleapc_tensor *b = sleapc__tensor_map_get(&out_ckpt, head);
        CHECK_MSG(a && b, "%s: no %s output", case_id, head);
        if (!a || !b)
            continue;
        CHECK_MSG(same_shape(a, b), "%s %s: shapes differ", case_id, head);
        if (!same_shape(a, b))
            continue;
        double err = test_rel_l2(a->data, b->data, sleapc_tensor_numel(b));
        CHECK_MSG(err <= REL_L2_VS_CKPT, "%s %s: relative L2 vs checkpoint %.3g > %.0e", case_id,
                  head, err, REL_L2_VS_CKPT);
        n_compared++;
        snprintf(path, sizeof path, "%s/ort_raw.%s.npy", case_dir, head);
        sleapc_tensor ort = {0};
        CHECK_OK(sleapc__npy_read(path, &ort));
        if (ort.data) {
            CHECK_MSG(same_shape(a, &ort), "%s %s: shape differs from onnxruntime's", case_id,
                      head);
            double err_ort = same_shape(a, &ort)
                                 ? test_rel_l2(a->data, ort.data, sleapc_tensor_numel(&ort))
                                 : INFINITY;
            CHECK_MSG(err_ort <= REL_L2_VS_ORT, "%s %s: relative L2 vs onnxruntime %.3g > %.0e",
                      case_id, head, err_ort, REL_L2_VS_ORT);
            printf("%-40s %-30s %-8s vs ckpt %.2e  vs ort %.2e\n", case_id, head,
                   backend_name(), err, err_ort);
        }
        free(ort.data);
    }
    sleapc__backend_destroy(be_onnx);
    sleapc__backend_destroy(be_ckpt);
    free(x.data);
}

/* Load the export and its checkpoint; compare what they are, then run the
 * cases. Returns whether the folder was an export with model_raw.onnx. */
static bool check_export(const char *name)
{
    char dir[4096], path[4096];
    snprintf(dir, sizeof dir, "%s", test_data_path("onnx"));
    size_t n = strlen(dir);
    snprintf(dir + n, sizeof dir - n, "/%s", name);
    snprintf(path, sizeof path, "%s/model_raw.onnx", dir);
    if (!exists(path))
        return false;
    snprintf(path, sizeof path, "%s/export_metadata.json", dir);
    cJSON *meta = read_json(path);
    const char *model_name = cJSON_GetStringValue(cJSON_GetObjectItem(meta, "model_name"));
    CHECK_MSG(model_name != NULL, "%s: no model_name in the metadata", name);
    char ckpt_dir[4096];
    snprintf(ckpt_dir, sizeof ckpt_dir, "%s", test_data_path("sleap-nn-assets/model_ckpts"));
    n = strlen(ckpt_dir);
    snprintf(ckpt_dir + n, sizeof ckpt_dir - n, "/%s", model_name ? model_name : "?");
    cJSON_Delete(meta);

    sleapc_model *onnx = NULL, *ckpt = NULL;
    /* The folder itself loads model.onnx; naming model_raw.onnx picks the
     * bare network. */
    snprintf(path, sizeof path, "%s/model_raw.onnx", dir);
    CHECK_OK(sleapc__model_load(path, &onnx));
    CHECK(!onnx || !onnx->baked);
    CHECK_OK(sleapc__model_load(ckpt_dir, &ckpt));
    if (onnx && ckpt) {
        /* The same model, as far as the pipeline can see. */
        CHECK(onnx->cfg.model_type == ckpt->cfg.model_type);
        CHECK(onnx->graph.in_channels == ckpt->graph.in_channels);
        CHECK_MSG(onnx->graph.max_stride == ckpt->graph.max_stride, "%s: max stride %d vs %d", name,
                  onnx->graph.max_stride, ckpt->graph.max_stride);
        CHECK(onnx->n_heads == ckpt->n_heads);
        CHECK(onnx->graph.n_outputs == ckpt->graph.n_outputs);
        for (int o = 0; o < onnx->graph.n_outputs && o < ckpt->graph.n_outputs; o++) {
            CHECK(strcmp(onnx->graph.outputs[o].name, ckpt->graph.outputs[o].name) == 0);
            CHECK_MSG(onnx->graph.outputs[o].stride == ckpt->graph.outputs[o].stride,
                      "%s %s: stride %d vs %d", name, onnx->graph.outputs[o].name,
                      onnx->graph.outputs[o].stride, ckpt->graph.outputs[o].stride);
        }
        CHECK_MSG(sleapc__weights_param_count(&onnx->weights) ==
                      sleapc__weights_param_count(&ckpt->weights),
                  "%s: %lld parameters vs %lld", name,
                  (long long)sleapc__weights_param_count(&onnx->weights),
                  (long long)sleapc__weights_param_count(&ckpt->weights));
        char *cases[MAX_NAMES];
        snprintf(path, sizeof path, "%s/cases", dir);
        int n_cases = test_list_dir(path, cases, MAX_NAMES);
        CHECK_MSG(n_cases > 0, "%s: no cases", name);
        /* One case per export keeps the sanitizer build quick; the cases of
         * a folder differ only in the frame. */
        if (n_cases > 0)
            check_case(dir, cases[0], onnx, ckpt);
        for (int i = 0; i < n_cases; i++)
            free(cases[i]);
    }
    sleapc__model_destroy(onnx);
    sleapc__model_destroy(ckpt);
    return true;
}

/* A folder under the test's temporary directory holding the centroid
 * export's files, the metadata with `from` replaced by `to` and the graph cut
 * to `graph_bytes` (0 = whole); `skip` is left out. */
static const char *make_export(const char *name, const char *skip, const char *from, const char *to,
                               size_t graph_bytes)
{
    static char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", test_tmp_dir(), name);
    mkdir(dir, 0700);
    const char *files[] = {"model_raw.onnx", "training_config.yaml", "export_metadata.json"};
    for (int i = 0; i < 3; i++) {
        if (skip && strcmp(files[i], skip) == 0)
            continue;
        char src[4096], dst[4096];
        snprintf(src, sizeof src, "%s", test_data_path("onnx/centroid"));
        size_t n = strlen(src);
        snprintf(src + n, sizeof src - n, "/%s", files[i]);
        snprintf(dst, sizeof dst, "%s/%s", dir, files[i]);
        size_t size = 0;
        unsigned char *data = test_read_file(src, &size);
        CHECK(data != NULL);
        if (!data)
            continue;
        char *hit = i == 2 && from ? strstr((char *)data, from) : NULL;
        if (hit && strlen(from) == strlen(to))
            memcpy(hit, to, strlen(to));
        if (i == 0 && graph_bytes && graph_bytes < size)
            size = graph_bytes;
        CHECK(test_write_file(dst, data, size));
        free(data);
    }
    return dir;
}

static void check_load_errors(void)
{
    sleapc_model *m = NULL;
    /* A folder with only the baked graph loads it, the pose model's config
     * and the metadata with it. */
    CHECK_OK(sleapc__model_load(test_data_path("onnx/topdown"), &m));
    CHECK(m && m->baked && m->export_meta.kind == SLEAPC_EXPORT_TOPDOWN &&
          m->cfg.model_type == SLEAPC_MODEL_TYPE_CENTERED_INSTANCE && m->graph.in_channels == 1);
    sleapc__model_destroy(m);
    m = NULL;
    sleapc_status st;
    /* Metadata that describes another model. */
    st = sleapc__model_load(make_export("wrong_type", NULL, "\"centroid\"", "\"bottomup\"", 0), &m);
    CHECK_MSG(st == SLEAPC_ERR_FORMAT && !m && strstr(sleapc_last_error(), "export_metadata.json"),
              "%s", sleapc_last_error());
    st = sleapc__model_load(
        make_export("wrong_channels", NULL, "\"input_channels\": 1", "\"input_channels\": 3", 0),
        &m);
    CHECK_MSG(st == SLEAPC_ERR_FORMAT && !m && strstr(sleapc_last_error(), "input_channels"), "%s",
              sleapc_last_error());
    st = sleapc__model_load(make_export("no_config", "training_config.yaml", NULL, NULL, 0), &m);
    CHECK_MSG(st == SLEAPC_ERR_IO && !m, "%s", sleapc_last_error());
    st = sleapc__model_load(make_export("cut", NULL, NULL, NULL, 1000), &m);
    CHECK_MSG(st == SLEAPC_ERR_FORMAT && !m && strstr(sleapc_last_error(), "model_raw.onnx"), "%s",
              sleapc_last_error());
    /* The metadata is a cross-check, not a requirement. */
    CHECK_OK(sleapc__model_load(make_export("no_meta", "export_metadata.json", NULL, NULL, 0), &m));
    sleapc__model_destroy(m);
}

int main(void)
{
    test_require_data();
    const char *only = getenv("SLEAPC_TEST_BACKEND");
    if (only && *only) {
        bool runs = false;
        for (int i = 0; i < sleapc__backend_count(); i++)
            runs = runs || (strcmp(sleapc__backend_factory(i)->name, only) == 0 &&
                            sleapc__backend_factory(i)->score() > 0);
        if (!runs) {
            printf("skipped: backend %s is not built or cannot run here\n", only);
            return 77;
        }
    }
    char *names[MAX_NAMES];
    int n = test_list_dir(test_data_path("onnx"), names, MAX_NAMES);
    int n_exports = 0;
    for (int i = 0; i < n; i++) {
        n_exports += check_export(names[i]);
        free(names[i]);
    }
    /* One raw export per single-model type: six in the data folder. */
    CHECK_MSG(n_exports >= 6, "only %d exports with model_raw.onnx found", n_exports);
    CHECK_MSG(n_compared > 0, "no head compared");
    if (n_left_out)
        printf("%d cases above %.1f GFLOP left out on a software device (SLEAPC_TEST_FULL=1 "
               "runs them)\n",
               n_left_out, SOFTWARE_GFLOP);
    check_load_errors();
    return test_finish();
}
