/* Evaluating predictions against ground-truth labels, as sleap-nn's `eval`
 * does (sleap_nn/evaluation.py): OKS mAP / mAR, mOKS, distance percentiles,
 * PCK, node visibility, or in centroid mode detection precision / recall;
 * and the identity quality of tracks (ID switches, IDF1, MOTA). */
#ifndef SLEAPC_EVAL_H
#define SLEAPC_EVAL_H

#include <stdbool.h>

#include "sleapc/sleapc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sleap-nn eval's options; sleapc_eval_opts_default() fills its defaults. */
typedef struct sleapc_eval_opts {
    uint32_t struct_size;          /* sizeof(sleapc_eval_opts) */
    double oks_stddev;             /* OKS spread per node (0.025) */
    double oks_scale;              /* OKS scale in px^2; NaN (default): each GT instance's
                                      bounding-box area */
    double match_threshold;        /* OKS (oks mode) or px (centroid mode; 0 means 50) (0) */
    bool user_labels_only;         /* ground truth: user instances only (true) */
    const char *match_method;      /* "auto" (default: bbox for box-only predictions, centroid
                                      for a one-node prediction skeleton, else oks), "oks",
                                      "centroid" or "bbox" (COCO box AP of predicted boxes) */
    const char *anchor_part;       /* centroid mode: the GT node used as centroid (NULL: the
                                      mean of the visible nodes) */
    sleapc_compat compat;          /* SLEAPC_COMPAT_DEFAULT: sleap-nn 0.3.5, where a GT instance
                                      whose visible box has no area is scored by mean distance
                                      (1 - d / 50 px) instead of OKS; 0.3.3: OKS */
    const char *centroid_method;   /* centroid mode: "center_of_mass", "bbox_center",
                                      "geometric_median" or "anchor" (NULL: anchor when
                                      anchor_part names a node, else center_of_mass) */
    const char *centroid_fallback; /* anchor not visible: a reduction above (NULL:
                                      center_of_mass) */
    const char *bbox_source;       /* match_method "bbox": GT boxes from "auto" (default), "bboxes",
                                      "instances" or "masks" (refused: sleapc reads no masks) */
    double bbox_padding;           /* match_method "bbox": px of padding on derived GT boxes (0) */
} sleapc_eval_opts;

SLEAPC_API sleapc_eval_opts sleapc_eval_opts_default(void);

typedef struct sleapc_eval sleapc_eval;

/* Evaluate the predictions in pred_path against the labels in gt_path (any
 * .slp / .pkg.slp, sleapc's predictions .json, or analysis .h5). *out receives a new
 * result (sleapc_eval_destroy), also when there is nothing to score (see
 * sleapc_eval_has_metrics). Returns SLEAPC_OK; SLEAPC_ERR_IO /
 * SLEAPC_ERR_FORMAT reading a file; SLEAPC_ERR_INVALID_ARG for bad options,
 * skeletons OKS cannot compare, or no frame in common ("Empty Frame Pairs"),
 * naming what does not match; SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_eval_run(const char *gt_path, const char *pred_path,
                                         const sleapc_eval_opts *opts, sleapc_eval **out);

/* false when the predictions hold no instance: sleap-nn then computes no
 * metrics (and writes none). */
SLEAPC_API bool sleapc_eval_has_metrics(const sleapc_eval *ev);

/* sleap-nn's metrics dict as JSON (its keys and order; arrays as nested
 * lists; NaN and infinities as the strings "nan", "inf", "-inf"), or NULL
 * without metrics or memory. Owned by ev, valid until sleapc_eval_destroy. */
SLEAPC_API const char *sleapc_eval_metrics_json(sleapc_eval *ev);

/* A short summary table (text); owned by ev. NULL without memory. */
SLEAPC_API const char *sleapc_eval_summary(sleapc_eval *ev);

