/* sleapc predict: models + inputs -> predictions files, with sleap-nn's
 * option names, defaults and output names (sleap_nn/cli.py). Several inputs
 * share one predictor; a failing input is reported and the rest go on. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "predict_args.h"
#include "predict_inputs.h"
#include "predict_run.h"
#include "sleapc/input.h"
#include "sleapc/predictor.h"

static volatile sig_atomic_t interrupted;

/* The signal that asked for a stop (SIGINT or SIGTERM), 0 while running. */
static void on_stop_signal(int sig)
{
    interrupted = sig;
}

/* The library's abort callback: the flag the handler above (or a failed
 * write, predict_run.c) sets. */
static bool stop_requested(void *user)
{
    (void)user;
    return interrupted != 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool is_export_dir(const char *dir)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    return stat(path, &st) == 0;
}

/* --output_dir and the folders above it, created when missing, as sleap-nn's
 * writer creates them. */
static int make_folders(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return cli_error("--output_dir: path too long");
    for (char *p = path + 1;; p++) {
        char c = *p;
        if (c != '/' && c != '\0')
            continue;
        *p = '\0';
        struct stat st;
        if (stat(path, &st) != 0) {
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                return cli_error("--output_dir %s: cannot create %s: %s", dir, path,
                                 strerror(errno));
        } else if (!S_ISDIR(st.st_mode)) {
            return cli_error("--output_dir %s: %s is not a folder", dir, path);
        }
        *p = c;
        if (c == '\0')
            return 0;
    }
}

/* Option values that are words, and combinations: checked before any model
 * is loaded. */
/* fp16 is the vulkan backend's: named, or "auto" on a GPU device (which
 * only the vulkan backend serves). */
static bool fp16_on_gpu(const sleapc_predictor_opts *o)
{
    bool auto_backend = !o->backend || strcmp(o->backend, "auto") == 0;
    bool gpu_device =
        o->device && (strncmp(o->device, "cuda", 4) == 0 || strncmp(o->device, "gpu", 3) == 0 ||
                      strcmp(o->device, "mps") == 0);
    return (o->backend && strcmp(o->backend, "vulkan") == 0) || (auto_backend && gpu_device);
}

static int check_options(cli_predict_args *a)
{
    if (a->n_models == 0 || a->n_inputs == 0)
        return cli_error(
            "predict: -m MODEL_DIR and -i INPUT are required (see sleapc predict --help)");
    if (a->device) {
        if (!cli_device_parses(a->device))
            return cli_error("--device: expected auto, cpu, cuda, cuda:N, mps, gpu or gpu:N, got "
                             "\"%s\"",
                             a->device);
        a->o.device = a->device;
    }
    if (a->runtime && strcmp(a->runtime, "auto") != 0 && strcmp(a->runtime, "onnx") != 0)
        return cli_error("--runtime %s: sleapc runs exported models with its own ONNX "
                         "interpreter; use auto or onnx",
                         a->runtime);
    if (a->embed && strcmp(a->embed, "false") != 0)
        return cli_error("--embed %s: sleapc does not embed images in .slp files; use "
                         "--embed false (the default)",
                         a->embed);
    if (a->restore_source_videos == 1)
        return cli_error("--restore_source_videos: sleapc records the video it read frames from; "
                         "leave the option out");
    if (a->video_input_format && strcmp(a->video_input_format, "channels_last") != 0)
        return cli_error("--video_input_format %s: only HDF5 videos have a layout, and sleapc "
                         "does not read them",
                         a->video_input_format);
    if (a->centroid_output && strcmp(a->centroid_output, "instance") != 0)
        return cli_error("--centroid_output %s: sleapc writes centroids as instances of a "
                         "one-node skeleton (instance)",
                         a->centroid_output);
    if (a->integral_refinement) {
        if (strcmp(a->integral_refinement, "integral") == 0)
            a->o.integral_refinement = 1;
        else if (strcmp(a->integral_refinement, "none") == 0 ||
                 strcmp(a->integral_refinement, "None") == 0)
            a->o.integral_refinement = 0;
        else
            return cli_error("--integral_refinement: expected integral or none, got \"%s\"",
                             a->integral_refinement);
    }
    if (a->precision) {
        if (strcmp(a->precision, "fp32") == 0)
            a->o.precision = SLEAPC_PRECISION_FP32;
        else if (strcmp(a->precision, "bf16") == 0)
            a->o.precision = SLEAPC_PRECISION_BF16;
        else if (strcmp(a->precision, "bf16-emulated") == 0)
            a->o.precision = SLEAPC_PRECISION_BF16_EMULATED;
        else if (strcmp(a->precision, "fp16") == 0)
            a->o.precision = SLEAPC_PRECISION_FP16;
        else
            return cli_error("--precision: expected fp32, bf16, bf16-emulated or fp16, got \"%s\"",
                             a->precision);
    }
    if (a->o.precision == SLEAPC_PRECISION_FP16 && !fp16_on_gpu(&a->o))
        return cli_error("--precision fp16 runs on the vulkan backend (--backend vulkan, or "
                         "--device cuda|mps|gpu); the CPU backends compute fp32 or bf16");
    if (a->conv && cli_conv_method(a->conv, &a->o.conv))
        return 1;
    if (a->compat && sleapc_compat_parse(a->compat, &a->o.compat))
        return cli_error("--compat: %s", sleapc_last_error());
    a->tracking.max_instances = a->o.max_instances;
    a->tracking.compat = a->o.compat;
    a->o.ensure_rgb = a->ensure_rgb;
    a->o.ensure_grayscale = a->ensure_grayscale;
    if (a->ensure_rgb == 1 && a->ensure_grayscale == 1)
        return cli_error("predict: --ensure_rgb and --ensure_grayscale contradict each other");
    if (a->only_labeled_frames && a->exclude_user_labeled)
        return cli_error("predict: --only_labeled_frames and --exclude_user_labeled are mutually "
                         "exclusive");
    if (a->write_interval && !cli_predict_given(a, "stream_to_file"))
        return cli_error("--write-interval is only meaningful together with --stream-to-file");
    if (a->shard && cli_parse_shard(a->shard, &a->shard_k, &a->shard_n))
        return 1;
    if (a->output_dir && make_folders(a->output_dir))
        return 1;
    if (a->paf_workers > 0)
        fprintf(stderr, "sleapc: warning: --paf-workers/--cpu-workers: sleapc groups in its own "
                        "worker threads (--threads); the option has no effect\n");
    if (a->write_interval)
        fprintf(stderr, "sleapc: warning: --write-interval: sleapc writes each file once at the "
                        "end; the option has no effect\n");
    return 0;
}

