/* Every legacy SLEAP 1.x model folder (training_config.json + best_model.h5)
 * that carries dummy_activations.h5: run the network with the native backend
 * on the all-zeros input that file implies and compare every stored output
 * (formats.md C.5). Folders are discovered by listing.
 *
 * Tolerance: 1e-4 absolute per value (sleap-nn's own test uses the same). A
 * float32 NumPy implementation of the same graph is 2.4e-7 off on most heads
 * and 1.8e-5 on the 512 x 512 multi-class confidence maps: TensorFlow's own
 * float32 rounding (formats.md C.4). */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "core/alloc.h"
#include "io/h5/h5_file.h"
#include "model/model_impl.h"
#include "test_util.h"

#define ABS_TOL 1e-4

static int n_models, n_outputs;

/* "CentroidConfmapsHead_0" -> "CentroidConfmapsHead" (Keras output names). */
static void head_of(const char *keras, char *out, size_t cap)
{
    snprintf(out, cap, "%s", keras);
    char *u = strrchr(out, '_');
    if (u && u[1] && strspn(u + 1, "0123456789") == strlen(u + 1))
        *u = '\0';
}

/* Compare a stored Keras output (NHWC, or (1, C) for vectors) with ours
 * (NCHW, or (1, C)); returns the largest absolute difference, or -1 when the
 * shapes disagree. */
static double max_abs_diff(const float *ref, const sleapc_h5_info *ri, const sleapc_tensor *got)
{
    const float *g = got->data;
    double worst = 0;
    if (ri->ndim == 2) {
        if (got->ndim != 2 || got->shape[0] != ri->shape[0] || got->shape[1] != ri->shape[1])
            return -1;
        for (int64_t i = 0; i < ri->n_elems; i++)
            worst = fmax(worst, fabs((double)ref[i] - g[i]));
        return worst;
    }
    if (ri->ndim != 4 || got->ndim != 4 || got->shape[0] != ri->shape[0] ||
        got->shape[1] != ri->shape[3] || got->shape[2] != ri->shape[1] ||
        got->shape[3] != ri->shape[2])
        return -1;
    int64_t b = ri->shape[0], h = ri->shape[1], w = ri->shape[2], c = ri->shape[3];
    for (int64_t n = 0; n < b; n++)
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++)
                for (int64_t k = 0; k < c; k++) {
                    double r = ref[((n * h + y) * w + x) * c + k];
                    double v = g[((n * c + k) * h + y) * w + x];
                    worst = fmax(worst, fabs(r - v));
                }
    return worst;
}

static void check_model(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/dummy_activations.h5", dir);
    sleapc_h5 *f = NULL;
    if (sleapc__h5_open(path, &f) != SLEAPC_OK)
        return; /* no Keras outputs stored for this model */
    char **meta_text = NULL;
    int64_t n_meta = 0;
    CHECK_OK(sleapc__h5_read_strings(f, "metadata", &meta_text, &n_meta));
    cJSON *meta = n_meta == 1 ? cJSON_Parse(meta_text[0]) : NULL;
    sleapc__h5_free_strings(meta_text, n_meta);
    const cJSON *shape = cJSON_GetObjectItem(meta, "input_shape");
    const cJSON *outputs = cJSON_GetObjectItem(meta, "outputs");
    CHECK_MSG(cJSON_GetArraySize(shape) == 4 && cJSON_IsArray(outputs), "%s: metadata", name);

    sleapc_model *m = NULL;
    CHECK_OK(sleapc__model_load(dir, &m));
    sleapc_backend *be = NULL;
    sleapc_backend_opts opts = {.n_threads = 2};
    if (m)
        CHECK_OK(sleapc__backend_create("native", &m->graph, &opts, &be));
    if (!be || cJSON_GetArraySize(shape) != 4) {
        sleapc__backend_destroy(be);
        sleapc__model_destroy(m);
        cJSON_Delete(meta);
        sleapc__h5_close(f);
        return;
    }
    n_models++;

    /* Keras input (1, H, W, C) -> ours (1, C, H, W), all zeros. */
    int64_t nhwc[4];
    for (int i = 0; i < 4; i++)
        nhwc[i] = (int64_t)cJSON_GetArrayItem(shape, i)->valuedouble;
    CHECK_MSG(nhwc[3] == m->graph.in_channels, "%s: input has %lld channels, model %d", name,
              (long long)nhwc[3], m->graph.in_channels);
    sleapc_tensor x = {
        .dtype = SLEAPC_DTYPE_F32, .ndim = 4, .shape = {nhwc[0], nhwc[3], nhwc[1], nhwc[2]}};
    x.data = calloc((size_t)(nhwc[0] * nhwc[1] * nhwc[2] * nhwc[3]), sizeof(float));
    sleapc_tensor_map out = {0};
    CHECK_OK(sleapc__backend_forward(be, &x, &out));

    int n_compared = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, outputs)
    {
        const char *dset = cJSON_GetStringValue(cJSON_GetObjectItem(o, "dataset_name"));
        CHECK(dset != NULL);
        if (!dset)
            continue;
        char head[128];
        head_of(dset, head, sizeof head);
        const sleapc_tensor *got = sleapc__tensor_map_get(&out, head);
        if (strcmp(head, "OffsetRefinementHead") == 0) {
            /* Not ported by sleap-nn, so not part of the network we build. */
            CHECK(got == NULL);
            printf("%-45s %-30s skipped (offset refinement)\n", name, dset);
            continue;
        }
        CHECK_MSG(got != NULL, "%s: no output %s", name, head);
        float *ref = NULL;
        sleapc_h5_info ri;
        CHECK_OK(sleapc__h5_read(f, dset, SLEAPC_H5_F32, (void **)&ref, &ri));
        if (got && ref) {
            double err = max_abs_diff(ref, &ri, got);
            CHECK_MSG(err >= 0, "%s %s: shapes differ", name, dset);
            CHECK_MSG(err <= ABS_TOL, "%s %s: max abs error %.3g > %.0e", name, dset, err, ABS_TOL);
            printf("%-45s %-30s max abs error %.2e\n", name, dset, err);
            n_compared++;
            n_outputs++;
        }
        sleapc__free(ref);
    }
    /* Every head of the network was checked against Keras. */
    CHECK_MSG(n_compared == m->n_heads, "%s: %d of %d heads compared", name, n_compared,
              m->n_heads);
    free(x.data);
    sleapc__backend_destroy(be);
    sleapc__model_destroy(m);
    cJSON_Delete(meta);
    sleapc__h5_close(f);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    test_require_data();
    char root[4096];
    snprintf(root, sizeof root, "%s", test_data_path("sleap-nn-assets/legacy_models"));
    DIR *d = opendir(root);
    CHECK(d != NULL);
    if (!d)
        return test_finish();
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256)
        if (e->d_name[0] != '.')
            names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    for (int i = 0; i < n; i++) {
        char dir[8192];
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        check_model(dir, names[i]);
        free(names[i]);
    }
    /* The corpus has six legacy models with stored Keras outputs (formats.md C.2). */
    CHECK_MSG(n_models >= 6, "only %d legacy models with dummy activations", n_models);
    printf("%d models, %d outputs within %.0e\n", n_models, n_outputs, ABS_TOL);
    return test_finish();
}
