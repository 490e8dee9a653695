/* The heads a model type has (sleap-nn heads.py, model.py), decided by the
 * config alone: the checkpoint builder and the Keras .h5 reader both name and
 * check tensors by it. */
#ifndef SLEAPC_IO_CONFIG_MODEL_HEADS_H
#define SLEAPC_IO_CONFIG_MODEL_HEADS_H

#include "io/config/model_config.h"

/* The activation fused into a head's last layer (and into graph nodes). */
typedef enum sleapc_act {
    SLEAPC_ACT_NONE = 0,
    SLEAPC_ACT_RELU,
    SLEAPC_ACT_SIGMOID,
    SLEAPC_ACT_SOFTMAX  /* over channels of a (B,C) vector */
} sleapc_act;

/* One network head, in sleap-nn's head order (architectures.md §2). */
typedef struct sleapc_head_spec {
    const char *name;  /* static: "CentroidConfmapsHead", ... */
    int channels;
    int stride;        /* 0 for ClassVectorsHead */
    sleapc_act act;
} sleapc_head_spec;

#define SLEAPC_MAX_HEADS 2

/* The heads a model type has, with channels and strides from the config.
 * Returns the count (0 for an unknown type). */
int sleapc__heads_for_config(const sleapc_model_config *cfg, sleapc_head_spec *heads);

#endif
