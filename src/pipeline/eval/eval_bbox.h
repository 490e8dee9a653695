/* Box detection metrics as sleap-nn 0.3.5 computes them for its bbox_*
 * models (sleap_nn/evaluation.py: compute_bbox_metrics, _ap_from_pr,
 * _greedy_match_bboxes, bbox_iou_matrix): COCO box AP over IoU
 * 0.50:0.05:0.95, per class, and the IoU-0.5 operating point at the
 * F1-maximizing score threshold. Boxes are xyxy float64 pixels. */
#ifndef SLEAPC_PIPELINE_EVAL_EVAL_BBOX_H
#define SLEAPC_PIPELINE_EVAL_EVAL_BBOX_H

#include <stdint.h>

#include "io/pyobj/pyobj.h"
#include "pipeline/eval/evaluation.h"

/* One evaluated frame: its GT boxes and its predictions (any order). */
typedef struct sleapc_ev_bbox_frame {
    int64_t n_gt, n_pred;
    const double *gt;    /* [n_gt * 4] */
    const int *gt_cls;   /* [n_gt] */
    const double *pred;  /* [n_pred * 4] */
    const double *score; /* [n_pred] */
    const int *pred_cls; /* [n_pred] */
} sleapc_ev_bbox_frame;

/* bbox_iou_matrix: out[i * m + j] = IoU of a[i] and b[j] (0 where the union
 * is not positive). */
void sleapc__ev_bbox_iou(const double *a, int64_t n, const double *b, int64_t m, double *out);

/* _greedy_match_bboxes: detections (rows, in score order) take the unmatched
 * GT (columns) of highest IoU >= thr. gt_idx[d] = -1 for a false positive;
 * m_iou[d] the IoU of the match (0 unmatched); taken: scratch [n_gt]. */
void sleapc__ev_bbox_greedy(const double *iou, int64_t n_det, int64_t n_gt, double thr,
                            int64_t *gt_idx, double *m_iou, uint8_t *taken);

/* _ap_from_pr with the 101-point recall grid: AP (NaN when npig <= 0, 0 with
 * no detections) and *max_recall (NaN, 0 likewise). Scratch: order [2n],
 * work [2n]. */
double sleapc__ev_bbox_ap(const double *scores, const uint8_t *is_tp, int64_t n, int64_t npig,
                          double *max_recall, int64_t *order, double *work);

/* np.argsort(-key, kind="mergesort") into idx (stable, descending); tmp [n]. */
void sleapc__ev_bbox_argsort_desc(const double *key, int64_t n, int64_t *idx, int64_t *tmp);

/* compute_bbox_metrics(frames, num_classes=n_classes) plus "categories":
 * sleap-nn's dict, keys and Python types as it returns them. *out new. */
sleapc_status sleapc__ev_bbox_metrics(const sleapc_ev_bbox_frame *frames, int64_t n_frames,
                                      int n_classes, const char *const *categories,
                                      sleapc_pyobj **out);

/* A ground-truth box of bbox mode: xyxy (a rotated box's extent). */
typedef struct sleapc_ev_gt_box {
    int64_t frame; /* index into the GT's frames */
    double xyxy[4];
    int category; /* into the GT's box_categories; -1 = "object" */
} sleapc_ev_gt_box;

/* sleap-nn add_bboxes_to_labels + frame_user_bboxes on gt: the usable user
 * boxes of its frames (not predicted, no NaN corner, positive width and
 * height), in frame order, either the file's (bboxes) or derived from each
 * user instance with a visible point (instances: the visible points'
 * extent, padded; kept when usable). *source gets the resolved source's
 * name. Masks (asked for, or auto's last resort) are SLEAPC_ERR_INVALID_ARG
 * naming the file: sleapc reads none. *out new ([*n]). */
sleapc_status sleapc__ev_bbox_gt(const sleapc_ev_labels *gt, sleapc_ev_box_source src,
                                 double padding, sleapc_ev_gt_box **out, int64_t *n,
                                 const char **source);

/* BoundingBox.bounds: a box's axis-aligned extent. */
void sleapc__ev_box_bounds(const sleapc_ev_box *b, double xyxy[4]);

#endif
