/* sleapc bench: network speed per backend x batch x precision, reported
 * against this machine's FMA peak measured in the same run; and end-to-end
 * predict speed on a video against network-only speed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "sleapc/input.h"
#include "sleapc/model.h"
#include "sleapc/runner.h"
#include "sleapc/tools.h"

#define MAX_LIST 16

static int usage(void)
{
    printf(
        "usage: sleapc bench -m MODEL_DIR | --config CONFIG.yaml --random-weights [options]\n"
        "       sleapc bench --peak [--threads N]\n"
        "       sleapc bench --video VIDEO -m MODEL_DIR [-m MODEL_DIR] [--frames LIST]\n"
        "       sleapc bench --latency -m MODEL_DIR [-m MODEL_DIR] [--video VIDEO | --size HxW]\n"
        "\n"
        "  --size HxW            network input (default: the model's crop or size-matched,\n"
        "                        scaled input, padded to its max stride; else 512x512)\n"
        "  --backend A,B         backends to compare (default: every one that runs here)\n"
        "  --batch 1,4,8         batch sizes (1)\n"
        "  --precision fp32,bf16 precisions: fp32, bf16, fp16 (vulkan) (fp32; --video: one of\n"
        "                        fp32, bf16, bf16-emulated)\n"
        "  --conv direct,winograd,auto  the native backend's 3x3 convs (auto; --video: one)\n"
        "  --threads N           threads (one per core)\n"
        "  --runs N              timed runs after warm-up, >= 10 (10)\n"
        "  --nodes N             nodes for a config without a skeleton (13)\n"
        "  --json                one JSON document on stdout instead of a table\n"
        "\n"
        "Times are the median and 99th percentile of the runs; GFLOP/s counts 2 per\n"
        "multiply-add; peak_fraction is against the FMA peak measured in the same run.\n"
        "--latency: per-frame latency at batch 1 over --runs frames (100), frame in\n"
        "memory -> poses read out, and with decoding the frame included: p50, p99, max.\n");
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* "a,b,c" -> items (pointers into a copy the caller frees). */
static int split_list(const char *s, char **copy, const char **items)
{
    *copy = strdup(s);
    int n = 0;
    for (char *tok = strtok(*copy, ","); tok && n < MAX_LIST; tok = strtok(NULL, ","))
        items[n++] = tok;
    return n;
}

static sleapc_precision precision_of(const char *name)
{
    if (strcmp(name, "bf16") == 0)
        return SLEAPC_PRECISION_BF16;
    return strcmp(name, "fp16") == 0 ? SLEAPC_PRECISION_FP16 : SLEAPC_PRECISION_FP32;
}

typedef struct record {
    const char *backend, *precision, *conv;
    long batch;
    double ms_median, ms_p99, fps, gflops_per_s, peak_fraction;
    const char *skipped;
} record;

