/* One frame at a time: sleapc_stream_predict on gray, RGB and BGR frames
 * with padded rows gives exactly what sleapc_predictor_run gives on the same
 * pixels packed (single instance on real frames of small_robot.mp4), refuses
 * bad frames clearly, and times each call. The same frame descriptor gives
 * sleapc_predictor_run and sleapc_predict_array a batch of padded BGR frames:
 * each frame's poses are the packed RGB frame's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sleapc/pipeline.h"
#include "sleapc/stream.h"
#include "sleapc/video.h"
#include "test_util.h"

#define PAD 13
#define MAX_INST 4
#define MAX_NODES 32

typedef struct poses {
    int n;
    float points[MAX_INST * MAX_NODES * 2];
    float scores[MAX_INST];
} poses;

static poses after_run(sleapc_predictor *p, const uint8_t *px, int64_t h, int64_t w, int64_t c)
{
    poses r = {0};
    sleapc_frame f = {.data = px,
                      .height = h,
                      .width = w,
                      .format = c == 3 ? SLEAPC_PIXEL_FORMAT_RGB24 : SLEAPC_PIXEL_FORMAT_GRAY8};
    CHECK_OK(sleapc_predictor_run(p, &f));
    CHECK_OK(sleapc_predictor_frame_results(
        p, 0, &(sleapc_results){.max_instances = MAX_INST, .points = r.points, .scores = r.scores},
        &r.n));
    return r;
}

static poses after_stream(sleapc_predictor *p, sleapc_stream *s, const sleapc_frame *f)
{
    poses r = {0};
    int n = -1;
    CHECK_OK(sleapc_stream_predict(s, f, &n));
    CHECK_OK(sleapc_predictor_frame_results(
        p, 0, &(sleapc_results){.max_instances = MAX_INST, .points = r.points, .scores = r.scores},
        &r.n));
    CHECK(n == r.n);
    return r;
}

static bool same(const poses *a, const poses *b, int n_nodes)
{
    if (a->n != b->n || a->n < 1)
        return false;
    for (int i = 0; i < a->n && i < MAX_INST; i++) {
        if (a->scores[i] != b->scores[i])
            return false;
        for (int j = 0; j < n_nodes * 2; j++) {
            float x = a->points[i * n_nodes * 2 + j], y = b->points[i * n_nodes * 2 + j];
            if (!(x == y || (isnan(x) && isnan(y))))
                return false;
        }
    }
    return true;
}

/* src (h, w, c) packed -> rows of stride bytes, channels reversed when bgr. */
static uint8_t *strided(const uint8_t *src, int64_t h, int64_t w, int64_t c, int64_t stride, bool bgr)
{
    uint8_t *dst = malloc((size_t)(h * stride));
    memset(dst, 0xAB, (size_t)(h * stride));
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++)
            for (int64_t k = 0; k < c; k++)
                dst[y * stride + x * c + (bgr ? c - 1 - k : k)] = src[(y * w + x) * c + k];
    return dst;
}

