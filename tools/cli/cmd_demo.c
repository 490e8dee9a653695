/* sleapc demo: the whole path on data sleapc makes itself. Writes a synthetic
 * model folder and clip with known keypoints, saves the clip as a lossless
 * video, predicts every frame of that video, writes the predictions and an
 * overlay picture, and reports the error against the truth. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sleapc/input.h"
#include "sleapc/pipeline.h"
#include "sleapc/predictor.h"
#include "sleapc/render.h"
#include "sleapc/tools.h"
#include "sleapc/writer.h"

/* The sample model has 3 nodes; room for a few more. */
#define DEMO_MAX_NODES 16

/* Frame rate recorded in the clip's video file. */
#define DEMO_FPS 30.0

static int usage(void)
{
    printf("usage: sleapc demo [OUT_DIR] [--frames N] [--backend NAME] [--threads N]\n"
           "\n"
           "Writes a synthetic sample (a sleap-nn model folder and a clip with known\n"
           "keypoints) into OUT_DIR (default sleapc-demo), saves the clip as the lossless\n"
           "video OUT_DIR/clip.mkv, predicts every frame of it, writes\n"
           "OUT_DIR/predictions.slp and OUT_DIR/overlay.png (frame 0 with the predicted\n"
           "skeleton) and reports the error against the known keypoints.\n");
    return 0;
}

/* Error tally against the truth, filled batch by batch from the progress
 * callback: at that point the predictor holds the batch just predicted,
 * which covers frames done - n .. done - 1 of the (all-frames) run. */
typedef struct tally {
    const sleapc_predictor *p;
    const sleapc_tensor *truth;
    int64_t n_points, within_1px, missing;
    double sum_err, max_err;
} tally;

static void tally_batch(const sleapc_progress *pr, void *user)
{
    tally *t = user;
    int n_run = sleapc_predictor_n_frames(t->p);
    int64_t start = pr->done - n_run, n_nodes = t->truth->shape[1];
    for (int k = 0; k < n_run; k++) {
        const float *gt = (const float *)t->truth->data + (start + k) * n_nodes * 2;
        float pts[2 * DEMO_MAX_NODES];
        int n_inst = 0;
        bool have = n_nodes <= DEMO_MAX_NODES &&
                    sleapc_predictor_frame_results(
                        t->p, k, &(sleapc_results){.max_instances = 1, .points = pts}, &n_inst) ==
                        SLEAPC_OK &&
                    n_inst > 0;
        for (int64_t n = 0; n < n_nodes; n++) {
            t->n_points++;
            if (!have || isnan(pts[2 * n])) {
                t->missing++;
                continue;
            }
            double e = hypot(pts[2 * n] - gt[2 * n], pts[2 * n + 1] - gt[2 * n + 1]);
            t->sum_err += e;
            t->max_err = e > t->max_err ? e : t->max_err;
            t->within_1px += e <= 1.0;
        }
    }
}

