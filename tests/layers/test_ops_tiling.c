/* The tiling ops (layers/ops/tiling.h) on sleap-nn's own intermediates of
 * every reference-tiled case, each op fed the reference input of its step:
 *
 * - tile origins: exact (integer arithmetic);
 * - whole-frame preprocessing (channels, input scale, pad to the output
 *   stride) and the tiles cut from it: exact (uint8);
 * - the importance window: within 3 float32 ulps relative. Torch's exp is
 *   Sleef's vectorised expf (error up to 1 ulp), ours is exp in double
 *   rounded once; the window is a product of two such values;
 * - the weight canvas (CNT) from the reference window, and the stitched map
 *   ACC / CNT from the reference window and per-tile head maps: bit-exact, as
 *   both do the same float32 operations in the same order (tile order, the
 *   product rounded before the sum, no fused multiply-add);
 * - keypoints from the reference stitched map: within 0.02 px.
 *
 * Plus hand-worked cases of Python's semantics (half-to-even round of the
 * overlap floor, frames no larger than a tile, odd pyramid windows) and the
 * property that makes ACC / CNT a weighted average: a uniform field stitches
 * back to itself. */
#include <float.h>

#define REF_DIR "reference-tiled"
#include "layers/ops/coords.h"
#include "core/peaks.h"
#include "layers/ops/tiling.h"
#include "ops_ref_cases.h"

static int n_cases;

static int64_t num_at(const cJSON *arr, int i)
{
    return (int64_t)cJSON_GetArrayItem(arr, i)->valuedouble;
}

static sleapc_tile_blend blend_of(const char *s)
{
    if (strcmp(s, "pyramid") == 0)
        return SLEAPC_TILE_BLEND_PYRAMID;
    if (strcmp(s, "constant") == 0)
        return SLEAPC_TILE_BLEND_CONSTANT;
    return SLEAPC_TILE_BLEND_GAUSSIAN;
}

/* Bit differences and worst relative error of got against want. */
static void cmp_rel(const char *id, const char *what, const float *got, const float *want,
                    int64_t n, double tol)
{
    int64_t bits = 0;
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        bits += memcmp(&got[i], &want[i], sizeof(float)) != 0;
        worst = fmax(worst, fabs((double)got[i] - want[i]) / fmax(fabs((double)want[i]), 1e-30));
    }
    printf("%-50s %-8s %lld of %lld values differ, max rel %.3g\n", id, what, (long long)bits,
           (long long)n, worst);
    CHECK_MSG(worst <= tol, "%s %s: max relative error %.3g > %.3g", id, what, worst, tol);
}

static void check_exact(const char *id, const char *what, const float *got, const float *want,
                        int64_t n)
{
    ref_diff d = {0};
    ref_diff_add(&d, got, want, n);
    CHECK_MSG(d.n_diff_bits == 0 && d.n_nan_mismatch == 0,
              "%s %s: %lld of %lld values differ (max %.3g)", id, what, (long long)d.n_diff_bits,
              (long long)n, d.max_abs);
}

