/* Coverage-based drawing: every pixel near a shape is blended towards the
 * colour by how much of a one-pixel footprint around its centre the shape
 * covers, approximated by the signed distance to the shape's edge. That is
 * enough anti-aliasing for overlays and needs no scan conversion, so
 * clipping is just a bounding box intersected with the image. */
#include "pipeline/render/render_draw.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

/* Coordinates beyond this are not positions in any frame (sides are at most
 * tens of thousands of pixels); skipping them keeps every difference finite
 * and every conversion to an integer in range. */
#define COORD_LIMIT 1e12

/* MATLAB's default line colours: distinct, and readable on gray video. */
static const uint8_t palette[][3] = {
    {0, 114, 189},  {217, 83, 25},  {237, 177, 32}, {126, 47, 142},
    {119, 172, 48}, {77, 190, 238}, {162, 20, 47},
};

void sleapc__draw_color(int64_t k, uint8_t rgb[3])
{
    const int64_t n = (int64_t)(sizeof palette / sizeof palette[0]);
    const uint8_t *c = palette[k > 0 ? k % n : 0];
    rgb[0] = c[0];
    rgb[1] = c[1];
    rgb[2] = c[2];
}

sleapc_draw_style sleapc__draw_style_for(int64_t height, int64_t width)
{
    double side = (double)(height < width ? height : width);
    double r = side / 120.0;
    r = r < 2.0 ? 2.0 : r;
    sleapc_draw_style s = {.node_radius_px = r, .line_width_px = r < 2.5 ? 1.5 : 0.6 * r};
    return s;
}

static bool usable(double v)
{
    return isfinite(v) && fabs(v) <= COORD_LIMIT;
}

/* The pixel range [*lo, *hi] covering [a, b] within 0..n-1; false when empty. */
static bool clip_range(double a, double b, int64_t n, int64_t *lo, int64_t *hi)
{
    if (b < 0 || a > (double)(n - 1))
        return false;
    *lo = a <= 0 ? 0 : (int64_t)ceil(a);
    *hi = b >= (double)(n - 1) ? n - 1 : (int64_t)floor(b);
    return *lo <= *hi;
}

static void blend(uint8_t *px, const uint8_t rgb[3], double coverage)
{
    if (coverage <= 0)
        return;
    if (coverage >= 1) {
        px[0] = rgb[0];
        px[1] = rgb[1];
        px[2] = rgb[2];
        return;
    }
    for (int c = 0; c < 3; c++)
        px[c] = (uint8_t)lround(px[c] + ((double)rgb[c] - px[c]) * coverage);
}

void sleapc__draw_line(const sleapc_draw_image *img, double x0, double y0, double x1, double y1,
                       double width_px, const uint8_t rgb[3])
{
    if (!img || !img->rgb || img->height < 1 || img->width < 1 || !(width_px > 0) || !usable(x0) ||
        !usable(y0) || !usable(x1) || !usable(y1) || !usable(width_px))
        return;
    double hw = width_px / 2, reach = hw + 1;
    int64_t xa, xb, ya, yb;
    if (!clip_range(fmin(x0, x1) - reach, fmax(x0, x1) + reach, img->width, &xa, &xb) ||
        !clip_range(fmin(y0, y1) - reach, fmax(y0, y1) + reach, img->height, &ya, &yb))
        return;
    double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
    for (int64_t y = ya; y <= yb; y++) {
        uint8_t *row = img->rgb + (size_t)y * (size_t)img->width * 3;
        for (int64_t x = xa; x <= xb; x++) {
            double px = (double)x - x0, py = (double)y - y0;
            /* Nearest point of the segment: projection clamped to its ends. */
            double t = len2 > 0 ? (px * dx + py * dy) / len2 : 0;
            t = t < 0 ? 0 : t > 1 ? 1 : t;
            double d = hypot(px - t * dx, py - t * dy);
            blend(row + 3 * x, rgb, hw + 0.5 - d);
        }
    }
}

void sleapc__draw_disc(const sleapc_draw_image *img, double cx, double cy, double radius_px,
                       const uint8_t rgb[3])
{
    if (!img || !img->rgb || img->height < 1 || img->width < 1 || !(radius_px > 0) || !usable(cx) ||
        !usable(cy) || !usable(radius_px))
        return;
    double reach = radius_px + 1;
    int64_t xa, xb, ya, yb;
    if (!clip_range(cx - reach, cx + reach, img->width, &xa, &xb) ||
        !clip_range(cy - reach, cy + reach, img->height, &ya, &yb))
        return;
    for (int64_t y = ya; y <= yb; y++) {
        uint8_t *row = img->rgb + (size_t)y * (size_t)img->width * 3;
        for (int64_t x = xa; x <= xb; x++)
            blend(row + 3 * x, rgb, radius_px + 0.5 - hypot((double)x - cx, (double)y - cy));
    }
}

void sleapc__draw_pose(const sleapc_draw_image *img, const double *xy, int n_nodes,
                       const int (*edges)[2], int n_edges, const sleapc_draw_style *style,
                       const uint8_t rgb[3])
{
    if (!img || !xy || !style || n_nodes < 1)
        return;
    for (int e = 0; edges && e < n_edges; e++) {
        int a = edges[e][0], b = edges[e][1];
        if (a < 0 || b < 0 || a >= n_nodes || b >= n_nodes)
            continue;
        /* draw_line skips NaN ends, i.e. missing points. */
        sleapc__draw_line(img, xy[2 * a], xy[2 * a + 1], xy[2 * b], xy[2 * b + 1],
                          style->line_width_px, rgb);
    }
    for (int k = 0; k < n_nodes; k++)
        sleapc__draw_disc(img, xy[2 * k], xy[2 * k + 1], style->node_radius_px, rgb);
}
