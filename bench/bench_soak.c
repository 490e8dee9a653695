/* Does a long run keep memory flat? The soak: a video of --frames frames
 * (108000: one hour at 30 fps) made from the synthetic sample of `sleapc
 * demo` (its clip repeated, encoded with FFmpeg), predicted with the
 * sample's model into one predictions file, the process's resident memory
 * (VmRSS) recorded every --every frames, then the file read back: every
 * frame must be there, in order, with its instance.
 *
 * Prints one line per sample (frames, seconds, RSS MiB) and a summary:
 * RSS after warm-up, at the end, the maximum, and the slope by least
 * squares over the samples after warm-up (bytes per frame).
 * Usage: bench_soak [DIR (a temporary folder)] [--frames N] [--every N]
 *        [--size PX (160)] [--format slp|csv|json|h5] [--tracking] [--keep] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_rss.h"
#include "io/slp/slp_read.h"
#include "io/video/video_encode.h"
#include "sleapc/input.h"
#include "sleapc/pipeline.h"
#include "sleapc/predictor.h"
#include "sleapc/tools.h"
#include "sleapc/tracking.h"
#include "sleapc/writer.h"

#define CLIP_FRAMES 300
#define WARMUP_FRAMES 5000

typedef struct series {
    long every;
    long n, cap;
    long *frames;
    long *kib;
    double *secs;
} series;

static void sample(const sleapc_progress *pr, void *user)
{
    series *s = user;
    if (s->n > 0 && pr->done / s->every == s->frames[s->n - 1] / s->every &&
        pr->done != pr->total)
        return;
    if (s->n == s->cap)
        return;
    s->frames[s->n] = (long)pr->done;
    s->kib[s->n] = bench_rss_kib();
    s->secs[s->n] = pr->elapsed_s;
    printf("%10ld %9.1f %10.1f\n", s->frames[s->n], s->secs[s->n], s->kib[s->n] / 1024.0);
    fflush(stdout);
    s->n++;
}

static int fail(const char *what)
{
    fprintf(stderr, "bench_soak: %s: %s\n", what, sleapc_last_error());
    return 1;
}

/* The clip repeated into a video of n frames (lossy H.264, gray). */
static int make_video(const char *path, const sleapc_tensor *clip, long n)
{
    const int64_t h = clip->shape[1], w = clip->shape[2], c = clip->shape[3];
    uint8_t *gray = malloc((size_t)(h * w));
    sleapc_video_writer *vw = NULL;
    if (!gray || sleapc__video_writer_open(path, h, w, 1, 30.0, false, &vw))
        return fail("video");
    for (long k = 0; k < n; k++) {
        const uint8_t *px = (const uint8_t *)clip->data + (k % clip->shape[0]) * h * w * c;
        for (int64_t i = 0; i < h * w; i++)
            gray[i] = px[i * c];
        if (sleapc__video_writer_write(vw, gray)) {
            sleapc__video_writer_discard(vw);
            free(gray);
            return fail("video");
        }
    }
    free(gray);
    return sleapc__video_writer_close(vw) ? fail("video") : 0;
}

/* Every frame 0..n-1 once, in order, each with one instance. */
static int check_slp(const char *path, long n)
{
    sleapc_slp *r = NULL;
    if (sleapc__slp_open(path, &r))
        return fail("read back");
    long bad = 0, insts = 0;
    for (int64_t k = 0; k < r->n_frames; k++) {
        bad += r->frames[k].frame_idx != k;
        insts += r->frames[k].n_instances;
    }
    printf("read back %s: %lld frames (%ld out of place), %ld instances\n", path,
           (long long)r->n_frames, bad, insts);
    int rc = r->n_frames == n && bad == 0 && insts >= n * 99 / 100 ? 0 : 1;
    sleapc__slp_close(r);
    return rc;
}

