/* The tracking and post-inference filter options of sleap-nn's CLI, shared
 * by "predict" and "track": the same names, the same defaults. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_tracking_usage(void)
{
    printf(
        "tracking (sleap-nn's options and defaults):\n"
        "  -t, --tracking                      assign tracks (identities) across frames\n"
        "  --tracking_window_size N            frames (or instances per track) to match\n"
        "                                      against (5)\n"
        "  --candidates_method M               fixed_window | local_queues (fixed_window;\n"
        "                                      local_queues when --max_tracks is given)\n"
        "  --min_new_track_points N            spawn a track only with more visible points (0)\n"
        "  --min_match_points N                match only candidates with more points (0)\n"
        "  --features F                        keypoints | centroids | bboxes | embeddings\n"
        "                                      (keypoints; centroids for 1-node skeletons;\n"
        "                                      embeddings, the re-ID vectors, with an\n"
        "                                      embedding model)\n"
        "  --scoring_method S                  oks | iou | cosine_sim | euclidean_dist (oks;\n"
        "                                      euclidean_dist for 1-node skeletons;\n"
        "                                      cosine_sim for embeddings)\n"
        "  --scoring_reduction R               mean | max | robust_quantile (mean)\n"
        "  --robust_best_instance X            quantile of robust_quantile (1.0)\n"
        "  --oks_stddev X                      OKS spread (0.025)\n"
        "  --track_matching_method M           hungarian | greedy (hungarian)\n"
        "  --max_tracks N                      at most N tracks (no limit)\n"
        "  --tracking_target_instance_count N  animals per frame (--max_instances)\n"
        "  --tracking_pre_cull_to_target N     non-zero: keep the N best before tracking (0)\n"
        "  --tracking_pre_cull_iou_threshold X box NMS before the pre-cull (0 = off)\n"
        "  --tracking_clean_instance_count N   keep at most N per frame after tracking (0)\n"
        "  --tracking_clean_iou_threshold X    box NMS of the clean-up (0 = off)\n"
        "  --post_connect_single_breaks        join a lost track with a single new one\n"
        "  --use_flow                          shift candidates by optical flow\n"
        "  --of_img_scale X, --of_window_size N, --of_max_levels N   flow (1.0, 21, 3)\n"
        "  --use_kalman, --kf_*                not supported (sleap-nn's pykalman EM)\n"
        "  --tracker T                         classic | sort | bytetrack | ocsort | deepsort |\n"
        "                                      strongsort | botsort | deepocsort (classic);\n"
        "                                      the others are sleap-nn 0.3.5's MOT trackers\n"
        "                                      (Kalman motion; every detection kept); deepsort,\n"
        "                                      strongsort, botsort, deepocsort also associate\n"
        "                                      by the re-ID vectors of an embedded .slp\n"
        "  --track_buffer N                    MOT: steps a lost track is kept (preset)\n"
        "  --min_hits N                        MOT: matches before a track is confirmed\n"
        "  --track_high_threshold X            MOT: high-score detections (preset)\n"
        "  --track_low_threshold X             MOT: ignore detections at or below (preset)\n"
        "  --new_track_threshold X             MOT: least score to start a track (preset)\n"
        "  --min_match_similarity X            MOT: least similarity of a match (preset)\n"
        "  --mot_param KEY=VALUE               MOT parameter override, repeatable\n"
        "                                      (preset=animal|paper, kalman=..., ...)\n"
        "  --appearance_threshold auto|COS     deepsort/strongsort/botsort/deepocsort: least\n"
        "                                      cosine for appearance to support a match\n"
        "                                      (auto: calibrated per video; preset)\n"
        "  --link_tracklets                    MOT: identity linking over the whole video\n"
        "                                      (by re-ID vectors where the video's\n"
        "                                      calibration allows, else by position)\n"
        "  --appearance_weight 0               accepted (sleap-nn's default; appearance\n"
        "                                      scoring is not supported yet)\n"
        "  --euclidean_scale X, --bbox_nms_iou X   accepted, without effect (as in sleap-nn\n"
        "                                      without --appearance_weight, and for pose\n"
        "                                      models)\n"
        "filters before tracking (sleap-nn's; all off by default):\n"
        "  --filter_overlapping                drop overlapping instances (greedy NMS)\n"
        "  --filter_overlapping_method M       iou | oks (iou)\n"
        "  --filter_overlapping_threshold X    similarity above which to drop (0.8)\n"
        "  --filter_min_visible_nodes N        drop with fewer visible nodes (0)\n"
        "  --filter_min_visible_node_fraction X   ... below this fraction (0)\n"
        "  --filter_min_mean_node_score X      drop below this mean node score (0)\n"
        "  --filter_min_instance_score X       drop below this instance score (0)\n"
        "  --filter_min_centroid_distance X    centroid NMS radius in pixels (0)\n");
}

typedef enum kind { K_INT, K_DOUBLE, K_STRING, K_FLAG, K_LIST } kind;

/* --mot_param values, in order (one command line per process). */
enum { MAX_MOT_PARAMS = 64 };
static const char *mot_kv[MAX_MOT_PARAMS];

typedef struct opt {
    const char *name;
    kind k;
    void *dst;
} opt;

