/* Public tracking options -> tracker parameters (see tracking_config.h). */
#include "pipeline/tracking/tracking_config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/compat.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_calib_appearance.h"
#include "pipeline/tracking/mot/mot_run.h"

/* The index of s in names, or -1 (s NULL: dflt). */
static int pick(const char *s, const char *const *names, int n, int dflt)
{
    if (!s)
        return dflt;
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static sleapc_status bad_choice(const char *option, const char *value, const char *choices)
{
    return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "--%s: \"%s\" is not one of %s", option, value,
                        choices);
}

/* The MOT-only options given (sleap-nn's MOT_ONLY_OPTIONS), as flags. */
static int mot_only_given(const sleapc_tracking_opts *t, char *buf, size_t cap)
{
    const struct {
        bool given;
        const char *flag;
    } opts[] = {
        {t->track_buffer >= 0, "--track_buffer"},
        {t->min_hits >= 0, "--min_hits"},
        {!isnan(t->track_high_threshold), "--track_high_threshold"},
        {!isnan(t->track_low_threshold), "--track_low_threshold"},
        {!isnan(t->new_track_threshold), "--new_track_threshold"},
        {!isnan(t->min_match_similarity), "--min_match_similarity"},
        {t->appearance_threshold != NULL, "--appearance_threshold"},
        {t->n_mot_params > 0, "--mot_param"},
    };
    int n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (opts[i].given) {
            const size_t len = strlen(buf);
            snprintf(buf + len, cap - len, "%s%s", n++ ? ", " : "", opts[i].flag);
        }
    return n;
}

/* The classic tracker's options away from their defaults, which a MOT
 * tracker would ignore (sleap-nn's CLASSIC_ONLY_OPTIONS). */
static int classic_only_given(const sleapc_tracking_opts *t, char *buf, size_t cap)
{
    const sleapc_tracking_opts d = sleapc__tracking_opts_default();
    const struct {
        bool given;
        const char *flag;
    } opts[] = {
        {t->candidates_method != NULL, "--candidates_method"},
        {t->tracking_window_size != d.tracking_window_size, "--tracking_window_size"},
        {t->min_new_track_points != 0, "--min_new_track_points"},
        {t->min_match_points != 0, "--min_match_points"},
        {t->scoring_reduction && strcmp(t->scoring_reduction, "mean"), "--scoring_reduction"},
        {t->robust_best_instance != 1.0, "--robust_best_instance"},
        {t->track_matching_method && strcmp(t->track_matching_method, "hungarian"),
         "--track_matching_method"},
        {t->use_flow, "--use_flow"},
        {t->of_img_scale != 1.0, "--of_img_scale"},
        {t->of_window_size != 21, "--of_window_size"},
        {t->of_max_levels != 3, "--of_max_levels"},
        {t->use_kalman, "--use_kalman"},
        {t->tracking_target_instance_count >= 0, "--tracking_target_instance_count"},
        {t->tracking_pre_cull_to_target != 0, "--tracking_pre_cull_to_target"},
        {t->tracking_pre_cull_iou_threshold != 0, "--tracking_pre_cull_iou_threshold"},
        {t->tracking_clean_instance_count != 0, "--tracking_clean_instance_count"},
        {t->tracking_clean_iou_threshold != 0, "--tracking_clean_iou_threshold"},
        {t->post_connect_single_breaks, "--post_connect_single_breaks"},
    };
    int n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (opts[i].given) {
            const size_t len = strlen(buf);
            snprintf(buf + len, cap - len, "%s%s", n++ ? ", " : "", opts[i].flag);
        }
    return n;
}

/* A MOT tracker's parameters (inference/tracking.py resolve_mot_params and
 * validate_mot_config). */
