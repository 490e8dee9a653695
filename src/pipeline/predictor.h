/* The predictor: models + layer + batching + packaging of instances (sleap-nn
 * inference/predictor.py and outputs.py). */
#ifndef SLEAPC_PIPELINE_PREDICTOR_H
#define SLEAPC_PIPELINE_PREDICTOR_H

#include "layers/layer.h"
#include "sleapc/predictor.h"

typedef struct packed_instance {
    int64_t points_at;     /* offset of n_nodes (x, y) pairs in points */
    float score;
    int track;
    float tracking_score;
    bool has_centroid;
    float centroid[2];
    float centroid_score;
} packed_instance;

struct sleapc_predictor {
    sleapc_predictor_opts opts;
    sleapc_model *models[2];
    int n_models;
    const sleapc_model *pose;    /* the model whose skeleton instances use */
    sleapc_layer *layer;
    sleapc_layer_outputs outputs;
    int64_t n_nodes;
    uint8_t *batch;              /* (batch_size, C, H, W) */
    size_t batch_cap;
    /* Packaged results of the last run. */
    int64_t n_frames;
    int64_t *frame_first;        /* (n_frames + 1) index of each frame's first instance */
    size_t frame_cap;
    packed_instance *insts;
    int64_t n_insts;
    size_t inst_cap;
    float *points;               /* (n_insts, n_nodes, 2) then scores (n_insts, n_nodes) */
    float *point_scores;
    sleapc_predictor_stats stats;
    size_t points_cap;           /* instances the point arrays hold */
};

/* Package one layer batch into the result arrays (outputs.py to_labels). */
sleapc_status sleapc__predictor_pack(sleapc_predictor *p, const sleapc_layer_outputs *o);

#endif
