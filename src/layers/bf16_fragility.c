#include "layers/bf16_fragility.h"

#include <math.h>

#define SQRT2 1.4142135623730951
#define SQRT_2_OVER_PI 0.7978845608028654

/* (y, x) is a local maximum of a (h, w) plane: no neighbour higher (as the
 * peak finders take it). */
static bool is_local_max(const float *a, int64_t h, int64_t w, int64_t y, int64_t x)
{
    float v = a[y * w + x];
    for (int64_t dy = -1; dy <= 1; dy++)
        for (int64_t dx = -1; dx <= 1; dx++) {
            int64_t yy = y + dy, xx = x + dx;
            if ((dy || dx) && yy >= 0 && yy < h && xx >= 0 && xx < w && a[yy * w + xx] > v)
                return false;
        }
    return true;
}

typedef struct sums {
    double d2, v2;
    int64_t n_d;
} sums;

/* One peak at (y, x): pass 0 sums its squared changes, pass 1 adds its
 * probabilities with the spreads of pass 0. second: the plane's runner-up
 * maximum for a head that keeps only its global maximum (NaN otherwise). */
static void peak(const float *a, const float *b, int64_t h, int64_t w, int64_t y, int64_t x,
                 float thr, double second, int pass, sleapc_bf16_fragility *f, sums *s)
{
    double va = a[y * w + x], vb = b[y * w + x];
    for (int64_t dy = -1; dy <= 1; dy++)
        for (int64_t dx = -1; dx <= 1; dx++) {
            int64_t yy = y + dy, xx = x + dx;
            if (!(dy || dx) || yy < 0 || yy >= h || xx < 0 || xx >= w)
                continue;
            double da = va - a[yy * w + xx], db = vb - b[yy * w + xx];
            if (pass == 0) {
                s->d2 += (db - da) * (db - da);
                s->n_d++;
            }
        }
    if (pass == 0) {
        s->v2 += (vb - va) * (vb - va);
        f->peaks++;
        return;
    }
    /* A neighbour overtakes the maximum when bf16 changes their difference
     * by more than its margin. Near a tie the margin grows linearly with how
     * far the true peak lies from the midpoint between the two cells, at
     * the rate k = 2C - L - R (the second difference across the maximum, C,
     * along that axis): with that distance uniform over [0, 1/2] and the
     * change normal with spread sigma_d, a flip has probability
     * integral 2 * 0.5 erfc(k u / (sqrt2 sigma_d)) du = sqrt(2/pi) sigma_d / k
     * (k u >> sigma_d at u = 1/2). This averages over where the peak may lie
     * instead of using where it happens to lie in this batch, which a few
     * frames would show too rarely near a tie to count. */
    double moved = 0;
    if (f->sigma_d > 0) {
        for (int axis = 0; axis < 2; axis++) {
            int64_t dy = axis, dx = 1 - axis;
            bool lo = y - dy >= 0 && x - dx >= 0, hi = y + dy < h && x + dx < w;
            double l = lo ? a[(y - dy) * w + (x - dx)] : 0, r = hi ? a[(y + dy) * w + (x + dx)] : 0;
            double k = lo && hi ? 2 * va - l - r : lo ? 2 * (va - l) : hi ? 2 * (va - r) : INFINITY;
            moved += k > 0 ? fmin(0.5, SQRT_2_OVER_PI * f->sigma_d / k) : 0.5;
        }
    }
    /* Two maxima apart: their difference changes by sqrt2 sigma_v. */
    if (!isnan(second))
        moved += f->sigma_v > 0 ? 0.5 * erfc((va - second) / (2 * f->sigma_v)) : 0;
    f->moved += fmin(moved, 1.0);
    f->crossed += f->sigma_v > 0 ? 0.5 * erfc((va - thr) / (SQRT2 * f->sigma_v)) : 0.0;
}

static void visit(const sleapc_tensor *t16, const sleapc_tensor *t32, bool global, float thr,
                  int pass, sleapc_bf16_fragility *f, sums *s)
{
    int64_t planes = t32->shape[0] * t32->shape[1], h = t32->shape[2], w = t32->shape[3];
    for (int64_t p = 0; p < planes; p++) {
        const float *a = (const float *)t32->data + p * h * w;
        const float *b = (const float *)t16->data + p * h * w;
        int64_t top = -1;
        double v1 = -INFINITY, v2 = -INFINITY;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                if (!is_local_max(a, h, w, y, x))
                    continue;
                double v = a[y * w + x];
                if (global) {
                    if (v > v1) {
                        v2 = v1;
                        v1 = v;
                        top = y * w + x;
                    } else if (v > v2) {
                        v2 = v;
                    }
                } else if (v >= thr) {
                    peak(a, b, h, w, y, x, thr, NAN, pass, f, s);
                }
            }
        if (global && top >= 0 && v1 >= thr)
            peak(a, b, h, w, top / w, top % w, thr, isfinite(v2) ? v2 : NAN, pass, f, s);
    }
}

sleapc_bf16_fragility sleapc__bf16_fragility(const sleapc_tensor *const *b16,
                                             const sleapc_tensor *const *b32,
                                             const bool *global, int n, float threshold)
{
    sleapc_bf16_fragility f = {0};
    sums s = {0};
    for (int i = 0; i < n; i++)
        visit(b16[i], b32[i], global[i], threshold, 0, &f, &s);
    if (f.peaks == 0)
        return f;
    f.sigma_d = s.n_d ? sqrt(s.d2 / (double)s.n_d) : 0;
    f.sigma_v = sqrt(s.v2 / (double)f.peaks);
    for (int i = 0; i < n; i++)
        visit(b16[i], b32[i], global[i], threshold, 1, &f, &s);
    f.moved /= (double)f.peaks;
    f.crossed /= (double)f.peaks;
    return f;
}