static void check_case(const char *id)
{
    cJSON *m = ref_manifest(id);
    if (!m)
        return;
    const cJSON *tl = ref_obj(m, "tiling"), *pipe = ref_obj(m, "pipeline");
    const cJSON *args = ref_obj(tl, "generate_tile_grid_args");
    const cJSON *hw = ref_obj(args, "image_hw");
    const int64_t Hs = num_at(hw, 0), Ws = num_at(hw, 1);
    const int64_t ts = (int64_t)ref_num(args, "tile_size", 0);
    const int64_t ov = (int64_t)ref_num(args, "overlap", 0);
    const int64_t s = (int64_t)ref_num(args, "output_stride", 1);
    const int64_t ms = (int64_t)ref_num(args, "max_stride", 1);
    const double frac = ref_num(args, "min_overlap_fraction", 0.25);
    const int64_t mt = ts / s;

    sleapc_tensor origins = {0}, window = {0}, cnt = {0}, input = {0}, heads = {0}, stitched = {0},
                  frame = {0}, scaled = {0}, kp = {0}, vals = {0};
    bool ok =
        ref_load(id, "tiled.tile_origins", &origins) && ref_load(id, "tiled.window", &window) &&
        ref_load(id, "tiled.cnt", &cnt) && ref_load(id, "single_instance.input", &input) &&
        ref_load(id, "single_instance.head.SingleInstanceConfmapsHead", &heads) &&
        ref_load(id, "out.pred_confmaps", &stitched) && ref_load(id, "frame", &frame) &&
        ref_load(id, "out.pred_keypoints", &kp) && ref_load(id, "out.pred_peak_values", &vals);
    if (!ok)
        goto done;
    const int64_t n_tiles = origins.shape[0], C = input.shape[2], N = heads.shape[1];

    /* Origins: the row-major product of both axes. */
    int64_t ys[64], xs[64], ny = 0, nx = 0;
    CHECK_OK(sleapc__tiling_axis_origins(Hs, ts, ov, s, ms, frac, 64, ys, &ny));
    CHECK_OK(sleapc__tiling_axis_origins(Ws, ts, ov, s, ms, frac, 64, xs, &nx));
    CHECK_MSG(ny * nx == n_tiles, "%s: %lld x %lld tiles, want %lld", id, (long long)ny,
              (long long)nx, (long long)n_tiles);
    const int32_t *o = origins.data;
    for (int64_t k = 0; k < n_tiles && ny * nx == n_tiles; k++)
        CHECK_MSG(o[2 * k] == ys[k / nx] && o[2 * k + 1] == xs[k % nx],
                  "%s: tile %lld at (%lld, %lld), want (%d, %d)", id, (long long)k,
                  (long long)ys[k / nx], (long long)xs[k % nx], o[2 * k], o[2 * k + 1]);

    /* Whole-frame preprocessing: no size matcher, pad to the output stride. */
    const cJSON *pre = ref_obj(pipe, "inner_preprocess");
    sleapc_preprocess_opts po = {.ensure_rgb = ref_bool(pre, "ensure_rgb"),
                                 .ensure_grayscale = ref_bool(pre, "ensure_grayscale"),
                                 .scale = ref_num(pre, "scale", 1.0),
                                 .max_stride = s};
    uint8_t *chw = ref_hwc_to_chw(&frame);
    const int64_t fc = frame.ndim == 3 ? frame.shape[2] : 1;
    sleapc_preprocess_plan plan;
    CHECK_OK(sleapc__preprocess_plan_make(&po, fc, frame.shape[0], frame.shape[1], &plan));
    CHECK(plan.c == C && plan.out_h == Hs && plan.out_w == Ws);
    uint8_t *ours = sleapc__malloc((size_t)(C * Hs * Ws));
    void *scratch = sleapc__aligned_alloc(plan.scratch_bytes + 64);
    CHECK_OK(sleapc__preprocess_run_u8(&plan, chw, ours, scratch));
    const uint8_t *ref_scaled = chw; /* stored only when it differs from the frame */
    if (ref_has(id, "tiled.scaled_frame") && ref_load(id, "tiled.scaled_frame", &scaled))
        ref_scaled = scaled.data;
    CHECK_MSG(memcmp(ours, ref_scaled, (size_t)(C * Hs * Ws)) == 0, "%s: scaled frame differs", id);

    /* Tiles, cut from the reference scaled frame. */
    const size_t tile_bytes = (size_t)(C * ts * ts);
    uint8_t *tile = sleapc__malloc(tile_bytes);
    int64_t bad_tiles = 0;
    for (int64_t k = 0; k < n_tiles; k++) {
        CHECK_OK(
            sleapc__tiling_extract_u8(ref_scaled, C, Hs, Ws, o[2 * k], o[2 * k + 1], ts, tile));
        bad_tiles += memcmp(tile, (uint8_t *)input.data + k * tile_bytes, tile_bytes) != 0;
    }
    CHECK_MSG(bad_tiles == 0, "%s: %lld tiles differ", id, (long long)bad_tiles);

    /* Window. */
    float *win = sleapc__malloc((size_t)(mt * mt) * sizeof(float));
    const cJSON *blend = ref_obj(pipe, "blend");
    CHECK_OK(sleapc__tiling_window(mt, mt, blend_of(cJSON_GetStringValue(blend)),
                                   ref_num(pipe, "sigma_scale", 0.125), win));
    cmp_rel(id, "window", win, window.data, mt * mt, 3 * FLT_EPSILON);

    /* Canvas and stitched map from the reference window and head maps. */
    const int64_t ch = cnt.shape[1], cw = cnt.shape[2], h = stitched.shape[2],
                  w = stitched.shape[3];
    CHECK(ch == (Hs > ts ? Hs : ts) / s && cw == (Ws > ts ? Ws : ts) / s);
    CHECK(h == Hs / s && w == Ws / s);
    float *acc = sleapc__calloc((size_t)(N * ch * cw), sizeof(float));
    float *cn = sleapc__calloc((size_t)(ch * cw), sizeof(float));
    float *out = sleapc__malloc((size_t)(N * h * w) * sizeof(float));
    for (int64_t k = 0; k < n_tiles; k++)
        CHECK_OK(sleapc__tiling_accumulate(acc, cn, N, ch, cw,
                                           (float *)heads.data + k * N * mt * mt, window.data, mt,
                                           mt, o[2 * k] / s, o[2 * k + 1] / s));
    check_exact(id, "cnt", cn, cnt.data, ch * cw);
    CHECK_OK(sleapc__tiling_normalise(acc, cn, N, ch, cw, h, w, out));
    check_exact(id, "stitched", out, stitched.data, N * h * w);

    /* Peaks on the reference stitched map, then the ladder. */
    const cJSON *post = ref_obj(pipe, "postprocess");
    float xy[64], pv[32];
    CHECK(N <= 32);
    CHECK_OK(sleapc__peaks_find_global(stitched.data, 1, N, h, w,
                                       ref_num(post, "peak_threshold", 0.2),
                                       (int)ref_num(post, "integral_patch_size", 5), xy, pv));
    sleapc__coords_undo_stride(xy, N, (double)s);
    sleapc__coords_undo_input_scale(xy, N, po.scale);
    const float *want = kp.data;
    for (int64_t j = 0; j < 2 * N; j++)
        CHECK_MSG(fabs(xy[j] - want[j]) <= 0.02, "%s: keypoint coordinate %lld: %.4f, want %.4f",
                  id, (long long)j, xy[j], want[j]);
    check_exact(id, "peak values", pv, vals.data, N);
    n_cases++;

    sleapc__free(acc);
    sleapc__free(cn);
    sleapc__free(out);
    sleapc__free(win);
    sleapc__free(tile);
    sleapc__free(ours);
    sleapc__aligned_free(scratch);
    sleapc__free(chw);
done:
    sleapc__free(origins.data);
    sleapc__free(window.data);
    sleapc__free(cnt.data);
    sleapc__free(input.data);
    sleapc__free(heads.data);
    sleapc__free(stitched.data);
    sleapc__free(frame.data);
    sleapc__free(scaled.data);
    sleapc__free(kp.data);
    sleapc__free(vals.data);
    cJSON_Delete(m);
}

