/* One video's pose detections as sleap-nn's MOT trackers see them
 * (tracking/mot/detections.py) and the per-video calibration they need
 * (tracking/mot/calibration.py: stride and time base, body size, score
 * quantiles). Frames in (frame index) order; detections flat, in input
 * order within each frame. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_DETECT_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_DETECT_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/tracking/mot/mot_params.h"
#include "sleapc/sleapc.h"

typedef struct mot_video {
    int n_nodes;
    int64_t n_frames;
    int64_t *frame_idx, *first; /* per frame: index, first detection */
    int *count;                 /* per frame: detections */
    int64_t n;                  /* detections */
    double *kp;                 /* (n, n_nodes, 2), NaN = missing */
    double *box, *raw;          /* (n, 4) padded and raw xyxy; NaN rows when invalid */
    double *score;              /* confidence in [0, 1] */
    bool *valid;
    int *n_visible;
    int emb_dim; /* re-ID vector length; 0: the detections carry none */
    float *emb;  /* (n, emb_dim) as stored, NaN rows: no vector; NULL when emb_dim is 0 */
} mot_video;

/* Allocates room for n_frames frames and n detections of n_nodes nodes
 * (counts zero). SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_video_alloc(mot_video *v, int n_nodes, int64_t n_frames, int64_t n);
void sleapc__mot_video_free(mot_video *v);

/* Detection d from its keypoints (already in v->kp), point scores
 * (n_nodes; NaN: none) and instance score: raw extent of the visible
 * nodes, padded box, score (score_mode), validity. Degenerate geometry
 * (one visible node, or a side under 1 px) is floored at 1 px, as sleap-nn
 * extracts detections before the body size is known. */
void sleapc__mot_detect(mot_video *v, int64_t d, const double *point_scores, double instance_score,
                        const sleapc_mot_params *p);

/* calibration.py's constants for the appearance part. */
#define MOT_LINK_QUERY_LEN 10
#define MOT_LINK_GALLERY_LEN 30

typedef enum mot_appearance_status {
    MOT_APPEARANCE_NO_VECTORS = 0, /* "no_vectors" */
    MOT_APPEARANCE_OK,             /* "ok" */
    MOT_APPEARANCE_INSUFFICIENT,   /* "insufficient" */
    MOT_APPEARANCE_SKIPPED,        /* "skipped": nobody reads it */
} mot_appearance_status;

/* The appearance part of VideoCalibration (calibration.py _appearance);
 * NaN where sleap-nn has None. by_len arrays hold n_by_len entries (query
 * length n at index n - 1; 0 when not calibrated). */
typedef struct mot_appearance_calibration {
    mot_appearance_status status;
    int64_t n_anchors, n_trials;
    double assoc_rank1, m_assoc, ema_cos_gate, gallery_cos_gate, mu_pos, mu_neg;
    double link_thresh, link_margin, link_recall;
    int n_by_len;
    double link_thresh_by_len[MOT_LINK_QUERY_LEN];
    double link_margin_by_len[MOT_LINK_QUERY_LEN];
    double neg_collision_rate;
    bool for_association; /* appearance_for_association */
    bool for_linking;     /* appearance_for_linking */
} mot_appearance_calibration;

/* VideoCalibration's appearance defaults: no vectors, every statistic NaN. */
mot_appearance_calibration sleapc__mot_appearance_uncalibrated(void);

typedef struct mot_calibration {
    int64_t frame_step;
    bool regular;
    bool frames_time_base; /* resolved time base: frames, else steps */
    double body_size;      /* NaN: none measurable */
    double score_q95;      /* NaN: no scores */
    double normalizer;     /* NaN: scores used as they are */
    double step_p95;       /* per-step anchor motion (px); NaN: unknown or not measured */
    mot_appearance_calibration app;
} mot_calibration;

/* calibrate()'s geometry over the detections as first extracted: the
 * stride (most common positive frame delta, ties the smallest; regular when
 * it covers at least half), the time base, the body size (median raw-box
 * diagonal of valid detections with 2+ visible nodes, or p->body_size), the
 * score quantile q95, the normalizer, when identity linking runs the
 * anchor motion's step_p95 (mot_motion.h), and for an appearance tracker or
 * identity linking the appearance part cal->app (mot_calib_appearance.h;
 * else it stays uncalibrated). SLEAPC_ERR_NOMEM;
 * SLEAPC_ERR_UNSUPPORTED when no body size can be measured (single-node
 * poses: sleap-nn then sizes the animal from its motion, not reproduced). */
sleapc_status sleapc__mot_calibrate(const mot_video *v, const sleapc_mot_params *p,
                                    mot_calibration *cal);

/* What calibrate() measures over a video, gathered by the caller (above
 * over a mot_video; frame by frame over a file without holding it): the
 * arrays are sorted in place. */
typedef struct mot_calib_data {
    int64_t *deltas; /* positive frame-index deltas between consecutive frames */
    int64_t n_deltas;
    double *diags; /* raw-box diagonals of the sized detections (sleapc__mot_sized_diag) */
    int64_t n_diags;
    double *scores; /* finite scores of the valid detections */
    int64_t n_scores;
    int64_t n_valid; /* valid detections */
} mot_calib_data;

/* The calibration of c, as sleapc__mot_calibrate, without the anchor
 * motion (identity linking's, which needs the whole video). Errors: as
 * sleapc__mot_calibrate. */
sleapc_status sleapc__mot_calibrate_data(mot_calib_data *c, const sleapc_mot_params *p,
                                         mot_calibration *cal);

/* Whether detection d is sized (valid, 2+ visible nodes, a finite positive
 * raw-box diagonal), with that diagonal. */
bool sleapc__mot_sized_diag(const mot_video *v, int64_t d, double *diag);

/* The tracker's final geometry and scores (BaseMOTTracker.prepare):
 * degenerate detections take the body size as their box, every other box
 * is floored at a quarter of it, and scores are divided by the normalizer. */
void sleapc__mot_finish_detections(mot_video *v, const sleapc_mot_params *p,
                                   const mot_calibration *cal);

/* The same for detection d alone (a frame tracked as it comes). */
void sleapc__mot_finish_detection(mot_video *v, int64_t d, const sleapc_mot_params *p,
                                  const mot_calibration *cal);

/* Steps between frames delta apart: max(1, round-half-even(delta / step)). */
int64_t sleapc__mot_steps_between(int64_t delta, int64_t frame_step);

/* np.quantile(x, q) (linear) of a sorted array. */
double sleapc__mot_quantile_sorted(const double *x, int64_t n, double q);

#endif
