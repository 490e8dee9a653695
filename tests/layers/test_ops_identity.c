/* Identity assignment: class-map classification of peaks (best-class rule,
 * ties, more peaks than classes), the max_instances cap quirk, class-vector
 * assignment of crops, then the multi-class reference cases. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "layers/ops/coords.h"
#include "layers/ops/identity.h"
#include "core/peaks.h"
#include "ops_ref_cases.h"
#include "test_util.h"

/* 1 sample, 2 classes, 4 x 4 class maps at stride 2. */
static float syn_maps[2 * 16];

static void set_probs(int col, int row, float p0, float p1)
{
    syn_maps[row * 4 + col] = p0;
    syn_maps[16 + row * 4 + col] = p1;
}

static void test_classify_peaks(void)
{
    memset(syn_maps, 0, sizeof syn_maps);
    set_probs(1, 1, 0.9f, 0.1f); /* p0, node 0 */
    set_probs(3, 3, 0.2f, 0.8f); /* p1, node 0 */
    set_probs(1, 2, 0.6f, 0.4f); /* p2, node 1 */
    set_probs(2, 2, 0.7f, 0.3f); /* p3, node 1 */
    /* p1 sits at 5.2 px = cell 2.6 -> 3; p2 at (2.9, 5) = cell (1.45, 2.5) ->
     * (1, 2): half to even. */
    const float peaks[4][2] = { { 2, 2 }, { 5.2f, 6 }, { 2.9f, 5 }, { 4, 4 } };
    const float vals[4] = { 0.5f, 0.6f, 0.7f, 0.8f };
    const int32_t samp[4] = { 0, 0, 0, 0 }, ch[4] = { 0, 0, 1, 1 };
    float pts[2 * 2 * 2], pv[2 * 2], cp[2 * 2];
    CHECK_OK(sleapc__identity_classify_peaks(syn_maps, 1, 2, 4, 4, 2, &peaks[0][0], vals, samp,
                                             ch, 4, 2, NULL, pts, pv, cp));
    /* Node 0: p0 -> class 0, p1 -> class 1. */
    CHECK(pts[0] == 2 && pts[1] == 2 && pv[0] == 0.5f && cp[0] == 0.9f);
    CHECK(pts[4] == 5.2f && pts[5] == 6 && pv[2] == 0.6f && cp[2] == 0.8f);
    /* Node 1: the assignment pairs p2 with class 1 (0.4 + 0.7 beats 0.6 +
     * 0.3), but class 1 is not p2's best class, so only p3 -> class 0 stays. */
    CHECK(pts[2] == 4 && pts[3] == 4 && pv[1] == 0.8f && cp[1] == 0.7f);
    CHECK(isnan(pts[6]) && isnan(pts[7]) && isnan(pv[3]) && isnan(cp[3]));

    /* Tied probabilities: scipy's identity assignment, both kept. Three
     * peaks of one node and two classes: only two are placed. */
    memset(syn_maps, 0, sizeof syn_maps);
    set_probs(0, 0, 0.5f, 0.5f);
    set_probs(1, 0, 0.5f, 0.5f);
    set_probs(2, 0, 0.5f, 0.5f);
    const float tie_peaks[3][2] = { { 0, 0 }, { 2, 0 }, { 4, 0 } };
    const float tie_vals[3] = { 1, 2, 3 };
    const int32_t tie_s[3] = { 0, 0, 0 }, tie_ch[3] = { 0, 0, 0 };
    float tp[2 * 1 * 2], tv[2], tc[2];
    CHECK_OK(sleapc__identity_classify_peaks(syn_maps, 1, 2, 4, 4, 2, &tie_peaks[0][0],
                                             tie_vals, tie_s, tie_ch, 3, 1, NULL, tp, tv, tc));
    CHECK_MSG(tv[0] == 1 && tv[1] == 2, "tie: got %g %g", (double)tv[0], (double)tv[1]);

    /* Bad indices and NaN probabilities are refused. */
    const int32_t bad_ch[1] = { 5 };
    CHECK(sleapc__identity_classify_peaks(syn_maps, 1, 2, 4, 4, 2, &tie_peaks[0][0], tie_vals,
                                          tie_s, bad_ch, 1, 1, NULL, tp, tv, tc) ==
          SLEAPC_ERR_INVALID_ARG);
    set_probs(0, 0, NAN, 0.5f);
    CHECK(sleapc__identity_classify_peaks(syn_maps, 1, 2, 4, 4, 2, &tie_peaks[0][0], tie_vals,
                                          tie_s, tie_ch, 1, 1, NULL, tp, tv, tc) ==
          SLEAPC_ERR_INVALID_ARG);
}

