/* `sleapc predict` with a box detector as stage 1 of top-down (sleap-nn
 * 0.3.5's BBoxStageLayer): the command of each topdown_bbox__ case of
 * tests/goldens/sleapnn-0.3.5-families (frames 0-19 of the fixture video),
 * its keypoints against the case's expected.json written from sleap-nn's
 * pred.slp: the same instances on the same frames in the same order, points
 * within 0.02 px, point and instance scores within 1e-5. Box-scaled crops
 * (crop_mode: bbox) and fixed crops on the box centres; the models in either
 * order. On native and every other CPU backend built here. Also sleap-nn's
 * refusals (a centroid model with a box-scaled crop model; a box-scaled crop
 * model alone) and its warning for a fixed-crop model behind a detector.
 * On native, the .slp's bboxes/ group (the detections that seeded the
 * crops, each linked to its instance) against sleap-nn's pred.slp. With
 * SLEAPC_TEST_BACKEND=vulkan, the cases on the Vulkan backend alone, frames
 * 0-3 (a software device takes seconds per frame). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "io/h5/h5_file.h"
#include "sleapc/runner.h"
#include "test_util.h"

#define FAMILIES SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
#define VIDEO "sleap-nn-assets/datasets/centered_pair_small.mp4"
#define FIXED_CI "sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"
#define PX_TOL 0.02
#define SCORE_TOL 1e-5

/* Model paths under FAMILIES when they start with "models/", else under the
 * data folder. */
static const struct {
    const char *name, *m1, *m2, *args;
} cases[] = {
    {"topdown_bbox__centernet_bboxcrop", "models/bbox_centernet", "models/centered_instance_bbox",
     "--peak_threshold 0.05"},
    {"topdown_bbox__centernet_fixedcrop", "models/bbox_centernet", FIXED_CI,
     "--peak_threshold 0.05"},
    {"topdown_bbox__ssd_bboxcrop", "models/centered_instance_bbox", "models/bbox_ssd",
     "--peak_threshold 0.1"},
};

static void model_path(const char *m, char *out, size_t cap)
{
    if (strncmp(m, "models/", 7) == 0)
        snprintf(out, cap, "%s/%s", FAMILIES, m);
    else
        snprintf(out, cap, "%s", test_data_path(m));
}