int main(void)
{
    test_require_data();
    char model[2048];
    snprintf(model, sizeof model, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_single_instance"));
    const char *models[1] = {model};
    sleapc_video *v = NULL;
    sleapc_predictor *p = NULL;
    sleapc_stream *s = NULL;
    CHECK_OK(sleapc_video_open(test_data_path("sleap-nn-assets/datasets/small_robot.mp4"), &v));
    CHECK_OK(sleapc_predictor_create(models, 1, NULL, &p));
    CHECK_OK(sleapc_stream_create(p, &s));
    if (!v || !p || !s)
        return test_finish();
    sleapc_skeleton sk;
    CHECK_OK(sleapc_predictor_skeleton(p, &sk));
    int n_nodes = sk.n_nodes;
    CHECK(n_nodes <= MAX_NODES);
    int64_t h, w, c;
    sleapc_video_shape(v, &h, &w, &c);
    CHECK(c == 3);
    uint8_t *rgb = malloc((size_t)(h * w * 3)), *gray = malloc((size_t)(h * w));
    CHECK_OK(sleapc_video_read(v, 7, rgb));
    for (int64_t i = 0; i < h * w; i++)
        gray[i] = rgb[3 * i + 1];

    poses want = after_run(p, rgb, h, w, 3);
    uint8_t *rgb_pad = strided(rgb, h, w, 3, w * 3 + PAD, false);
    uint8_t *bgr_pad = strided(rgb, h, w, 3, w * 3 + PAD, true);
    uint8_t *bgr = strided(rgb, h, w, 3, w * 3, true);
    sleapc_frame f = {rgb, 1, h, w, w * 3, SLEAPC_PIXEL_FORMAT_RGB24};
    poses got = after_stream(p, s, &f);
    CHECK_MSG(same(&got, &want, n_nodes), "packed RGB");
    f = (sleapc_frame){rgb_pad, 1, h, w, w * 3 + PAD, SLEAPC_PIXEL_FORMAT_RGB24};
    got = after_stream(p, s, &f);
    CHECK_MSG(same(&got, &want, n_nodes), "RGB with padded rows");
    f = (sleapc_frame){bgr_pad, 1, h, w, w * 3 + PAD, SLEAPC_PIXEL_FORMAT_BGR24};
    got = after_stream(p, s, &f);
    CHECK_MSG(same(&got, &want, n_nodes), "BGR with padded rows");
    f = (sleapc_frame){bgr, 1, h, w, w * 3, SLEAPC_PIXEL_FORMAT_BGR24};
    got = after_stream(p, s, &f);
    CHECK_MSG(same(&got, &want, n_nodes), "packed BGR");

    /* Two padded BGR frames, one after the other, as a batch. */
    int64_t stride = w * 3 + PAD;
    uint8_t *batch = malloc((size_t)(2 * h * stride));
    memcpy(batch, bgr_pad, (size_t)(h * stride));
    memcpy(batch + h * stride, bgr_pad, (size_t)(h * stride));
    f = (sleapc_frame){batch, 2, h, w, stride, SLEAPC_PIXEL_FORMAT_BGR24};
    CHECK_OK(sleapc_predictor_run(p, &f));
    CHECK(sleapc_predictor_n_frames(p) == 2);
    for (int k = 0; k < 2; k++) {
        got = (poses){0};
        CHECK_OK(sleapc_predictor_frame_results(p, k,
                                                &(sleapc_results){.max_instances = MAX_INST,
                                                                  .points = got.points,
                                                                  .scores = got.scores},
                                                &got.n));
        CHECK_MSG(same(&got, &want, n_nodes), "run: padded BGR batch, frame %d", k);
    }
    CHECK(sleapc_stream_predict(s, &f, NULL) == SLEAPC_ERR_INVALID_ARG);
    CHECK(strstr(sleapc_last_error(), "one frame at a time") != NULL);
    char out[1024];
    snprintf(out, sizeof out, "%s/stream_batch.slp", test_tmp_dir());
    sleapc_video_info vi = {"small_robot.mp4", 2, h, w, 3, NULL, NULL};
    sleapc_writer *wr = NULL;
    CHECK_OK(sleapc_writer_open(out, p, &vi, 1, &wr));
    const int64_t second[1] = {1};
    CHECK_OK(sleapc_predict_array(p, &f, second, 1, wr, NULL));
    CHECK_OK(sleapc_writer_close(wr, NULL));
    got = (poses){0};
    CHECK_OK(sleapc_predictor_frame_results(
        p, 0,
        &(sleapc_results){.max_instances = MAX_INST, .points = got.points, .scores = got.scores},
        &got.n));
    CHECK_MSG(same(&got, &want, n_nodes), "predict_array: padded BGR frame 1");
    free(batch);

    sleapc_stream_timing t = sleapc_stream_last_timing(s);
    CHECK(t.total_ms > 0 && t.convert_ms > 0 && t.convert_ms <= t.total_ms);

    poses want_gray = after_run(p, gray, h, w, 1);
    uint8_t *gray_pad = strided(gray, h, w, 1, w + PAD, false);
    f = (sleapc_frame){gray_pad, 1, h, w, w + PAD, SLEAPC_PIXEL_FORMAT_GRAY8};
    got = after_stream(p, s, &f);
    CHECK_MSG(same(&got, &want_gray, n_nodes), "gray with padded rows");

    /* Bad frames: clear refusals, nothing predicted. */
    int n = 5;
    f = (sleapc_frame){rgb, 1, h, w, w * 3 - 1, SLEAPC_PIXEL_FORMAT_RGB24};
    CHECK(sleapc_stream_predict(s, &f, &n) == SLEAPC_ERR_INVALID_ARG && n == 0);
    CHECK(strstr(sleapc_last_error(), "row stride") != NULL);
    f = (sleapc_frame){rgb, 1, h, w, w * 3, (sleapc_pixel_format)9};
    CHECK(sleapc_stream_predict(s, &f, &n) == SLEAPC_ERR_INVALID_ARG);
    CHECK(strstr(sleapc_last_error(), "pixel format") != NULL);
    f = (sleapc_frame){NULL, 1, h, w, w * 3, SLEAPC_PIXEL_FORMAT_RGB24};
    CHECK(sleapc_stream_predict(s, &f, &n) == SLEAPC_ERR_INVALID_ARG);
    f = (sleapc_frame){rgb, 1, 0, w, w * 3, SLEAPC_PIXEL_FORMAT_RGB24};
    CHECK(sleapc_stream_predict(s, &f, &n) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_stream_predict(NULL, &f, &n) == SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_stream_create(NULL, &s) == SLEAPC_ERR_INVALID_ARG);

    free(rgb);
    free(gray);
    free(rgb_pad);
    free(bgr_pad);
    free(bgr);
    free(gray_pad);
    sleapc_stream_destroy(s);
    sleapc_predictor_destroy(p);
    sleapc_video_close(v);
    return test_finish();
}