/* Worked by hand from sleap-nn's _axis_tile_origins with Python semantics. */
static void check_grid_rules(void)
{
    int64_t o[16], n = 0;
    /* round(0.5 * 5) = round(2.5) = 2 (half to even): step 3, origins while
     * origin + 5 < 20, then the last origin 15. */
    CHECK_OK(sleapc__tiling_axis_origins(20, 5, 0, 1, 1, 0.5, 16, o, &n));
    const int64_t want1[] = {0, 3, 6, 9, 12, 15};
    CHECK(n == 6 && memcmp(o, want1, sizeof want1) == 0);
    /* round(0.5 * 9) = round(4.5) = 4: step 5, last origin 30 - 9 = 21. */
    CHECK_OK(sleapc__tiling_axis_origins(30, 9, 0, 1, 1, 0.5, 16, o, &n));
    const int64_t want2[] = {0, 5, 10, 15, 20, 21};
    CHECK(n == 6 && memcmp(o, want2, sizeof want2) == 0);
    /* A frame no larger than a tile: one origin; equal sizes included. */
    CHECK_OK(sleapc__tiling_axis_origins(96, 96, 24, 4, 16, 0.25, 16, o, &n));
    CHECK(n == 1 && o[0] == 0);
    CHECK_OK(sleapc__tiling_axis_origins(40, 96, 24, 4, 16, 0.25, 16, o, &n));
    CHECK(n == 1 && o[0] == 0);
    /* Step 144 - 40 = 104 snaps down to 96 (max_stride 16); 384 - 144 = 240. */
    CHECK_OK(sleapc__tiling_axis_origins(384, 144, 40, 2, 16, 0.25, 16, o, &n));
    const int64_t want3[] = {0, 96, 192, 240};
    CHECK(n == 4 && memcmp(o, want3, sizeof want3) == 0);
    /* max_stride not a multiple of output_stride: snap to output_stride
     * (step 70 -> 69), last origin (200 - 100) snapped down to 3. */
    CHECK_OK(sleapc__tiling_axis_origins(200, 100, 30, 3, 16, 0.0, 16, o, &n));
    const int64_t want4[] = {0, 69, 99};
    CHECK(n == 3 && memcmp(o, want4, sizeof want4) == 0);
    /* cap 0 counts only. */
    CHECK_OK(sleapc__tiling_axis_origins(384, 144, 40, 2, 16, 0.25, 0, NULL, &n));
    CHECK(n == 4);
    CHECK(sleapc__tiling_axis_origins(0, 144, 40, 2, 16, 0.25, 16, o, &n) != SLEAPC_OK);
    CHECK(sleapc__tiling_axis_origins(384, 144, -1, 2, 16, 0.25, 16, o, &n) != SLEAPC_OK);
    CHECK(sleapc__tiling_axis_origins(384, 144, 40, 2, 16, 1.5, 16, o, &n) != SLEAPC_OK);
}

