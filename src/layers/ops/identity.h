/* Identity assignment for multi-class models. Mirrors sleap-nn's
 * ops/identity.py (classify_peaks_from_maps, group_class_peaks,
 * get_class_inds_from_vectors) and the parts of
 * layers/bottomup_multiclass.py and layers/topdown.py (_run_stage_2) that
 * turn classes into output slots. Pure functions on plain arrays. */
#ifndef SLEAPC_LAYERS_OPS_IDENTITY_H
#define SLEAPC_LAYERS_OPS_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include "layers/ops/hungarian.h"
#include "sleapc/sleapc.h"

/* Scratch kept by a caller across calls, so a steady run allocates nothing:
 * zero-initialise it, pass it to any number of the functions below and
 * release it with sleapc__identity_ws_free. It grows (geometrically) to the
 * largest call seen and never shrinks; it stays valid after a failure. Every
 * function taking one also accepts NULL and then uses a temporary workspace
 * freed before it returns. One workspace serves one thread at a time. */
typedef struct sleapc_identity_ws {
    void *block;              /* owned; the arrays of one call */
    size_t cap;               /* bytes in block */
    sleapc_hungarian_ws hws;  /* the assignment solver's scratch */
} sleapc_identity_ws;

/* Frees the scratch and zeroes *ws. Accepts NULL and a zeroed workspace. */
void sleapc__identity_ws_free(sleapc_identity_ws *ws);

/* ---- multi-class bottom-up (class maps) ---- */

/* Classify local peaks by class maps (classify_peaks_from_maps).
 * For each peak the class vector is read at round-half-even(peak / stride),
 * (y, x) clamped to the map; then per (sample, node), scipy's assignment on
 * -probability matches peaks to classes, and a match is kept only when its
 * probability equals the peak's largest class probability (exact float32
 * equality). Kept peaks are scattered into slot = class.
 *
 * class_maps: (n_samples, n_classes, map_h, map_w) float32.
 * class_maps_stride: input pixels per class-map cell (>= 1).
 * ws: scratch (see sleapc_identity_ws), or NULL.
 * peaks: (n_peaks, 2) (x, y) in input pixels (grid peak x confmap stride);
 *   peak_vals, sample_inds, channel_inds: (n_peaks,); sample in
 *   [0, n_samples), node in [0, n_nodes).
 * points: out (n_samples, n_classes, n_nodes, 2), (peak / stride) * stride
 *   in float32, as sleap-nn computes it; NaN where no peak.
 * point_vals, class_probs: out (n_samples, n_classes, n_nodes); NaN where no
 *   peak.
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG for bad sizes or indices, or NaN
 * or +inf class probabilities (scipy refuses those); SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__identity_classify_peaks(const float *class_maps, int64_t n_samples,
                                              int64_t n_classes, int64_t map_h, int64_t map_w,
                                              int class_maps_stride, const float *peaks,
                                              const float *peak_vals, const int32_t *sample_inds,
                                              const int32_t *channel_inds, int64_t n_peaks,
                                              int64_t n_nodes, sleapc_identity_ws *ws,
                                              float *points, float *point_vals,
                                              float *class_probs);

/* sleapc__identity_classify_peaks in two steps, for class maps sampled
 * elsewhere (on a device, backend.h's device_sample_head): the cell each
 * peak's class vector is read at, (sample, y, x) as above, for n_peaks
 * (cells (n_peaks, 3)); then the classification from the class vectors
 * read there, sampled (n_peaks, n_classes), with the other arguments and
 * results of sleapc__identity_classify_peaks. The same results, bit for bit,
 * when sampled holds the maps' values at those cells. */
void sleapc__identity_class_cells(const float *peaks, const int32_t *sample_inds, int64_t n_peaks,
                                  int64_t map_h, int64_t map_w, int class_maps_stride,
                                  int32_t (*cells)[3]);
sleapc_status sleapc__identity_classify_sampled(const float *sampled, int64_t n_samples,
                                                int64_t n_classes, int64_t map_h, int64_t map_w,
                                                int class_maps_stride, const float *peaks,
                                                const float *peak_vals,
                                                const int32_t *sample_inds,
                                                const int32_t *channel_inds, int64_t n_peaks,
                                                int64_t n_nodes, sleapc_identity_ws *ws,
                                                float *points, float *point_vals,
                                                float *class_probs);

/* The same with SLEAP 1.x's look-up (sleap/nn/identity.py
 * classify_peaks_from_maps): a rounded position outside the class map reads
 * probability 0 for every class (TensorFlow's GPU gather_nd) instead of the
 * clamped border. Such a peak still enters the assignment; matched to a class
 * no other peak of its node takes, it is kept with probability 0 (0 is its
 * largest probability), as SLEAP keeps it. */
