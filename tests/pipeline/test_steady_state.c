/* A long run keeps its memory flat: after the first batches have sized every
 * buffer, predicting a batch (decode, network, post-processing) allocates
 * nothing per frame. Writers are left out: a predictions file grows with its
 * predictions by nature. Bottom-up grouping keeps scratch sized by the peak
 * and candidate counts it has seen (grown geometrically), so a fixed clip
 * settles after its first batches; so does the multi-class layers' identity
 * scratch (class assignment per node or per frame). Tiled models reuse their
 * tile, canvas and grid buffers from frame to frame.
 *
 * SLEAPC_TEST_BACKEND=NAME (ctest: test_steady_state_vulkan, on the Vulkan
 * backend with its validation layer on) runs the smallest case alone on that
 * backend, on the small synthetic sample of `sleapc demo` (its model and
 * 28 frames of its clip, 96 x 128: 7 batches), as a software device
 * (lavapipe) is slow. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "sleapc/input.h"
#include "sleapc/tools.h"
#include "test_util.h"

typedef struct counts {
    int64_t per_batch[64];
    int n;
} counts;

/* The backend under test: SLEAPC_TEST_BACKEND or the native one. */
static const char *backend = "native";

static void on_batch(const sleapc_progress *pr, void *user)
{
    counts *c = user;
    (void)pr;
    if (c->n < 64)
        c->per_batch[c->n++] = sleapc__alloc_count();
}

/* max_instances: 0 for the default (no limit). */
static void check_n(const char *name, const char *video, const char *m1, const char *m2,
                    int max_instances, int64_t max_per_batch, int n_frames)
{
    char a[2048], b[2048], v[2048];
    /* An absolute path is the test's own (the sample), others are data. */
    snprintf(a, sizeof a, "%s", m1[0] == '/' ? m1 : test_data_path(m1));
    if (m2)
        snprintf(b, sizeof b, "%s", test_data_path(m2));
    snprintf(v, sizeof v, "%s", video[0] == '/' ? video : test_data_path(video));
    const char *paths[2] = {a, b};
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.n_threads = 2;
    o.backend = backend;
    o.max_instances = max_instances;
    sleapc_predictor *p = NULL;
    sleapc_input *in = NULL;
    CHECK_OK(sleapc_predictor_create(paths, m2 ? 2 : 1, &o, &p));
    CHECK_OK(sleapc_input_open(v, 0, &in));
    int64_t frames[48];
    for (int i = 0; i < n_frames; i++)
        frames[i] = i;
    counts c = {0};
    sleapc_run_opts ro = sleapc_run_opts_default();
    ro.progress = on_batch;
    ro.user = &c;
    if (p && in)
        CHECK_OK(sleapc_predict_input(p, in, frames, n_frames, NULL, &ro));
    /* Batches 4..: every buffer is sized by then. */
    int64_t worst = 0;
    for (int k = 4; k < c.n; k++)
        if (c.per_batch[k] - c.per_batch[k - 1] > worst)
            worst = c.per_batch[k] - c.per_batch[k - 1];
    CHECK_MSG(c.n == n_frames / 4 && c.n > 4, "%s: %d batches", name, c.n);
    CHECK_MSG(worst <= max_per_batch, "%s: %lld allocations in a steady batch", name,
              (long long)worst);
    if (worst > max_per_batch) {
        for (int k = 1; k < c.n; k++)
            printf("%s: batch %d: %lld allocations\n", name, k,
                   (long long)(c.per_batch[k] - c.per_batch[k - 1]));
    }
    printf("%s: at most %lld allocations per steady batch\n", name, (long long)worst);
    sleapc_predictor_destroy(p);
    sleapc_input_close(in);
}

/* 48 frames: 12 batches of the default 4. */
static void check(const char *name, const char *video, const char *m1, const char *m2,
                  int max_instances, int64_t max_per_batch)
{
    check_n(name, video, m1, m2, max_instances, max_per_batch, 48);
}

int main(void)
{
    if (getenv("SLEAPC_TEST_BACKEND") && strcmp(getenv("SLEAPC_TEST_BACKEND"), "native") != 0) {
        backend = getenv("SLEAPC_TEST_BACKEND");
        char dir[1024], model[1100], clip[1100];
        snprintf(dir, sizeof dir, "%s/sample", test_tmp_dir());
        snprintf(model, sizeof model, "%s/model", dir);
        snprintf(clip, sizeof clip, "%s/clip.npy", dir);
        sleapc_sample_opts so = sleapc_sample_opts_default();
        so.n_frames = 28;
        so.height = 96;
        so.width = 128;
        CHECK_OK(sleapc_sample_write(dir, &so));
        check_n("sample", clip, model, NULL, 0, 0, 28);
        return test_finish();
    }
    test_require_data();
    check("top-down", "sleap-nn-assets/datasets/centered_pair_small.mp4",
          "sleap-nn-assets/model_ckpts/minimal_instance_centroid",
          "sleap-nn-assets/model_ckpts/minimal_instance_centered_instance", 0, 0);
    check("single instance", "sleap-nn-assets/datasets/small_robot.mp4",
          "sleap-nn-assets/model_ckpts/minimal_instance_single_instance", NULL, 0, 0);
    /* The bottom-up end-to-end test predicts minimal_instance.pkg.slp, which
     * has too few labeled frames for 12 batches; this clip shows the same
     * two-fly arena and is the one the top-down case uses. */
    check("bottom-up", "sleap-nn-assets/datasets/centered_pair_small.mp4",
          "sleap-nn-assets/model_ckpts/minimal_instance_bottomup", NULL, 0, 0);
    check("multi-class bottom-up", "sleap-nn-assets/datasets/centered_pair_small.mp4",
          "sleap-nn-assets/model_ckpts/minimal_instance_multiclass_bottomup", NULL, 0, 0);
    /* max_instances below the class count: the finish step's cut runs. */
    check("multi-class bottom-up, max_instances 1",
          "sleap-nn-assets/datasets/centered_pair_small.mp4",
          "sleap-nn-assets/model_ckpts/minimal_instance_multiclass_bottomup", NULL, 1, 0);
    check("multi-class top-down", "sleap-nn-assets/datasets/centered_pair_small.mp4",
          "sleap-nn-assets/model_ckpts/minimal_instance_centroid",
          "sleap-nn-assets/model_ckpts/minimal_instance_multiclass_centered_instance", 0, 0);
    /* Tiled single-instance models: per frame a tile grid, batches of tiles
     * (the last one padded, so the backend keeps one plan) and a canvas. The
     * sanitizer build runs the small RGB one (768 tiles of 144^2 take long
     * there). */
#ifndef SLEAPC_SANITIZED
    check("tiled single instance, gray", "sleap-nn-assets/datasets/centered_pair_small.mp4",
          "sleap-nn-assets/tiled/tiled_unet_si_gray", NULL, 0, 0);
#endif
    check("tiled single instance, rgb", "sleap-nn-assets/datasets/small_robot.mp4",
          "sleap-nn-assets/tiled/tiled_unet_si_rgb", NULL, 0, 0);
    /* sleap-nn ONNX exports: the graph interpreter and the exported layers. */
    check("exported top-down", "sleap-nn-assets/datasets/centered_pair_small.mp4", "onnx/topdown",
          NULL, 0, 0);
    check("exported bottom-up", "sleap-nn-assets/datasets/centered_pair_small.mp4", "onnx/bottomup",
          NULL, 0, 0);
    check("exported multi-class bottom-up", "sleap-nn-assets/datasets/centered_pair_small.mp4",
          "onnx/multi_class_bottomup", NULL, 0, 0);
    return test_finish();
}
