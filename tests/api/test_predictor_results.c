/* Bulk results: sleapc_predictor_frame_results gives, frame by frame, exactly
 * what sleapc_predictor_instance gives instance by instance (top-down on
 * real frames of centered_pair_small.mp4, two animals a frame), truncates to
 * the room given, and refuses frames the last run does not have. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sleapc/predictor.h"
#include "sleapc/video.h"
#include "test_util.h"

#define N_FRAMES 2
#define MAX_INST 8

static bool same(float a, float b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

int main(void)
{
    test_require_data();
    char m1[2048], m2[2048];
    snprintf(m1, sizeof m1, "%s", test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centroid"));
    snprintf(m2, sizeof m2, "%s",
             test_data_path("sleap-nn-assets/model_ckpts/minimal_instance_centered_instance"));
    const char *models[2] = {m1, m2};
    sleapc_video *v = NULL;
    sleapc_predictor *p = NULL;
    CHECK_OK(sleapc_video_open(test_data_path("sleap-nn-assets/datasets/centered_pair_small.mp4"), &v));
    CHECK_OK(sleapc_predictor_create(models, 2, NULL, &p));
    if (!v || !p)
        return test_finish();
    int64_t h, w, c;
    sleapc_video_shape(v, &h, &w, &c);
    uint8_t *px = malloc((size_t)(N_FRAMES * h * w * c));
    for (int k = 0; k < N_FRAMES; k++)
        CHECK_OK(sleapc_video_read(v, k, px + (size_t)(k * h * w * c)));
    sleapc_tensor frames = {SLEAPC_DTYPE_U8, 4, {N_FRAMES, h, w, c}, px};
    CHECK_OK(sleapc_predictor_run(p, &frames));

    int n_nodes = sleapc_predictor_n_nodes(p);
    float *points = malloc((size_t)(MAX_INST * n_nodes * 2) * sizeof(float));
    float *point_scores = malloc((size_t)(MAX_INST * n_nodes) * sizeof(float));
    float scores[MAX_INST];
    int tracks[MAX_INST], n = -1, mismatches = 0, total = 0;
    for (int f = 0; f < N_FRAMES; f++) {
        CHECK_OK(sleapc_predictor_frame_results(p, f, MAX_INST, points, point_scores, scores,
                                                tracks, &n));
        CHECK(n == sleapc_predictor_n_instances(p, f));
        for (int i = 0; i < n && i < MAX_INST; i++, total++) {
            sleapc_instance in;
            CHECK_OK(sleapc_predictor_instance(p, f, i, &in));
            bool ok = same(scores[i], in.score) && tracks[i] == in.track;
            for (int j = 0; j < n_nodes; j++)
                ok = ok && same(points[(i * n_nodes + j) * 2], in.points[2 * j]) &&
                     same(points[(i * n_nodes + j) * 2 + 1], in.points[2 * j + 1]) &&
                     same(point_scores[i * n_nodes + j], in.point_scores[j]);
            mismatches += !ok;
        }
    }
    CHECK_MSG(total >= 2 * N_FRAMES, "%d instances in %d frames", total, N_FRAMES);
    CHECK(mismatches == 0);

    /* Room for one: the count is the frame's, one instance is copied. */
    scores[1] = -7.0f;
    CHECK_OK(sleapc_predictor_frame_results(p, 0, 1, NULL, NULL, scores, NULL, &n));
    CHECK(n == sleapc_predictor_n_instances(p, 0) && n >= 2);
    CHECK(scores[1] == -7.0f);

    CHECK(sleapc_predictor_frame_results(p, N_FRAMES, MAX_INST, NULL, NULL, NULL, NULL, &n) ==
          SLEAPC_ERR_INVALID_ARG);
    CHECK(strstr(sleapc_last_error(), "no frame") != NULL);
    CHECK(sleapc_predictor_frame_results(p, 0, -1, NULL, NULL, NULL, NULL, &n) ==
          SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_predictor_frame_results(p, 0, 1, NULL, NULL, NULL, NULL, NULL) ==
          SLEAPC_ERR_INVALID_ARG);

    free(points);
    free(point_scores);
    free(px);
    sleapc_predictor_destroy(p);
    sleapc_video_close(v);
    return test_finish();
}
