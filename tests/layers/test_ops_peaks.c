/* Peak finding, integral refinement and the coordinate ladder: unit checks of
 * the tie, plateau and threshold rules, then the stored head outputs of the
 * reference cases against sleap-nn's keypoints, centroids and bottom-up peaks. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "layers/ops/coords.h"
#include "core/peaks.h"
#include "layers/ops/preprocess.h"
#include "ops_ref_cases.h"
#include "test_util.h"

static void test_global_ties(void)
{
    /* Two equal maxima at (x, y) = (5, 1) and (2, 4): x and y are found
     * independently, giving (2, 1), which is not a maximum itself. */
    float map[6 * 7] = {0};
    map[1 * 7 + 5] = 0.9f;
    map[4 * 7 + 2] = 0.9f;
    float pk[2], val;
    CHECK_OK(sleapc__peaks_find_global(map, 1, 1, 6, 7, 0.2, 0, pk, &val));
    CHECK_MSG(pk[0] == 2.0f && pk[1] == 1.0f, "got (%g, %g)", (double)pk[0], (double)pk[1]);
    CHECK(val == 0.9f);
}

static void test_global_threshold(void)
{
    /* Two channels: the first peaks exactly at the threshold (kept: only
     * strictly-below is dropped), the second just below it (NaN, value 0). */
    const float thr = 0.25f; /* exact in binary, so float and double agree */
    float maps[2 * 3 * 3] = {0};
    maps[4] = thr;
    maps[9 + 4] = nextafterf(thr, 0.0f);
    float pk[4], vals[2];
    CHECK_OK(sleapc__peaks_find_global(maps, 1, 2, 3, 3, thr, 0, pk, vals));
    CHECK(pk[0] == 1.0f && pk[1] == 1.0f && vals[0] == thr);
    CHECK(isnan(pk[2]) && isnan(pk[3]) && vals[1] == 0.0f);
    /* Refinement skips the NaN peak and leaves the value unrefined. */
    CHECK_OK(sleapc__peaks_find_global(maps, 1, 2, 3, 3, thr, 5, pk, vals));
    CHECK(pk[0] == 1.0f && pk[1] == 1.0f && vals[0] == thr && isnan(pk[2]) && vals[1] == 0.0f);
}

static void test_local_rules(void)
{
    /* A 2-pixel plateau is not a peak (strict); a pixel equal to the threshold
     * is not a peak (strict); an isolated pixel above it is, also at a corner
     * (out-of-map neighbours are -inf). */
    const float thr = 0.25f;
    float map[5 * 6] = {0};
    map[1 * 6 + 1] = 0.8f; /* plateau */
    map[1 * 6 + 2] = 0.8f;
    map[3 * 6 + 4] = thr;  /* equal to the threshold */
    map[4 * 6 + 0] = 0.5f; /* corner peak */
    map[0 * 6 + 5] = 0.3f; /* corner peak */
    float pk[8], vals[4];
    int32_t si[4], ci[4];
    int64_t n = -1;
    CHECK_OK(sleapc__peaks_find_local(map, 1, 1, 5, 6, thr, 0, 4, pk, vals, si, ci, &n));
    CHECK_MSG(n == 2, "found %lld", (long long)n);
    /* Raster order: (5, 0) before (0, 4). */
    CHECK(n == 2 && pk[0] == 5.0f && pk[1] == 0.0f && vals[0] == 0.3f);
    CHECK(n == 2 && pk[2] == 0.0f && pk[3] == 4.0f && vals[1] == 0.5f);
    CHECK(si[0] == 0 && ci[0] == 0);

    /* Capacity 0 counts without writing. */
    n = -1;
    CHECK_OK(sleapc__peaks_find_local(map, 1, 1, 5, 6, thr, 5, 0, NULL, NULL, NULL, NULL, &n));
    CHECK(n == 2);
    CHECK(sleapc__peaks_local_max_count(1, 1, 5, 6) >= 2);
}

