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

/* model_config.backbone_config.convnext / .swint, arch resolved as sleap-nn
 * resolves it: a preset model_type wins over arch; otherwise arch; without
 * arch, tiny. Stage lists have SLEAPC_VIT_STAGES entries. */
#define SLEAPC_VIT_STAGES 4
typedef struct sleapc_vit_config {
    char model_type[16];       /* "tiny" ... as written ("custom" for arch) */
    bool preset;               /* model_type named a preset */
    int depths[SLEAPC_VIT_STAGES];
    int channels[SLEAPC_VIT_STAGES];   /* stage widths (SwinT: embed * 2^i) */
    int num_heads[SLEAPC_VIT_STAGES];  /* SwinT only */
    int stem_patch_kernel;     /* 4 (SwinT: patch_size) */
    int stem_patch_stride;     /* 2 */
    int window_size;           /* 7, SwinT only */
    int in_channels;           /* 1 */
    int kernel_size;           /* 3 */
    double filters_rate;       /* 2 */
    int convs_per_block;       /* 2 */
    bool up_interpolate;       /* true */
    int output_stride;         /* 1 */
    int max_stride;            /* 32 as written; the network's is stem_patch_stride * 16 */
    bool block_contraction;    /* false */
} sleapc_vit_config;

/* data_config.preprocessing.tiling (sleap-nn config/data_config.py TilingConfig).
 * Inference reads enabled .. cpu_thresh; the rest steer training only and
 * are kept so the whole block is read and checked. */
typedef enum sleapc_tile_blend {
    SLEAPC_TILE_BLEND_GAUSSIAN = 0,
    SLEAPC_TILE_BLEND_PYRAMID,
    SLEAPC_TILE_BLEND_CONSTANT
} sleapc_tile_blend;

typedef struct sleapc_tiling_config {
    bool enabled;                 /* false */
    int tile_size;                /* 0 = null */
    int overlap;                  /* -1 = null */
    double min_overlap_fraction;  /* 0.25, in [0, 1] */
    sleapc_tile_blend blend;      /* gaussian */
    double sigma_scale;           /* 0.125, in (0, 1] */
    int tile_batch_size;          /* 0 = null: sleap-nn's predictor then uses 8 */
    char accumulator_device[8];   /* "auto", "cpu" or "cuda" */
    double cpu_thresh;            /* 0.4, in [0, 1] */
    char sampling[16];            /* "foreground" or "grid" */
    double tile_fg_fraction;      /* 0.5, in [0, 1) */
    int samples_per_frame;        /* 0 = null */
    double center_jitter;         /* 0.5, in [0, 1] */
    int min_visible_keypoints;    /* 1, >= 0 */
    int steps_per_epoch;          /* 0 = null */
    bool full_frame_pass;         /* false; inert at inference in sleap-nn */
} sleapc_tiling_config;

/* head_configs.bbox_centernet (center/size/offset) or bbox_ssd.ssd (sleap-nn
 * 0.3.5 BBoxCenterNetConfig, SSDHeadConfig). Lists hold at most
 * SLEAPC_BBOX_LIST_MAX entries (the decoder's anchor geometry has that room). */
#define SLEAPC_BBOX_LIST_MAX 8
typedef struct sleapc_bbox_config {
    int n_categories;
    char **categories;         /* owned; null in the file -> ["object"] */
    int stride;                /* CenterNet: every head's output_stride (4);
                                  SSD: the finest level's (8) */
    int ssd_levels;            /* num_levels (3): strides stride * 2^l */
    int n_anchor_sizes;        /* == ssd_levels; required at inference */
    double anchor_sizes[SLEAPC_BBOX_LIST_MAX];
    int n_anchor_scales;       /* (1.0, 1.26, 1.587) */
    double anchor_scales[SLEAPC_BBOX_LIST_MAX];
    int n_aspect_ratios;       /* (0.5, 1.0, 2.0) */
    double aspect_ratios[SLEAPC_BBOX_LIST_MAX];
    double box_variances[4];   /* (0.1, 0.1, 0.2, 0.2) */
    int head_channels;         /* 128 */
    int head_convs;            /* 1 */
} sleapc_bbox_config;

/* head_configs.embedding.embedding (sleap-nn 0.3.5 EmbeddingHeadConfig; heads.py
 * EmbeddingHead): pool -> num_fc_layers x (Linear+ReLU) -> Linear -> [L2]. */
typedef enum sleapc_embedding_pool {
    SLEAPC_EMBEDDING_POOL_GEM = 0,
    SLEAPC_EMBEDDING_POOL_MAX,
    SLEAPC_EMBEDDING_POOL_AVG
} sleapc_embedding_pool;