int cli_tracking_option(int argc, char **argv, int *i, sleapc_tracking_opts *t,
                        sleapc_filter_opts *f)
{
    const opt table[] = {
        {"tracking", K_FLAG, &t->tracking},
        {"tracking_window_size", K_INT, &t->tracking_window_size},
        {"candidates_method", K_STRING, &t->candidates_method},
        {"min_new_track_points", K_INT, &t->min_new_track_points},
        {"min_match_points", K_INT, &t->min_match_points},
        {"features", K_STRING, &t->features},
        {"scoring_method", K_STRING, &t->scoring_method},
        {"scoring_reduction", K_STRING, &t->scoring_reduction},
        {"robust_best_instance", K_DOUBLE, &t->robust_best_instance},
        {"oks_stddev", K_DOUBLE, &t->oks_stddev},
        {"track_matching_method", K_STRING, &t->track_matching_method},
        {"max_tracks", K_INT, &t->max_tracks},
        {"tracking_target_instance_count", K_INT, &t->tracking_target_instance_count},
        {"tracking_pre_cull_to_target", K_INT, &t->tracking_pre_cull_to_target},
        {"tracking_pre_cull_iou_threshold", K_DOUBLE, &t->tracking_pre_cull_iou_threshold},
        {"tracking_clean_instance_count", K_INT, &t->tracking_clean_instance_count},
        {"tracking_clean_iou_threshold", K_DOUBLE, &t->tracking_clean_iou_threshold},
        {"post_connect_single_breaks", K_FLAG, &t->post_connect_single_breaks},
        {"use_flow", K_FLAG, &t->use_flow},
        {"of_img_scale", K_DOUBLE, &t->of_img_scale},
        {"of_window_size", K_INT, &t->of_window_size},
        {"of_max_levels", K_INT, &t->of_max_levels},
        {"use_kalman", K_FLAG, &t->use_kalman},
        {"tracker", K_STRING, &t->tracker},
        {"track_buffer", K_INT, &t->track_buffer},
        {"min_hits", K_INT, &t->min_hits},
        {"track_high_threshold", K_DOUBLE, &t->track_high_threshold},
        {"track_low_threshold", K_DOUBLE, &t->track_low_threshold},
        {"new_track_threshold", K_DOUBLE, &t->new_track_threshold},
        {"min_match_similarity", K_DOUBLE, &t->min_match_similarity},
        {"link_tracklets", K_FLAG, &t->link_tracklets},
        {"appearance_threshold", K_STRING, &t->appearance_threshold},
        {"mot_param", K_LIST, NULL},
        {"filter_overlapping", K_FLAG, &f->filter_overlapping},
        {"filter_overlapping_method", K_STRING, &f->filter_overlapping_method},
        {"filter_overlapping_threshold", K_DOUBLE, &f->filter_overlapping_threshold},
        {"filter_min_visible_nodes", K_INT, &f->filter_min_visible_nodes},
        {"filter_min_visible_node_fraction", K_DOUBLE, &f->filter_min_visible_node_fraction},
        {"filter_min_mean_node_score", K_DOUBLE, &f->filter_min_mean_node_score},
        {"filter_min_instance_score", K_DOUBLE, &f->filter_min_instance_score},
        {"filter_min_centroid_distance", K_DOUBLE, &f->filter_min_centroid_distance},
    };
    const char *a = argv[*i];
    const int mot = cli_tracker_choice_option(argc, argv, i);
    if (mot)
        return mot;
    /* The Kalman tracker's own settings: refused as --use_kalman is (the
     * library's check), before any work. */
    static const char *const kalman[] = {"kf_track_features", "kf_init_frame_count",
                                         "kf_node_indices", "kf_reset_gap_size"};
    for (size_t k = 0; k < sizeof kalman / sizeof kalman[0]; k++)
        if (cli_is_option(a, kalman[k], NULL))
            return cli_error("--%s is a setting of --use_kalman, which is not supported: "
                             "sleap-nn fits its Kalman filters with pykalman's EM, which sleapc "
                             "does not reproduce; use the default tracker or --use_flow",
                             kalman[k]),
                   -1;
    if (strcmp(a, "-t") == 0) {
        t->tracking = true;
        return 1;
    }
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        if (!cli_is_option(a, table[k].name, NULL))
            continue;
        if (table[k].k == K_FLAG) {
            if (strchr(a, '='))
                return cli_error("--%s takes no value", table[k].name), -1;
            *(bool *)table[k].dst = true;
            return 1;
        }
        const char *v = cli_option_value(argc, argv, i, table[k].name);
        if (!v)
            return -1;
        if (table[k].k == K_STRING) {
            *(const char **)table[k].dst = v;
            return 1;
        }
        if (table[k].k == K_LIST) {
            if (t->n_mot_params >= MAX_MOT_PARAMS)
                return cli_error("--mot_param: at most %d", MAX_MOT_PARAMS), -1;
            mot_kv[t->n_mot_params++] = v;
            t->mot_params = mot_kv;
            return 1;
        }
        char *end = NULL;
        const double d = *v ? strtod(v, &end) : NAN;
        if (!*v || *end || !isfinite(d) ||
            (table[k].k == K_INT && (d != floor(d) || fabs(d) > 1e9)))
            return cli_error("--%s: expected %s, got \"%s\"", table[k].name,
                             table[k].k == K_INT ? "an integer" : "a number", v),
                   -1;
        if (table[k].k == K_INT)
            *(int *)table[k].dst = (int)d;
        else
            *(double *)table[k].dst = d;
        return 1;
    }
    return 0;
}
