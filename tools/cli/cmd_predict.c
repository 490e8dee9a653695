/* sleapc predict: models + frames -> predictions file, with sleap-nn's
 * option names and defaults (sleap_nn/cli.py). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sleapc/pipeline.h"
#include "sleapc/input.h"
#include "sleapc/predictor.h"
#include "sleapc/writer.h"

static int usage(void)
{
    printf(
        "usage: sleapc predict -m MODEL_DIR [-m MODEL_DIR] -i INPUT -o OUTPUT [options]\n"
        "\n"
        "  -m, --model_paths DIR       model folder (sleap-nn checkpoint, SLEAP 1.x, or ONNX\n"
        "                              export); give two for top-down (centroid +\n"
        "                              centered_instance or multi_class_topdown); an export\n"
        "                              with model.onnx runs alone, its peak threshold baked in\n"
        "  -i, --data_path INPUT       a video (any format FFmpeg reads), an image or a folder\n"
        "                              of images, a .npy of uint8 frames (N,H,W,C), or a SLEAP\n"
        "                              labels file (.slp/.pkg.slp: its labeled frames)\n"
        "  -o, --output_path OUTPUT    predictions: .slp, .h5 (analysis), .csv or .json\n"
        "  --video_index N             which video of a labels file (0)\n"
        "  --batch_size N              frames per batch (4)\n"
        "  --peak_threshold X          confidence map threshold (0.2)\n"
        "  --centroid_peak_threshold X top-down centroid threshold (= peak_threshold)\n"
        "  --integral_refinement M     integral | none (integral)\n"
        "  --integral_patch_size N     refinement patch side (5)\n"
        "  --max_instances N           at most N instances per frame (no limit)\n"
        "  --max_edge_length_ratio X   bottom-up (0.25)\n"
        "  --dist_penalty_weight X     bottom-up (1.0)\n"
        "  --n_points N                bottom-up PAF samples per line (10)\n"
        "  --min_instance_peaks X      bottom-up: drop instances with fewer peaks; < 1 is a\n"
        "                              fraction of the nodes (0)\n"
        "  --min_line_scores X         bottom-up (0.25)\n"
        "  --crop_size N               top-down crop side (from the config)\n"
        "  --max_height N, --max_width N, --input_scale X   override the config\n"
        "  --ensure_rgb, --ensure_grayscale                  override the config\n"
        "  --frames LIST               only these frames, e.g. 0-99,150 (all)\n"
        "  --backend NAME              native | onednn | xnnpack | auto (auto)\n"
        "  --precision fp32|bf16       network precision; bf16 needs a backend and CPU\n"
        "                              that have it (fp32)\n"
        "  --threads N                 worker threads (one per core)\n"
        "  --quiet                     no progress bar\n"
        "\n"
        "Ctrl-C (SIGINT) or SIGTERM finishes the current batch, writes the frames done so far\n"
        "and exits 130 (SIGINT) or 143 (SIGTERM).\n");
    return 0;
}

/* The signal that asked for a stop (SIGINT or SIGTERM), 0 while running. */
static volatile sig_atomic_t interrupted;

static void on_stop_signal(int sig)
{
    interrupted = sig;
}

static bool parse_double(const char *s, double lo, double hi, double *out)
{
    char *end = NULL;
    double v = s && *s ? strtod(s, &end) : NAN;
    if (!s || !*s || *end || !(v >= lo && v <= hi))
        return false;
    *out = v;
    return true;
}

typedef struct num_opt {
    const char *name;
    bool is_int;
    double lo, hi;
    void *dst;
} num_opt;

