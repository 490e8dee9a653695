/* --precision fp16 on the Vulkan backend end to end: the first batch runs
 * once more in float32 and fp16 is kept only within its budgets
 * (SLEAPC_FP16_HEAD_BUDGET, SLEAPC_BF16_PEAK_BUDGET), else the stage runs
 * float32 and one warning says why, naming what fp16 computed; the .slp's
 * provenance records the precision that ran, the check's measures and, for
 * fp16, whether the products were binary16 too ("fp16_arithmetic": the
 * device has shaderFloat16, as lavapipe does) or storage only
 * (SLEAPC_VULKAN_FP16_MATH=0); from the second batch on, a single-instance
 * stage finds its global peaks on the device. Two small sleap-nn models run both ways on
 * one frame, with the validation layer on (zero messages). Skipped (77) where the backend is not
 * built or Vulkan lists no device. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/bf16_policy.h"
#include "io/slp/slp_read.h"
#include "sleapc/predictor.h"
#include "sleapc/runner.h"
#include "sleapc/video.h"
#include "sleapc/writer.h"
#include "test_util.h"

#if !SLEAPC_HAVE_VULKAN
int main(void)
{
    printf("skipped: the vulkan backend is not built\n");
    return 77;
}
#else
#include "backends/vulkan/vulkan_backend.h"

static int fp16_warnings, device_peaks;
static char warning[1024];

static void on_log(sleapc_log_level level, const char *msg, void *user)
{
    (void)user;
    if (level == SLEAPC_LOG_WARN && strncmp(msg, "fp16:", 5) == 0) {
        fp16_warnings++;
        snprintf(warning, sizeof warning, "%s", msg);
    }
    if (level == SLEAPC_LOG_INFO && strstr(msg, "global peaks of") && strstr(msg, "on the device"))
        device_peaks++;
}

static const char *json_string(const cJSON *o, const char *key)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, key));
    return s ? s : "";
}

static cJSON *read_provenance(const char *path)
{
    sleapc_slp *r = NULL;
    CHECK_OK(sleapc__slp_open(path, &r));
    cJSON *prov = r ? cJSON_Parse(r->provenance) : NULL;
    CHECK_MSG(prov != NULL, "provenance: %s", r ? r->provenance : "(no file)");
    sleapc__slp_close(r);
    return prov;
}

/* Predict one frame with `model` in fp16 (math: fp16 arithmetic allowed;
 * force: kept whatever the check says, SLEAPC_BF16_FORCE, so that what a
 * kept fp16 stage records is checked too), write it, and check what was
 * recorded against what ran. */
