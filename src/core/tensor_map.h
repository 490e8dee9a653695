/* A small set of named tensors: what a backend's forward pass returns. The map
 * holds views; whoever fills it says who owns the data and for how long. */
#ifndef SLEAPC_CORE_TENSOR_MAP_H
#define SLEAPC_CORE_TENSOR_MAP_H

#include "sleapc/tensor.h"

/* A network part of an export can hand the host many maps (an SSD export:
 * each level's class and box maps, and the tensors its shape ops read). */
#define SLEAPC_TENSOR_MAP_CAP 16
#define SLEAPC_TENSOR_NAME_CAP 48

typedef struct sleapc_tensor_map {
    int n;
    char names[SLEAPC_TENSOR_MAP_CAP][SLEAPC_TENSOR_NAME_CAP];
    sleapc_tensor tensors[SLEAPC_TENSOR_MAP_CAP];
} sleapc_tensor_map;

void sleapc__tensor_map_clear(sleapc_tensor_map *m);
/* Add or replace name. Fails with SLEAPC_ERR_STATE when the map is full. */
sleapc_status sleapc__tensor_map_set(sleapc_tensor_map *m, const char *name,
                                     const sleapc_tensor *t);
/* NULL when absent. */
const sleapc_tensor *sleapc__tensor_map_get(const sleapc_tensor_map *m, const char *name);

#endif
