/* Pyramidal Lucas-Kanade (see track_flow.h). Integer parts are exact; the
 * float parts follow OpenCV's operation order, including the lane structure
 * of its SSE loops, so that results agree to the last bit where the compiler
 * does the same float operations. */
#include "pipeline/tracking/track_flow.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

enum { MAX_LEVELS = 17 };

/* One pyramid level, bordered by the window size on every side: the image
 * (reflect-101 border) and, for frames used as "prev", the Scharr
 * derivatives (Ix, Iy interleaved, zero border). */
typedef struct level {
    int w, h;
    uint8_t *img;
    int16_t *deriv;
} level;

typedef struct pyramid {
    int64_t key;
    uint64_t used; /* LRU stamp, 0 = empty */
    int n_levels;
    level lv[MAX_LEVELS];
} pyramid;

struct sleapc_track_flow {
    int win, max_levels;
    double scale;
    int n_cache;
    pyramid *cache;
    uint64_t clock;
    uint8_t *scaled; /* resized frame scratch */
    int16_t *trow;   /* Scharr row scratch */
};

static int reflect101(int p, int n)
{
    if (n == 1)
        return 0;
    do {
        if (p < 0)
            p = -p;
        else
            p = n - 1 - (p - n) - 1;
    } while ((unsigned)p >= (unsigned)n);
    return p;
}

static void pyramid_free(pyramid *p)
{
    for (int l = 0; l < MAX_LEVELS; l++) {
        sleapc__free(p->lv[l].img);
        sleapc__free(p->lv[l].deriv);
    }
    memset(p, 0, sizeof *p);
}

sleapc_status sleapc__track_flow_create(int win_size, int max_levels, double img_scale,
                                        int cache_frames, sleapc_track_flow **out)
{
    *out = NULL;
    if (win_size < 3 || max_levels < 0 || max_levels >= MAX_LEVELS || !(img_scale > 0))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "optical flow: window %d, levels %d, scale %g out of range",
                            win_size, max_levels, img_scale);
    sleapc_track_flow *f = sleapc__calloc(1, sizeof *f);
    if (!f)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "optical flow: out of memory");
    f->win = win_size;
    f->max_levels = max_levels;
    f->scale = img_scale;
    f->n_cache = cache_frames > 2 ? cache_frames : 2;
    f->cache = sleapc__calloc((size_t)f->n_cache, sizeof *f->cache);
    if (!f->cache) {
        sleapc__free(f);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "optical flow: out of memory");
    }
    *out = f;
    return SLEAPC_OK;
}

void sleapc__track_flow_destroy(sleapc_track_flow *f)
{
    if (!f)
        return;
    for (int i = 0; i < f->n_cache; i++)
        pyramid_free(&f->cache[i]);
    sleapc__free(f->cache);
    sleapc__free(f->scaled);
    sleapc__free(f->trow);
    sleapc__free(f);
}

/* Bilinear resize with half-pixel centres (cv2.resize, INTER_LINEAR; not
 * OpenCV's fixed-point rounding). */
