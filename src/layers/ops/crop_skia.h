/* The crop sleap-nn 0.3.5 cuts for its re-ID embedding model
 * (data/custom_datasets.py EmbeddingDataset, pose mode): a size x size crop
 * of the frame around a detection's centroid, drawn by Skia
 * (data/skia_augmentation.py crop_and_resize_skia) with a bilinear filter,
 * anti-aliased image edges over a black canvas and 8-bit output. The box is
 * make_centered_bboxes' (corners inset by 0.5), so the crop spans size - 1
 * source pixels: a scale of size / (size - 1), never an integer gather. */
#ifndef SLEAPC_LAYERS_OPS_CROP_SKIA_H
#define SLEAPC_LAYERS_OPS_CROP_SKIA_H

#include <stdint.h>

/* The largest crop side (the maps of one crop live on the stack). */
#define SLEAPC_CROP_SKIA_MAX_SIDE 1024

/* One crop of a planar (c, h, w) uint8 frame centred on (cx, cy), into dst
 * (c, size, size) as float grey levels 0..255 (whole numbers: the 8-bit
 * canvas sleap-nn reads back). Pixels off the frame are black; those the
 * frame's edge cuts are scaled by its coverage, as Skia's raster pipeline
 * does. cx, cy must be finite and size in [1, SLEAPC_CROP_SKIA_MAX_SIDE]
 * (else nothing is written). */
void sleapc__crop_skia(const uint8_t *frame, int64_t c, int64_t h, int64_t w, float cx, float cy,
                       int64_t size, float *dst);

#endif
