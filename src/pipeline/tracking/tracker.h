/* Online pose tracker after sleap-nn's tracking/tracker.py: frames are given
 * one at a time in order; the state is bounded by the candidate window (and,
 * for local queues, the number of tracks), so memory stays flat over any
 * length of video. Post-tracking clean-up (cull to a count, connect single
 * breaks) runs per frame as well: sleap-nn's passes only ever look back. */
#ifndef SLEAPC_PIPELINE_TRACKING_TRACKER_H
#define SLEAPC_PIPELINE_TRACKING_TRACKER_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/tracking/mot/mot_params.h"
#include "sleapc/sleapc.h"

typedef enum sleapc_track_candidates {
    SLEAPC_TRACK_FIXED_WINDOW = 0, /* the last window_size frames */
    SLEAPC_TRACK_LOCAL_QUEUES      /* the last window_size instances of each track */
} sleapc_track_candidates;

typedef enum sleapc_track_features {
    SLEAPC_TRACK_KEYPOINTS = 0,
    SLEAPC_TRACK_CENTROIDS, /* NaN-median of the points per axis */
    SLEAPC_TRACK_BBOXES,    /* [xmin, ymin, xmax, ymax] of the visible points */
    SLEAPC_TRACK_EMBEDDINGS /* the detection's re-ID vector (sleap-nn's appearance-only mode) */
} sleapc_track_features;

typedef enum sleapc_track_scoring {
    SLEAPC_TRACK_OKS = 0,
    SLEAPC_TRACK_IOU,
    SLEAPC_TRACK_COSINE_SIM,
    SLEAPC_TRACK_EUCLIDEAN_DIST
} sleapc_track_scoring;

typedef enum sleapc_track_reduction {
    SLEAPC_TRACK_MEAN = 0,
    SLEAPC_TRACK_MAX,
    SLEAPC_TRACK_ROBUST_QUANTILE
} sleapc_track_reduction;

typedef enum sleapc_track_matching {
    SLEAPC_TRACK_HUNGARIAN = 0,
    SLEAPC_TRACK_GREEDY
} sleapc_track_matching;

/* Tracker parameters (sleap-nn's Tracker.from_config after its derived rules;
 * see sleapc__tracker_opts_default for the defaults). */
typedef struct sleapc_tracker_opts {
    int window_size;                    /* 5 */
    sleapc_track_candidates candidates; /* fixed window */
    sleapc_track_features features;     /* keypoints */
    sleapc_track_scoring scoring;       /* oks */
    sleapc_track_reduction reduction;   /* mean */
    double robust_best_instance;        /* 1.0: the quantile of robust_quantile */
    double oks_stddev;                  /* 0.025 */
    sleapc_track_matching matching;     /* hungarian */
    int min_new_track_points;           /* 0: spawn only with more visible points */
    int min_match_points;               /* 0: candidates need more visible points */
    int max_tracks;                     /* -1 = no cap (local queues only) */
    int target_instance_count;          /* 0 = none */
    bool pre_cull_to_target;            /* cull to the target before tracking */
    double pre_cull_iou_threshold;      /* 0 = score only */
    int clean_instance_count;           /* 0 = off: cull after tracking */
    double clean_iou_threshold;         /* 0 = score only */
    bool post_connect_single_breaks;    /* relabel single lost/new track pairs */
    bool use_flow;                      /* shift candidates by optical flow */
    double of_img_scale;                /* 1.0 */
    int of_window_size;                 /* 21 */
    int of_max_levels;                  /* 3 */
    bool keep_infeasible;               /* false: a pairing at infinite cost (no usable
                                           candidate) is dropped when the detection can
                                           start a track instead (sleap-nn 0.3.5, #745);
                                           true: it stands, score -inf (0.3.3) */
    bool cosine_matrix;                 /* cosine_sim on keypoints as np.dot of the (2, 2) point
                                           arrays, a matrix product (sleap-nn 0.3.3; 2-node
                                           skeletons only); false: the cosine of the raveled
                                           points (0.3.5's compute_cosine_sim) */
    int emb_dim;                        /* the vectors' length with features embeddings (the
                                           caller sets it from its predictions) */
    bool mot;                           /* a MOT tracker (mot/) with mot_params, not the above */
    sleapc_mot_params mot_params;
} sleapc_tracker_opts;

sleapc_tracker_opts sleapc__tracker_opts_default(void);

/* Checks opts against the skeleton size: the combinations sleap-nn cannot
 * compute (oks or iou on other features, 0.3.3's cosine_sim on keypoints
 * unless there are exactly 2 nodes) and out-of-range numbers. SLEAPC_OK or
 * SLEAPC_ERR_INVALID_ARG with a message naming the option. */
sleapc_status sleapc__tracker_opts_check(const sleapc_tracker_opts *opts, int n_nodes);

/* One frame in. points: (n_insts, n_nodes, 2) float64, NaN = missing (sleap-io
 * keeps points as float64). scores: instance scores, used by the culls (NULL
 * = all 0). gray: the frame as (height, width) uint8, required with use_flow,
 * ignored otherwise; copied, not kept. */
typedef struct sleapc_track_frame_in {
    int64_t frame_idx;
    int n_insts;
    const double *points;
    const double *scores;
    const uint8_t *gray;
    int64_t height, width;
    const float *vectors; /* (n_insts, emb_dim) with features embeddings; NULL or a NaN row:
                             no vector (never matched, as in sleap-nn) */
} sleapc_track_frame_in;

/* One frame out, into caller buffers of n_insts entries each.
 * n_out: how many instances the frame keeps; out[0..n_out): their input
 * indices in sleap-nn's output order. track[i]: the track id of input
 * instance i (named "track_<id>"), -1 when it has none (dropped, or kept
 * untracked on the local queues' first frame); tracking_score[i]: NaN when
 * it has none (may be -inf: a forced match on an invalid cell). */
typedef struct sleapc_track_frame_out {
    int n_out;
    int *out;
    int *track;
    double *tracking_score;
} sleapc_track_frame_out;

typedef struct sleapc_tracker sleapc_tracker;

/* opts is copied. SLEAPC_ERR_INVALID_ARG (see _opts_check; features
 * embeddings with no emb_dim), SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__tracker_create(const sleapc_tracker_opts *opts, int n_nodes,
                                     sleapc_tracker **out);

/* Tracks one frame. Frames must come in order (sleap-nn sorts by frame index);
 * a frame with no instances still counts (it occupies a fixed-window slot).
 * SLEAPC_ERR_INVALID_ARG (NULL buffers, no image with use_flow, image size
 * changed), SLEAPC_ERR_NOMEM; after an error the tracker is unusable. */
sleapc_status sleapc__tracker_track_frame(sleapc_tracker *t, const sleapc_track_frame_in *in,
                                          sleapc_track_frame_out *out);

/* 1 + the largest track id created so far (0 before any). */
int sleapc__tracker_n_tracks(const sleapc_tracker *t);

void sleapc__tracker_destroy(sleapc_tracker *t);

#endif