static void resize_bilinear(const uint8_t *src, int sw, int sh, uint8_t *dst, int dw, int dh)
{
    const double fx = (double)sw / dw, fy = (double)sh / dh;
    for (int y = 0; y < dh; y++) {
        double sy = (y + 0.5) * fy - 0.5;
        sy = sy < 0 ? 0 : sy;
        int y0 = (int)sy;
        if (y0 > sh - 1)
            y0 = sh - 1;
        const int y1 = y0 + 1 < sh ? y0 + 1 : sh - 1;
        const double by = sy - y0;
        for (int x = 0; x < dw; x++) {
            double sx = (x + 0.5) * fx - 0.5;
            sx = sx < 0 ? 0 : sx;
            int x0 = (int)sx;
            if (x0 > sw - 1)
                x0 = sw - 1;
            const int x1 = x0 + 1 < sw ? x0 + 1 : sw - 1;
            const double bx = sx - x0;
            const double v = (1 - by) * ((1 - bx) * src[y0 * sw + x0] + bx * src[y0 * sw + x1]) +
                             by * ((1 - bx) * src[y1 * sw + x0] + bx * src[y1 * sw + x1]);
            dst[y * dw + x] = (uint8_t)lrint(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
}

/* Fills the reflect-101 border of a level's image. */
static void fill_border(level *L, int W)
{
    const int pw = L->w + 2 * W;
    for (int y = -W; y < L->h + W; y++) {
        uint8_t *row = L->img + (size_t)(y + W) * pw + W;
        const uint8_t *src = L->img + (size_t)(reflect101(y, L->h) + W) * pw + W;
        if (y < 0 || y >= L->h)
            memcpy(row, src, (size_t)L->w);
        for (int x = -W; x < 0; x++)
            row[x] = row[reflect101(x, L->w)];
        for (int x = L->w; x < L->w + W; x++)
            row[x] = row[reflect101(x, L->w)];
    }
}

/* pyrDown: 5x5 [1 4 6 4 1]^2 / 256, reflect-101, rounded (exact integers):
 * a horizontal pass per source row into hrow, then the vertical pass. */
static sleapc_status pyr_down(const level *s, level *d, int W)
{
    const int spw = s->w + 2 * W, dpw = d->w + 2 * W;
    int *cols = sleapc__malloc((size_t)d->w * 5 * sizeof(int));
    int *hrow = sleapc__malloc((size_t)d->w * 5 * sizeof(int));
    if (!cols || !hrow) {
        sleapc__free(cols);
        sleapc__free(hrow);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "optical flow: out of memory");
    }
    for (int x = 0; x < d->w; x++)
        for (int k = 0; k < 5; k++)
            cols[5 * x + k] = reflect101(2 * x + k - 2, s->w);
    for (int y = 0; y < d->h; y++) {
        for (int r = 0; r < 5; r++) {
            const uint8_t *srow = s->img + (size_t)(reflect101(2 * y + r - 2, s->h) + W) * spw + W;
            int *h = hrow + (size_t)r * d->w;
            for (int x = 0; x < d->w; x++) {
                const int *c = cols + 5 * x;
                h[x] = srow[c[0]] + srow[c[4]] + 4 * (srow[c[1]] + srow[c[3]]) + 6 * srow[c[2]];
            }
        }
        uint8_t *out = d->img + (size_t)(y + W) * dpw + W;
        const int *h0 = hrow, *h1 = h0 + d->w, *h2 = h1 + d->w, *h3 = h2 + d->w, *h4 = h3 + d->w;
        for (int x = 0; x < d->w; x++)
            out[x] = (uint8_t)((h0[x] + h4[x] + 4 * (h1[x] + h3[x]) + 6 * h2[x] + 128) >> 8);
    }
    sleapc__free(cols);
    sleapc__free(hrow);
    return SLEAPC_OK;
}

/* Scharr derivatives of a level (calcScharrDeriv), zero border. */
static sleapc_status scharr(sleapc_track_flow *f, level *L, int W)
{
    const int pw = L->w + 2 * W;
    L->deriv = sleapc__calloc((size_t)(L->h + 2 * W) * (size_t)pw * 2, sizeof(int16_t));
    int16_t *t = sleapc__realloc(f->trow, (size_t)(L->w + 2) * 2 * sizeof(int16_t));
    if (!L->deriv || !t)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "optical flow: out of memory");
    f->trow = t;
    int16_t *t0 = t + 1, *t1 = t + L->w + 3;
    for (int y = 0; y < L->h; y++) {
        const int ya = y > 0 ? y - 1 : (L->h > 1 ? 1 : 0);
        const int yb = y < L->h - 1 ? y + 1 : (L->h > 1 ? L->h - 2 : 0);
        const uint8_t *s0 = L->img + (size_t)(ya + W) * pw + W;
        const uint8_t *s1 = L->img + (size_t)(y + W) * pw + W;
        const uint8_t *s2 = L->img + (size_t)(yb + W) * pw + W;
        for (int x = 0; x < L->w; x++) {
            t0[x] = (int16_t)((s0[x] + s2[x]) * 3 + s1[x] * 10);
            t1[x] = (int16_t)(s2[x] - s0[x]);
        }
        const int x0 = L->w > 1 ? 1 : 0, x1 = L->w > 1 ? L->w - 2 : 0;
        t0[-1] = t0[x0];
        t0[L->w] = t0[x1];
        t1[-1] = t1[x0];
        t1[L->w] = t1[x1];
        int16_t *d = L->deriv + ((size_t)(y + W) * pw + W) * 2;
        for (int x = 0; x < L->w; x++) {
            d[2 * x] = (int16_t)(t0[x + 1] - t0[x - 1]);
            d[2 * x + 1] = (int16_t)((t1[x + 1] + t1[x - 1]) * 3 + t1[x] * 10);
        }
    }
    return SLEAPC_OK;
}

/* The cached pyramid of a frame (built on a miss), with derivatives when
 * asked. */
static sleapc_status get_pyramid(sleapc_track_flow *f, const uint8_t *img, int64_t key,
                                 int64_t height, int64_t width, bool deriv, pyramid **out)
{
    pyramid *p = NULL, *lru = &f->cache[0];
    for (int i = 0; i < f->n_cache; i++) {
        if (f->cache[i].used && f->cache[i].key == key)
            p = &f->cache[i];
        if (f->cache[i].used < lru->used)
            lru = &f->cache[i];
    }
    const int W = f->win;
    if (!p) {
        p = lru;
        pyramid_free(p);
        p->key = key;
        int w = (int)width, h = (int)height;
        const uint8_t *src = img;
        if (f->scale != 1.0) {
            const int sw = (int)lrint(width * f->scale), sh = (int)lrint(height * f->scale);
            if (sw < 1 || sh < 1)
                return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "--of_img_scale %g: empty frame",
                                    f->scale);
            uint8_t *s = sleapc__realloc(f->scaled, (size_t)sw * (size_t)sh);
            if (!s)
                return sleapc__fail(SLEAPC_ERR_NOMEM, "optical flow: out of memory");
            f->scaled = s;
            resize_bilinear(img, w, h, s, sw, sh);
            src = s;
            w = sw;
            h = sh;
        }
        /* buildOpticalFlowPyramid: stop when the next level would not be
         * larger than the window */
        int n = 0;
        for (int l = 0; l <= f->max_levels; l++) {
            level *L = &p->lv[l];
            L->w = w;
            L->h = h;
            L->img = sleapc__malloc((size_t)(h + 2 * W) * (size_t)(w + 2 * W));
            if (!L->img) {
                pyramid_free(p);
                return sleapc__fail(SLEAPC_ERR_NOMEM, "optical flow: out of memory");
            }
            if (l == 0) {
                for (int y = 0; y < h; y++)
                    memcpy(L->img + (size_t)(y + W) * (w + 2 * W) + W, src + (size_t)y * w,
                           (size_t)w);
            } else if (pyr_down(&p->lv[l - 1], L, W)) {
                pyramid_free(p);
                return SLEAPC_ERR_NOMEM;
            }
            fill_border(L, W);
            n = l + 1;
            w = (w + 1) / 2;
            h = (h + 1) / 2;
            if (w <= W || h <= W)
                break;
        }
        p->n_levels = n;
    }
    p->used = ++f->clock;
    for (int l = 0; deriv && l < p->n_levels; l++) {
        if (!p->lv[l].deriv) {
            sleapc_status st = scharr(f, &p->lv[l], W);
            if (st) {
                pyramid_free(p);
                return st;
            }
        }
    }
    *out = p;
    return SLEAPC_OK;
}

