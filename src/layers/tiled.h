/* The tiled single-instance layer (sleap-nn inference/layers/tiled.py
 * TiledLayer): what it exposes beyond the layer contract, so that each of
 * its intermediates can be checked. */
#ifndef SLEAPC_LAYERS_TILED_H
#define SLEAPC_LAYERS_TILED_H

#include "layers/layer.h"

/* Tiles per network call: tile_batch_size, else sleap-nn predictor's 8. */
int sleapc__tiled_tiles_per_call(const sleapc_tiling_config *t);

/* The last frame a tiled layer ran, borrowed until its next run or destroy. */
typedef struct sleapc_tiled_view {
    int64_t c, scaled_h, scaled_w; /* the frame after channel handling, input scale and the
                                      pad to the output stride */
    const uint8_t *scaled;         /* (c, scaled_h, scaled_w) */
    int64_t tile_size, stride;     /* tile side in pixels; output stride */
    int64_t n_tiles;
    const int64_t *origins;        /* (n_tiles, 2): (y0, x0) in scaled pixels, row-major */
    int64_t tiles_per_call;        /* tiles per backend call (the last call is padded) */
    int64_t map_tile;              /* tile_size / stride */
    const float *window;           /* (map_tile, map_tile) */
    int64_t canvas_h, canvas_w;    /* max(scaled, tile) / stride */
    const float *cnt;              /* (canvas_h, canvas_w) summed windows */
    int64_t n_nodes, map_h, map_w; /* map = scaled / stride */
    const float *stitched;         /* (n_nodes, map_h, map_w): ACC / CNT, cropped */
} sleapc_tiled_view;

/* Called after each backend call with its tiles: tiles first..first+n-1 of
 * the frame, their model input (n, c, tile, tile) uint8 and head output
 * (n, n_nodes, map_tile, map_tile). */
typedef void (*sleapc_tiled_probe)(void *ctx, int64_t first, int64_t n, const uint8_t *input,
                                   const float *head);

/* The view of l's last frame; SLEAPC_ERR_INVALID_ARG when l is not tiled or
 * has not run. */
sleapc_status sleapc__tiled_layer_view(const sleapc_layer *l, sleapc_tiled_view *out);

/* Install (or with NULL remove) a probe; SLEAPC_ERR_INVALID_ARG when l is not
 * tiled. */
sleapc_status sleapc__tiled_layer_set_probe(sleapc_layer *l, sleapc_tiled_probe fn, void *ctx);

#endif
