/* A uint8 image's channels converted as sleap-nn's preprocessing converts
 * them (ensure_rgb, ensure_grayscale): one definition for the host's
 * preprocessing and the device's (a backend's forward_windows). */
#ifndef SLEAPC_CORE_CHANNELS_U8_H
#define SLEAPC_CORE_CHANNELS_U8_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* Output channel count of the coercion step for a c-channel input, or -1 when
 * the requested coercion cannot apply (ensure_rgb on 2 channels, ensure_grayscale
 * on 2). */
int64_t sleapc__channels_coerced(int64_t c, bool ensure_rgb, bool ensure_grayscale);

/* torchvision v2 `_rgb_to_grayscale_image` on one uint8 pixel:
 * float32 ((0.2989*r) + 0.587*g) + 0.114*b, truncated back to uint8 (so a neutral
 * v >= 1 becomes v - 1). */
uint8_t sleapc__channels_luma_u8(uint8_t r, uint8_t g, uint8_t b);

/* Channel coercion of src (c, h, w) into dst (c', h, w), c' from
 * sleapc__channels_coerced(). With neither flag set, or when the
 * image already has the wanted channel count, dst is a copy. src and dst must
 * not overlap. Returns SLEAPC_OK, or SLEAPC_ERR_INVALID_ARG (NULL, bad size) /
 * SLEAPC_ERR_UNSUPPORTED (channel count the coercion cannot handle). */
sleapc_status sleapc__channels_coerce_u8(const uint8_t *src, int64_t c, int64_t h, int64_t w,
                                         bool ensure_rgb, bool ensure_grayscale, uint8_t *dst);

#endif
