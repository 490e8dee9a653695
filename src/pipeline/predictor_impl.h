/* The predictor: models + layer + batching + packaging of instances (sleap-nn
 * inference/predictor.py and outputs.py). */
#ifndef SLEAPC_PIPELINE_PREDICTOR_IMPL_H
#define SLEAPC_PIPELINE_PREDICTOR_IMPL_H

#include "core/results.h"
#include "layers/layer.h"
#include "sleapc/predictor.h"

struct sleapc_predictor {
    sleapc_predictor_opts opts;
    sleapc_model *models[2];
    int n_models;
    bool owns_models;            /* false: borrowed from the caller (create_from_models) */
    bool warming;                /* sleapc__predictor_warmup: never aborted */
    const sleapc_model *pose;    /* the model whose skeleton instances use */
    sleapc_layer *layer;
    sleapc_layer_outputs outputs;
    int64_t n_nodes;
    uint8_t *batch;              /* (batch_size, C, H, W) */
    size_t batch_cap;
    /* The instances of the last run: frames in order, video and frame_idx
     * unset (the writer assigns them). */
    sleapc_predictions results;
    sleapc_predictor_stats stats;
    char device[16];             /* opts.device's copy */
};

/* The bodies of the public predictor functions (include/sleapc/predictor.h
 * documents them); p and out are never NULL here, the public functions check. */
sleapc_predictor_opts sleapc__predictor_opts_default(void);
sleapc_status sleapc__predictor_create(const char *const *model_paths, int n_models,
                                       const sleapc_predictor_opts *opts, sleapc_predictor **out);
/* models are borrowed: only read, never freed by the predictor. */
sleapc_status sleapc__predictor_create_from_models(sleapc_model *const *models, int n_models,
                                                   const sleapc_predictor_opts *opts,
                                                   sleapc_predictor **out);
void sleapc__predictor_destroy(sleapc_predictor *p);
sleapc_status sleapc__predictor_warmup(sleapc_predictor *p, int64_t n, int64_t h, int64_t w,
                                       int64_t c);
/* True when the caller's abort callback asks to stop now. */
bool sleapc__predictor_should_abort(sleapc_predictor *p);
/* frames: n uint8 frames, (h, w, c) each, or with chw already in the
 * network's input layout (c, h, w), which the layer then reads in place;
 * sizes are checked here. */
sleapc_status sleapc__predictor_run(sleapc_predictor *p, const uint8_t *frames, bool chw, int64_t n,
                                    int64_t h, int64_t w, int64_t c);
const char *sleapc__predictor_layer_name(const sleapc_predictor *p);
const char *sleapc__predictor_skeleton_name(const sleapc_predictor *p);
int sleapc__predictor_n_nodes(const sleapc_predictor *p);
/* What each network stage runs on now (at most 2): the count filled. */
int sleapc__predictor_stages(const sleapc_predictor *p, sleapc_stage_info out[2]);
const char *sleapc__predictor_node_name(const sleapc_predictor *p, int i);
int sleapc__predictor_n_edges(const sleapc_predictor *p);
void sleapc__predictor_edge(const sleapc_predictor *p, int i, int *src, int *dst);
int sleapc__predictor_n_symmetries(const sleapc_predictor *p);
void sleapc__predictor_symmetry(const sleapc_predictor *p, int i, int *a, int *b);
int sleapc__predictor_n_classes(const sleapc_predictor *p);
const char *sleapc__predictor_class_name(const sleapc_predictor *p, int i);
int sleapc__predictor_batch_size(const sleapc_predictor *p);
sleapc_predictor_stats sleapc__predictor_get_stats(const sleapc_predictor *p);
void sleapc__predictor_reset_stats(sleapc_predictor *p);
int sleapc__predictor_n_frames(const sleapc_predictor *p);
/* One predicted instance, owned by the predictor, valid until the next run. */
typedef struct sleapc_instance {
    const float *points;        /* n_nodes (x, y) pairs; NaN = missing */
    const float *point_scores;  /* n_nodes; NaN = missing */
    float score;                /* instance score (sleap-nn's, per model type) */
    int track;                  /* class index for multi-class models, else -1 */
    float tracking_score;       /* NaN when none */
    bool has_centroid;          /* top-down: the centroid it was found from */
    float centroid[2];
    float centroid_score;
} sleapc_instance;
int sleapc__predictor_n_instances(const sleapc_predictor *p, int frame);
sleapc_status sleapc__predictor_instance(const sleapc_predictor *p, int frame, int i,
                                         sleapc_instance *out);


/* Append one layer batch to p->results (outputs.py to_labels). */
sleapc_status sleapc__predictor_pack(sleapc_predictor *p, const sleapc_layer_outputs *o);

#endif
