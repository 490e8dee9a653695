/* How often bf16 rounding would move a confidence-map peak, estimated from
 * one batch run both in bf16 and in float32.
 *
 * A keypoint is the refined position of a maximum of its map. bf16 moves it
 * by a grid cell or more (beyond any sub-pixel refinement) when the rounding
 * reverses the order of the maximum and a neighbour; on a head that keeps
 * only its global maximum (single instance, centered instance) also when it
 * reverses the order of the two highest maxima, gap g apart; it drops or
 * adds a peak when it carries the maximum across the peak threshold t.
 * Taking the changes as normal, with the spreads measured over the batch's
 * peaks (sigma_d of differences with a neighbour, sigma_v of values), a peak
 * of float32 value v moves with probability
 *   sqrt(2/pi) sigma_d (1/k_x + 1/k_y) + 0.5 erfc(g / (2 sigma_v))
 * where k is the peak's second difference along each axis (bf16_fragility.c
 * derives the first term from where a peak may lie between two cells), and
 * crosses the threshold with 0.5 erfc(|v - t| / (sqrt2 sigma_v)). Their mean
 * over the peaks is the expected share of keypoints that bf16 moves or
 * drops: an estimate from the peaks' shapes, usable from a few frames, where
 * counting the few jumps one batch shows would not be. */
#ifndef SLEAPC_LAYERS_BF16_FRAGILITY_H
#define SLEAPC_LAYERS_BF16_FRAGILITY_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/tensor.h"

typedef struct sleapc_bf16_fragility {
    int64_t peaks;      /* float32 local maxima at or above the threshold */
    double sigma_d;     /* rms change of peak - neighbour differences */
    double sigma_v;     /* rms change of peak values */
    double moved;       /* expected share of peaks moved by a grid cell */
    double crossed;     /* expected share of peaks dropped or added */
} sleapc_bf16_fragility;

/* Over n pairs of maps b16[i], b32[i] ((B, C, H, W) float32, each pair of
 * one shape; the spreads are pooled over all of them); global[i]: the head
 * keeps each channel's global maximum only. */
sleapc_bf16_fragility sleapc__bf16_fragility(const sleapc_tensor *const *b16,
                                             const sleapc_tensor *const *b32,
                                             const bool *global, int n, float threshold);

#endif