static void test_bottomup_finish(void)
{
    /* 1 sample, 3 classes, 2 nodes. Class 0 is empty (NaN score). */
    float pts[3 * 2 * 2] = { NAN, NAN, NAN, NAN, 10, 20, NAN, NAN, 30, 40, 50, 60 };
    float pv[3 * 2] = { NAN, NAN, 0.5f, NAN, 0.8f, 1.0f };
    const float cp[3 * 2] = { NAN, NAN, 0.6f, NAN, 0.7f, 0.9f };
    float sc[3], tr[3];
    const float eff = 2.0f;
    CHECK_OK(sleapc__identity_bottomup_finish(1, 3, 2, 0.5f, &eff, 0, NULL, pts, pv, cp, sc, tr));
    CHECK(pts[4] == 10 && pts[5] == 20 && pts[8] == 30); /* / 0.5 / 2 */
    CHECK(isnan(sc[0]) && sc[1] == 0.5f && sc[2] == (0.8f + 1.0f) / 2.0f);
    CHECK(isnan(tr[0]) && tr[1] == 0.6f && tr[2] == (0.7f + 0.9f) / 2.0f);

    /* max_instances = 1 with two real classes: np.argsort puts the NaN
     * class last, so reversed it comes first and is "kept": both real
     * instances are dropped (sleap-nn's quirk, reproduced). */
    CHECK_OK(sleapc__identity_bottomup_finish(1, 3, 2, 1.0f, NULL, 1, NULL, pts, pv, cp, sc, tr));
    CHECK(isnan(sc[1]) && isnan(sc[2]) && isnan(tr[1]) && isnan(pts[4]) && isnan(pv[5]));

    /* max_instances = 2: only two classes are present, nothing is cut. */
    float pts2[3 * 2 * 2] = { NAN, NAN, NAN, NAN, 10, 20, NAN, NAN, 30, 40, 50, 60 };
    float pv2[3 * 2] = { NAN, NAN, 0.5f, NAN, 0.8f, 1.0f };
    CHECK_OK(sleapc__identity_bottomup_finish(1, 3, 2, 1.0f, NULL, 2, NULL, pts2, pv2, cp, sc, tr));
    CHECK(sc[1] == 0.5f && sc[2] == (0.8f + 1.0f) / 2.0f && pts2[4] == 10 && pts2[8] == 30);
}