/* The other formats: lines (CSV: one per instance) or bytes. */
static int check_text(const char *path, long n, bool csv)
{
    FILE *f = fopen(path, "r");
    long lines = 0, bytes = 0;
    int ch;
    while (f && (ch = fgetc(f)) != EOF) {
        bytes++;
        lines += ch == '\n';
    }
    if (f)
        fclose(f);
    printf("read back %s: %ld bytes, %ld lines\n", path, bytes, lines);
    return f && (!csv || lines >= n * 99 / 100 + 1) && bytes > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *dir_arg = NULL, *format = "slp";
    long n_frames = 108000, every = 1000, size = 160;
    bool tracking = false, keep = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
            n_frames = atol(argv[++i]);
        else if (strcmp(argv[i], "--every") == 0 && i + 1 < argc)
            every = atol(argv[++i]);
        else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = atol(argv[++i]);
        else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
            format = argv[++i];
        else if (strcmp(argv[i], "--tracking") == 0)
            tracking = true;
        else if (strcmp(argv[i], "--keep") == 0)
            keep = true;
        else if (argv[i][0] != '-')
            dir_arg = argv[i];
        else {
            fprintf(stderr, "bench_soak: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (n_frames < 1 || every < 1 || size < 32)
        return fail("arguments");
    char tmpl[] = "/tmp/sleapc_soak_XXXXXX", dir[512], path[700], video[700], out[700];
    if (dir_arg)
        snprintf(dir, sizeof dir, "%s", dir_arg);
    else if (mkdtemp(tmpl))
        snprintf(dir, sizeof dir, "%s", tmpl);
    else
        return fail("temporary folder");
    sleapc_sample_opts so = sleapc_sample_opts_default();
    so.n_frames = CLIP_FRAMES;
    so.height = so.width = (int)size;
    sleapc_tensor clip = {0};
    snprintf(path, sizeof path, "%s/clip.npy", dir);
    snprintf(video, sizeof video, "%s/soak.mp4", dir);
    snprintf(out, sizeof out, "%s/soak.%s", dir, format);
    if (sleapc_sample_write(dir, &so) || sleapc_npy_read(path, &clip))
        return fail("sample");
    printf("bench_soak: %ld frames of %ldx%ld gray at 30 fps (%.1f min of video) -> %s\n", n_frames,
           size, size, n_frames / 30.0 / 60.0, out);
    if (access(video, R_OK) != 0 || keep == false) {
        if (make_video(video, &clip, n_frames))
            return 1;
    }
    sleapc_tensor_free(&clip);

    snprintf(path, sizeof path, "%s/model", dir);
    const char *models[1] = {path};
    sleapc_predictor_opts po = sleapc_predictor_opts_default();
    sleapc_predictor *p = NULL;
    sleapc_input *in = NULL;
    sleapc_writer *w = NULL;
    if (sleapc_predictor_create(models, 1, &po, &p) || sleapc_input_open(video, 0, &in))
        return fail("predictor / input");
    if (sleapc_input_n_frames(in) != n_frames) {
        fprintf(stderr, "bench_soak: %s has %lld frames, not %ld\n", video,
                (long long)sleapc_input_n_frames(in), n_frames);
        return 1;
    }
    sleapc_video_info vi = sleapc_input_video_info(in);
    if (sleapc_writer_open(out, p, &vi, 1, &w))
        return fail("writer");
    if (tracking) {
        sleapc_tracking_opts t = sleapc_tracking_opts_default();
        t.tracking = true;
        if (sleapc_writer_set_tracking(w, &t, NULL))
            return fail("tracking options");
    }
    series s = {.every = every, .cap = n_frames / every + 8};
    s.frames = calloc((size_t)s.cap, sizeof *s.frames);
    s.kib = calloc((size_t)s.cap, sizeof *s.kib);
    s.secs = calloc((size_t)s.cap, sizeof *s.secs);
    if (!s.frames || !s.kib || !s.secs)
        return fail("memory");
    printf("%10s %9s %10s\n", "frames", "seconds", "RSS MiB");
    sleapc_run_opts ro = sleapc_run_opts_default();
    ro.progress = sample;
    ro.user = &s;
    if (sleapc_predict_input(p, in, NULL, 0, w, &ro))
        return fail("predict");
    long before_close = bench_rss_kib();
    if (sleapc_writer_close(w, NULL))
        return fail("close");
    long after_close = bench_rss_kib();

    /* Summary over the samples after warm-up. */
    long start = -1, max = 0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int m = 0;
    for (long i = 0; i < s.n; i++) {
        max = s.kib[i] > max ? s.kib[i] : max;
        if (s.frames[i] < WARMUP_FRAMES && s.frames[s.n - 1] > WARMUP_FRAMES)
            continue;
        if (start < 0)
            start = s.kib[i];
        double x = (double)s.frames[i], y = (double)s.kib[i] * 1024.0;
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
        m++;
    }
    double slope = m > 1 ? (m * sxy - sx * sy) / (m * sxx - sx * sx) : 0.0;
    printf("RSS: after warm-up %.1f MiB, end of run %.1f MiB, max %.1f MiB, slope %.2f B/frame "
           "(%d samples); before close %.1f MiB, after close %.1f MiB; %.1f s, %.1f FPS\n",
           start / 1024.0, s.kib[s.n - 1] / 1024.0, max / 1024.0, slope, m,
           before_close / 1024.0, after_close / 1024.0, s.secs[s.n - 1],
           s.frames[s.n - 1] / (s.secs[s.n - 1] > 0 ? s.secs[s.n - 1] : 1));
    int rc = strcmp(format, "slp") == 0    ? check_slp(out, n_frames)
             : strcmp(format, "h5") == 0 ? (access(out, R_OK) == 0 ? 0 : 1)
                                           : check_text(out, n_frames, strcmp(format, "csv") == 0);
    printf("output complete: %s\n", rc ? "NO" : "yes");
    sleapc_input_close(in);
    sleapc_predictor_destroy(p);
    free(s.frames);
    free(s.kib);
    free(s.secs);
    if (!keep && !dir_arg) {
        const char *files[] = {"clip.npy", "truth.npy", "model/training_config.yaml",
                               "model/best.ckpt", "soak.mp4"};
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, files[i]);
            unlink(path);
        }
        unlink(out);
        snprintf(path, sizeof path, "%s/model", dir);
        rmdir(path);
        rmdir(dir);
    }
    return rc;
}
