/* Every sleap-nn export's model.onnx (post-processing baked in) run by the
 * host interpreter with its networks on the native backend, against
 * onnxruntime's outputs of the same graph on the stored cases
 * (cases/<id>/ort.<output>.npy). Exports and cases are discovered by listing.
 *
 * Judged as ort_cases.h says. Compared where the export's own mask says a slot is valid (padded top-k
 * slots are in arbitrary order, even between onnxruntime and torch; README).
 * Tolerances: masks exactly; coordinates 1e-3 px (grid positions times a
 * stride, exact unless a network difference flips a near-tie, which would be
 * a whole stride); values 1e-4 absolute (the networks agree with onnxruntime
 * to ~1e-5 relative, test_onnx_raw, and these are maxima, bilinear samples
 * and sums of them of values of order 1). */
#include <string.h>

#include "backends/onnx/onnxrt.h"
#include "backends/onnx/onnxrt_backend.h"
#include "backends/onnx/ort_cases.h"
#include "io/onnx/onnx_read.h"

static void check_case(const char *case_dir, const char *id, sleapc_onnxrt *rt)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/input.npy", case_dir);
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(path, &x));
    sleapc_tensor_map out = {0};
    if (x.data && sleapc__onnxrt_run(rt, &x, &out) == SLEAPC_OK)
        ort_check_case(case_dir, id, &out);
    else
        CHECK_MSG(false, "%s: %s", id, sleapc_last_error());
    free(x.data);
}

static bool check_export(const char *name, bool all_cases)
{
    char dir[4096], path[4096];
    snprintf(dir, sizeof dir, "%s", test_data_path("onnx"));
    size_t n = strlen(dir);
    snprintf(dir + n, sizeof dir - n, "/%s", name);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    fclose(f);
    sleapc_onnx_model *om = NULL;
    sleapc_onnxrt *rt = NULL;
    CHECK_OK(sleapc__onnx_read(path, &om));
    if (om)
        CHECK_OK(sleapc__onnxrt_create(om, "native", 2, &rt));
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
            if (i == 0 || all_cases)
                check_case(path, cases[i], rt);
            free(cases[i]);
        }
    }
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
    return true;
}

/* The same graph behind the backend contract: baked_postproc set, warmup on
 * the case's shape, and forward returning what the runner returns. */
static void check_backend(const char *export_name)
{
    char dir[4096], path[4096];
    snprintf(dir, sizeof dir, "%s", test_data_path("onnx"));
    size_t n = strlen(dir);
    snprintf(dir + n, sizeof dir - n, "/%s", export_name);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    sleapc_onnx_model *om = NULL;
    CHECK_OK(sleapc__onnx_read(path, &om));
    char *cases[ORT_MAX_NAMES];
    snprintf(path, sizeof path, "%s/cases", dir);
    int n_cases = ort_list_dir(path, cases);
    snprintf(path, sizeof path, "%s/cases/%s/input.npy", dir, n_cases ? cases[0] : "?");
    for (int i = 0; i < n_cases; i++)
        free(cases[i]);
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(path, &x));
    sleapc_backend *be = NULL;
    sleapc_onnxrt *rt = NULL;
    sleapc_backend_opts opts = {.n_threads = 2};
    if (om && x.data) {
        CHECK_OK(sleapc__onnxrt_backend_create(om, "native", &opts, &be));
        CHECK_OK(sleapc__onnxrt_create(om, "native", 2, &rt));
    }
    if (be && rt) {
        CHECK(be->baked_postproc && strcmp(be->device, "cpu") == 0);
        CHECK_OK(sleapc__backend_warmup(be, x.shape));
        sleapc_tensor_map a = {0}, b = {0};
        CHECK_OK(sleapc__backend_forward(be, &x, &a));
        CHECK_OK(sleapc__onnxrt_run(rt, &x, &b));
        CHECK(a.n == om->graph.n_outputs && a.n == b.n);
        for (int i = 0; i < a.n && a.n == b.n; i++) {
            const sleapc_tensor *ta = &a.tensors[i], *tb = sleapc__tensor_map_get(&b, a.names[i]);
            bool same = tb && ort_same_shape(ta, tb) && ta->dtype == tb->dtype;
            size_t bytes =
                same ? (size_t)sleapc_tensor_numel(ta) * sleapc_dtype_size(ta->dtype) : 0;
            CHECK_MSG(same && memcmp(ta->data, tb->data, bytes) == 0, "%s: %s differs", export_name,
                      a.names[i]);
        }
    }
    sleapc__backend_destroy(be);
    sleapc__onnxrt_destroy(rt);
    sleapc__onnx_destroy(om);
    free(x.data);
}

int main(int argc, char **argv)
{
    test_require_data();
    bool all = argc > 1 && strcmp(argv[1], "--all") == 0;
    char *names[ORT_MAX_NAMES];
    int n = ort_list_dir(test_data_path("onnx"), names);
    int n_exports = 0;
    for (int i = 0; i < n; i++) {
        n_exports += check_export(names[i], all);
        free(names[i]);
    }
    CHECK_MSG(n_exports >= 8, "only %d exports with model.onnx found", n_exports);
    check_backend("topdown");
    return test_finish();
}
