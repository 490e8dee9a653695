/* Pose prediction: one or two model folders -> instances per frame, with
 * sleap-nn's preprocessing, peak finding, grouping and identity logic. */
#ifndef SLEAPC_PREDICTOR_H
#define SLEAPC_PREDICTOR_H

#include "sleapc/model.h"
#include "sleapc/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options, with sleap-nn's names and defaults (sleapc_predictor_opts_default).
 * "From the config" values are taken from the model's training_config.yaml.
 * Start from sleapc_predictor_opts_default(): it sets struct_size, which lets
 * a later library add fields and still read a struct compiled against these
 * headers (a struct_size of 0 is refused). Strings are copied. */
typedef struct sleapc_predictor_opts {
    uint32_t struct_size;            /* sizeof(sleapc_predictor_opts) */
    const char *backend;             /* "auto" */
    int n_threads;                   /* 0: one per core */
    int batch_size;                  /* 4 */
    double peak_threshold;           /* 0.2 */
    double centroid_peak_threshold;  /* NaN: = peak_threshold (top-down centroid stage) */
    int integral_refinement;         /* 1: "integral"; 0: none */
    int integral_patch_size;         /* 5 */
    int max_instances;               /* 0: no limit */
    double max_edge_length_ratio;    /* 0.25 */
    double dist_penalty_weight;      /* 1.0 */
    int n_points;                    /* 10 */
    double min_instance_peaks;       /* 0: off; >= 1 an absolute count, < 1 a fraction of
                                        the nodes (see README: sleap-nn's CLI quirk) */
    double min_line_scores;          /* 0.25 */
    int crop_size;                   /* 0: from the config */
    int max_height, max_width;       /* 0: from the config */
    double input_scale;              /* 0: from the config */
    int ensure_rgb;                  /* -1: from the config; 0/1 override */
    int ensure_grayscale;            /* -1: from the config; 0/1 override */
    sleapc_precision precision;      /* FP32; BF16 where the backend and CPU have it */
    const char *anchor_part;         /* NULL: from the config; centroid models: the node
                                        that holds the centroid. Not kept: must outlive
                                        sleapc_predictor_create */
    const char *device;              /* "auto" (NULL): the fastest backend, a GPU among
                                        them; "cpu": the CPU backends; "cuda[:N]",
                                        "mps", "gpu[:N]": that GPU (Vulkan backend) */
    sleapc_conv_method conv;         /* AUTO (native backend, see runner.h) */
} sleapc_predictor_opts;

SLEAPC_API sleapc_predictor_opts sleapc_predictor_opts_default(void);

typedef struct sleapc_predictor sleapc_predictor;

/* model_paths: one folder (single_instance, centroid, centered_instance,
 * bottomup, multi_class_bottomup) or two (a centroid folder and a
 * centered_instance or multi_class_topdown folder, in either order: top-down).
 * Returns SLEAPC_OK, SLEAPC_ERR_INVALID_ARG (folders that do not form a
 * pipeline, contradictory options), or a model-loading status. */
SLEAPC_API sleapc_status sleapc_predictor_create(const char *const *model_paths, int n_models,
                                                 const sleapc_predictor_opts *opts,
                                                 sleapc_predictor **out);
SLEAPC_API void sleapc_predictor_destroy(sleapc_predictor *p);

/* As sleapc_predictor_create, over models already loaded (sleapc_model_load)
 * instead of folders: models[0..n_models) in the same roles. The models are
 * borrowed and only read: they must outlive every predictor made from them,
 * and one model may serve any number of predictors on any threads at once
 * (each predictor used by one thread at a time), its weights held once. */
SLEAPC_API sleapc_status sleapc_predictor_create_from_models(sleapc_model *const *models,
                                                             int n_models,
                                                             const sleapc_predictor_opts *opts,
                                                             sleapc_predictor **out);

/* Prepare for frames of height x width x channels (1 or 3) in batches of
 * n_frames (0: the batch size): one pass on blank frames builds the
 * backend's plans and every buffer, so the first real frame of that size
 * runs at steady speed. Nothing of it is kept in the results or the stats.
 * Returns SLEAPC_OK, SLEAPC_ERR_INVALID_ARG or a prediction failure. */
SLEAPC_API sleapc_status sleapc_predictor_warmup(sleapc_predictor *p, int64_t n_frames,
                                                 int64_t height, int64_t width,
                                                 int64_t channels);

/* Abort callback: returns true to stop. Long calls on p (sleapc_predict_input,
 * sleapc_predict_array, sleapc_predictor_run on more frames than a batch)
 * poll it between batches on the calling thread and then return
 * SLEAPC_ERR_INTERRUPTED; the frames done so far stay in the writer (and in
 * the predictor's results for sleapc_predictor_run). fn NULL: never. */
typedef bool (*sleapc_abort_fn)(void *user);
SLEAPC_API void sleapc_predictor_set_abort(sleapc_predictor *p, sleapc_abort_fn fn, void *user);

/* sleap-nn's layer name: "SingleInstanceLayer", "TopDownLayer", ... Static. */
SLEAPC_API const char *sleapc_predictor_layer_name(const sleapc_predictor *p);
/* The skeleton instances are reported in (the pose model's). Strings owned by
 * the predictor. */
