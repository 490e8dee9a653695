/* sleap-nn's export_metadata.json (export.md §4, export/metadata.py): what an
 * ONNX export is, and the post-processing constants baked into its graph. */
#ifndef SLEAPC_IO_CONFIG_EXPORT_META_H
#define SLEAPC_IO_CONFIG_EXPORT_META_H

#include <stdbool.h>
#include <stddef.h>

#include "io/config/model_config.h"

/* The export wrappers (export.md §3), one per model_type value. */
typedef enum sleapc_export_kind {
    SLEAPC_EXPORT_UNKNOWN = 0,
    SLEAPC_EXPORT_SINGLE_INSTANCE,
    SLEAPC_EXPORT_CENTROID,
    SLEAPC_EXPORT_CENTERED_INSTANCE,
    SLEAPC_EXPORT_TOPDOWN,                      /* centroid + centered_instance in one graph */
    SLEAPC_EXPORT_BOTTOMUP,
    SLEAPC_EXPORT_MULTI_CLASS_TOPDOWN,          /* the class-vector model alone, on crops */
    SLEAPC_EXPORT_MULTI_CLASS_TOPDOWN_COMBINED, /* centroid + multi_class_topdown */
    SLEAPC_EXPORT_MULTI_CLASS_BOTTOMUP,
    SLEAPC_EXPORT_BBOX_CENTERNET,               /* the network only: decoder-ready heads */
    SLEAPC_EXPORT_BBOX_SSD,
    SLEAPC_EXPORT_EMBEDDING                     /* crop -> vector, standardize in the graph */
} sleapc_export_kind;

typedef struct sleapc_export_meta {
    sleapc_export_kind kind;
    char model_type[48];     /* as written */
    int n_nodes;
    char **node_names;       /* owned */
    int n_edges;
    int (*edges)[2];         /* owned; [] in upstream's top-down exports */
    int n_classes;           /* 0 = null */
    char **class_names;      /* owned */
    char *anchor_part;       /* owned; NULL = null */
    double input_scale;      /* 1.0 when missing (ExportMetadata.from_dict) */
    int input_channels;      /* 1 when missing */
    int output_stride;       /* 1 when missing */
    int crop_size;           /* 0 = null; square crops only */
    int max_instances;       /* 0 = null */
    int max_peaks_per_node;  /* 0 = null */
    bool has_peak_threshold;
    double peak_threshold;   /* the threshold baked into the graph */
} sleapc_export_meta;

/* Parse the JSON text (n bytes, not necessarily NUL-terminated); `path`
 * names it in messages. Missing optional keys take the loader's defaults;
 * a missing or unknown model_type, or values of the wrong type or out of
 * range (node indices, counts), are SLEAPC_ERR_FORMAT naming the key.
 * On failure *out is cleared. */
sleapc_status sleapc__export_meta_parse(const char *text, size_t n, const char *path,
                                        sleapc_export_meta *out);

/* Free every owned member and zero *m. Accepts a zeroed struct. */
void sleapc__export_meta_clear(sleapc_export_meta *m);

/* The model type of the model inside the export: topdown gives
 * centered_instance, multi_class_topdown_combined multi_class_topdown; box
 * detectors and embedding models are themselves. */
sleapc_model_type sleapc__export_pose_type(sleapc_export_kind kind);

/* The training config file an export folder carries for its pose model
 * ("training_config.yaml", "training_config_centered_instance.yaml", ...). */
const char *sleapc__export_pose_config_name(sleapc_export_kind kind);

/* A model config built from the metadata alone (no training config in the
 * folder): model type, skeleton (node names, edges), part names, classes,
 * anchor part, input channels, input scale and crop size. cfg must hold
 * defaults (sleapc__model_config_defaults); on failure it is cleared. */
sleapc_status sleapc__export_meta_to_config(const sleapc_export_meta *m, const char *path,
                                            sleapc_model_config *cfg);

#endif
