/* The pieces of sleap-nn 0.3.5's eval-tracking that both blocks share: the
 * frame alignment (_align_identity_frames), the ground truth each frame
 * scores (_ground_truth_keep) and the similarity of its poses
 * (_pose_similarity, or centroid distance for one-node skeletons). */
#ifndef SLEAPC_PIPELINE_EVAL_EVAL_IDENTITY_FRAMES_H
#define SLEAPC_PIPELINE_EVAL_EVAL_IDENTITY_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/eval/eval_labels.h"

/* The scored ground-truth frames, in sleap-nn's order (video key, frame). */
typedef struct sleapc_id_align {
    int64_t n;
    int64_t *gt_frame, *pr_frame; /* [n]; pr_frame -1: the prediction lacks the frame */
    const char **video;           /* [n]: the frame's video key ("" when aligned on frame only) */
    int n_videos;                 /* videos scored */
    bool frame_only;              /* aligned on frame_idx alone (one video each side) */
    int64_t n_unscored_videos;    /* GT videos sharing no frame with the prediction */
} sleapc_id_align;

sleapc_status sleapc__id_align(const sleapc_ev_labels *gt, const sleapc_ev_labels *pr,
                               sleapc_id_align *out);
void sleapc__id_align_free(sleapc_id_align *a);

/* GT instances of frame f to score, in file order: every one but the
 * predictions a user label on the frame replaces, or user instances only.
 * keep: room for the frame's instances; returns how many, and *n_superseded. */
int64_t sleapc__id_gt_keep(const sleapc_ev_labels *gt, int64_t f, bool user_labels_only,
                           int64_t *keep, int64_t *n_superseded);

/* OKS of GT instances g[0..ng) against predictions p[0..np) (row-major
 * ng x np), a GT whose visible box has no area scored by mean distance
 * (1 - d / 50 px). NaN where OKS is (no visible GT node). Fails, naming the
 * file, when the node counts differ (sleap-nn's reshape error). */
sleapc_status sleapc__id_pose_similarity(const sleapc_ev_labels *gt, const int64_t *g, int64_t ng,
                                         const sleapc_ev_labels *pr, const int64_t *p, int64_t np,
                                         double stddev, double *sim);

/* The NaN-ignoring mean of an instance's nodes, per axis. */
void sleapc__id_centroid(const sleapc_ev_labels *l, int64_t inst, double c[2]);

#endif
