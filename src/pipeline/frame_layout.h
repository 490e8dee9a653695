/* Frames into the network's input layout: the one copy a frame gets between
 * its decoder (or the caller's array) and the network. */
#ifndef SLEAPC_PIPELINE_FRAME_LAYOUT_H
#define SLEAPC_PIPELINE_FRAME_LAYOUT_H

#include <stdint.h>

/* (h, w, c) -> (c, h, w), as sleap-nn's _to_4d_tensor permutes. */
void sleapc__frame_to_chw(const uint8_t *hwc, int64_t h, int64_t w, int64_t c, uint8_t *chw);

/* A decoded RGB image (h, w, 3) -> (c, h, w) with c = 3, or c = 1 taking the
 * first channel (decoded grayscale images carry it in all three). */
void sleapc__frame_rgb_to_chw(const uint8_t *rgb, int64_t h, int64_t w, int64_t c, uint8_t *chw);

#endif
