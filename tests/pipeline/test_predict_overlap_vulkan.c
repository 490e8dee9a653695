/* The predictor's overlap on the Vulkan backend (pipeline/predictor_overlap.c:
 * batch k + 1's forward runs on the device while the host finishes batch k)
 * gives the sequential path's results bit for bit, frame by frame in the
 * order the writer sees them, and it did overlap (the predictor counts the
 * batches begun while an earlier one was still to finish). The same
 * recorded commands run on the same device in either path, so there is no
 * tolerance. Two small cases, several full batches and a last partial one
 * (which runs alone: a new batch size replans):
 * - single instance: the sample of `sleapc demo` (its model and 15 frames
 *   of its clip, 96 x 128, batches of 4), peaks found on the device;
 * - bottom-up: minimal_instance_bottomup on 7 crops (96 x 96) of a
 *   reference frame, batches of 2, with its local peaks found and its PAF
 *   lines scored on the device (the layer says so in its log) in both paths.
 * Also: a decode error mid-run ends both paths alike (check_decode_error).
 * SLEAPC_OVERLAP=0 and 1 pick the path (lavapipe, a CPU device, has it off
 * by default). Under the validation layer. Skipped (77) without a Vulkan
 * device; the bottom-up case without the data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "pipeline/frame_layout.h"
#include "pipeline/predict_stream.h"
#include "pipeline/predictor_impl.h"
#include "sleapc/input.h"
#include "sleapc/tools.h"
#include "test_util.h"
#include "../backends/vulkan_test_device.h"

#if !SLEAPC_HAVE_VULKAN
int main(void)
{
    printf("skipped: the vulkan backend is not built\n");
    return 77;
}
#else

enum { MAX_FRAMES = 16, MAX_INST = 16 };

/* Every frame's instances as the progress callback saw them, in order. */
typedef struct seen {
    sleapc_predictor *p;
    int n_frames, n_batches, n_insts;
    int n[MAX_FRAMES];
    test_instance inst[MAX_FRAMES][MAX_INST];
} seen;

static void on_batch(const sleapc_progress *pr, void *user)
{
    seen *s = user;
    (void)pr;
    s->n_batches++;
    for (int f = 0; f < sleapc__predictor_n_frames(s->p) && s->n_frames < MAX_FRAMES; f++) {
        int k = s->n_frames++;
        s->n[k] = test_n_instances(s->p, f);
        s->n_insts += s->n[k];
        for (int i = 0; i < s->n[k] && i < MAX_INST; i++) {
            memset(&s->inst[k][i], 0, sizeof s->inst[k][i]);
            CHECK_OK(test_read_instance(s->p, f, i, &s->inst[k][i]));
        }
    }
}

static bool device_paf, device_peaks;

static void on_log(sleapc_log_level level, const char *msg, void *user)
{
    (void)level;
    (void)user;
    if (strstr(msg, "PAF lines scored on the vulkan device"))
        device_paf = true;
    if (strstr(msg, "peaks of") && strstr(msg, "found on the device"))
        device_peaks = true;
}

/* Predict the clip's n frames with the overlap on or off into *s; the
 * batches begun while another was still to finish into *overlapped. */
static void predict(const char *model, const char *clip, int n, int batch, int max_h, int max_w,
                    bool overlap, seen *s, int64_t *overlapped)
{
    test_setenv("SLEAPC_OVERLAP", overlap ? "1" : "0");
    memset(s, 0, sizeof *s);
    const char *paths[1] = {model};
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
    o.backend = "vulkan";
    o.n_threads = 1;
    o.batch_size = batch;
    o.max_height = max_h;
    o.max_width = max_w;
    sleapc_input *in = NULL;
    CHECK_OK(sleapc_predictor_create(paths, 1, &o, &s->p));
    CHECK_OK(sleapc_input_open(clip, 0, &in));
    int64_t frames[MAX_FRAMES];
    for (int i = 0; i < n; i++)
        frames[i] = i;
    sleapc_run_opts ro = sleapc_run_opts_default();
    ro.progress = on_batch;
    ro.user = s;
    device_paf = device_peaks = false;
    sleapc_log_set(on_log, NULL);
    if (s->p && in)
        CHECK_OK(sleapc_predict_input(s->p, in, frames, n, NULL, &ro));
    sleapc_log_set(NULL, NULL);
    *overlapped = s->p ? s->p->overlapped : -1;
    sleapc_predictor_destroy(s->p);
    s->p = NULL;
    sleapc_input_close(in);
    test_setenv("SLEAPC_OVERLAP", NULL);
}

