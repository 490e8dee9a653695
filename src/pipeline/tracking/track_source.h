/* A run's frames from a block source through the filters and the tracker
 * into a spill, a block at a time: what `predict` does when it closes its
 * writer, and what `track` does with a predictions file. Memory follows the
 * block and the tracker's window, not the run. */
#ifndef SLEAPC_PIPELINE_TRACKING_TRACK_SOURCE_H
#define SLEAPC_PIPELINE_TRACKING_TRACK_SOURCE_H

#include "core/results.h"
#include "core/results_spill.h"
#include "layers/ops/filters.h"
#include "pipeline/tracking/tracker.h"

typedef struct sleapc_track_source_opts {
    const sleapc_filter_config *filters; /* run on each block first; NULL: none */
    const sleapc_tracker_opts *tracking; /* resolved; NULL: no tracking */
    bool drop_empty;                     /* frames the tracker leaves empty are not kept */
    const char *near_path;               /* optical flow finds videos beside it (may be NULL) */
    const char *spill_near;              /* the spill goes in this file's folder */
} sleapc_track_source_opts;

/* src's frames (with tracking: in (video, frame index) order, else
 * SLEAPC_ERR_INVALID_ARG) filtered and tracked block by block into a new
 * spill *out (the caller closes it). With tracking, head's track names
 * become the tracker's ("track_<id>" in order of first appearance) and
 * multiclass false. head: the run's header (its videos for optical flow).
 * Errors of the filters, the tracker and the spill. */
sleapc_status sleapc__track_source(const sleapc_track_source_opts *o, sleapc_predictions *head,
                                   sleapc_results_source *src, sleapc_results_spill **out);

#endif
