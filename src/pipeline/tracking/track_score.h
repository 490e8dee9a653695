/* Features and similarities of sleap-nn's tracking/utils.py and
 * evaluation.py:compute_oks, in float64 with numpy's order of operations
 * (near-zero OKS values decide matches, so the arithmetic must agree). */
#ifndef SLEAPC_PIPELINE_TRACKING_TRACK_SCORE_H
#define SLEAPC_PIPELINE_TRACKING_TRACK_SCORE_H

#include <stdint.h>

#include "pipeline/tracking/tracker.h"

/* numpy's add.reduce of a contiguous float64 vector (pairwise summation). */
double sleapc__np_sum(const double *a, int64_t n);

/* Nodes whose x and y are both present (count_valid_points). */
int sleapc__track_valid_points(const double *pts, int n_nodes);

/* Doubles in one feature: keypoints n_nodes*2, centroids 2, bboxes 4. */
int sleapc__track_feature_dim(sleapc_track_features f, int n_nodes);

/* The feature of one instance's points (n_nodes, 2) into dst. work: n_nodes
 * doubles of scratch for centroids (NULL for the other features). */
void sleapc__track_feature(sleapc_track_features f, const double *pts, int n_nodes, double *dst,
                           double *work);

/* Values one similarity produces: 4 for 0.3.3's cosine_sim on 2-node
 * keypoints (a matrix product in sleap-nn 0.3.3), else 1. */
int sleapc__track_score_width(const sleapc_tracker_opts *o, int n_nodes);

/* Similarity of the current instance's feature a and a candidate's b, into
 * dst (score_width values). work: n_nodes doubles of scratch (OKS sums its
 * per-node terms as numpy does, pairwise, so they are kept). */
void sleapc__track_similarity(const sleapc_tracker_opts *o, int n_nodes, const double *a,
                              const double *b, double *dst, double *work);

/* The configured NaN-ignoring reduction of v[0..n) (NaN when n is 0 or all
 * are NaN). v is reordered. */
double sleapc__track_reduce(const sleapc_tracker_opts *o, double *v, int64_t n);

#endif
