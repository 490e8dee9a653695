/* A flat-topped local maximum as sleap-nn 0.3.5 counts it (peaks_flat_top.h). */
#include "core/peaks_flat_top.h"

/* The 4 neighbours after a pixel in raster order, (dy, dx): E, SW, S, SE. */
static const int AFTER[4][2] = {{0, 1}, {1, -1}, {1, 0}, {1, 1}};
/* The 4 before it: NW, N, NE, W. */
static const int BEFORE[4][2] = {{-1, -1}, {-1, 0}, {-1, 1}, {0, -1}};
/* Tie masks (bits of AFTER) that fit in a 2x2 block: within {E, S, SE}
 * (bits 0, 2, 3) or within {SW, S} (bits 1, 2). */
#define BLOCK_RIGHT 0xdu
#define BLOCK_LEFT 0x6u

static bool inside(int64_t h, int64_t w, int64_t y, int64_t x)
{
    return y >= 0 && y < h && x >= 0 && x < w;
}

/* (dy, dx) from the candidate is one of its top's pixels. */
static bool in_top(unsigned tied, int dy, int dx)
{
    if (dy == 0 && dx == 0)
        return true;
    for (int k = 0; k < 4; k++)
        if ((tied >> k & 1u) && AFTER[k][0] == dy && AFTER[k][1] == dx)
            return true;
    return false;
}

bool sleapc__peaks_flat_top(const float *map, int64_t h, int64_t w, int64_t y, int64_t x, float *dx,
                            float *dy)
{
    const float v = map[y * w + x];
    *dx = 0.0f;
    *dy = 0.0f;
    for (int k = 0; k < 4; k++) {
        const int64_t yy = y + BEFORE[k][0], xx = x + BEFORE[k][1];
        if (inside(h, w, yy, xx) && !(v > map[yy * w + xx]))
            return false;
    }
    unsigned tied = 0;
    for (int k = 0; k < 4; k++) {
        const int64_t yy = y + AFTER[k][0], xx = x + AFTER[k][1];
        if (!inside(h, w, yy, xx))
            continue;
        const float n = map[yy * w + xx];
        if (!(v >= n))
            return false;
        if (v == n)
            tied |= 1u << k;
    }
    if (!tied)
        return true;
    if ((tied & ~BLOCK_RIGHT) && (tied & ~BLOCK_LEFT))
        return false;
    /* A pixel of the top with a neighbour outside it at least as high: the
     * top is wider than the block, or runs up to a higher one. */
    int sum_x = 0, sum_y = 0, count = 1;
    for (int k = 0; k < 4; k++) {
        if (!(tied >> k & 1u))
            continue;
        const int ty = AFTER[k][0], tx = AFTER[k][1];
        sum_y += ty;
        sum_x += tx;
        count++;
        for (int ny = -1; ny <= 1; ny++)
            for (int nx = -1; nx <= 1; nx++) {
                const int64_t yy = y + ty + ny, xx = x + tx + nx;
                if ((ny || nx) && !in_top(tied, ty + ny, tx + nx) && inside(h, w, yy, xx) &&
                    map[yy * w + xx] >= v)
                    return false;
            }
    }
    *dx = (float)((double)sum_x / count);
    *dy = (float)((double)sum_y / count);
    return true;
}