static void check_case(const char *name, const char *model, const char *clip, int n, int batch,
                       int max_h, int max_w, bool paf)
{
    static seen seq, ovl;
    int64_t seq_overlapped = 0, overlapped = 0;
    predict(model, clip, n, batch, max_h, max_w, false, &seq, &seq_overlapped);
    bool seq_paf = device_paf, seq_peaks = device_peaks;
    predict(model, clip, n, batch, max_h, max_w, true, &ovl, &overlapped);
    int batches = (n + batch - 1) / batch;
    CHECK_MSG(seq.n_frames == n && ovl.n_frames == n && seq.n_batches == batches &&
                  ovl.n_batches == batches,
              "%s: frames %d and %d, batches %d and %d, want %d and %d", name, seq.n_frames,
              ovl.n_frames, seq.n_batches, ovl.n_batches, n, batches);
    CHECK_MSG(seq_overlapped == 0, "%s: the sequential path overlapped %lld batches", name,
              (long long)seq_overlapped);
    CHECK_MSG(overlapped >= 1, "%s: no batch was begun while another was to finish", name);
    CHECK_MSG(seq_peaks && device_peaks, "%s: peaks not found on the device (%d, %d)", name,
              seq_peaks, device_peaks);
    if (paf)
        CHECK_MSG(seq_paf && device_paf, "%s: PAF lines not scored on the device (%d, %d)", name,
                  seq_paf, device_paf);
    CHECK_MSG(seq.n_insts >= 1, "%s: no instances", name);
    int differ = 0;
    for (int f = 0; f < n && f < MAX_FRAMES; f++) {
        if (seq.n[f] != ovl.n[f]) {
            CHECK_MSG(false, "%s: frame %d: %d instances, overlapped %d", name, f, seq.n[f],
                      ovl.n[f]);
            continue;
        }
        for (int i = 0; i < seq.n[f] && i < MAX_INST; i++)
            differ += memcmp(&seq.inst[f][i], &ovl.inst[f][i], sizeof seq.inst[f][i]) != 0;
    }
    CHECK_MSG(differ == 0, "%s: %d instances differ from the sequential path's", name, differ);
    printf("%s: %d frames, %d instances, %lld batches overlapped, identical to the sequential "
           "path\n", name, n, seq.n_insts, (long long)overlapped);
}

/* A reader of an (N, H, W, C) clip that fails at frame fail_at. */
typedef struct clip_reader {
    sleapc_tensor t;
    int64_t fail_at;
} clip_reader;

static sleapc_status clip_read(void *ctx, int64_t idx, uint8_t *dst)
{
    clip_reader *r = ctx;
    if (idx == r->fail_at)
        return sleapc__fail(SLEAPC_ERR_IO, "clip: frame %lld unreadable", (long long)idx);
    const int64_t h = r->t.shape[1], w = r->t.shape[2], c = r->t.shape[3];
    sleapc__frame_to_chw((const uint8_t *)r->t.data + idx * h * w * c, h, w, c, dst);
    return SLEAPC_OK;
}

/* A decode error in the third of four batches ends the run with that
 * error after the frames the sequential path delivers (the first two
 * batches), with no batch left on the device; the predictor then runs a
 * whole clip as before. */