static int bench_network(const sleapc_model *m, long h, long w, const char **backends, int n_b,
                         const char **precs, int n_p, const char **convs, int n_c,
                         const long *batches, int n_batch, int threads, int runs, bool json,
                         const char *label)
{
    double peak[4] = {0}; /* by sleapc_precision; fp16: none measured (0) */
    for (int pi = 0; pi < n_p; pi++) {
        sleapc_precision pr = precision_of(precs[pi]);
        peak[pr] = sleapc_bench_peak_gflops(threads, pr, 0.5);
    }
    int c = sleapc_model_in_channels(m);
    /* 0 asks for one per core: say how many that is. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int shown = threads > 0 ? threads : cores > 0 ? (int)cores : 1;
    if (!json) {
        printf("model %s, input %ldx%ldx%d, %.2f GFLOP per frame, %d threads%s, %s\n", label, h,
               w, c, sleapc_model_gflops(m, h, w), shown, threads > 0 ? "" : " (one per core)",
               sleapc_bench_simd_name());
        printf("peak: fp32 %.1f GFLOP/s", peak[SLEAPC_PRECISION_FP32]);
        if (peak[SLEAPC_PRECISION_BF16] > 0)
            printf(", bf16 %.1f GFLOP/s", peak[SLEAPC_PRECISION_BF16]);
        printf(" (measured now)\nGFLOP/s counts the direct method's FLOPs, whichever method "
               "ran\n\n%-14s %-5s %-8s %5s %10s %10s %9s %10s %7s\n", "backend", "prec", "conv",
               "batch", "ms median", "ms p99", "FPS", "GFLOP/s", "% peak");
    } else {
        printf("{\"model\": \"%s\", \"input\": [%d, %ld, %ld], \"gflop_per_frame\": %.4f, "
               "\"threads\": %d, \"peak_gflops\": {\"fp32\": %.2f, \"bf16\": %.2f}, \"results\": [",
               label, c, h, w, sleapc_model_gflops(m, h, w), shown, peak[0], peak[1]);
    }
    int n_out = 0;
    for (int bi = 0; bi < n_b; bi++) {
        for (int pi = 0; pi < n_p; pi++) {
            sleapc_precision pr = precision_of(precs[pi]);
            for (int k = 0; k < n_batch * n_c; k++) {
                const char *conv = convs[k % n_c];
                record r = {.backend = backends[bi], .precision = precs[pi], .conv = conv,
                            .batch = batches[k / n_c]};
                char auto_label[64];
                sleapc_runner_opts ro = sleapc_runner_opts_default();
                ro.backend = backends[bi];
                ro.n_threads = threads;
                ro.precision = pr;
                cli_conv_method(conv, &ro.conv);
                sleapc_runner *run = NULL;
                size_t bytes = (size_t)(r.batch * c * h * w);
                uint8_t *px = NULL;
                double *ms = calloc((size_t)runs, sizeof *ms);
                if (sleapc_runner_create(m, &ro, &run)) {
                    r.skipped = sleapc_last_error();
                } else if (!(px = malloc(bytes)) || !ms) {
                    r.skipped = "out of memory";
                } else {
                    for (size_t q = 0; q < bytes; q++)
                        px[q] = (uint8_t)(q * 2654435761u >> 24);
                    int64_t shape[4] = {r.batch, c, h, w};
                    sleapc_tensor x = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4,
                                       .shape = {r.batch, c, h, w}, .data = px};
                    bool ok = !sleapc_runner_warmup(run, shape) && !sleapc_runner_forward(run, &x);
                    /* "auto" has chosen by now: name the backend it runs on. */
                    if (ok && strcmp(r.backend, sleapc_runner_backend_name(run)) != 0) {
                        snprintf(auto_label, sizeof auto_label, "%s:%s", r.backend,
                                 sleapc_runner_backend_name(run));
                        r.backend = auto_label;
                    }
                    for (int q = 0; ok && q < runs; q++) {
                        double t0 = now_s();
                        ok = !sleapc_runner_forward(run, &x);
                        ms[q] = (now_s() - t0) * 1e3;
                    }
                    if (!ok) {
                        r.skipped = sleapc_last_error();
                    } else {
                        qsort(ms, (size_t)runs, sizeof *ms, cmp_double);
                        r.ms_median = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
                        r.ms_p99 = ms[(int)ceil(0.99 * runs) - 1];
                        r.fps = r.batch * 1e3 / r.ms_median;
                        r.gflops_per_s = sleapc_runner_gflops(run, shape) / (r.ms_median * 1e-3);
                        r.peak_fraction = peak[pr] > 0 ? r.gflops_per_s / peak[pr] : 0;
                    }
                }
                if (json) {
                    printf("%s{\"backend\": \"%s\", \"precision\": \"%s\", \"conv\": \"%s\", "
                           "\"batch\": %ld", n_out ? ", " : "", r.backend, r.precision, r.conv,
                           r.batch);
                    if (r.skipped)
                        printf(", \"skipped\": \"%s\"}", "unsupported here");
                    else
                        printf(", \"ms_median\": %.3f, \"ms_p99\": %.3f, \"fps\": %.2f, "
                               "\"gflops_per_s\": %.2f, \"peak_fraction\": %.4f}",
                               r.ms_median, r.ms_p99, r.fps, r.gflops_per_s, r.peak_fraction);
                } else if (r.skipped) {
                    printf("%-14s %-5s %-8s %5ld   skipped: %s\n", r.backend, r.precision, r.conv,
                           r.batch, r.skipped);
                } else {
                    printf("%-14s %-5s %-8s %5ld %10.2f %10.2f %9.2f %10.1f %6.1f%%\n", r.backend,
                           r.precision, r.conv, r.batch, r.ms_median, r.ms_p99, r.fps, r.gflops_per_s,
                           100 * r.peak_fraction);
                }
                n_out++;
                free(px);
                free(ms);
                sleapc_runner_destroy(run);
            }
        }
    }
    if (json)
        printf("]}\n");
    return 0;
}

