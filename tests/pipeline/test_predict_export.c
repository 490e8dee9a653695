/* The exported layers (sleap-nn inference/layers/exported.py) through the
 * public predictor, on every stored case of every export's model.onnx
 * (sanitizer build: the first case of each). The graph's own outputs are
 * onnxruntime's (ort.*.npy, test_cli_export); here the layers must turn them
 * into instances as sleap-nn's adapters do:
 * - single/centered instance and class-vector crops: one instance per frame,
 *   the graph's peaks, score = NaN-ignoring sum of the peak values, and for
 *   crops the best class as track;
 * - centroid and top-down: one instance per valid slot, in slot order;
 * - bottom-up: every point is one of the graph's valid peaks (÷ input
 *   scale), and the instances are the reference pipeline's (same count, each
 *   point within the distance between the reference point and the nearest
 *   graph peak of its node: the graphs do no refinement);
 * - multi-class bottom-up: the same per class slot, with the points as the
 *   graph gives them (sleap-nn's second division by input_scale is not
 *   copied; see the layer).
 * Tolerances are ort_cases.h's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/onnx/ort_cases.h"
#include "sleapc/predictor.h"

typedef struct arrays {
    sleapc_tensor t[8];
    const char *names[8];
    int n;
} arrays;

static const sleapc_tensor *load(arrays *a, const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", dir, name);
    sleapc_tensor *t = &a->t[a->n];
    if (sleapc__npy_read(path, t) != SLEAPC_OK) {
        CHECK_MSG(false, "%s: %s", path, sleapc_last_error());
        return NULL;
    }
    a->names[a->n++] = name;
    return t;
}

static void free_arrays(arrays *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->t[i].data);
    a->n = 0;
}

static float f32(const sleapc_tensor *t, int64_t i)
{
    return ((const float *)t->data)[i];
}

static bool u8(const sleapc_tensor *t, int64_t i)
{
    return ((const uint8_t *)t->data)[i] != 0;
}

static bool near(float a, float b, double tol)
{
    return (isnan(a) && isnan(b)) || fabs((double)a - (double)b) <= tol;
}

/* Whether n floats hold a number: sleap-nn's packaging skips an instance
 * whose every point is NaN (outputs.py to_instances). */
static bool any_point(const float *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            return true;
    return false;
}

static float nansum(const float *v, int64_t n)
{
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++)
        s += isnan(v[i]) ? 0.0f : v[i];
    return s;
}

/* One instance per frame: the graph's (B, N, 2) peaks. */
static void check_instances(const char *id, const sleapc_predictor *p, const char *case_dir,
                            bool classes)
{
    arrays a = {0};
    const sleapc_tensor *peaks = load(&a, case_dir, "ort.peaks");
    const sleapc_tensor *vals = load(&a, case_dir, "ort.peak_vals");
    const sleapc_tensor *cls = classes ? load(&a, case_dir, "ort.class_logits") : NULL;
    if (!peaks || !vals || (classes && !cls))
        return free_arrays(&a);
    const int64_t B = peaks->shape[0], N = peaks->shape[1];
    CHECK_MSG(sleapc_predictor_n_frames(p) == B, "%s: %d frames", id, sleapc_predictor_n_frames(p));
    for (int64_t b = 0; b < B && b < sleapc_predictor_n_frames(p); b++) {
        const int want = any_point((const float *)peaks->data + b * N * 2, N * 2);
        CHECK_MSG(test_n_instances(p, (int)b) == want, "%s: frame %lld: %d instances", id,
                  (long long)b, test_n_instances(p, (int)b));
        test_instance in;
        if (!want || test_read_instance(p, (int)b, 0, &in) != SLEAPC_OK)
            continue;
        for (int64_t k = 0; k < N; k++) {
            CHECK_MSG(near(in.points[2 * k], f32(peaks, (b * N + k) * 2), ORT_COORD_TOL) &&
                          near(in.points[2 * k + 1], f32(peaks, (b * N + k) * 2 + 1), ORT_COORD_TOL),
                      "%s: frame %lld node %lld moved", id, (long long)b, (long long)k);
            CHECK(near(in.point_scores[k], f32(vals, b * N + k), ORT_VALUE_TOL));
        }
        CHECK_MSG(near(in.score, nansum((const float *)vals->data + b * N, N), N * ORT_VALUE_TOL),
                  "%s: score %g", id, in.score);
        if (cls) {
            const int64_t C = cls->shape[1];
            int64_t best = 0;
            for (int64_t k = 1; k < C; k++)
                best = f32(cls, b * C + k) > f32(cls, b * C + best) ? k : best;
            CHECK_MSG(in.track == best, "%s: frame %lld: class %d, expected %lld", id, (long long)b,
                      in.track, (long long)best);
        }
    }
    free_arrays(&a);
}

