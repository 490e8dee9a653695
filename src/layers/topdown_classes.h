/* Where the crops of one top-down batch land in the outputs: one slot per
 * centroid (TopDownLayer), or, multi-class, the class assignment of each
 * convention: sleap-nn's TopDownMultiClassLayer (classes scattered into the
 * centroid slots) or SLEAP 1.x's TopDownMultiClassFindPeaks and
 * TopDownMultiClassPredictor (one slot per class). */
#ifndef SLEAPC_LAYERS_TOPDOWN_CLASSES_H
#define SLEAPC_LAYERS_TOPDOWN_CLASSES_H

#include <stdint.h>

#include "layers/layer_outputs.h"
#include "layers/ops/identity.h"

/* The crops of a batch, row-major over (frame, centroid slot); the arrays
 * are the top-down layer's. */
typedef struct sleapc_topdown_batch {
    int64_t n_crops;
    int64_t n_frames, n_slots;   /* the centroid stage's slots a frame */
    int64_t n_nodes, n_classes;
    float eff_scale;             /* the batch's size-matcher scale */
    const float *peaks;          /* (n_crops, n_nodes, 2) crop-local keypoints */
    const float *lifted;         /* (n_crops, n_nodes, 2) keypoints in frame pixels */
    const float *vals;           /* (n_crops, n_nodes) */
    const float *bboxes;         /* (n_crops, 4, 2) corners in frame pixels */
    const float *cent_xy;        /* (n_crops, 2) the crop's centroid */
    const float *cent_val;       /* (n_crops) */
    const float *vecs;           /* (n_crops, n_classes) class vectors (multi-class) */
    const int64_t *crop_frame;   /* (n_crops) */
    const int64_t *crop_slot;    /* (n_crops) */
    int64_t *crop_class;         /* (n_crops) scratch */
    float *crop_prob;            /* (n_crops) scratch */
    int64_t *class_inds;         /* (n_frames, n_slots, n_nodes) scratch */
} sleapc_topdown_batch;

/* Crop k into centroid slot (frame, slot) of out, which the centroid stage
 * sized (TopDownLayer). */
void sleapc__topdown_place(const sleapc_topdown_batch *tb, sleapc_layer_outputs *out);

/* sleap-nn's multi-class top-down: the crops placed as above, then each
 * frame's crops assigned to classes (sleapc__identity_topdown_assign). */
sleapc_status sleapc__topdown_classes(const sleapc_topdown_batch *tb, sleapc_identity_ws *ws,
                                      sleapc_layer_outputs *out);

/* SLEAP 1.x's: out reset to one slot per class; see topdown_classes.c. */
sleapc_status sleapc__topdown_classes_sleap1(const sleapc_topdown_batch *tb,
                                             sleapc_identity_ws *ws, sleapc_layer_outputs *out);

#endif
