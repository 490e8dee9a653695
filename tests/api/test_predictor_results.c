/* Bulk results: sleapc_predictor_frame_results (top-down on real frames of
 * centered_pair_small.mp4, two animals a frame) counts a frame's instances
 * with no room given, copies the same instances whatever the room (a
 * truncated read is the start of the full one), and refuses frames the last
 * run does not have. */
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
    sleapc_frame frames =
        test_frames(&(sleapc_tensor){SLEAPC_DTYPE_U8, 4, {N_FRAMES, h, w, c}, px});
    CHECK_OK(sleapc_predictor_run(p, &frames));

    sleapc_skeleton sk;
    CHECK_OK(sleapc_predictor_skeleton(p, &sk));
    int n_nodes = sk.n_nodes;
    float *points = malloc((size_t)(MAX_INST * n_nodes * 2) * sizeof(float));
    float *point_scores = malloc((size_t)(MAX_INST * n_nodes) * sizeof(float));
    float scores[MAX_INST], one_points[64], one_scores[32], one_score;
    int tracks[MAX_INST], one_track, n = -1, count = -1, mismatches = 0, total = 0;
    CHECK(n_nodes * 2 <= 64);
    for (int f = 0; f < N_FRAMES; f++) {
        CHECK_OK(sleapc_predictor_frame_results(p, f,
                                                &(sleapc_results){.max_instances = MAX_INST,
                                                                  .points = points,
                                                                  .point_scores = point_scores,
                                                                  .scores = scores,
                                                                  .tracks = tracks},
                                                &n));
        CHECK_OK(sleapc_predictor_frame_results(p, f, NULL, &count));
        CHECK(n == count);
        for (int i = 0; i < n && i < MAX_INST; i++, total++) {
            /* Instance i alone: the first of a read with room for i + 1. */
            float *pi = malloc((size_t)((i + 1) * n_nodes * 2) * sizeof(float));
            float *si = malloc((size_t)((i + 1) * n_nodes) * sizeof(float));
            float sc[MAX_INST];
            int tr[MAX_INST], k = -1;
            CHECK_OK(sleapc_predictor_frame_results(p, f,
                                                    &(sleapc_results){.max_instances = i + 1,
                                                                      .points = pi,
                                                                      .point_scores = si,
                                                                      .scores = sc,
                                                                      .tracks = tr},
                                                    &k));
            memcpy(one_points, pi + (size_t)(i * n_nodes * 2),
                   (size_t)(n_nodes * 2) * sizeof(float));
            memcpy(one_scores, si + (size_t)(i * n_nodes), (size_t)n_nodes * sizeof(float));
            one_score = sc[i];
            one_track = tr[i];
            free(pi);
            free(si);
            bool ok = k == n && same(scores[i], one_score) && tracks[i] == one_track &&
                      isfinite(scores[i]);
            for (int j = 0; j < n_nodes; j++)
                ok = ok && same(points[(i * n_nodes + j) * 2], one_points[2 * j]) &&
                     same(points[(i * n_nodes + j) * 2 + 1], one_points[2 * j + 1]) &&
                     same(point_scores[i * n_nodes + j], one_scores[j]);
            mismatches += !ok;
        }
    }
    CHECK_MSG(total >= 2 * N_FRAMES, "%d instances in %d frames", total, N_FRAMES);
    CHECK(mismatches == 0);

    /* Room for one: the count is the frame's, one instance is copied. */
    scores[1] = -7.0f;
    CHECK_OK(sleapc_predictor_frame_results(
        p, 0, &(sleapc_results){.max_instances = 1, .scores = scores}, &n));
    CHECK_OK(sleapc_predictor_frame_results(p, 0, NULL, &count));
    CHECK(n == count && n >= 2);
    CHECK(scores[1] == -7.0f);

    CHECK(sleapc_predictor_frame_results(p, N_FRAMES, &(sleapc_results){.max_instances = MAX_INST},
                                         &n) == SLEAPC_ERR_INVALID_ARG);
    CHECK(strstr(sleapc_last_error(), "no frame") != NULL);
    CHECK(sleapc_predictor_frame_results(p, 0, &(sleapc_results){.max_instances = -1}, &n) ==
          SLEAPC_ERR_INVALID_ARG);
    CHECK(sleapc_predictor_frame_results(p, 0, &(sleapc_results){.max_instances = 1}, NULL) ==
          SLEAPC_ERR_INVALID_ARG);

    free(points);
    free(point_scores);
    free(px);
    sleapc_predictor_destroy(p);
    sleapc_video_close(v);
    return test_finish();
}
