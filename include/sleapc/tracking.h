/* Tracking and post-inference filters, with sleap-nn's option names and
 * defaults (sleap-nn predict --tracking / --filter_*): retracking a
 * predictions file, or tracking while predicting (sleapc_writer_set_tracking). */
#ifndef SLEAPC_TRACKING_H
#define SLEAPC_TRACKING_H

#include <stdbool.h>

#include "sleapc/sleapc.h"
#include "sleapc/writer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sleap-nn's tracking options; sleapc_tracking_opts_default() gives its
 * defaults. Strings name a method as sleap-nn does; NULL where sleap-nn's
 * default is "unset" (then its derived rules apply: see README). */
typedef struct sleapc_tracking_opts {
    uint32_t struct_size;              /* sizeof(sleapc_tracking_opts) */
    bool tracking;                     /* -t/--tracking */
    int tracking_window_size;          /* 5 */
    const char *candidates_method;     /* NULL: fixed_window (local_queues with max_tracks) */
    int min_new_track_points;          /* 0 */
    int min_match_points;              /* 0 */
    const char *features;              /* NULL: keypoints (centroids for 1-node skeletons) */
    const char *scoring_method;        /* NULL: oks (euclidean_dist for 1-node skeletons) */
    const char *scoring_reduction;     /* "mean" | "max" | "robust_quantile" */
    double robust_best_instance;       /* 1.0 */
    const char *track_matching_method; /* "hungarian" | "greedy" */
    int max_tracks;                    /* -1 = none */
    double oks_stddev;                 /* NaN = unset (0.025) */
    bool use_flow;                     /* optical-flow shifted candidates */
    double of_img_scale;               /* 1.0 */
    int of_window_size;                /* 21 */
    int of_max_levels;                 /* 3 */
    bool use_kalman;                   /* refused: see README */
    bool post_connect_single_breaks;
    int tracking_target_instance_count;     /* -1 = none */
    int tracking_pre_cull_to_target;        /* 0 */
    double tracking_pre_cull_iou_threshold; /* 0 */
    int tracking_clean_instance_count;      /* 0 */
    double tracking_clean_iou_threshold;    /* 0 */
    int max_instances;    /* --max_instances of the run (0 = none): derives the target
                             count and max_tracks as sleap-nn's CLI does */
    sleapc_compat compat; /* DEFAULT: the newest sleap-nn release followed (as the
                             predictor's compat; docs/compatibility.md) */
    /* sleap-nn 0.3.5's tracker choice and its MOT trackers' options. With a
     * MOT tracker, max_tracks and oks_stddev are its own (see README), and
     * the classic tracker's options must stay at their defaults. */
    const char *tracker;         /* NULL: "classic"; "sort" | "bytetrack" | "ocsort" | "deepsort" |
                                    "strongsort" | "botsort" | "deepocsort" */
    int track_buffer;            /* -1 = the preset's */
    int min_hits;                /* -1 = the preset's */
    double track_high_threshold; /* NaN = the preset's */
    double track_low_threshold;  /* NaN = the preset's */
    double new_track_threshold;  /* NaN = the preset's */
    double min_match_similarity; /* NaN = the preset's */
    bool link_tracklets;         /* identity linking after tracking */
    const char *const *mot_params; /* n_mot_params "KEY=VALUE" (--mot_param; "preset=paper") */
    int n_mot_params;
    const char *appearance_threshold; /* NULL: the preset's; "auto" (calibrated per video) or
                                         a cosine in [-1, 1]: the appearance trackers' least
                                         appearance similarity (--appearance_threshold) */
} sleapc_tracking_opts;

SLEAPC_API sleapc_tracking_opts sleapc_tracking_opts_default(void);

/* sleap-nn's post-inference filters; all off by default. */
typedef struct sleapc_filter_opts {
    uint32_t struct_size; /* sizeof(sleapc_filter_opts) */
    bool filter_overlapping;
    const char *filter_overlapping_method;   /* "iou" | "oks" */
    double filter_overlapping_threshold;     /* 0.8 */
    int filter_min_visible_nodes;            /* 0 */
    double filter_min_visible_node_fraction; /* 0 */
    double filter_min_mean_node_score;       /* 0 */
    double filter_min_instance_score;        /* 0 */
    double filter_min_centroid_distance;     /* 0 */
} sleapc_filter_opts;

SLEAPC_API sleapc_filter_opts sleapc_filter_opts_default(void);

/* Checks the options (names, ranges, combinations sleap-nn cannot compute)
 * for a skeleton of n_nodes nodes (0 = not known yet: only what does not
 * depend on it). SLEAPC_OK or SLEAPC_ERR_INVALID_ARG / SLEAPC_ERR_UNSUPPORTED
 * with a message naming the option. Either pointer may be NULL. */
SLEAPC_API sleapc_status sleapc_tracking_opts_check(const sleapc_tracking_opts *t,
                                                    const sleapc_filter_opts *f, int n_nodes);

/* Reads predictions (a .slp from any producer, or sleapc's .json), applies
 * the filters, tracks when t->tracking (like sleap-nn predict -i x.slp -t with
 * no model), and writes each of out_paths (.slp, .h5, .csv, .json by
 * extension), each atomically. Either option pointer may be NULL (= off). */
SLEAPC_API sleapc_status sleapc_retrack(const char *in_path, const char *const *out_paths,
                                        int n_out, const sleapc_tracking_opts *t,
                                        const sleapc_filter_opts *f);

/* Joins the outputs of shards of one run (sleapc predict --shard K/N on one
 * video: each file holds some frames) into out_path, as one run over all
 * their frames writes it: every frame once, in (video, frame) order. Inputs
 * are .slp, sleapc's .json or analysis .h5; they must have the same skeleton
 * and videos and no frame in common (SLEAPC_ERR_INVALID_ARG naming the
 * files otherwise). Tracks end at each seam, so the joined frames are
 * tracked again when t->tracking, or, when t is NULL, with the default
 * options if the inputs carry tracker tracks ("track_<n>"); t with tracking
 * off drops those. A multi-class model's named identities are kept as they
 * are unless t->tracking. The filters f run first (NULL: off). */
SLEAPC_API sleapc_status sleapc_predictions_merge(const char *const *in_paths, int n_in,
                                                  const char *out_path,
                                                  const sleapc_tracking_opts *t,
                                                  const sleapc_filter_opts *f);

/* Filter and track the predictions w gathers when it is closed, before
 * they are written (frames in video and frame order, as sleap-nn tracks
 * them). t->tracking off: filters only. t->max_instances should be the
 * predictor's --max_instances (sleap-nn's derived rules use it). Optical
 * flow reads the frames of the writer's videos. Set before the first
 * sleapc_writer_add (SLEAPC_ERR_STATE after): the filters run as frames are
 * added. SLEAPC_ERR_INVALID_ARG / SLEAPC_ERR_UNSUPPORTED for options sleapc
 * cannot run. */
SLEAPC_API sleapc_status sleapc_writer_set_tracking(sleapc_writer *w, const sleapc_tracking_opts *t,
                                                    const sleapc_filter_opts *f);

#ifdef __cplusplus
}
#endif

#endif