/* What each stage ran on: the backend auto chose, the precision after a
 * bf16 fallback. */
static void print_stages(const sleapc_predictor *p, bool json)
{
    int n = sleapc_predictor_n_stages(p);
    printf(json ? ", \"stages\": [" : "ran on:");
    for (int i = 0; i < n; i++) {
        sleapc_stage_info s;
        if (sleapc_predictor_stage_info(p, i, &s))
            continue;
        const char *slash = strrchr(s.model, '/');
        const char *name = slash ? slash + 1 : s.model;
        if (json)
            printf("%s{\"model\": \"%s\", \"backend\": \"%s\", \"precision\": \"%s\", "
                   "\"device\": \"%s\"}",
                   i ? ", " : "", name, s.backend, sleapc_precision_name(s.precision), s.device);
        else
            printf("%s %s: %s %s%s%s%s", i ? "," : "", name, s.backend,
                   sleapc_precision_name(s.precision), *s.device_name ? " on " : "",
                   *s.device_name ? s.device : "", *s.device_name ? "" : "");
        if (!json && s.fp16_arithmetic)
            printf(" (fp16 arithmetic)");
        if (!json && s.bf16_error >= 0)
            printf(" (bf16 heads %.2f%% from fp32, %.2f%% of keypoints expected to move)",
                   100 * s.bf16_error, 100 * s.bf16_moved);
    }
    printf(json ? "]" : "\n");
}

