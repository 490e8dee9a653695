/* Tiled single-instance models end to end, against sleap-nn's own
 * intermediates and outputs of every reference-tiled case, on the predictor
 * (each backend compiled in) and through `sleapc predict`.
 *
 * Checked at every step of the tiled layer, on its real data path:
 * - the scaled frame, the tile origins and every tile handed to the backend:
 *   exact (uint8 and integer arithmetic);
 * - the tiles per backend call: sleap-nn's calls (the last one of a frame is
 *   padded here, its extra tiles dropped; see layers/tiled.c);
 * - each tile's head map: relative L2 <= 1e-4, the network tolerance of every
 *   reference test (float32 summation order);
 * - the window: 3 float32 ulps relative (Torch's expf is Sleef's, 1 ulp);
 *   the weight canvas: 6 ulps relative (a sum of at most four windows);
 * - the stitched map: a weighted average of the tiles' maps with positive
 *   weights, so its error is at most the largest error of the head maps that
 *   went into it, plus float32 rounding of the sums (16 ulps of the map's
 *   largest value) — the bound is taken from this very run's head errors;
 * - keypoints: 0.02 px; peak values: 1e-4 relative.
 * The other backends run each frame once; the sanitizer build runs the
 * native backend and one case through the CLI.
 *
 * SLEAPC_TEST_BACKEND=NAME checks that backend alone, a software device
 * included (ctest's test_predict_tiled_vulkan on lavapipe, about 1 GFLOP/s):
 * every frame once, or unless SLEAPC_TEST_FULL is set only the small_robot
 * cases (8 tiles of 96 px, 0.4 GFLOP a frame; a centered_pair frame is 16
 * tiles of 144 px, 7 GFLOP). */
#include <float.h>

#define REF_DIR "reference-tiled"
#include "../layers/ops_ref_cases.h"
#include "backends/backend.h"
#include "layers/tiled.h"
#include "pipeline/predictor_impl.h"

#define PX_TOL 0.02
#define REL_TOL 1e-4
#define HEAD_REL_L2 1e-4

typedef struct probe_state {
    const char *id;
    const sleapc_tensor *input, *heads;
    int64_t calls[64];
    int n_calls;
    int64_t bad_inputs;
    double worst_rel_l2, head_max_abs;
} probe_state;

static int n_checked;

static void on_tiles(void *ctx, int64_t first, int64_t n, const uint8_t *input, const float *head)
{
    probe_state *ps = ctx;
    if (ps->n_calls < 64)
        ps->calls[ps->n_calls++] = n;
    const int64_t *is = ps->input->shape, *hs = ps->heads->shape;
    const size_t tile_bytes = (size_t)(is[2] * is[3] * is[4]);
    const int64_t map = hs[1] * hs[2] * hs[3];
    for (int64_t k = 0; k < n && first + k < is[0]; k++) {
        ps->bad_inputs +=
            memcmp(input + k * tile_bytes, (uint8_t *)ps->input->data + (first + k) * tile_bytes,
                   tile_bytes) != 0;
        const float *got = head + k * map, *want = (float *)ps->heads->data + (first + k) * map;
        double num = 0, den = 0;
        for (int64_t q = 0; q < map; q++) {
            const double d = (double)got[q] - want[q];
            num += d * d;
            den += (double)want[q] * want[q];
            ps->head_max_abs = fmax(ps->head_max_abs, fabs(d));
        }
        ps->worst_rel_l2 = fmax(ps->worst_rel_l2, sqrt(num / fmax(den, 1e-30)));
    }
}

static double max_rel(const float *got, const float *want, int64_t n)
{
    double worst = 0;
    for (int64_t i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)got[i] - want[i]) / fabs((double)want[i]));
    return worst;
}

