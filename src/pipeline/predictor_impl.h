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
    sleapc_layer *other;         /* the layer not in use (predictor_given.c), or NULL */
    bool given;                  /* layer crops around given instances */
    sleapc_layer_outputs outputs;
    int64_t n_nodes;
    uint8_t *batch;              /* (batch_size, C, H, W) */
    size_t batch_cap;
    /* The instances of the last run: frames in order, video and frame_idx
     * unset (the writer assigns them). */
    sleapc_predictions results;
    sleapc_predictor_stats stats;
    char device[16];             /* opts.device's copy */
    /* Batches begun on the device and not yet finished (predictor_overlap.c),
     * oldest first: their frame counts, whether the oldest is collected,
     * and their frames' size. */
    int64_t begun_n[2];
    int n_begun;
    bool oldest_collected;
    int64_t begun_h, begun_w, begun_c;
    int64_t overlapped;          /* batches begun while an earlier one was still to
                                    finish on the host (the overlap happened) */
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
/* Whether the multi-class head says class_output: identity. */
bool sleapc__predictor_class_identity(const sleapc_predictor *p);
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


/* ---- Overlap (predictor_overlap.c): a batch's forward runs on the device
 * while the host finishes the batch before it, on a layer and backend that
 * run in steps (layer.h); results equal predictor_run's, batch by batch,
 * in order. The caller: begin(k + 1), then finish(k) (k's instances in
 * p->results as predictor_run leaves them), for consecutive batches of one
 * size; a batch that cannot be begun is run after the begun ones are
 * finished. ----
 * Whether p may overlap at all (a reader keeps a frame buffer more). */
bool sleapc__predictor_can_overlap(sleapc_predictor *p);
/* Whether a batch of n frames (c, h, w) can be begun now. */
bool sleapc__predictor_can_begin(sleapc_predictor *p, int64_t n, int64_t h, int64_t w,
                                 int64_t c);
/* Begin n frames in the network's layout (c, h, w), not kept after the
 * call: the batch begun before it is collected first. */
sleapc_status sleapc__predictor_begin(sleapc_predictor *p, const uint8_t *frames, int64_t n,
                                      int64_t h, int64_t w, int64_t c);
/* Finish the oldest begun batch into p->results. */
sleapc_status sleapc__predictor_finish(sleapc_predictor *p);
/* Batches begun and not finished. */
int sleapc__predictor_n_begun(const sleapc_predictor *p);
/* Drop the begun batches (an error or a stop ends the run). */
void sleapc__predictor_drop(sleapc_predictor *p);

/* ---- Given instances (predictor_given.c): a lone centered-instance model
 * on a labels file crops around the labels' user instances, as sleap-nn
 * 0.3.5's top-down layer with CentroidLayer(use_gt_centroids=True) does. ----
 * Whether p is such a model (not an export). */
bool sleapc__predictor_takes_given(const sleapc_predictor *p);
/* Switch p to its top-down layer on given instances (made once), until
 * given_end switches back. */
sleapc_status sleapc__predictor_given_begin(sleapc_predictor *p);
void sleapc__predictor_given_end(sleapc_predictor *p);
/* A centered-instance model alone (its own layer) predicts on crops of its
 * crop size: whole frames (h, w) larger than that are refused, what naming
 * them, never cut to nothing or run as if they were crops. */
sleapc_status sleapc__predictor_crops_only(const sleapc_predictor *p, int64_t h, int64_t w,
                                           const char *what);
/* The instances of the next run's b frames: points (b, slots, n_nodes, 2). */
sleapc_status sleapc__predictor_give_instances(sleapc_predictor *p, const float *points,
                                               int64_t b, int64_t slots, int64_t n_nodes);

/* Append one layer batch to p->results (outputs.py to_labels). */
sleapc_status sleapc__predictor_pack(sleapc_predictor *p, const sleapc_layer_outputs *o);

#endif