int cmd_predict(int argc, char **argv)
{
    const char *models[2] = {NULL, NULL};
    int n_models = 0;
    const char *in_path = NULL, *out_path = NULL, *frames_spec = NULL;
    bool quiet = false;
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    int video_index = 0;
    num_opt nums[] = {
        {"batch_size", true, 1, 4096, &o.batch_size},
        {"peak_threshold", false, 0, 1, &o.peak_threshold},
        {"centroid_peak_threshold", false, 0, 1, &o.centroid_peak_threshold},
        {"integral_patch_size", true, 1, 22, &o.integral_patch_size},
        {"max_instances", true, 1, 100000, &o.max_instances},
        {"max_edge_length_ratio", false, 1e-9, 1e9, &o.max_edge_length_ratio},
        {"dist_penalty_weight", false, 0, 1e9, &o.dist_penalty_weight},
        {"n_points", true, 1, 1000, &o.n_points},
        {"min_instance_peaks", false, 0, 1e9, &o.min_instance_peaks},
        {"min_line_scores", false, -1e9, 1e9, &o.min_line_scores},
        {"crop_size", true, 1, 65536, &o.crop_size},
        {"max_height", true, 1, 65536, &o.max_height},
        {"max_width", true, 1, 65536, &o.max_width},
        {"input_scale", false, 1e-6, 16, &o.input_scale},
        {"threads", true, 1, 1024, &o.n_threads},
        {"video_index", true, 0, 100000, &video_index},
    };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return usage();
        if (cli_is_option(a, "model_paths", "-m") || cli_is_option(a, "model", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "model_paths")))
                return 1;
            if (n_models == 2)
                return cli_error("predict: at most two -m model folders");
            models[n_models++] = v;
        } else if (cli_is_option(a, "data_path", "-i") || cli_is_option(a, "input", NULL)) {
            if (!(in_path = cli_option_value(argc, argv, &i, "data_path")))
                return 1;
        } else if (cli_is_option(a, "output_path", "-o") || cli_is_option(a, "output", NULL)) {
            if (!(out_path = cli_option_value(argc, argv, &i, "output_path")))
                return 1;
        } else if (cli_is_option(a, "backend", NULL)) {
            if (!(o.backend = cli_option_value(argc, argv, &i, "backend")))
                return 1;
        } else if (cli_is_option(a, "precision", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "precision")))
                return 1;
            if (strcmp(v, "fp32") == 0)
                o.precision = SLEAPC_PRECISION_FP32;
            else if (strcmp(v, "bf16") == 0)
                o.precision = SLEAPC_PRECISION_BF16;
            else
                return cli_error("--precision: expected fp32 or bf16, got \"%s\"", v);
        } else if (cli_is_option(a, "integral_refinement", NULL)) {
            if (!(v = cli_option_value(argc, argv, &i, "integral_refinement")))
                return 1;
            if (strcmp(v, "integral") == 0)
                o.integral_refinement = 1;
            else if (strcmp(v, "none") == 0 || strcmp(v, "None") == 0)
                o.integral_refinement = 0;
            else
                return cli_error("--integral_refinement: expected integral or none, got \"%s\"", v);
        } else if (cli_is_option(a, "frames", NULL)) {
            if (!(frames_spec = cli_option_value(argc, argv, &i, "frames")))
                return 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            quiet = true;
        } else if (strcmp(a, "--ensure_rgb") == 0) {
            o.ensure_rgb = 1;
        } else if (strcmp(a, "--ensure_grayscale") == 0) {
            o.ensure_grayscale = 1;
        } else {
            size_t k = 0;
            for (; k < sizeof nums / sizeof nums[0]; k++)
                if (cli_is_option(a, nums[k].name, NULL))
                    break;
            if (k == sizeof nums / sizeof nums[0])
                return cli_error("predict: unknown option \"%s\" (see sleapc predict --help)", a);
            if (!(v = cli_option_value(argc, argv, &i, nums[k].name)))
                return 1;
            double d;
            if (!parse_double(v, nums[k].lo, nums[k].hi, &d) || (nums[k].is_int && d != floor(d)))
                return cli_error("--%s: expected %s from %g to %g, got \"%s\"", nums[k].name,
                                 nums[k].is_int ? "an integer" : "a number", nums[k].lo,
                                 nums[k].hi, v);
            if (nums[k].is_int)
                *(int *)nums[k].dst = (int)d;
            else
                *(double *)nums[k].dst = d;
        }
    }
    if (!n_models || !in_path || !out_path)
        return cli_error("predict: -m MODEL_DIR, -i INPUT and -o OUTPUT are required");
    if (o.ensure_rgb == 1 && o.ensure_grayscale == 1)
        return cli_error("predict: --ensure_rgb and --ensure_grayscale contradict each other");
    const char *inputs[] = {in_path};
    if (cli_check_output(out_path, inputs, 1))
        return 1;

    int rc = 1;
    sleapc_predictor *p = NULL;
    sleapc_writer *w = NULL;
    sleapc_input *in = NULL;
    /* From here on Ctrl-C, or the SIGTERM a cluster scheduler sends before
     * SIGKILL, asks for a clean stop; the run checks it per batch. */
    signal(SIGINT, on_stop_signal);
    signal(SIGTERM, on_stop_signal);
    int64_t *idx = NULL;
    if (sleapc_input_open(in_path, video_index, &in) ||
        sleapc_predictor_create(models, n_models, &o, &p)) {
        rc = cli_lib_error();
        goto done;
    }
    sleapc_video_info vi = sleapc_input_video_info(in);
    if (sleapc_writer_open(out_path, p, &vi, 1, &w)) {
        rc = cli_lib_error();
        goto done;
    }
    int64_t n = sleapc_input_n_frames(in);
    int64_t n_sel = sleapc_input_n_default_frames(in);
    if (frames_spec && cli_parse_frames(frames_spec, n, &idx, &n_sel))
        goto done;
    sleapc_run_opts ro = {.video = 0};
    if (cli_progress_wanted(quiet))
        ro.progress = cli_progress_show;
    ro.stop = &interrupted;
    sleapc_status run_st = sleapc_predict_input(p, in, idx, n_sel, w, &ro);
    if (run_st && run_st != SLEAPC_ERR_INTERRUPTED) {
        rc = cli_lib_error();
        goto done;
    }
    sleapc_status st = sleapc_writer_close(w);
    w = NULL;
    if (st) {
        rc = cli_lib_error();
        goto done;
    }
    if (run_st == SLEAPC_ERR_INTERRUPTED) {
        fprintf(stderr, "\nsleapc: interrupted: %s; the frames done so far are in %s\n",
                sleapc_last_error(), out_path);
        rc = 128 + (interrupted ? (int)interrupted : SIGINT);
        goto done;
    }
    if (!quiet)
        fprintf(stderr, "sleapc: %s: %lld frames -> %s\n", sleapc_predictor_layer_name(p),
                (long long)n_sel, out_path);
    rc = 0;
done:
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    free(idx);
    sleapc_writer_discard(w);
    sleapc_predictor_destroy(p);
    sleapc_input_close(in);
    return rc;
}