/* Centroids (and top-down peaks): one instance per valid slot, in order. */
static void check_slots(const char *id, const sleapc_predictor *p, const char *case_dir,
                        bool topdown, int anchor)
{
    arrays a = {0};
    const sleapc_tensor *cen = load(&a, case_dir, "ort.centroids");
    const sleapc_tensor *cv = load(&a, case_dir, "ort.centroid_vals");
    const sleapc_tensor *valid = load(&a, case_dir, "ort.instance_valid");
    const sleapc_tensor *peaks = topdown ? load(&a, case_dir, "ort.peaks") : NULL;
    if (!cen || !cv || !valid || (topdown && !peaks))
        return free_arrays(&a);
    const int64_t I = cen->shape[1], N = test_n_nodes(p);
    /* Valid slots; top-down ones also need a point. */
    bool kept[256] = {false};
    int64_t want = 0;
    for (int64_t i = 0; i < I && i < 256; i++) {
        kept[i] = u8(valid, i) && (!topdown || any_point((const float *)peaks->data + i * N * 2, 2 * N));
        want += kept[i];
    }
    CHECK_MSG(want > 0 && test_n_instances(p, 0) == want, "%s: %d instances, %lld valid", id,
              test_n_instances(p, 0), (long long)want);
    int got = 0;
    for (int64_t i = 0; i < I && i < 256 && got < test_n_instances(p, 0); i++) {
        if (!kept[i])
            continue;
        test_instance in;
        if (test_read_instance(p, 0, got++, &in) != SLEAPC_OK)
            continue;
        const float x = f32(cen, 2 * i), y = f32(cen, 2 * i + 1);
        CHECK_MSG(in.has_centroid && near(in.centroid[0], x, ORT_COORD_TOL) &&
                      near(in.centroid[1], y, ORT_COORD_TOL),
                  "%s: slot %lld: centroid", id, (long long)i);
        if (!topdown) {
            CHECK(near(in.points[2 * anchor], x, ORT_COORD_TOL) &&
                  near(in.points[2 * anchor + 1], y, ORT_COORD_TOL));
            CHECK(near(in.score, f32(cv, i), ORT_VALUE_TOL));
            continue;
        }
        for (int64_t k = 0; k < 2 * N; k++)
            CHECK_MSG(near(in.points[k], f32(peaks, i * N * 2 + k), ORT_COORD_TOL),
                      "%s: slot %lld: points differ", id, (long long)i);
    }
    free_arrays(&a);
}

/* Distance from (x, y) to the nearest valid graph peak of node n, the peaks
 * divided by `scale`. */
static double nearest_peak(const sleapc_tensor *peaks, const sleapc_tensor *mask, int64_t n,
                           float scale, float x, float y)
{
    const int64_t k = peaks->shape[2];
    double best = INFINITY;
    for (int64_t j = 0; j < k; j++) {
        if (!u8(mask, n * k + j))
            continue;
        double dx = f32(peaks, (n * k + j) * 2) / scale - x, dy = f32(peaks, (n * k + j) * 2 + 1) / scale - y;
        best = fmin(best, sqrt(dx * dx + dy * dy));
    }
    return best;
}

/* Bottom-up (class_slots false: instances matched to the reference's by
 * nearest mean; true: slot = class = track). */