static cli_progress_mode progress_mode_of(const cli_predict_args *a)
{
    return a->gui                   ? CLI_PROGRESS_GUI
           : a->quiet               ? CLI_PROGRESS_NONE
           : isatty(fileno(stderr)) ? CLI_PROGRESS_BAR
                                    : CLI_PROGRESS_LOG;
}

/* Runs with no embedding model among the -m folders: an appearance tracker
 * has no vectors to read, and --save_embeddings slp nothing to save. */
static int refuse_without_vectors(const cli_predict_args *a)
{
    const char *tr = a->tracking.tracker;
    if (a->save_embeddings)
        return cli_error("--save_embeddings slp needs an embedding (re-ID) model among the -m "
                         "folders: sleapc predict --data_path DETECTIONS.slp -m "
                         "EMBEDDING_MODEL --save_embeddings slp");
    if (a->tracking.tracking && tr &&
        (!strcmp(tr, "deepsort") || !strcmp(tr, "strongsort") || !strcmp(tr, "botsort") ||
         !strcmp(tr, "deepocsort")))
        return cli_error("--tracker %s associates by appearance, which needs a re-ID vector on "
                         "every detection, but the detections this run produces carry none: add "
                         "an embedding model (-m EMBEDDING_MODEL) to detect, embed and track in "
                         "one command, or track an embedded .slp (`sleapc track --tracker %s`); "
                         "or track by geometry (--tracker bytetrack / ocsort / sort)",
                         tr, tr);
    return 0;
}

/* --centroid_only: keep the centroid model of the folders given, as sleap-nn
 * does when both top-down models are given. */
static int keep_centroid_model(cli_predict_args *a)
{
    int found = -1;
    for (int i = 0; i < a->n_models && found < 0; i++) {
        sleapc_model *m = NULL;
        if (sleapc_model_load(a->models[i], &m))
            return cli_lib_error();
        if (sleapc_model_get_type(m) == SLEAPC_MODEL_TYPE_CENTROID)
            found = i;
        sleapc_model_destroy(m);
    }
    if (found < 0)
        return cli_error("--centroid_only: none of the -m folders is a centroid model");
    a->models[0] = a->models[found];
    a->n_models = 1;
    return 0;
}

/* An ONNX export has peak finding, refinement and crops baked into its graph. */
static void warn_baked_options(const cli_predict_args *a)
{
    static const char *const baked[] = {"crop_size",
                                        "integral_refinement",
                                        "integral_patch_size",
                                        "peak_threshold",
                                        "centroid_peak_threshold",
                                        "anchor_part",
                                        "max_height",
                                        "max_width",
                                        "input_scale"};
    bool exported = false;
    for (int i = 0; i < a->n_models; i++)
        exported = exported || is_export_dir(a->models[i]);
    if (!exported)
        return;
    for (size_t i = 0; i < sizeof baked / sizeof baked[0]; i++)
        if (cli_predict_given(a, baked[i]))
            fprintf(stderr,
                    "sleapc: warning: --%s has no effect on an ONNX export (model.onnx): "
                    "the value it was exported with is baked into the graph\n",
                    baked[i]);
}

