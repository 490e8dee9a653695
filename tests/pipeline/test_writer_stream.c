/* The streaming writer. Memory: adding frames allocates nothing once its
 * batch buffers are sized (the frames go to a temporary file), and closing
 * a CSV, JSON or .slp file needs no larger block for a longer run. Tracking: frames
 * added in order are tracked block by block at close, frames added out of
 * order are gathered and tracked the way sleap-nn orders them; both must
 * give what `sleapc track` (the whole file in memory) gives for the same
 * untracked predictions, byte for byte. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "sleapc/input.h"
#include "sleapc/pipeline.h"
#include "sleapc/predictor.h"
#include "sleapc/tools.h"
#include "sleapc/tracking.h"
#include "sleapc/writer.h"
#include "test_util.h"

#define BATCH 4

/* Batches of a run: more frames than one block of the temporary file
 * (4096) in the shorter run. Adding costs no inference, so this stays fast
 * under the sanitizers too. */
#define RUN_BATCHES 1100

/* The synthetic sample's model, run once on BATCH frames of its clip. */
static sleapc_predictor *sample_predictor(void)
{
    char dir[1024], model[1100], clip_path[1100];
    snprintf(dir, sizeof dir, "%s/sample", test_tmp_dir());
    snprintf(model, sizeof model, "%s/model", dir);
    snprintf(clip_path, sizeof clip_path, "%s/clip.npy", dir);
    sleapc_sample_opts so = sleapc_sample_opts_default();
    so.n_frames = BATCH;
    sleapc_tensor clip = {0};
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_sample_write(dir, &so));
    CHECK_OK(sleapc_npy_read(clip_path, &clip));
    const int64_t n_px = sleapc_tensor_numel(&clip);
    uint8_t *px = malloc((size_t)n_px);
    for (int64_t i = 0; px && i < n_px; i++)
        px[i] = clip.dtype == SLEAPC_DTYPE_U8 ? ((const uint8_t *)clip.data)[i]
                                              : (uint8_t)((const float *)clip.data)[i];
    sleapc_tensor frames = {SLEAPC_DTYPE_U8, 4,
                            {BATCH, clip.shape[1], clip.shape[2], clip.shape[3]}, px};
    const char *models[1] = {model};
    sleapc_predictor_opts po = sleapc_predictor_opts_default();
    po.batch_size = BATCH;
    CHECK_OK(sleapc_predictor_create(models, 1, &po, &p));
    if (p)
        CHECK_OK(test_run_array(p, &frames));
    free(px);
    sleapc_tensor_free(&clip);
    return p;
}

/* n_batches batches of p's results under new frame indices; returns the
 * largest block the close asked for. */
static int64_t long_run(sleapc_predictor *p, const char *ext, int n_batches, bool track)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/run_%d_%d.%s", test_tmp_dir(), n_batches, track, ext);
    sleapc_video_info info = {"long.mp4", (int64_t)n_batches * BATCH, 64, 64, 1, NULL, NULL};
    sleapc_writer *w = NULL;
    CHECK_OK(sleapc_writer_open(path, p, &info, 1, &w));
    if (!w)
        return -1;
    if (track) {
        sleapc_tracking_opts t = sleapc_tracking_opts_default();
        t.tracking = true;
        CHECK_OK(sleapc_writer_set_tracking(w, &t, NULL));
    }
    int64_t idx[BATCH];
    int64_t before = 0;
    for (int b = 0; b < n_batches; b++) {
        if (b == 16) { /* batch buffers sized */
            before = sleapc__alloc_count();
            sleapc__alloc_largest_reset();
        }
        for (int k = 0; k < BATCH; k++)
            idx[k] = (int64_t)b * BATCH + k;
        CHECK_OK(sleapc_writer_add(w, p, 0, idx));
    }
    const int64_t added = sleapc__alloc_count() - before;
    CHECK_MSG(added == 0, "%s: %lld allocations while adding %d batches", ext, (long long)added,
              n_batches - 16);
    /* once started, the writer cannot change what it did to earlier frames */
    CHECK(sleapc_writer_set_drop_empty(w, true) == SLEAPC_ERR_STATE);
    sleapc__alloc_largest_reset();
    CHECK_OK(sleapc_writer_close(w, NULL));
    return sleapc__alloc_largest();
}

/* Every allocation of open, add and close fails in turn: each run ends in
 * a clean status, nothing leaks (the sanitizer build checks), and no output
 * appears unless the run succeeded. */
static void allocation_failures(sleapc_predictor *p)
{
    const char *exts[] = {"csv", "json", "slp", "h5"};
    for (size_t e = 0; e < sizeof exts / sizeof exts[0]; e++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/fail.%s", test_tmp_dir(), exts[e]);
        sleapc_video_info info = {"short.mp4", 12, 64, 64, 1, NULL, NULL};
        bool done = false;
        for (int64_t n = 1; n < 2000 && !done; n++) {
            remove(path);
            sleapc__alloc_fail_after(n);
            sleapc_writer *w = NULL;
            sleapc_status st = sleapc_writer_open(path, p, &info, 1, &w);
            sleapc_tracking_opts t = sleapc_tracking_opts_default();
            t.tracking = e % 2 == 0;
            if (!st)
                st = sleapc_writer_set_tracking(w, &t, NULL);
            for (int b = 0; !st && b < 3; b++) {
                const int64_t idx[BATCH] = {4 * b, 4 * b + 1, 4 * b + 2, 4 * b + 3};
                st = sleapc_writer_add(w, p, 0, idx);
            }
            if (w && !st) {
                st = sleapc_writer_close(w, NULL);
                w = NULL;
            }
            sleapc_writer_discard(w);
            sleapc__alloc_fail_after(0);
            FILE *f = fopen(path, "rb");
            CHECK_MSG((st == SLEAPC_OK) == (f != NULL), "%s: allocation %lld: status %d, file %s",
                      exts[e], (long long)n, (int)st, f ? "written" : "absent");
            if (f)
                fclose(f);
            CHECK_MSG(st == SLEAPC_OK || st == SLEAPC_ERR_NOMEM,
                      "%s: allocation %lld: %s", exts[e], (long long)n, sleapc_last_error());
            done = st == SLEAPC_OK;
        }
        CHECK_MSG(done, "%s: never succeeded", exts[e]);
    }
}