int cmd_demo(int argc, char **argv)
{
    const char *dir = "sleapc-demo";
    sleapc_sample_opts so = sleapc_sample_opts_default();
    sleapc_predictor_opts po = sleapc_predictor_opts_default();
    for (int i = 1; i < argc; i++) {
        const char *v;
        long n;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return usage();
        if (cli_is_option(argv[i], "frames", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "frames")))
                return 1;
            if (!cli_parse_int(v, 1, 100000, &n))
                return cli_error("--frames: expected 1..100000, got \"%s\"", v);
            so.n_frames = (int)n;
        } else if (cli_is_option(argv[i], "backend", NULL)) {
            if (!(po.backend = cli_option_value(argc, argv, &i, "backend")))
                return 1;
        } else if (cli_is_option(argv[i], "threads", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "threads")))
                return 1;
            if (!cli_parse_int(v, 1, 1024, &n))
                return cli_error("--threads: expected 1..1024, got \"%s\"", v);
            po.n_threads = (int)n;
        } else if (argv[i][0] == '-') {
            return cli_error("demo: unknown option \"%s\"", argv[i]);
        } else {
            dir = argv[i];
        }
    }
    char model[4096], clip_path[4096], video[4096], preds[4096], overlay[4096], path[4096];
    snprintf(model, sizeof model, "%s/model", dir);
    snprintf(clip_path, sizeof clip_path, "%s/clip.npy", dir);
    snprintf(video, sizeof video, "%s/clip.mkv", dir);
    snprintf(preds, sizeof preds, "%s/predictions.slp", dir);
    snprintf(overlay, sizeof overlay, "%s/overlay.png", dir);
    printf("sleapc demo: writing a synthetic model and a %d-frame clip into %s/\n", so.n_frames,
           dir);
    if (sleapc_sample_write(dir, &so))
        return cli_lib_error();

    int rc = 1;
    sleapc_tensor clip = {0}, truth = {0};
    sleapc_predictor *p = NULL;
    sleapc_writer *w = NULL;
    sleapc_input *in = NULL;
    snprintf(path, sizeof path, "%s/truth.npy", dir);
    bool ok = sleapc_npy_read(clip_path, &clip) == SLEAPC_OK &&
              sleapc_npy_read(path, &truth) == SLEAPC_OK;
    /* Lossless, so predicting from the video equals predicting from the array. */
    ok = ok && sleapc_video_write(video, &clip, DEMO_FPS, true) == SLEAPC_OK;
    const char *models[1] = {model};
    ok = ok && sleapc_predictor_create(models, 1, &po, &p) == SLEAPC_OK;
    ok = ok && sleapc_input_open(video, 0, &in) == SLEAPC_OK;
    if (!ok) {
        rc = cli_lib_error();
        goto done;
    }
    int64_t n_frames = sleapc_input_n_frames(in);
    if (n_frames != clip.shape[0] || truth.shape[0] != n_frames) {
        rc = cli_error("demo: %s has %lld frames, the clip %lld", video, (long long)n_frames,
                       (long long)clip.shape[0]);
        goto done;
    }
    sleapc_video_info vi = sleapc_input_video_info(in);
    tally t = {.p = p, .truth = &truth};
    sleapc_run_opts ro = sleapc_run_opts_default();
    ro.progress = tally_batch;
    ro.user = &t;
    if (sleapc_writer_open(preds, p, &vi, 1, &w) || sleapc_predict_input(p, in, NULL, 0, w, &ro)) {
        rc = cli_lib_error();
        goto done;
    }
    sleapc_status st = sleapc_writer_close(w, NULL);
    w = NULL;
    const int64_t frame0 = 0;
    if (st || sleapc_render(preds, video, overlay, &frame0, 1, NULL)) {
        rc = cli_lib_error();
        goto done;
    }
    int64_t found = t.n_points - t.missing;
    printf("model:        %s (%s)\n", model, sleapc_predictor_layer_name(p));
    printf("video:        %s (lossless)\n", video);
    printf("predictions:  %s\n", preds);
    printf("overlay:      %s (frame 0)\n", overlay);
    printf("frames:       %lld, points %lld, found %lld\n", (long long)n_frames,
           (long long)t.n_points, (long long)found);
    printf("error:        mean %.3f px, max %.3f px, %.2f%% of points within 1 px\n",
           found ? t.sum_err / (double)found : 0.0, t.max_err,
           t.n_points ? 100.0 * (double)t.within_1px / (double)t.n_points : 0.0);
    /* The demo is a real check: it fails when the predictions are off. */
    bool pass = t.n_points > 0 && t.within_1px * 100 >= t.n_points * 99;
    printf("result:       %s (goal: >= 99%% of points within 1 px)\n", pass ? "PASS" : "FAIL");
    rc = pass ? 0 : 1;
done:
    sleapc_writer_discard(w);
    sleapc_input_close(in);
    sleapc_predictor_destroy(p);
    sleapc_tensor_free(&clip);
    sleapc_tensor_free(&truth);
    return rc;
}