static void check_window_rules(void)
{
    /* Pyramid on 5: 1, 2, 3, 2, 1 over 3 per axis. */
    float w[25];
    CHECK_OK(sleapc__tiling_window(5, 5, SLEAPC_TILE_BLEND_PYRAMID, 0.125, w));
    const float a[5] = {1.0f / 3.0f, 2.0f / 3.0f, 1.0f, 2.0f / 3.0f, 1.0f / 3.0f};
    int bad = 0;
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 5; x++)
            bad += w[y * 5 + x] != a[y] * a[x];
    CHECK(bad == 0);
    CHECK_OK(sleapc__tiling_window(3, 4, SLEAPC_TILE_BLEND_CONSTANT, 0.125, w));
    bad = 0;
    for (int k = 0; k < 12; k++)
        bad += w[k] != 1.0f;
    CHECK(bad == 0);
    /* A narrow gaussian: the corners fall below 1e-3 and are clamped there. */
    float g[81];
    CHECK_OK(sleapc__tiling_window(9, 9, SLEAPC_TILE_BLEND_GAUSSIAN, 0.05, g));
    CHECK(g[0] == 1e-3f && g[4 * 9 + 4] == 1.0f);
    CHECK(sleapc__tiling_window(9, 9, SLEAPC_TILE_BLEND_GAUSSIAN, 0.0, g) != SLEAPC_OK);
    CHECK(sleapc__tiling_window(9, 9, (sleapc_tile_blend)7, 0.1, g) != SLEAPC_OK);
}

/* ACC / CNT is a weighted average: a uniform field stitches back to itself
 * wherever a tile covers it, whatever the window and the overlaps. */
static void check_uniform_field(void)
{
    enum { CH = 13, CW = 17, T = 6 };
    float acc[2 * CH * CW] = {0}, cnt[CH * CW] = {0}, win[T * T], tile[2 * T * T], out[2 * CH * CW];
    CHECK_OK(sleapc__tiling_window(T, T, SLEAPC_TILE_BLEND_GAUSSIAN, 0.125, win));
    for (int k = 0; k < 2 * T * T; k++)
        tile[k] = k < T * T ? 0.7f : -0.25f;
    const int pos[][2] = {{0, 0},  {0, 5}, {0, 11}, {4, 0}, {4, 5},
                          {4, 11}, {7, 0}, {7, 5},  {7, 11}};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        CHECK_OK(
            sleapc__tiling_accumulate(acc, cnt, 2, CH, CW, tile, win, T, T, pos[i][0], pos[i][1]));
    CHECK_OK(sleapc__tiling_normalise(acc, cnt, 2, CH, CW, CH, CW, out));
    double worst = 0;
    for (int k = 0; k < CH * CW; k++) {
        worst = fmax(worst, fabs(out[k] - 0.7) / 0.7);
        worst = fmax(worst, fabs(out[CH * CW + k] + 0.25) / 0.25);
    }
    /* Each of ACC and CNT gathers at most 4 roundings per cell. */
    CHECK_MSG(worst <= 8 * FLT_EPSILON, "uniform field: %.3g", worst);
    /* A tile past the canvas edge is refused. */
    CHECK(sleapc__tiling_accumulate(acc, cnt, 2, CH, CW, tile, win, T, T, 8, 0) != SLEAPC_OK);
    CHECK(sleapc__tiling_normalise(acc, cnt, 2, CH, CW, CH + 1, CW, out) != SLEAPC_OK);
}

int main(void)
{
    check_grid_rules();
    check_window_rules();
    check_uniform_field();
    test_require_data();
    static ref_cases cases;
    ref_list_cases(&cases);
    for (int i = 0; i < cases.n; i++)
        check_case(cases.ids[i]);
    CHECK_MSG(n_cases == 4, "%d reference-tiled cases checked, want 4", n_cases);
    return test_finish();
}
