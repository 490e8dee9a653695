/* Preprocessing ops: channel coercion, size matcher, input scale, stride pad,
 * the antialiased resize, and the whole chain against sleap-nn's model inputs
 * in the reference cases. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/channels_u8.h"
#include "core/resize_aa.h"
#include "layers/ops/preprocess.h"
#include "ops_ref_cases.h"
#include "test_util.h"

static void test_luma_truncates(void)
{
    /* The coefficients sum to 0.9999 and the cast truncates, so every nonzero
     * neutral gray loses one level (spec 2.2). */
    CHECK(sleapc__channels_luma_u8(0, 0, 0) == 0);
    int n_bad = 0;
    for (int v = 1; v < 256; v++)
        n_bad += sleapc__channels_luma_u8((uint8_t)v, (uint8_t)v, (uint8_t)v) != v - 1;
    CHECK_MSG(n_bad == 0, "%d gray levels did not become v-1", n_bad);
    /* Pure channels: floor(255 * coefficient). */
    CHECK(sleapc__channels_luma_u8(255, 0, 0) == 76);  /* 76.2195 */
    CHECK(sleapc__channels_luma_u8(0, 255, 0) == 149); /* 149.685 */
    CHECK(sleapc__channels_luma_u8(0, 0, 255) == 29);  /* 29.07 */
}

static void test_coerce(void)
{
    /* 3 -> 1 on a (3, 1, 4) image of neutral pixels. */
    const uint8_t rgb[12] = {0, 1, 128, 255, 0, 1, 128, 255, 0, 1, 128, 255};
    uint8_t gray[4];
    CHECK_OK(sleapc__channels_coerce_u8(rgb, 3, 1, 4, false, true, gray));
    CHECK(gray[0] == 0 && gray[1] == 0 && gray[2] == 127 && gray[3] == 254);
    CHECK(sleapc__channels_coerced(3, false, true) == 1);
    CHECK(sleapc__channels_coerced(1, false, true) == 1);

    /* 1 -> 3 replicates; ensure_rgb wins over ensure_grayscale. */
    const uint8_t one[4] = {9, 8, 7, 6};
    uint8_t three[12];
    CHECK_OK(sleapc__channels_coerce_u8(one, 1, 2, 2, true, true, three));
    for (int k = 0; k < 3; k++)
        CHECK(memcmp(three + 4 * k, one, 4) == 0);

    /* 4 -> 3 drops alpha. */
    uint8_t rgba[16];
    for (int i = 0; i < 16; i++)
        rgba[i] = (uint8_t)i;
    CHECK_OK(sleapc__channels_coerce_u8(rgba, 4, 2, 2, true, false, three));
    CHECK(memcmp(three, rgba, 12) == 0);

    /* Neither flag: a copy. A 2-channel image cannot be coerced. */
    uint8_t copy[4];
    CHECK_OK(sleapc__channels_coerce_u8(one, 1, 2, 2, false, false, copy));
    CHECK(memcmp(copy, one, 4) == 0);
    CHECK(sleapc__channels_coerce_u8(rgba, 2, 2, 2, false, true, copy) == SLEAPC_ERR_UNSUPPORTED);
    CHECK(sleapc__channels_coerce_u8(NULL, 1, 2, 2, false, true, copy) == SLEAPC_ERR_INVALID_ARG);
}

static void test_sizes(void)
{
    int64_t h = 0, w = 0;
    double eff = 0;
    /* Equal sizes and unset targets: no-op, eff 1. */
    CHECK_OK(sleapc__preprocess_size_match(384, 384, 384, 384, &h, &w, &eff));
    CHECK(h == 384 && w == 384 && eff == 1.0);
    CHECK_OK(sleapc__preprocess_size_match(300, 200, 0, 0, &h, &w, &eff));
    CHECK(h == 300 && w == 200 && eff == 1.0);
    /* wr < hr: the width ratio wins. */
    CHECK_OK(sleapc__preprocess_size_match(300, 360, 384, 384, &h, &w, &eff));
    CHECK(h == 320 && w == 384 && eff == 384.0 / 360.0);
    /* Ties pick hr; here hr = 1, so the frame is only padded. */
    CHECK_OK(sleapc__preprocess_size_match(384, 300, 384, 384, &h, &w, &eff));
    CHECK(h == 384 && w == 300 && eff == 1.0);
    /* Python round() is half-to-even: 2.5 -> 2 and 3.5 -> 4. */
    CHECK_OK(sleapc__preprocess_size_match(2, 5, 1, 100, &h, &w, &eff));
    CHECK(h == 1 && w == 2 && eff == 0.5);
    CHECK_OK(sleapc__preprocess_size_match(2, 7, 1, 100, &h, &w, &eff));
    CHECK(h == 1 && w == 4);
    CHECK(sleapc__preprocess_size_match(0, 7, 1, 100, &h, &w, &eff) == SLEAPC_ERR_INVALID_ARG);

    /* Input scale truncates like Python int(). */
    CHECK_OK(sleapc__preprocess_scaled_size(161, 281, 0.5, &h, &w));
    CHECK(h == 80 && w == 140);
    CHECK(sleapc__preprocess_scaled_size(1, 1, 0.5, &h, &w) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__preprocess_scaled_size(10, 10, -1.0, &h, &w) == SLEAPC_ERR_INVALID_ARG);

    CHECK_OK(sleapc__preprocess_stride_size(97, 104, 8, &h, &w));
    CHECK(h == 104 && w == 104);
    CHECK_OK(sleapc__preprocess_stride_size(97, 3, 1, &h, &w));
    CHECK(h == 97 && w == 3);
}

