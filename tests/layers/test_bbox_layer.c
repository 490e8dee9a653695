/* BBoxLayer on sleap-nn 0.3.5's box detectors: the layer made by
 * sleapc__layer_create for each model, run on the 20 shared frames in
 * batches of 4 (as the reference ran them), its boxes per frame
 * (sleapc__layer_outputs_frame_boxes) against expected.json of
 * cases/<family>__npy: the same boxes in the same order, corners within
 * 0.02 px and scores within 1e-5 (README's tolerances). The CenterNet case
 * ran with peak_threshold 0.05, the SSD case with the defaults.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy/npy_file.h"
#include "layers/layer.h"
#include "sleapc/predictor.h"
#include "test_util.h"

#define FAMILIES SLEAPC_SOURCE_DIR "/tests/goldens/sleapnn-0.3.5-families"
#define FRAMES "sleapnn-0.3.5/frames/centered_pair_small.sleap_io.f0000-0019.npy"
#define BATCH 4
#define PX_TOL 0.02
#define SCORE_TOL 1e-5

static cJSON *read_json(const char *path)
{
    size_t n = 0;
    unsigned char *text = test_read_file(path, &n);
    cJSON *j = text ? cJSON_ParseWithLength((const char *)text, n) : NULL;
    free(text);
    return j;
}

/* Frame f's boxes against the expected ones. */
static void compare_frame(const char *family, int f, const sleapc_box *got, int n,
                          const cJSON *want)
{
    int n_want = cJSON_GetArraySize(want);
    CHECK_MSG(n == n_want, "%s frame %d: %d boxes, expected %d", family, f, n, n_want);
    for (int i = 0; i < n && i < n_want; i++) {
        const cJSON *b = cJSON_GetArrayItem(want, i);
        const cJSON *xyxy = cJSON_GetObjectItem(b, "xyxy");
        double score = cJSON_GetNumberValue(cJSON_GetObjectItem(b, "score"));
        const float g[4] = {got[i].x1, got[i].y1, got[i].x2, got[i].y2};
        for (int q = 0; q < 4; q++) {
            double w = cJSON_GetNumberValue(cJSON_GetArrayItem(xyxy, q));
            CHECK_MSG(fabs(g[q] - w) <= PX_TOL, "%s frame %d box %d corner %d: %.4f, expected %.4f",
                      family, f, i, q, g[q], w);
        }
        CHECK_MSG(fabs(got[i].score - score) <= SCORE_TOL, "%s frame %d box %d: score %.6f, "
                  "expected %.6f", family, f, i, got[i].score, score);
        CHECK(got[i].category == 0);
    }
}

static void check_family(const char *family, double peak_threshold, const sleapc_tensor *frames)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/cases/%s__npy/expected.json", FAMILIES, family);
    cJSON *expected = read_json(path);
    CHECK_MSG(expected != NULL, "cannot read %s", path);
    snprintf(path, sizeof path, "%s/models/%s", FAMILIES, family);
    sleapc_model *m = NULL;
    CHECK_OK(sleapc__model_load(path, &m));
    sleapc_predictor_opts o = sleapc_predictor_opts_default();
    o.backend = "native";
    o.n_threads = 2;
    o.peak_threshold = peak_threshold;
    sleapc_layer *layer = NULL;
    if (m)
        CHECK_OK(sleapc__layer_create(&m, 1, &o, &layer));
    const cJSON *want = cJSON_GetObjectItem(expected, "frames");
    int64_t n = frames->shape[0], h = frames->shape[1], w = frames->shape[2];
    sleapc_layer_outputs out = {0};
    for (int64_t f0 = 0; layer && want && f0 < n; f0 += BATCH) {
        int64_t b = n - f0 < BATCH ? n - f0 : BATCH;
        const uint8_t *batch = (const uint8_t *)frames->data + f0 * h * w;
        sleapc_status st = layer->ops->run(layer, batch, b, 1, h, w, &out);
        CHECK_OK(st);
        if (st)
            break;
        CHECK(out.has_boxes && out.n_frames == b);
        for (int64_t k = 0; k < b; k++) {
            const sleapc_box *bx = NULL;
            int nb = sleapc__layer_outputs_frame_boxes(&out, k, &bx);
            const cJSON *fr = cJSON_GetArrayItem(want, (int)(f0 + k));
            CHECK((int64_t)cJSON_GetNumberValue(cJSON_GetObjectItem(fr, "frame_idx")) == f0 + k);
            compare_frame(family, (int)(f0 + k), bx, nb, cJSON_GetObjectItem(fr, "boxes"));
        }
    }
    /* Out of range: no boxes. */
    const sleapc_box *none = NULL;
    CHECK(sleapc__layer_outputs_frame_boxes(&out, out.n_frames, &none) == 0 && none == NULL);
    sleapc__layer_outputs_free(&out);
    sleapc__layer_destroy(layer);
    sleapc__model_destroy(m);
    cJSON_Delete(expected);
}

int main(void)
{
    test_require_data();
    sleapc_tensor frames = {0};
    CHECK_OK(sleapc__npy_read(test_data_path(FRAMES), &frames));
    if (!frames.data)
        return test_finish();
    CHECK(frames.dtype == SLEAPC_DTYPE_U8 && frames.ndim == 4 && frames.shape[3] == 1);
    check_family("bbox_centernet", 0.05, &frames);
    check_family("bbox_ssd", 0.2, &frames);
    free(frames.data);
    return test_finish();
}
