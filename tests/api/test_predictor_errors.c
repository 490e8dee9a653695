/* The predictor refuses bad frames, bad model combinations and contradictory
 * options with a clear message, and copes with odd but valid frames. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sleapc/predictor.h"
#include "test_util.h"

static char dirs[4][1024];

static const char *model(const char *name)
{
    static int k;
    k = (k + 1) % 4;
    snprintf(dirs[k], sizeof dirs[k], "%s",
             test_data_path(name));
    return dirs[k];
}

static void expect_create_fails(const char *what, const char *const *paths, int n,
                                const sleapc_predictor_opts *o, const char *msg)
{
    sleapc_predictor *p = (sleapc_predictor *)1;
    sleapc_status st = sleapc_predictor_create(paths, n, o, &p);
    CHECK_MSG(st == SLEAPC_ERR_INVALID_ARG, "%s: %s (%s)", what, sleapc_status_str(st),
              sleapc_last_error());
    CHECK(p == NULL);
    CHECK_MSG(strstr(sleapc_last_error(), msg) != NULL, "%s: \"%s\" lacks \"%s\"", what,
              sleapc_last_error(), msg);
}

static void expect_run_fails(sleapc_predictor *p, const char *what, const sleapc_frame *f,
                             const char *msg)
{
    sleapc_status st = sleapc_predictor_run(p, f);
    CHECK_MSG(st == SLEAPC_ERR_INVALID_ARG, "%s: %s (%s)", what, sleapc_status_str(st),
              sleapc_last_error());
    CHECK_MSG(strstr(sleapc_last_error(), msg) != NULL, "%s: \"%s\" lacks \"%s\"", what,
              sleapc_last_error(), msg);
}

int main(void)
{
    test_require_data();
    const char *bu = model("sleap-nn-assets/model_ckpts/minimal_instance_bottomup");
    const char *si = model("sleap-nn-assets/model_ckpts/minimal_instance_single_instance");
    const char *ci = model("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance");
    const char *mct = model("sleap-nn-assets/model_ckpts/minimal_instance_multiclass_centered_instance");
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.n_threads = 2;

    /* Model combinations that do not form a pipeline. */
    const char *pair[2] = {bu, si};
    expect_create_fails("bottomup + single instance", pair, 2, &o, "top-down pair");
    const char *pair2[2] = {ci, mct};
    expect_create_fails("two stage-2 models", pair2, 2, &o, "top-down pair");
    const char *alone[1] = {mct};
    expect_create_fails("multi-class top-down alone", alone, 1, &o, "centroid");
    const char *three[3] = {bu, si, ci};
    expect_create_fails("three models", three, 3, &o, "one or two");

    /* Contradictory or out-of-range options. */
    const char *one[1] = {bu};
    sleapc_predictor_opts bad = o;
    bad.ensure_rgb = 1;
    bad.ensure_grayscale = 1;
    expect_create_fails("rgb and grayscale", one, 1, &bad, "contradict");
    bad = o;
    bad.batch_size = 0;
    expect_create_fails("batch size 0", one, 1, &bad, "batch_size");
    bad = o;
    bad.peak_threshold = 1.5;
    expect_create_fails("threshold 1.5", one, 1, &bad, "peak_threshold");
    bad = o;
    bad.integral_patch_size = 0;
    expect_create_fails("patch size 0", one, 1, &bad, "integral_patch_size");

    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(one, 1, &o, &p));
    if (!p)
        return test_finish();
    uint8_t px[2 * 64 * 64 * 3] = {0};
    sleapc_frame t = {.data = px, .n_frames = 1, .height = 64, .width = 64, .format = 3};
    expect_run_fails(p, "unknown pixel format", &t, "pixel format");
    t.format = SLEAPC_PIXEL_FORMAT_GRAY8;
    t.n_frames = -1;
    expect_run_fails(p, "-1 frames", &t, "-1 frames");
    t.n_frames = (int64_t)1 << 62;
    expect_run_fails(p, "2^62 frames", &t, "too many");
    t.n_frames = 1;
    t.height = t.width = 0;
    expect_run_fails(p, "0x0 frame", &t, "frame size");
    t.height = t.width = 64;
    t.row_stride_bytes = 63;
    expect_run_fails(p, "rows shorter than the width", &t, "row stride");
    t.row_stride_bytes = 0;
    t.data = NULL;
    expect_run_fails(p, "no pixels", &t, "required");
    CHECK(sleapc_predictor_run(p, NULL) == SLEAPC_ERR_INVALID_ARG);

    /* Odd but valid frames: tiny, odd-sized, RGB into a grayscale model, two
     * BGR frames with padded rows. */
    sleapc_frame ok = {.data = px, .height = 1, .width = 1};
    CHECK_OK(sleapc_predictor_run(p, &ok));
    int n_inst = -1;
    CHECK_OK(sleapc_predictor_frame_results(p, 0, NULL, &n_inst));
    CHECK(sleapc_predictor_n_frames(p) == 1 && n_inst == 0);
    ok.height = 37;
    ok.width = 21;
    ok.format = SLEAPC_PIXEL_FORMAT_RGB24;
    CHECK_OK(sleapc_predictor_run(p, &ok));
    CHECK(sleapc_predictor_frame_results(p, 1, &(sleapc_results){.max_instances = 1}, &n_inst) ==
          SLEAPC_ERR_INVALID_ARG);
    ok.n_frames = 2;
    ok.format = SLEAPC_PIXEL_FORMAT_BGR24;
    ok.row_stride_bytes = 21 * 3 + 5;
    CHECK_OK(sleapc_predictor_run(p, &ok));
    CHECK(sleapc_predictor_n_frames(p) == 2);
    sleapc_predictor_destroy(p);
    return test_finish();
}
