/* Peak finding on confidence maps, mirroring sleap-nn inference/ops/peaks.py:
 * global peaks (one per sample x channel), local peaks (3x3 maxima: strict in
 * sleap-nn 0.3.3, a flat top of up to 2x2 counted once in 0.3.5),
 * and integral sub-pixel refinement.
 *
 * Maps are (S, C, H, W) float32, C order. Peaks are (x, y) = (column, row) in
 * confidence-map cells; the caller applies the coordinate ladder (coords.h).
 * Nothing here allocates or keeps a pointer past the call. */
#ifndef SLEAPC_CORE_PEAKS_H
#define SLEAPC_CORE_PEAKS_H

#include <stdint.h>

#include "sleapc/sleapc.h"

/* Largest supported integral patch side. Patches of up to 22*22 < 512 values
 * stay in the range where the summation order below matches Torch's. */
#define SLEAPC_PEAKS_MAX_PATCH 22

/* Integral refinement (`integral_regression` on a `crop_bboxes` patch) of the
 * grid peak (px, py) of one (h, w) map: a k x k patch starting at
 * (px - k/2, py - k/2), zero outside the map, offsets sum(g * patch) / sum(patch)
 * with g_j = j - (k-1)/2, summed in Torch's order. Offsets are not clamped, and
 * a patch that sums to 0 gives NaN. out_x/out_y: float32(p + offset).
 * k: 1..SLEAPC_PEAKS_MAX_PATCH. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__peaks_refine_integral(const float *map, int64_t h, int64_t w, int k,
                                            int64_t px, int64_t py, float *out_x, float *out_y);

/* Global peak of each (sample, channel) map (`find_global_peaks`):
 * x = first column holding the maximum, y = first row holding it, found
 * independently (with two equal maxima, (x, y) need not be one of them).
 * A maximum below threshold (strictly less, compared in float32) gives NaN
 * coordinates and value 0; a maximum equal to it is kept. Kept peaks are
 * refined when refine_k > 0 (see sleapc__peaks_refine_integral); values are
 * never refined.
 * cms: (s, c, h, w). threshold: rounded to float32 like Torch does.
 * refine_k: 0 = no refinement, else the patch side.
 * peaks: (s, c, 2) out, (x, y). vals: (s, c) out.
 * Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (NULL, bad sizes, bad refine_k). */
sleapc_status sleapc__peaks_find_global(const float *cms, int64_t s, int64_t c, int64_t h,
                                        int64_t w, double threshold, int refine_k, float *peaks,
                                        float *vals);

/* An upper bound on the number of local peaks of (s, c, h, w) maps (two
 * peaks cannot touch, strict or flat-topped: of two neighbours, the later
 * one in raster order would have to be both above and at most the earlier,
 * so each 2x2 block holds at most one), for sizing the output arrays once.
 * -1 when the sizes are invalid or the bound overflows. */
int64_t sleapc__peaks_local_max_count(int64_t s, int64_t c, int64_t h, int64_t w);

/* Local peaks of sleap-nn 0.3.3's `find_local_peaks` (and of the device
 * finders, backend.h): pixels strictly greater than all 8 neighbours
 * (out-of-map neighbours count as -inf) and strictly greater than threshold
 * (float32). Flat plateaus give no peak. Order: sample, then row,
 * then column, then channel (Torch `where` over (S, H, W, C)). Peaks are
 * refined when refine_k > 0; values are the grid values.
 * capacity: room in the output arrays; the first min(total, capacity) peaks
 * are written and *n_found gets the total, so a call with capacity 0 counts.
 * peaks: (capacity, 2) out, (x, y). vals: (capacity) out. sample_inds,
 * channel_inds: (capacity) out. Outputs may be NULL when capacity is 0.
 * Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (NULL, bad sizes, s or c beyond
 * int32, bad refine_k). */
sleapc_status sleapc__peaks_find_local(const float *cms, int64_t s, int64_t c, int64_t h, int64_t w,
                                       double threshold, int refine_k, int64_t capacity,
                                       float *peaks, float *vals, int32_t *sample_inds,
                                       int32_t *channel_inds, int64_t *n_found);

/* Local peaks of sleap-nn 0.3.5's `find_local_peaks` (#781): as above, but a
 * flat top of equal pixels that fits in a 2x2 block is one peak, found at its
 * first pixel in raster order and placed at the mean of its pixels'
 * coordinates (peaks_flat_top.h); a wider top, or one touching a higher
 * pixel, gives none. With refine_k > 0 a fractional peak is refined around
 * the pixel it floors to, as sleap-nn does. Same arguments and order. */
sleapc_status sleapc__peaks_find_local_flat(const float *cms, int64_t s, int64_t c, int64_t h,
                                            int64_t w, double threshold, int refine_k,
                                            int64_t capacity, float *peaks, float *vals,
                                            int32_t *sample_inds, int32_t *channel_inds,
                                            int64_t *n_found);

#endif
