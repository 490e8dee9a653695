/* The embedding route's crops, standardize and vectors against sleap-nn
 * 0.3.5 (tests/goldens/sleapnn-0.3.5-families, case embedding__topdown_slp):
 * the first 4 detections of 0.3.5's top-down predictions on the frames
 * sleap-io 0.9.5 decoded (shared data), centred on their points' mean.
 * - Crops (heads/crops.npy): equal to the byte. Skia's bilinear filter,
 *   coverage and rounding are followed step by step, so any difference is a
 *   wrong step, not float noise.
 * - Standardized inputs (heads/input.npy): within 1e-6 (the variance is
 *   summed in another order; about 5e-7 on these crops).
 * - Vectors (expected.json): within 1e-5 per element (the README's
 *   tolerance), through the embedder's batches on the native backend.
 * - Crops reaching off the frame: black beyond it, nothing read outside. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy/npy_file.h"
#include "io/predictions/predictions_format.h"
#include "layers/embedder.h"
#include "layers/ops/crop_skia.h"
#include "test_util.h"

#define FAMILIES SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
#define MODEL FAMILIES "/models/embedding"
#define CASE FAMILIES "/cases/embedding__topdown_slp"
#define FRAMES "sleapnn-0.3.5/frames/centered_pair_small.sleap_io.f0000-0019.npy"
#define DETECTIONS "sleapnn-0.3.5/predict/topdown__centered_pair__video_f0000-0019/pred.slp"
#define N 4
#define SIZE 96
#define DIM 16

static int read_vectors(float *v)
{
    size_t len = 0;
    unsigned char *text = test_read_file(CASE "/expected.json", &len);
    cJSON *doc = text ? cJSON_ParseWithLength((const char *)text, len) : NULL;
    free(text);
    int n = 0;
    const cJSON *frames = cJSON_GetObjectItem(doc, "frames");
    for (int f = 0; f < cJSON_GetArraySize(frames) && n < N; f++) {
        const cJSON *insts = cJSON_GetObjectItem(cJSON_GetArrayItem(frames, f), "instances");
        for (int i = 0; i < cJSON_GetArraySize(insts) && n < N; i++, n++) {
            const cJSON *vec = cJSON_GetObjectItem(cJSON_GetArrayItem(insts, i), "vector");
            for (int k = 0; k < DIM; k++)
                v[n * DIM + k] = (float)cJSON_GetNumberValue(cJSON_GetArrayItem(vec, k));
        }
    }
    cJSON_Delete(doc);
    return n;
}

/* The first N detections: their frame and crop centre. */
static int first_detections(const sleapc_predictions *pr, int64_t *frame, float *cx, float *cy)
{
    int n = 0;
    for (int64_t f = 0; f < pr->n_frames && n < N; f++)
        for (int64_t i = 0; i < pr->frames[f].n && n < N; i++) {
            const float *pts = pr->points + (pr->frames[f].first + i) * pr->n_nodes * 2;
            CHECK(sleapc__embedder_centroid(pts, pr->n_nodes, &cx[n], &cy[n]));
            frame[n++] = pr->frames[f].frame_idx;
        }
    return n;
}

static void check_crops(const sleapc_tensor *frames, const int64_t *frame, const float *cx,
                        const float *cy)
{
    sleapc_tensor want = {0}, want_in = {0};
    CHECK_OK(sleapc__npy_read(CASE "/heads/crops.npy", &want));
    CHECK_OK(sleapc__npy_read(CASE "/heads/input.npy", &want_in));
    if (!want.data || !want_in.data)
        return;
    const int64_t h = frames->shape[1], w = frames->shape[2];
    float *got = malloc(sizeof(float) * N * SIZE * SIZE);
    int64_t differ = 0;
    for (int k = 0; k < N; k++)
        sleapc__crop_skia((const uint8_t *)frames->data + frame[k] * h * w, 1, h, w, cx[k], cy[k],
                          SIZE, got + k * SIZE * SIZE);
    for (int64_t i = 0; i < N * SIZE * SIZE; i++)
        differ += got[i] != ((const float *)want.data)[i];
    printf("crops: %lld of %d pixels differ from sleap-nn's\n", (long long)differ,
           N * SIZE * SIZE);
    CHECK(differ == 0);
    sleapc__embedder_standardize(got, N, 1, SIZE);
    double worst = 0;
    for (int64_t i = 0; i < N * SIZE * SIZE; i++)
        worst = fmax(worst, fabs((double)got[i] - ((const float *)want_in.data)[i]));
    printf("standardized: worst difference %.3g (tolerance 1e-6)\n", worst);
    CHECK(worst <= 1e-6);
    free(got);
    free(want.data);
    free(want_in.data);
}

