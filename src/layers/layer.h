/* A layer is one model type's inference logic (sleap-nn inference/layers/):
 * preprocessing, one or two backend forwards, and post-processing into
 * sleap-nn's Outputs. Layers reach backends only through the contract. */
#ifndef SLEAPC_LAYERS_LAYER_H
#define SLEAPC_LAYERS_LAYER_H

#include "layers/layer_outputs.h"
#include "layers/ops/preprocess.h"
#include "model/model_impl.h"
#include "sleapc/predictor.h"

typedef struct sleapc_layer sleapc_layer;

struct sleapc_layer_ops {
    const char *name;  /* sleap-nn's class name: "SingleInstanceLayer", ... */
    /* frames: (b, c, h, w) uint8, one size. out: reset and filled. */
    sleapc_status (*run)(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c, int64_t h,
                         int64_t w, sleapc_layer_outputs *out);
    void (*destroy)(sleapc_layer *l);
    /* Optional. After a run on the blank frames (b, c, h, w), build what that
     * run did not reach (a stage that only runs when something is found), with
     * room for `instances` instances a frame. */
    sleapc_status (*warmup)(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                            int64_t h, int64_t w, int64_t instances);
    /* What each network stage runs on now (at most 2): the count filled. */
    int (*stages)(const sleapc_layer *l, sleapc_stage_info *out);
    /* Optional, all four or none: run in steps, so that the device runs
     * the next batch's forward while the host finishes this one (the
     * sleapc__layer_begin ... helpers below drive them). stage: the one
     * network stage batches are begun on. asked: the layer has asked its
     * backend for what it asks once (device peaks: asking replans, which a
     * batch in flight forbids). collect: wait for the oldest begun batch of
     * b frames and do what needs the device (device PAF scores); finish:
     * the rest, into out, as run would. */
    struct sleapc_stage *(*stage)(sleapc_layer *l);
    bool (*asked)(const sleapc_layer *l);
    sleapc_status (*collect)(sleapc_layer *l, int64_t b);
    sleapc_status (*finish)(sleapc_layer *l, int64_t b, sleapc_layer_outputs *out);
    /* Optional: the instances of the next run's b frames, points (b, slots,
     * n_nodes, 2) in frame pixels (NaN: missing), for a layer whose crops
     * are made around them (a top-down layer without a centroid model). */
    sleapc_status (*given_instances)(sleapc_layer *l, const float *points, int64_t b,
                                     int64_t slots, int64_t n_nodes);
};

struct sleapc_layer {
    const struct sleapc_layer_ops *ops;
    void *impl;
};

/* Pick and build the layer for the models, as sleap-nn's predictor does
 * (_select_layer): one model of a single-stage type, or a centroid model plus
 * a centered_instance / multi_class_topdown model (any order). The models are
 * borrowed and must outlive the layer. */
sleapc_status sleapc__layer_create(sleapc_model *const *models, int n_models,
                                   const sleapc_predictor_opts *opts, sleapc_layer **out);
void sleapc__layer_destroy(sleapc_layer *l);

/* Constructors, one per file. */
sleapc_status sleapc__single_instance_layer_create(const sleapc_model *m,
                                                   const sleapc_predictor_opts *o,
                                                   sleapc_layer **out);
/* A single-instance model whose config enables tiling (tiled.c). */
sleapc_status sleapc__tiled_layer_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                         sleapc_layer **out);
sleapc_status sleapc__centroid_layer_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                            sleapc_layer **out);
sleapc_status sleapc__centered_instance_layer_create(const sleapc_model *m,
                                                     const sleapc_predictor_opts *o,
                                                     sleapc_layer **out);
/* centroid NULL: stage 1 makes the centroids of the instances given before
 * each run (layer_given_instances; sleap-nn's use_gt_centroids). */
sleapc_status sleapc__topdown_layer_create(const sleapc_model *centroid, const sleapc_model *ci,
                                           const sleapc_predictor_opts *o, sleapc_layer **out);
sleapc_status sleapc__bottomup_layer_create(const sleapc_model *m, const sleapc_predictor_opts *o,
                                            sleapc_layer **out);
sleapc_status sleapc__bottomup_multiclass_layer_create(const sleapc_model *m,
                                                       const sleapc_predictor_opts *o,
                                                       sleapc_layer **out);

/* A run in steps (the ops' stage, asked, collect and finish): run(k) gives
 * what begin(k), collect(k), finish(k) give, and begin(k + 1) may come
 * between collect(k) and finish(k), with frames of the same size. */
/* Whether l runs in steps on its backend (submit/collect, overlap on). */
bool sleapc__layer_can_overlap(sleapc_layer *l);
/* Whether a batch of (c, h, w) frames may be begun now. */
bool sleapc__layer_can_begin(sleapc_layer *l, int64_t c, int64_t h, int64_t w);
/* Preprocess and submit b frames (b, c, h, w), not kept. */
sleapc_status sleapc__layer_begin(sleapc_layer *l, const uint8_t *frames, int64_t b, int64_t c,
                                  int64_t h, int64_t w);
sleapc_status sleapc__layer_collect(sleapc_layer *l, int64_t b);
sleapc_status sleapc__layer_finish(sleapc_layer *l, int64_t b, sleapc_layer_outputs *out);
/* Drop the begun batches still on the device (an error or a stop). */
void sleapc__layer_drop(sleapc_layer *l);

/* The next run's instances (the op given_instances);
 * SLEAPC_ERR_UNSUPPORTED when the layer takes none. */
sleapc_status sleapc__layer_given_instances(sleapc_layer *l, const float *points, int64_t b,
                                            int64_t slots, int64_t n_nodes);

/* Shared helpers (layer.c). */

/* The preprocessing a model's layer applies: options override the config
 * (sleap-nn _resolve_preprocess_config). full = false gives only the input
 * scale and stride pad (stage 2 of top-down). The model's convention decides
 * (convention.h: SLEAP 1.x models get SLEAP's choices). */
sleapc_preprocess_opts sleapc__layer_preprocess_opts(const sleapc_model *m,
                                                     const sleapc_predictor_opts *o, bool full);
/* Integral refinement patch side, 0 for none. */
int sleapc__layer_refine_k(const sleapc_predictor_opts *o);

#endif
