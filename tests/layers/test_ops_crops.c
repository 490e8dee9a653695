/* Top-down crop ops: centred boxes, the first-box crop size quirk, integer
 * crop extraction with zero fill, then the whole stage-2 path of the
 * reference top-down cases (boxes, crops, crop preprocessing, global peaks on
 * the stored head output and the lift back to frame pixels). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "layers/ops/coords.h"
#include "layers/ops/crops.h"
#include "core/peaks.h"
#include "layers/ops/preprocess.h"
#include "ops_ref_cases.h"
#include "test_util.h"

static void test_bboxes(void)
{
    const float c[4] = {10.0f, 20.0f, NAN, 3.0f};
    float b[16];
    CHECK_OK(sleapc__crops_make_bboxes(c, 2, 4, 6, b));
    /* tl, tr, br, bl with the +-0.5 insets: x 10 -+ 3, y 20 -+ 2. */
    const float want[8] = {7.5f, 18.5f, 12.5f, 18.5f, 12.5f, 21.5f, 7.5f, 21.5f};
    CHECK(memcmp(b, want, sizeof want) == 0);
    CHECK(isnan(b[8]) && isnan(b[10]) && b[9] == 1.5f);
    int64_t h = 0, w = 0;
    CHECK_OK(sleapc__crops_size_from_bbox(b, &h, &w));
    CHECK(h == 4 && w == 6);
    CHECK(sleapc__crops_size_from_bbox(b + 8, &h, &w) == SLEAPC_ERR_INVALID_ARG);

    /* The size is trunc(float difference) + 1: a box 94.99 wide crops 95. */
    const float short_box[8] = {0.0f, 0.0f, 94.99f, 0.0f, 94.99f, 95.0f, 0.0f, 95.0f};
    CHECK_OK(sleapc__crops_size_from_bbox(short_box, &h, &w));
    CHECK(h == 96 && w == 95);
    CHECK(sleapc__crops_make_bboxes(c, 1, 0, 6, b) == SLEAPC_ERR_INVALID_ARG);
}

static void test_origin(void)
{
    /* Spec 7.4: for a centre c >= 0 the origin is floor(c + 0.5) - crop/2 for
     * even crops and floor(c) - crop//2 for odd ones. Centres on a 1/8 grid are
     * exact in float32, so this holds without rounding caveats. */
    int n_bad = 0;
    for (int i = 0; i < 8 * 300; i++) {
        const float c = (float)i / 8.0f;
        const float ctr[2] = {c, c};
        for (int64_t size = 95; size <= 96; size++) {
            float b[8];
            int64_t x0, y0;
            CHECK_OK(sleapc__crops_make_bboxes(ctr, 1, size, size, b));
            sleapc__crops_origin(b, size, size, &x0, &y0);
            const int64_t want = size % 2 == 0 ? (int64_t)floorf(c + 0.5f) - size / 2
                                               : (int64_t)floorf(c) - size / 2;
            n_bad += x0 != want || y0 != want;
        }
    }
    CHECK_MSG(n_bad == 0, "%d origins off", n_bad);
}

static void test_extract(void)
{
    /* Two 1x4x5 images holding 1..20 and 101..120. */
    uint8_t img[2 * 20];
    for (int i = 0; i < 20; i++) {
        img[i] = (uint8_t)(i + 1);
        img[20 + i] = (uint8_t)(i + 101);
    }
    /* 3x3 crops centred on (0, 0) of image 0, (4, 3) of image 1, and a NaN
     * centre, which lies outside everything. */
    const float ctr[6] = {0.0f, 0.0f, 4.0f, 3.0f, NAN, NAN};
    float b[24];
    CHECK_OK(sleapc__crops_make_bboxes(ctr, 3, 3, 3, b));
    const int32_t si[3] = {0, 1, 0};
    uint8_t out[3 * 9];
    memset(out, 0xAA, sizeof out);
    CHECK_OK(sleapc__crops_extract_u8(img, 2, 1, 4, 5, b, si, 3, 3, 3, out));
    const uint8_t want[3 * 9] = {0,   0,   0, 0,   1,   2, 0, 6, 7, /* top-left corner */
                                 114, 115, 0, 119, 120, 0, 0, 0, 0, /* bottom-right corner */
                                 0,   0,   0, 0,   0,   0, 0, 0, 0};
    CHECK(memcmp(out, want, sizeof want) == 0);

    float imgf[20], outf[9];
    for (int i = 0; i < 20; i++)
        imgf[i] = (float)(i + 1) / 4.0f;
    CHECK_OK(sleapc__crops_extract_f32(imgf, 1, 1, 4, 5, b, si, 1, 3, 3, outf));
    CHECK(outf[0] == 0.0f && outf[4] == 0.25f && outf[8] == 1.75f);

    const int32_t bad[1] = {2};
    CHECK(sleapc__crops_extract_u8(img, 2, 1, 4, 5, b, bad, 1, 3, 3, out) ==
          SLEAPC_ERR_INVALID_ARG);
}