static void check_vectors(const sleapc_tensor *frames, const int64_t *frame, const float *cx,
                          const float *cy)
{
    float want[N * DIM], got[N * DIM];
    CHECK(read_vectors(want) == N);
    sleapc_model *m = NULL;
    CHECK_OK(sleapc__model_load(MODEL, &m));
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.backend = "native";
    o.n_threads = 2;
    o.batch_size = 3; /* one full batch and one flushed */
    sleapc_embedder *e = NULL;
    if (m)
        CHECK_OK(sleapc__embedder_create(m, &o, &e));
    const int64_t h = frames->shape[1], w = frames->shape[2];
    for (int k = 0; e && k < N; k++) {
        CHECK_OK(sleapc__embedder_frame(e, (const uint8_t *)frames->data + frame[k] * h * w, 1, h,
                                        w));
        CHECK_OK(sleapc__embedder_add(e, cx[k], cy[k], got + k * DIM));
    }
    if (e) {
        CHECK_OK(sleapc__embedder_flush(e));
        double worst = 0;
        for (int i = 0; i < N * DIM; i++)
            worst = fmax(worst, fabs((double)got[i] - want[i]));
        printf("vectors: worst difference %.3g (tolerance 1e-5)\n", worst);
        CHECK(worst <= 1e-5);
    }
    sleapc__embedder_destroy(e);
    sleapc__model_destroy(m);
}

/* A crop hanging off the top-left corner: black there, the frame's pixels
 * (scaled at its edge) elsewhere; a frame of one value keeps it inside. */
static void check_off_frame(void)
{
    enum { H = 40, W = 50, S = 32 };
    static uint8_t frame[H * W];
    memset(frame, 200, sizeof frame);
    float crop[S * S];
    sleapc__crop_skia(frame, 1, H, W, 3.3f, 5.7f, S, crop);
    CHECK(crop[0] == 0.0f);                 /* beyond the corner */
    CHECK(crop[(S - 1) * S + (S - 1)] == 200.0f); /* inside */
    bool in_range = true;
    for (int i = 0; i < S * S; i++)
        in_range &= crop[i] >= 0.0f && crop[i] <= 200.0f && crop[i] == floorf(crop[i]);
    CHECK(in_range);
    /* Far off the frame: all black. */
    sleapc__crop_skia(frame, 1, H, W, -500.0f, 900.0f, S, crop);
    bool black = true;
    for (int i = 0; i < S * S; i++)
        black &= crop[i] == 0.0f;
    CHECK(black);
}

int main(void)
{
    check_off_frame();
    test_require_data();
    sleapc_tensor frames = {0};
    CHECK_OK(sleapc__npy_read(test_data_path(FRAMES), &frames));
    sleapc_predictions pr = {0};
    CHECK_OK(sleapc__predictions_read(test_data_path(DETECTIONS), &pr, NULL));
    int64_t frame[N];
    float cx[N], cy[N];
    if (frames.data && frames.ndim == 4 && frames.shape[3] == 1 &&
        first_detections(&pr, frame, cx, cy) == N) {
        check_crops(&frames, frame, cx, cy);
        check_vectors(&frames, frame, cx, cy);
    } else {
        CHECK(!"frames or detections unreadable");
    }
    sleapc__predictions_free(&pr);
    free(frames.data);
    return test_finish();
}
