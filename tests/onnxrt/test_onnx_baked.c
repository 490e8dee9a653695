/* Every sleap-nn export's model.onnx (post-processing baked in) run by the
 * host interpreter with its networks on the native backend, against
 * onnxruntime's outputs of the same graph on the stored cases
 * (cases/<id>/ort.<output>.npy). Exports and cases are discovered by listing.
 *
 * Compared where the export's own mask says a slot is valid (padded top-k
 * slots are in arbitrary order, even between onnxruntime and torch; README).
 * Tolerances: masks exactly; coordinates 1e-3 px (grid positions times a
 * stride, exact unless a network difference flips a near-tie, which would be
 * a whole stride); values 1e-4 absolute (the networks agree with onnxruntime
 * to ~1e-5 relative, test_onnx_raw, and these are maxima, bilinear samples
 * and sums of them of values of order 1). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy/npy.h"
#include "io/onnx/onnx_read.h"
#include "onnxrt/onnxrt.h"
#include "onnxrt/onnxrt_backend.h"
#include "test_util.h"

#define COORD_TOL 1e-3
#define VALUE_TOL 1e-4
#define MAX_NAMES 64

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

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_dir(const char *dir, char **names)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < MAX_NAMES)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    return n;
}

static bool same_shape(const sleapc_tensor *a, const sleapc_tensor *b)
{
    bool same = a->ndim == b->ndim;
    for (int d = 0; same && d < a->ndim; d++)
        same = a->shape[d] == b->shape[d];
    return same;
}

/* Compare one output with onnxruntime's, on the slots `mask` marks valid. */
static void compare(const char *id, const char *name, const sleapc_tensor *got,
                    const sleapc_tensor *want, const sleapc_tensor *mask)
{
    CHECK_MSG(same_shape(got, want), "%s %s: shape differs", id, name);
    if (!same_shape(got, want))
        return;
    int64_t n = sleapc_tensor_numel(want);
    if (want->dtype == SLEAPC_DTYPE_U8) {
        int64_t diff = 0;
        for (int64_t i = 0; i < n; i++)
            diff += ((const uint8_t *)got->data)[i] != ((const uint8_t *)want->data)[i];
        CHECK_MSG(got->dtype == SLEAPC_DTYPE_U8 && diff == 0, "%s %s: %lld flags differ", id, name,
                  (long long)diff);
        return;
    }
    CHECK(got->dtype == SLEAPC_DTYPE_F32 && want->dtype == SLEAPC_DTYPE_F32);
    int64_t per_slot = 1;
    if (mask) {
        int64_t nm = sleapc_tensor_numel(mask);
        CHECK_MSG(nm > 0 && n % nm == 0, "%s %s: mask does not fit", id, name);
        per_slot = nm > 0 && n % nm == 0 ? n / nm : n;
    }
    bool coords = strstr(name, "peaks") || strstr(name, "centroids");
    double tol = coords ? COORD_TOL : VALUE_TOL, worst = 0;
    int64_t n_valid = 0, n_nan = 0;
    for (int64_t i = 0; i < n; i++) {
        if (mask && !((const uint8_t *)mask->data)[i / per_slot])
            continue;
        n_valid++;
        float a = ((const float *)got->data)[i], b = ((const float *)want->data)[i];
        if (isnan(a) || isnan(b)) {
            n_nan += isnan(a) != isnan(b);
            continue;
        }
        worst = fabs(a - b) > worst ? fabs(a - b) : worst;
    }
    CHECK_MSG(n_nan == 0 && worst <= tol,
              "%s %s: max difference %.3g (tolerance %.0e), %lld NaN mismatches", id, name, worst,
              tol, (long long)n_nan);
    printf("%-45s %-15s %4lld valid  max diff %.2e\n", id, name, (long long)n_valid, worst);
}

static void check_case(const char *case_dir, const char *id, sleapc_onnxrt *rt)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", case_dir);
    cJSON *man = read_json(path);
    const cJSON *outputs = cJSON_GetObjectItem(man, "outputs");
    CHECK_MSG(outputs != NULL, "%s: no manifest outputs", id);
    snprintf(path, sizeof path, "%s/input.npy", case_dir);
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(path, &x));
    sleapc_tensor_map out = {0};
    if (x.data && outputs)
        CHECK_OK(sleapc__onnxrt_run(rt, &x, &out));
    const cJSON *o;
    cJSON_ArrayForEach(o, outputs)
    {
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(o, "ort_file"));
        const char *mask_name = cJSON_GetStringValue(cJSON_GetObjectItem(o, "valid_mask"));
        const sleapc_tensor *got = sleapc__tensor_map_get(&out, o->string);
        const sleapc_tensor *mask = mask_name ? sleapc__tensor_map_get(&out, mask_name) : NULL;
        CHECK_MSG(got != NULL, "%s: no output %s", id, o->string);
        sleapc_tensor want = {0};
        snprintf(path, sizeof path, "%s/%s", case_dir, file ? file : "?");
        CHECK_OK(sleapc__npy_read(path, &want));
        /* The reference mask, so both sides are judged on the same slots. */
        sleapc_tensor want_mask = {0};
        if (mask_name) {
            snprintf(path, sizeof path, "%s/ort.%s.npy", case_dir, mask_name);
            CHECK_OK(sleapc__npy_read(path, &want_mask));
        }
        if (got && want.data && (!mask_name || (mask && want_mask.data)))
            compare(id, o->string, got, &want, mask_name ? &want_mask : NULL);
        free(want.data);
        free(want_mask.data);
    }
    free(x.data);
    cJSON_Delete(man);
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
        char *files[MAX_NAMES];
        int n_files = list_dir(dir, files), n_models = 0;
        for (int i = 0; i < n_files; i++) {
            n_models += strncmp(files[i], "training_config", 15) == 0;
            free(files[i]);
        }
        CHECK_MSG(sleapc__onnxrt_n_segments(rt) == n_models, "%s: %d networks, %d configs", name,
                  sleapc__onnxrt_n_segments(rt), n_models);
        char *cases[MAX_NAMES];
        snprintf(path, sizeof path, "%s/cases", dir);
        int n_cases = list_dir(path, cases);
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
    char *cases[MAX_NAMES];
    snprintf(path, sizeof path, "%s/cases", dir);
    int n_cases = list_dir(path, cases);
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
            bool same = tb && same_shape(ta, tb) && ta->dtype == tb->dtype;
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
    char *names[MAX_NAMES];
    int n = list_dir(test_data_path("onnx"), names);
    int n_exports = 0;
    for (int i = 0; i < n; i++) {
        n_exports += check_export(names[i], all);
        free(names[i]);
    }
    CHECK_MSG(n_exports >= 8, "only %d exports with model.onnx found", n_exports);
    check_backend("topdown");
    return test_finish();
}
