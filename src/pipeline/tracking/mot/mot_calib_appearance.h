/* The appearance part of sleap-nn 0.3.5's per-video calibration
 * (tracking/mot/calibration.py: _appearance, _anchor_vectors, _run_trials,
 * _link_rule): how well the re-ID vectors tell the animals apart, measured
 * on trials along the video's unambiguous anchor tracklets. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_CALIB_APPEARANCE_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_CALIB_APPEARANCE_H

#include "pipeline/tracking/mot/mot_detect.h"

/* The gallery length of a tracker's appearance memory (DeepSORT keeps
 * gallery_budget vectors, the others gallery_size): what the g = 1 trials
 * use. */
int sleapc__mot_memory_gallery_size(const sleapc_mot_params *p);

/* Whether tracker t associates by appearance (re-ID vectors). */
bool sleapc__mot_uses_appearance(sleapc_mot_tracker t);

/* Whether the calibration's appearance part is read: a tracker that
 * associates by appearance, or identity linking. */
bool sleapc__mot_needs_appearance(const sleapc_mot_params *p);

/* cal->app of video v (detections as first extracted; cal's stride and
 * time base already resolved), as calibrate() computes it with its default
 * max_trials (2000) and seed (0). SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_calibrate_appearance(const mot_video *v, const sleapc_mot_params *p,
                                               mot_calibration *cal);

#endif
