/* sleapc_struct_layout: the public structs' sizes and field offsets as this
 * library was compiled, so that a binding's mirror is checked, not trusted. */
#include <stddef.h>
#include <string.h>

#include "core/error.h"
#include "sleapc/eval.h"
#include "sleapc/frame.h"
#include "sleapc/input.h"
#include "sleapc/pipeline.h"
#include "sleapc/predictor.h"
#include "sleapc/render.h"
#include "sleapc/stream.h"
#include "sleapc/tensor.h"
#include "sleapc/tracking.h"
#include "sleapc/writer.h"

#define FIELD(type, f)                                                                             \
    {                                                                                              \
#f, offsetof(type, f), sizeof(((type *)0)->f)                                              \
    }
#define STRUCT(type, ...) static const sleapc_field_layout type##_fields[] = {__VA_ARGS__};

STRUCT(sleapc_field_layout, FIELD(sleapc_field_layout, name), FIELD(sleapc_field_layout, offset),
       FIELD(sleapc_field_layout, size))
STRUCT(sleapc_tensor, FIELD(sleapc_tensor, dtype), FIELD(sleapc_tensor, ndim),
       FIELD(sleapc_tensor, shape), FIELD(sleapc_tensor, data))
STRUCT(sleapc_predictor_opts, FIELD(sleapc_predictor_opts, struct_size),
       FIELD(sleapc_predictor_opts, backend), FIELD(sleapc_predictor_opts, n_threads),
       FIELD(sleapc_predictor_opts, batch_size), FIELD(sleapc_predictor_opts, peak_threshold),
       FIELD(sleapc_predictor_opts, centroid_peak_threshold),
       FIELD(sleapc_predictor_opts, integral_refinement),
       FIELD(sleapc_predictor_opts, integral_patch_size),
       FIELD(sleapc_predictor_opts, max_instances),
       FIELD(sleapc_predictor_opts, max_edge_length_ratio),
       FIELD(sleapc_predictor_opts, dist_penalty_weight), FIELD(sleapc_predictor_opts, n_points),
       FIELD(sleapc_predictor_opts, min_instance_peaks),
       FIELD(sleapc_predictor_opts, min_line_scores), FIELD(sleapc_predictor_opts, crop_size),
       FIELD(sleapc_predictor_opts, max_height), FIELD(sleapc_predictor_opts, max_width),
       FIELD(sleapc_predictor_opts, input_scale), FIELD(sleapc_predictor_opts, ensure_rgb),
       FIELD(sleapc_predictor_opts, ensure_grayscale), FIELD(sleapc_predictor_opts, precision),
       FIELD(sleapc_predictor_opts, anchor_part), FIELD(sleapc_predictor_opts, device),
       FIELD(sleapc_predictor_opts, conv), FIELD(sleapc_predictor_opts, compat),
       FIELD(sleapc_predictor_opts, bbox_nms_iou))
STRUCT(sleapc_skeleton, FIELD(sleapc_skeleton, name), FIELD(sleapc_skeleton, n_nodes),
       FIELD(sleapc_skeleton, node_names), FIELD(sleapc_skeleton, n_edges),
       FIELD(sleapc_skeleton, edges), FIELD(sleapc_skeleton, n_symmetries),
       FIELD(sleapc_skeleton, symmetries), FIELD(sleapc_skeleton, n_classes),
       FIELD(sleapc_skeleton, class_names))
STRUCT(sleapc_results, FIELD(sleapc_results, max_instances), FIELD(sleapc_results, points),
       FIELD(sleapc_results, point_scores), FIELD(sleapc_results, scores),
       FIELD(sleapc_results, tracks), FIELD(sleapc_results, tracking_scores),
       FIELD(sleapc_results, centroids), FIELD(sleapc_results, centroid_scores))
STRUCT(sleapc_video_info, FIELD(sleapc_video_info, filename), FIELD(sleapc_video_info, n_frames),
       FIELD(sleapc_video_info, height), FIELD(sleapc_video_info, width),
       FIELD(sleapc_video_info, channels), FIELD(sleapc_video_info, dataset),
       FIELD(sleapc_video_info, source_json))
