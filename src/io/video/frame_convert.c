/* Channel handling shared by every frame source. */
#include <string.h>

#include "io/video/frame_source.h"

bool sleapc__frame_rgb_is_gray(const uint8_t *rgb, size_t n_pixels)
{
    for (size_t i = 0; i < n_pixels; i++)
        if (rgb[3 * i] != rgb[3 * i + 2])
            return false;
    return true;
}

void sleapc__frame_rgb_to_channels(const uint8_t *rgb, size_t n_pixels, int64_t channels,
                                   uint8_t *dst)
{
    if (channels == 3) {
        memcpy(dst, rgb, n_pixels * 3);
        return;
    }
    for (size_t i = 0; i < n_pixels; i++)
        dst[i] = rgb[3 * i];
}
