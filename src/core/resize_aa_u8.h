/* Antialiased bilinear resize of uint8 (C,H,W) images in integer arithmetic,
 * bit-exact with PyTorch 2.x's native uint8 kernel: what torchvision v2
 * `resize(..., antialias=True)` runs on a uint8 CPU tensor where PyTorch
 * reports AVX2, AVX-512 or an ARM64 machine (sleap-nn 0.3.5's resizes).
 * Weights are computed in double, scaled to int16 with one precision per
 * axis, and each pass rounds to uint8 (width pass first). resize_aa.h keeps
 * the float path of PyTorch 1.13 (the sleap-nn 0.3.3 reference data). */
#ifndef SLEAPC_CORE_RESIZE_AA_U8_H
#define SLEAPC_CORE_RESIZE_AA_U8_H

#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* Bytes of scratch to resize (c, in_h, in_w) to (out_h, out_w): 0 when the
 * sizes are equal. SLEAPC_ERR_INVALID_ARG for a size < 1 or an overflow. */
sleapc_status sleapc__resize_aa_u8_int_scratch_size(int64_t c, int64_t in_h, int64_t in_w,
                                                    int64_t out_h, int64_t out_w, size_t *out);

/* Resize src (c, in_h, in_w) into dst (c, out_h, out_w); scratch as sized
 * above, aligned for double (any sleapc__malloc block is), NULL when that
 * size is 0. src and dst must not overlap. */
sleapc_status sleapc__resize_aa_u8_int(const uint8_t *src, int64_t c, int64_t in_h, int64_t in_w,
                                       uint8_t *dst, int64_t out_h, int64_t out_w, void *scratch);

#endif
