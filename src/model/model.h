/* A loaded model: its config, its weights and the graph built from them. */
#ifndef SLEAPC_MODEL_MODEL_H
#define SLEAPC_MODEL_MODEL_H

#include "io/config/model_config.h"
#include "model/build.h"
#include "model/graph.h"
#include "model/weights.h"

struct sleapc_model {
    char *dir;                /* owned: the model folder */
    char *weights_path;       /* owned: best.ckpt, for messages */
    sleapc_model_config cfg;  /* owned members */
    sleapc_weights weights;   /* owned; the graph points into it */
    sleapc_graph graph;
    int n_heads;
    sleapc_head_spec heads[SLEAPC_MAX_HEADS];
};

/* Body of sleapc_model_load (which only checks arguments). */
sleapc_status sleapc__model_load(const char *path, sleapc_model **out);
void sleapc__model_destroy(sleapc_model *m);

#endif
