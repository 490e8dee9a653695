/* Named float32 tensors read from a model file (checkpoint, Keras .h5, ONNX).
 * Loaded once and immutable afterwards; graph nodes point into it. */
#ifndef SLEAPC_CORE_WEIGHTS_H
#define SLEAPC_CORE_WEIGHTS_H

#include <stdint.h>

#include "sleapc/sleapc.h"

#define SLEAPC_WEIGHT_MAX_DIMS 6

typedef struct sleapc_weight {
    char *name;                             /* owned, e.g. "model.head_layers.0.X.0.weight" */
    int ndim;                               /* 0 for a scalar */
    int64_t shape[SLEAPC_WEIGHT_MAX_DIMS];  /* C order as stored (PyTorch layout) */
    float *data;                            /* owned, 64-byte aligned, numel floats */
} sleapc_weight;

typedef struct sleapc_weights {
    sleapc_weight *items;   /* owned array of n entries, in file order */
    int n;
    int cap;
} sleapc_weights;

/* Append a tensor. name is copied; data must come from sleapc__aligned_alloc
 * and is owned by w from now on, also when this call fails. */
sleapc_status sleapc__weights_add(sleapc_weights *w, const char *name, int ndim,
                                  const int64_t *shape, float *data);

/* Exact-name lookup; NULL when absent. */
const sleapc_weight *sleapc__weights_find(const sleapc_weights *w, const char *name);

int64_t sleapc__weight_numel(const sleapc_weight *t);

/* Total number of float parameters. */
int64_t sleapc__weights_param_count(const sleapc_weights *w);

/* Free every entry and reset *w to empty. Accepts an empty or zeroed struct. */
void sleapc__weights_clear(sleapc_weights *w);

#endif
