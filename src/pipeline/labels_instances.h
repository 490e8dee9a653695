/* The user instances of a labels file's frames as points, the ground truth
 * sleap-nn 0.3.5 crops around when a centered-instance model runs alone
 * (LabelsProvider with only_labeled_frames: user instances only,
 * Instance.numpy(): an invisible node is NaN). */
#ifndef SLEAPC_PIPELINE_LABELS_INSTANCES_H
#define SLEAPC_PIPELINE_LABELS_INSTANCES_H

#include <stddef.h>

#include "io/slp/slp_read.h"

/* Whether frame idx of video has at least one user instance. */
bool sleapc__labels_has_user(const sleapc_slp *r, int video, int64_t idx);

/* The user instances of frames idx[0..n) of video, in file order, into *buf
 * (grown as needed; *cap floats): (n, *slots, *n_nodes, 2), NaN-padded;
 * *slots is the busiest frame's count (0 when none has any). */
sleapc_status sleapc__labels_user_points(const sleapc_slp *r, int video, const int64_t *idx,
                                         int64_t n, float **buf, size_t *cap, int64_t *slots,
                                         int64_t *n_nodes);

#endif