static void check_view(const char *id, const sleapc_tiled_view *v, const cJSON *m,
                       const probe_state *ps, const sleapc_tensor *frame)
{
    sleapc_tensor origins = {0}, window = {0}, cnt = {0}, stitched = {0}, scaled = {0};
    if (!ref_load(id, "tiled.tile_origins", &origins) || !ref_load(id, "tiled.window", &window) ||
        !ref_load(id, "tiled.cnt", &cnt) || !ref_load(id, "out.pred_confmaps", &stitched))
        goto done;
    uint8_t *chw = ref_hwc_to_chw(frame);
    const uint8_t *want_scaled = chw;
    if (ref_has(id, "tiled.scaled_frame") && ref_load(id, "tiled.scaled_frame", &scaled))
        want_scaled = scaled.data;
    const cJSON *hw = ref_obj(ref_obj(m, "tiling"), "scaled_frame_hw");
    CHECK(v->scaled_h == (int64_t)cJSON_GetArrayItem(hw, 0)->valuedouble &&
          v->scaled_w == (int64_t)cJSON_GetArrayItem(hw, 1)->valuedouble);
    CHECK_MSG(memcmp(v->scaled, want_scaled, (size_t)(v->c * v->scaled_h * v->scaled_w)) == 0,
              "%s: scaled frame differs", id);
    sleapc__free(chw);

    CHECK(v->n_tiles == origins.shape[0]);
    const int32_t *o = origins.data;
    int64_t bad = 0;
    for (int64_t k = 0; k < v->n_tiles && v->n_tiles == origins.shape[0]; k++)
        bad += v->origins[2 * k] != o[2 * k] || v->origins[2 * k + 1] != o[2 * k + 1];
    CHECK_MSG(bad == 0, "%s: %lld tile origins differ", id, (long long)bad);

    /* sleap-nn's backend calls: tile counts per call. */
    const cJSON *calls = ref_obj(ref_obj(m, "tiling"), "backend_call_batch_sizes");
    CHECK_MSG(ps->n_calls == cJSON_GetArraySize(calls), "%s: %d backend calls, want %d", id,
              ps->n_calls, cJSON_GetArraySize(calls));
    for (int i = 0; i < ps->n_calls && i < cJSON_GetArraySize(calls); i++)
        CHECK(ps->calls[i] == (int64_t)cJSON_GetArrayItem(calls, i)->valuedouble);
    CHECK_MSG(ps->bad_inputs == 0, "%s: %lld tile inputs differ", id, (long long)ps->bad_inputs);
    CHECK_MSG(ps->worst_rel_l2 <= HEAD_REL_L2, "%s: tile head maps: relative L2 %.3g", id,
              ps->worst_rel_l2);

    CHECK(v->map_tile == window.shape[0]);
    if (v->map_tile == window.shape[0]) {
        const double e = max_rel(v->window, window.data, v->map_tile * v->map_tile);
        CHECK_MSG(e <= 3 * FLT_EPSILON, "%s: window: relative error %.3g", id, e);
    }
    CHECK(v->canvas_h == cnt.shape[1] && v->canvas_w == cnt.shape[2]);
    if (v->canvas_h == cnt.shape[1] && v->canvas_w == cnt.shape[2]) {
        const double e = max_rel(v->cnt, cnt.data, v->canvas_h * v->canvas_w);
        CHECK_MSG(e <= 6 * FLT_EPSILON, "%s: weight canvas: relative error %.3g", id, e);
    }
    const int64_t n = stitched.shape[1] * stitched.shape[2] * stitched.shape[3];
    CHECK(v->n_nodes == stitched.shape[1] && v->map_h == stitched.shape[2] &&
          v->map_w == stitched.shape[3]);
    if (v->n_nodes * v->map_h * v->map_w == n) {
        double worst = 0, peak = 0;
        const float *want = stitched.data;
        for (int64_t i = 0; i < n; i++) {
            worst = fmax(worst, fabs((double)v->stitched[i] - want[i]));
            peak = fmax(peak, fabs((double)want[i]));
        }
        const double tol = ps->head_max_abs + 16 * FLT_EPSILON * peak;
        printf("%-50s stitched map: max error %.3g (head maps %.3g, bound %.3g)\n", id, worst,
               ps->head_max_abs, tol);
        CHECK_MSG(worst <= tol, "%s: stitched map: max error %.3g > %.3g", id, worst, tol);
    }
done:
    sleapc__free(origins.data);
    sleapc__free(window.data);
    sleapc__free(cnt.data);
    sleapc__free(stitched.data);
    sleapc__free(scaled.data);
}

