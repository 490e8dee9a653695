/* sleap-nn 0.3.5's eval-tracking (evaluation.py: run_identity_evaluation):
 * two blocks over one frame alignment and one matcher. The legacy identity
 * block (identity_metrics: per-frame Hungarian matching, ID switches, IDF1,
 * MT/PT/ML, fragmentation, purity) and the TrackEval-faithful `mot` block
 * (compute_mot_metrics, trackeval.h). Poses match by OKS on the ground-truth
 * box (node by node: both skeletons must have as many nodes), or by centroid
 * distance when a skeleton has one node; untracked ground truth is
 * don't-care. Frames pair by (video path, frame index); every GT frame of a
 * video the prediction shares a frame with is scored. */
#ifndef SLEAPC_PIPELINE_EVAL_EVAL_IDENTITY_H
#define SLEAPC_PIPELINE_EVAL_EVAL_IDENTITY_H

#include <stdbool.h>

#include "pipeline/eval/eval_tracking.h"

typedef enum sleapc_id_carrier {
    SLEAPC_ID_AUTO, /* the carrier the prediction's tracks are on */
    SLEAPC_ID_POSE,
    SLEAPC_ID_MASK, /* segmentation masks: sleapc reads none, so nothing to score */
} sleapc_id_carrier;

typedef struct sleapc_id_opts {
    sleapc_id_carrier carrier;
    double match_threshold; /* NaN: 0.5 (OKS), 50 px (distance) */
    double mt_threshold;    /* 0.8: coverage at or above it is mostly tracked (legacy) */
    double ml_threshold;    /* 0.2: below it mostly lost (legacy) */
    bool user_labels_only;  /* false: only predictions a user label replaces leave the GT */
    bool global_identity;   /* false: a trajectory is (video, track name) */
    double oks_stddev;      /* 0.025 */
} sleapc_id_opts;

sleapc_id_opts sleapc__id_opts_default(void);

/* Score pr_path against gt_path. *out holds sleap-nn's dict in metrics (its
 * keys and order; NaN as None) with the legacy block's per-frame
 * assignments for the report. Errors: SLEAPC_ERR_INVALID_ARG for a bad
 * option, nothing to score (sleap-nn's messages) or skeletons OKS cannot
 * compare; reading errors; SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__id_run(const char *gt_path, const char *pr_path, const sleapc_id_opts *o,
                             sleapc_et_result **out);

/* The two one-line summaries sleap-nn logs. *out: new string. */
sleapc_status sleapc__id_summary(const sleapc_et_result *r, char **out);

/* Steps of sleapc__id_run in their own files. */

/* motion_diagnostic(gt, "pose") as a dict (eval_identity_motion.c). */
sleapc_pyobj *sleapc__id_motion(const sleapc_ev_labels *gt);

/* The key sleap-nn pairs a frame's video by (_video_key). */
const char *sleapc__id_video_key(const sleapc_ev_labels *l, int video);

#endif
