/* Public bulk results: check arguments, call the pipeline. */
#include "core/error.h"
#include "pipeline/predictor_impl.h"

sleapc_status sleapc_predictor_frame_results(const sleapc_predictor *p, int frame,
                                             int max_instances, float *points,
                                             float *point_scores, float *scores, int *tracks,
                                             int *n_out)
{
    if (!p || !n_out || max_instances < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "frame results: predictor and n_out are required, max_instances >= 0");
    return sleapc__predictor_frame_results(p, frame, max_instances, points, point_scores, scores,
                                           tracks, n_out);
}
