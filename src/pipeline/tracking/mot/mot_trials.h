/* The appearance trials of sleap-nn 0.3.5's calibration
 * (calibration.py _AnchorVectors, _anchor_vectors, _run_trials): along each
 * anchor tracklet, a query split off at a step is scored against the
 * anchor's own memory (running EMA and recent gallery, g steps earlier)
 * and against the memories of the anchors that overlap it in time, which
 * are other animals. */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_TRIALS_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_TRIALS_H

#include <stdbool.h>
#include <stdint.h>

#include "pipeline/tracking/mot/mot_motion.h"

/* The anchors' vectors grouped by anchor, in time order. */
typedef struct mot_anchor_vectors {
    int64_t n, n_anchors, dim;
    float *vec, *ema;    /* (n, dim): the vectors and each one's running EMA */
    int64_t *step, *key; /* (n,): step; anchor * key_scale + step */
    int64_t key_scale;
    int64_t *off, *len; /* (n_anchors,) */
} mot_anchor_vectors;

/* From the flattened vectors vec / has of A's detections; the EMA runs
 * with momentum ema_alpha in float32 as AppearanceMemory would.
 * SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_anchor_vectors(const mot_anchors *A, const float *vec, const bool *has,
                                         int dim, double ema_alpha, mot_anchor_vectors *av);
void sleapc__mot_anchor_vectors_free(mot_anchor_vectors *av);

/* The statistics of one gap's trials, true track first; competitors of
 * trial t at [comp_off[t], comp_off[t + 1]). *_link_n: query_len columns,
 * the linking statistic of the first n + 1 query vectors at column n. */
typedef struct mot_trials {
    int64_t n, cap, comp_cap;
    int query_len;
    double *true_ema, *true_gal, *lag1, *true_link_n;
    int64_t *comp_off;
    double *comp_ema, *comp_gal, *comp_link_n;
} mot_trials;

/* _run_trials at gap steps: gallery_size, query_len, at most max_trials
 * (subsampled as default_rng((seed, gap)).choice does).
 * SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__mot_run_trials(const mot_anchor_vectors *av, int64_t gap, int gallery_size,
                                     int query_len, int64_t max_trials, uint32_t seed,
                                     mot_trials *out);
void sleapc__mot_trials_free(mot_trials *t);

#endif
