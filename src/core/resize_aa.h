/* Antialiased bilinear resize of (C,H,W) images, bit-exact with torchvision v2
 * `resize(..., antialias=True)` on its float path (Torch's
 * `_upsample_bilinear2d_aa`, separable: width pass first, then height).
 *
 * uint8 images go through float32 and are rounded half-to-even at the end, as
 * torchvision does when it cannot use the native uint8 kernel. No function
 * here allocates: the caller provides the scratch, sized by
 * sleapc__resize_aa_scratch_size(). */
#ifndef SLEAPC_CORE_RESIZE_AA_H
#define SLEAPC_CORE_RESIZE_AA_H

#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* Bytes of scratch needed to resize a (c, in_h, in_w) image to (out_h, out_w).
 * All sizes must be >= 1. out: the byte count (0 when no scratch is needed,
 * i.e. the sizes are equal). Returns SLEAPC_OK, or SLEAPC_ERR_INVALID_ARG for
 * a non-positive size or a byte count that would overflow. */
sleapc_status sleapc__resize_aa_scratch_size(int64_t c, int64_t in_h, int64_t in_w, int64_t out_h,
                                             int64_t out_w, size_t *out);

/* Resize src (c, in_h, in_w) uint8 into dst (c, out_h, out_w) uint8.
 * scratch: at least sleapc__resize_aa_scratch_size() bytes, aligned for
 * int64_t (any sleapc__malloc block is); may be NULL when that size is 0.
 * src and dst must not overlap. Nothing is kept after the call.
 * Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (NULL pointer, bad size). */
sleapc_status sleapc__resize_aa_u8(const uint8_t *src, int64_t c, int64_t in_h, int64_t in_w,
                                   uint8_t *dst, int64_t out_h, int64_t out_w, void *scratch);

/* The same for float32 images (no rounding at the end). */
sleapc_status sleapc__resize_aa_f32(const float *src, int64_t c, int64_t in_h, int64_t in_w,
                                    float *dst, int64_t out_h, int64_t out_w, void *scratch);

/* The taps of one axis resized from `in` to `out` samples (both >= 1), as the
 * resize computes them, for a device that repeats its sums: the most taps an
 * output reads, then per output its first tap and tap count (bounds: (out, 2))
 * and its normalised weights (weights: (out, max_taps), 0 past its count).
 * An output's sum is x[lo] * w[0], then taps 1 .. 1 + (n - 1) / 4 * 4 - 1 as
 * rounded product plus rounded sum, then the rest fused (fmaf). */
int64_t sleapc__resize_aa_max_taps(int64_t in, int64_t out);
void sleapc__resize_aa_axis(int64_t in, int64_t out, int64_t *bounds, float *weights);

#endif