sleapc_status sleapc__identity_classify_peaks_sleap1(
    const float *class_maps, int64_t n_samples, int64_t n_classes, int64_t map_h, int64_t map_w,
    int class_maps_stride, const float *peaks, const float *peak_vals, const int32_t *sample_inds,
    const int32_t *channel_inds, int64_t n_peaks, int64_t n_nodes, sleapc_identity_ws *ws,
    float *points, float *point_vals, float *class_probs);

/* The rest of BottomUpMultiClassLayer.postprocess, in place:
 * points /= input_scale, then /= eff_scale[s] (float32);
 * instance_scores = nanmean(point_vals over nodes), tracking_scores =
 * nanmean(class_probs over nodes) (NaN for an empty class);
 * then, when max_instances > 0 and a sample has more classes with a score
 * than that, the slots not among the first max_instances of numpy's
 * argsort(scores), reversed, are set to NaN (points, point_vals,
 * instance_scores, tracking_scores) without reordering. As in sleap-nn, NaN
 * scores sort first after the reversal, so empty classes can take kept
 * positions and fewer than max_instances instances may survive.
 * eff_scale: (n_samples,) or NULL for all 1. ws: scratch, or NULL.
 * instance_scores, tracking_scores: out (n_samples, n_classes).
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG; SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__identity_bottomup_finish(int64_t n_samples, int64_t n_classes,
                                               int64_t n_nodes, float input_scale,
                                               const float *eff_scale, int64_t max_instances,
                                               sleapc_identity_ws *ws, float *points,
                                               float *point_vals, const float *class_probs,
                                               float *instance_scores, float *tracking_scores);

/* ---- multi-class top-down (class vectors) ---- */

/* get_class_inds_from_vectors: scipy's assignment on -probability of rows
 * (crops) to classes. Unmatched rows (more rows than classes) get class -1
 * and probability NaN.
 * vecs: (n_rows, n_classes) float32. ws: scratch, or NULL.
 * class_inds, class_probs: out (n_rows,).
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG (bad sizes, NaN or +inf
 * probabilities); SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__identity_classes_from_vectors(const float *vecs, int64_t n_rows,
                                                    int64_t n_classes, sleapc_identity_ws *ws,
                                                    int64_t *class_inds, float *class_probs);

/* Top-down stage-2 class scatter (TopDownLayer._run_stage_2): per frame, in
 * ascending frame order, the frame's crops (in crop order) are classified
 * together with sleapc__identity_classes_from_vectors, and each crop's
 * result lands in its instance slot. Slots are not reordered by class.
 * class_vectors: (n_crops, n_classes); crop_frame, crop_slot: (n_crops,) the
 *   frame in [0, n_frames) and slot in [0, n_slots) of each crop.
 * ws: scratch, or NULL.
 * pred_class_inds: out (n_frames, n_slots, n_nodes) int64, class repeated
 *   over nodes, -1 for unmatched crops and empty slots.
 * tracking_scores: out (n_frames, n_slots), matched probability, NaN else.
 * pred_class_vectors: out (n_frames, n_slots, n_classes), each crop's vector,
 *   NaN for empty slots; may be NULL.
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG; SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__identity_topdown_assign(const float *class_vectors, int64_t n_crops,
                                              int64_t n_classes, const int64_t *crop_frame,
                                              const int64_t *crop_slot, int64_t n_frames,
                                              int64_t n_slots, int64_t n_nodes,
                                              sleapc_identity_ws *ws, int64_t *pred_class_inds,
                                              float *tracking_scores, float *pred_class_vectors);

/* SLEAP 1.x's top-down grouping (sleap/nn/identity.py
 * classify_peaks_from_vectors, group_class_peaks with one channel): per frame
 * (ascending), scipy's assignment of the frame's crops (in crop order) to
 * classes on -probability; a match is kept only when its probability equals
 * the crop's largest (exact float32 equality). Unmatched and dropped crops
 * get class -1 and probability NaN.
 * class_vectors: (n_crops, n_classes); crop_frame: (n_crops,) in
 *   [0, n_frames). ws: scratch, or NULL. crop_class, crop_prob: out (n_crops,).
 * Returns SLEAPC_OK; SLEAPC_ERR_INVALID_ARG (bad sizes or frames, NaN or
 * +inf probabilities); SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__identity_topdown_classes_sleap1(const float *class_vectors, int64_t n_crops,
                                                      int64_t n_classes,
                                                      const int64_t *crop_frame,
                                                      int64_t n_frames, sleapc_identity_ws *ws,
                                                      int64_t *crop_class, float *crop_prob);

#endif