static void test_pad(void)
{
    const uint8_t src[2 * 2 * 3] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    uint8_t dst[2 * 3 * 4];
    memset(dst, 0xAA, sizeof dst);
    CHECK_OK(sleapc__preprocess_pad_u8(src, 2, 2, 3, dst, 3, 4));
    const uint8_t want[2 * 3 * 4] = {1, 2, 3, 0, 4,  5,  6,  0, 0, 0, 0, 0,
                                     7, 8, 9, 0, 10, 11, 12, 0, 0, 0, 0, 0};
    CHECK(memcmp(dst, want, sizeof want) == 0);
    CHECK(sleapc__preprocess_pad_u8(src, 2, 2, 3, dst, 1, 4) == SLEAPC_ERR_INVALID_ARG);
}

/* Resize with a scratch block of the announced size. */
static sleapc_status resize_u8(const uint8_t *src, int64_t c, int64_t ih, int64_t iw, uint8_t *dst,
                               int64_t oh, int64_t ow)
{
    size_t n = 0;
    sleapc_status st = sleapc__resize_aa_scratch_size(c, ih, iw, oh, ow, &n);
    if (st)
        return st;
    void *scratch = n ? sleapc__malloc(n) : NULL;
    st = sleapc__resize_aa_u8(src, c, ih, iw, dst, oh, ow, scratch);
    sleapc__free(scratch);
    return st;
}

static void test_resize_small(void)
{
    /* 1x4 -> 1x2 by hand from the spec 2.3 recipe: scale 2, support 2,
     * invscale 0.5; output 0 has taps 0..2 with weights 3/7, 3/7, 1/7, output 1
     * taps 1..3 with 1/7, 3/7, 3/7: 50/7 = 7.14 -> 7 and 160/7 = 22.9 -> 23. */
    const uint8_t row[4] = {0, 10, 20, 30};
    uint8_t out[2];
    CHECK_OK(resize_u8(row, 1, 1, 4, out, 1, 2));
    CHECK_MSG(out[0] == 7 && out[1] == 23, "got %d %d", out[0], out[1]);

    /* Same size: a copy, and no scratch needed. */
    size_t n = 1;
    CHECK_OK(sleapc__resize_aa_scratch_size(3, 5, 7, 5, 7, &n));
    CHECK(n == 0);

    /* A constant image stays constant whether shrunk or grown (the weights are
     * normalised). */
    uint8_t flat[3 * 17 * 23];
    memset(flat, 201, sizeof flat);
    uint8_t big[3 * 40 * 9];
    CHECK_OK(resize_u8(flat, 3, 17, 23, big, 40, 9));
    int n_off = 0;
    for (size_t i = 0; i < sizeof big; i++)
        n_off += big[i] != 201;
    CHECK_MSG(n_off == 0, "%d pixels moved off the constant", n_off);

    /* The uint8 path is the float path rounded half-to-even. */
    uint8_t src[2 * 31 * 29];
    float srcf[2 * 31 * 29];
    unsigned seed = 12345;
    for (size_t i = 0; i < sizeof src; i++) {
        seed = seed * 1103515245u + 12345u;
        src[i] = (uint8_t)(seed >> 16);
        srcf[i] = (float)src[i];
    }
    uint8_t dst8[2 * 13 * 47];
    float dstf[2 * 13 * 47];
    size_t ns = 0;
    CHECK_OK(sleapc__resize_aa_scratch_size(2, 31, 29, 13, 47, &ns));
    void *scratch = sleapc__malloc(ns);
    CHECK_OK(sleapc__resize_aa_u8(src, 2, 31, 29, dst8, 13, 47, scratch));
    CHECK_OK(sleapc__resize_aa_f32(srcf, 2, 31, 29, dstf, 13, 47, scratch));
    sleapc__free(scratch);
    int n_mismatch = 0;
    for (size_t i = 0; i < sizeof dst8; i++)
        n_mismatch += dst8[i] != (uint8_t)nearbyintf(dstf[i]);
    CHECK(n_mismatch == 0);

    CHECK(sleapc__resize_aa_u8(src, 2, 31, 29, dst8, 0, 47, NULL) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc__resize_aa_u8(src, 2, 31, 29, dst8, 13, 47, NULL) == SLEAPC_ERR_INVALID_ARG);
}