static void flat_memory(void)
{
    sleapc_predictor *p = sample_predictor();
    if (!p)
        return;
    const char *exts[] = {"csv", "json", "slp", "h5"};
    long_run(p, exts[3], RUN_BATCHES, false);
    /* CSV, JSON and .slp are written block by block: a run twice as long
     * needs no larger block at close (tracked or not). The analysis .h5 is
     * dense matrices by design. */
    for (int track = 0; track < 2; track++)
        for (size_t i = 0; i < 3; i++) {
            const int64_t a = long_run(p, exts[i], RUN_BATCHES, track);
            const int64_t b = long_run(p, exts[i], 2 * RUN_BATCHES, track);
            CHECK_MSG(a > 0 && b == a, "%s%s: largest block at close %lld for %d frames, %lld for %d",
                      exts[i], track ? " tracked" : "", (long long)a, RUN_BATCHES * BATCH,
                      (long long)b, 2 * RUN_BATCHES * BATCH);
        }
    allocation_failures(p);
    sleapc_predictor_destroy(p);
}

/* frames predicted with the top-down pair on the two flies, written to
 * name.json: tracked by the writer when track, else plain. */
static void predict_json(sleapc_predictor *p, const int64_t *frames, int n, bool track,
                         const char *name)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/%s.json", test_tmp_dir(), name);
    sleapc_input *in = NULL;
    sleapc_writer *w = NULL;
    CHECK_OK(sleapc_input_open(test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"),
                               0, &in));
    if (!in)
        return;
    sleapc_video_info vi = sleapc_input_video_info(in);
    CHECK_OK(sleapc_writer_open(path, p, &vi, 1, &w));
    sleapc_tracking_opts t = sleapc_tracking_opts_default();
    t.tracking = track;
    t.max_tracks = 2;
    sleapc_filter_opts f = sleapc_filter_opts_default();
    f.filter_min_instance_score = 0.2; /* run as frames are added */
    if (w)
        CHECK_OK(sleapc_writer_set_tracking(w, &t, &f));
    sleapc_run_opts ro = sleapc_run_opts_default();
    if (w)
        CHECK_OK(sleapc_predict_input(p, in, frames, n, w, &ro));
    if (w)
        CHECK_OK(sleapc_writer_close(w, NULL));
    sleapc_input_close(in);
}

static void same_text(const char *a, const char *b)
{
    char pa[1100], pb[1100];
    snprintf(pa, sizeof pa, "%s/%s.json", test_tmp_dir(), a);
    snprintf(pb, sizeof pb, "%s/%s.json", test_tmp_dir(), b);
    size_t na = 0, nb = 0;
    unsigned char *x = test_read_file(pa, &na), *y = test_read_file(pb, &nb);
    CHECK_MSG(x && y && na == nb && memcmp(x, y, na) == 0, "%s and %s differ", a, b);
    CHECK_MSG(x && strstr((const char *)x, "\"tracks\":[\"track_0\",\"track_1\"]"),
              "%s: not two tracks", a);
    free(x);
    free(y);
}

static void tracking_orders(void)
{
    char m1[1024], m2[1024];
    snprintf(m1, sizeof m1, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(m2, sizeof m2, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"));
    const char *models[2] = {m1, m2};
    sleapc_predictor_opts po = sleapc_predictor_opts_default();
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_predictor_create(models, 2, &po, &p));
    if (!p)
        return;
#ifdef SLEAPC_SANITIZED
    const int64_t ordered[] = {0, 1, 2, 3, 4, 5}, shuffled[] = {4, 5, 0, 1, 2, 3};
#else
    const int64_t ordered[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
                  shuffled[] = {8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7};
#endif
    const int n = (int)(sizeof ordered / sizeof ordered[0]);
    const char *names[2][3] = {{"ordered_plain", "ordered_tracked", "ordered_retracked"},
                               {"shuffled_plain", "shuffled_tracked", "shuffled_retracked"}};
    for (int s = 0; s < 2; s++) {
        const int64_t *frames = s ? shuffled : ordered;
        predict_json(p, frames, n, false, names[s][0]);
        predict_json(p, frames, n, true, names[s][1]);
        char in[1100], out[1100];
        snprintf(in, sizeof in, "%s/%s.json", test_tmp_dir(), names[s][0]);
        snprintf(out, sizeof out, "%s/%s.json", test_tmp_dir(), names[s][2]);
        const char *outs[1] = {out};
        sleapc_tracking_opts t = sleapc_tracking_opts_default();
        t.tracking = true;
        t.max_tracks = 2;
        CHECK_OK(sleapc_retrack(in, outs, 1, &t, NULL));
        same_text(names[s][1], names[s][2]);
    }
    sleapc_predictor_destroy(p);
}

int main(void)
{
    flat_memory();
    test_require_data();
    tracking_orders();
    return test_finish();
}
