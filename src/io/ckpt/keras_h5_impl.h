/* Internals shared by the Keras reader's two files: the reading context, the
 * layer-name mapping and Keras model_config checks (keras_h5_map.c), used by
 * the HDF5 traversal and layout conversion (keras_h5.c). */
#ifndef SLEAPC_IO_CKPT_KERAS_H5_IMPL_H
#define SLEAPC_IO_CKPT_KERAS_H5_IMPL_H

#include <cjson/cJSON.h>

#include "io/ckpt/keras_h5.h"
#include "io/config/model_heads.h"
#include "io/h5/h5_file.h"

#define KEY_CAP 256
#define MAX_LAYERS 100000

typedef enum sleapc_kerash5_kind { KIND_CONV, KIND_CONVT, KIND_DENSE } sleapc_kerash5_kind;

static const char *const kind_class[] = {"Conv2D", "Conv2DTranspose", "Dense"};

/* Where a Keras layer goes. */
typedef struct sleapc_kerash5_map {
    sleapc_kerash5_kind kind;
    char key[KEY_CAP]; /* sleap-nn parameter prefix, without .weight / .bias */
    const char *act;   /* the Keras activation the builder's node implies */
} sleapc_kerash5_map;

enum sleapc_kerash5_map_result { MAP_OK, MAP_SKIP, MAP_UNKNOWN };

typedef struct sleapc_kerash5_ctx {
    const char *path;
    sleapc_h5 *f;
    sleapc_head_spec heads[SLEAPC_MAX_HEADS];
    int n_heads;
    cJSON *keras;        /* the root attribute model_config; NULL when absent */
    const cJSON *layers; /* its config.layers */
    sleapc_weights *out;
} sleapc_kerash5_ctx;

sleapc_status sleapc__kerash5_fail_layer(const sleapc_kerash5_ctx *c, const char *layer,
                                         const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Where the weights of layer `name` go, in sleap-nn's head order. */
enum sleapc_kerash5_map_result sleapc__kerash5_map_layer(const sleapc_kerash5_ctx *c,
                                                         const char *name, sleapc_kerash5_map *m);

/* A weighted layer's Keras class and options against what the builder runs. */
sleapc_status sleapc__kerash5_check_layer(const sleapc_kerash5_ctx *c, const char *name,
                                          const sleapc_kerash5_map *m);

/* The root attribute model_config (JSON of the Keras Functional model), when
 * present; files without it are checked by layer names only. */
sleapc_status sleapc__kerash5_load_config(sleapc_kerash5_ctx *c);

#endif
