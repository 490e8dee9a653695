/* Tiled inference primitives, mirroring sleap-nn data/tiling.py
 * (generate_tile_grid) and inference/tile_merger.py (build_importance_window,
 * TileMerger): the tile origins of a frame, square tiles cut from it, the
 * importance window, and the weighted accumulate / normalise canvas that
 * stitches per-tile maps into one frame map.
 *
 * Pure functions on plain C-order arrays: nothing allocates or keeps a
 * pointer. Origins are in scaled-frame pixels; windows, canvases and paste
 * positions in output-stride cells, as in sleap-nn. */
#ifndef SLEAPC_LAYERS_OPS_TILING_H
#define SLEAPC_LAYERS_OPS_TILING_H

#include <stdint.h>

#include "io/config/model_config.h"
#include "sleapc/sleapc.h"

/* Tile origins along one axis of image_dim pixels (`_axis_tile_origins`):
 * a frame no larger than a tile gives the one origin 0. Otherwise the overlap
 * is raised to round(min_overlap_fraction * tile_size) (Python's half-to-even
 * round) when below it, the step tile_size - overlap is snapped down to a
 * multiple of max_stride (when step >= max_stride and max_stride is a
 * multiple of output_stride) or of output_stride, and is at least
 * output_stride; origins 0, step, 2*step, ... (each snapped down to
 * output_stride) are taken while origin + tile_size < image_dim, then the last
 * origin floor((image_dim - tile_size) / output_stride) * output_stride is
 * appended unless it repeats the previous one.
 * cap: room in origins; the first min(count, cap) are written and *n gets the
 * count, so a call with cap 0 counts (origins may then be NULL). The count is
 * at most image_dim / output_stride + 1.
 * Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (sizes < 1, strides < 1,
 * overlap < 0, fraction outside [0, 1]). */
sleapc_status sleapc__tiling_axis_origins(int64_t image_dim, int64_t tile_size, int64_t overlap,
                                          int64_t output_stride, int64_t max_stride,
                                          double min_overlap_fraction, int64_t cap,
                                          int64_t *origins, int64_t *n);

/* The importance window of a (th, tw) tile map (`build_importance_window`),
 * computed in float32 as Torch does: gaussian exp(y^2 / (-2 (sigma_scale*th)^2))
 * per axis over y = -(th-1)/2 .. (th-1)/2, pyramid min(i, th+1-i) / max over
 * i = 1..th per axis, constant 1; the separable product, then clamped below
 * at max(min, 1e-3). Not sum-normalised (the canvas divides by the weights).
 * The gaussian's exp is rounded from double, so it may differ from Torch's
 * vectorised expf by its 1-ulp error.
 * out: (th, tw). Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (sizes < 1,
 * sigma_scale <= 0 for gaussian, unknown mode). */
sleapc_status sleapc__tiling_window(int64_t th, int64_t tw, sleapc_tile_blend mode,
                                    double sigma_scale, float *out);

/* The (c, tile, tile) tile of a (c, h, w) uint8 frame with top-left (y0, x0)
 * (`_extract_square_tile`): the part inside the frame, zero below and right
 * of it. dst must not overlap frame. Returns SLEAPC_OK or
 * SLEAPC_ERR_INVALID_ARG (NULL, sizes < 1, negative origin). */
sleapc_status sleapc__tiling_extract_u8(const uint8_t *frame, int64_t c, int64_t h, int64_t w,
                                        int64_t y0, int64_t x0, int64_t tile, uint8_t *dst);

/* TileMerger.integrate of one (n_ch, th, tw) tile map at cell (y0, x0) of an
 * (n_ch, ch, cw) accumulator and a (ch, cw) weight canvas:
 * acc += float32(tile * window), cnt += window, in that order per cell. The
 * tile must lie inside the canvas. Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG
 * (NULL, sizes < 1, a tile outside the canvas). */
sleapc_status sleapc__tiling_accumulate(float *acc, float *cnt, int64_t n_ch, int64_t ch,
                                        int64_t cw, const float *tile, const float *window,
                                        int64_t th, int64_t tw, int64_t y0, int64_t x0);

/* TileMerger.merge then the crop to the frame map: out (n_ch, h, w) =
 * acc / cnt over the top-left (h, w) of the (ch, cw) canvas, float32
 * division (a cell no tile covered gives NaN or inf, as in sleap-nn).
 * Returns SLEAPC_OK or SLEAPC_ERR_INVALID_ARG (NULL, sizes < 1, h > ch or
 * w > cw). */
sleapc_status sleapc__tiling_normalise(const float *acc, const float *cnt, int64_t n_ch, int64_t ch,
                                       int64_t cw, int64_t h, int64_t w, float *out);

#endif
