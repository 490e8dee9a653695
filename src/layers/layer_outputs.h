/* What a layer returns for a batch of frames, mirroring sleap-nn's Outputs
 * (inference/outputs.py): fixed-size slot arrays, NaN for missing points and
 * empty slots. Arrays are reused across batches (they only grow), so a steady
 * run allocates nothing per batch. */
#ifndef SLEAPC_LAYERS_LAYER_OUTPUTS_H
#define SLEAPC_LAYERS_LAYER_OUTPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "layers/ops/bbox_decode.h"
#include "sleapc/sleapc.h"

typedef struct sleapc_layer_outputs {
    int64_t n_frames;        /* B */
    int64_t n_slots;         /* I: instance slots per frame */
    int64_t n_nodes;         /* N */
    int64_t n_classes;       /* C: classes (multi-class layers), else 0 */

    float *keypoints;        /* (B,I,N,2) original-frame (x, y); NaN missing */
    float *peak_values;      /* (B,I,N); NaN for empty slots */
    float *instance_scores;  /* (B,I); valid when has_instance_scores */
    float *centroids;        /* (B,I,2); valid when has_centroids */
    float *centroid_values;  /* (B,I) */
    float *crop_keypoints;   /* (B,I,N,2) crop-local; valid when has_crops */
    float *bboxes;           /* (B,I,4,2) original-frame crop boxes */
    float *tracking_scores;  /* (B,I); valid when has_classes */
    int32_t *class_inds;     /* (B,I); -1 = no class */
    float *class_vectors;    /* (B,I,C); valid when has_class_vectors */
    float *eff_scale;        /* (B) size-matcher scale of each frame */

    bool has_instance_scores;
    bool has_centroids;
    bool has_crops;
    bool has_classes;
    bool has_class_vectors;
    bool centroid_only;      /* standalone centroid model: keypoints hold the centroid */

    size_t cap_bytes[11];    /* allocated size of each array above, in order */

    /* Box detectors (layers/bbox.c): frame k's boxes are the first
     * n_boxes[k] of boxes + k * box_slots, in frame pixels, by descending
     * score. Sized by sleapc__layer_outputs_reset_boxes only. */
    sleapc_box *boxes;
    int32_t *n_boxes;        /* (B) */
    int64_t box_slots;
    bool has_boxes;
    size_t box_cap_bytes[2];
} sleapc_layer_outputs;

/* Size the arrays for (B, I, N, C) and reset them: coordinates, values and
 * scores NaN, class indices -1, every has_* flag false. Grows arrays only when
 * needed. */
sleapc_status sleapc__layer_outputs_reset(sleapc_layer_outputs *o, int64_t b, int64_t i,
                                          int64_t n, int64_t c);
void sleapc__layer_outputs_free(sleapc_layer_outputs *o);

/* Size the box arrays for b frames of up to slots boxes each, with no box
 * in any frame, and set has_boxes. Grows arrays only when needed. */
sleapc_status sleapc__layer_outputs_reset_boxes(sleapc_layer_outputs *o, int64_t b,
                                                int64_t slots);
/* Frame k's boxes (frame pixels, by descending score) in *boxes: their
 * count, 0 when the outputs hold no boxes or no frame k. */
int sleapc__layer_outputs_frame_boxes(const sleapc_layer_outputs *o, int64_t k,
                                      const sleapc_box **boxes);

#endif