static void check_points(const char *id, const sleapc_layer_outputs *o, int64_t frame,
                         const char *backend)
{
    sleapc_tensor kp = {0}, pv = {0};
    if (ref_load(id, "out.pred_keypoints", &kp) && ref_load(id, "out.pred_peak_values", &pv)) {
        const int64_t N = kp.shape[2];
        CHECK(o->n_slots == 1 && o->n_nodes == N);
        const float *want = kp.data, *wv = pv.data;
        const float *got = o->keypoints + frame * N * 2, *gv = o->peak_values + frame * N;
        double worst = 0, worst_v = 0;
        for (int64_t j = 0; j < 2 * N && o->n_nodes == N; j++)
            worst =
                fmax(worst, isnan(got[j]) != isnan(want[j]) ? INFINITY : fabs(got[j] - want[j]));
        for (int64_t j = 0; j < N && o->n_nodes == N; j++)
            worst_v = fmax(worst_v, fabs(gv[j] - wv[j]) / fmax(1.0, fabs(wv[j])));
        printf("%-50s %-8s keypoints %.4f px, peak values %.2g\n", id, backend, worst, worst_v);
        CHECK_MSG(worst <= PX_TOL, "%s %s: keypoints off by %.4f px", id, backend, worst);
        CHECK_MSG(worst_v <= REL_TOL, "%s %s: peak values off by %.3g", id, backend, worst_v);
    }
    sleapc__free(kp.data);
    sleapc__free(pv.data);
}

static void model_dir(const cJSON *m, char *out, size_t cap)
{
    const char *rel = cJSON_GetStringValue(cJSON_GetArrayItem(ref_obj(m, "model_dirs"), 0));
    snprintf(out, cap, "%s", rel ? test_data_path(rel + strlen("shared/data/")) : "");
}

static sleapc_predictor_opts case_opts(const cJSON *m, const char *backend)
{
    const cJSON *pc = ref_obj(m, "predict_call");
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.n_threads = 2;
    o.backend = backend;
    o.peak_threshold = ref_num(pc, "peak_threshold", 0.2);
    o.integral_refinement = true;
    o.integral_patch_size = (int)ref_num(pc, "integral_patch_size", 5);
    return o;
}

/* batch_two: also run the frame twice in one batch. */
static void check_case(const char *id, const char *backend, bool batch_two)
{
    cJSON *m = ref_manifest(id);
    char dir[2048];
    sleapc_tensor frame = {0}, input = {0}, heads = {0};
    if (!m || !ref_load(id, "frame", &frame) || !ref_load(id, "single_instance.input", &input) ||
        !ref_load(id, "single_instance.head.SingleInstanceConfmapsHead", &heads))
        goto done;
    model_dir(m, dir, sizeof dir);
    const char *paths[1] = {dir};
    sleapc_predictor_opts o = case_opts(m, backend);
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(paths, 1, &o, &p));
    if (!p)
        goto done;
    CHECK(strcmp(p->layer->ops->name, "TiledLayer") == 0);
    probe_state ps = {.id = id, .input = &input, .heads = &heads};
    CHECK_OK(sleapc__tiled_layer_set_probe(p->layer, on_tiles, &ps));
    CHECK_OK(test_run_array(p, &frame));
    check_points(id, &p->outputs, 0, backend);
    sleapc_tiled_view v;
    CHECK_OK(sleapc__tiled_layer_view(p->layer, &v));
    check_view(id, &v, m, &ps, &frame);

    /* Two frames in one batch: each is tiled alone, as sleap-nn does. */
    if (batch_two) {
        sleapc__tiled_layer_set_probe(p->layer, NULL, NULL);
        const int64_t px = sleapc_tensor_numel(&frame);
        sleapc_tensor two = {
            .dtype = SLEAPC_DTYPE_U8,
            .ndim = 4,
            .shape = {2, frame.shape[0], frame.shape[1], frame.ndim == 3 ? frame.shape[2] : 1}};
        two.data = sleapc__malloc((size_t)px * 2);
        memcpy(two.data, frame.data, (size_t)px);
        memcpy((uint8_t *)two.data + px, frame.data, (size_t)px);
        CHECK_OK(test_run_array(p, &two));
        check_points(id, &p->outputs, 0, backend);
        check_points(id, &p->outputs, 1, backend);
        sleapc__free(two.data);
    }
    n_checked++;
    sleapc_predictor_destroy(p);
done:
    sleapc__free(frame.data);
    sleapc__free(input.data);
    sleapc__free(heads.data);
    cJSON_Delete(m);
}

/* A frame smaller than a tile: one zero-padded tile on a tile-sized canvas,
 * cropped to the frame's map. With one tile ACC / CNT = (map * w) / w, the
 * tile's own map to 2 float32 roundings. */
