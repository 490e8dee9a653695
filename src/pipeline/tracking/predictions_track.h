/* Post-inference filters and tracking applied to gathered predictions, the
 * way sleap-nn runs them between inference and writing: frames visited in
 * (video, frame index) order, one tracker over the whole run. */
#ifndef SLEAPC_PIPELINE_TRACKING_PREDICTIONS_TRACK_H
#define SLEAPC_PIPELINE_TRACKING_PREDICTIONS_TRACK_H

#include "layers/ops/filters.h"
#include "core/results.h"
#include "pipeline/tracking/tracker.h"

/* Frames for optical flow: frame frame_idx of video `video` as (height,
 * width) uint8 grayscale into a buffer the source owns (valid until the next
 * call). */
typedef struct sleapc_track_images {
    void *ctx;
    sleapc_status (*gray)(void *ctx, int video, int64_t frame_idx, const uint8_t **gray,
                          int64_t *height, int64_t *width);
} sleapc_track_images;

/* Drops the instances the configured filters reject (each frame on its
 * own). SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__predictions_filter(sleapc_predictions *pr, const sleapc_filter_config *cfg);

/* Replaces every instance's track and tracking score with the tracker's,
 * drops the instances the tracker drops and puts each frame's instances in
 * the tracker's output order. Tracks are named "track_<id>" and listed in
 * order of first appearance (as sleap-io lists them). images: required with
 * use_flow, else NULL. SLEAPC_ERR_INVALID_ARG (options), SLEAPC_ERR_NOMEM, or
 * what images reports. */
sleapc_status sleapc__predictions_track(sleapc_predictions *pr, const sleapc_tracker_opts *o,
                                        const sleapc_track_images *images);

/* The filters, then tracking with the resolved options to when not NULL,
 * as sleap-nn runs them after inference. Optical flow reads the
 * frames of the predictions' videos: the stored path, else the same file
 * name beside near_path (the predictions file; may be NULL).
 * SLEAPC_ERR_INVALID_ARG / _UNSUPPORTED (options), SLEAPC_ERR_IO (no video
 * for --use_flow), SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__predictions_postprocess(sleapc_predictions *pr,
                                              const sleapc_filter_config *filters,
                                              const sleapc_tracker_opts *to,
                                              const char *near_path);

/* The frames optical flow reads, from the videos of head (borrowed), found
 * as sleapc__predictions_postprocess finds them; opened on first use.
 * SLEAPC_ERR_NOMEM. */
typedef struct sleapc_video_frames sleapc_video_frames;
sleapc_status sleapc__video_frames_open(const sleapc_predictions *head, const char *near_path,
                                       sleapc_video_frames **out, sleapc_track_images *images);
void sleapc__video_frames_close(sleapc_video_frames *vf);

#endif
