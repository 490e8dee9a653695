/* Bulk results: a frame's instances in arrays, one call per frame, for
 * bindings and real-time callers that would otherwise ask per instance. */
#include <string.h>

#include "core/error.h"
#include "pipeline/predictor_impl.h"

sleapc_status sleapc__predictor_frame_results(const sleapc_predictor *p, int frame,
                                              int max_instances, float *points,
                                              float *point_scores, float *scores, int *tracks,
                                              int *n_out)
{
    *n_out = 0;
    if (frame < 0 || frame >= sleapc__predictor_n_frames(p))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "frame results: no frame %d in the last run (%d)",
                            frame, sleapc__predictor_n_frames(p));
    int n = sleapc__predictor_n_instances(p, frame);
    size_t n_nodes = (size_t)sleapc__predictor_n_nodes(p);
    for (int i = 0; i < n && i < max_instances; i++) {
        sleapc_instance in;
        sleapc_status st = sleapc__predictor_instance(p, frame, i, &in);
        if (st)
            return st;
        if (points)
            memcpy(points + (size_t)i * n_nodes * 2, in.points, n_nodes * 2 * sizeof(float));
        if (point_scores)
            memcpy(point_scores + (size_t)i * n_nodes, in.point_scores, n_nodes * sizeof(float));
        if (scores)
            scores[i] = in.score;
        if (tracks)
            tracks[i] = in.track;
    }
    *n_out = n;
    return SLEAPC_OK;
}
