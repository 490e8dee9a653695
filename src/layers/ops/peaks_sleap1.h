/* Peak finding as SLEAP 1.x does it (sleap/nn/peak_finding.py), for legacy
 * models. The grid peaks are the ones of peaks.h (same maxima, same order);
 * what differs is the refinement, which samples the patch with
 * tf.image.crop_and_resize around the grid peak, and the global peaks below
 * the threshold, which keep their value.
 *
 * refine_k: the integral patch side (SLEAP's integral_patch_size, 1..
 * SLEAPC_PEAKS_MAX_PATCH), or 0 for SLEAP's "local" refinement (a quarter
 * pixel towards the larger neighbour, used when integral refinement is off).
 * Maps are (S, C, H, W) float32; peaks (x, y) in map cells. Nothing here
 * allocates or keeps a pointer past the call. */
#ifndef SLEAPC_LAYERS_OPS_PEAKS_SLEAP1_H
#define SLEAPC_LAYERS_OPS_PEAKS_SLEAP1_H

#include <stdint.h>

#include "core/peaks.h"

/* Refine the grid peak xy (x, y, whole cells) of one (h, w) map in place:
 *   integral (find_*_peaks, refinement="integral"): box = peak -+ (k - 1) / 2
 *     cropped with crop_and_resize (zero outside the map), offsets
 *     sum(g * patch) / sum(patch) with g_j = j - (k - 1) / 2, added in float32
 *     (a patch summing to 0 gives NaN or inf, as in SLEAP);
 *   local (refinement="local", k = 0): 3x3 box, offset 0.25 * sign(right -
 *     left) and 0.25 * sign(bottom - top).
 * A NaN peak stays NaN. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__peaks_sleap1_refine(const float *map, int64_t h, int64_t w, int refine_k,
                                          float xy[2]);

/* find_global_peaks: the global peak of every (sample, channel) map as
 * sleapc__peaks_find_global finds it; a maximum below the threshold (float32,
 * strictly less) gives NaN coordinates but keeps its value (SLEAP's instance
 * score of single-instance models sums those values); kept peaks are refined.
 * peaks: (s, c, 2) out; vals: (s, c) out. Returns SLEAPC_OK or
 * SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__peaks_sleap1_find_global(const float *cms, int64_t s, int64_t c, int64_t h,
                                               int64_t w, double threshold, int refine_k,
                                               float *peaks, float *vals);

/* find_local_peaks: the local peaks of sleapc__peaks_find_local (same
 * arguments, capacity semantics and order), refined as above. */
sleapc_status sleapc__peaks_sleap1_find_local(const float *cms, int64_t s, int64_t c, int64_t h,
                                              int64_t w, double threshold, int refine_k,
                                              int64_t capacity, float *peaks, float *vals,
                                              int32_t *sample_inds, int32_t *channel_inds,
                                              int64_t *n_found);

#endif