/* NaN (null in either file) or a number. */
static double num(const cJSON *v)
{
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

typedef struct worst {
    double px, score;
    int instances;
} worst;

static void diff(double w, double g, double *worst_d, bool *nan_ok)
{
    if (isnan(w) || isnan(g)) {
        *nan_ok = *nan_ok && isnan(w) && isnan(g);
        return;
    }
    double d = fabs(w - g);
    *worst_d = d > *worst_d ? d : *worst_d;
}

static void compare_instance(const cJSON *w, const cJSON *g, worst *r, const char *where)
{
    bool nan_ok = true;
    const cJSON *wp = cJSON_GetObjectItem(w, "points"), *gp = cJSON_GetObjectItem(g, "points");
    const cJSON *ws = cJSON_GetObjectItem(w, "point_scores");
    const cJSON *gs = cJSON_GetObjectItem(g, "point_scores");
    int n = cJSON_GetArraySize(wp);
    CHECK_MSG(cJSON_GetArraySize(gp) == n, "%s: %d points, want %d", where, cJSON_GetArraySize(gp),
              n);
    for (int i = 0; i < n && i < cJSON_GetArraySize(gp); i++) {
        const cJSON *a = cJSON_GetArrayItem(wp, i), *b = cJSON_GetArrayItem(gp, i);
        for (int k = 0; k < 2; k++)
            diff(num(cJSON_GetArrayItem(a, k)), num(cJSON_GetArrayItem(b, k)), &r->px, &nan_ok);
        /* A point not found has no score to compare (sleap-io stores 0). */
        if (!isnan(num(cJSON_GetArrayItem(a, 0))))
            diff(num(cJSON_GetArrayItem(ws, i)), num(cJSON_GetArrayItem(gs, i)), &r->score,
                 &nan_ok);
    }
    diff(num(cJSON_GetObjectItem(w, "score")), num(cJSON_GetObjectItem(g, "score")), &r->score,
         &nan_ok);
    CHECK_MSG(nan_ok, "%s: a point found by one side only", where);
    r->instances++;
}

static void compare(const cJSON *want, const cJSON *got, int last_frame, worst *r,
                    const char *label)
{
    const cJSON *wf = cJSON_GetObjectItem(want, "frames"), *gf = cJSON_GetObjectItem(got, "frames");
    const cJSON *g = gf ? gf->child : NULL;
    for (const cJSON *f = wf ? wf->child : NULL; f; f = f->next) {
        int idx = (int)num(cJSON_GetObjectItem(f, "frame_idx"));
        const cJSON *wi = cJSON_GetObjectItem(f, "instances");
        /* sleapc writes no frame without instances. */
        if (cJSON_GetArraySize(wi) == 0 || idx > last_frame)
            continue;
        CHECK_MSG(g && (int)num(cJSON_GetObjectItem(g, "frame_idx")) == idx, "%s: frame %d missing",
                  label, idx);
        if (!g || (int)num(cJSON_GetObjectItem(g, "frame_idx")) != idx)
            continue;
        const cJSON *gi = cJSON_GetObjectItem(g, "instances");
        CHECK_MSG(cJSON_GetArraySize(gi) == cJSON_GetArraySize(wi),
                  "%s: frame %d: %d instances, want %d", label, idx, cJSON_GetArraySize(gi),
                  cJSON_GetArraySize(wi));
        for (int i = 0; i < cJSON_GetArraySize(wi) && i < cJSON_GetArraySize(gi); i++) {
            char where[192];
            snprintf(where, sizeof where, "%s: frame %d instance %d", label, idx, i);
            compare_instance(cJSON_GetArrayItem(wi, i), cJSON_GetArrayItem(gi, i), r, where);
        }
        g = g->next;
    }
}

static double *read_f64(sleapc_h5 *f, const char *name, int64_t *n)
{
    void *d = NULL;
    sleapc_h5_info info = {0};
    CHECK_OK(sleapc__h5_read(f, name, SLEAPC_H5_F64, &d, &info));
    *n = d ? info.n_elems : -1;
    return d;
}

/* The boxes of the .slp against sleap-nn's: columns of bboxes/. */
static void check_boxes(int k, const char *m1, const char *m2)
{
    char out[1024], args[4096], ref[1024];
    snprintf(out, sizeof out, "%s/%s.slp", test_tmp_dir(), cases[k].name);
    snprintf(args, sizeof args, "predict -i '%s' --frames 0-19 -m '%s' -m '%s' %s -o '%s' -q",
             test_data_path(VIDEO), m1, m2, cases[k].args, out);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "%s: %s", cases[k].name, test_cli_output());
    snprintf(ref, sizeof ref, "%s/cases/%s/pred.slp", FAMILIES, cases[k].name);
    sleapc_h5 *want = NULL, *got = NULL;
    CHECK_OK(sleapc__h5_open(ref, &want));
    if (!rc)
        CHECK_OK(sleapc__h5_open(out, &got));
    static const char *const cols[] = {"frame_idx", "instance", "x1", "y1", "x2", "y2", "score"};
    for (size_t c = 0; want && got && c < sizeof cols / sizeof cols[0]; c++) {
        char name[64];
        snprintf(name, sizeof name, "bboxes/%s", cols[c]);
        int64_t nw = 0, ng = 0;
        double *w = read_f64(want, name, &nw), *g = read_f64(got, name, &ng);
        CHECK_MSG(nw == ng, "%s: %s has %lld values, sleap-nn's %lld", cases[k].name, name,
                  (long long)ng, (long long)nw);
        double max_d = 0, tol = c < 2 ? 0 : c < 6 ? PX_TOL : SCORE_TOL;
        for (int64_t i = 0; w && g && i < nw && i < ng; i++)
            max_d = fabs(w[i] - g[i]) > max_d ? fabs(w[i] - g[i]) : max_d;
        CHECK_MSG(max_d <= tol, "%s: %s differs by %.3g", cases[k].name, name, max_d);
        if (c == 2)
            printf("%s: %lld boxes, x1 within %.3g px\n", cases[k].name, (long long)ng, max_d);
        sleapc__free(w);
        sleapc__free(g);
    }
    sleapc__h5_close(want);
    sleapc__h5_close(got);
}