static int descale(int x, int n)
{
    return (x + (1 << (n - 1))) >> n;
}

/* OpenCV's v_reduce_sum of a float32x4 (SSE: two shifted adds). */
static float reduce4(const float *q)
{
    return (q[0] + q[2]) + (q[1] + q[3]);
}

/* LKTrackerInvoker for one point on one level. status cleared on failure
 * at level 0. */
static void lk_point(const level *I, const level *J, int W, int level_no, int max_level,
                     float px, float py, float *nx, float *ny, bool *status, int16_t *ibuf,
                     int16_t *dbuf)
{
    const float halfw = (W - 1) * 0.5f;
    const float lscale = (float)(1. / (1 << level_no));
    float prevx = px * lscale, prevy = py * lscale, nextx, nexty;
    if (level_no == max_level) {
        nextx = prevx;
        nexty = prevy;
    } else {
        nextx = *nx * 2.f;
        nexty = *ny * 2.f;
    }
    *nx = nextx;
    *ny = nexty;
    prevx -= halfw;
    prevy -= halfw;
    /* cvFloor of NaN is INT_MIN on x86 */
    const int ipx = isnan(prevx) ? INT32_MIN : (int)floorf(prevx);
    const int ipy = isnan(prevy) ? INT32_MIN : (int)floorf(prevy);
    if (ipx < -W || ipx >= I->w || ipy < -W || ipy >= I->h) {
        if (level_no == 0)
            *status = false;
        return;
    }
    const int pw = I->w + 2 * W;
    float a = prevx - ipx, b = prevy - ipy;
    const int WB = 14;
    const float FLT_SCALE = 1.f / (1 << 20);
    int iw00 = (int)lrintf((1.f - a) * (1.f - b) * (1 << WB));
    int iw01 = (int)lrintf(a * (1.f - b) * (1 << WB));
    int iw10 = (int)lrintf((1.f - a) * b * (1 << WB));
    int iw11 = (1 << WB) - iw00 - iw01 - iw10;
    float iA11 = 0, iA12 = 0, iA22 = 0;
    float qA11[4] = {0}, qA12[4] = {0}, qA22[4] = {0};
    const int simd = W >= 8 ? ((W - 8) / 8 + 1) * 8 : 0; /* pixels the 8-wide loop covers */
    for (int y = 0; y < W; y++) {
        const uint8_t *src = I->img + (size_t)(y + ipy + W) * pw + (ipx + W);
        const int16_t *ds = I->deriv + ((size_t)(y + ipy + W) * pw + (ipx + W)) * 2;
        int16_t *ip = ibuf + y * W, *dp = dbuf + (size_t)y * W * 2;
        for (int x = 0; x < W; x++) {
            const int ival = descale(src[x] * iw00 + src[x + 1] * iw01 + src[x + pw] * iw10 +
                                         src[x + pw + 1] * iw11,
                                     WB - 5);
            const int16_t *d = ds + 2 * x;
            const int ix = descale(d[0] * iw00 + d[2] * iw01 + d[2 * pw] * iw10 +
                                       d[2 * pw + 2] * iw11,
                                   WB);
            const int iy = descale(d[1] * iw00 + d[3] * iw01 + d[2 * pw + 1] * iw10 +
                                       d[2 * pw + 3] * iw11,
                                   WB);
            ip[x] = (int16_t)ival;
            dp[2 * x] = (int16_t)ix;
            dp[2 * x + 1] = (int16_t)iy;
            const float fx = (float)ix, fy = (float)iy;
            if (x < simd) {
                const int lane = x % 4;
                qA22[lane] = fy * fy + qA22[lane];
                qA12[lane] = fx * fy + qA12[lane];
                qA11[lane] = fx * fx + qA11[lane];
            } else {
                iA11 += (float)(ix * ix);
                iA12 += (float)(ix * iy);
                iA22 += (float)(iy * iy);
            }
        }
    }
    iA11 += reduce4(qA11);
    iA12 += reduce4(qA12);
    iA22 += reduce4(qA22);
    const float A11 = iA11 * FLT_SCALE, A12 = iA12 * FLT_SCALE, A22 = iA22 * FLT_SCALE;
    float D = A11 * A22 - A12 * A12;
    const float min_eig =
        (A22 + A11 - sqrtf((A11 - A22) * (A11 - A22) + 4.f * A12 * A12)) / (2 * W * W);
    if (min_eig < 1e-4f || D < FLT_EPSILON) {
        if (level_no == 0)
            *status = false;
        return;
    }
    D = 1.f / D;
    nextx -= halfw;
    nexty -= halfw;
    float pdx = 0, pdy = 0;
    for (int j = 0; j < 30; j++) {
        const int inx = isnan(nextx) ? INT32_MIN : (int)floorf(nextx);
        const int iny = isnan(nexty) ? INT32_MIN : (int)floorf(nexty);
        if (inx < -W || inx >= J->w || iny < -W || iny >= J->h) {
            if (level_no == 0)
                *status = false;
            break;
        }
        a = nextx - inx;
        b = nexty - iny;
        iw00 = (int)lrintf((1.f - a) * (1.f - b) * (1 << WB));
        iw01 = (int)lrintf(a * (1.f - b) * (1 << WB));
        iw10 = (int)lrintf((1.f - a) * b * (1 << WB));
        iw11 = (1 << WB) - iw00 - iw01 - iw10;
        float ib1 = 0, ib2 = 0, qb0[4] = {0}, qb1[4] = {0};
        for (int y = 0; y < W; y++) {
            const uint8_t *jp = J->img + (size_t)(y + iny + W) * pw + (inx + W);
            const int16_t *ip = ibuf + y * W, *dp = dbuf + (size_t)y * W * 2;
            int it[8];
            int x = 0;
            for (; x < simd; x += 8) {
                for (int k = 0; k < 8; k++)
                    it[k] = (int16_t)(descale(jp[x + k] * iw00 + jp[x + k + 1] * iw01 +
                                                  jp[x + k + pw] * iw10 +
                                                  jp[x + k + pw + 1] * iw11,
                                              WB - 5) -
                                      ip[x + k]);
                const int16_t *d = dp + 2 * x;
                /* lanes of qb0: (0,4) x, (0,4) y, (1,5) x, (1,5) y; qb1: 2,6 / 3,7 */
                for (int k = 0; k < 2; k++) {
                    qb0[2 * k] += (float)(it[k] * d[2 * k] + it[k + 4] * d[2 * (k + 4)]);
                    qb0[2 * k + 1] +=
                        (float)(it[k] * d[2 * k + 1] + it[k + 4] * d[2 * (k + 4) + 1]);
                    qb1[2 * k] += (float)(it[k + 2] * d[2 * (k + 2)] + it[k + 6] * d[2 * (k + 6)]);
                    qb1[2 * k + 1] +=
                        (float)(it[k + 2] * d[2 * (k + 2) + 1] + it[k + 6] * d[2 * (k + 6) + 1]);
                }
            }
            for (; x < W; x++) {
                const int diff = descale(jp[x] * iw00 + jp[x + 1] * iw01 + jp[x + pw] * iw10 +
                                             jp[x + pw + 1] * iw11,
                                         WB - 5) -
                                 ip[x];
                ib1 += (float)(diff * dp[2 * x]);
                ib2 += (float)(diff * dp[2 * x + 1]);
            }
        }
        ib1 += (qb0[0] + qb1[0]) + (qb0[2] + qb1[2]);
        ib2 += (qb0[1] + qb1[1]) + (qb0[3] + qb1[3]);
        const float b1 = ib1 * FLT_SCALE, b2 = ib2 * FLT_SCALE;
        const float dx = (A12 * b2 - A22 * b1) * D, dy = (A12 * b1 - A11 * b2) * D;
        nextx += dx;
        nexty += dy;
        *nx = nextx + halfw;
        *ny = nexty + halfw;
        if ((double)dx * dx + (double)dy * dy <= 0.01 * 0.01)
            break;
        if (j > 0 && fabs((double)(dx + pdx)) < 0.01 && fabs((double)(dy + pdy)) < 0.01) {
            *nx -= dx * 0.5f;
            *ny -= dy * 0.5f;
            break;
        }
        pdx = dx;
        pdy = dy;
    }
}