typedef struct sleapc_embedding_config {
    int dim;                     /* embedding_dim: 128 */
    int fc_layers;               /* num_fc_layers: 1 */
    int fc_units;                /* num_fc_units: 256 */
    sleapc_embedding_pool pool;  /* gem (null: gem for the backbones sleapc runs) */
    bool normalize;              /* true */
    int stride;                  /* output_stride: = max_stride */
    bool mask_mode;              /* detection_mode: mask (crops of segmentation masks) */
    bool custom_centroid;        /* anchor_part or a centroid_method other than the
                                    centre of mass */
    bool burn_in;                /* data_config.preprocessing.burn_in */
} sleapc_embedding_config;

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
    sleapc_unet_config unet;         /* also in_channels of every backbone */
    sleapc_vit_config vit;           /* backbone_type CONVNEXT or SWINT */

    /* data_config.preprocessing */
    bool ensure_rgb;                 /* false */
    bool ensure_grayscale;           /* false */
    int max_height;                  /* 0 = null */
    int max_width;                   /* 0 = null */
    double scale;                    /* 1.0 (first element when a list) */
    int crop_size;                   /* 0 = null */
    /* crop_mode: bbox (sleap-nn 0.3.5): each box resized to the crop */
    bool crop_bbox;                  /* false: crop_mode fixed */
    int crop_bbox_aspect;            /* 0 square, 1 letterbox, 2 stretch (crops_bbox.h) */
    double crop_bbox_padding;        /* 0.1: fraction of the box's longest side */
    double crop_bbox_min_size;       /* 0 = null */
    double bbox_padding;             /* data_config.bbox_padding: 0.0 */
    char bbox_source[16];            /* data_config.bbox_source: "auto" */
    char crop_centroid_rule[24];     /* the crop head's resolved centroid_method (a word) */
    sleapc_tiling_config tiling;

    /* Legacy SLEAP 1.x models (training_config.json + best_model.h5) only. */
    bool legacy;                     /* the layers switch SLEAP 1.x behaviours on this */
    int pad_to_stride;               /* data.preprocessing.pad_to_stride; 0 = null */
    bool resize_and_pad_to_target;   /* data.preprocessing.resize_and_pad_to_target */

    sleapc_skeleton_config skeleton; /* data_config.skeletons[0] */

    /* head_configs.<model_type>.confmaps (every model type has one) */
    int n_part_names;                /* for centroid: 1 ("centroid"), part_names unused */
    char **part_names;               /* owned; null in the file -> skeleton node names */
    char *anchor_part;               /* owned; NULL = null */
    char *centroid_method;           /* owned; centered_instance: NULL = null (sleap-nn
                                        0.3.5 #586: how a crop centre is made from points) */
    char *centroid_fallback;         /* owned; NULL = null (the anchor's fallback) */
    double confmaps_sigma;           /* 5.0 */
    int confmaps_stride;             /* 1 */
    bool confmaps_sigmoid;           /* centroid.confmaps.use_sigmoid_activation (sleap-nn
                                        0.3.5's focal-loss centroid head): false */

    /* bottomup: head_configs.bottomup.pafs */
    int n_paf_edges;
    int (*paf_edges)[2];             /* owned; indices into part_names; null -> skeleton edges */
    double pafs_sigma;               /* 15.0 */
    int pafs_stride;                 /* 1 */

    /* multi_class_*: class_maps or class_vectors */
    int n_classes;
    char **classes;                  /* owned */
    bool class_identity;             /* class_output: identity (default track) */
    int class_maps_stride;           /* 1 (multi_class_bottomup) */
    int class_vectors_fc_layers;     /* 1 */
    int class_vectors_fc_units;      /* 64 */
    bool class_vectors_global_pool;  /* true */
    int class_vectors_stride;        /* = max_stride */

    sleapc_bbox_config bbox;         /* bbox_centernet / bbox_ssd only */
    sleapc_embedding_config embedding; /* embedding only */
} sleapc_model_config;

/* sleap-nn's name of a model type ("single_instance", ...; "unknown"), and
 * back (SLEAPC_MODEL_TYPE_UNKNOWN for a name that is none of them). */
const char *sleapc__model_type_name(sleapc_model_type type);
sleapc_model_type sleapc__model_type_from_name(const char *name);

/* Free an owned array of n owned strings (NULL accepted). */
void sleapc__names_free(char **names, int n);

/* TilingConfig's defaults (tiling disabled). */
void sleapc__tiling_config_defaults(sleapc_tiling_config *t);

/* sleap-nn's name of a blend mode: "gaussian", "pyramid", "constant". */
const char *sleapc__tile_blend_name(sleapc_tile_blend b);

/* sleap-nn's defaults of the box-detector fields (no allocation). */
void sleapc__bbox_config_defaults(sleapc_bbox_config *b);

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
