/* A loaded model: its config, its weights and the graph built from them. */
#ifndef SLEAPC_MODEL_MODEL_IMPL_H
#define SLEAPC_MODEL_MODEL_IMPL_H

#include "core/weights.h"
#include "io/config/export_meta.h"
#include "io/config/model_config.h"
#include "io/onnx/onnx_read.h"
#include "model/build.h"
#include "model/graph.h"

struct sleapc_model {
    char *dir;                /* owned: the model folder */
    char *weights_path;       /* owned: best.ckpt, for messages */
    sleapc_model_config cfg;  /* owned members */
    sleapc_weights weights;   /* owned; the graph points into it */
    sleapc_graph graph;
    int n_heads;
    sleapc_head_spec heads[SLEAPC_MAX_HEADS];
    /* An export's model.onnx with post-processing baked in (export.md §3):
     * the graph above is empty but for in_channels, and backends for it are
     * made from `baked`; layers take the exported path (layers/exported.h). */
    sleapc_onnx_model *baked;       /* owned; NULL for every other model */
    char arch[256];                 /* sleapc_model_backbone_arch */
    bool has_export_meta;
    sleapc_export_meta export_meta; /* owned members; export folders only */
};

/* Body of sleapc_model_load (which only checks arguments). */
sleapc_status sleapc__model_load(const char *path, sleapc_model **out);
void sleapc__model_destroy(sleapc_model *m);
/* Body of sleapc_model_load_random (model_random.c); arguments are checked there. */
sleapc_status sleapc__model_load_random(const char *config_yaml, int n_nodes, uint64_t seed,
                                        sleapc_model **out);

/* The skeleton instances use (model_skeleton.c); m is not NULL. Node names
 * are the config skeleton's, else the heads' part names. */
const char *sleapc__model_skeleton_name(const sleapc_model *m);
int sleapc__model_n_nodes(const sleapc_model *m);
const char *sleapc__model_node_name(const sleapc_model *m, int i);  /* NULL when out of range */
int sleapc__model_n_edges(const sleapc_model *m);
/* (-1, -1) when i is out of range. */
void sleapc__model_edge(const sleapc_model *m, int i, int *src, int *dst);

/* The whole skeleton at once, pointing into m (sleapc_model_skeleton). */
void sleapc__model_skeleton(const sleapc_model *m, sleapc_skeleton *out);

/* One line describing cfg's backbone architecture into buf. */
void sleapc__backbone_describe(const sleapc_model_config *cfg, char *buf, size_t cap);

#endif