STRUCT(sleapc_frame, FIELD(sleapc_frame, data), FIELD(sleapc_frame, n_frames),
       FIELD(sleapc_frame, height), FIELD(sleapc_frame, width),
       FIELD(sleapc_frame, row_stride_bytes), FIELD(sleapc_frame, format))
STRUCT(sleapc_stream_timing, FIELD(sleapc_stream_timing, total_ms),
       FIELD(sleapc_stream_timing, convert_ms))
STRUCT(sleapc_progress, FIELD(sleapc_progress, done), FIELD(sleapc_progress, total),
       FIELD(sleapc_progress, elapsed_s), FIELD(sleapc_progress, fps))
STRUCT(sleapc_run_opts, FIELD(sleapc_run_opts, struct_size), FIELD(sleapc_run_opts, video),
       FIELD(sleapc_run_opts, queue_depth), FIELD(sleapc_run_opts, progress),
       FIELD(sleapc_run_opts, user))
STRUCT(sleapc_stage_info, FIELD(sleapc_stage_info, model), FIELD(sleapc_stage_info, backend),
       FIELD(sleapc_stage_info, precision), FIELD(sleapc_stage_info, bf16_error),
       FIELD(sleapc_stage_info, bf16_moved), FIELD(sleapc_stage_info, device),
       FIELD(sleapc_stage_info, device_name), FIELD(sleapc_stage_info, fp16_arithmetic))
STRUCT(sleapc_tracking_opts, FIELD(sleapc_tracking_opts, struct_size),
       FIELD(sleapc_tracking_opts, tracking), FIELD(sleapc_tracking_opts, tracking_window_size),
       FIELD(sleapc_tracking_opts, candidates_method),
       FIELD(sleapc_tracking_opts, min_new_track_points),
       FIELD(sleapc_tracking_opts, min_match_points), FIELD(sleapc_tracking_opts, features),
       FIELD(sleapc_tracking_opts, scoring_method), FIELD(sleapc_tracking_opts, scoring_reduction),
       FIELD(sleapc_tracking_opts, robust_best_instance),
       FIELD(sleapc_tracking_opts, track_matching_method), FIELD(sleapc_tracking_opts, max_tracks),
       FIELD(sleapc_tracking_opts, oks_stddev), FIELD(sleapc_tracking_opts, use_flow),
       FIELD(sleapc_tracking_opts, of_img_scale), FIELD(sleapc_tracking_opts, of_window_size),
       FIELD(sleapc_tracking_opts, of_max_levels), FIELD(sleapc_tracking_opts, use_kalman),
       FIELD(sleapc_tracking_opts, post_connect_single_breaks),
       FIELD(sleapc_tracking_opts, tracking_target_instance_count),
       FIELD(sleapc_tracking_opts, tracking_pre_cull_to_target),
       FIELD(sleapc_tracking_opts, tracking_pre_cull_iou_threshold),
       FIELD(sleapc_tracking_opts, tracking_clean_instance_count),
       FIELD(sleapc_tracking_opts, tracking_clean_iou_threshold),
       FIELD(sleapc_tracking_opts, max_instances), FIELD(sleapc_tracking_opts, compat),
       FIELD(sleapc_tracking_opts, tracker), FIELD(sleapc_tracking_opts, track_buffer),
       FIELD(sleapc_tracking_opts, min_hits), FIELD(sleapc_tracking_opts, track_high_threshold),
       FIELD(sleapc_tracking_opts, track_low_threshold),
       FIELD(sleapc_tracking_opts, new_track_threshold),
       FIELD(sleapc_tracking_opts, min_match_similarity),
       FIELD(sleapc_tracking_opts, link_tracklets), FIELD(sleapc_tracking_opts, mot_params),
       FIELD(sleapc_tracking_opts, n_mot_params), FIELD(sleapc_tracking_opts, appearance_threshold))
