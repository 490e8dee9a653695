#include "pipeline/frame_layout.h"

void sleapc__frame_to_chw(const uint8_t *hwc, int64_t h, int64_t w, int64_t c, uint8_t *chw)
{
    for (int64_t y = 0; y < h; y++)
        for (int64_t x = 0; x < w; x++)
            for (int64_t ch = 0; ch < c; ch++)
                chw[(ch * h + y) * w + x] = hwc[(y * w + x) * c + ch];
}

void sleapc__frame_rgb_to_chw(const uint8_t *rgb, int64_t h, int64_t w, int64_t c, uint8_t *chw)
{
    if (c == 3) {
        sleapc__frame_to_chw(rgb, h, w, 3, chw);
        return;
    }
    for (int64_t k = 0; k < h * w; k++)
        chw[k] = rgb[3 * k];
}