SLEAPC_API const char *sleapc_predictor_skeleton_name(const sleapc_predictor *p);
SLEAPC_API int sleapc_predictor_n_nodes(const sleapc_predictor *p);
SLEAPC_API const char *sleapc_predictor_node_name(const sleapc_predictor *p, int i);
SLEAPC_API int sleapc_predictor_n_edges(const sleapc_predictor *p);
SLEAPC_API void sleapc_predictor_edge(const sleapc_predictor *p, int i, int *src, int *dst);
SLEAPC_API int sleapc_predictor_n_symmetries(const sleapc_predictor *p);
SLEAPC_API void sleapc_predictor_symmetry(const sleapc_predictor *p, int i, int *a, int *b);
/* Class names of multi-class models (tracks); 0 otherwise. */
SLEAPC_API int sleapc_predictor_n_classes(const sleapc_predictor *p);
SLEAPC_API const char *sleapc_predictor_class_name(const sleapc_predictor *p, int i);
SLEAPC_API int sleapc_predictor_batch_size(const sleapc_predictor *p);

/* Predict on a batch of equally sized frames: (N,H,W,C), (H,W,C) or (H,W)
 * uint8, C = 1 or 3. Results replace the previous run's. Returns SLEAPC_OK or
 * SLEAPC_ERR_INVALID_ARG (bad frames) and others. */
SLEAPC_API sleapc_status sleapc_predictor_run(sleapc_predictor *p, const sleapc_tensor *frames);

/* One predicted instance, owned by the predictor, valid until the next run. */
typedef struct sleapc_instance {
    const float *points;        /* n_nodes (x, y) pairs; NaN = missing */
    const float *point_scores;  /* n_nodes; NaN = missing */
    float score;                /* instance score (sleap-nn's, per model type) */
    int track;                  /* class index for multi-class models, else -1 */
    float tracking_score;       /* NaN when none */
    bool has_centroid;          /* top-down: the centroid it was found from */
    float centroid[2];
    float centroid_score;
} sleapc_instance;

/* Where time went since the predictor was created (or stats were reset):
 * frames predicted, seconds in network forward passes, seconds in
 * sleapc_predictor_run altogether (preprocessing, network, post-processing). */
typedef struct sleapc_predictor_stats {
    int64_t frames;
    double network_s;
    double run_s;
} sleapc_predictor_stats;
SLEAPC_API sleapc_predictor_stats sleapc_predictor_get_stats(const sleapc_predictor *p);
SLEAPC_API void sleapc_predictor_reset_stats(sleapc_predictor *p);

/* What each network stage runs on now: its model folder, the backend that
 * runs it ("auto" resolved to the backend it chose once it has measured) and
 * the precision it computes in (FP32 once a bf16 model fell back after its
 * first batch). bf16_error: the worst head's relative L2 from float32 on the
 * first bf16 batch; bf16_moved: the share of keypoints bf16 was expected to
 * move by a grid cell or drop, from that batch; each -1 when not measured.
 * Strings belong to the predictor. */
typedef struct sleapc_stage_info {
    const char *model;
    const char *backend;
    sleapc_precision precision;
    double bf16_error;
    double bf16_moved;
    const char *device;      /* "cpu", "cuda:0", "mps", "gpu:1" */
    const char *device_name; /* the GPU's name; "" on the CPU */
} sleapc_stage_info;
/* Stages of the predictor's layer (1 or 2). */
SLEAPC_API int sleapc_predictor_n_stages(const sleapc_predictor *p);
/* Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (no such stage, NULL out). */
SLEAPC_API sleapc_status sleapc_predictor_stage_info(const sleapc_predictor *p, int i,
                                                     sleapc_stage_info *out);
/* "fp32", "bf16", "fp16" or "bf16-emulated". */
SLEAPC_API const char *sleapc_precision_name(sleapc_precision precision);

/* Frames of the last run, and their instances in the layer's order.
 * Instances whose points are all missing are left out, as sleap-nn does. */
SLEAPC_API int sleapc_predictor_n_frames(const sleapc_predictor *p);
SLEAPC_API int sleapc_predictor_n_instances(const sleapc_predictor *p, int frame);
SLEAPC_API sleapc_status sleapc_predictor_instance(const sleapc_predictor *p, int frame, int i,
                                                   sleapc_instance *out);

/* Every instance of one frame of the last run at once, copied into the
 * caller's arrays, each sized for max_instances (any may be NULL):
 *   points        (max_instances, n_nodes, 2) x, y; NaN = missing
 *   point_scores  (max_instances, n_nodes)
 *   scores        (max_instances) instance scores
 *   tracks        (max_instances) class / track index, -1 = none
 * *n_out is the frame's instance count; when it exceeds max_instances only
 * the first max_instances are copied. Returns SLEAPC_OK or
 * SLEAPC_ERR_INVALID_ARG (no such frame, max_instances < 0, NULL n_out). */
SLEAPC_API sleapc_status sleapc_predictor_frame_results(const sleapc_predictor *p, int frame,
                                                        int max_instances, float *points,
                                                        float *point_scores, float *scores,
                                                        int *tracks, int *n_out);

#ifdef __cplusplus
}
#endif

#endif
