/* Top-down with its preprocessing on the Vulkan device (backend.h's
 * windows, layers/stage_windows.c), end to end against sleap-nn: the
 * reference pair of a SwinT centroid model at input scale 0.5 and a
 * ConvNeXt centered-instance model (reference-backbones, centered_pair
 * frame 0, both stages under 2 GFLOP). The centroid stage's frame goes up
 * at full size and is scaled on the device; the centered-instance crops are
 * cut there from the uploaded frame. Keypoints, centroids and crop
 * keypoints within 0.02 px of sleap-nn's, as test_predict_reference, with
 * both device paths seen to run (sleapc__vulkan_window_stats) and the
 * validation layer silent. The frame runs twice in a batch (crops of both
 * frames from one upload). The host path gives the same distances (0.0194
 * px at most, the case's own). Skipped (77) without the data or a Vulkan
 * device. */
#define REF_DIR "reference-backbones"
#include "../layers/ops_ref_cases.h"
#include "pipeline/predictor_impl.h"
#include "../backends/vulkan_test_device.h"

#if !SLEAPC_HAVE_VULKAN
int main(void)
{
    printf("skipped: the vulkan backend is not built\n");
    return 77;
}
#else
#include "backends/vulkan/vulkan_backend.h"

#define PX_TOL 0.02
static const char *const CASE = "convnext_swint_topdown__centered_pair_f0000_thr0.75";

static void cmp_px(const char *what, const float *got, const float *want, int64_t n)
{
    int64_t nan_mismatch = 0;
    double worst = 0;
    for (int64_t k = 0; k < n; k++) {
        if (isnan(got[k]) != isnan(want[k]))
            nan_mismatch++;
        else if (!isnan(want[k]))
            worst = fmax(worst, fabs((double)got[k] - want[k]));
    }
    CHECK_MSG(nan_mismatch == 0 && worst <= PX_TOL, "%s: %lld NaN mismatches, max error %.4g px",
              what, (long long)nan_mismatch, worst);
    printf("%s: max %.4g px from sleap-nn's\n", what, worst);
}

/* Frame k of p's last run against the case's outputs. */
static void check_frame(const sleapc_layer_outputs *o, int64_t k)
{
    const char *names[] = {"out.pred_keypoints", "out.pred_centroids", "out.pred_crop_keypoints"};
    for (int i = 0; i < 3; i++) {
        sleapc_tensor t = {0};
        if (!ref_load(CASE, names[i], &t)) {
            CHECK_MSG(false, "%s: no %s", CASE, names[i]);
            continue;
        }
        int64_t I = t.shape[1], per = sleapc_tensor_numel(&t) / (t.shape[0] * I);
        CHECK_MSG(o->n_slots == I, "%lld slots, want %lld", (long long)o->n_slots, (long long)I);
        if (o->n_slots == I) {
            const float *got = i == 0   ? o->keypoints
                               : i == 1 ? o->centroids
                                        : o->crop_keypoints;
            char what[96];
            snprintf(what, sizeof what, "frame %lld %s", (long long)k, names[i] + 4);
            cmp_px(what, got + k * I * per, t.data, I * per);
        }
        sleapc__free(t.data);
    }
}

int main(void)
{
    test_require_data();
    if (!vulkan_test_factory())
        return 77;
    cJSON *m = ref_manifest(CASE);
    if (!m) {
        printf("skipped: %s not found\n", CASE);
        return 77;
    }
    char dirs[2][2048];
    const int n = ref_model_dirs(m, dirs);
    CHECK(n == 2);
    const cJSON *pc = ref_obj(m, "predict_call");
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.backend = "vulkan";
    o.n_threads = 2;
    o.peak_threshold = ref_num(pc, "peak_threshold", 0.2);
    o.integral_refinement = true;
    o.integral_patch_size = (int)ref_num(pc, "integral_patch_size", 5);
    const char *paths[2] = {dirs[0], dirs[1]};
    sleapc_predictor *p = NULL;
    sleapc_tensor frame = {0};
    if (n == 2)
        CHECK_OK(sleapc_predictor_create(paths, 2, &o, &p));
    int64_t resized0 = 0, cut0 = 0, resized = 0, cut = 0;
    sleapc__vulkan_window_stats(&resized0, &cut0);
    if (p && ref_load(CASE, "frame", &frame)) {
        int64_t px = sleapc_tensor_numel(&frame);
        sleapc_tensor two = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4,
                             .shape = {2, frame.shape[0], frame.shape[1],
                                       frame.ndim == 3 ? frame.shape[2] : 1}};
        two.data = malloc((size_t)px * 2);
        if (!two.data)
            abort();
        memcpy(two.data, frame.data, (size_t)px);
        memcpy((uint8_t *)two.data + px, frame.data, (size_t)px);
        CHECK_OK(test_run_array(p, &two));
        check_frame(&p->outputs, 0);
        check_frame(&p->outputs, 1);
        free(two.data);
    }
    sleapc__vulkan_window_stats(&resized, &cut);
    CHECK_MSG(resized - resized0 >= 1 && cut - cut0 >= 1,
              "the device cut %lld inputs, resized %lld: both paths should have run",
              (long long)(cut - cut0), (long long)(resized - resized0));
    bool layer_on = false;
    int64_t messages = -1;
    sleapc__vulkan_validation_stats(&layer_on, &messages);
    CHECK_MSG(layer_on && messages == 0, "validation layer %s, %lld messages",
              layer_on ? "on" : "off", (long long)messages);
    sleapc__free(frame.data);
    sleapc_predictor_destroy(p);
    cJSON_Delete(m);
    return test_finish();
}
#endif
