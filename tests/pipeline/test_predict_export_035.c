/* sleap-nn 0.3.5's exports through the public predictor (the exported
 * layers over the host interpreter), on every stored case: the instances must
 * be what the layers make of onnxruntime's outputs of the same graph
 * (ort_outputs.npz), judged as test_predict_export judges the 0.3.3 exports
 * (tolerances of ort_cases.h):
 * - single/centered instance and class-vector crops: one instance per frame
 *   with a keypoint, the graph's peaks;
 * - centroid and top-down: one instance per valid slot (top-down: with a
 *   keypoint), in slot order, the graph's centroids and peaks;
 * - bottom-up: every point is one of the graph's valid peaks, and the
 *   instances are sleap-nn 0.3.5's PyTorch pipeline's on the same frames
 *   (predict/bottomup__*__npy_*): same count, each point within the distance
 *   from the reference point to the nearest graph peak of its node (the graph
 *   does no integral refinement);
 * - multi-class bottom-up: every point is a valid graph peak whose best class
 *   is the instance's track, at most one instance per class. The PyTorch
 *   pipeline is no reference here: its class probabilities saturate at 1.0
 *   for several peaks of a node, and which of the tied peaks it keeps follows
 *   its own peak order, not the graph's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "backends/onnx/ort_cases.h"
#include "io/npy/npz_read.h"
#include "sleapc/predictor.h"

#define EXPORTS "sleapnn-0.3.5/exports"
#define PREDICT "sleapnn-0.3.5/predict"

typedef struct arrays {
    sleapc_tensor t[8];
    int n;
} arrays;

static const sleapc_tensor *load(arrays *a, const char *case_dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ort_outputs.npz", case_dir);
    sleapc_tensor *t = &a->t[a->n];
    if (a->n == 8 || sleapc__npz_read(path, name, t) != SLEAPC_OK) {
        CHECK_MSG(false, "%s[%s]: %s", path, name, sleapc_last_error());
        return NULL;
    }
    a->n++;
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

static bool any_point(const float *v, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            return true;
    return false;
}

/* One instance per frame with a keypoint: the graph's (B, N, 2) peaks. */
static void check_instances(const char *id, const sleapc_predictor *p, const char *case_dir)
{
    arrays a = {0};
    const sleapc_tensor *peaks = load(&a, case_dir, "peaks");
    const sleapc_tensor *vals = load(&a, case_dir, "peak_vals");
    if (!peaks || !vals)
        return free_arrays(&a);
    const int64_t B = peaks->shape[0], N = peaks->shape[1];
    for (int64_t b = 0; b < B; b++) {
        const int want = any_point((const float *)peaks->data + b * N * 2, N * 2);
        CHECK_MSG(test_n_instances(p, (int)b) == want, "%s: frame %lld: %d instances", id,
                  (long long)b, test_n_instances(p, (int)b));
        test_instance in;
        if (!want || test_read_instance(p, (int)b, 0, &in) != SLEAPC_OK)
            continue;
        for (int64_t k = 0; k < N; k++) {
            CHECK_MSG(
                near(in.points[2 * k], f32(peaks, (b * N + k) * 2), ORT_COORD_TOL) &&
                    near(in.points[2 * k + 1], f32(peaks, (b * N + k) * 2 + 1), ORT_COORD_TOL),
                "%s: frame %lld node %lld moved", id, (long long)b, (long long)k);
            CHECK(near(in.point_scores[k], f32(vals, b * N + k), ORT_VALUE_TOL));
        }
    }
    printf("%-50s single: points as the graph's\n", id);
    free_arrays(&a);
}