static void test_local_order(void)
{
    /* Order is sample, row, column, channel: a peak of channel 1 in row 0
     * comes before a peak of channel 0 in row 2. */
    float maps[2 * 2 * 4 * 4] = {0};
    maps[(0 * 2 + 0) * 16 + 2 * 4 + 1] = 0.9f; /* s0 c0 (1, 2) */
    maps[(0 * 2 + 1) * 16 + 0 * 4 + 3] = 0.9f; /* s0 c1 (3, 0) */
    maps[(0 * 2 + 1) * 16 + 2 * 4 + 1] = 0.7f; /* s0 c1 (1, 2): same pixel, channel after */
    maps[(1 * 2 + 0) * 16 + 0 * 4 + 0] = 0.6f; /* s1 c0 (0, 0) */
    float pk[8], vals[4];
    int32_t si[4], ci[4];
    int64_t n = 0;
    CHECK_OK(sleapc__peaks_find_local(maps, 2, 2, 4, 4, 0.2, 0, 4, pk, vals, si, ci, &n));
    CHECK(n == 4);
    const int32_t want_s[4] = {0, 0, 0, 1}, want_c[4] = {1, 0, 1, 0};
    const float want_x[4] = {3, 1, 1, 0}, want_y[4] = {0, 2, 2, 0};
    for (int i = 0; i < 4 && n == 4; i++)
        CHECK_MSG(si[i] == want_s[i] && ci[i] == want_c[i] && pk[2 * i] == want_x[i] &&
                      pk[2 * i + 1] == want_y[i],
                  "peak %d", i);
}

static void test_refine(void)
{
    float map[7 * 7] = {0};
    float x, y;
    /* Symmetric patch: no offset. */
    map[3 * 7 + 3] = 1.0f;
    map[3 * 7 + 2] = 0.5f;
    map[3 * 7 + 4] = 0.5f;
    CHECK_OK(sleapc__peaks_refine_integral(map, 7, 7, 5, 3, 3, &x, &y));
    CHECK(x == 3.0f && y == 3.0f);
    /* Equal mass at x and x+1: half a cell to the right. */
    memset(map, 0, sizeof map);
    map[3 * 7 + 3] = 1.0f;
    map[3 * 7 + 4] = 1.0f;
    CHECK_OK(sleapc__peaks_refine_integral(map, 7, 7, 5, 3, 3, &x, &y));
    CHECK(x == 3.5f && y == 3.0f);
    /* Outside the map reads as 0: at the corner only the in-map mass counts. */
    memset(map, 0, sizeof map);
    map[0] = 1.0f;
    map[1] = 1.0f;
    CHECK_OK(sleapc__peaks_refine_integral(map, 7, 7, 5, 0, 0, &x, &y));
    CHECK(x == 0.5f && y == 0.0f);
    /* Even k: the patch is p-2 .. p+1 but the grid -1.5 .. 1.5 is centred on
     * p - 0.5, so a single spike at p comes out half a cell right and down
     * (sleap-nn's even-k bias; its sign follows from crop_bboxes' origin and
     * arange(k) - (k-1)/2). */
    memset(map, 0, sizeof map);
    map[3 * 7 + 3] = 1.0f;
    CHECK_OK(sleapc__peaks_refine_integral(map, 7, 7, 4, 3, 3, &x, &y));
    CHECK(x == 3.5f && y == 3.5f);
    /* A zero-sum patch gives NaN (no clamping, no guard). */
    memset(map, 0, sizeof map);
    CHECK_OK(sleapc__peaks_refine_integral(map, 7, 7, 5, 3, 3, &x, &y));
    CHECK(isnan(x) && isnan(y));
    CHECK(sleapc__peaks_refine_integral(map, 7, 7, 0, 3, 3, &x, &y) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__peaks_refine_integral(map, 7, 7, SLEAPC_PEAKS_MAX_PATCH + 1, 3, 3, &x, &y) ==
          SLEAPC_ERR_INVALID_ARG);
}

static void test_coords(void)
{
    float xy[4] = {1.5f, 2.0f, NAN, NAN};
    sleapc__coords_undo_stride(xy, 2, 4);
    sleapc__coords_undo_input_scale(xy, 2, 0.5);
    sleapc__coords_add_offset(xy, 2, 0.5f, -1.0f);
    CHECK(xy[0] == 12.5f && xy[1] == 15.0f && isnan(xy[2]) && isnan(xy[3]));
    /* eff 384/360 is used as float32 (1.0666667f), one division. */
    float e[2] = {100.0f, 7.0f};
    sleapc__coords_undo_eff_scale(e, 1, 384.0 / 360.0);
    CHECK(e[0] == 100.0f / (float)(384.0 / 360.0) && e[1] == 7.0f / (float)(384.0 / 360.0));
    sleapc__coords_apply_eff_scale(e, 1, 1.0);
    CHECK(e[0] == 100.0f / (float)(384.0 / 360.0));
}