/* Compare a float array with a reference array; exact (spec 6 and 7.4: boxes,
 * crop keypoints and lifted keypoints are bit-identical with the float32
 * recipe). */
static void expect_exact(const char *id, const char *name, const float *got, int64_t n)
{
    sleapc_tensor want;
    if (!ref_load(id, name, &want))
        return;
    CHECK_MSG(sleapc_tensor_numel(&want) == n, "%s: %s has %lld values, computed %lld", id, name,
              (long long)sleapc_tensor_numel(&want), (long long)n);
    if (sleapc_tensor_numel(&want) == n) {
        ref_diff d = {0};
        ref_diff_add(&d, got, want.data, n);
        printf("  %-48s %-26s max |err| %.3g (%lld of %lld not bit-equal)\n", id, name, d.max_abs,
               (long long)d.n_diff_bits, (long long)n);
        CHECK_MSG(d.n_diff_bits == 0 && d.n_nan_mismatch == 0, "%s: %s differs", id, name);
    }
    sleapc__free(want.data);
}

static void expect_bytes(const char *id, const char *name, const uint8_t *got, int64_t n)
{
    sleapc_tensor want;
    if (!ref_load(id, name, &want))
        return;
    CHECK_MSG(sleapc_tensor_numel(&want) == n, "%s: %s has %lld values, computed %lld", id, name,
              (long long)sleapc_tensor_numel(&want), (long long)n);
    if (sleapc_tensor_numel(&want) == n) {
        int64_t n_diff = 0;
        for (int64_t i = 0; i < n; i++)
            n_diff += got[i] != ((const uint8_t *)want.data)[i];
        printf("  %-48s %-26s differing %lld/%lld\n", id, name, (long long)n_diff, (long long)n);
        /* Crops are an integer gather and stage 2 has no resize here: exact. */
        CHECK_MSG(n_diff == 0, "%s: %s differs", id, name);
    }
    sleapc__free(want.data);
}

typedef struct topdown_case {
    const char *id;
    const cJSON *cfg_c, *cfg_ci;
    const char *ci_stage;
    int64_t crop_h, crop_w;
    sleapc_tensor frame, centroids;
    int64_t n_frames, n_slots;
    /* valid (frame, slot) pairs in row-major order */
    int64_t n;
    int32_t *frame_of;
    int64_t *slot_of;
} topdown_case;