/* Centroids (and top-down peaks): one instance per valid slot, in order. */
static void check_slots(const char *id, const sleapc_predictor *p, const char *case_dir,
                        bool topdown)
{
    arrays a = {0};
    const sleapc_tensor *cen = load(&a, case_dir, "centroids");
    const sleapc_tensor *valid = load(&a, case_dir, "instance_valid");
    const sleapc_tensor *peaks = topdown ? load(&a, case_dir, "peaks") : NULL;
    if (!cen || !valid || (topdown && !peaks))
        return free_arrays(&a);
    const int64_t B = cen->shape[0], I = cen->shape[1], N = test_n_nodes(p);
    int64_t n_inst = 0;
    for (int64_t b = 0; b < B; b++) {
        int got = 0;
        for (int64_t i = 0; i < I; i++) {
            int64_t s = b * I + i;
            const float *pk = topdown ? (const float *)peaks->data + s * N * 2 : NULL;
            if (!u8(valid, s) || (topdown && !any_point(pk, 2 * N)))
                continue;
            test_instance in;
            if (got >= test_n_instances(p, (int)b) ||
                test_read_instance(p, (int)b, got++, &in) != SLEAPC_OK) {
                CHECK_MSG(false, "%s: frame %lld: slot %lld has no instance", id, (long long)b,
                          (long long)i);
                continue;
            }
            CHECK_MSG(in.has_centroid && near(in.centroid[0], f32(cen, 2 * s), ORT_COORD_TOL) &&
                          near(in.centroid[1], f32(cen, 2 * s + 1), ORT_COORD_TOL),
                      "%s: frame %lld slot %lld: centroid", id, (long long)b, (long long)i);
            for (int64_t k = 0; topdown && k < 2 * N; k++)
                CHECK_MSG(near(in.points[k], pk[k], ORT_COORD_TOL),
                          "%s: frame %lld slot %lld: points differ", id, (long long)b,
                          (long long)i);
        }
        CHECK_MSG(test_n_instances(p, (int)b) == got, "%s: frame %lld: %d instances, %d slots", id,
                  (long long)b, test_n_instances(p, (int)b), got);
        n_inst += got;
    }
    printf("%-50s %lld instances, the graph's slots\n", id, (long long)n_inst);
    free_arrays(&a);
}

/* Distance from (x, y) to the nearest valid graph peak of frame b, node n;
 * *best_k: that peak. The peaks are divided by `scale`. */
static double nearest_peak(const sleapc_tensor *peaks, const sleapc_tensor *mask, int64_t b,
                           int64_t n, float scale, float x, float y, int64_t *best_k)
{
    const int64_t N = peaks->shape[1], K = peaks->shape[2];
    double best = INFINITY;
    for (int64_t j = 0; j < K; j++) {
        int64_t i = (b * N + n) * K + j;
        if (!u8(mask, i))
            continue;
        double d = hypot(f32(peaks, 2 * i) / scale - x, f32(peaks, 2 * i + 1) / scale - y);
        if (d < best) {
            best = d;
            if (best_k)
                *best_k = i;
        }
    }
    return best;
}

/* The reference instances of frame `frame` of the PyTorch pipeline's case:
 * (I, N, 2) points, NaN where missing. */
static int ref_instances(const cJSON *expected, int frame, int64_t n_nodes, float *out, int cap)
{
    const cJSON *f;
    cJSON_ArrayForEach(f, cJSON_GetObjectItem(expected, "frames"))
    {
        if (cJSON_GetNumberValue(cJSON_GetObjectItem(f, "frame_idx")) != frame)
            continue;
        int n = 0;
        const cJSON *in;
        cJSON_ArrayForEach(in, cJSON_GetObjectItem(f, "instances"))
        {
            if (n == cap)
                break;
            const cJSON *pts = cJSON_GetObjectItem(in, "points");
            for (int64_t k = 0; k < n_nodes; k++) {
                const cJSON *pt = cJSON_GetArrayItem(pts, (int)k);
                bool has = cJSON_IsArray(pt);
                out[(n * n_nodes + k) * 2] =
                    has ? (float)cJSON_GetNumberValue(cJSON_GetArrayItem(pt, 0)) : NAN;
                out[(n * n_nodes + k) * 2 + 1] =
                    has ? (float)cJSON_GetNumberValue(cJSON_GetArrayItem(pt, 1)) : NAN;
            }
            n++;
        }
        return n;
    }
    return 0;
}