static void check_grouped(const char *id, const sleapc_predictor *p, const char *case_dir,
                          const char *ref_dir, float scale, bool class_slots, bool same_threshold)
{
    arrays a = {0};
    const sleapc_tensor *peaks = load(&a, case_dir, "ort.peaks");
    const sleapc_tensor *mask = load(&a, case_dir, "ort.peak_mask");
    const sleapc_tensor *ref = load(&a, ref_dir, "out.pred_keypoints");
    if (!peaks || !mask || !ref)
        return free_arrays(&a);
    const int64_t N = peaks->shape[1], I = ref->shape[1];
    const int n_got = test_n_instances(p, 0);
    /* Every predicted point is a graph peak. */
    for (int i = 0; i < n_got; i++) {
        test_instance in;
        CHECK_OK(test_read_instance(p, 0, i, &in));
        for (int64_t n = 0; n < N; n++)
            if (!isnan(in.points[2 * n]))
                CHECK_MSG(nearest_peak(peaks, mask, n, scale, in.points[2 * n],
                                       in.points[2 * n + 1]) <= ORT_COORD_TOL,
                          "%s: instance %d node %lld is no graph peak", id, i, (long long)n);
    }
    if (!same_threshold) {
        printf("%-45s %d instances (reference ran another threshold)\n", id, n_got);
        return free_arrays(&a);
    }
    int n_ref = 0;
    double worst = 0;
    for (int64_t r = 0; r < I; r++) {
        const float *rk = (const float *)ref->data + r * N * 2;
        if (!any_point(rk, 2 * N))
            continue;
        n_ref++;
        /* The predicted instance standing for reference instance r. */
        int match = -1;
        double match_d = INFINITY;
        for (int i = 0; i < n_got; i++) {
            test_instance in;
            CHECK_OK(test_read_instance(p, 0, i, &in));
            if (class_slots && in.track != r)
                continue;
            double d = 0;
            for (int64_t n = 0; n < N; n++)
                if (!isnan(rk[2 * n]) && !isnan(in.points[2 * n]))
                    d += hypot(in.points[2 * n] - rk[2 * n], in.points[2 * n + 1] - rk[2 * n + 1]);
            if (d < match_d) {
                match_d = d;
                match = i;
            }
        }
        CHECK_MSG(match >= 0, "%s: reference instance %lld has no counterpart", id, (long long)r);
        if (match < 0)
            continue;
        test_instance in;
        CHECK_OK(test_read_instance(p, 0, match, &in));
        for (int64_t n = 0; n < N; n++) {
            if (isnan(rk[2 * n]))
                continue;
            double bound = nearest_peak(peaks, mask, n, scale, rk[2 * n], rk[2 * n + 1]);
            double d = hypot(in.points[2 * n] - rk[2 * n], in.points[2 * n + 1] - rk[2 * n + 1]);
            CHECK_MSG(d <= bound + ORT_COORD_TOL,
                      "%s: instance %lld node %lld: %.3f px from the reference, nearest graph "
                      "peak %.3f px",
                      id, (long long)r, (long long)n, d, bound);
            worst = fmax(worst, d);
        }
    }
    CHECK_MSG(n_got == n_ref, "%s: %d instances, the reference has %d", id, n_got, n_ref);
    printf("%-45s %d instances, max %.3f px from the reference\n", id, n_got, worst);
    free_arrays(&a);
}

/* Valid slots with keypoints: what the combined multi-class layer keeps. */
static void check_combined(const char *id, const sleapc_predictor *p, const char *case_dir)
{
    arrays a = {0};
    const sleapc_tensor *valid = load(&a, case_dir, "ort.instance_valid");
    const sleapc_tensor *peaks = load(&a, case_dir, "ort.peaks");
    if (!valid || !peaks)
        return free_arrays(&a);
    const int64_t I = peaks->shape[1], N = peaks->shape[2];
    int want = 0;
    for (int64_t i = 0; i < I; i++)
        want += u8(valid, i) && any_point((const float *)peaks->data + i * N * 2, 2 * N);
    CHECK_MSG(test_n_instances(p, 0) == want, "%s: %d instances, %d expected", id,
              test_n_instances(p, 0), want);
    free_arrays(&a);
}

/* (1 or B, C, H, W) -> (B, H, W, C) frames for the predictor. */
static sleapc_tensor to_frames(const sleapc_tensor *x)
{
    const int64_t B = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
    sleapc_tensor f = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {B, H, W, C}};
    f.data = malloc((size_t)(B * C * H * W));
    const uint8_t *s = x->data;
    uint8_t *d = f.data;
    for (int64_t b = 0; d && b < B; b++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < H * W; i++)
                d[((b * H * W) + i) * C + c] = s[(b * C + c) * H * W + i];
    return f;
}

