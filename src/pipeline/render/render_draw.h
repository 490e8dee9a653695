/* Drawing poses on packed HWC uint8 RGB images: anti-aliased thick lines
 * for edges, filled discs for nodes, one colour per track or instance.
 *
 * Coordinates are SLEAP's: (0, 0) is the centre of the top-left pixel, x to
 * the right, y down. Anything outside the image is clipped; non-finite
 * coordinates draw nothing. Pure C, no allocation. */
#ifndef SLEAPC_PIPELINE_RENDER_DRAW_H
#define SLEAPC_PIPELINE_RENDER_DRAW_H

#include <stdint.h>

/* An RGB image: height*width*3 bytes, row-major HWC; borrowed. */
typedef struct sleapc_draw_image {
    uint8_t *rgb;
    int64_t height, width;
} sleapc_draw_image;

/* How poses look. */
typedef struct sleapc_draw_style {
    double node_radius_px; /* disc radius; <= 0 draws no nodes */
    double line_width_px;  /* edge thickness; <= 0 draws no edges */
} sleapc_draw_style;

/* A readable default for a frame of this size: thicker on larger frames. */
sleapc_draw_style sleapc__draw_style_for(int64_t height, int64_t width);

/* Colour k of a fixed palette, cycling; k < 0 is treated as 0. rgb gets 3 bytes. */
void sleapc__draw_color(int64_t k, uint8_t rgb[3]);

/* A line from (x0, y0) to (x1, y1), width_px thick with round caps. Edge
 * pixels are blended by their coverage (distance to the segment), which is
 * the anti-aliasing. */
void sleapc__draw_line(const sleapc_draw_image *img, double x0, double y0, double x1, double y1,
                       double width_px, const uint8_t rgb[3]);

/* A filled disc of radius_px centred on (cx, cy), blended the same way. */
void sleapc__draw_disc(const sleapc_draw_image *img, double cx, double cy, double radius_px,
                       const uint8_t rgb[3]);

/* One instance: xy holds n_nodes (x, y) pairs (NaN = missing); edges are
 * (src, dst) node pairs. Edges are drawn first, then the nodes on top; an
 * edge with a missing end, or a node index outside 0..n_nodes-1, is skipped. */
void sleapc__draw_pose(const sleapc_draw_image *img, const double *xy, int n_nodes,
                       const int (*edges)[2], int n_edges, const sleapc_draw_style *style,
                       const uint8_t rgb[3]);

#endif
