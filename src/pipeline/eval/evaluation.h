/* Pose evaluation against ground truth, as sleap-nn's `eval` computes it
 * (sleap_nn/evaluation.py: run_evaluation, Evaluator): video and frame
 * pairing, per-frame instance matching by OKS (greedy, by prediction score)
 * or by centroid distance (Hungarian), and the metrics dict. */
#ifndef SLEAPC_PIPELINE_EVAL_EVALUATION_H
#define SLEAPC_PIPELINE_EVAL_EVALUATION_H

#include <stdbool.h>
#include <stdint.h>

#include "io/pyobj/pyobj.h"
#include "pipeline/eval/eval_labels.h"

typedef enum sleapc_ev_method {
    SLEAPC_EV_AUTO, /* centroid when the prediction skeleton has one node, else oks */
    SLEAPC_EV_OKS,
    SLEAPC_EV_CENTROID,
    SLEAPC_EV_BBOX, /* COCO box AP of predicted boxes (eval_bbox.c) */
} sleapc_ev_method;

/* Where bbox mode's GT boxes come from (sleap-nn resolve_bbox_source). */
typedef enum sleapc_ev_box_source {
    SLEAPC_EV_BOXES_AUTO,      /* user boxes if any, else user instances, else masks */
    SLEAPC_EV_BOXES_BBOXES,    /* the file's user boxes */
    SLEAPC_EV_BOXES_INSTANCES, /* tight boxes of the user instances' visible points */
    SLEAPC_EV_BOXES_MASKS,     /* user masks: sleapc reads none */
} sleapc_ev_box_source;

/* How a GT centroid is made (sleap-nn generate_centroids). */
typedef enum sleapc_ev_centroid {
    SLEAPC_EV_C_INFER,  /* anchor when an anchor node is given, else center_of_mass */
    SLEAPC_EV_C_MEAN,   /* center_of_mass: NaN-ignoring mean per axis */
    SLEAPC_EV_C_BBOX,   /* bbox_center: middle of the visible box, per axis */
    SLEAPC_EV_C_MEDIAN, /* geometric_median: Weiszfeld from the mean */
    SLEAPC_EV_C_ANCHOR, /* the anchor node; the fallback where it is not visible */
} sleapc_ev_centroid;

typedef struct sleapc_ev_opts {
    double oks_stddev;                    /* 0.025 */
    double oks_scale;                     /* NaN: each GT instance's bounding-box area */
    double match_threshold;               /* 0; in centroid mode 0 means 50 px */
    bool user_labels_only;                /* true */
    sleapc_ev_method method;              /* auto */
    const char *anchor_part;              /* centroid mode: the GT node used as centroid; NULL */
    sleapc_ev_centroid centroid_method;   /* centroid mode: infer */
    sleapc_ev_centroid centroid_fallback; /* anchor not visible: INFER means center_of_mass */
    bool degenerate_fallback; /* sleap-nn 0.3.5: GT with a zero-area box scored by distance */
    sleapc_ev_box_source bbox_source; /* bbox mode: auto */
    double bbox_padding;              /* bbox mode: px added on each side of derived boxes (0) */
} sleapc_ev_opts;

sleapc_ev_opts sleapc__ev_opts_default(void);

typedef struct sleapc_ev_pair {
    int64_t gt, pr; /* instance indices into gt->insts, pr->insts */
    double score;   /* OKS, or the centroid distance in px */
} sleapc_ev_pair;

typedef struct sleapc_ev_frame_pair {
    int64_t gt_frame, pr_frame; /* indices into gt->frames, pr->frames */
    int64_t n_gt;               /* GT instances considered (user only by default) */
} sleapc_ev_frame_pair;

typedef struct sleapc_ev_result {
    sleapc_ev_labels *gt, *pr; /* owned */
    bool has_metrics;          /* false: no predicted instances (sleap-nn returns None) */
    sleapc_ev_method method;   /* resolved: oks, centroid or bbox */
    const char *bbox_source;   /* bbox mode: the resolved GT box source (static text) */
    double match_threshold;    /* as used */
    int anchor_ind;            /* -1 = none */
    int *video_map;            /* [pr->n_videos]: GT video of each prediction video, -1 */
    const char **video_rule;   /* [pr->n_videos]: how it matched (static text) */
    int n_videos_matched;
    int64_t n_frame_pairs;
    sleapc_ev_frame_pair *frame_pairs;
    int64_t n_pairs;
    sleapc_ev_pair *pairs; /* sleap-nn's positive_pairs, in its order */
    int64_t n_fn;
    int64_t *fn; /* unmatched GT instances, in sleap-nn's order */
    int64_t n_fp;
    int64_t *fp;           /* centroid mode: unmatched predictions */
    int dist_cols;         /* oks: nodes per pair; centroid: 0 (one distance per pair) */
    double *dists;         /* [n_pairs * max(dist_cols, 1)] */
    sleapc_pyobj *metrics; /* sleap-nn's metrics dict; NULL when !has_metrics */
} sleapc_ev_result;

/* Evaluate predictions pr_path against ground truth gt_path. *out is new
 * (sleapc__ev_result_free), also when sleap-nn would return no metrics
 * (has_metrics false). Errors: SLEAPC_ERR_IO / SLEAPC_ERR_FORMAT reading a
 * file; SLEAPC_ERR_INVALID_ARG for bad options, skeletons that cannot be
 * compared, or no frame pairs (sleap-nn: "Empty Frame Pairs"), each naming
 * what does not match; SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__ev_run(const char *gt_path, const char *pr_path, const sleapc_ev_opts *o,
                             sleapc_ev_result **out);

void sleapc__ev_result_free(sleapc_ev_result *r);

/* Steps of sleapc__ev_run, each in its own file. */

/* sleap-io's Labels.match (AUTO video matcher): fills video_map, video_rule
 * and n_videos_matched (eval_videos.c). */
sleapc_status sleapc__ev_match_videos(sleapc_ev_result *r);

/* sleap-nn find_frame_pairs (eval_videos.c). */
sleapc_status sleapc__ev_frame_pairs(sleapc_ev_result *r, bool user_labels_only);

/* Is GT instance i considered (user instances only when user_labels_only)? */
bool sleapc__ev_gt_considered(const sleapc_ev_labels *gt, int64_t i, bool user_labels_only);

/* sleap-nn match_frame_pairs + compute_dists (eval_match.c). */
sleapc_status sleapc__ev_match_oks(sleapc_ev_result *r, const sleapc_ev_opts *o);

/* sleap-nn Evaluator._process_frames_centroid (eval_centroid.c). */
sleapc_status sleapc__ev_match_centroids(sleapc_ev_result *r, const sleapc_ev_opts *o);

/* sleap-nn _run_bbox_evaluation (eval_bbox.c): no predicted box leaves
 * has_metrics false; GT boxes as add_bboxes_to_labels makes them, paired
 * as bbox_frame_pairs does, scored by compute_bbox_metrics. */
sleapc_status sleapc__ev_bbox(sleapc_ev_result *r, const sleapc_ev_opts *o);

/* sleap-nn Evaluator.evaluate: r->metrics (eval_metrics.c, eval_voc.c). */
sleapc_status sleapc__ev_metrics(sleapc_ev_result *r);
sleapc_status sleapc__ev_voc_metrics(const sleapc_ev_result *r, bool by_pck,
                                     const double *pck_scores, sleapc_pyobj *dst);

/* A short summary table of the metrics (eval_summary.c). *out: new string. */
sleapc_status sleapc__ev_summary(const sleapc_ev_result *r, char **out);

#endif
