/* The top-down layer's state, shared by its stage 1 and layer ops
 * (topdown.c) and its stage 2, the crops through the centered-instance
 * model (topdown_crops.c). Private to those two files. */
#ifndef SLEAPC_LAYERS_TOPDOWN_IMPL_H
#define SLEAPC_LAYERS_TOPDOWN_IMPL_H

#include "layers/box_finder.h"
#include "layers/centroid_finder.h"
#include "layers/centroid_given.h"
#include "layers/layer.h"
#include "layers/ops/crops_bbox.h"
#include "layers/topdown_classes.h"

typedef struct topdown_layer {
    sleapc_layer base;
    sleapc_centroid_finder finder;
    bool given; /* stage 1 is gc: no centroid model */
    sleapc_centroid_given gc;
    /* A box detector as stage 1 instead (BBoxStageLayer): crops on the box
     * centres, or each box resized to the crop (crop_mode: bbox). */
    bool box_stage;
    sleapc_box_finder boxes;
    bool bbox_crop;
    sleapc_bbox_aspect bbox_aspect;
    double bbox_padding, bbox_min_size;
    int64_t crop_max_h, crop_max_w; /* the crop model's size matcher (crop_max_hw) */
    sleapc_stage ci;                /* stage 2 */
    bool multiclass;
    bool ci_device_peaks; /* stage 2's backend finds its peaks (backend.h) */
    bool ci_asked;        /* ci_device_peaks was asked for (once stage 2 may) */
    int64_t n_nodes, n_classes;
    int64_t crop_size;
    bool first_box_size; /* sleap-nn 0.3.3: a batch's crops take its first box's size */
    int64_t max_crops;   /* crops per stage-2 network call (--batch_size) */
    double threshold;    /* stage-2 peak threshold */
    int refine_k;
    /* The crop source: frames size-matched as the centroid stage's convention says. */
    sleapc_preprocess_plan sized_plan;
    /* Buffers that grow with the batch; reused across batches. */
    uint8_t *sized;
    size_t sized_cap;
    void *scratch;
    size_t scratch_cap;
    uint8_t *crops;
    size_t crops_cap;
    void *crop_scratch; /* the cropper's (SLEAP 1.x: float crops) */
    size_t crop_scratch_cap;
    /* Per crop: */
    float *centers, *bboxes, *peaks, *vals; /* sized-image centre, box, crop-local peaks */
    float *lifted, *offsets, *cent_xy, *cent_val, *crop_prob;
    float *vecs;                                     /* class vectors (multi-class) */
    float *box_xyxy, *windows, *wscales, *keep_half; /* box crops: sized box, window */
    int32_t *crop_sample;
    int64_t *crop_frame, *crop_slot, *crop_class, *class_inds;
    int64_t *crop_origin; /* (n, 2): crops cut on the device */
    size_t per_crop_cap;  /* crops the per-crop arrays hold */
    size_t class_inds_cap;
    sleapc_identity_ws ws; /* class assignment scratch */
} topdown_layer;

/* The size-matched frames crops are cut from. */
typedef struct sized_frames {
    const uint8_t *data;
    int64_t c, h, w;
} sized_frames;

/* A batch's crop source: its frames, size-matched on the host only when
 * stage 2's device does not do it. */
typedef struct crop_source {
    const uint8_t *frames;
    int64_t b, c, h, w;
    sized_frames sf;                      /* data NULL until size_match makes it */
    bool device;                          /* stage 2 cuts its crops on its device from... */
    const sleapc_preprocess_plan *on_dev; /* ...the frames, size-matched there by this
                                             plan; NULL: from sf */
} crop_source;

/* Grows *p (aligned) to need bytes. SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__topdown_grow_bytes(void **p, size_t *cap, size_t need);

/* Grows the per-crop arrays to n_crops crops. SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__topdown_grow_per_crop(topdown_layer *t, int64_t n_crops);

/* Stage 1's plan for the batch's frames: the centroid model's, the box
 * detector's, or the given centroids'. */
const sleapc_preprocess_plan *sleapc__topdown_src_stage_plan(const topdown_layer *t);

/* The crop source's plan (frames size-matched as stage 1's convention cuts
 * crops from them) into t->sized_plan. */
sleapc_status sleapc__topdown_source_plan(topdown_layer *t);

/* Boxes, crop size (*ch, *cw) and lift offsets of all n crops. */
sleapc_status sleapc__topdown_plan_crops(topdown_layer *t, int64_t n, int64_t *ch, int64_t *cw);

/* Uploads the batch's crop source to stage 2's device when its crops can be
 * cut there; cs->device says whether they will be. */
sleapc_status sleapc__topdown_crops_on_device(topdown_layer *t, crop_source *cs);

/* Crops k0 .. k0 + m - 1 cut (on the device or the host) and through stage 2. */
sleapc_status sleapc__topdown_stage2_chunk(topdown_layer *t, crop_source *cs, int64_t k0, int64_t m,
                                           int64_t ch, int64_t cw);

/* All n crops through stage 2, at most t->max_crops a call; keypoints lifted
 * into original-frame pixels in t->lifted, boxes as corners in t->bboxes. */
sleapc_status sleapc__topdown_run_crops(topdown_layer *t, crop_source *cs, int64_t n,
                                        const float *eff_scale);

#endif