/* Bottom-up: points are graph peaks; instances against the PyTorch pipeline's. */
static void check_grouped(const char *id, const sleapc_predictor *p, const char *case_dir,
                          float scale, const cJSON *expected, int first_frame)
{
    arrays a = {0};
    const sleapc_tensor *peaks = load(&a, case_dir, "peaks");
    const sleapc_tensor *mask = load(&a, case_dir, "peak_mask");
    if (!peaks || !mask || !expected) {
        CHECK_MSG(expected != NULL, "%s: no reference predictions", id);
        return free_arrays(&a);
    }
    const int64_t B = peaks->shape[0], N = peaks->shape[1];
    double worst = 0;
    int n_total = 0;
    for (int64_t b = 0; b < B; b++) {
        const int n_got = test_n_instances(p, (int)b);
        test_instance got[16];
        for (int i = 0; i < n_got && i < 16; i++) {
            CHECK_OK(test_read_instance(p, (int)b, i, &got[i]));
            for (int64_t n = 0; n < N; n++)
                if (!isnan(got[i].points[2 * n]))
                    CHECK_MSG(nearest_peak(peaks, mask, b, n, scale, got[i].points[2 * n],
                                           got[i].points[2 * n + 1], NULL) <= ORT_COORD_TOL,
                              "%s: frame %lld instance %d node %lld is no graph peak", id,
                              (long long)b, i, (long long)n);
        }
        float ref[16 * 2 * TEST_MAX_NODES];
        const int n_ref = ref_instances(expected, first_frame + (int)b, N, ref, 16);
        CHECK_MSG(n_got == n_ref && n_got <= 16, "%s: frame %lld: %d instances, the reference %d",
                  id, (long long)b, n_got, n_ref);
        for (int r = 0; r < n_ref && n_got == n_ref && n_got <= 16; r++) {
            const float *rk = ref + r * N * 2;
            int match = -1;
            double match_d = INFINITY;
            for (int i = 0; i < n_got; i++) {
                double d = 0;
                for (int64_t n = 0; n < N; n++)
                    if (!isnan(rk[2 * n]) && !isnan(got[i].points[2 * n]))
                        d += hypot(got[i].points[2 * n] - rk[2 * n],
                                   got[i].points[2 * n + 1] - rk[2 * n + 1]);
                if (d < match_d) {
                    match_d = d;
                    match = i;
                }
            }
            for (int64_t n = 0; match >= 0 && n < N; n++) {
                if (isnan(rk[2 * n]))
                    continue;
                double bound =
                    nearest_peak(peaks, mask, b, n, scale, rk[2 * n], rk[2 * n + 1], NULL);
                double d = hypot(got[match].points[2 * n] - rk[2 * n],
                                 got[match].points[2 * n + 1] - rk[2 * n + 1]);
                CHECK_MSG(d <= bound + ORT_COORD_TOL,
                          "%s: frame %lld instance %d node %lld: %.3f px from the reference, "
                          "nearest graph peak %.3f px",
                          id, (long long)b, r, (long long)n, d, bound);
                worst = fmax(worst, d);
            }
        }
        n_total += n_got;
    }
    printf("%-50s %d instances, max %.3f px from sleap-nn's PyTorch pipeline\n", id, n_total,
           worst);
    free_arrays(&a);
}

/* Multi-class bottom-up: each point a valid graph peak whose best class is
 * the instance's track; one instance per class at most. */