static void check_case(int k, const char *backend, int last_frame)
{
    char out[1024], args[4096], ref[1024], m1[1024], m2[1024], label[160];
    snprintf(label, sizeof label, "%s (%s)", cases[k].name, backend);
    snprintf(out, sizeof out, "%s/%s_%s.json", test_tmp_dir(), cases[k].name, backend);
    model_path(cases[k].m1, m1, sizeof m1);
    model_path(cases[k].m2, m2, sizeof m2);
    snprintf(args, sizeof args,
             "predict -i '%s' --frames 0-%d -m '%s' -m '%s' %s --backend %s -o '%s'",
             test_data_path(VIDEO), last_frame, m1, m2, cases[k].args, backend, out);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "%s: %s", label, test_cli_output());
    if (rc)
        return;
    if (strstr(cases[k].name, "fixedcrop"))
        CHECK_MSG(strstr(test_cli_output(), "Crops will be centered on the detected box "
                                            "centers") &&
                      strstr(test_cli_output(), "'center_of_mass' centroid"),
                  "%s: no warning of crops on box centres: %s", label, test_cli_output());
    snprintf(ref, sizeof ref, "%s/cases/%s/expected.json", FAMILIES, cases[k].name);
    cJSON *want = test_load_json(ref), *got = test_load_json(out);
    CHECK_MSG(want && got, "%s: cannot read %s or %s", label, ref, out);
    worst r = {0};
    if (want && got)
        compare(want, got, last_frame, &r, label);
    CHECK_MSG(r.px <= PX_TOL, "%s: points differ by %.3g px", label, r.px);
    CHECK_MSG(r.score <= SCORE_TOL, "%s: scores differ by %.3g", label, r.score);
    printf("%s: %d instances, points within %.3g px, scores within %.3g\n", label, r.instances,
           r.px, r.score);
    cJSON_Delete(want);
    cJSON_Delete(got);
    if (strcmp(backend, "native") == 0)
        check_boxes(k, m1, m2);
}

/* sleap-nn's refusals: a box-scaled crop model behind a centroid model, or
 * alone (sleap-nn's ground-truth boxes of a labels file are not run). */
static void check_refusals(void)
{
    char args[4096], out[1024], video[1024];
    snprintf(out, sizeof out, "%s/refused.json", test_tmp_dir());
    snprintf(video, sizeof video, "%s", test_data_path(VIDEO)); /* its buffer is reused */
    snprintf(args, sizeof args, "predict -i '%s' --frames 0-1 -m '%s' -m '%s' -o '%s' -q", video,
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"),
             FAMILIES "/models/centered_instance_bbox", out);
    CHECK(test_run_cli(args) != 0);
    CHECK_MSG(strstr(test_cli_output(), "must be a bbox_centernet / bbox_ssd detector, not a "
                                        "centroid model"),
              "centroid + box-scaled model: %s", test_cli_output());
    snprintf(args, sizeof args, "predict -i '%s' --frames 0-1 -m '%s' -o '%s' -q",
             test_data_path(VIDEO), FAMILIES "/models/centered_instance_bbox", out);
    CHECK(test_run_cli(args) != 0);
    CHECK_MSG(strstr(test_cli_output(), "crop_mode: bbox") && strstr(test_cli_output(), "detector"),
              "box-scaled model alone: %s", test_cli_output());
}

int main(void)
{
    test_require_data();
    const char *only = getenv("SLEAPC_TEST_BACKEND");
    if (only && strcmp(only, "vulkan") == 0) {
        bool found = false;
        for (int i = 0; i < sleapc_backend_count(); i++)
            found |= strcmp(sleapc_backend_name(i), "vulkan") == 0 && sleapc_backend_available(i);
        if (!found) {
            printf("skipped: no usable Vulkan device\n");
            return 77;
        }
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            check_case((int)k, "vulkan", 3);
        return test_finish();
    }
    check_refusals();
    /* Native, then every other CPU backend built and usable here (the ONNX
     * backend runs exports only; Vulkan has its own tests). */
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        check_case((int)k, "native", 19);
    for (int i = 0; i < sleapc_backend_count(); i++) {
        const char *name = sleapc_backend_name(i);
        if (strcmp(name, "native") == 0 || strcmp(name, "onnx") == 0 ||
            strcmp(name, "vulkan") == 0 || !sleapc_backend_available(i))
            continue;
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            check_case((int)k, name, 19);
    }
    return test_finish();
}
