/* Similarities and assignment of sleap-nn's MOT trackers
 * (tracking/mot/association.py): IoU matrices, the one-to-one shortcut,
 * the capped and the masked assignments (scipy's linear_sum_assignment,
 * reproduced by layers/ops/hungarian), OC-SORT's momentum term and
 * ByteTrack's shared-node IoU. Matrices are row-major (rows: tracks). */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_ASSOC_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_ASSOC_H

#include <stdbool.h>
#include <stdint.h>

#include "layers/ops/hungarian.h"
#include "pipeline/tracking/mot/mot_scratch.h"
#include "sleapc/sleapc.h"

/* out[i * m + j] = IoU of xyxy boxes a[i] and b[j]; a box with a non-finite
 * coordinate, or an empty union, scores 0. */
void sleapc__mot_iou(const double *a, int n, const double *b, int m, double *out);

/* NaN -> 0, clipped to [0, 1], columns of invalid detections 0. */
void sleapc__mot_finish_sim(double *sim, int n, int m, const bool *det_valid);

/* The admissible pairs when every row and column holds at most one (and
 * there is one at all): true with them in rows/cols (row-major order),
 * else false. */
bool sleapc__mot_one_to_one(const bool *valid, int n, int m, int *rows, int *cols, int *n_pairs);

/* Minimum-cost pairs with cost <= max_cost (non-finite or above: never
 * matched; priced max_cost + 1e-5 for the solver). Pairs sorted by row. */
sleapc_status sleapc__mot_assign_capped(const double *cost, int n, int m, double max_cost,
                                        sleapc_hungarian_ws *ws, mot_scratch *tmp, int *rows,
                                        int *cols, int *n_pairs);

/* Maximum-score assignment over the whole matrix, then the pairs that are
 * not valid dropped (OC-SORT). Pairs sorted by row. */
sleapc_status sleapc__mot_assign_masked(const double *score, const bool *valid, int n, int m,
                                        sleapc_hungarian_ws *ws, mot_scratch *tmp, int *rows,
                                        int *cols, int *n_pairs);

/* Unit (dy, dx) from the center of prev to the center of cur; (0, 0) for
 * no motion or non-finite boxes. */
void sleapc__mot_speed_direction(const double prev[4], const double cur[4], double dir[2]);

/* OC-SORT momentum: inertia * ((pi/2 - angle) / pi) * score, the angle
 * between track i's direction and the direction from its earlier
 * observation prev[i] to detection j; 0 for tracks without a direction. */
void sleapc__mot_ocm(const double *dirs, const double *prev, const bool *has_dir, int n,
                     const double *det_boxes, const double *det_scores, int m, double inertia,
                     double *out);

/* ByteTrack's IoU of the padded boxes of the nodes visible in both track
 * pose i and detection pose j ((n|m, k, 2), NaN = missing); NaN where fewer
 * than 2 nodes are shared or their extent is too thin. min_box_size <= 0 or
 * NaN: no floor. */
void sleapc__mot_shared_node_iou(const double *trk, int n, const double *det, int m, int k,
                                 double box_padding, double min_box_size, double *out);

#endif