static void check_topdown(const char *id, const cJSON *m)
{
    topdown_case t = {.id = id};
    const cJSON *pipe = ref_obj(m, "pipeline");
    t.cfg_c = ref_obj(pipe, "centroid_stage");
    t.cfg_ci = ref_obj(pipe, "centered_instance_stage");
    t.ci_stage = ref_stage(m, 1);
    const cJSON *crop = ref_obj(pipe, "crop_size");
    const cJSON *crop_h = cJSON_GetArrayItem(crop, 0), *crop_w = cJSON_GetArrayItem(crop, 1);
    CHECK_MSG(cJSON_IsNumber(crop_h) && cJSON_IsNumber(crop_w), "%s: no crop_size", id);
    if (!cJSON_IsNumber(crop_h) || !cJSON_IsNumber(crop_w))
        return;
    t.crop_h = (int64_t)crop_h->valuedouble;
    t.crop_w = (int64_t)crop_w->valuedouble;
    if (!t.ci_stage || !ref_has(id, "topdown.crops")) {
        CHECK_MSG(strncmp(id, "legacy_", 7) == 0, "%s: arrays missing", id);
        return;
    }
    if (!ref_load(id, "frame", &t.frame))
        return;
    if (!ref_load(id, "out.pred_centroids", &t.centroids)) {
        sleapc__free(t.frame.data);
        return;
    }
    t.n_frames = t.centroids.shape[0];
    t.n_slots = t.centroids.shape[1];
    const float *cen = t.centroids.data;

    /* Crop source: the frame through the centroid layer's size matcher only. */
    sleapc_preprocess_opts sm = {.scale = 1.0};
    sm.max_height = (int64_t)ref_num(t.cfg_c, "max_height", 0);
    sm.max_width = (int64_t)ref_num(t.cfg_c, "max_width", 0);
    const int64_t fc = t.frame.shape[2];
    sleapc_preprocess_plan plan;
    CHECK_OK(sleapc__preprocess_plan_make(&sm, fc, t.frame.shape[0], t.frame.shape[1], &plan));
    uint8_t *chw = ref_hwc_to_chw(&t.frame);
    uint8_t *sized = sleapc__malloc((size_t)(plan.c * plan.out_h * plan.out_w));
    void *scratch = plan.scratch_bytes ? sleapc__malloc(plan.scratch_bytes) : NULL;
    CHECK_OK(sleapc__preprocess_run_u8(&plan, chw, sized, scratch));
    sleapc__free(scratch);

    /* Valid centroids in (frame, slot) order, mapped into the sized image. */
    const int64_t n_max = t.n_frames * t.n_slots;
    float *centers = sleapc__malloc((size_t)(n_max * 2 + 2) * sizeof(float));
    t.frame_of = sleapc__malloc((size_t)(n_max + 1) * sizeof(int32_t));
    t.slot_of = sleapc__malloc((size_t)(n_max + 1) * sizeof(int64_t));
    for (int64_t k = 0; k < n_max; k++) {
        if (isnan(cen[2 * k]) || isnan(cen[2 * k + 1]))
            continue;
        centers[2 * t.n] = cen[2 * k];
        centers[2 * t.n + 1] = cen[2 * k + 1];
        t.frame_of[t.n] = (int32_t)(k / t.n_slots);
        t.slot_of[t.n] = k % t.n_slots;
        t.n++;
    }
    /* One frame per case, so one eff for all. */
    sleapc__coords_apply_eff_scale(centers, t.n, plan.eff_scale);

    float *bboxes = sleapc__malloc((size_t)(t.n * 8 + 8) * sizeof(float));
    CHECK_OK(sleapc__crops_make_bboxes(centers, t.n, t.crop_h, t.crop_w, bboxes));
    expect_exact(id, "topdown.crop_bboxes", bboxes, t.n * 8);

    int64_t ch = 0, cw = 0;
    CHECK_OK(sleapc__crops_size_from_bbox(bboxes, &ch, &cw));
    printf("  %-48s %lld crops of %lldx%lld (crop_size %lldx%lld)\n", id, (long long)t.n,
           (long long)ch, (long long)cw, (long long)t.crop_h, (long long)t.crop_w);
    const int64_t crop_numel = plan.c * ch * cw;
    uint8_t *crops = sleapc__malloc((size_t)(t.n * crop_numel + 1));
    CHECK_OK(sleapc__crops_extract_u8(sized, 1, plan.c, plan.out_h, plan.out_w, bboxes, t.frame_of,
                                      t.n, ch, cw, crops));
    expect_bytes(id, "topdown.crops", crops, t.n * crop_numel);

    /* Stage 2 input: only the CI scale and the pad to the CI max stride. */
    sleapc_preprocess_opts ci = {.scale = ref_num(t.cfg_ci, "scale", 1.0),
                                 .max_stride = (int64_t)ref_num(t.cfg_ci, "max_stride", 1)};
    sleapc_preprocess_plan p2;
    CHECK_OK(sleapc__preprocess_plan_make(&ci, plan.c, ch, cw, &p2));
    const int64_t in_numel = p2.c * p2.out_h * p2.out_w;
    uint8_t *inputs = sleapc__malloc((size_t)(t.n * in_numel + 1));
    void *scratch2 = p2.scratch_bytes ? sleapc__malloc(p2.scratch_bytes) : NULL;
    for (int64_t k = 0; k < t.n; k++)
        CHECK_OK(sleapc__preprocess_run_u8(&p2, crops + k * crop_numel, inputs + k * in_numel,
                                           scratch2));
    sleapc__free(scratch2);
    char name[256];
    snprintf(name, sizeof name, "%s.input", t.ci_stage);
    expect_bytes(id, name, inputs, t.n * in_numel);

    /* Stage 2 peaks on the stored head output, crop-local ladder, lift. */
    snprintf(name, sizeof name, "%s.head.CenteredInstanceConfmapsHead", t.ci_stage);
    sleapc_tensor cms;
    if (t.n > 0 && ref_load(id, name, &cms)) {
        const int64_t nn = cms.shape[1];
        CHECK(cms.shape[0] == t.n);
        const int64_t n_out = n_max * nn;
        float *pk = sleapc__malloc((size_t)(t.n * nn * 2) * sizeof(float));
        float *vals = sleapc__malloc((size_t)(t.n * nn) * sizeof(float));
        const cJSON *pp = ref_obj(t.cfg_ci, "postprocess");
        const cJSON *ref = ref_obj(pp, "refinement");
        const int k = cJSON_IsString(ref) && strcmp(ref->valuestring, "integral") == 0
                          ? (int)ref_num(pp, "integral_patch_size", 5)
                          : 0;
        CHECK_OK(sleapc__peaks_find_global(cms.data, t.n, nn, cms.shape[2], cms.shape[3],
                                           ref_num(pp, "peak_threshold", 0.2), k, pk, vals));
        sleapc__coords_undo_stride(pk, t.n * nn, ref_num(t.cfg_ci, "output_stride", 1));
        sleapc__coords_undo_input_scale(pk, t.n * nn, ci.scale);

        float *crop_kp = sleapc__malloc((size_t)n_out * 2 * sizeof(float));
        float *kp = sleapc__malloc((size_t)n_out * 2 * sizeof(float));
        float *pv = sleapc__malloc((size_t)n_out * sizeof(float));
        float *ib = sleapc__malloc((size_t)n_max * 8 * sizeof(float));
        for (int64_t i = 0; i < n_out * 2; i++)
            crop_kp[i] = kp[i] = NAN;
        for (int64_t i = 0; i < n_out; i++)
            pv[i] = NAN;
        for (int64_t i = 0; i < n_max * 8; i++)
            ib[i] = NAN;
        for (int64_t j = 0; j < t.n; j++) {
            const int64_t slot = t.frame_of[j] * t.n_slots + t.slot_of[j];
            float *ck = crop_kp + slot * nn * 2;
            float *fk = kp + slot * nn * 2;
            memcpy(ck, pk + j * nn * 2, (size_t)nn * 2 * sizeof(float));
            memcpy(fk, ck, (size_t)nn * 2 * sizeof(float));
            memcpy(pv + slot * nn, vals + j * nn, (size_t)nn * sizeof(float));
            /* Lift by the fractional box top-left, then back to the frame. */
            sleapc__coords_add_offset(fk, nn, bboxes[8 * j], bboxes[8 * j + 1]);
            sleapc__coords_undo_eff_scale(fk, nn, plan.eff_scale);
            memcpy(ib + slot * 8, bboxes + 8 * j, 8 * sizeof(float));
            sleapc__coords_undo_eff_scale(ib + slot * 8, 4, plan.eff_scale);
        }
        expect_exact(id, "out.pred_crop_keypoints", crop_kp, n_out * 2);
        expect_exact(id, "out.pred_keypoints", kp, n_out * 2);
        expect_exact(id, "out.pred_peak_values", pv, n_out);
        expect_exact(id, "out.instance_bboxes", ib, n_max * 8);
        sleapc__free(crop_kp);
        sleapc__free(kp);
        sleapc__free(pv);
        sleapc__free(ib);
        sleapc__free(pk);
        sleapc__free(vals);
        sleapc__free(cms.data);
    }

    sleapc__free(inputs);
    sleapc__free(crops);
    sleapc__free(bboxes);
    sleapc__free(centers);
    sleapc__free(t.frame_of);
    sleapc__free(t.slot_of);
    sleapc__free(sized);
    sleapc__free(chw);
    sleapc__free(t.centroids.data);
    sleapc__free(t.frame.data);
}

int main(void)
{
    test_bboxes();
    test_origin();
    test_extract();

    test_require_data();
    /* reference/, then the ConvNeXt/SwinT top-down pair of reference-backbones/. */
    const char *folders[] = {"reference", "reference-backbones"};
    for (int f = 0; f < 2; f++) {
        static ref_cases cases;
        ref_use_folder(folders[f]);
        ref_list_cases(&cases);
        CHECK(cases.n > 0);
        for (int i = 0; i < cases.n; i++) {
            cJSON *m = ref_manifest(cases.ids[i]);
            if (!m)
                continue;
            const cJSON *type = ref_obj(m, "model_type");
            if (cJSON_IsString(type) && strstr(type->valuestring, "topdown"))
                check_topdown(cases.ids[i], m);
            cJSON_Delete(m);
        }
    }
    return test_finish();
}