static sleapc_status resolve_mot(const sleapc_tracking_opts *t, int tracker, int n_nodes,
                                 sleapc_tracker_opts *o)
{
    char given[512];
    const int n = classic_only_given(t, given, sizeof given);
    if (n)
        return sleapc__fail(
            SLEAPC_ERR_INVALID_ARG, "%s %s of the classic tracker; --tracker %s would ignore %s",
            given, n == 1 ? "is an option" : "are options", t->tracker, n == 1 ? "it" : "them");
    if (t->features && strcmp(t->features, "keypoints"))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--tracker %s takes --features keypoints (the carrier to track), "
                            "got \"%s\"; choose the geometric similarity with --scoring_method "
                            "oks / iou / euclidean_dist",
                            t->tracker, t->features);
    sleapc_mot_named named = {
        .track_buffer = t->track_buffer,
        .min_hits = t->min_hits,
        .track_high_threshold = t->track_high_threshold,
        .track_low_threshold = t->track_low_threshold,
        .new_track_threshold = t->new_track_threshold,
        .min_match_similarity = t->min_match_similarity,
        .oks_stddev = t->oks_stddev,
        .similarity = SLEAPC_MOT_SIM_AUTO,
        .link_tracklets = t->link_tracklets,
        .max_tracks = t->max_tracks,
        .appearance_threshold = t->appearance_threshold,
    };
    if (t->appearance_threshold && !sleapc__mot_uses_appearance((sleapc_mot_tracker)tracker))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--appearance_threshold only applies to the appearance trackers "
                            "(--tracker deepsort / strongsort / botsort / deepocsort); --tracker "
                            "%s associates by geometry alone",
                            t->tracker);
    if (t->scoring_method) {
        static const char *const names[] = {"oks", "iou", "euclidean_dist"};
        static const sleapc_mot_similarity sims[] = {SLEAPC_MOT_SIM_OKS, SLEAPC_MOT_SIM_IOU,
                                                     SLEAPC_MOT_SIM_CENTROID};
        const int k = pick(t->scoring_method, names, 3, -1);
        if (k < 0)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "--tracker %s scores geometry by oks, iou or euclidean_dist "
                                "(--scoring_method), got \"%s\"",
                                t->tracker, t->scoring_method);
        named.similarity = sims[k];
    }
    sleapc_status st = sleapc__mot_params_resolve((sleapc_mot_tracker)tracker, &named,
                                                  t->mot_params, t->n_mot_params, &o->mot_params);
    if (st)
        return st;
    bool oks_override = false;
    for (int i = 0; i < t->n_mot_params; i++) {
        const char *kv = t->mot_params[i];
        while (kv && (*kv == ' ' || *kv == '\t'))
            kv++;
        oks_override = oks_override || (kv && !strncmp(kv, "oks_stddev", 10));
    }
    if ((!isnan(t->oks_stddev) || oks_override) && o->mot_params.similarity != SLEAPC_MOT_SIM_OKS)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--oks_stddev only applies to OKS scoring (--scoring_method oks, or "
                            "--mot_param similarity=oks); --tracker %s would ignore it",
                            t->tracker);
    o->mot = true;
    return sleapc__mot_check_supported(&o->mot_params, n_nodes);
}

