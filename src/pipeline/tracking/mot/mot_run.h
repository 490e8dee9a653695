/* A MOT tracker over a whole run, as sleap-nn's _apply_mot_tracking runs
 * it: frames in (video, frame index) order; per video a fresh tracker, the
 * calibration pre-pass over every frame of the video, tracking frame by
 * frame (labels written back when a track confirms), then with
 * --link_tracklets or max_tracks identity linking over the whole video
 * (mot_link.h); names continue past the previous video's. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_RUN_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_RUN_H

#include "core/results.h"
#include "pipeline/tracking/mot/mot_detect.h"
#include "pipeline/tracking/mot/mot_params.h"

/* Sets every instance's track (the id of "track_<id>", -1: untracked) and
 * tracking score (the matched pair's geometric similarity, 1 at a track's
 * start, 0 untracked, also when identity linking's closed set untracks
 * it); nothing is dropped or reordered. *n_ids: 1 + the
 * largest id. scores: NULL, or n_insts entries that receive the tracking
 * scores in float64 (the instances keep them as float).
 * SLEAPC_ERR_UNSUPPORTED (a tracker or setting sleapc does not run),
 * SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_track_predictions(sleapc_predictions *pr, const sleapc_mot_params *p,
                                            int *n_ids, double *scores);

/* The same with the appearance part of every video's calibration given
 * (app; NULL: as computed): identity linking decides with it. */
sleapc_status sleapc__mot_track_predictions_app(sleapc_predictions *pr, const sleapc_mot_params *p,
                                                const mot_appearance_calibration *app, int *n_ids,
                                                double *scores);

/* The calibration of one video of the run (its frames in frame order), as
 * sleapc__mot_track_predictions computes it before tracking: what an
 * online tracker (mot_online.h) needs to give the same tracks.
 * SLEAPC_ERR_NOMEM, SLEAPC_ERR_UNSUPPORTED (no body size measurable). */
sleapc_status sleapc__mot_run_calibrate(const sleapc_predictions *pr, int64_t video,
                                        const sleapc_mot_params *p, mot_calibration *cal);

/* What sleap-nn refuses before tracking, for a skeleton of n_nodes (0:
 * unknown): a tracker or similarity sleapc does not run.
 * SLEAPC_ERR_UNSUPPORTED naming it. */
sleapc_status sleapc__mot_check_supported(const sleapc_mot_params *p, int n_nodes);

/* sleap-nn's refusal of an appearance tracker on detections without any
 * re-ID vector: SLEAPC_ERR_INVALID_ARG naming the tracker. */
sleapc_status sleapc__mot_refuse_no_vectors(const sleapc_mot_params *p);

#endif
