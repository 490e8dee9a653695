/* Reading a frame's results: the instances of the predictor's last run,
 * copied into the caller's arrays in one call. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "pipeline/predictor_impl.h"

static void copy_instance(const sleapc_instance *in, size_t n_nodes, int i,
                          const sleapc_results *out)
{
    size_t k = (size_t)i;
    if (out->points)
        memcpy(out->points + k * n_nodes * 2, in->points, n_nodes * 2 * sizeof(float));
    if (out->point_scores)
        memcpy(out->point_scores + k * n_nodes, in->point_scores, n_nodes * sizeof(float));
    if (out->scores)
        out->scores[k] = in->score;
    if (out->tracks)
        out->tracks[k] = in->track;
    if (out->tracking_scores)
        out->tracking_scores[k] = in->tracking_score;
    if (out->centroids) {
        out->centroids[2 * k] = in->has_centroid ? in->centroid[0] : NAN;
        out->centroids[2 * k + 1] = in->has_centroid ? in->centroid[1] : NAN;
    }
    if (out->centroid_scores)
        out->centroid_scores[k] = in->has_centroid ? in->centroid_score : NAN;
}

sleapc_status sleapc_predictor_frame_results(const sleapc_predictor *p, int frame,
                                             const sleapc_results *out, int *n_out)
{
    if (n_out)
        *n_out = 0;
    if (!p || !n_out || (out && out->max_instances < 0))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "frame results: predictor and n_out are required, max_instances >= 0");
    if (frame < 0 || frame >= sleapc__predictor_n_frames(p))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "frame results: no frame %d in the last run (%d)", frame,
                            sleapc__predictor_n_frames(p));
    int n = sleapc__predictor_n_instances(p, frame);
    size_t n_nodes = (size_t)sleapc__predictor_n_nodes(p);
    for (int i = 0; out && i < n && i < out->max_instances; i++) {
        sleapc_instance in;
        sleapc_status st = sleapc__predictor_instance(p, frame, i, &in);
        if (st)
            return st;
        copy_instance(&in, n_nodes, i, out);
    }
    *n_out = n;
    return SLEAPC_OK;
}
