/* The stored onnxruntime cases of sleap-nn's exports
 * (onnx/<export>/cases/<id>/: input.npy, ort.<output>.npy, manifest.json) and
 * how outputs are judged against them: masks exactly; coordinates 1e-3 px
 * (grid positions times a stride, exact unless a network difference flips a
 * near-tie, which would be a whole stride); values 1e-4 absolute (the
 * networks agree with onnxruntime to ~1e-5 relative, and these are maxima,
 * bilinear samples and sums of them, of order 1). Only the slots the export's
 * own mask marks valid are compared: padded top-k slots are in arbitrary
 * order, even between onnxruntime and torch (the data's README). */
#ifndef SLEAPC_TESTS_ORT_CASES_H
#define SLEAPC_TESTS_ORT_CASES_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor_map.h"
#include "io/npy/npy.h"
#include "test_util.h"

#define ORT_COORD_TOL 1e-3
#define ORT_VALUE_TOL 1e-4
#define ORT_MAX_NAMES 64

static inline cJSON *ort_read_json(const char *path)
{
    size_t n = 0;
    unsigned char *text = test_read_file(path, &n);
    if (!text)
        return NULL;
    cJSON *j = cJSON_ParseWithLength((const char *)text, n);
    free(text);
    return j;
}

/* Sorted entries of dir (not starting with '.'), at most ORT_MAX_NAMES;
 * free each name. */
static inline int ort_list_dir(const char *dir, char **names)
{
    return test_list_dir(dir, names, ORT_MAX_NAMES);
}

static inline bool ort_same_shape(const sleapc_tensor *a, const sleapc_tensor *b)
{
    bool same = a->ndim == b->ndim;
    for (int d = 0; same && d < a->ndim; d++)
        same = a->shape[d] == b->shape[d];
    return same;
}

/* Compare one output with onnxruntime's, on the slots `mask` marks valid. */
static inline void ort_compare(const char *id, const char *name, const sleapc_tensor *got,
                               const sleapc_tensor *want, const sleapc_tensor *mask)
{
    CHECK_MSG(ort_same_shape(got, want), "%s %s: shape differs", id, name);
    if (!ort_same_shape(got, want))
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
    double tol = coords ? ORT_COORD_TOL : ORT_VALUE_TOL, worst = 0;
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

/* Judge every output the case's manifest lists; got holds them by name. */
static inline void ort_check_case(const char *case_dir, const char *id,
                                  const sleapc_tensor_map *got)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", case_dir);
    cJSON *man = ort_read_json(path);
    const cJSON *outputs = cJSON_GetObjectItem(man, "outputs");
    CHECK_MSG(outputs != NULL, "%s: no manifest outputs", id);
    const cJSON *o;
    cJSON_ArrayForEach(o, outputs)
    {
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(o, "ort_file"));
        const char *mask_name = cJSON_GetStringValue(cJSON_GetObjectItem(o, "valid_mask"));
        const sleapc_tensor *t = sleapc__tensor_map_get(got, o->string);
        CHECK_MSG(t != NULL, "%s: no output %s", id, o->string);
        sleapc_tensor want = {0}, want_mask = {0};
        snprintf(path, sizeof path, "%s/%s", case_dir, file ? file : "?");
        CHECK_OK(sleapc__npy_read(path, &want));
        /* The reference mask, so both sides are judged on the same slots;
         * the mask itself is compared as an output of its own. */
        if (mask_name) {
            snprintf(path, sizeof path, "%s/ort.%s.npy", case_dir, mask_name);
            CHECK_OK(sleapc__npy_read(path, &want_mask));
        }
        if (t && want.data && (!mask_name || want_mask.data))
            ort_compare(id, o->string, t, &want, mask_name ? &want_mask : NULL);
        free(want.data);
        free(want_mask.data);
    }
    cJSON_Delete(man);
}

#endif
