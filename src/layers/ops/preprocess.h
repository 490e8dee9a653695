/* Per-frame input preprocessing, mirroring sleap-nn's
 * `InferenceLayer._apply_full_preprocess` (layers/base.py): channel coercion,
 * size matcher (resize + bottom/right zero pad), input-scale resize, pad to the
 * backbone's max stride, in that order, each skipped when it is the identity.
 *
 * Images are one frame at a time, (C,H,W) uint8, C order. Nothing here
 * allocates or keeps a pointer: outputs and scratch come from the caller. */
#ifndef SLEAPC_LAYERS_OPS_PREPROCESS_H
#define SLEAPC_LAYERS_OPS_PREPROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* Resolved preprocessing knobs of one layer (sleap-nn `PreprocessConfig` plus
 * the backbone max stride). */
typedef struct sleapc_preprocess_opts {
    bool ensure_rgb;       /* 1 channel -> 3 by replication (4 -> 3: alpha dropped) */
    bool ensure_grayscale; /* 3 (or 4) channels -> 1 by truncating luma; ignored when
                              ensure_rgb is set */
    int64_t max_height;    /* size matcher target; 0 = unset (use the frame's) */
    int64_t max_width;     /* size matcher target; 0 = unset (use the frame's) */
    double scale;          /* input scale; 1.0 = none. Must be > 0 */
    int64_t max_stride;    /* pad H and W up to a multiple; <= 1 = none */
    bool u8_int_resize;    /* resizes by PyTorch 2.x's uint8 kernel (resize_aa_u8.h,
                              sleap-nn 0.3.5), else by its float path (resize_aa.h,
                              PyTorch 1.13: the sleap-nn 0.3.3 data) */
} sleapc_preprocess_opts;

/* Every intermediate size of the chain for one input frame size. */
typedef struct sleapc_preprocess_plan {
    sleapc_preprocess_opts opts;
    int64_t src_c, src_h, src_w; /* the input frame */
    int64_t c;                   /* channels after coercion (= channels of every later step) */
    int64_t match_h, match_w;    /* size-matcher resize target, before its pad */
    int64_t sized_h, sized_w;    /* after the size matcher (resize + pad) */
    double eff_scale;            /* size-matcher scale, 1.0 when it is a no-op; the
                                    coordinate ladder uses (float)eff_scale */
    int64_t pad_top, pad_left;   /* where the size matcher puts its content: 0 here
                                    (bottom/right pad); SLEAP 1.x's resize_with_pad
                                    centres it (preprocess_tf.h) */
    int64_t scaled_h, scaled_w;  /* after the input-scale resize */
    int64_t out_h, out_w;        /* after the stride pad: the model input size */
    size_t scratch_bytes;        /* scratch sleapc__preprocess_run_u8 needs */
} sleapc_preprocess_plan;

/* sleap-nn `apply_sizematcher` sizes for an (h, w) frame: the resize target
 * (out_h, out_w) and eff_scale. max_h/max_w of 0 mean "the frame's own".
 * Frames already of size (max_h, max_w) give eff 1 and no resize; otherwise
 * hr = max_h/h, wr = max_w/w, eff = wr if hr > wr else hr, target =
 * (round(h*eff), round(w*eff)) with Python's half-to-even round, all in double.
 * (This can upscale as well as downscale.) Returns SLEAPC_OK or
 * SLEAPC_ERR_INVALID_ARG (non-positive sizes, a target that rounds to 0). */
sleapc_status sleapc__preprocess_size_match(int64_t h, int64_t w, int64_t max_h, int64_t max_w,
                                            int64_t *out_h, int64_t *out_w, double *eff_scale);

/* sleap-nn `resize_image` sizes: (int(h*scale), int(w*scale)) (truncation).
 * Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (scale <= 0 or not finite, a size
 * that becomes 0 or too large). */
sleapc_status sleapc__preprocess_scaled_size(int64_t h, int64_t w, double scale, int64_t *out_h,
                                             int64_t *out_w);

/* sleap-nn `apply_pad_to_stride` sizes: h + (s - h % s) % s, likewise w;
 * identity for stride <= 1. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__preprocess_stride_size(int64_t h, int64_t w, int64_t stride, int64_t *out_h,
                                             int64_t *out_w);

/* Copy src (c, h, w) into the top-left of dst (c, dst_h, dst_w) and zero the
 * bottom rows and right columns. Requires dst_h >= h, dst_w >= w; src and dst
 * must not overlap. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__preprocess_pad_u8(const uint8_t *src, int64_t c, int64_t h, int64_t w,
                                        uint8_t *dst, int64_t dst_h, int64_t dst_w);

/* Work out every size of the chain for a (c, h, w) frame and the scratch it
 * needs. opts is copied into out. Returns SLEAPC_OK, SLEAPC_ERR_INVALID_ARG
 * (NULL, bad sizes or options) or SLEAPC_ERR_UNSUPPORTED (channel count). */
sleapc_status sleapc__preprocess_plan_make(const sleapc_preprocess_opts *opts, int64_t c, int64_t h,
                                           int64_t w, sleapc_preprocess_plan *out);

/* Run the whole chain on one frame: src (plan->src_c, src_h, src_w) into dst
 * (plan->c, out_h, out_w). scratch: plan->scratch_bytes bytes, aligned for
 * int64_t (NULL allowed when that is 0); it holds the intermediate images, so
 * it must not overlap src or dst. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG. */
sleapc_status sleapc__preprocess_run_u8(const sleapc_preprocess_plan *plan, const uint8_t *src,
                                        uint8_t *dst, void *scratch);

#endif