STRUCT(sleapc_filter_opts, FIELD(sleapc_filter_opts, struct_size),
       FIELD(sleapc_filter_opts, filter_overlapping),
       FIELD(sleapc_filter_opts, filter_overlapping_method),
       FIELD(sleapc_filter_opts, filter_overlapping_threshold),
       FIELD(sleapc_filter_opts, filter_min_visible_nodes),
       FIELD(sleapc_filter_opts, filter_min_visible_node_fraction),
       FIELD(sleapc_filter_opts, filter_min_mean_node_score),
       FIELD(sleapc_filter_opts, filter_min_instance_score),
       FIELD(sleapc_filter_opts, filter_min_centroid_distance))
STRUCT(sleapc_runner_opts, FIELD(sleapc_runner_opts, struct_size),
       FIELD(sleapc_runner_opts, backend), FIELD(sleapc_runner_opts, n_threads),
       FIELD(sleapc_runner_opts, precision), FIELD(sleapc_runner_opts, device),
       FIELD(sleapc_runner_opts, conv))
STRUCT(sleapc_render_opts, FIELD(sleapc_render_opts, struct_size),
       FIELD(sleapc_render_opts, video_index), FIELD(sleapc_render_opts, node_radius_px),
       FIELD(sleapc_render_opts, line_width_px), FIELD(sleapc_render_opts, fps))
STRUCT(sleapc_eval_opts, FIELD(sleapc_eval_opts, struct_size), FIELD(sleapc_eval_opts, oks_stddev),
       FIELD(sleapc_eval_opts, oks_scale), FIELD(sleapc_eval_opts, match_threshold),
       FIELD(sleapc_eval_opts, user_labels_only), FIELD(sleapc_eval_opts, match_method),
       FIELD(sleapc_eval_opts, anchor_part), FIELD(sleapc_eval_opts, compat),
       FIELD(sleapc_eval_opts, centroid_method), FIELD(sleapc_eval_opts, centroid_fallback),
       FIELD(sleapc_eval_opts, bbox_source), FIELD(sleapc_eval_opts, bbox_padding))
STRUCT(sleapc_eval_tracking_opts, FIELD(sleapc_eval_tracking_opts, struct_size),
       FIELD(sleapc_eval_tracking_opts, match), FIELD(sleapc_eval_tracking_opts, match_threshold),
       FIELD(sleapc_eval_tracking_opts, oks_stddev), FIELD(sleapc_eval_tracking_opts, compat),
       FIELD(sleapc_eval_tracking_opts, carrier), FIELD(sleapc_eval_tracking_opts, mt_threshold),
       FIELD(sleapc_eval_tracking_opts, ml_threshold),
       FIELD(sleapc_eval_tracking_opts, user_labels_only),
       FIELD(sleapc_eval_tracking_opts, global_identity))

typedef struct layout {
    const char *name;
    size_t size;
    const sleapc_field_layout *fields;
    int n_fields;
} layout;

#define LAYOUT(type)                                                                               \
    {                                                                                              \
#type, sizeof(type), type##_fields, (int)(sizeof type##_fields / sizeof type##_fields[0])  \
    }

static const layout layouts[] = {
    LAYOUT(sleapc_field_layout),       LAYOUT(sleapc_tensor),        LAYOUT(sleapc_predictor_opts),
    LAYOUT(sleapc_skeleton),           LAYOUT(sleapc_video_info),    LAYOUT(sleapc_frame),
    LAYOUT(sleapc_stream_timing),      LAYOUT(sleapc_progress),      LAYOUT(sleapc_run_opts),
    LAYOUT(sleapc_stage_info),         LAYOUT(sleapc_tracking_opts), LAYOUT(sleapc_filter_opts),
    LAYOUT(sleapc_runner_opts),        LAYOUT(sleapc_render_opts),   LAYOUT(sleapc_eval_opts),
    LAYOUT(sleapc_eval_tracking_opts), LAYOUT(sleapc_results),
};

sleapc_status sleapc_struct_layout(const char *struct_name, size_t *size, int *n_fields,
                                   const sleapc_field_layout **fields)
{
    if (!struct_name || !size || !n_fields || !fields)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "struct layout: NULL argument");
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        if (strcmp(layouts[i].name, struct_name) == 0) {
            *size = layouts[i].size;
            *n_fields = layouts[i].n_fields;
            *fields = layouts[i].fields;
            return SLEAPC_OK;
        }
    }
    return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "struct layout: %s: not a public struct",
                        struct_name);
}
