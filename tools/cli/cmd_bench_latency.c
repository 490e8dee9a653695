/* sleapc bench --latency: per-frame end-to-end latency at batch 1, as a
 * closed-loop experiment sees it. Each frame is timed from "in memory" to
 * "its poses read out" (preprocessing, network, peak finding, grouping), and
 * again from "ask the decoder for the next frame" to the same point. Frames
 * are taken in order from the video (or one synthetic frame of --size, when
 * no video is given); the first frames warm the plan up and are not timed.
 * The process's CPU time per frame (in memory -> poses) is reported too: with
 * --threads 1 it is the latency a quiet core would give, which wall time on
 * a machine shared with other jobs cannot show. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "sleapc/predictor.h"
#include "sleapc/video.h"

#define WARMUP_FRAMES 5

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct latency {
    double p50, p99, max;
} latency;

static latency summarize(double *ms, int n)
{
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    latency l = {.p50 = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]),
                 .p99 = ms[(int)ceil(0.99 * n) - 1],
                 .max = ms[n - 1]};
    return l;
}

/* Read the poses out as a consumer would; returns the instance count. */
static int read_poses(const sleapc_predictor *p, double *checksum)
{
    enum { MAX_READ = 64, MAX_NODES = 256 };
    static float points[MAX_READ * MAX_NODES * 2];
    sleapc_skeleton sk;
    int n = 0;
    if (sleapc_predictor_skeleton(p, &sk) || sk.n_nodes > MAX_NODES ||
        sleapc_predictor_frame_results(
            p, 0, &(sleapc_results){.max_instances = MAX_READ, .points = points}, &n))
        return 0;
    for (int i = 0; i < n && i < MAX_READ; i++)
        if (!isnan(points[(size_t)i * (size_t)sk.n_nodes * 2]))
            *checksum += points[(size_t)i * (size_t)sk.n_nodes * 2];
    return n;
}

int cmd_bench_latency(const char **models, int n_models, const char *video_path, long h, long w,
                      const char *backend, int threads, int runs, bool json)
{
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.backend = backend;
    o.n_threads = threads;
    o.batch_size = 1;
    sleapc_predictor *p = NULL;
    sleapc_video *v = NULL;
    uint8_t *frame = NULL;
    double *net_ms = calloc((size_t)runs, sizeof *net_ms);
    double *dec_ms = calloc((size_t)runs, sizeof *dec_ms);
    double *cpu = calloc((size_t)runs, sizeof *cpu);
    int rc = 1;
    if (!net_ms || !dec_ms || !cpu) {
        rc = cli_error("bench --latency: out of memory");
        goto done;
    }
    if (sleapc_predictor_create(models, n_models, &o, &p) ||
        (video_path && sleapc_video_open(video_path, &v))) {
        rc = cli_lib_error();
        goto done;
    }
    int64_t fh = h, fw = w, fc = 1, n_video = 0;
    if (v) {
        sleapc_video_shape(v, &fh, &fw, &fc);
        n_video = sleapc_video_n_frames(v);
        if (n_video < WARMUP_FRAMES + runs) {
            rc = cli_error("bench --latency: %s has %lld frames; --runs %d needs %d", video_path,
                           (long long)n_video, runs, WARMUP_FRAMES + runs);
            goto done;
        }
    }
    size_t bytes = (size_t)(fh * fw * fc);
    if (!(frame = malloc(bytes))) {
        rc = cli_error("bench --latency: out of memory");
        goto done;
    }
    if (!v)
        for (size_t q = 0; q < bytes; q++)
            frame[q] = (uint8_t)(q * 2654435761u >> 24);
    /* As a closed-loop experiment would: plans and buffers built before frame 1. */
    if (sleapc_predictor_warmup(p, 1, fh, fw, fc)) {
        rc = cli_lib_error();
        goto done;
    }
    sleapc_frame x = {.data = frame,
                      .height = fh,
                      .width = fw,
                      .format = fc == 3 ? SLEAPC_PIXEL_FORMAT_RGB24 : SLEAPC_PIXEL_FORMAT_GRAY8};
    double checksum = 0;
    int64_t instances = 0;
    for (int k = 0; k < WARMUP_FRAMES + runs; k++) {
        double t0 = now_ms();
        if (v && sleapc_video_read(v, k, frame)) {
            rc = cli_lib_error();
            goto done;
        }
        double t1 = now_ms(), c1 = cpu_ms();
        if (sleapc_predictor_run(p, &x)) {
            rc = cli_lib_error();
            goto done;
        }
        int n = read_poses(p, &checksum);
        double t2 = now_ms(), c2 = cpu_ms();
        if (k >= WARMUP_FRAMES) {
            cpu[k - WARMUP_FRAMES] = c2 - c1;
            net_ms[k - WARMUP_FRAMES] = t2 - t1;
            dec_ms[k - WARMUP_FRAMES] = t2 - t0;
            instances += n;
        }
    }
    latency mem = summarize(net_ms, runs), dec = summarize(dec_ms, runs), cp = summarize(cpu, runs);
    const char *layer = sleapc_predictor_layer_name(p);
    if (json) {
        printf("{\"layer\": \"%s\", \"frame\": [%lld, %lld, %lld], \"batch\": 1, \"frames\": %d, "
               "\"instances\": %lld, \"threads\": %d, \"backend\": \"%s\", "
               "\"in_memory_ms\": {\"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}, "
               "\"cpu_ms\": {\"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}, ",
               layer, (long long)fh, (long long)fw, (long long)fc, runs, (long long)instances,
               threads, backend, mem.p50, mem.p99, mem.max, cp.p50, cp.p99, cp.max);
        if (v)
            printf("\"with_decoding_ms\": {\"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}}\n", dec.p50,
                   dec.p99, dec.max);
        else
            printf("\"with_decoding_ms\": null}\n");
    } else {
        printf("%s, %lldx%lldx%lld frames, batch 1, %d timed frames (%lld instances), backend %s\n",
               layer, (long long)fh, (long long)fw, (long long)fc, runs, (long long)instances,
               backend);
        printf("%-22s %9s %9s %9s %9s\n", "latency (ms)", "p50", "p99", "max", "p99/p50");
        printf("%-22s %9.2f %9.2f %9.2f %9.2f\n", "frame in memory", mem.p50, mem.p99, mem.max,
               mem.p99 / mem.p50);
        if (v)
            printf("%-22s %9.2f %9.2f %9.2f %9.2f\n", "with decoding", dec.p50, dec.p99, dec.max,
                   dec.p99 / dec.p50);
        printf("%-22s %9.2f %9.2f %9.2f %9.2f\n", "CPU time (process)", cp.p50, cp.p99, cp.max,
               cp.p99 / cp.p50);
    }
    rc = 0;
done:
    free(frame);
    free(net_ms);
    free(dec_ms);
    free(cpu);
    sleapc_video_close(v);
    sleapc_predictor_destroy(p);
    return rc;
}