/* What the pipeline is, in words, from the layer it runs. */
static const char *pipeline_words(const char *layer)
{
    static const struct {
        const char *layer, *words;
    } names[] = {
        {"SingleInstanceLayer", "single-instance"},
        {"CentroidLayer", "centroid"},
        {"CenteredInstanceLayer", "centered-instance"},
        {"TopDownLayer", "top-down"},
        {"TopDownMultiClassLayer", "multi-class top-down"},
        {"BottomUpLayer", "bottom-up"},
        {"BottomUpMultiClassLayer", "multi-class bottom-up"},
        {"ExportedSingleInstanceLayer", "single-instance (ONNX export)"},
        {"ExportedCentroidLayer", "centroid (ONNX export)"},
        {"ExportedCenteredInstanceLayer", "centered-instance (ONNX export)"},
        {"ExportedTopDownLayer", "top-down (ONNX export)"},
        {"ExportedTopDownMultiClassLayer", "multi-class top-down (ONNX export)"},
        {"ExportedBottomUpLayer", "bottom-up (ONNX export)"},
        {"ExportedBottomUpMultiClassLayer", "multi-class bottom-up (ONNX export)"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(names[i].layer, layer) == 0)
            return names[i].words;
    return "pose";
}

/* A centered-instance model alone predicts on crops: its crop side (the
 * frames must be crops already), else 0. */
static int crops_only_side(const cli_predict_args *a, const sleapc_predictor *p)
{
    const char *layer = sleapc_predictor_layer_name(p);
    if (strcmp(layer, "CenteredInstanceLayer") != 0 &&
        strcmp(layer, "ExportedCenteredInstanceLayer") != 0)
        return 0;
    sleapc_model *m = NULL;
    if (sleapc_model_load(a->models[0], &m))
        return 0;
    int crop = a->o.crop_size > 0 ? a->o.crop_size : sleapc_model_crop_size(m);
    sleapc_model_destroy(m);
    return crop > 0 ? crop : 0;
}

/* " (cuda:0, NVIDIA RTX A6000)" when a stage ran on an accelerator, else "". */
static void accelerator_words(const sleapc_predictor *p, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; i < sleapc_predictor_n_stages(p); i++) {
        sleapc_stage_info s;
        if (sleapc_predictor_stage_info(p, i, &s) == SLEAPC_OK && s.device && s.device_name &&
            *s.device_name) {
            snprintf(out, cap, " (%s, %s)", s.device, s.device_name);
            return;
        }
    }
}

static void print_summary(const char *input, const cli_run_totals *t, double elapsed,
                          const char *pipeline, const char *backend, const sleapc_predictor *p)
{
    char accel[128];
    accelerator_words(p, accel, sizeof accel);
    fprintf(stderr,
            "sleapc: %s: %lld frames, %lld instances in %.1f s (%.1f FPS), %s model on %s%s "
            "-> %s\n",
            input, (long long)t->frames, (long long)t->instances, elapsed,
            elapsed > 0 ? (double)t->frames / elapsed : 0.0, pipeline, backend, accel, t->outputs);
}