/* eff_scale of a case's first stage, from our own size matcher. */
static double case_eff(const cJSON *stage_cfg, const sleapc_tensor *frame)
{
    int64_t h = 0, w = 0;
    double eff = 1.0;
    CHECK_OK(sleapc__preprocess_size_match(
        frame->shape[0], frame->shape[1], (int64_t)ref_num(stage_cfg, "max_height", 0),
        (int64_t)ref_num(stage_cfg, "max_width", 0), &h, &w, &eff));
    return eff;
}

static int refine_k(const cJSON *stage_cfg)
{
    const cJSON *pp = ref_obj(stage_cfg, "postprocess");
    const cJSON *r = ref_obj(pp, "refinement");
    if (!cJSON_IsString(r) || strcmp(r->valuestring, "integral") != 0)
        return 0;
    return (int)ref_num(pp, "integral_patch_size", 5);
}

static double threshold(const cJSON *stage_cfg)
{
    return ref_num(ref_obj(stage_cfg, "postprocess"), "peak_threshold", 0.2);
}

/* Single instance: global peaks + ladder -> out.pred_keypoints/values. */
static void check_single_instance(const char *id, const cJSON *m, const sleapc_tensor *frame)
{
    const cJSON *cfg = ref_obj(m, "pipeline");
    const char *head = "single_instance.head.SingleInstanceConfmapsHead";
    if (!ref_has(id, head) || !ref_has(id, "out.pred_keypoints")) {
        CHECK_MSG(strncmp(id, "legacy_", 7) == 0, "%s: arrays missing", id);
        return;
    }
    sleapc_tensor cms, kp, pv;
    if (!ref_load(id, head, &cms))
        return;
    if (ref_load(id, "out.pred_keypoints", &kp) && ref_load(id, "out.pred_peak_values", &pv)) {
        const int64_t s = cms.shape[0], c = cms.shape[1];
        CHECK(sleapc_tensor_numel(&kp) == s * c * 2 && sleapc_tensor_numel(&pv) == s * c);
        if (sleapc_tensor_numel(&kp) == s * c * 2 && sleapc_tensor_numel(&pv) == s * c) {
            float *pk = sleapc__malloc((size_t)(s * c * 2) * sizeof(float));
            float *vals = sleapc__malloc((size_t)(s * c) * sizeof(float));
            CHECK_OK(sleapc__peaks_find_global(cms.data, s, c, cms.shape[2], cms.shape[3],
                                               threshold(cfg), refine_k(cfg), pk, vals));
            sleapc__coords_undo_stride(pk, s * c, ref_num(cfg, "output_stride", 1));
            sleapc__coords_undo_input_scale(pk, s * c, ref_num(cfg, "scale", 1.0));
            sleapc__coords_undo_eff_scale(pk, s * c, case_eff(cfg, frame));
            ref_diff dk = {0}, dv = {0};
            ref_diff_add(&dk, pk, kp.data, s * c * 2);
            ref_diff_add(&dv, vals, pv.data, s * c);
            printf("  %-48s keypoints max |err| %.3g px (%lld of %lld not bit-equal), values "
                   "max |err| %.3g\n",
                   id, dk.max_abs, (long long)dk.n_diff_bits, (long long)dk.n, dv.max_abs);
            /* Spec 5.3/6: the summation recipe and float32 ladder reproduce
             * sleap-nn bit for bit, so the tolerance is 0 (README's 1e-3 px is
             * for implementations that sum in another order). Values are the
             * raw grid maxima: exact. */
            CHECK_MSG(dk.n_diff_bits == 0 && dk.n_nan_mismatch == 0, "%s: keypoints differ", id);
            CHECK_MSG(dv.n_diff_bits == 0 && dv.n_nan_mismatch == 0, "%s: values differ", id);
            sleapc__free(pk);
            sleapc__free(vals);
        }
        sleapc__free(pv.data);
    }
    sleapc__free(kp.data);
    sleapc__free(cms.data);
}

/* Centroid layer (spec 7.2): local peaks + stride/scale, per frame: keep
 * raster order, cut to max_inst by descending value only when there are
 * more, NaN-pad, then undo eff. */