static void check_classes(const char *id, const sleapc_predictor *p, const char *case_dir)
{
    arrays a = {0};
    const sleapc_tensor *peaks = load(&a, case_dir, "peaks");
    const sleapc_tensor *mask = load(&a, case_dir, "peak_mask");
    const sleapc_tensor *probs = load(&a, case_dir, "class_probs");
    if (!peaks || !mask || !probs)
        return free_arrays(&a);
    const int64_t B = peaks->shape[0], N = peaks->shape[1], C = probs->shape[3];
    int n_total = 0;
    for (int64_t b = 0; b < B; b++) {
        const int n_got = test_n_instances(p, (int)b);
        bool seen[64] = {false};
        CHECK(n_got <= C);
        for (int i = 0; i < n_got; i++) {
            test_instance in;
            CHECK_OK(test_read_instance(p, (int)b, i, &in));
            CHECK_MSG(in.track >= 0 && in.track < C && in.track < 64 && !seen[in.track],
                      "%s: frame %lld: track %d", id, (long long)b, in.track);
            if (in.track < 0 || in.track >= C || in.track >= 64)
                continue;
            seen[in.track] = true;
            for (int64_t n = 0; n < N; n++) {
                if (isnan(in.points[2 * n]))
                    continue;
                int64_t k = -1;
                double d = nearest_peak(peaks, mask, b, n, 1.0f, in.points[2 * n],
                                        in.points[2 * n + 1], &k);
                int64_t best = 0;
                for (int64_t c = 1; k >= 0 && c < C; c++)
                    best = f32(probs, k * C + c) > f32(probs, k * C + best) ? c : best;
                CHECK_MSG(d <= ORT_COORD_TOL && best == in.track,
                          "%s: frame %lld class %d node %lld: %.3f px from a graph peak of best "
                          "class %lld",
                          id, (long long)b, in.track, (long long)n, d, (long long)best);
            }
        }
        n_total += n_got;
    }
    printf("%-50s %d instances, graph peaks of their class\n", id, n_total);
    free_arrays(&a);
}

/* (B, C, H, W) -> (B, H, W, C) frames for the predictor. */
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

/* The PyTorch pipeline's predictions on the frames, for a bottom-up export. */
static cJSON *reference_for(const char *type)
{
    if (strcmp(type, "bottomup") != 0)
        return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/bottomup__centered_pair__npy_f0000-0019/expected.json",
             test_data_path(PREDICT));
    return ort_read_json(path);
}

/* The first frame a case holds: its name ends in _f<first>[-<last>]. */
static int first_frame(const char *case_id)
{
    const char *f = strstr(case_id, "_f");
    return f ? atoi(f + 2) : 0;
}

static void check_case(const char *dir, const char *type, const cJSON *meta, const char *case_id)
{
    char case_dir[4096], path[4200], id[256];
    snprintf(case_dir, sizeof case_dir, "%s/cases/%s", dir, case_id);
    snprintf(id, sizeof id, "%s/%s", type, case_id);
    snprintf(path, sizeof path, "%s/input.npy", case_dir);
    sleapc_tensor x = {0};
    CHECK_OK(sleapc__npy_read(path, &x));
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.backend = "native";
    o.n_threads = 2;
    sleapc_predictor *p = NULL;
    const char *paths[1] = {dir};
    CHECK_MSG(sleapc_predictor_create(paths, 1, &o, &p) == SLEAPC_OK, "%s: %s", id,
              sleapc_last_error());
    sleapc_tensor frames = x.data && x.ndim == 4 ? to_frames(&x) : (sleapc_tensor){0};
    if (p && frames.data && test_run_array(p, &frames) == SLEAPC_OK) {
        float scale = (float)cJSON_GetNumberValue(cJSON_GetObjectItem(meta, "input_scale"));
        if (!strcmp(type, "single_instance") || !strcmp(type, "centered_instance") ||
            !strcmp(type, "multi_class_topdown"))
            check_instances(id, p, case_dir);
        else if (!strcmp(type, "centroid"))
            check_slots(id, p, case_dir, false);
        else if (!strcmp(type, "topdown") || !strcmp(type, "multi_class_topdown_combined"))
            check_slots(id, p, case_dir, true);
        else if (!strcmp(type, "bottomup")) {
            cJSON *ref = reference_for(type);
            check_grouped(id, p, case_dir, scale, ref, first_frame(case_id));
            cJSON_Delete(ref);
        } else if (!strcmp(type, "multi_class_bottomup"))
            check_classes(id, p, case_dir);
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
    char exports[4096];
    snprintf(exports, sizeof exports, "%s", test_data_path(EXPORTS));
    char *names[ORT_MAX_NAMES];
    int n = ort_list_dir(exports, names), n_exports = 0;
    if (n <= 0) {
        printf("skipped: no %s\n", EXPORTS);
        return 77;
    }
    for (int i = 0; i < n; i++) {
        char dir[8192], path[8400];
        snprintf(dir, sizeof dir, "%s/%s", exports, names[i]);
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
    CHECK_MSG(n_exports == 8, "%d exports with model.onnx found, 8 expected", n_exports);
    return test_finish();
}
