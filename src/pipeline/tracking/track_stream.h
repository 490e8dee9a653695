/* Tracking a run block by block, as its frames come: the same result as
 * sleapc__predictions_track over the whole run when the frames come in
 * (video, frame index) order, with memory bounded by a block and the
 * tracker's window. */
#ifndef SLEAPC_PIPELINE_TRACKING_TRACK_STREAM_H
#define SLEAPC_PIPELINE_TRACKING_TRACK_STREAM_H

#include "core/results.h"
#include "pipeline/tracking/predictions_track.h"

typedef struct sleapc_track_stream sleapc_track_stream;

/* o: resolved options (copied). head: the run's header (borrowed: its
 * videos for optical flow, found beside near_path as
 * sleapc__predictions_postprocess finds them). SLEAPC_ERR_INVALID_ARG
 * (options), SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__track_stream_create(const sleapc_tracker_opts *o,
                                          const sleapc_predictions *head, const char *near_path,
                                          sleapc_track_stream **out);

/* Tracks in's frames, which must continue the (video, frame index) order of
 * the frames before them (SLEAPC_ERR_INVALID_ARG otherwise), into out
 * (emptied first; its n_nodes is in's): each frame's kept instances in the
 * tracker's order, track = the index of its name (sleapc__track_stream_names),
 * class_index -1. With drop_empty, frames left without instances are not
 * put out (they still count for the tracker). */
sleapc_status sleapc__track_stream_block(sleapc_track_stream *ts, const sleapc_predictions *in,
                                         bool drop_empty, sleapc_predictions *out);

/* The tracks seen so far, "track_<id>" in order of first appearance (as
 * sleap-io lists them): *names holds *n new strings (NULL-terminated
 * array); SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__track_stream_names(const sleapc_track_stream *ts, char ***names, int *n);

void sleapc__track_stream_destroy(sleapc_track_stream *ts);

#endif