static void check_centroids(const char *id, const cJSON *m, const sleapc_tensor *frame)
{
    const cJSON *pipe = ref_obj(m, "pipeline");
    const cJSON *cfg = ref_obj(pipe, "centroid_stage");
    if (!cfg)
        cfg = pipe;
    const char *head = "centroid.head.CentroidConfmapsHead";
    if (!ref_has(id, head) || !ref_has(id, "out.pred_centroids")) {
        CHECK_MSG(strncmp(id, "legacy_", 7) == 0, "%s: arrays missing", id);
        return;
    }
    sleapc_tensor cms, want, want_v;
    if (!ref_load(id, head, &cms))
        return;
    if (!ref_load(id, "out.pred_centroids", &want) ||
        !ref_load(id, "out.pred_centroid_values", &want_v)) {
        sleapc__free(want.data);
        sleapc__free(cms.data);
        return;
    }
    const int64_t s = cms.shape[0], h = cms.shape[2], w = cms.shape[3];
    const int64_t cap = sleapc__peaks_local_max_count(s, 1, h, w);
    float *pk = sleapc__malloc((size_t)cap * 2 * sizeof(float));
    float *vals = sleapc__malloc((size_t)cap * sizeof(float));
    int32_t *si = sleapc__malloc((size_t)cap * sizeof(int32_t));
    int32_t *ci = sleapc__malloc((size_t)cap * sizeof(int32_t));
    int64_t n = 0;
    CHECK_OK(sleapc__peaks_find_local(cms.data, s, 1, h, w, threshold(cfg), refine_k(cfg), cap, pk,
                                      vals, si, ci, &n));
    sleapc__coords_undo_stride(pk, n, ref_num(cfg, "output_stride", 1));
    sleapc__coords_undo_input_scale(pk, n, ref_num(cfg, "scale", 1.0));

    int64_t max_inst = (int64_t)ref_num(ref_obj(cfg, "postprocess"), "max_instances", 0);
    if (max_inst <= 0) {
        for (int64_t b = 0; b < s; b++) {
            int64_t k = 0;
            for (int64_t i = 0; i < n; i++)
                k += si[i] == b;
            max_inst = k > max_inst ? k : max_inst;
        }
        if (max_inst == 0)
            max_inst = 1;
    }
    CHECK_MSG(want.ndim == 3 && want.shape[0] == s && want.shape[1] == max_inst,
              "%s: %lld centroid slots", id, (long long)max_inst);
    if (want.ndim == 3 && want.shape[0] == s && want.shape[1] == max_inst) {
        float *got = sleapc__malloc((size_t)(s * max_inst * 2) * sizeof(float));
        float *got_v = sleapc__malloc((size_t)(s * max_inst) * sizeof(float));
        for (int64_t i = 0; i < s * max_inst * 2; i++)
            got[i] = NAN;
        for (int64_t i = 0; i < s * max_inst; i++)
            got_v[i] = NAN;
        for (int64_t b = 0; b < s; b++) {
            /* Frame b's peaks, in raster order. */
            int64_t k = 0;
            for (int64_t i = 0; i < n; i++) {
                if (si[i] != b)
                    continue;
                if (k < max_inst) {
                    got[(b * max_inst + k) * 2] = pk[2 * i];
                    got[(b * max_inst + k) * 2 + 1] = pk[2 * i + 1];
                    got_v[b * max_inst + k] = vals[i];
                }
                k++;
            }
            /* Truncation (top-k by value) does not occur with max_instances
             * unset, which is every reference case. */
            CHECK_MSG(k <= max_inst, "%s: top-k truncation not exercised here", id);
            sleapc__coords_undo_eff_scale(got + b * max_inst * 2, max_inst, case_eff(cfg, frame));
        }
        ref_diff dk = {0}, dv = {0};
        ref_diff_add(&dk, got, want.data, s * max_inst * 2);
        ref_diff_add(&dv, got_v, want_v.data, s * max_inst);
        printf("  %-48s centroids max |err| %.3g px (%lld of %lld not bit-equal), values max "
               "|err| %.3g\n",
               id, dk.max_abs, (long long)dk.n_diff_bits, (long long)dk.n, dv.max_abs);
        /* Bit-exact by spec 5.3 and 6, including legacy_centroid__pkg_f0000
         * whose near-zero patch sum sends a centroid ~61 cells away. */
        CHECK_MSG(dk.n_diff_bits == 0 && dk.n_nan_mismatch == 0, "%s: centroids differ", id);
        CHECK_MSG(dv.n_diff_bits == 0 && dv.n_nan_mismatch == 0, "%s: values differ", id);
        sleapc__free(got);
        sleapc__free(got_v);
    }
    sleapc__free(pk);
    sleapc__free(vals);
    sleapc__free(si);
    sleapc__free(ci);
    sleapc__free(want_v.data);
    sleapc__free(want.data);
    sleapc__free(cms.data);
}

/* Bottom-up: local peaks x confmap stride -> bottomup.scored.* (processed-
 * input pixels; scale and eff not undone yet). */