static void test_class_vectors(void)
{
    /* Three crops all preferring class 1; crop 1 is the strongest for
     * class 0; crops 0 and 2 tie for class 1 and scipy gives it to crop 0. */
    const float v[3][2] = { { 1e-13f, 1.0f }, { 2e-12f, 1.0f }, { 1e-21f, 1.0f } };
    int64_t ci[3];
    float cp[3];
    CHECK_OK(sleapc__identity_classes_from_vectors(&v[0][0], 3, 2, NULL, ci, cp));
    CHECK(ci[0] == 1 && ci[1] == 0 && ci[2] == -1);
    CHECK(cp[0] == 1.0f && cp[1] == 2e-12f && isnan(cp[2]));

    /* Two frames; frame 0 has crops in slots 0 and 2, frame 1 in slot 0. */
    const float vecs[3][2] = { { 0.2f, 0.8f }, { 0.9f, 0.1f }, { 0.3f, 0.7f } };
    const int64_t frame[3] = { 0, 1, 0 }, slot[3] = { 0, 0, 2 };
    int64_t inds[2 * 3 * 2];
    float track[2 * 3], cv[2 * 3 * 2];
    CHECK_OK(sleapc__identity_topdown_assign(&vecs[0][0], 3, 2, frame, slot, 2, 3, 2, NULL,
                                             inds, track, cv));
    /* Frame 0: crops 0 and 2 -> 0.8 + 0.3 beats 0.2 + 0.7: crop 0 class 1. */
    CHECK(inds[0] == 1 && inds[1] == 1 && track[0] == 0.8f);
    CHECK(inds[2] == -1 && isnan(track[1]) && isnan(cv[2]));
    CHECK(inds[4] == 0 && track[2] == 0.3f && cv[4] == 0.3f && cv[5] == 0.7f);
    CHECK(inds[6] == 0 && track[3] == 0.9f && cv[6] == 0.9f);
    CHECK(inds[8] == -1 && isnan(track[5]));
    CHECK(sleapc__identity_topdown_assign(&vecs[0][0], 3, 2, frame, slot, 1, 3, 2, NULL, inds,
                                          track, cv) == SLEAPC_ERR_INVALID_ARG);
}

/* Every function with a kept workspace: the results of a NULL workspace,
 * bit for bit, and no allocation once the workspace has seen the sizes. The
 * workspace is shared across functions and sizes, as a layer shares it. */
