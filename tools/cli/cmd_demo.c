/* sleapc demo: the whole path on data sleapc makes itself. Writes a synthetic
 * model folder and clip with known keypoints, predicts every frame, writes
 * the predictions, and reports the error against the truth. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sleapc/npy.h"
#include "sleapc/predictor.h"
#include "sleapc/sample.h"
#include "sleapc/writer.h"

static int usage(void)
{
    printf("usage: sleapc demo [OUT_DIR] [--frames N] [--backend NAME] [--threads N]\n"
           "\n"
           "Writes a synthetic sample (a sleap-nn model folder and a clip with known\n"
           "keypoints) into OUT_DIR (default sleapc-demo), predicts every frame, writes\n"
           "OUT_DIR/predictions.json and reports the error against the known keypoints.\n");
    return 0;
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
    char model[4096], path[4096];
    snprintf(model, sizeof model, "%s/model", dir);
    printf("sleapc demo: writing a synthetic model and a %d-frame clip into %s/\n", so.n_frames, dir);
    if (sleapc_sample_write(dir, &so))
        return cli_lib_error();

    int rc = 1;
    sleapc_tensor clip = {0}, truth = {0};
    sleapc_predictor *p = NULL;
    sleapc_writer *w = NULL;
    snprintf(path, sizeof path, "%s/clip.npy", dir);
    bool ok = sleapc_npy_read(path, &clip) == SLEAPC_OK;
    snprintf(path, sizeof path, "%s/truth.npy", dir);
    ok = ok && sleapc_npy_read(path, &truth) == SLEAPC_OK;
    const char *models[1] = {model};
    ok = ok && sleapc_predictor_create(models, 1, &po, &p) == SLEAPC_OK;
    snprintf(path, sizeof path, "%s/predictions.json", dir);
    sleapc_video_info vi = {.filename = "clip.npy", .n_frames = clip.shape[0],
                            .height = clip.shape[1], .width = clip.shape[2], .channels = 3};
    ok = ok && sleapc_writer_open(path, p, &vi, 1, &w) == SLEAPC_OK;
    if (!ok) {
        rc = cli_lib_error();
        goto done;
    }
    int64_t n_frames = clip.shape[0], n_nodes = truth.shape[1];
    size_t frame_bytes = (size_t)(clip.shape[1] * clip.shape[2] * clip.shape[3]);
    int64_t bs = sleapc_predictor_batch_size(p), n_points = 0, within_1px = 0, missing = 0;
    double sum_err = 0, max_err = 0;
    int64_t idx[4096];
    for (int64_t start = 0; start < n_frames; start += bs) {
        int64_t b = n_frames - start < bs ? n_frames - start : bs;
        sleapc_tensor batch = clip;
        batch.shape[0] = b;
        batch.data = (uint8_t *)clip.data + (size_t)start * frame_bytes;
        for (int64_t k = 0; k < b; k++)
            idx[k] = start + k;
        if (sleapc_predictor_run(p, &batch) || sleapc_writer_add(w, p, 0, idx)) {
            rc = cli_lib_error();
            goto done;
        }
        for (int64_t k = 0; k < b; k++) {
            const float *gt = (const float *)truth.data + (start + k) * n_nodes * 2;
            sleapc_instance in;
            bool have = sleapc_predictor_n_instances(p, (int)k) > 0 &&
                        sleapc_predictor_instance(p, (int)k, 0, &in) == SLEAPC_OK;
            for (int64_t n = 0; n < n_nodes; n++) {
                n_points++;
                if (!have || isnan(in.points[2 * n])) {
                    missing++;
                    continue;
                }
                double e = hypot(in.points[2 * n] - gt[2 * n], in.points[2 * n + 1] - gt[2 * n + 1]);
                sum_err += e;
                max_err = e > max_err ? e : max_err;
                within_1px += e <= 1.0;
            }
        }
    }
    sleapc_status st = sleapc_writer_close(w);
    w = NULL;
    if (st) {
        rc = cli_lib_error();
        goto done;
    }
    int64_t found = n_points - missing;
    printf("model:        %s (%s)\n", model, sleapc_predictor_layer_name(p));
    printf("predictions:  %s\n", path);
    printf("frames:       %lld, points %lld, found %lld\n", (long long)n_frames,
           (long long)n_points, (long long)found);
    printf("error:        mean %.3f px, max %.3f px, %.2f%% of points within 1 px\n",
           found ? sum_err / (double)found : 0.0, max_err,
           n_points ? 100.0 * (double)within_1px / (double)n_points : 0.0);
    /* The demo is a real check: it fails when the predictions are off. */
    bool pass = n_points > 0 && within_1px * 100 >= n_points * 99;
    printf("result:       %s (goal: >= 99%% of points within 1 px)\n", pass ? "PASS" : "FAIL");
    rc = pass ? 0 : 1;
done:
    sleapc_writer_discard(w);
    sleapc_predictor_destroy(p);
    sleapc_tensor_free(&clip);
    sleapc_tensor_free(&truth);
    return rc;
}
