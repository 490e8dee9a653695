/* The writer's state, shared by writer.c (open, add) and writer_close.c. */
#ifndef SLEAPC_PIPELINE_WRITER_STATE_H
#define SLEAPC_PIPELINE_WRITER_STATE_H

#include "core/results.h"
#include "core/results_spill.h"
#include "io/predictions/predictions_format.h"
#include "sleapc/predictor.h"
#include "layers/ops/filters.h"
#include "pipeline/tracking/tracker.h"

struct sleapc_writer {
    char *path;
    const sleapc_pred_format *format; /* by the path's extension (io/predictions) */
    sleapc_predictions pr;    /* the header (skeleton, tracks, videos, provenance) */
    sleapc_predictions batch; /* the batch being added (its arrays are reused) */
    sleapc_results_spill *spill; /* the filtered frames so far, in the order added;
                                  * NULL after a failed add */
    int64_t n_added;          /* frames added */
    bool in_order;            /* added in (video, frame index) order so far */
    int last_video;
    int64_t last_frame;
    sleapc_filter_config filters; /* run as frames come */
    bool track;                   /* tracking at close */
    sleapc_tracker_opts tracking;
    int src_nodes;      /* nodes of the predictor's instances */
    bool collapse;      /* centroid-only: each instance's one point as node "centroid" */
    bool drop_empty;    /* frames without instances are not written */
    bool *live;         /* per video: a live source, its length counted as frames come */
    int n_stages;       /* what the provenance records: the stages as last seen */
    sleapc_stage_info stages[2];
};

/* sleap-nn's clean_empty_frames (--no_empty_frames) on pr's frame list. */
void sleapc__writer_drop_empty_frames(sleapc_predictions *pr);

#endif