static void test_workspace(void)
{
    sleapc_identity_ws ws = { 0 };
    sleapc__identity_ws_free(&ws); /* a zeroed workspace frees cleanly */
    memset(syn_maps, 0, sizeof syn_maps);
    set_probs(1, 1, 0.9f, 0.1f);
    set_probs(3, 3, 0.2f, 0.8f);
    set_probs(1, 2, 0.6f, 0.4f);
    set_probs(2, 2, 0.7f, 0.3f);
    const float peaks[5][2] = { { 2, 2 }, { 5.2f, 6 }, { 2.9f, 5 }, { 4, 4 }, { 9, 2 } };
    const float vals[5] = { 0.5f, 0.6f, 0.7f, 0.8f, 0.9f };
    const int32_t samp[5] = { 0, 0, 0, 0, 0 }, ch[5] = { 0, 0, 1, 1, 0 };
    const float vecs[5][2] = {
        { 0.9f, 0.1f }, { 0.6f, 0.4f }, { 0.3f, 0.7f }, { 0.2f, 0.8f }, { 0.7f, 0.3f }
    };
    const int64_t frame[5] = { 0, 0, 1, 1, 1 }, slot[5] = { 0, 1, 0, 1, 2 };
    float want[64], got[64];
    int64_t iwant[32], igot[32];
    for (int sleap1 = 0; sleap1 < 2; sleap1++) {
        sleapc_status (*fn)(const float *, int64_t, int64_t, int64_t, int64_t, int,
                            const float *, const float *, const int32_t *, const int32_t *,
                            int64_t, int64_t, sleapc_identity_ws *, float *, float *,
                            float *) =
            sleap1 ? sleapc__identity_classify_peaks_sleap1 : sleapc__identity_classify_peaks;
        CHECK_OK(fn(syn_maps, 1, 2, 4, 4, 2, &peaks[0][0], vals, samp, ch, 5, 2, NULL, want,
                    want + 8, want + 12));
        CHECK_OK(fn(syn_maps, 1, 2, 4, 4, 2, &peaks[0][0], vals, samp, ch, 5, 2, &ws, got,
                    got + 8, got + 12));
        CHECK(!memcmp(want, got, 16 * sizeof(float)));
        /* The cut of max_instances = 1 needs scratch too. */
        CHECK_OK(sleapc__identity_bottomup_finish(1, 2, 2, 1.0f, NULL, 1, NULL, want, want + 8,
                                                  want + 12, want + 16, want + 18));
        CHECK_OK(sleapc__identity_bottomup_finish(1, 2, 2, 1.0f, NULL, 1, &ws, got, got + 8,
                                                  got + 12, got + 16, got + 18));
        CHECK(!memcmp(want, got, 20 * sizeof(float)));
    }
    CHECK_OK(sleapc__identity_classes_from_vectors(&vecs[0][0], 5, 2, NULL, iwant, want));
    CHECK_OK(sleapc__identity_classes_from_vectors(&vecs[0][0], 5, 2, &ws, igot, got));
    CHECK(!memcmp(iwant, igot, 5 * sizeof(int64_t)) && !memcmp(want, got, 5 * sizeof(float)));
    CHECK_OK(sleapc__identity_topdown_assign(&vecs[0][0], 5, 2, frame, slot, 2, 3, 2, NULL,
                                             iwant, want, want + 6));
    CHECK_OK(sleapc__identity_topdown_assign(&vecs[0][0], 5, 2, frame, slot, 2, 3, 2, &ws,
                                             igot, got, got + 6));
    CHECK(!memcmp(iwant, igot, 12 * sizeof(int64_t)) &&
          !memcmp(want, got, 18 * sizeof(float)));
    CHECK_OK(sleapc__identity_topdown_classes_sleap1(&vecs[0][0], 5, 2, frame, 2, NULL, iwant,
                                                     want));
    CHECK_OK(sleapc__identity_topdown_classes_sleap1(&vecs[0][0], 5, 2, frame, 2, &ws, igot,
                                                     got));
    CHECK(!memcmp(iwant, igot, 5 * sizeof(int64_t)) && !memcmp(want, got, 5 * sizeof(float)));
    /* A failed solve leaves the workspace usable. */
    const float nan_vec[2] = { NAN, 0.5f };
    CHECK(sleapc__identity_classes_from_vectors(nan_vec, 1, 2, &ws, igot, got) ==
          SLEAPC_ERR_INVALID_ARG);
    /* Once more, counted: the workspace has seen every size. */
    const int64_t before = sleapc__alloc_count();
    CHECK_OK(sleapc__identity_classify_peaks(syn_maps, 1, 2, 4, 4, 2, &peaks[0][0], vals, samp,
                                             ch, 5, 2, &ws, got, got + 8, got + 12));
    CHECK_OK(sleapc__identity_classify_peaks_sleap1(syn_maps, 1, 2, 4, 4, 2, &peaks[0][0], vals,
                                                    samp, ch, 5, 2, &ws, got, got + 8, got + 12));
    CHECK_OK(sleapc__identity_bottomup_finish(1, 2, 2, 1.0f, NULL, 1, &ws, got, got + 8,
                                              got + 12, got + 16, got + 18));
    CHECK_OK(sleapc__identity_classes_from_vectors(&vecs[0][0], 5, 2, &ws, igot, got));
    CHECK_OK(sleapc__identity_topdown_assign(&vecs[0][0], 5, 2, frame, slot, 2, 3, 2, &ws, igot,
                                             got, got + 6));
    CHECK_OK(
        sleapc__identity_topdown_classes_sleap1(&vecs[0][0], 5, 2, frame, 2, &ws, igot, got));
    const int64_t n_alloc = sleapc__alloc_count() - before;
    CHECK_MSG(n_alloc == 0, "%lld allocations with a sized workspace", (long long)n_alloc);
    sleapc__identity_ws_free(&ws);
    CHECK(ws.block == NULL && ws.cap == 0 && ws.hws.block == NULL);

    /* Out of memory on a fresh workspace: the first or second allocation
     * (the block, then the solver's) fails cleanly, and the workspace still
     * works afterwards. */
    CHECK_OK(sleapc__identity_classes_from_vectors(&vecs[0][0], 5, 2, NULL, iwant, want));
    for (int64_t n = 1; n <= 2; n++) {
        sleapc__alloc_fail_after(n);
        CHECK(sleapc__identity_classes_from_vectors(&vecs[0][0], 5, 2, &ws, igot, got) ==
              SLEAPC_ERR_NOMEM);
        sleapc__alloc_fail_after(0);
        CHECK_OK(sleapc__identity_classes_from_vectors(&vecs[0][0], 5, 2, &ws, igot, got));
        CHECK(!memcmp(iwant, igot, 5 * sizeof(int64_t)));
        sleapc__identity_ws_free(&ws);
    }
}

