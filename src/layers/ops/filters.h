/* Post-inference instance filters of sleap-nn's inference/filters.py
 * (FilterConfig, FilterPipeline). All are off by default; a default config
 * leaves the outputs untouched. Pure functions on plain arrays, applied in
 * place. */
#ifndef SLEAPC_LAYERS_OPS_FILTERS_H
#define SLEAPC_LAYERS_OPS_FILTERS_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

typedef enum sleapc_filter_overlap_method {
    SLEAPC_FILTER_OVERLAP_IOU = 0, /* IoU of the keypoints' bounding boxes */
    SLEAPC_FILTER_OVERLAP_OKS      /* object keypoint similarity, kappa 0.1 */
} sleapc_filter_overlap_method;

/* FilterConfig; defaults (sleapc__filters_config_default) in brackets. */
typedef struct sleapc_filter_config {
    double min_peak_value;            /* [0 = off] NaN out points with a lower value */
    double min_instance_score;        /* [0 = off] drop instances scoring lower */
    double min_mean_node_score;       /* [0 = off] drop on nanmean(point values) (NaN = 0) */
    int min_visible_nodes;            /* [0 = off] drop with fewer non-NaN points */
    double min_visible_node_fraction; /* [0 = off] drop below this visible fraction */
    bool overlapping;                 /* [false] greedy overlap NMS per frame */
    double overlapping_threshold;     /* [0.8] drop when similarity > threshold */
    sleapc_filter_overlap_method overlapping_method; /* [IOU] */
    double min_centroid_distance;                    /* [0 = off] centroid NMS radius, pixels */
} sleapc_filter_config;

sleapc_filter_config sleapc__filters_config_default(void);

/* One batch of layer outputs, updated in place. Sizes are required; every
 * array is optional (NULL = the layer did not produce it), as in Outputs. A
 * dropped instance gets NaN in every present array, shapes unchanged. */
typedef struct sleapc_filter_outputs {
    int64_t n_frames, n_slots, n_nodes;
    float *keypoints;       /* (n_frames, n_slots, n_nodes, 2) */
    float *peak_values;     /* (n_frames, n_slots, n_nodes) */
    float *instance_scores; /* (n_frames, n_slots) */
    float *centroids;       /* (n_frames, n_slots, 2) */
    float *centroid_values; /* (n_frames, n_slots) */
} sleapc_filter_outputs;

/* Run the configured filters in FilterPipeline.apply's fixed order:
 * min_peak_value, node count, confidence, overlap NMS, centroid distance.
 * Overlap NMS is skipped for centroid-only outputs, and OKS falls back to IoU
 * for single-node skeletons, as in sleap-nn.
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG for bad sizes or a NULL cfg / io;
 * SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__filters_apply(const sleapc_filter_config *cfg, sleapc_filter_outputs *io);

/* Similarity measures of the overlap filter, on two (n_nodes, 2) instances
 * with NaN for missing points; returned as float64 like Tensor.item().
 * IoU of the boxes spanned by each instance's visible points (0 when either
 * has none or the union is 0). */
double sleapc__filters_bbox_iou(const float *a, const float *b, int64_t n_nodes);

/* OKS over points visible in both: mean(exp(-d^2 / (2 * area(a) * 0.1^2))),
 * area(a) = box area of a's visible points; 0 when a has fewer than 2
 * visible points, none is shared, or the area is not positive. */
double sleapc__filters_oks(const float *a, const float *b, int64_t n_nodes);

#endif
