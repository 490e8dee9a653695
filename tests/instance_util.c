/* Reading a predictor's instances one at a time through the public bulk
 * reader (test_util.h). Apart from test_util.c so that builds of the library
 * without the predictor (cross/) link test_util.c alone. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

int test_n_nodes(const sleapc_predictor *p)
{
    sleapc_skeleton sk;
    return sleapc_predictor_skeleton(p, &sk) ? 0 : sk.n_nodes;
}

const char *test_class_name(const sleapc_predictor *p, int i)
{
    sleapc_skeleton sk;
    if (sleapc_predictor_skeleton(p, &sk) || i < 0 || i >= sk.n_classes)
        return NULL;
    return sk.class_names[i];
}

int test_n_instances(const sleapc_predictor *p, int frame)
{
    int n = 0;
    return sleapc_predictor_frame_results(p, frame, NULL, &n) ? 0 : n;
}

sleapc_status test_read_instance(const sleapc_predictor *p, int frame, int i, test_instance *out)
{
    sleapc_skeleton sk;
    sleapc_status st = sleapc_predictor_skeleton(p, &sk);
    if (st)
        return st;
    int n = 0;
    if (i < 0 || sk.n_nodes > TEST_MAX_NODES ||
        sleapc_predictor_frame_results(p, frame, NULL, &n) || i >= n)
        return SLEAPC_ERR_INVALID_ARG;
    size_t k = (size_t)i + 1, nodes = (size_t)sk.n_nodes;
    float *points = malloc(k * nodes * 2 * sizeof(float));
    float *point_scores = malloc(k * nodes * sizeof(float));
    float *scores = malloc(k * 6 * sizeof(float));
    int *tracks = malloc(k * sizeof(int));
    if (!points || !point_scores || !scores || !tracks) {
        st = SLEAPC_ERR_NOMEM;
    } else {
        sleapc_results r = {.max_instances = i + 1,
                            .points = points,
                            .point_scores = point_scores,
                            .scores = scores,
                            .tracks = tracks,
                            .tracking_scores = scores + k,
                            .centroids = scores + 2 * k,
                            .centroid_scores = scores + 4 * k};
        st = sleapc_predictor_frame_results(p, frame, &r, &n);
    }
    if (!st) {
        memset(out, 0, sizeof *out);
        memcpy(out->points, points + (size_t)i * nodes * 2, nodes * 2 * sizeof(float));
        memcpy(out->point_scores, point_scores + (size_t)i * nodes, nodes * sizeof(float));
        out->score = scores[i];
        out->track = tracks[i];
        out->tracking_score = scores[k + (size_t)i];
        out->centroid[0] = scores[2 * k + 2 * (size_t)i];
        out->centroid[1] = scores[2 * k + 2 * (size_t)i + 1];
        out->centroid_score = scores[4 * k + (size_t)i];
        out->has_centroid = !isnan(out->centroid[0]);
    }
    free(points);
    free(point_scores);
    free(scores);
    free(tracks);
    return st;
}

sleapc_frame test_frames(const sleapc_tensor *t)
{
    const int64_t *s = t->shape;
    int64_t off = t->ndim == 4 ? 1 : 0, c = t->ndim >= 3 ? s[off + 2] : 1;
    return (sleapc_frame){.data = t->data,
                          .n_frames = t->ndim == 4 ? s[0] : 1,
                          .height = s[off],
                          .width = s[off + 1],
                          .format = c == 1   ? SLEAPC_PIXEL_FORMAT_GRAY8
                                    : c == 3 ? SLEAPC_PIXEL_FORMAT_RGB24
                                             : (sleapc_pixel_format)-1};
}

sleapc_status test_run_array(sleapc_predictor *p, const sleapc_tensor *t)
{
    sleapc_frame f = test_frames(t);
    return sleapc_predictor_run(p, &f);
}
