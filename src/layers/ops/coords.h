/* The coordinate ladder of sleap-nn inference/ops/coord.py, from confidence-map
 * cells to original-frame pixels: undo stride, undo input scale, (top-down)
 * add crop offset, undo eff scale, in that order.
 *
 * Each step is one float32 operation per coordinate with its factor first
 * rounded to float32 (Torch holds these as float32), and is skipped when it is
 * the identity. NaN coordinates stay NaN. xy is (n, 2) float32, (x, y) pairs,
 * updated in place; n may be 0 (xy may then be NULL). */
#ifndef SLEAPC_LAYERS_OPS_COORDS_H
#define SLEAPC_LAYERS_OPS_COORDS_H

#include <stdint.h>

/* xy *= float(stride): confmap cell i sits at input pixel i*stride (no
 * half-pixel shift). */
void sleapc__coords_undo_stride(float *xy, int64_t n, double stride);

/* xy /= float(input_scale). */
void sleapc__coords_undo_input_scale(float *xy, int64_t n, double input_scale);

/* SLEAP 1.x's input-scale step (sleap/nn/inference.py, every inference layer:
 * "(peaks / self.input_scale) + 0.5"): when input_scale != 1, xy = xy /
 * float(input_scale) + 0.5 in float32; identity at 1. The constant offsets
 * TensorFlow's resize convention; it is exact only at scale 1/2. */
void sleapc__coords_undo_input_scale_sleap1(float *xy, int64_t n, double input_scale);

/* xy += (ox, oy): top-down lift of crop-local points by the box's fractional
 * top-left (the +0.5 included). */
void sleapc__coords_add_offset(float *xy, int64_t n, float ox, float oy);

/* xy /= float(eff_scale): from size-matched back to original-frame pixels. */
void sleapc__coords_undo_eff_scale(float *xy, int64_t n, double eff_scale);

/* xy *= float(eff_scale): original-frame points into the size-matched image
 * (top-down crop centres). */
void sleapc__coords_apply_eff_scale(float *xy, int64_t n, double eff_scale);

#endif
