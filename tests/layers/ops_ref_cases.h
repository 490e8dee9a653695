/* Shared helpers of the ops tests: discover the reference cases, read their
 * manifests and arrays, and compare float arrays. Header-only (static inline),
 * so each test program includes what it uses. */
#ifndef SLEAPC_TESTS_OPS_REF_CASES_H
#define SLEAPC_TESTS_OPS_REF_CASES_H

#include <cjson/cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "io/npy/npy_file.h"
#include "layers/ops/preprocess.h"
#include "test_util.h"

/* The folder of the shared data holding the cases; a test of another set
 * defines it before including this header. */
#ifndef REF_DIR
#define REF_DIR "reference"
#endif

#define REF_MAX_CASES 128
#define REF_ID_CAP 128

typedef struct ref_cases {
    int n;
    char ids[REF_MAX_CASES][REF_ID_CAP];
} ref_cases;

static inline int ref_cmp_ids(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

/* The folder of the data dir the helpers read: REF_DIR unless
 * ref_use_folder chose another of the same layout (reference-backbones/). */
static inline const char **ref_folder_slot(void)
{
    static const char *folder = REF_DIR;
    return &folder;
}

static inline void ref_use_folder(const char *folder)
{
    *ref_folder_slot() = folder;
}

/* Every folder of the reference folder with a manifest.json, sorted by name. */
static inline void ref_list_cases(ref_cases *out)
{
    out->n = 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", test_data_path(*ref_folder_slot()));
    DIR *d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot list %s", dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && out->n < REF_MAX_CASES) {
        if (e->d_name[0] == '.' || strlen(e->d_name) >= REF_ID_CAP)
            continue;
        char path[4096 + 2 * REF_ID_CAP];
        snprintf(path, sizeof path, "%s/%s/manifest.json", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            snprintf(out->ids[out->n++], REF_ID_CAP, "%s", e->d_name);
    }
    closedir(d);
    qsort(out->ids, (size_t)out->n, REF_ID_CAP, ref_cmp_ids);
}

static inline const char *ref_path(const char *id, const char *file)
{
    static char rel[1024];
    snprintf(rel, sizeof rel, "%s/%s/%s", *ref_folder_slot(), id, file);
    return test_data_path(rel);
}

static inline bool ref_has(const char *id, const char *array_name)
{
    char file[512];
    snprintf(file, sizeof file, "%s.npy", array_name);
    struct stat st;
    return stat(ref_path(id, file), &st) == 0;
}

/* Parsed manifest.json (free with cJSON_Delete), or NULL after a failed CHECK. */
static inline cJSON *ref_manifest(const char *id)
{
    size_t size = 0;
    unsigned char *text = test_read_file(ref_path(id, "manifest.json"), &size);
    CHECK_MSG(text != NULL, "%s: cannot read manifest.json", id);
    if (!text)
        return NULL;
    cJSON *m = cJSON_ParseWithLength((const char *)text, size);
    free(text);
    CHECK_MSG(m != NULL, "%s: manifest.json does not parse", id);
    return m;
}

/* Load <array_name>.npy; false (after a failed CHECK) when it cannot be read.
 * Free t->data with sleapc__free. */
static inline bool ref_load(const char *id, const char *array_name, sleapc_tensor *t)
{
    char file[512];
    snprintf(file, sizeof file, "%s.npy", array_name);
    memset(t, 0, sizeof *t);
    sleapc_status st = sleapc__npy_read(ref_path(id, file), t);
    CHECK_MSG(st == SLEAPC_OK, "%s: %s: %s", id, file, sleapc_last_error());
    return st == SLEAPC_OK;
}

/* Numeric field; dflt when absent or null. */
static inline double ref_num(const cJSON *obj, const char *key, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static inline bool ref_bool(const cJSON *obj, const char *key)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, key));
}

static inline const cJSON *ref_obj(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* The manifest's model folders under the data directory, at most 2, as
 * paths to read; their count. */
static inline int ref_model_dirs(const cJSON *m, char dirs[2][2048])
{
    const cJSON *it;
    int n = 0;
    cJSON_ArrayForEach(it, ref_obj(m, "model_dirs"))
    {
        const char *rel = cJSON_GetStringValue(it);
        if (rel && n < 2 && strncmp(rel, "shared/data/", 12) == 0)
            snprintf(dirs[n++], sizeof dirs[0], "%s", test_data_path(rel + 12));
    }
    return n;
}

/* The name of backend call i ("centroid", "centered_instance", ...), or NULL. */
static inline const char *ref_stage(const cJSON *m, int i)
{
    const cJSON *calls = ref_obj(m, "backend_calls");
    const cJSON *call = cJSON_GetArrayItem(calls, i);
    const cJSON *stage = ref_obj(call, "stage");
    return cJSON_IsString(stage) ? stage->valuestring : NULL;
}

/* The full-chain options of a single-stage or centroid pipeline block. */
static inline sleapc_preprocess_opts ref_opts(const cJSON *stage)
{
    sleapc_preprocess_opts o = {0};
    o.ensure_rgb = ref_bool(stage, "ensure_rgb");
    o.ensure_grayscale = ref_bool(stage, "ensure_grayscale");
    o.max_height = (int64_t)ref_num(stage, "max_height", 0);
    o.max_width = (int64_t)ref_num(stage, "max_width", 0);
    o.scale = ref_num(stage, "scale", 1.0);
    o.max_stride = (int64_t)ref_num(stage, "max_stride", 1);
    return o;
}

/* (H, W, C) frame -> (C, H, W), sleapc__malloc'ed. */
static inline uint8_t *ref_hwc_to_chw(const sleapc_tensor *f)
{
    const int64_t h = f->shape[0], w = f->shape[1], c = f->ndim == 3 ? f->shape[2] : 1;
    uint8_t *out = sleapc__malloc((size_t)(h * w * c));
    const uint8_t *src = f->data;
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++)
            for (int64_t k = 0; k < c; k++)
                out[(k * h + y) * w + x] = src[(y * w + x) * c + k];
    return out;
}

/* Float comparison: NaN must meet NaN; otherwise |a - b| is measured and
 * values that differ in any bit are counted. */
typedef struct ref_diff {
    double max_abs;
    int64_t n_diff_bits;
    int64_t n_nan_mismatch;
    int64_t n;
} ref_diff;

static inline void ref_diff_add(ref_diff *d, const float *got, const float *want, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        d->n++;
        const bool gn = isnan(got[i]), wn = isnan(want[i]);
        if (gn || wn) {
            d->n_nan_mismatch += gn != wn;
            continue;
        }
        const double e = fabs((double)got[i] - (double)want[i]);
        if (e > d->max_abs)
            d->max_abs = e;
        d->n_diff_bits += memcmp(&got[i], &want[i], sizeof(float)) != 0;
    }
}

#endif