static void check_bottomup(const char *id, const cJSON *m)
{
    const cJSON *cfg = ref_obj(m, "pipeline");
    const char *head = "bottomup.head.MultiInstanceConfmapsHead";
    if (!ref_has(id, head) || !ref_has(id, "bottomup.scored.peaks"))
        return; /* multi-class bottom-up stores no scored peaks */
    sleapc_tensor cms, want, want_v, want_c;
    memset(&want_v, 0, sizeof want_v);
    memset(&want_c, 0, sizeof want_c);
    if (!ref_load(id, head, &cms))
        return;
    if (ref_load(id, "bottomup.scored.peaks", &want) &&
        ref_load(id, "bottomup.scored.peak_vals", &want_v) &&
        ref_load(id, "bottomup.scored.peak_channel_inds", &want_c)) {
        const int64_t s = cms.shape[0], c = cms.shape[1], h = cms.shape[2], w = cms.shape[3];
        const int64_t cap = sleapc__peaks_local_max_count(s, c, h, w);
        float *pk = sleapc__malloc((size_t)cap * 2 * sizeof(float));
        float *vals = sleapc__malloc((size_t)cap * sizeof(float));
        int32_t *si = sleapc__malloc((size_t)cap * sizeof(int32_t));
        int32_t *ci = sleapc__malloc((size_t)cap * sizeof(int32_t));
        int64_t n = 0;
        CHECK_OK(sleapc__peaks_find_local(cms.data, s, c, h, w, threshold(cfg), refine_k(cfg), cap,
                                          pk, vals, si, ci, &n));
        sleapc__coords_undo_stride(pk, n, ref_num(cfg, "output_stride", 1));
        const int64_t n_want = want.shape[0];
        CHECK_MSG(n == n_want, "%s: %lld peaks, want %lld", id, (long long)n, (long long)n_want);
        if (n == n_want) {
            ref_diff dk = {0}, dv = {0};
            ref_diff_add(&dk, pk, want.data, 2 * n);
            ref_diff_add(&dv, vals, want_v.data, n);
            int64_t n_chan = 0;
            for (int64_t i = 0; i < n; i++) {
                const int64_t wc = want_c.dtype == SLEAPC_DTYPE_I64 ? ((int64_t *)want_c.data)[i]
                                                                    : ((int32_t *)want_c.data)[i];
                n_chan += ci[i] != wc;
            }
            printf(
                "  %-48s %lld peaks, max |err| %.3g px (%lld not bit-equal), channels off %lld\n",
                id, (long long)n, dk.max_abs, (long long)dk.n_diff_bits, (long long)n_chan);
            /* Exact: same order, same channels, bit-equal refined points. */
            CHECK_MSG(dk.n_diff_bits == 0 && dk.n_nan_mismatch == 0, "%s: peaks differ", id);
            CHECK_MSG(dv.n_diff_bits == 0, "%s: values differ", id);
            CHECK_MSG(n_chan == 0, "%s: channel indices differ", id);
        }
        sleapc__free(pk);
        sleapc__free(vals);
        sleapc__free(si);
        sleapc__free(ci);
    }
    sleapc__free(want_c.data);
    sleapc__free(want_v.data);
    sleapc__free(want.data);
    sleapc__free(cms.data);
}

static void check_case(const char *id)
{
    cJSON *m = ref_manifest(id);
    if (!m)
        return;
    const cJSON *type = ref_obj(m, "model_type");
    const char *t = cJSON_IsString(type) ? type->valuestring : "";
    sleapc_tensor frame;
    if (ref_load(id, "frame", &frame)) {
        /* legacy_* model types carry the prefix. */
        const char *base = strncmp(t, "legacy_", 7) == 0 ? t + 7 : t;
        if (strncmp(base, "kerasT_", 7) == 0)
            base += 7;
        if (strcmp(base, "single_instance") == 0)
            check_single_instance(id, m, &frame);
        else if (strcmp(base, "centroid") == 0 || strstr(base, "topdown"))
            check_centroids(id, m, &frame);
        else if (strcmp(base, "bottomup") == 0)
            check_bottomup(id, m);
        sleapc__free(frame.data);
    }
    cJSON_Delete(m);
}

int main(void)
{
    test_global_ties();
    test_global_threshold();
    test_local_rules();
    test_local_order();
    test_refine();
    test_coords();

    test_require_data();
    ref_cases cases;
    ref_list_cases(&cases);
    CHECK(cases.n > 0);
    for (int i = 0; i < cases.n; i++)
        check_case(cases.ids[i]);
    return test_finish();
}