/* Tolerances of the README: ~1e-3 px for refined keypoints, ~1e-5 for
 * values and scores. Unreliable cases (a near-tie in peak finding, outside
 * these ops) may move a keypoint by one confmap cell, so they are reported
 * and checked only for shape. */
static void compare(const char *id, const char *name, const float *got, int64_t n, double tol,
                    bool strict)
{
    sleapc_tensor want;
    if (!ref_load(id, name, &want))
        return;
    CHECK_MSG(sleapc_tensor_numel(&want) == n, "%s: %s has %lld values, want %lld", id, name,
              (long long)n, (long long)sleapc_tensor_numel(&want));
    if (sleapc_tensor_numel(&want) == n) {
        ref_diff d = { 0 };
        ref_diff_add(&d, got, want.data, n);
        if (strict)
            CHECK_MSG(d.max_abs <= tol && d.n_nan_mismatch == 0,
                      "%s: %s max |err| %.3g, %lld NaN mismatches", id, name, d.max_abs,
                      (long long)d.n_nan_mismatch);
        printf("%-46s %-30s max |err| %.3g, NaN mismatches %lld, bits differ %lld/%lld%s\n", id,
               name, d.max_abs, (long long)d.n_nan_mismatch, (long long)d.n_diff_bits,
               (long long)d.n, strict ? "" : " (unreliable case: not checked)");
    }
    sleapc__free(want.data);
}

