/* The tracker's options: sleap-nn's defaults, and what it refuses. */
#include "pipeline/tracking/tracker.h"

#include "core/error.h"

sleapc_tracker_opts sleapc__tracker_opts_default(void)
{
    sleapc_tracker_opts o = {
        .window_size = 5,
        .candidates = SLEAPC_TRACK_FIXED_WINDOW,
        .features = SLEAPC_TRACK_KEYPOINTS,
        .scoring = SLEAPC_TRACK_OKS,
        .reduction = SLEAPC_TRACK_MEAN,
        .robust_best_instance = 1.0,
        .oks_stddev = 0.025,
        .matching = SLEAPC_TRACK_HUNGARIAN,
        .min_new_track_points = 0,
        .min_match_points = 0,
        .max_tracks = -1,
        .target_instance_count = 0,
        .pre_cull_to_target = false,
        .pre_cull_iou_threshold = 0.0,
        .clean_instance_count = 0,
        .clean_iou_threshold = 0.0,
        .post_connect_single_breaks = false,
        .use_flow = false,
        .of_img_scale = 1.0,
        .of_window_size = 21,
        .of_max_levels = 3,
        .keep_infeasible = false,
    };
    return o;
}

sleapc_status sleapc__tracker_opts_check(const sleapc_tracker_opts *o, int n_nodes)
{
    if (!o || n_nodes < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tracker: no options or no nodes");
    if (o->window_size < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--tracking_window_size must be at least 1 (got %d)", o->window_size);
    if (o->features == SLEAPC_TRACK_EMBEDDINGS && o->scoring != SLEAPC_TRACK_COSINE_SIM &&
        o->scoring != SLEAPC_TRACK_EUCLIDEAN_DIST)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--features embeddings needs --scoring_method cosine_sim (or "
                            "euclidean_dist)");
    if (o->scoring == SLEAPC_TRACK_OKS && o->features != SLEAPC_TRACK_KEYPOINTS)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--scoring_method oks needs --features keypoints");
    if (o->features == SLEAPC_TRACK_EMBEDDINGS && o->use_flow)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "embedding (appearance) tracking does not support --use_flow");
    if (o->scoring == SLEAPC_TRACK_IOU && o->features != SLEAPC_TRACK_BBOXES)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "--scoring_method iou needs --features bboxes");
    if (o->scoring == SLEAPC_TRACK_COSINE_SIM && o->features == SLEAPC_TRACK_KEYPOINTS &&
        o->cosine_matrix && n_nodes != 2)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--scoring_method cosine_sim on --features keypoints is defined "
                            "by sleap-nn 0.3.3 only for 2-node skeletons (this one has %d); use "
                            "--features centroids or bboxes",
                            n_nodes);
    if (!(o->robust_best_instance >= 0 && o->robust_best_instance <= 1))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--robust_best_instance must be in [0, 1] (got %g)",
                            o->robust_best_instance);
    if (!(o->oks_stddev > 0))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "--oks_stddev must be positive (got %g)",
                            o->oks_stddev);
    if ((o->post_connect_single_breaks || o->pre_cull_to_target) && o->target_instance_count <= 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--post_connect_single_breaks and --tracking_pre_cull_to_target "
                            "need --tracking_target_instance_count (or --max_instances)");
    if (o->use_flow && (!(o->of_img_scale > 0) || o->of_window_size < 3 || o->of_max_levels < 0 ||
                        o->of_max_levels > 16))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--of_img_scale must be positive, --of_window_size at least 3 "
                            "and --of_max_levels in 0..16");
    return SLEAPC_OK;
}
