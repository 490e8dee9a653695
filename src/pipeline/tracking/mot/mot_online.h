/* A MOT tracker fed one frame at a time (sleap-nn's BaseMOTTracker.track
 * per frame, after prepare()). sleap-nn calibrates a video over all of its
 * frames before the first track() (stride, time base, body size, score
 * normalizer: mot_detect.h), so the calibration is an input here: the
 * tracks are then those of the whole-video run (mot_run.h without identity
 * linking), frame for frame. A frame's labels are final once no tentative
 * track holds one of its detections (a track labels its earlier detections
 * when it confirms); final frames are handed out oldest first and their
 * room is reused, so memory stays bounded by the pending frames. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_ONLINE_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_ONLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/tracking/mot/mot_detect.h"
#include "pipeline/tracking/mot/mot_params.h"

typedef struct mot_online mot_online;

/* A tracker for one video of n_nodes-node poses with re-ID vectors of
 * emb_dim values (0: none), calibrated with cal (copied); names (public ids) start at name_offset.
 * Identity linking is not run (it needs every tracklet: mot_link.h). SLEAPC_ERR_NOMEM,
 * SLEAPC_ERR_UNSUPPORTED (a tracker or setting sleapc does not run). */
sleapc_status sleapc__mot_online_create(const sleapc_mot_params *p, int n_nodes, int emb_dim,
                                        const mot_calibration *cal, int name_offset,
                                        mot_online **out);

/* Tracks the next frame (increasing frame index): n instances' points
 * (n x n_nodes x 2, NaN: missing), point scores (n x n_nodes; NULL: none),
 * instance scores (n) and re-ID vectors (n x emb_dim, NaN rows or NULL:
 * none), as a run stores them. SLEAPC_ERR_NOMEM; SLEAPC_ERR_INVALID_ARG on n <
 * 0. */
sleapc_status sleapc__mot_online_push(mot_online *o, int64_t frame_idx, const float *points,
                                      const float *point_scores, const float *scores,
                                      const float *emb, int n);

/* After the last frame: every pending frame becomes final. */
void sleapc__mot_online_finish(mot_online *o);

/* The oldest final frame not yet taken: false when none. *label: per
 * instance the public id + name_offset or -1 (untracked); *tscore: the
 * tracking score; both valid until the next push. */
bool sleapc__mot_online_take(mot_online *o, int64_t *frame_idx, int *n, const int **label,
                             const double **tscore);

/* 1 + the largest name minted so far, name_offset included (the next
 * video's name_offset). */
int sleapc__mot_online_next_name(const mot_online *o);

void sleapc__mot_online_destroy(mot_online *o);

#endif