static int bench_video(const char **models, int n_models, const char *video, const char *frames_spec,
                       const char *backend, sleapc_precision precision, sleapc_conv_method conv,
                       int threads, bool json)
{
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.conv = conv;
    o.backend = backend;
    o.n_threads = threads;
    o.precision = precision;
    sleapc_predictor *p = NULL;
    sleapc_input *in = NULL;
    int64_t *idx = NULL, n = 0;
    int rc = 1;
    if (sleapc_input_open(video, 0, &in) || sleapc_predictor_create(models, n_models, &o, &p)) {
        rc = cli_lib_error();
        goto done;
    }
    n = sleapc_input_n_default_frames(in);
    if (frames_spec && cli_parse_frames(frames_spec, sleapc_input_n_frames(in), &idx, &n))
        goto done;
    /* One batch first, so planning and warm-up stay out of the timing. */
    int64_t warm[1] = {idx ? idx[0] : 0};
    if (sleapc_predict_input(p, in, warm, 1, NULL, NULL)) {
        rc = cli_lib_error();
        goto done;
    }
    sleapc_predictor_reset_stats(p);
    double t0 = now_s();
    if (sleapc_predict_input(p, in, idx, n, NULL, NULL)) {
        rc = cli_lib_error();
        goto done;
    }
    double wall = now_s() - t0;
    sleapc_predictor_stats st = sleapc_predictor_get_stats(p);
    double e2e = (double)st.frames / wall, net = st.network_s > 0 ? (double)st.frames / st.network_s : 0;
    if (json) {
        printf("{\"video\": \"%s\", \"frames\": %lld, \"layer\": \"%s\", \"fps_end_to_end\": %.2f, "
               "\"fps_network_only\": %.2f, \"ratio\": %.3f",
               video, (long long)st.frames, sleapc_predictor_layer_name(p), e2e, net, net > 0 ? e2e / net : 0);
        print_stages(p, true);
        printf("}\n");
    } else {
        printf("%s on %s, %lld frames: end to end %.2f FPS, network only %.2f FPS (ratio %.2f)\n",
               sleapc_predictor_layer_name(p), video, (long long)st.frames, e2e, net,
               net > 0 ? e2e / net : 0);
        print_stages(p, false);
    }
    rc = 0;
done:
    free(idx);
    sleapc_predictor_destroy(p);
    sleapc_input_close(in);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    const char *models[2] = {NULL, NULL}, *config = NULL, *video = NULL, *frames_spec = NULL;
    const char *backend_arg = NULL, *batch_arg = "1", *prec_arg = "fp32", *conv_arg = "auto";
    int n_models = 0, runs = 10, nodes = 13, threads = 0;
    bool runs_given = false;
    bool random_weights = false, json = false, peak_only = false, latency = false;
    long h = 0, w = 0, v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return usage();
        if (strcmp(a, "--random-weights") == 0) {
            random_weights = true;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--peak") == 0) {
            peak_only = true;
        } else if (strcmp(a, "--latency") == 0) {
            latency = true;
        } else if (cli_is_option(a, "model", "-m") || cli_is_option(a, "model_paths", NULL)) {
            if (!(val = cli_option_value(argc, argv, &i, "model")))
                return 1;
            if (n_models == 2)
                return cli_error("bench: at most two -m folders");
            models[n_models++] = val;
        } else if (cli_is_option(a, "config", NULL)) {
            if (!(config = cli_option_value(argc, argv, &i, "config")))
                return 1;
        } else if (cli_is_option(a, "video", NULL)) {
            if (!(video = cli_option_value(argc, argv, &i, "video")))
                return 1;
        } else if (cli_is_option(a, "frames", NULL)) {
            if (!(frames_spec = cli_option_value(argc, argv, &i, "frames")))
                return 1;
        } else if (cli_is_option(a, "backend", NULL)) {
            if (!(backend_arg = cli_option_value(argc, argv, &i, "backend")))
                return 1;
        } else if (cli_is_option(a, "batch", NULL)) {
            if (!(batch_arg = cli_option_value(argc, argv, &i, "batch")))
                return 1;
        } else if (cli_is_option(a, "precision", NULL)) {
            if (!(prec_arg = cli_option_value(argc, argv, &i, "precision")))
                return 1;
        } else if (cli_is_option(a, "conv", NULL)) {
            if (!(conv_arg = cli_option_value(argc, argv, &i, "conv")))
                return 1;
        } else if (cli_is_option(a, "size", NULL)) {
            if (!(val = cli_option_value(argc, argv, &i, "size")))
                return 1;
            if (!cli_parse_size(val, &h, &w))
                return cli_error("--size: expected HxW, got \"%s\"", val);
        } else if (cli_is_option(a, "threads", NULL) || cli_is_option(a, "runs", NULL) ||
                   cli_is_option(a, "nodes", NULL)) {
            const char *name = a + 2;
            bool is_threads = strncmp(name, "threads", 7) == 0, is_runs = strncmp(name, "runs", 4) == 0;
            if (!(val = cli_option_value(argc, argv, &i, is_threads ? "threads" : is_runs ? "runs" : "nodes")))
                return 1;
            if (!cli_parse_int(val, is_runs ? 10 : 1, is_runs ? 100000 : 1024, &v))
                return cli_error("--%s: got \"%s\"%s", is_threads ? "threads" : is_runs ? "runs" : "nodes",
                                 val, is_runs ? " (at least 10 runs)" : "");
            if (is_threads) {
                threads = (int)v;
            } else if (is_runs) {
                runs = (int)v;
                runs_given = true;
            } else {
                nodes = (int)v;
            }
        } else {
            return cli_error("bench: unknown option \"%s\" (see sleapc bench --help)", a);
        }
    }
    if (peak_only) {
        double f = sleapc_bench_peak_gflops(threads, SLEAPC_PRECISION_FP32, 1.0);
        double b = sleapc_bench_peak_gflops(threads, SLEAPC_PRECISION_BF16, 1.0);
        if (json)
            printf("{\"simd\": \"%s\", \"peak_gflops\": {\"fp32\": %.2f, \"bf16\": %.2f}}\n",
                   sleapc_bench_simd_name(), f, b);
        else if (b > 0)
            printf("peak (%s): fp32 %.1f GFLOP/s, bf16 %.1f GFLOP/s\n", sleapc_bench_simd_name(),
                   f, b);
        else
            printf("peak (%s): fp32 %.1f GFLOP/s, bf16 not supported on this CPU\n",
                   sleapc_bench_simd_name(), f);
        return 0;
    }
    if (latency) {
        if (!n_models)
            return cli_error("bench --latency: give the model folders with -m");
        return cmd_bench_latency(models, n_models, video, h ? h : 512, w ? w : 512,
                                 backend_arg ? backend_arg : "auto", threads,
                                 runs_given ? runs : 100, json);
    }
    if (video) {
        if (!n_models)
            return cli_error("bench --video: give the model folders with -m");
        sleapc_precision vp = SLEAPC_PRECISION_FP32;
        if (prec_arg && strcmp(prec_arg, "bf16") == 0)
            vp = SLEAPC_PRECISION_BF16;
        else if (prec_arg && strcmp(prec_arg, "bf16-emulated") == 0)
            vp = SLEAPC_PRECISION_BF16_EMULATED;
        else if (prec_arg && strcmp(prec_arg, "fp32") != 0)
            return cli_error("bench --video --precision: expected fp32, bf16 or bf16-emulated, "
                             "got \"%s\"", prec_arg);
        sleapc_conv_method vc;
        if (cli_conv_method(conv_arg, &vc))
            return 1;
        return bench_video(models, n_models, video, frames_spec, backend_arg ? backend_arg : "auto",
                           vp, vc, threads, json);
    }
    if (!!config + !!n_models != 1)
        return cli_error("bench: give one -m MODEL_DIR, or --config CONFIG.yaml --random-weights");
    if (config && !random_weights)
        return cli_error("bench --config needs --random-weights (a config has no weights)");
    sleapc_model *m = NULL;
    if (config ? sleapc_model_load_random(config, nodes, 1, &m) : sleapc_model_load(models[0], &m))
        return cli_lib_error();
    if (!h)
        cli_model_input_size(m, &h, &w);
    char *bcopy = NULL, *pcopy = NULL, *ncopy = NULL, *ccopy = NULL;
    const char *backends[MAX_LIST], *precs[MAX_LIST], *bitems[MAX_LIST], *convs[MAX_LIST];
    int n_b = 0;
    if (backend_arg) {
        n_b = split_list(backend_arg, &bcopy, backends);
    } else {
        /* A GPU backend only where there is a GPU: a software Vulkan device
         * (lavapipe) is for tests, and runs only when named. */
        sleapc_device_info devs[16];
        int n_dev = sleapc_devices_list(devs, 16);
        bool gpu = false;
        for (int d = 0; d < n_dev && d < 16; d++)
            gpu = gpu || strcmp(devs[d].kind, "software") != 0;
        for (int i = 0; i < sleapc_backend_count() && n_b < MAX_LIST; i++)
            if (sleapc_backend_available(i) &&
                (gpu || strcmp(sleapc_backend_name(i), "vulkan") != 0))
                backends[n_b++] = sleapc_backend_name(i);
    }
    int n_p = split_list(prec_arg, &pcopy, precs);
    int n_batch = split_list(batch_arg, &ncopy, bitems);
    int n_c = split_list(conv_arg, &ccopy, convs);
    long batches[MAX_LIST];
    int rc = 0;
    for (int k = 0; k < n_batch && !rc; k++)
        if (!cli_parse_int(bitems[k], 1, 256, &batches[k]))
            rc = cli_error("--batch: expected numbers from 1 to 256, got \"%s\"", bitems[k]);
    for (int k = 0; k < n_p && !rc; k++)
        if (strcmp(precs[k], "fp32") != 0 && strcmp(precs[k], "bf16") != 0 &&
            strcmp(precs[k], "fp16") != 0)
            rc = cli_error("--precision: expected fp32, bf16 or fp16, got \"%s\"", precs[k]);
    sleapc_conv_method cm;
    for (int k = 0; k < n_c && !rc; k++)
        rc = cli_conv_method(convs[k], &cm);
    if (!rc && n_c == 0)
        rc = cli_error("--conv: expected direct, winograd or auto");
    if (!rc)
        rc = bench_network(m, h, w, backends, n_b, precs, n_p, convs, n_c, batches, n_batch,
                           threads, runs, json, config ? config : models[0]);
    free(bcopy);
    free(ccopy);
    free(pcopy);
    free(ncopy);
    sleapc_model_destroy(m);
    return rc;
}
