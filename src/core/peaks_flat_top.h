/* sleap-nn 0.3.5's rule for a local maximum with a flat top (#781,
 * inference/ops/peaks.py `find_local_peaks_rough`): equal neighbouring
 * pixels (common in fp16 maps) make one peak when they fit in a 2x2 block
 * and nothing around them is as high; the peak is the mean of their
 * coordinates. sleap-nn 0.3.3 kept only strict maxima, so such a top gave
 * no peak at all. */
#ifndef SLEAPC_CORE_PEAKS_FLAT_TOP_H
#define SLEAPC_CORE_PEAKS_FLAT_TOP_H

#include <stdbool.h>
#include <stdint.h>

/* Whether pixel (x, y) of an (h, w) map is a 0.3.5 local peak, threshold
 * aside: greater than its 4 neighbours before it in raster order (NW, N, NE,
 * W), at least its 4 after (E, SW, S, SE), out-of-map neighbours -inf (a NaN
 * neighbour rejects it, as Torch's NaN-propagating max does). Its equal
 * neighbours, all after it, form the top with it; the top must lie within
 * one 2x2 block (E, S, SE or SW, S) and no pixel next to it outside it may
 * be >= its value (a NaN there does not count). *dx, *dy: float32 offset
 * from (x, y) to the mean of the top's pixel coordinates (0 for one pixel). */
bool sleapc__peaks_flat_top(const float *map, int64_t h, int64_t w, int64_t y, int64_t x, float *dx,
                            float *dy);

#endif
