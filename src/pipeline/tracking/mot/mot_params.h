/* Parameters of sleap-nn 0.3.5's MOT trackers (tracking/mot/params.py):
 * each tracker's published constants ("paper" preset), sleap-nn's animal
 * defaults on top ("animal", the default preset), then the options and
 * KEY=VALUE overrides, resolved and checked as MOTParams.for_tracker and
 * parse_mot_param do. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_PARAMS_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_PARAMS_H

#include <stdbool.h>

#include "sleapc/sleapc.h"

/* sleap-nn's MOT_TRACKER_NAMES order. */
typedef enum sleapc_mot_tracker {
    SLEAPC_MOT_SORT = 0,
    SLEAPC_MOT_DEEPSORT,
    SLEAPC_MOT_STRONGSORT,
    SLEAPC_MOT_BYTETRACK,
    SLEAPC_MOT_BOTSORT,
    SLEAPC_MOT_OCSORT,
    SLEAPC_MOT_DEEPOCSORT,
    SLEAPC_MOT_N_TRACKERS
} sleapc_mot_tracker;

typedef enum {
    SLEAPC_MOT_SIM_AUTO = 0,
    SLEAPC_MOT_SIM_IOU,
    SLEAPC_MOT_SIM_OKS,
    SLEAPC_MOT_SIM_CENTROID
} sleapc_mot_similarity;
typedef enum {
    SLEAPC_MOT_SCORE_AUTO = 0,
    SLEAPC_MOT_SCORE_INSTANCE,
    SLEAPC_MOT_SCORE_NONE
} sleapc_mot_score_mode;
typedef enum {
    SLEAPC_MOT_KALMAN_AUTO = 0,
    SLEAPC_MOT_KALMAN_XYWH,
    SLEAPC_MOT_KALMAN_XYAH,
    SLEAPC_MOT_KALMAN_XYSR
} sleapc_mot_kalman;
typedef enum {
    SLEAPC_MOT_TIME_AUTO = 0,
    SLEAPC_MOT_TIME_FRAMES,
    SLEAPC_MOT_TIME_STEPS
} sleapc_mot_time_base;

/* MOTParams; NaN / -1 where sleap-nn's value is None. */
typedef struct sleapc_mot_params {
    sleapc_mot_tracker tracker;
    bool paper; /* preset: paper, else animal */
    sleapc_mot_similarity similarity;
    double body_size; /* NaN: measured per video */
    double oks_stddev, box_padding;
    sleapc_mot_score_mode score_mode;
    bool normalize_scores;
    sleapc_mot_kalman kalman;
    sleapc_mot_time_base time_base;
    int track_buffer, min_hits;
    double track_high_threshold, track_low_threshold, new_track_threshold;
    double min_match_similarity, low_stage_min_similarity, unconfirmed_min_similarity;
    double duplicate_similarity;
    bool fuse_score;
    double appearance_threshold; /* NaN: "auto" */
    double proximity_threshold, ema_alpha;
    bool adaptive_ema;
    int gallery_size, gallery_budget;
    double mc_lambda;
    bool nsa;
    int delta_t;
    double inertia;
    bool use_byte;
    double w_assoc_emb, aw_param;
    bool aw_off, rescue;
    double rescue_min_similarity;
    bool link_tracklets;
    int max_tracks; /* -1: None */
    bool link_swap_correction;
    int link_spatial_gate_frames;
} sleapc_mot_params;

/* The tracker named name ("sort", ...), or -1. */
int sleapc__mot_tracker_from_name(const char *name);
const char *sleapc__mot_tracker_name(sleapc_mot_tracker t);

/* Options given by name (--track_buffer ...): -1 / NaN = not given. */
typedef struct sleapc_mot_named {
    int track_buffer, min_hits;
    double track_high_threshold, track_low_threshold, new_track_threshold;
    double min_match_similarity, oks_stddev;
    sleapc_mot_similarity similarity; /* from an explicit --scoring_method; AUTO = not given */
    bool link_tracklets;
    int max_tracks;
    const char *appearance_threshold; /* NULL: not given; "auto" or a cosine in [-1, 1] */
} sleapc_mot_named;

/* MOTParams.for_tracker(tracker, preset, **named, **overrides): overrides
 * are "KEY=VALUE" strings (--mot_param), a later one replacing an earlier
 * one of the same key; "preset=animal|paper" picks the preset. A key given
 * both by name and as an override, an unknown key, a malformed value or an
 * invalid combination: SLEAPC_ERR_INVALID_ARG naming it. */
sleapc_status sleapc__mot_params_resolve(sleapc_mot_tracker tracker, const sleapc_mot_named *named,
                                         const char *const *overrides, int n_overrides,
                                         sleapc_mot_params *out);

/* Whether identity linking runs (link_tracklets, or a known max_tracks). */
bool sleapc__mot_params_link(const sleapc_mot_params *p);

#endif