typedef struct one_tile {
    float *head;
    int64_t n, calls;
} one_tile;

static void keep_head(void *ctx, int64_t first, int64_t n, const uint8_t *input, const float *head)
{
    one_tile *o = ctx;
    (void)first;
    (void)input;
    o->calls++;
    if (n == 1 && o->head)
        memcpy(o->head, head, (size_t)o->n * sizeof(float));
}

static void check_small_frame(const char *id)
{
    cJSON *m = ref_manifest(id);
    sleapc_tensor frame = {0};
    if (!m || !ref_load(id, "frame", &frame) || frame.shape[0] < 51 || frame.shape[1] < 71)
        goto done;
    const int64_t c = frame.ndim == 3 ? frame.shape[2] : 1, w0 = frame.shape[1];
    sleapc_tensor crop = {.dtype = SLEAPC_DTYPE_U8, .ndim = 3, .shape = {51, 71, c}};
    crop.data = sleapc__malloc((size_t)(51 * 71 * c));
    for (int64_t y = 0; y < 51; y++)
        memcpy((uint8_t *)crop.data + y * 71 * c, (uint8_t *)frame.data + y * w0 * c,
               (size_t)(71 * c));
    char dir[2048];
    model_dir(m, dir, sizeof dir);
    const char *paths[1] = {dir};
    sleapc_predictor_opts o = case_opts(m, "native");
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(paths, 1, &o, &p));
    sleapc_tiled_view v;
    if (p && test_run_array(p, &crop) == SLEAPC_OK &&
        sleapc__tiled_layer_view(p->layer, &v) == SLEAPC_OK) {
        CHECK(v.n_tiles == 1 && v.origins[0] == 0 && v.origins[1] == 0);
        const int64_t mt = v.map_tile, n = v.n_nodes;
        CHECK(v.canvas_h == mt && v.canvas_w == mt);
        CHECK(v.scaled_h == 51 + 51 % v.stride && v.map_h == v.scaled_h / v.stride);
        one_tile ot = {.head = sleapc__malloc((size_t)(n * mt * mt) * sizeof(float)),
                       .n = n * mt * mt};
        sleapc__tiled_layer_set_probe(p->layer, keep_head, &ot);
        CHECK_OK(test_run_array(p, &crop));
        CHECK(ot.calls == 1);
        double worst = 0;
        for (int64_t k = 0; k < n; k++)
            for (int64_t y = 0; y < v.map_h; y++)
                for (int64_t x = 0; x < v.map_w; x++) {
                    const double a = v.stitched[(k * v.map_h + y) * v.map_w + x];
                    const double b = ot.head[(k * mt + y) * mt + x];
                    worst = fmax(worst, fabs(a - b) / fmax(fabs(b), FLT_MIN));
                }
        CHECK_MSG(worst <= 2 * FLT_EPSILON, "%s small frame: stitched vs tile map %.3g", id, worst);
        const sleapc_layer_outputs *out = &p->outputs;
        for (int64_t k = 0; k < n; k++) {
            const float *xy = out->keypoints + k * 2;
            CHECK(isnan(xy[0]) || (xy[0] >= 0 && xy[0] <= 71 && xy[1] >= 0 && xy[1] <= 51));
        }
        sleapc__free(ot.head);
    }
    CHECK(p != NULL);
    sleapc_predictor_destroy(p);
    sleapc__free(crop.data);
done:
    sleapc__free(frame.data);
    cJSON_Delete(m);
}

