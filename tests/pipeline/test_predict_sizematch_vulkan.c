/* Top-down on Vulkan with sleap-nn's size matcher on the device (backend.h's
 * windows, layers/stage_windows.c): the reference pair of
 * test_predict_windows_vulkan (a SwinT centroid model at input scale 0.5
 * and max 384 x 384, a ConvNeXt centered-instance model) on a 300 x 360 crop
 * of its frame, which the size matcher resizes to 320 x 384 (eff_scale
 * 1.0667) and pads to 384 x 384 before the input scale halves it: the
 * frame goes up as it is and every step runs on the device, twice in a
 * batch. Keypoints, centroids and crop keypoints within 0.02 px (the
 * reference tests' bound) of the native backend's on the same frames, with
 * the same NaN pattern, the device's size matcher seen to run
 * (sleapc__vulkan_window_prep_stats) and the validation layer silent.
 * Skipped (77) without the data or a Vulkan device. */
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
enum { CROP_Y = 40, CROP_X = 12, CROP_H = 300, CROP_W = 360 };

static void cmp_px(const char *what, const float *got, const float *want, int64_t n)
{
    int64_t nan_mismatch = 0, n_found = 0;
    double worst = 0;
    for (int64_t k = 0; k < n; k++) {
        if (isnan(got[k]) != isnan(want[k]))
            nan_mismatch++;
        else if (!isnan(want[k]))
            worst = fmax(worst, fabs((double)got[k] - want[k])), n_found++;
    }
    CHECK_MSG(nan_mismatch == 0 && worst <= PX_TOL && n_found > 0,
              "%s: %lld NaN mismatches, %lld found, max error %.4g px", what,
              (long long)nan_mismatch, (long long)n_found, worst);
    printf("%s: %lld values, max %.4g px from the native backend's\n", what, (long long)n_found,
           worst);
}

/* A predictor of the pair on backend, run on frames; NULL on failure. */
static sleapc_predictor *run(const char *backend, const char *const paths[2],
                             const sleapc_tensor *frames)
{
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.backend = backend;
    o.n_threads = 2;
    o.peak_threshold = 0.75;
    o.integral_refinement = true;
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(paths, 2, &o, &p));
    if (p)
        CHECK_OK(test_run_array(p, frames));
    return p;
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
    const char *paths[2] = {dirs[0], dirs[1]};
    sleapc_tensor frame = {0};
    bool have = n == 2 && ref_load(CASE, "frame", &frame) && frame.ndim == 3 &&
                frame.shape[0] >= CROP_Y + CROP_H && frame.shape[1] >= CROP_X + CROP_W;
    CHECK_MSG(have, "%s: no frame of at least %dx%d", CASE, CROP_Y + CROP_H, CROP_X + CROP_W);
    if (have) {
        /* Two copies of the crop, (2, H, W, C). */
        const int64_t c = frame.shape[2], row = frame.shape[1] * c;
        const size_t px = (size_t)(CROP_H * CROP_W * c);
        uint8_t *two = malloc(2 * px);
        if (!two)
            abort();
        for (int64_t y = 0; y < CROP_H; y++)
            memcpy(two + (size_t)(y * CROP_W * c),
                   (const uint8_t *)frame.data + (CROP_Y + y) * row + CROP_X * c,
                   (size_t)(CROP_W * c));
        memcpy(two + px, two, px);
        sleapc_tensor t = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4,
                           .shape = {2, CROP_H, CROP_W, c}, .data = two};
        sleapc_predictor *host = run("native", paths, &t);
        int64_t matched0 = 0, matched = 0, cut0 = 0, cut = 0;
        sleapc__vulkan_window_prep_stats(&matched0, NULL);
        sleapc__vulkan_window_stats(NULL, &cut0);
        sleapc_predictor *dev = run("vulkan", paths, &t);
        sleapc__vulkan_window_prep_stats(&matched, NULL);
        sleapc__vulkan_window_stats(NULL, &cut);
        printf("the device size-matched %lld inputs, cut %lld\n", (long long)(matched - matched0),
               (long long)(cut - cut0));
        CHECK_MSG(matched - matched0 >= 2 && cut > cut0,
                  "the device's size matcher ran %lld times, crops were cut %lld times: both "
                  "stages should have run on it",
                  (long long)(matched - matched0), (long long)(cut - cut0));
        if (host && dev) {
            const sleapc_layer_outputs *a = &dev->outputs, *b = &host->outputs;
            CHECK_MSG(a->n_slots == b->n_slots && a->n_nodes == b->n_nodes &&
                          a->n_frames == 2 && b->n_frames == 2,
                      "vulkan: %lld slots of %lld nodes, native %lld of %lld",
                      (long long)a->n_slots, (long long)a->n_nodes, (long long)b->n_slots,
                      (long long)b->n_nodes);
            if (a->n_slots == b->n_slots && a->n_nodes == b->n_nodes && a->n_frames == 2) {
                const int64_t per = 2 * a->n_slots;
                cmp_px("centroids", a->centroids, b->centroids, per * 2);
                cmp_px("keypoints", a->keypoints, b->keypoints, per * a->n_nodes * 2);
                cmp_px("crop keypoints", a->crop_keypoints, b->crop_keypoints,
                       per * a->n_nodes * 2);
            }
        }
        sleapc_predictor_destroy(host);
        sleapc_predictor_destroy(dev);
        free(two);
    }
    bool layer_on = false;
    int64_t messages = -1;
    sleapc__vulkan_validation_stats(&layer_on, &messages);
    CHECK_MSG(layer_on && messages == 0, "validation layer %s, %lld messages",
              layer_on ? "on" : "off", (long long)messages);
    sleapc__free(frame.data);
    cJSON_Delete(m);
    return test_finish();
}
#endif
