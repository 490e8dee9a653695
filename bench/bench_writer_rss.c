/* Does writing predictions keep memory flat over a long video?
 *
 * Predicts a few frames of the synthetic sample once (the model and clip of
 * `sleapc demo`), then hands the writer those frames' predictions again and
 * again under new frame indices, as a long run does, and prints the
 * process's resident memory every --every frames and after the file is
 * closed. The baseline is the RSS measured before the first frame was added,
 * in the same run; the figure that matters is the growth per frame. A .slp
 * written is then converted (to .slp and .json) and tracked (to .slp), and
 * the peak RSS of each printed against the RSS before it: reading the file
 * a block at a time keeps these flat too.
 * Usage: bench_writer_rss [OUT.slp|.h5|.csv|.json (a temp .slp)] [frames (108000: one hour
 *        at 30 fps)] [every (10000)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_rss.h"
#include "sleapc/tools.h"
#include "sleapc/predictor.h"
#include "sleapc/tracking.h"
#include "sleapc/writer.h"

#define BATCH 4

static int fail(const char *what)
{
    fprintf(stderr, "bench_writer_rss: %s: %s\n", what, sleapc_last_error());
    return 1;
}

/* Converts (or with tracking, retracks) in to out; prints the peak RSS. */
static int reread(const char *what, const char *in, const char *out, bool track)
{
    long before = bench_rss_kib();
    bench_rss_peak_reset();
    sleapc_status st;
    if (track) {
        sleapc_tracking_opts t = sleapc_tracking_opts_default();
        t.tracking = true;
        sleapc_filter_opts fo = sleapc_filter_opts_default();
        const char *outs[1] = {out};
        st = sleapc_retrack(in, outs, 1, &t, &fo);
    } else {
        st = sleapc_predictions_convert(in, out);
    }
    if (st)
        return fail(what);
    long peak = bench_rss_peak_kib();
    printf("%-22s RSS before %.1f MiB, peak %.1f MiB (%+.1f MiB), after %.1f MiB\n", what,
           before / 1024.0, peak / 1024.0, (peak - before) / 1024.0, bench_rss_kib() / 1024.0);
    unlink(out);
    return 0;
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/sleapc_writer_rss_XXXXXX", out[512], model[512], clip_path[512];
    if (!mkdtemp(dir))
        return fail("temporary folder");
    if (argc > 1 && argv[1][0])
        snprintf(out, sizeof out, "%s", argv[1]);
    else
        snprintf(out, sizeof out, "%s/out.slp", dir);
    long n_frames = argc > 2 ? atol(argv[2]) : 108000;
    long every = argc > 3 ? atol(argv[3]) : 10000;
    if (n_frames < BATCH || every < 1)
        return fail("arguments");
    snprintf(model, sizeof model, "%s/model", dir);
    snprintf(clip_path, sizeof clip_path, "%s/clip.npy", dir);
    sleapc_sample_opts so = sleapc_sample_opts_default();
    so.n_frames = BATCH;
    sleapc_tensor clip = {0};
    if (sleapc_sample_write(dir, &so) || sleapc_npy_read(clip_path, &clip))
        return fail("sample");
    /* The predictor takes uint8 frames (npy_read gives others as float32). */
    int64_t n_px = sleapc_tensor_numel(&clip);
    uint8_t *px = malloc((size_t)n_px);
    for (int64_t i = 0; px && i < n_px; i++)
        px[i] = clip.dtype == SLEAPC_DTYPE_U8 ? ((const uint8_t *)clip.data)[i]
                                              : (uint8_t)((const float *)clip.data)[i];
    sleapc_frame frames = {px,
                           BATCH,
                           clip.shape[1],
                           clip.shape[2],
                           0,
                           clip.shape[3] == 3 ? SLEAPC_PIXEL_FORMAT_RGB24
                                              : SLEAPC_PIXEL_FORMAT_GRAY8};
    const char *models[1] = {model};
    sleapc_predictor_opts po = sleapc_predictor_opts_default();
    po.batch_size = BATCH;
    sleapc_predictor *p = NULL;
    if (!px || sleapc_predictor_create(models, 1, &po, &p) || sleapc_predictor_run(p, &frames))
        return fail("predict");
    int per_batch = 0;
    for (int k = 0; k < BATCH; k++) {
        int n = 0;
        sleapc_predictor_frame_results(p, k, NULL, &n);
        per_batch += n;
    }
    sleapc_skeleton sk;
    if (sleapc_predictor_skeleton(p, &sk))
        return fail("skeleton");
    sleapc_video_info info = {"long_video.mp4", n_frames, clip.shape[1], clip.shape[2], clip.shape[3],
                              NULL, NULL};
    sleapc_writer *w = NULL;
    if (sleapc_writer_open(out, p, &info, 1, &w))
        return fail("open writer");
    long base = bench_rss_kib();
    printf("%s: %d nodes, %d instances per %d frames; RSS before the first frame %.1f MiB\n", out,
           sk.n_nodes, per_batch, BATCH, base / 1024.0);
    printf("%10s %12s %14s\n", "frames", "RSS MiB", "growth B/frame");
    int64_t idx[BATCH];
    for (long f = 0; f + BATCH <= n_frames; f += BATCH) {
        for (int k = 0; k < BATCH; k++)
            idx[k] = f + k;
        if (sleapc_writer_add(w, p, 0, idx))
            return fail("add");
        long done = f + BATCH;
        if (done % every < BATCH || done + BATCH > n_frames) {
            long r = bench_rss_kib();
            printf("%10ld %12.1f %14.1f\n", done, r / 1024.0, (double)(r - base) * 1024.0 / (double)done);
            fflush(stdout);
        }
    }
    if (sleapc_writer_close(w, NULL))
        return fail("close writer");
    printf("after close: RSS %.1f MiB\n", bench_rss_kib() / 1024.0);
    size_t n_out = strlen(out);
    if (n_out > 4 && strcmp(out + n_out - 4, ".slp") == 0) {
        char conv[600];
        snprintf(conv, sizeof conv, "%s/conv.slp", dir);
        if (reread("convert .slp -> .slp", out, conv, false))
            return 1;
        snprintf(conv, sizeof conv, "%s/conv.json", dir);
        if (reread("convert .slp -> .json", out, conv, false))
            return 1;
        snprintf(conv, sizeof conv, "%s/tracked.slp", dir);
        if (reread("track .slp -> .slp", out, conv, true))
            return 1;
    }
    sleapc_predictor_destroy(p);
    sleapc_tensor_free(&clip);
    free(px);
    if (!(argc > 1 && argv[1][0]))
        unlink(out);
    char path[600];
    const char *files[] = {"clip.npy", "truth.npy", "model/training_config.yaml", "model/best.ckpt"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/model", dir);
    rmdir(path);
    rmdir(dir);
    return 0;
}