/* ExportedCentroidLayer's anchor: anchor_part in node_names, else node 0. */
static int anchor_index(const cJSON *meta)
{
    const char *part = cJSON_GetStringValue(cJSON_GetObjectItem(meta, "anchor_part"));
    const cJSON *names = cJSON_GetObjectItem(meta, "node_names");
    for (int i = 0; part && i < cJSON_GetArraySize(names); i++)
        if (strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(names, i)), part) == 0)
            return i;
    return 0;
}

static double ref_threshold(const char *ref_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.json", ref_dir);
    cJSON *m = ort_read_json(path);
    const cJSON *pp = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "pipeline"), "postprocess");
    double t = cJSON_GetNumberValue(cJSON_GetObjectItem(pp, "peak_threshold"));
    cJSON_Delete(m);
    return t;
}

static void check_case(const char *dir, const char *type, const cJSON *meta, const char *id)
{
    char case_dir[4096], ref_dir[4096], path[4200];
    snprintf(case_dir, sizeof case_dir, "%s/cases/%s", dir, id);
    snprintf(ref_dir, sizeof ref_dir, "%s/%s", test_data_path("reference"), id);
    snprintf(path, sizeof path, "%s/input.npy", case_dir);
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(path, &x));
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.backend = "native";
    o.n_threads = 2;
    sleapc_predictor *p = NULL;
    const char *paths[1] = {dir};
    CHECK_OK(sleapc_predictor_create(paths, 1, &o, &p));
    sleapc_tensor frames = x.data && x.ndim == 4 ? to_frames(&x) : (sleapc_tensor){0};
    if (p && frames.data && test_run_array(p, &frames) == SLEAPC_OK) {
        float scale = (float)cJSON_GetNumberValue(cJSON_GetObjectItem(meta, "input_scale"));
        double thr = cJSON_GetNumberValue(cJSON_GetObjectItem(meta, "peak_threshold"));
        if (!strcmp(type, "single_instance") || !strcmp(type, "centered_instance"))
            check_instances(id, p, case_dir, false);
        else if (!strcmp(type, "multi_class_topdown"))
            check_instances(id, p, case_dir, true);
        else if (!strcmp(type, "centroid"))
            check_slots(id, p, case_dir, false, anchor_index(meta));
        else if (!strcmp(type, "topdown"))
            check_slots(id, p, case_dir, true, 0);
        else if (!strcmp(type, "multi_class_topdown_combined"))
            check_combined(id, p, case_dir);
        else if (!strcmp(type, "bottomup"))
            check_grouped(id, p, case_dir, ref_dir, scale, false, ref_threshold(ref_dir) == thr);
        else if (!strcmp(type, "multi_class_bottomup"))
            check_grouped(id, p, case_dir, ref_dir, 1.0f, true, ref_threshold(ref_dir) == thr);
        else
            CHECK_MSG(false, "%s: model type %s has no check", id, type);
    } else {
        CHECK_MSG(false, "%s: %s", id, sleapc_last_error());
    }
    sleapc_predictor_destroy(p);
    free(frames.data);
    free(x.data);
}

int main(void)
{
    test_require_data();
    char *names[ORT_MAX_NAMES];
    char onnx[4096];
    snprintf(onnx, sizeof onnx, "%s", test_data_path("onnx"));
    int n = ort_list_dir(onnx, names), n_exports = 0;
    for (int i = 0; i < n; i++) {
        char dir[8192], path[8400];
        snprintf(dir, sizeof dir, "%s/%s", onnx, names[i]);
        snprintf(path, sizeof path, "%s/export_metadata.json", dir);
        cJSON *meta = ort_read_json(path);
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(meta, "model_type"));
        snprintf(path, sizeof path, "%s/model.onnx", dir);
        struct stat st;
        if (type && stat(path, &st) == 0) {
            n_exports++;
            char *cases[ORT_MAX_NAMES];
            snprintf(path, sizeof path, "%s/cases", dir);
            int n_cases = ort_list_dir(path, cases);
            for (int c = 0; c < n_cases; c++) {
#ifdef SLEAPC_SANITIZED
                if (c == 0)
#endif
                    check_case(dir, type, meta, cases[c]);
                free(cases[c]);
            }
        }
        cJSON_Delete(meta);
        free(names[i]);
    }
    CHECK_MSG(n_exports >= 8, "only %d exports with model.onnx found", n_exports);
    return test_finish();
}
