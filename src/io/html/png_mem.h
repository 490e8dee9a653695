/* Pictures for self-contained HTML: an RGB image as PNG bytes in memory
 * (zlib's deflate, no filter), and base64 text for a data: URL. */
#ifndef SLEAPC_IO_HTML_PNG_MEM_H
#define SLEAPC_IO_HTML_PNG_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "sleapc/sleapc.h"

/* rgb: height*width*3 bytes, row-major. *out: new (sleapc__free), *n its
 * size. SLEAPC_ERR_INVALID_ARG for a bad size; SLEAPC_ERR_NOMEM. */
sleapc_status sleapc__png_encode_rgb(const uint8_t *rgb, int64_t height, int64_t width,
                                     uint8_t **out, size_t *n);

/* Base64 (RFC 4648) of n bytes: a new NUL-terminated string, NULL without
 * memory. */
char *sleapc__base64(const uint8_t *data, size_t n);

#endif