static void check_model(const char *model, bool math, bool force, uint8_t *px, int64_t h, int64_t w,
                        int64_t c)
{
    if (force)
        test_setenv("SLEAPC_BF16_FORCE", "1");
    const char *models[1] = {model};
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.backend = "vulkan";
    o.precision = SLEAPC_PRECISION_FP16;
    test_setenv("SLEAPC_VULKAN_FP16_MATH", math ? "1" : "0");
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(models, 1, &o, &p));
    fp16_warnings = 0;
    device_peaks = 0;
    warning[0] = '\0';
    char path[1024];
    snprintf(path, sizeof path, "%s/fp16.slp", test_tmp_dir());
    sleapc_log_set(on_log, NULL);
    sleapc_tensor frames = {SLEAPC_DTYPE_U8, 4, {1, h, w, c}, px};
    if (p)
        CHECK_OK(test_run_array(p, &frames));
    /* The first batch's check needs the maps; from the second batch on a
     * single-instance stage finds its global peaks on the device, in fp16 or
     * in the float32 it fell back to. */
    int after_first = device_peaks;
    if (p)
        CHECK_OK(test_run_array(p, &frames));
    sleapc_log_set(NULL, NULL);
    if (strstr(model, "single_instance"))
        CHECK_MSG(after_first == 0 && device_peaks == 1,
                  "%s: device peaks asked for %d times after the first batch, %d before", model,
                  device_peaks - after_first, after_first);
    test_setenv("SLEAPC_VULKAN_FP16_MATH", NULL);
    test_setenv("SLEAPC_BF16_FORCE", NULL);
    sleapc_video_info info = {"frame.mp4", 1, h, w, c, NULL, NULL};
    sleapc_writer *wr = NULL;
    if (p)
        CHECK_OK(sleapc_writer_open(path, p, &info, 1, &wr));
    int64_t idx = 0;
    if (wr) {
        CHECK_OK(sleapc_writer_add(wr, p, 0, &idx));
        CHECK_OK(sleapc_writer_close(wr, NULL));
    }
    sleapc_stage_info si = {0};
    if (p)
        CHECK_OK(sleapc_predictor_stage_info(p, 0, &si));
    const char *name = strrchr(model, '/') ? strrchr(model, '/') + 1 : model;
    bool kept = si.precision == SLEAPC_PRECISION_FP16;
    bool within =
        si.bf16_error <= SLEAPC_FP16_HEAD_BUDGET && si.bf16_moved <= SLEAPC_BF16_PEAK_BUDGET;
    printf("%-36s fp16 %-22s heads %.2e from float32, %.2f%% expected to move: %s%s\n", name,
           math ? "storage and arithmetic" : "storage", si.bf16_error, 100 * si.bf16_moved,
           kept ? "kept" : "float32", force ? " (forced)" : "");
    /* Measured on the heads' maps (a rounded map is never bit-exact). */
    CHECK_MSG(si.bf16_error > 0 && si.bf16_moved >= 0, "%s: not checked (%.3g)", name,
              si.bf16_error);
    CHECK_MSG(kept == (within || force), "%s: kept %d, within the budgets %d", name, kept, within);
    CHECK_MSG(kept || si.precision == SLEAPC_PRECISION_FP32, "%s: ran %s", name,
              sleapc_precision_name(si.precision));
    CHECK_MSG(fp16_warnings == (kept ? 0 : 1), "%s: %d fp16 warnings", name, fp16_warnings);
    /* lavapipe has shaderFloat16: fp16 arithmetic runs there when allowed. */
    if (kept && strstr(si.device_name, "llvmpipe"))
        CHECK_MSG(si.fp16_arithmetic == (math ? 1 : 0), "%s: fp16_arithmetic %d", name,
                  si.fp16_arithmetic);
    if (!kept) {
        printf("  %s\n", warning);
        CHECK_MSG(strstr(warning, math ? "fp16 (storage" : "fp16 (storage)") != NULL,
                  "%s: the warning does not say what fp16 computed: %s", name, warning);
        CHECK(si.fp16_arithmetic == 0);
    }
    cJSON *prov = read_provenance(path);
    if (prov) {
        CHECK(strcmp(json_string(prov, "precision"), kept ? "fp16" : "fp32") == 0);
        CHECK(strcmp(json_string(prov, "precision_requested"), "fp16") == 0);
        const cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(prov, "stages"), 0);
        CHECK(strcmp(json_string(s0, "precision"), kept ? "fp16" : "fp32") == 0);
        const cJSON *arith = cJSON_GetObjectItemCaseSensitive(s0, "fp16_arithmetic");
        CHECK_MSG(kept ? cJSON_IsBool(arith) && cJSON_IsTrue(arith) == (si.fp16_arithmetic != 0)
                       : arith == NULL,
                  "%s: fp16_arithmetic recorded wrongly", name);
        double e = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(s0, "fp16_head_rel_l2"));
        CHECK_MSG(fabs(e - si.bf16_error) <= 1e-6 * si.bf16_error,
                  "%s: recorded %.3g, measured %.3g", name, e, si.bf16_error);
        cJSON_Delete(prov);
    }
    sleapc_predictor_destroy(p);
}

int main(void)
{
    test_require_data();
    bool have = false;
    for (int i = 0; i < sleapc_backend_count(); i++)
        have =
            have || (strcmp(sleapc_backend_name(i), "vulkan") == 0 && sleapc_backend_available(i));
    if (!have) {
        printf("skipped: no Vulkan device\n");
        return 77;
    }
    test_setenv("SLEAPC_VULKAN_VALIDATION", "1");
    /* Each model on a frame of the video it was trained on. The single
     * instance one runs forced (its peaks expected to move are near the 0.5%
     * budget, 0.58% on lavapipe): what a kept fp16 stage records; the
     * multi-class bottom-up one amplifies rounding (as with bf16) and falls
     * back: what a fallback records. */
    static const char *const cases[][2] = {
        {"minimal_instance_single_instance", "small_robot.mp4"},
        {"minimal_instance_multiclass_bottomup", "centered_pair_small.mp4"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "sleap-nn-assets/datasets/%s", cases[i][1]);
        sleapc_video *v = NULL;
        CHECK_OK(sleapc_video_open(test_data_path(path), &v));
        if (!v)
            continue;
        int64_t h = 0, w = 0, c = 0;
        sleapc_video_shape(v, &h, &w, &c);
        uint8_t *px = malloc((size_t)(h * w * c));
        CHECK(px != NULL);
        if (px)
            CHECK_OK(sleapc_video_read(v, 0, px));
        sleapc_video_close(v);
        snprintf(path, sizeof path, "sleap-nn-assets/model_ckpts/%s", cases[i][0]);
        char *model = strdup(test_data_path(path));
        CHECK(model != NULL);
        /* Under the sanitizers with fp16 arithmetic only: storage only
         * differs in the shaders chosen and one provenance flag. */
#ifdef SLEAPC_SANITIZED
        const int last_math = 1;
#else
        const int last_math = 0;
#endif
        for (int math = 1; model && px && math >= last_math; math--)
            check_model(model, math, i == 0, px, h, w, c);
        free(model);
        free(px);
    }
    bool layer_on = false;
    int64_t messages = -1;
    sleapc__vulkan_validation_stats(&layer_on, &messages);
    CHECK_MSG(layer_on, "the validation layer did not run (install vulkan-validationlayers)");
    CHECK_MSG(messages == 0, "%lld validation messages", (long long)messages);
    return test_finish();
}
#endif
