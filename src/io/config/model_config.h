/* What sleapc needs from a model's training configuration, whatever file it
 * came from (sleap-nn training_config.yaml, legacy SLEAP training_config.json,
 * ONNX export metadata). Field defaults are sleap-nn's dataclass defaults. */
#ifndef SLEAPC_IO_CONFIG_MODEL_CONFIG_H
#define SLEAPC_IO_CONFIG_MODEL_CONFIG_H

#include <stdbool.h>

#include "sleapc/model.h"

typedef enum sleapc_backbone_type {
    SLEAPC_BACKBONE_UNET = 0,
    SLEAPC_BACKBONE_CONVNEXT,
    SLEAPC_BACKBONE_SWINT,
    SLEAPC_BACKBONE_OTHER
} sleapc_backbone_type;

/* model_config.backbone_config.unet */
typedef struct sleapc_unet_config {
    int in_channels;      /* 1 */
    int kernel_size;      /* 3 */
    int filters;          /* 32 */
    double filters_rate;  /* 1.5 */
    int max_stride;       /* 16 */
    int stem_stride;      /* 0 = null */
    bool middle_block;    /* true */
    bool up_interpolate;  /* true: bilinear; false: transposed conv */
    int stacks;           /* 1 */
    int convs_per_block;  /* 2 */
    int output_stride;    /* 1 */
} sleapc_unet_config;

typedef struct sleapc_skeleton_config {
    char *name;            /* owned; "" when absent */
    int n_nodes;
    char **node_names;     /* owned array of owned strings */
    int n_edges;
    int (*edges)[2];       /* owned; node indices (source, destination) */
    int n_symmetries;
    int (*symmetries)[2];  /* owned; node indices */
} sleapc_skeleton_config;

typedef struct sleapc_model_config {
    char *source_path;               /* owned; the file this came from, for messages */
    sleapc_model_type model_type;
    sleapc_backbone_type backbone_type;
    char backbone_name[16];          /* "unet", "convnext", "swint", ... as written */
    sleapc_unet_config unet;

    /* data_config.preprocessing */
    bool ensure_rgb;                 /* false */
    bool ensure_grayscale;           /* false */
    int max_height;                  /* 0 = null */
    int max_width;                   /* 0 = null */
    double scale;                    /* 1.0 (first element when a list) */
    int crop_size;                   /* 0 = null */

    /* Legacy SLEAP 1.x models (training_config.json + best_model.h5) only. */
    bool legacy;                     /* the layers switch SLEAP 1.x behaviours on this */
    int pad_to_stride;               /* data.preprocessing.pad_to_stride; 0 = null */
    bool resize_and_pad_to_target;   /* data.preprocessing.resize_and_pad_to_target */

    sleapc_skeleton_config skeleton; /* data_config.skeletons[0] */

    /* head_configs.<model_type>.confmaps (every model type has one) */
    int n_part_names;                /* for centroid: 1 ("centroid"), part_names unused */
    char **part_names;               /* owned; null in the file -> skeleton node names */
    char *anchor_part;               /* owned; NULL = null */
    double confmaps_sigma;           /* 5.0 */
    int confmaps_stride;             /* 1 */

    /* bottomup: head_configs.bottomup.pafs */
    int n_paf_edges;
    int (*paf_edges)[2];             /* owned; indices into part_names; null -> skeleton edges */
    double pafs_sigma;               /* 15.0 */
    int pafs_stride;                 /* 1 */

    /* multi_class_*: class_maps or class_vectors */
    int n_classes;
    char **classes;                  /* owned */
    int class_maps_stride;           /* 1 (multi_class_bottomup) */
    int class_vectors_fc_layers;     /* 1 */
    int class_vectors_fc_units;      /* 64 */
    bool class_vectors_global_pool;  /* true */
    int class_vectors_stride;        /* = max_stride */
} sleapc_model_config;

/* sleap-nn's name of a model type ("single_instance", ...; "unknown"), and
 * back (SLEAPC_MODEL_TYPE_UNKNOWN for a name that is none of them). */
const char *sleapc__model_type_name(sleapc_model_type type);
sleapc_model_type sleapc__model_type_from_name(const char *name);

/* Free an owned array of n owned strings (NULL accepted). */
void sleapc__names_free(char **names, int n);

/* Fill *cfg with sleap-nn's defaults (no allocation). */
void sleapc__model_config_defaults(sleapc_model_config *cfg);

/* Free every owned member and zero *cfg. Accepts a zeroed or half-filled cfg. */
void sleapc__model_config_clear(sleapc_model_config *cfg);

/* Read a sleap-nn training_config.yaml. On failure *cfg is cleared and the
 * message names the file and the key ("SLEAPC_ERR_FORMAT: ...: missing key
 * model_config.head_configs"). */
sleapc_status sleapc__config_read_yaml(const char *path, sleapc_model_config *cfg);

/* Read a legacy SLEAP 1.x training_config.json (architectures.md §6b, formats.md C.6).
 * Sets cfg->legacy; unet.in_channels and the class-vector MLP sizes come from
 * the weights (sleapc__keras_h5_patch_config). Errors as for the YAML reader. */
sleapc_status sleapc__config_read_legacy_json(const char *path, sleapc_model_config *cfg);

#endif
