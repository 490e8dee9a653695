/* float32 arithmetic of numpy as sleap-nn's appearance code runs it on its
 * float32 re-ID vectors: where the calibration's statistics depend on the
 * rounding of float32 sums, these follow numpy's order (pairwise summation
 * for norms; einsum's baseline SSE kernel, four lanes and no fused
 * multiply-add, for dot products). */
#ifndef SLEAPC_PIPELINE_TRACKING_MOT_MOT_F32_H
#define SLEAPC_PIPELINE_TRACKING_MOT_MOT_F32_H

#include <stdbool.h>

#include "pipeline/tracking/mot/mot_detect.h"

/* np.linalg.norm of n float32 values (float32 result). */
float sleapc__mot_norm_f32(const float *x, int n);

/* np.einsum's float32 dot product of n values. */
float sleapc__mot_dot_f32(const float *a, const float *b, int n);

/* Detection d's vector as FrameDetections holds it: float32 of the stored
 * vector divided by its float64 norm (out NULL: only whether it has one).
 * false (out untouched) when it has none, or one that is non-finite or
 * zero. */
bool sleapc__mot_det_unit(const mot_video *v, int64_t d, float *out);

#endif