static void test_bottomup_case(const char *id)
{
    cJSON *m = ref_manifest(id);
    sleapc_tensor input = { 0 }, cms = { 0 }, maps = { 0 };
    if (!m)
        return;
    const char *stage = ref_stage(m, 0);
    char name[256];
    bool ok = stage != NULL;
    if (ok) {
        snprintf(name, sizeof name, "%s.input", stage);
        ok = ref_load(id, name, &input);
    }
    if (ok) {
        snprintf(name, sizeof name, "%s.head.MultiInstanceConfmapsHead", stage);
        ok = ref_load(id, name, &cms);
    }
    if (ok) {
        snprintf(name, sizeof name, "%s.head.ClassMapsHead", stage);
        ok = ref_load(id, name, &maps);
    }
    if (ok) {
        const cJSON *pp = ref_obj(ref_obj(m, "pipeline"), "postprocess");
        const cJSON *refinement = ref_obj(pp, "refinement");
        const int k = cJSON_IsString(refinement) && !strcmp(refinement->valuestring, "integral")
                          ? (int)ref_num(pp, "integral_patch_size", 5)
                          : 0;
        const double threshold = ref_num(pp, "peak_threshold", 0.2);
        const int64_t s = cms.shape[0], n_nodes = cms.shape[1];
        const int64_t n_classes = maps.shape[1];
        /* Strides from the geometry: input rows per map row. */
        const int64_t cms_stride = input.shape[3] / cms.shape[2];
        const int cm_stride = (int)(input.shape[3] / maps.shape[2]);
        const cJSON *info = ref_obj(m, "preprocess_info");
        const float input_scale = (float)ref_num(info, "input_scale", 1.0);
        float eff[16];
        for (int b = 0; b < 16; b++) {
            const cJSON *v = cJSON_GetArrayItem(ref_obj(info, "eff_scale"), b);
            eff[b] = cJSON_IsNumber(v) ? (float)v->valuedouble : 1.0f;
        }
        const int64_t max_inst = (int64_t)ref_num(ref_obj(m, "predict_call"), "max_instances", 0);

        int64_t cap = sleapc__peaks_local_max_count(s, n_nodes, cms.shape[2], cms.shape[3]);
        float *peaks = sleapc__malloc((size_t)cap * 2 * sizeof(float));
        float *vals = sleapc__malloc((size_t)cap * sizeof(float));
        int32_t *si = sleapc__malloc((size_t)cap * sizeof(int32_t));
        int32_t *ci = sleapc__malloc((size_t)cap * sizeof(int32_t));
        int64_t n_peaks = 0;
        CHECK_OK(sleapc__peaks_find_local(cms.data, s, n_nodes, cms.shape[2], cms.shape[3],
                                          threshold, k, cap, peaks, vals, si, ci, &n_peaks));
        sleapc__coords_undo_stride(peaks, n_peaks, (double)cms_stride);

        const int64_t n_pts = s * n_classes * n_nodes;
        float *pts = sleapc__malloc((size_t)n_pts * 2 * sizeof(float));
        float *pv = sleapc__malloc((size_t)n_pts * sizeof(float));
        float *cp = sleapc__malloc((size_t)n_pts * sizeof(float));
        float *sc = sleapc__malloc((size_t)(s * n_classes) * sizeof(float));
        float *tr = sleapc__malloc((size_t)(s * n_classes) * sizeof(float));
        CHECK_OK(sleapc__identity_classify_peaks(maps.data, s, n_classes, maps.shape[2],
                                                 maps.shape[3], cm_stride, peaks, vals, si, ci,
                                                 n_peaks, n_nodes, NULL, pts, pv, cp));
        CHECK_OK(sleapc__identity_bottomup_finish(s, n_classes, n_nodes, input_scale, eff,
                                                  max_inst, NULL, pts, pv, cp, sc, tr));
        /* A kept workspace gives the same bits; its second use allocates
         * nothing. */
        float *buf = sleapc__malloc((size_t)n_pts * 4 * sizeof(float) +
                                    (size_t)(s * n_classes) * 2 * sizeof(float));
        sleapc_identity_ws ws = { 0 };
        for (int rep = 0; rep < 2 && buf; rep++) {
            float *wpts = buf, *wpv = wpts + n_pts * 2, *wcp = wpv + n_pts;
            float *wsc = wcp + n_pts, *wtr = wsc + s * n_classes;
            const int64_t before = sleapc__alloc_count();
            CHECK_OK(sleapc__identity_classify_peaks(maps.data, s, n_classes, maps.shape[2],
                                                     maps.shape[3], cm_stride, peaks, vals, si,
                                                     ci, n_peaks, n_nodes, &ws, wpts, wpv, wcp));
            CHECK_OK(sleapc__identity_bottomup_finish(s, n_classes, n_nodes, input_scale, eff,
                                                      max_inst, &ws, wpts, wpv, wcp, wsc, wtr));
            const int64_t n_alloc = sleapc__alloc_count() - before;
            if (rep == 1)
                CHECK_MSG(n_alloc == 0, "%s: %lld allocations with a kept workspace", id,
                          (long long)n_alloc);
            CHECK_MSG(!memcmp(wpts, pts, (size_t)n_pts * 2 * sizeof(float)) &&
                          !memcmp(wpv, pv, (size_t)n_pts * sizeof(float)) &&
                          !memcmp(wsc, sc, (size_t)(s * n_classes) * sizeof(float)) &&
                          !memcmp(wtr, tr, (size_t)(s * n_classes) * sizeof(float)),
                      "%s: results differ with a workspace", id);
        }
        sleapc__identity_ws_free(&ws);
        sleapc__free(buf);
        /* In two steps (the class vectors read elsewhere, as a device does):
         * the cells' values, gathered here, classify to the same bits. */
        int32_t(*cells)[3] = sleapc__malloc((size_t)(n_peaks + 1) * sizeof *cells);
        float *sampled = sleapc__malloc((size_t)((n_peaks + 1) * n_classes) * sizeof(float));
        float *tpts = sleapc__malloc((size_t)n_pts * 4 * sizeof(float));
        if (cells && sampled && tpts) {
            sleapc__identity_class_cells(peaks, si, n_peaks, maps.shape[2], maps.shape[3],
                                         cm_stride, cells);
            const float *md = maps.data;
            for (int64_t p = 0; p < n_peaks; p++)
                for (int64_t c = 0; c < n_classes; c++)
                    sampled[p * n_classes + c] =
                        md[((cells[p][0] * n_classes + c) * maps.shape[2] + cells[p][1]) *
                               maps.shape[3] +
                           cells[p][2]];
            float *tpv = tpts + n_pts * 2, *tcp = tpv + n_pts;
            CHECK_OK(sleapc__identity_classify_sampled(sampled, s, n_classes, maps.shape[2],
                                                       maps.shape[3], cm_stride, peaks, vals, si,
                                                       ci, n_peaks, n_nodes, NULL, tpts, tpv,
                                                       tcp));
            float *rpts = sleapc__malloc((size_t)n_pts * 4 * sizeof(float));
            if (rpts) {
                float *rpv = rpts + n_pts * 2, *rcp = rpv + n_pts;
                CHECK_OK(sleapc__identity_classify_peaks(maps.data, s, n_classes, maps.shape[2],
                                                         maps.shape[3], cm_stride, peaks, vals,
                                                         si, ci, n_peaks, n_nodes, NULL, rpts,
                                                         rpv, rcp));
                CHECK_MSG(!memcmp(tpts, rpts, (size_t)n_pts * 4 * sizeof(float)),
                          "%s: classified from sampled class vectors: results differ", id);
                sleapc__free(rpts);
            }
        }
        sleapc__free(cells);
        sleapc__free(sampled);
        sleapc__free(tpts);
        const bool strict = ref_bool(m, "reliable");
        compare(id, "out.pred_keypoints", pts, n_pts * 2, 1e-3, strict);
        compare(id, "out.pred_peak_values", pv, n_pts, 1e-5, strict);
        compare(id, "out.instance_scores", sc, s * n_classes, 1e-5, strict);
        compare(id, "out.instance_tracking_scores", tr, s * n_classes, 1e-5, strict);
        sleapc__free(peaks);
        sleapc__free(vals);
        sleapc__free(si);
        sleapc__free(ci);
        sleapc__free(pts);
        sleapc__free(pv);
        sleapc__free(cp);
        sleapc__free(sc);
        sleapc__free(tr);
    }
    sleapc__free(input.data);
    sleapc__free(cms.data);
    sleapc__free(maps.data);
    cJSON_Delete(m);
}