int cmd_predict(int argc, char **argv)
{
    /* From here on Ctrl-C, or the SIGTERM a cluster scheduler sends before
     * SIGKILL, asks for a clean stop: the run checks it per batch, and it
     * ends any wait of the library (a named pipe with no writer yet, a
     * network connection, a stalled read). */
    signal(SIGINT, on_stop_signal);
    signal(SIGTERM, on_stop_signal);
    sleapc_abort_set(stop_requested, NULL);
    cli_predict_args a;
    for (int i = 1; i < argc; i++)
        cli_gui = cli_gui || strcmp(argv[i], "--gui") == 0;
    int rc = cli_predict_parse(argc, argv, &a);
    if (rc) {
        cli_predict_args_free(&a);
        sleapc_abort_set(NULL, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        return rc < 0 ? 0 : 1;
    }
    cli_input_list inputs = {0};
    sleapc_predictor *p = NULL;
    rc = 1;
    if (check_options(&a) || cli_inputs_expand((const char *const *)a.inputs, a.n_inputs, &inputs))
        goto done;
    /* An embedding model among the folders takes the embedding routes (the
     * folders are read only where that can be the case). */
    int emb_index = -1;
    if ((a.save_embeddings || a.tracking.tracking || a.n_models > 2) &&
        cli_predict_embedding_index(&a, &emb_index))
        goto done;
    if (emb_index < 0 && refuse_without_vectors(&a))
        goto done;
    /* (the embedding routes check them with their own defaults) */
    if (emb_index < 0 && sleapc_tracking_opts_check(&a.tracking, &a.filters, 0)) {
        rc = cli_lib_error();
        goto done;
    }
    if (emb_index >= 0) {
        cli_verbose = a.verbose;
        cli_quiet = a.quiet;
        a.progress_mode = progress_mode_of(&a);
        if (a.centroid_only) {
            rc = cli_error("--centroid_only with an embedding model is not supported by sleapc: "
                           "leave it out (the centered-instance model's poses are embedded)");
            goto done;
        }
        rc = cli_predict_embed(&a, &inputs, emb_index, &interrupted);
        goto done;
    }
    bool several = inputs.n > 1;
    if (several && a.output) {
        rc = cli_error("predict: -o names one file but there are %d inputs; leave -o out (each "
                       "output goes next to its input) or use --output_dir",
                       inputs.n);
        goto done;
    }
    for (int i = 0; i < inputs.n; i++) {
        if (!sleapc_input_path_is_live(inputs.paths[i]))
            continue;
        if (!a.output) {
            rc = cli_error("-i %s: a live source has no file name to name the predictions "
                           "after; give -o",
                           inputs.paths[i]);
            goto done;
        }
        if (a.frames || (a.shard && !several)) {
            rc = cli_error("-i %s: a live source is read once in order; --frames and --shard "
                           "need a file",
                           inputs.paths[i]);
            goto done;
        }
    }
    bool shard_frames = a.shard && !several;
    a.shard_frames = shard_frames;
    if (a.shard && several)
        cli_inputs_shard(&inputs, a.shard_k, a.shard_n);
    cli_verbose = a.verbose;
    cli_quiet = a.quiet;
    a.progress_mode = progress_mode_of(&a);
    if (a.centroid_only && keep_centroid_model(&a))
        goto done;
    warn_baked_options(&a);
    /* Outputs are checked before any work: not an input, not a special file,
     * in a folder that exists. */
    if (a.output && cli_check_output(a.output, (const char *const *)inputs.paths, inputs.n))
        goto done;
    if (sleapc_predictor_create(a.models, a.n_models, &a.o, &p)) {
        rc = cli_lib_error();
        goto done;
    }
    a.crops_only = crops_only_side(&a, p);
    const char *pipeline = pipeline_words(sleapc_predictor_layer_name(p));
    if (inputs.n == 0) {
        fprintf(stderr, "sleapc: shard %d/%d has no inputs (there are fewer than %d)\n", a.shard_k,
                a.shard_n, a.shard_n);
        rc = 0;
        goto done;
    }
    int failed = 0;
    int64_t all_frames = 0, all_instances = 0;
    double t_all = now_s();
    rc = 0;
    int i = 0;
    for (; i < inputs.n && !interrupted; i++) {
        cli_run_totals t;
        double t0 = now_s();
        int r = cli_predict_input(&a, p, inputs.paths[i], shard_frames, &interrupted, &t);
        if (r == 0) {
            /* read now: "auto" names its backend once it has measured */
            print_summary(inputs.paths[i], &t, now_s() - t0, pipeline, cli_backends_used(), p);
            all_frames += t.frames;
            all_instances += t.instances;
        } else if (r == 130) {
            rc = 128 + (interrupted ? (int)interrupted : SIGINT);
        } else {
            failed++;
            if (several)
                fprintf(stderr, "sleapc: %s failed; going on with the other inputs\n",
                        inputs.paths[i]);
        }
    }
    if (i < inputs.n && interrupted && rc == 0) {
        /* Stopped before this input began (e.g. while the models loaded). */
        fprintf(stderr, "sleapc: interrupted before %s; it was not predicted\n", inputs.paths[i]);
        rc = 128 + (int)interrupted;
    }
    if (several) {
        double el = now_s() - t_all;
        fprintf(stderr,
                "sleapc: %d of %d inputs done, %d failed: %lld frames, %lld instances in %.1f s "
                "(%.1f FPS)\n",
                inputs.n - failed, inputs.n, failed, (long long)all_frames,
                (long long)all_instances, el, el > 0 ? (double)all_frames / el : 0.0);
    }
    if (rc == 0 && failed)
        rc = 1;
done:
    sleapc_abort_set(NULL, NULL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sleapc_predictor_destroy(p);
    cli_inputs_free(&inputs);
    cli_predict_args_free(&a);
    return rc;
}
