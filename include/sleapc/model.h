/* Loading a trained model and running its network on one backend. */
#ifndef SLEAPC_MODEL_H
#define SLEAPC_MODEL_H

#include "sleapc/sleapc.h"
#include "sleapc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sleapc_model_type {
    SLEAPC_MODEL_TYPE_UNKNOWN = 0,
    SLEAPC_MODEL_TYPE_SINGLE_INSTANCE,
    SLEAPC_MODEL_TYPE_CENTROID,
    SLEAPC_MODEL_TYPE_CENTERED_INSTANCE,
    SLEAPC_MODEL_TYPE_BOTTOMUP,
    SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP,
    SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN,
    SLEAPC_MODEL_TYPE_BBOX_CENTERNET,  /* box detectors (sleap-nn 0.3.5) */
    SLEAPC_MODEL_TYPE_BBOX_SSD,
    SLEAPC_MODEL_TYPE_EMBEDDING        /* re-ID crop -> vector (sleap-nn 0.3.5) */
} sleapc_model_type;

/* sleap-nn's spelling: "single_instance", "centroid", ... Static text. */
SLEAPC_API const char *sleapc_model_type_name(sleapc_model_type type);

typedef struct sleapc_model sleapc_model;

/* Load a model folder: training_config.yaml + best.ckpt (sleap-nn).
 * path may also name the best.ckpt or training_config.yaml inside the folder.
 * Every tensor is checked against the shapes the config implies.
 * Returns SLEAPC_OK, SLEAPC_ERR_IO (missing/unreadable file),
 * SLEAPC_ERR_FORMAT (corrupt or inconsistent file), SLEAPC_ERR_UNSUPPORTED
 * (e.g. a ConvNeXt backbone) or SLEAPC_ERR_NOMEM. *out is NULL on failure. */
SLEAPC_API sleapc_status sleapc_model_load(const char *path, sleapc_model **out);

/* A model from a training_config.yaml alone, with random weights (the same
 * seed gives the same weights): for benchmarks of network sizes without a
 * trained checkpoint. A config without a skeleton gets n_nodes nodes in a
 * chain (and two classes for multi-class heads). */
SLEAPC_API sleapc_status sleapc_model_load_random(const char *config_yaml, int n_nodes,
                                                  uint64_t seed, sleapc_model **out);

/* Accepts NULL. */
SLEAPC_API void sleapc_model_destroy(sleapc_model *model);

/* A skeleton: its nodes, edges (source, destination node indices),
 * symmetric node pairs and, for multi-class models, the class (identity)
 * names in the order of their class channels. Arrays and strings are owned
 * by the model (or predictor) they came from. */
typedef struct sleapc_skeleton {
    const char *name;                /* "" when the config names none */
    int n_nodes;
    const char *const *node_names;   /* n_nodes */
    int n_edges;
    const int *edges;                /* n_edges (source, destination) pairs */
    int n_symmetries;
    const int *symmetries;           /* n_symmetries node pairs */
    int n_classes;                   /* 0 for other models */
    const char *const *class_names;  /* n_classes */
} sleapc_skeleton;

/* The skeleton instances of this model use: the config's skeleton, else its
 * heads' part names. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (NULL). */
SLEAPC_API sleapc_status sleapc_model_skeleton(const sleapc_model *model, sleapc_skeleton *out);

/* Read-only facts about a loaded model. Strings are owned by the model. */
SLEAPC_API sleapc_model_type sleapc_model_get_type(const sleapc_model *model);
SLEAPC_API int sleapc_model_in_channels(const sleapc_model *model);
SLEAPC_API int sleapc_model_max_stride(const sleapc_model *model);
SLEAPC_API double sleapc_model_input_scale(const sleapc_model *model);
SLEAPC_API int64_t sleapc_model_param_count(const sleapc_model *model);
/* Backbone kind as the config names it ("unet"). */
SLEAPC_API const char *sleapc_model_backbone_name(const sleapc_model *model);
/* The backbone's architecture in one line, e.g. "model_type tiny: depths
 * [3,3,9,3], channels [96,192,384,768], ..."; owned by the model. */
SLEAPC_API const char *sleapc_model_backbone_arch(const sleapc_model *model);
/* Size matcher target (preprocessing max_height/max_width); 0 when not set. */
SLEAPC_API void sleapc_model_max_size(const sleapc_model *model, int *height, int *width);
/* Top-down crop side from the config; 0 when not set. */
SLEAPC_API int sleapc_model_crop_size(const sleapc_model *model);
/* Tiled inference (preprocessing.tiling with enabled: true; single-instance
 * models): tile side and overlap in scaled-frame pixels, the importance
 * window ("gaussian", "pyramid", "constant") and the tiles per network call.
 * Such a model skips the size matcher. Returns false, leaving the outputs
 * alone, when the model is not tiled. Outputs may be NULL. */
SLEAPC_API bool sleapc_model_tiling(const sleapc_model *model, int *tile_size, int *overlap,
                                    const char **blend, int *tiles_per_call);

/* sleap-nn ONNX exports (a folder with model.onnx): true when the model is
 * such a graph, with peak finding and the rest of the post-processing baked
 * in; it then has no heads, and runners return the graph's own outputs
 * ("peaks", "peak_vals", ...). sleapc_model_get_type gives the pose model's
 * type (centered_instance for a top-down export). */
SLEAPC_API bool sleapc_model_is_exported(const sleapc_model *model);
/* The export's model_type as its metadata spells it ("topdown",
 * "multi_class_topdown_combined", ...); "" for other models, including
 * model_raw.onnx exports. */
SLEAPC_API const char *sleapc_model_export_type(const sleapc_model *model);

/* Network heads, in sleap-nn's head order. */
typedef struct sleapc_head_info {
    const char *name;  /* "CentroidConfmapsHead", ... */
    int channels;
    int stride;        /* output stride in input pixels; 0 for a vector head */
} sleapc_head_info;
SLEAPC_API int sleapc_model_n_heads(const sleapc_model *model);
SLEAPC_API sleapc_head_info sleapc_model_head(const sleapc_model *model, int i);

/* Multiply-accumulate count x2 of one forward pass on a 1 x C x height x width
 * input, in GFLOP. */
SLEAPC_API double sleapc_model_gflops(const sleapc_model *model, int64_t height, int64_t width);

#ifdef __cplusplus
}
#endif

#endif