static void check_decode_error(const char *model, const char *clip)
{
    clip_reader r = {.fail_at = 9};
    CHECK_OK(sleapc_npy_read(clip, &r.t));
    if (r.t.ndim != 4)
        return;
    sleapc_frame_reader rd = {.ctx = &r, .read = clip_read, .height = r.t.shape[1],
                              .width = r.t.shape[2], .channels = r.t.shape[3]};
    int64_t frames[15];
    for (int i = 0; i < 15; i++)
        frames[i] = i;
    static seen runs[2];
    for (int overlap = 0; overlap < 2; overlap++) {
        test_setenv("SLEAPC_OVERLAP", overlap ? "1" : "0");
        seen *s = &runs[overlap];
        memset(s, 0, sizeof *s);
        const char *paths[1] = {model};
        sleapc_predictor_opts o = sleapc_predictor_opts_default();
        o.compat = SLEAPC_COMPAT_SLEAP_NN_0_3_3; /* reference data of sleap-nn 0.3.3 */
        o.backend = "vulkan";
        o.n_threads = 1;
        CHECK_OK(sleapc_predictor_create(paths, 1, &o, &s->p));
        if (!s->p)
            continue;
        sleapc_run_opts ro = sleapc_run_opts_default();
        ro.progress = on_batch;
        ro.user = s;
        r.fail_at = 9;
        sleapc_status st = sleapc__predict_stream(s->p, &rd, frames, 15, NULL, &ro);
        CHECK_MSG(st == SLEAPC_ERR_IO && strstr(sleapc_last_error(), "frame 9 unreadable"),
                  "decode error (overlap %d): %s: %s", overlap, sleapc_status_str(st),
                  sleapc_last_error());
        CHECK_MSG(s->n_frames == 8 && s->p->n_begun == 0,
                  "decode error (overlap %d): %d frames delivered, %d batches left begun", overlap,
                  s->n_frames, s->p->n_begun);
        r.fail_at = -1;
        seen again = {.p = s->p};
        ro.user = &again;
        CHECK_OK(sleapc__predict_stream(s->p, &rd, frames, 15, NULL, &ro));
        CHECK_MSG(again.n_frames == 15, "after the error: %d frames", again.n_frames);
        sleapc_predictor_destroy(s->p);
        s->p = NULL;
    }
    test_setenv("SLEAPC_OVERLAP", NULL);
    int differ = runs[0].n_frames != runs[1].n_frames;
    for (int f = 0; !differ && f < runs[0].n_frames; f++) {
        differ |= runs[0].n[f] != runs[1].n[f];
        for (int i = 0; !differ && i < runs[0].n[f]; i++)
            differ |= memcmp(&runs[0].inst[f][i], &runs[1].inst[f][i], sizeof runs[0].inst[f][i]);
    }
    CHECK_MSG(!differ, "decode error: the frames delivered differ between the paths");
    printf("decode error: %d frames delivered, then the error, in both paths\n", runs[1].n_frames);
    sleapc_tensor_free(&r.t);
}

/* 7 crops of 96 x 96 from the reference frame's flies, as (N, H, W, 1). */
static bool write_crops(const char *path)
{
    sleapc_tensor frame;
    if (sleapc_npy_read(test_data_path("reference/bottomup__centered_pair_f0000/frame.npy"),
                        &frame) != SLEAPC_OK)
        return false;
    enum { N = 7, S = 96, Y0 = 16, X0 = 100 };
    static uint8_t px[N * S * S];
    bool ok = frame.ndim == 3 && frame.shape[0] >= Y0 + 192 && frame.shape[1] >= X0 + 128 &&
              frame.shape[2] == 1;
    for (int k = 0; ok && k < N; k++) {
        int y0 = Y0 + (k * 16) % 96, x0 = X0 + (k * 8) % 32;
        for (int y = 0; y < S; y++)
            memcpy(px + ((size_t)k * S + y) * S,
                   (const uint8_t *)frame.data + (y0 + y) * frame.shape[1] + x0, S);
    }
    sleapc_tensor_free(&frame);
    sleapc_tensor t = {.dtype = SLEAPC_DTYPE_U8, .ndim = 4, .shape = {N, S, S, 1}, .data = px};
    return ok && sleapc_npy_write(path, &t) == SLEAPC_OK;
}

int main(void)
{
    if (!vulkan_test_factory())
        return 77;
    char dir[1024], model[1100], clip[1100];
    snprintf(dir, sizeof dir, "%s/sample", test_tmp_dir());
    snprintf(model, sizeof model, "%s/model", dir);
    snprintf(clip, sizeof clip, "%s/clip.npy", dir);
    sleapc_sample_opts so = sleapc_sample_opts_default();
    so.n_frames = 15;
    so.height = 96;
    so.width = 128;
    CHECK_OK(sleapc_sample_write(dir, &so));
    check_case("single instance", model, clip, 15, 4, 0, 0, false);
    check_decode_error(model, clip);

    if (!test_data_dir()) {
        printf("skipped: bottom-up: no data\n");
        return test_finish();
    }
    char crops[1100], bu[2048];
    snprintf(crops, sizeof crops, "%s/crops.npy", test_tmp_dir());
    snprintf(bu, sizeof bu, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_bottomup"));
    if (!write_crops(crops)) {
        printf("skipped: bottom-up: no reference frame\n");
        return test_finish();
    }
    /* The crops as they are, not padded to the config's 384 x 384. */
    check_case("bottom-up", bu, crops, 7, 2, 96, 96, true);
    return test_finish();
}
#endif