/* Write the metrics to path, atomically: ".json" as sleapc_eval_metrics_json;
 * any other name (".npz") as sleap-nn's np.savez_compressed(path,
 * metrics=...) plus the JSON beside it (same stem, ".json"). Nothing is
 * written without metrics. SLEAPC_ERR_IO naming the file; SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_eval_save(sleapc_eval *ev, const char *path);

/* Write a self-contained HTML page (no script, nothing fetched): the metrics,
 * the PCK curve, the OKS (centroid mode: distance) distribution and the
 * per-node errors as SVG, and the worst frames with ground truth and
 * prediction drawn over the image (when the video or embedded images can
 * be read). Atomic. SLEAPC_ERR_IO naming the file; SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_eval_report(sleapc_eval *ev, const char *html_path);

/* Free the result. Accepts NULL. */
SLEAPC_API void sleapc_eval_destroy(sleapc_eval *ev);

/* eval-tracking's options; sleapc_eval_tracking_opts_default() fills them.
 * compat chooses the scoring: sleap-nn 0.3.5's eval-tracking (default:
 * OKS matching on the whole skeleton, node by node, the legacy identity
 * block and the TrackEval `mot` block) or sleapc's earlier table for
 * SLEAPC_COMPAT_SLEAP_NN_0_3_3 (mean distance over the shared nodes, or OKS
 * with match "oks"). */
typedef struct sleapc_eval_tracking_opts {
    uint32_t struct_size;   /* sizeof(sleapc_eval_tracking_opts) */
    const char *match;      /* 0.3.3 only: "distance" (default: the mean distance over the
                               nodes both skeletons name) or "oks" */
    double match_threshold; /* NaN (default): 0.5 for OKS (pairs below never match), 50 px
                               for distance (one-node skeletons under 0.3.5) */
    double oks_stddev;      /* OKS spread per node (0.025) */
    sleapc_compat compat;   /* SLEAPC_COMPAT_DEFAULT: sleap-nn 0.3.5 */
    const char *carrier;    /* 0.3.5: "auto" (default), "pose" or "mask" (sleapc reads no
                               masks: nothing to score) */
    double mt_threshold;    /* 0.3.5 legacy block: coverage >= it is mostly tracked (0.8) */
    double ml_threshold;    /* 0.3.5 legacy block: coverage < it is mostly lost (0.2) */
    bool user_labels_only;  /* 0.3.5: drop every prediction from the ground truth (false) */
    bool global_identity;   /* 0.3.5: a trajectory is a track name across videos (false:
                               (video, track name)) */
} sleapc_eval_tracking_opts;

SLEAPC_API sleapc_eval_tracking_opts sleapc_eval_tracking_opts_default(void);

typedef struct sleapc_eval_tracking sleapc_eval_tracking;

/* Score the tracks of pred_path against those of gt_path (user instances
 * with a track): per frame, GT and predicted instances are paired by
 * minimum-cost assignment; CLEAR-MOT (MOTA, MOTP, ID switches,
 * fragmentations, mostly tracked / partly / mostly lost) and Ristani et
 * al.'s IDF1 / IDP / IDR follow. *out: new (sleapc_eval_tracking_destroy).
 * Returns SLEAPC_OK; reading errors; SLEAPC_ERR_INVALID_ARG when a file has
 * no tracks, the skeletons share no node name or no frame pairs up;
 * SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_eval_tracking_run(const char *gt_path, const char *pred_path,
                                                  const sleapc_eval_tracking_opts *opts,
                                                  sleapc_eval_tracking **out);

/* The figures as a JSON object; owned by et. NULL without memory. */
SLEAPC_API const char *sleapc_eval_tracking_json(sleapc_eval_tracking *et);

/* A short summary table (text); owned by et. NULL without memory. */
SLEAPC_API const char *sleapc_eval_tracking_summary(sleapc_eval_tracking *et);

/* Write the JSON to path, atomically. SLEAPC_ERR_IO naming the file. */
SLEAPC_API sleapc_status sleapc_eval_tracking_save(sleapc_eval_tracking *et, const char *path);

/* Write a self-contained HTML page: the figures and a timeline of the
 * identity each ground-truth track was given, frame by frame, with the ID
 * switches marked. Atomic. SLEAPC_ERR_IO naming the file; SLEAPC_ERR_NOMEM. */
SLEAPC_API sleapc_status sleapc_eval_tracking_report(sleapc_eval_tracking *et,
                                                     const char *html_path);

/* Free the result. Accepts NULL. */
SLEAPC_API void sleapc_eval_tracking_destroy(sleapc_eval_tracking *et);

#ifdef __cplusplus
}
#endif

#endif
