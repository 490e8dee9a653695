/* Per-frame input preprocessing of SLEAP 1.x (TensorFlow) for legacy models,
 * the counterpart of preprocess.h: the predictor's data pipeline
 * (sleap/nn/inference.py Predictor.make_pipeline: SizeMatcher, then
 * Normalizer's colour coercion) and InferenceLayer.preprocess (colour, uint8
 * -> float32 in [0, 1], input-scale resize, pad to stride), in that order.
 * The model input is float32; nothing is rounded after the size matcher.
 *
 * Images are one frame at a time, (C,H,W), C order. Nothing here allocates or
 * keeps a pointer: outputs and scratch come from the caller. */
#ifndef SLEAPC_LAYERS_OPS_PREPROCESS_TF_H
#define SLEAPC_LAYERS_OPS_PREPROCESS_TF_H

#include "layers/ops/preprocess.h"

/* The chain's sizes go in a sleapc_preprocess_plan with sleap-nn's field
 * names, so layers read sizes, eff_scale and opts.scale the same way for both
 * conventions: match_h/w is the size matcher's resized content, sized_h/w its
 * padded target, pad_top/pad_left where resize_with_pad centres the content,
 * scaled_h/w the input-scale size, out_h/w the model input. c is the model's
 * channel count (from opts: ensure_grayscale -> 1, ensure_rgb -> 3, else the
 * frame's). */

/* TensorFlow's rgb_to_grayscale on one uint8 pixel: float32 channels x (1 /
 * 255), weighted 0.2989 / 0.5870 / 0.1140, then x 255.5 and truncated. */
uint8_t sleapc__preprocess_tf_luma_u8(uint8_t r, uint8_t g, uint8_t b);

/* SizeMatcher sizes for an (h, w) frame and a target (max_h, max_w) (0 = the
 * frame's own, i.e. no-op): ratios max / float32(size); the axis with the
 * smaller ratio fills its target, the other gets int32(float32(size) *
 * ratio); eff_scale is that ratio (float32). Then tf.image.resize_with_pad's
 * own sizes: content floor(size / r), r = max(w / tw, h / th), centred with
 * offsets floor((target - size / r) / 2). Fills match_h/w, sized_h/w,
 * eff_scale, pad_top, pad_left of out; frames already of the target size
 * give eff 1 and no resize. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__preprocess_tf_size_match(int64_t h, int64_t w, int64_t max_h, int64_t max_w,
                                               sleapc_preprocess_plan *out);

/* Work out every size of the chain for a (c, h, w) frame and the scratch it
 * needs. opts: scale (input scaling), max_stride (pad to stride),
 * max_height/max_width (size-matcher target, 0 = none), ensure_rgb /
 * ensure_grayscale (the model's channel count). Returns SLEAPC_OK,
 * SLEAPC_ERR_INVALID_ARG or SLEAPC_ERR_UNSUPPORTED (channel count). */
sleapc_status sleapc__preprocess_tf_plan_make(const sleapc_preprocess_opts *opts, int64_t c,
                                              int64_t h, int64_t w,
                                              sleapc_preprocess_plan *out);

/* The pipeline part on one frame: size matcher and colour coercion, src
 * (src_c, src_h, src_w) uint8 into dst (c, sized_h, sized_w) uint8, the frame
 * SLEAP's top-down layer crops from. scratch: plan->scratch_bytes bytes,
 * aligned for float (NULL allowed when 0), not overlapping src or dst.
 * Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__preprocess_tf_run_u8(const sleapc_preprocess_plan *plan,
                                           const uint8_t *src, uint8_t *dst, void *scratch);

/* The whole chain on one frame: src (src_c, src_h, src_w) uint8 into dst (c,
 * out_h, out_w) float32 in [0, 1]. scratch as above. Returns SLEAPC_OK or
 * SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__preprocess_tf_run(const sleapc_preprocess_plan *plan, const uint8_t *src,
                                        float *dst, void *scratch);

#endif