sleapc_status sleapc__tracking_resolve(const sleapc_tracking_opts *t, int n_nodes,
                                       sleapc_tracker_opts *o)
{
    static const char *const cand[] = {"fixed_window", "local_queues"};
    static const char *const feat[] = {"keypoints", "centroids", "bboxes", "embeddings"};
    static const char *const scor[] = {"oks", "iou", "cosine_sim", "euclidean_dist"};
    static const char *const red[] = {"mean", "max", "robust_quantile"};
    static const char *const match[] = {"hungarian", "greedy"};
    *o = sleapc__tracker_opts_default();
    if (!sleapc__compat_valid(t->compat))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "tracking: compat %d is not a sleapc_compat",
                            (int)t->compat);
    o->keep_infeasible = sleapc__compat_is_0_3_3(t->compat);
    o->cosine_matrix = sleapc__compat_is_0_3_3(t->compat);
    if (t->tracker && strcmp(t->tracker, "classic")) {
        const int k = sleapc__mot_tracker_from_name(t->tracker);
        if (k < 0)
            return bad_choice("tracker", t->tracker,
                              "classic, sort, deepsort, strongsort, bytetrack, botsort, ocsort, "
                              "deepocsort");
        return resolve_mot(t, k, n_nodes, o);
    }
    {
        char given[256];
        const int n = mot_only_given(t, given, sizeof given);
        if (n)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "%s only appl%s to the MOT trackers; pass --tracker (sort / "
                                "bytetrack / ocsort) or drop %s",
                                given, n == 1 ? "ies" : "y", n == 1 ? "it" : "them");
        if (t->link_tracklets)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "--link_tracklets with the classic tracker is not supported");
    }
    if (t->use_kalman)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "--use_kalman is not supported: sleap-nn fits its Kalman filters "
                            "with pykalman's EM, which sleapc does not reproduce; use the "
                            "default tracker or --use_flow");
    const int c = pick(t->candidates_method, cand, 2, 0);
    if (c < 0)
        return bad_choice("candidates_method", t->candidates_method, "fixed_window, local_queues");
    const bool one_node = n_nodes == 1;
    const int f = pick(t->features, feat, 4, one_node ? 1 : 0);
    if (f < 0)
        return bad_choice("features", t->features,
                          "keypoints, centroids, bboxes, embeddings (sleap-nn's image and masks "
                          "are not available)");
    /* unset: cosine_sim on the vectors, euclidean_dist on one node, else oks */
    const int s = pick(t->scoring_method, scor, 4,
                       f == SLEAPC_TRACK_EMBEDDINGS ? 2
                       : one_node                   ? 3
                                                    : 0);
    if (s < 0)
        return bad_choice("scoring_method", t->scoring_method,
                          "oks, iou, cosine_sim, euclidean_dist");
    const int r = pick(t->scoring_reduction, red, 3, 0);
    if (r < 0)
        return bad_choice("scoring_reduction", t->scoring_reduction, "mean, max, robust_quantile");
    const int m = pick(t->track_matching_method, match, 2, 0);
    if (m < 0)
        return bad_choice("track_matching_method", t->track_matching_method, "hungarian, greedy");
    if (t->min_new_track_points < 0 || t->min_match_points < 0 ||
        t->tracking_clean_instance_count < 0 || t->tracking_pre_cull_to_target < 0)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--min_new_track_points, --min_match_points, "
                            "--tracking_pre_cull_to_target and --tracking_clean_instance_count "
                            "cannot be negative");
    o->window_size = t->tracking_window_size;
    o->candidates = (sleapc_track_candidates)c;
    o->features = (sleapc_track_features)f;
    o->scoring = (sleapc_track_scoring)s;
    o->reduction = (sleapc_track_reduction)r;
    o->matching = (sleapc_track_matching)m;
    o->robust_best_instance = t->robust_best_instance;
    o->oks_stddev = isnan(t->oks_stddev) ? 0.025 : t->oks_stddev;
    o->min_new_track_points = t->min_new_track_points;
    o->min_match_points = t->min_match_points;
    o->max_tracks = t->max_tracks >= 0 ? t->max_tracks : -1;
    /* legacy rules of sleap-nn's CLI: post-connect takes max_tracks from
     * --max_instances; post-connect / pre-cull take the target count from it */
    if (t->post_connect_single_breaks && o->max_tracks < 0 && t->max_instances > 0)
        o->max_tracks = t->max_instances;
    o->target_instance_count =
        t->tracking_target_instance_count > 0 ? t->tracking_target_instance_count : 0;
    if ((t->post_connect_single_breaks || t->tracking_pre_cull_to_target) &&
        t->tracking_target_instance_count < 0 && t->max_instances > 0)
        o->target_instance_count = t->max_instances;
    if (o->max_tracks >= 0)
        o->candidates = SLEAPC_TRACK_LOCAL_QUEUES; /* fixed_window would ignore the cap */
    /* appearance alone re-binds a track after a gap from its own queue:
     * local queues unless the method is given (apply_tracking) */
    if (o->features == SLEAPC_TRACK_EMBEDDINGS && !t->candidates_method)
        o->candidates = SLEAPC_TRACK_LOCAL_QUEUES;
    o->pre_cull_to_target = t->tracking_pre_cull_to_target != 0;
    o->pre_cull_iou_threshold = t->tracking_pre_cull_iou_threshold;
    o->clean_instance_count = t->tracking_clean_instance_count;
    o->clean_iou_threshold = t->tracking_clean_iou_threshold;
    o->post_connect_single_breaks = t->post_connect_single_breaks;
    o->use_flow = t->use_flow;
    o->of_img_scale = t->of_img_scale;
    o->of_window_size = t->of_window_size;
    o->of_max_levels = t->of_max_levels;
    if (n_nodes > 0)
        return sleapc__tracker_opts_check(o, n_nodes);
    /* skeleton unknown: check with a size every combination accepts */
    return sleapc__tracker_opts_check(o, o->scoring == SLEAPC_TRACK_COSINE_SIM ? 2 : 3);
}