/* `sleapc predict` on the stored frame writes sleap-nn's keypoints. */
static void check_cli(const char *id)
{
    cJSON *m = ref_manifest(id);
    sleapc_tensor kp = {0};
    if (!m || !ref_load(id, "out.pred_keypoints", &kp))
        goto done;
    char dir[2048], out_path[1024], args[8192];
    model_dir(m, dir, sizeof dir);
    snprintf(out_path, sizeof out_path, "%s/%s.json", test_tmp_dir(), id);
    snprintf(args, sizeof args, "predict -m '%s' -i '%s' -o '%s' --threads 2 --backend native --compat 0.3.3", dir,
             ref_path(id, "frame.npy"), out_path);
    int rc = test_run_cli(args);
    CHECK_MSG(rc == 0, "%s: exit %d: %s", id, rc, test_cli_output());
    size_t size = 0;
    unsigned char *text = test_read_file(out_path, &size);
    cJSON *j = text ? cJSON_ParseWithLength((const char *)text, size) : NULL;
    free(text);
    const cJSON *inst =
        cJSON_GetArrayItem(ref_obj(cJSON_GetArrayItem(ref_obj(j, "frames"), 0), "instances"), 0);
    const cJSON *pts = ref_obj(inst, "points");
    const int64_t N = kp.shape[2];
    CHECK_MSG(cJSON_GetArraySize(pts) == N, "%s: no instance of %lld points in the JSON", id,
              (long long)N);
    double worst = 0;
    const float *want = kp.data;
    for (int64_t nd = 0; nd < N && cJSON_GetArraySize(pts) == N; nd++) {
        const cJSON *pt = cJSON_GetArrayItem(pts, (int)nd);
        CHECK(cJSON_IsArray(pt));
        if (cJSON_IsArray(pt))
            for (int q = 0; q < 2; q++)
                worst =
                    fmax(worst, fabs(cJSON_GetArrayItem(pt, q)->valuedouble - want[nd * 2 + q]));
    }
    printf("%-50s CLI      keypoints %.4f px\n", id, worst);
    /* `sleapc info` shows the tiling instead of a size matcher. */
    const cJSON *tl = ref_obj(ref_obj(m, "tiling"), "config");
    char want_line[160];
    snprintf(want_line, sizeof want_line, "tiling:         %d px tiles, overlap %d, %s window",
             (int)ref_num(tl, "tile_size", 0), (int)ref_num(tl, "overlap", 0),
             cJSON_GetStringValue(ref_obj(tl, "blend")));
    snprintf(args, sizeof args, "info -m '%s'", dir);
    rc = test_run_cli(args);
    CHECK_MSG(rc == 0 && strstr(test_cli_output(), want_line) &&
                  !strstr(test_cli_output(), "size matcher:"),
              "%s: info: exit %d: %s", id, rc, test_cli_output());
    CHECK_MSG(worst <= PX_TOL, "%s: CLI keypoints off by %.4f px", id, worst);
    cJSON_Delete(j);
done:
    sleapc__free(kp.data);
    cJSON_Delete(m);
}

/* SLEAPC_TEST_BACKEND: that backend alone (see the top). */
static int check_one_backend(const ref_cases *cases, const char *name)
{
    bool known = false;
    for (int b = 0; b < sleapc__backend_count(); b++)
        known = known || (strcmp(sleapc__backend_factory(b)->name, name) == 0 &&
                          sleapc__backend_factory(b)->score() > 0);
    if (!known) {
        printf("skipped: backend %s is not built or cannot run here\n", name);
        return 77;
    }
    const char *full = getenv("SLEAPC_TEST_FULL");
    bool all = full && *full && strcmp(full, "0") != 0;
    for (int i = 0; i < cases->n; i++)
        if (all || strstr(cases->ids[i], "small_robot"))
            check_case(cases->ids[i], name, false);
    CHECK_MSG(n_checked >= (all ? 4 : 2), "only %d cases ran", n_checked);
    return test_finish();
}

int main(void)
{
    test_require_data();
    static ref_cases cases;
    ref_list_cases(&cases);
    CHECK_MSG(cases.n == 4, "%d reference-tiled cases, want 4", cases.n);
    const char *only = getenv("SLEAPC_TEST_BACKEND");
    if (only && *only)
        return check_one_backend(&cases, only);
    for (int i = 0; i < cases.n; i++)
        check_case(cases.ids[i], "native", true);
    if (cases.n > 0)
        check_small_frame(cases.ids[0]);
#ifndef SLEAPC_SANITIZED
    for (int b = 0; b < sleapc__backend_count(); b++) {
        const struct sleapc_backend_factory *f = sleapc__backend_factory(b);
        if (strcmp(f->name, "native") == 0 || f->score() <= 0 ||
            test_backend_software_only(f->name))
            continue;
        for (int i = 0; i < cases.n; i++)
            check_case(cases.ids[i], f->name, false);
    }
    for (int i = 0; i < cases.n; i++)
        check_cli(cases.ids[i]);
#else
    if (cases.n > 0)
        check_cli(cases.ids[cases.n - 1]);
#endif
    CHECK_MSG(n_checked >= 4, "only %d cases ran", n_checked);
    return test_finish();
}
