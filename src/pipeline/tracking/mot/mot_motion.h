/* The motion part of sleap-nn 0.3.5's per-video calibration
 * (tracking/mot/calibration.py: frame_steps, _same_frame_pairs,
 * _anchor_links, _chain_roots): step positions of the processed frames,
 * and the per-step displacement along unambiguous "anchor" tracklets whose
 * 95th percentile scales identity linking's spatial gate. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_MOTION_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_MOTION_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/tracking/mot/mot_detect.h"

/* Detection d's centroid: the centre of its visible keypoints' extent (NaN
 * when none is visible). */
void sleapc__mot_centroid(const mot_video *v, int64_t d, double c[2]);

/* Step position of each of the video's frames (the first at 0): frames
 * time base, steps_between the frame indices; else one per frame. */
void sleapc__mot_frame_steps(const mot_video *v, const mot_calibration *cal, int64_t *out);

/* calibrate()'s step_p95 and step_p99 (NaN when no anchor link exists) over
 * the detections as first extracted (before the body-size boxes), with the
 * time base and stride already in cal. SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_step_quantiles(const mot_video *v, const mot_calibration *cal,
                                         double *p95, double *p99);

/* calibrate()'s anchor tracklets over the detections as first extracted:
 * the valid detections flattened in (frame, input) order, each with its
 * anchor (numbered in the order of their first detection; -1: none), and
 * the per-step motion along the anchor links. */
typedef struct mot_anchors {
    int64_t m;       /* valid detections */
    int64_t *det;    /* (m,) the video's detection */
    int64_t *pos;    /* (m,) its frame (position in the video) */
    bool *dup;       /* (m,) a same-frame duplicate (IoMin above 0.5) */
    int64_t *anchor; /* (m,) anchor or -1 */
    int64_t n_anchors;
    int64_t *steps;    /* (n_frames,) step position of each frame */
    int64_t last_step; /* the last frame's (0 without frames) */
    double p95, p99;   /* step_p95, step_p99; NaN when no anchor link exists */
} mot_anchors;

/* SLEAPC_ERR_NOMEM. Free with sleapc__mot_anchors_free (also after an error). */
sleapc_status sleapc__mot_anchors(const mot_video *v, const mot_calibration *cal, mot_anchors *A);
void sleapc__mot_anchors_free(mot_anchors *A);

/* Raw-box (x1, y1, x2, y2) intersection over the smaller box's area (0 for
 * an empty smaller box): how the linker and the calibration call two
 * detections of one frame the same animal. */
double sleapc__mot_iomin(const double *a, const double *b);

#endif
