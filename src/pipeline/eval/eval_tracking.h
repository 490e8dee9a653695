/* Identity quality of tracked predictions against tracked ground truth:
 * CLEAR-MOT (Bernardin & Stiefelhagen 2008: MOTA, MOTP, ID switches,
 * fragmentations, mostly tracked / partly tracked / mostly lost) and the
 * identity measures of Ristani et al. 2016 (IDF1, IDP, IDR).
 *
 * Per frame, the GT user instances that have a track are matched to the
 * predicted instances that have a track by scipy's linear_sum_assignment on
 * a cost: the mean distance over the nodes both skeletons share (by name)
 * and both have visible (default; pairs farther than the threshold, 50 px,
 * never match), or 1 - OKS over those nodes (pairs with OKS below the
 * threshold, 0.5, never match). An ID switch is a GT track whose matched
 * predicted track differs from the one it last matched. IDTP comes from the
 * one-to-one assignment of predicted to GT tracks that maximises the frames
 * in which the two are within the threshold (Ristani's global matching). */
#ifndef SLEAPC_PIPELINE_EVAL_EVAL_TRACKING_H
#define SLEAPC_PIPELINE_EVAL_EVAL_TRACKING_H

#include <stdbool.h>
#include <stdint.h>

#include "io/pyobj/pyobj.h"
#include "pipeline/eval/eval_labels.h"

typedef struct sleapc_et_opts {
    bool oks;          /* match by OKS instead of mean distance (false) */
    double threshold;  /* NaN: 50 px (distance) or 0.5 (OKS) */
    double oks_stddev; /* 0.025 */
} sleapc_et_opts;

/* One switch: GT track gt_track changed from predicted track from to to. */
typedef struct sleapc_et_switch {
    int64_t frame_idx;
    int gt_track, from, to;
} sleapc_et_switch;

typedef struct sleapc_et_result {
    sleapc_ev_labels *gt, *pr; /* owned */
    double threshold;          /* as used */
    bool oks;
    int64_t n_frames;   /* frames scored: GT frames with tracked user instances */
    int64_t *frame_idx; /* [n_frames] */
    int *assigned;      /* [n_frames * gt->n_tracks]: matched predicted track,
                           -1 unmatched, -2 the GT track is absent */
    int64_t n_switches;
    sleapc_et_switch *switches;
    int *id_map;           /* [gt->n_tracks]: predicted track given to each GT track, -1 */
    sleapc_pyobj *metrics; /* the figures, as a dict */
    bool v035;             /* sleap-nn 0.3.5's figures (eval_identity.h) */
} sleapc_et_result;

sleapc_et_opts sleapc__et_opts_default(void);

/* Score pr_path's tracks against gt_path's. Errors: reading a file;
 * SLEAPC_ERR_INVALID_ARG when either file has no tracks, the skeletons share
 * no node, or no frame pairs; SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__et_run(const char *gt_path, const char *pr_path, const sleapc_et_opts *o,
                             sleapc_et_result **out);

/* The same on labels in memory; takes gt and pr (freed also on failure). */
sleapc_status sleapc__et_run_labels(sleapc_ev_labels *gt, sleapc_ev_labels *pr,
                                    const sleapc_et_opts *o, sleapc_et_result **out);

void sleapc__et_result_free(sleapc_et_result *r);

/* Summary table (text). *out: new string. */
sleapc_status sleapc__et_summary(const sleapc_et_result *r, char **out);

#endif