sleapc_status sleapc__filters_resolve(const sleapc_filter_opts *f, sleapc_filter_config *c)
{
    *c = sleapc__filters_config_default();
    if (!f)
        return SLEAPC_OK;
    const char *method = f->filter_overlapping_method ? f->filter_overlapping_method : "iou";
    if (strcmp(method, "iou") && strcmp(method, "oks"))
        return bad_choice("filter_overlapping_method", method, "iou, oks");
    if (!(f->filter_min_visible_node_fraction >= 0 && f->filter_min_visible_node_fraction <= 1))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--filter_min_visible_node_fraction must be in [0, 1]");
    if (f->filter_min_visible_nodes < 0 || !(f->filter_min_centroid_distance >= 0))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "--filter_min_visible_nodes and --filter_min_centroid_distance "
                            "cannot be negative");
    c->overlapping = f->filter_overlapping;
    c->overlapping_method =
        strcmp(method, "oks") == 0 ? SLEAPC_FILTER_OVERLAP_OKS : SLEAPC_FILTER_OVERLAP_IOU;
    c->overlapping_threshold = f->filter_overlapping_threshold;
    c->min_visible_nodes = f->filter_min_visible_nodes;
    c->min_visible_node_fraction = f->filter_min_visible_node_fraction;
    c->min_mean_node_score = f->filter_min_mean_node_score;
    c->min_instance_score = f->filter_min_instance_score;
    c->min_centroid_distance = f->filter_min_centroid_distance;
    return SLEAPC_OK;
}

sleapc_tracking_opts sleapc__tracking_opts_default(void)
{
    sleapc_tracking_opts t = {
        .tracking = false,
        .tracking_window_size = 5,
        .candidates_method = NULL,
        .min_new_track_points = 0,
        .min_match_points = 0,
        .features = NULL,
        .scoring_method = NULL,
        .scoring_reduction = "mean",
        .robust_best_instance = 1.0,
        .track_matching_method = "hungarian",
        .max_tracks = -1,
        .oks_stddev = NAN,
        .use_flow = false,
        .of_img_scale = 1.0,
        .of_window_size = 21,
        .of_max_levels = 3,
        .use_kalman = false,
        .post_connect_single_breaks = false,
        .tracking_target_instance_count = -1,
        .tracking_pre_cull_to_target = 0,
        .tracking_pre_cull_iou_threshold = 0.0,
        .tracking_clean_instance_count = 0,
        .tracking_clean_iou_threshold = 0.0,
        .max_instances = 0,
        .compat = SLEAPC_COMPAT_DEFAULT,
        .tracker = NULL,
        .track_buffer = -1,
        .min_hits = -1,
        .track_high_threshold = NAN,
        .track_low_threshold = NAN,
        .new_track_threshold = NAN,
        .min_match_similarity = NAN,
        .link_tracklets = false,
        .mot_params = NULL,
        .n_mot_params = 0,
    };
    return t;
}
