/* A MOT tracker (sort, bytetrack, ocsort) over a block source, without
 * holding the run: what sleapc__track_source does for them when identity
 * linking is off (linking needs every tracklet: the run is then tracked
 * whole). */
#ifndef SLEAPC_PIPELINE_TRACKING_TRACK_SOURCE_MOT_H
#define SLEAPC_PIPELINE_TRACKING_TRACK_SOURCE_MOT_H

#include "pipeline/tracking/track_source.h"

/* As sleapc__track_source with o->tracking->mot: the same tracks, names
 * and output as tracking the whole run (sleapc__predictions_track), in two
 * passes over src. The first calibrates each video (sleap-nn's prepare():
 * it keeps each detection's box diagonal and score, 16 bytes, not the
 * detection); the second tracks frame by frame (mot_online.h), holding
 * only the frames whose tracks are not final yet. */
sleapc_status sleapc__track_source_mot(const sleapc_track_source_opts *o, sleapc_predictions *head,
                                       sleapc_results_source *src, sleapc_results_spill **out);

/* b's frames copied into dst's own arrays (the filters change them). */
sleapc_status sleapc__track_copy_block(const sleapc_predictions *b, sleapc_predictions *dst);

#endif