static void test_topdown_case(const char *id)
{
    sleapc_tensor vecs = { 0 }, cen = { 0 }, inds_want = { 0 };
    if (!ref_load(id, "multiclass_centered_instance.head.ClassVectorsHead", &vecs) ||
        !ref_load(id, "out.pred_centroids", &cen) ||
        !ref_load(id, "out.pred_class_inds", &inds_want))
        goto done;
    const int64_t n_crops = vecs.shape[0], n_classes = vecs.shape[1];
    const int64_t b_n = cen.shape[0], i_n = cen.shape[1], n_nodes = inds_want.shape[2];
    /* Crops follow the valid centroid slots in (frame, slot) order. */
    int64_t *frame = sleapc__malloc((size_t)(n_crops + 1) * sizeof(int64_t));
    int64_t *slot = sleapc__malloc((size_t)(n_crops + 1) * sizeof(int64_t));
    int64_t n = 0;
    const float *c = cen.data;
    for (int64_t b = 0; b < b_n; b++) {
        for (int64_t i = 0; i < i_n; i++) {
            if (!isnan(c[(b * i_n + i) * 2]) && n < n_crops) {
                frame[n] = b;
                slot[n++] = i;
            }
        }
    }
    CHECK_MSG(n == n_crops, "%s: %lld valid centroids, %lld crops", id, (long long)n,
              (long long)n_crops);
    int64_t *inds = sleapc__malloc((size_t)(b_n * i_n * n_nodes) * sizeof(int64_t));
    float *track = sleapc__malloc((size_t)(b_n * i_n) * sizeof(float));
    float *cv = sleapc__malloc((size_t)(b_n * i_n * n_classes) * sizeof(float));
    CHECK_OK(sleapc__identity_topdown_assign(vecs.data, n, n_classes, frame, slot, b_n, i_n,
                                             n_nodes, NULL, inds, track, cv));
    /* A kept workspace: the same bits, and nothing allocated the second time. */
    int64_t *winds = sleapc__malloc((size_t)(b_n * i_n * n_nodes) * sizeof(int64_t));
    float *wtrack = sleapc__malloc((size_t)(b_n * i_n) * sizeof(float));
    float *wcv = sleapc__malloc((size_t)(b_n * i_n * n_classes) * sizeof(float));
    sleapc_identity_ws ws = { 0 };
    for (int rep = 0; rep < 2; rep++) {
        const int64_t before = sleapc__alloc_count();
        CHECK_OK(sleapc__identity_topdown_assign(vecs.data, n, n_classes, frame, slot, b_n, i_n,
                                                 n_nodes, &ws, winds, wtrack, wcv));
        const int64_t n_alloc = sleapc__alloc_count() - before;
        if (rep == 1)
            CHECK_MSG(n_alloc == 0, "%s: %lld allocations with a kept workspace", id,
                      (long long)n_alloc);
    }
    CHECK_MSG(!memcmp(winds, inds, (size_t)(b_n * i_n * n_nodes) * sizeof(int64_t)) &&
                  !memcmp(wtrack, track, (size_t)(b_n * i_n) * sizeof(float)) &&
                  !memcmp(wcv, cv, (size_t)(b_n * i_n * n_classes) * sizeof(float)),
              "%s: results differ with a workspace", id);
    sleapc__identity_ws_free(&ws);
    sleapc__free(winds);
    sleapc__free(wtrack);
    sleapc__free(wcv);
    const int64_t *want = inds_want.data;
    int64_t n_bad = 0;
    for (int64_t j = 0; j < b_n * i_n * n_nodes; j++)
        n_bad += inds[j] != want[j];
    CHECK_MSG(n_bad == 0, "%s: %lld class indices differ", id, (long long)n_bad);
    printf("%-46s %-30s %lld of %lld differ\n", id, "out.pred_class_inds", (long long)n_bad,
           (long long)(b_n * i_n * n_nodes));
    /* Copies of the head's float32 values: exact. */
    compare(id, "out.instance_tracking_scores", track, b_n * i_n, 0.0, true);
    compare(id, "out.pred_class_vectors", cv, b_n * i_n * n_classes, 0.0, true);
    sleapc__free(frame);
    sleapc__free(slot);
    sleapc__free(inds);
    sleapc__free(track);
    sleapc__free(cv);
done:
    sleapc__free(vecs.data);
    sleapc__free(cen.data);
    sleapc__free(inds_want.data);
}

int main(void)
{
    test_classify_peaks();
    test_bottomup_finish();
    test_class_vectors();
    test_workspace();

    test_require_data();
    static ref_cases all;
    ref_list_cases(&all);
    int n_bu = 0, n_td = 0;
    for (int i = 0; i < all.n; i++) {
        const char *id = all.ids[i];
        if (strstr(id, "multiclass_bottomup__")) {
            test_bottomup_case(id);
            n_bu++;
        } else if (strstr(id, "multiclass_topdown__")) {
            test_topdown_case(id);
            n_td++;
        }
    }
    CHECK_MSG(n_bu >= 4 && n_td >= 5, "found %d bottom-up and %d top-down multi-class cases",
              n_bu, n_td);
    return test_finish();
}
