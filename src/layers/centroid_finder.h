/* The centroid stage shared by CentroidLayer and the top-down layers
 * (sleap-nn layers/centroid.py): local peaks of the centroid confidence map,
 * slotted per frame, in original-frame pixels, refined and rescaled as the
 * model's convention says (SLEAP 1.x's CentroidCrop in sleap/nn/inference.py:
 * SLEAP's refinement and "+ 0.5" after the input scale; its max_instances
 * top-k is the one here). */
#ifndef SLEAPC_LAYERS_CENTROID_FINDER_H
#define SLEAPC_LAYERS_CENTROID_FINDER_H

#include "layers/layer_outputs.h"
#include "layers/stage.h"
#include "sleapc/predictor.h"

typedef struct sleapc_centroid_finder {
    sleapc_stage stage;
    double threshold;
    int refine_k;
    int max_instances;        /* 0 = as many as the batch's busiest frame */
    int64_t cap;              /* capacity of the peak arrays */
    float *peaks;             /* (cap, 2) */
    float *vals;              /* (cap) */
    int32_t *sample_inds;     /* (cap) */
    int32_t *channel_inds;    /* (cap) */
    int64_t *order;           /* (cap) scratch for the top-k */
    int device;               /* the backend finds the peaks (stage_local_peaks.h):
                                 1 yes, -1 no, 0 not asked yet */
    int64_t channels;         /* the head's, for device */
} sleapc_centroid_finder;

sleapc_status sleapc__centroid_finder_init(sleapc_centroid_finder *f, const sleapc_model *m,
                                           const sleapc_predictor_opts *o, double threshold);
void sleapc__centroid_finder_free(sleapc_centroid_finder *f);

/* Find the centroids of b frames (b, c, h, w). out is reset to (b, I, n_nodes,
 * n_classes) with I the slot count, and its centroids, centroid_values and
 * eff_scale are filled (has_centroids set). */
sleapc_status sleapc__centroid_finder_run(sleapc_centroid_finder *f, const uint8_t *frames,
                                          int64_t b, int64_t c, int64_t h, int64_t w,
                                          int64_t n_nodes, int64_t n_classes,
                                          sleapc_layer_outputs *out);

/* The run's second half (its post-processing), on the stage's last run or
 * collected batch of b frames: centroid_finder_run is stage_run then this.
 * The backend has been asked for device peaks once f->device != 0. */
sleapc_status sleapc__centroid_finder_finish(sleapc_centroid_finder *f, int64_t b,
                                             int64_t n_nodes, int64_t n_classes,
                                             sleapc_layer_outputs *out);

#endif
