/* Pose prediction: one or two model folders -> instances per frame, with
 * sleap-nn's preprocessing, peak finding, grouping and identity logic. */
#ifndef SLEAPC_PREDICTOR_H
#define SLEAPC_PREDICTOR_H

#include "sleapc/frame.h"
#include "sleapc/model.h"
#include "sleapc/runner.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Options, with sleap-nn's names and defaults (sleapc_predictor_opts_default).
 * "From the config" values are taken from the model's training_config.yaml.
 * Start from sleapc_predictor_opts_default(): it sets struct_size (see
 * sleapc.h: an older, smaller struct gets defaults for the fields it lacks).
 * Strings are copied. */
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
    sleapc_compat compat;            /* DEFAULT: the newest sleap-nn release followed
                                        (sleapc.h); recorded in the provenance */
    double bbox_nms_iou;             /* box detectors (bbox_centernet, bbox_ssd): the
                                        class-wise IoU-NMS threshold; NaN: the model's
                                        default (none for CenterNet, 0.45 for SSD);
                                        < 0: none. Other models ignore it */
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

/* sleap-nn's layer name: "SingleInstanceLayer", "TopDownLayer", ... Static. */
SLEAPC_API const char *sleapc_predictor_layer_name(const sleapc_predictor *p);
/* The skeleton instances are reported in (the pose model's, as
 * sleapc_model_skeleton gives it; a centroid model without node names has
 * one node, "centroid") and the class names of multi-class models. Owned by
 * the predictor. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (NULL). */
SLEAPC_API sleapc_status sleapc_predictor_skeleton(const sleapc_predictor *p,
                                                   sleapc_skeleton *out);
SLEAPC_API int sleapc_predictor_batch_size(const sleapc_predictor *p);

/* Predict on frames->n_frames equally sized frames (gray, RGB or BGR rows,
 * padded or not: sleapc_frame). Results replace the previous run's. Returns
 * SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (bad frames; frames larger than the
 * crop of a centered-instance model alone) and others. */
SLEAPC_API sleapc_status sleapc_predictor_run(sleapc_predictor *p, const sleapc_frame *frames);

/* Where time went since the predictor was created (or stats were reset):
 * frames predicted, seconds in network forward passes, seconds in
 * sleapc_predictor_run altogether (preprocessing, network, post-processing). */
typedef struct sleapc_predictor_stats {
    int64_t frames;
    double network_s;
    double run_s;
} sleapc_predictor_stats;
SLEAPC_API sleapc_predictor_stats sleapc_predictor_get_stats(const sleapc_predictor *p);
/* Zero the stats. */
SLEAPC_API void sleapc_predictor_reset_stats(sleapc_predictor *p);

/* What each network stage runs on now: its model folder, the backend that
 * runs it ("auto" resolved to the backend it chose once it has measured) and
 * the precision it computes in (FP32 once a bf16 or fp16 model fell back
 * after its first batch). bf16_error: the worst head's relative L2 from
 * float32 on the first bf16 (or fp16) batch; bf16_moved: the share of
 * keypoints that precision was expected to move by a grid cell or drop, from
 * that batch; each -1 when not measured.
 * Strings belong to the predictor. */
typedef struct sleapc_stage_info {
    const char *model;
    const char *backend;
    sleapc_precision precision;
    double bf16_error;
    double bf16_moved;
    const char *device;      /* "cpu", "cuda:0", "mps", "gpu:1" */
    const char *device_name; /* the GPU's name; "" on the CPU */
    int fp16_arithmetic;     /* fp16: 1 when products are computed in binary16 too
                                (Vulkan, shaderFloat16), 0 for fp16 storage with
                                float32 arithmetic; 0 at other precisions */
} sleapc_stage_info;
/* Stages of the predictor's layer (1 or 2). */
SLEAPC_API int sleapc_predictor_n_stages(const sleapc_predictor *p);
/* Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (no such stage, NULL out). */
SLEAPC_API sleapc_status sleapc_predictor_stage_info(const sleapc_predictor *p, int i,
                                                     sleapc_stage_info *out);
/* "fp32", "bf16", "fp16" or "bf16-emulated". */
SLEAPC_API const char *sleapc_precision_name(sleapc_precision precision);

/* Frames of the last run (a stream's last frame is frame 0). */
SLEAPC_API int sleapc_predictor_n_frames(const sleapc_predictor *p);

/* Where sleapc_predictor_frame_results copies a frame's instances: arrays
 * of the caller's, each with room for max_instances instances; any may be
 * NULL (not wanted).
 *   points           (max_instances, n_nodes, 2) x, y; NaN = missing
 *   point_scores     (max_instances, n_nodes)
 *   scores           (max_instances) instance scores (sleap-nn's, per model type)
 *   tracks           (max_instances) class index of multi-class models, -1 = none
 *   tracking_scores  (max_instances) NaN when none
 *   centroids        (max_instances, 2) top-down: the centroid each instance
 *                    was found from; NaN for other models
 *   centroid_scores  (max_instances) NaN for other models */
typedef struct sleapc_results {
    int max_instances;
    float *points;
    float *point_scores;
    float *scores;
    int *tracks;
    float *tracking_scores;
    float *centroids;
    float *centroid_scores;
} sleapc_results;

/* The one way to read results: every instance of one frame of the last run
 * at once, in the layer's order (instances whose points are all missing are
 * left out, as sleap-nn does), copied into out (NULL: only count them).
 * *n_out is the frame's instance count; when it exceeds out->max_instances
 * only the first max_instances are copied. Returns SLEAPC_OK or
 * SLEAPC_ERR_INVALID_ARG (no such frame, max_instances < 0, NULL n_out). */
SLEAPC_API sleapc_status sleapc_predictor_frame_results(const sleapc_predictor *p, int frame,
                                                        const sleapc_results *out, int *n_out);

#ifdef __cplusplus
}
#endif

#endif
