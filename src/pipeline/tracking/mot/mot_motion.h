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

/* Raw-box (x1, y1, x2, y2) intersection over the smaller box's area (0 for
 * an empty smaller box): how the linker and the calibration call two
 * detections of one frame the same animal. */
double sleapc__mot_iomin(const double *a, const double *b);

#endif