sleapc_status sleapc__track_flow_points(sleapc_track_flow *f, const uint8_t *prev,
                                        int64_t prev_key, const uint8_t *next, int64_t next_key,
                                        int64_t height, int64_t width, const double *pts,
                                        int64_t n, double *dst)
{
    if (n <= 0)
        return SLEAPC_OK;
    pyramid *P = NULL, *Q = NULL;
    sleapc_status st = get_pyramid(f, prev, prev_key, height, width, true, &P);
    if (!st)
        st = get_pyramid(f, next, next_key, height, width, false, &Q);
    if (!st && P->key != prev_key) /* evicted by the second lookup: rebuild */
        st = get_pyramid(f, prev, prev_key, height, width, true, &P);
    if (st)
        return st;
    const int W = f->win;
    const int levels = (P->n_levels < Q->n_levels ? P->n_levels : Q->n_levels) - 1;
    int16_t *buf = sleapc__malloc((size_t)W * W * 3 * sizeof(int16_t));
    if (!buf)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "optical flow: out of memory");
    const float sc = (float)f->scale;
    for (int64_t i = 0; i < n; i++) {
        /* float32 points, times the image scale, as sleap-nn passes them */
        const float px = (float)pts[2 * i] * sc, py = (float)pts[2 * i + 1] * sc;
        float nx = 0, ny = 0;
        bool status = true;
        for (int l = levels; l >= 0; l--)
            lk_point(&P->lv[l], &Q->lv[l], W, l, levels, px, py, &nx, &ny, &status, buf,
                     buf + W * W);
        dst[2 * i] = status ? (double)(nx / sc) : NAN;
        dst[2 * i + 1] = status ? (double)(ny / sc) : NAN;
    }
    sleapc__free(buf);
    return SLEAPC_OK;
}