static void test_plan_errors(void)
{
    sleapc_preprocess_plan p;
    sleapc_preprocess_opts o = {.scale = 1.0};
    CHECK(sleapc__preprocess_plan_make(&o, 1, 0, 5, &p) == SLEAPC_ERR_INVALID_ARG);
    o.ensure_grayscale = true;
    CHECK(sleapc__preprocess_plan_make(&o, 2, 5, 5, &p) == SLEAPC_ERR_UNSUPPORTED);
    o.ensure_grayscale = false;
    o.scale = 0.0;
    CHECK(sleapc__preprocess_plan_make(&o, 1, 5, 5, &p) == SLEAPC_ERR_INVALID_ARG);
}

/* frame.npy + the first stage's pipeline block -> <stage>.input.npy. */
static void check_case(const char *id)
{
    cJSON *m = ref_manifest(id);
    if (!m)
        return;
    const cJSON *pipe = ref_obj(m, "pipeline");
    const cJSON *stage_cfg = ref_obj(pipe, "centroid_stage");
    if (!stage_cfg)
        stage_cfg = pipe;
    const char *stage = ref_stage(m, 0);
    char input_name[256];
    snprintf(input_name, sizeof input_name, "%s.input", stage ? stage : "?");
    if (!stage || !ref_has(id, "frame") || !ref_has(id, input_name)) {
        /* Only legacy cases may lack files. */
        CHECK_MSG(strncmp(id, "legacy_", 7) == 0, "%s: frame or %s missing", id, input_name);
        cJSON_Delete(m);
        return;
    }

    sleapc_tensor frame, want;
    if (!ref_load(id, "frame", &frame)) {
        cJSON_Delete(m);
        return;
    }
    if (!ref_load(id, input_name, &want)) {
        sleapc__free(frame.data);
        cJSON_Delete(m);
        return;
    }
    uint8_t *chw = ref_hwc_to_chw(&frame);
    const sleapc_preprocess_opts opts = ref_opts(stage_cfg);
    sleapc_preprocess_plan plan;
    CHECK_OK(
        sleapc__preprocess_plan_make(&opts, frame.shape[2], frame.shape[0], frame.shape[1], &plan));
    /* want: (B=1, 1, C, H, W) */
    CHECK_MSG(want.ndim == 5 && want.shape[2] == plan.c && want.shape[3] == plan.out_h &&
                  want.shape[4] == plan.out_w,
              "%s: planned (%lld,%lld,%lld)", id, (long long)plan.c, (long long)plan.out_h,
              (long long)plan.out_w);

    /* eff_scale: sleap-nn stores it as float32. */
    const cJSON *calls = ref_obj(m, "preprocess_info_per_layer_call");
    const cJSON *eff_arr = ref_obj(cJSON_GetArrayItem(calls, 0), "eff_scale");
    const cJSON *eff0 = cJSON_GetArrayItem(eff_arr, 0);
    CHECK_MSG(cJSON_IsNumber(eff0) && (float)eff0->valuedouble == (float)plan.eff_scale,
              "%s: eff_scale %.9g", id, plan.eff_scale);

    const size_t n_out = (size_t)(plan.c * plan.out_h * plan.out_w);
    if (sleapc_tensor_numel(&want) == (int64_t)n_out) {
        uint8_t *got = sleapc__malloc(n_out);
        void *scratch = plan.scratch_bytes ? sleapc__malloc(plan.scratch_bytes) : NULL;
        CHECK_OK(sleapc__preprocess_run_u8(&plan, chw, got, scratch));
        const uint8_t *w8 = want.data;
        int64_t n_diff = 0;
        int max_diff = 0;
        for (size_t i = 0; i < n_out; i++) {
            const int d = abs((int)got[i] - (int)w8[i]);
            n_diff += d != 0;
            max_diff = d > max_diff ? d : max_diff;
        }
        const bool resized = plan.match_h != plan.src_h || plan.match_w != plan.src_w ||
                             plan.scaled_h != plan.sized_h || plan.scaled_w != plan.sized_w;
        printf("  %-48s %s  differing %lld/%zu, max |diff| %d\n", id,
               resized ? "resize" : "no resize", (long long)n_diff, n_out, max_diff);
        /* Exact everywhere: without a resize the chain is copies and zero pads;
         * with one, the reference used the float path that resize_aa.c
         * reproduces operation for operation (spec 2.3). */
        CHECK_MSG(n_diff == 0, "%s: %lld pixels differ (max %d)", id, (long long)n_diff, max_diff);
        sleapc__free(scratch);
        sleapc__free(got);
    }
    sleapc__free(chw);
    sleapc__free(frame.data);
    sleapc__free(want.data);
    cJSON_Delete(m);
}

int main(void)
{
    test_luma_truncates();
    test_coerce();
    test_sizes();
    test_pad();
    test_resize_small();
    test_plan_errors();

    test_require_data();
    ref_cases cases;
    ref_list_cases(&cases);
    CHECK(cases.n > 0);
    for (int i = 0; i < cases.n; i++)
        check_case(cases.ids[i]);
    return test_finish();
}
