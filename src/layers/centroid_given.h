/* A top-down stage 1 without a network (sleap-nn 0.3.5
 * CentroidLayer(use_gt_centroids=True), layers/centroid.py
 * _predict_from_gt): each frame's centroids are made from the instances the
 * caller gives for it (a labels file's user instances), by the rule of the
 * centered-instance model's config (anchor_part, centroid_method,
 * centroid_fallback), each with the value 1. Frames are size-matched as that
 * model's config says, at scale 1. */
#ifndef SLEAPC_LAYERS_CENTROID_GIVEN_H
#define SLEAPC_LAYERS_CENTROID_GIVEN_H

#include "layers/convention.h"
#include "layers/layer_outputs.h"
#include "layers/ops/instance_centroids.h"
#include "layers/ops/preprocess.h"
#include "model/model_impl.h"
#include "sleapc/predictor.h"

typedef struct sleapc_centroid_given {
    const sleapc_convention *convention; /* the centered-instance model's */
    sleapc_preprocess_opts pp;
    sleapc_preprocess_plan plan;         /* for the last frame size seen */
    bool have_plan;
    sleapc_centroid_rule rule;
    int max_instances;                   /* 0: every given instance */
    float *xy;                           /* (b, slots, 2) centroids of the next batch */
    size_t cap;                          /* floats xy holds */
    int64_t b, slots;                    /* b 0: none given for the next batch */
} sleapc_centroid_given;

sleapc_status sleapc__centroid_given_init(sleapc_centroid_given *g, const sleapc_model *ci,
                                          const sleapc_predictor_opts *o);
void sleapc__centroid_given_free(sleapc_centroid_given *g);

/* The next batch's instances: points (b, slots, n_nodes, 2) in frame pixels,
 * NaN for a missing node or an empty slot. */
sleapc_status sleapc__centroid_given_set(sleapc_centroid_given *g, const float *points, int64_t b,
                                         int64_t slots, int64_t n_nodes);

/* The plan of frames (c, h, w): its size matcher makes the crop source. */
sleapc_status sleapc__centroid_given_plan(sleapc_centroid_given *g, int64_t c, int64_t h,
                                          int64_t w);

/* As sleapc__centroid_finder_run: out reset to (b, I, n_nodes, n_classes)
 * with the given centroids in original-frame pixels, values 1 (NaN for an
 * empty slot) and eff_scale. The given instances are used once: a batch
 * without them is an error. */
sleapc_status sleapc__centroid_given_run(sleapc_centroid_given *g, int64_t b, int64_t c,
                                         int64_t h, int64_t w, int64_t n_nodes,
                                         int64_t n_classes, sleapc_layer_outputs *out);

#endif
