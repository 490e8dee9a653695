/* Peak finding of sleap-nn inference/ops/peaks.py: `find_global_peaks`,
 * `find_local_peaks` and the integral refinement they share. */
#include "core/peaks.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"
#include "core/peaks_flat_top.h"

#define MAX_PATCH_VALUES (SLEAPC_PEAKS_MAX_PATCH * SLEAPC_PEAKS_MAX_PATCH)

/* Torch's float32 `sum` over a contiguous run of n < 512 values (its AVX2
 * reduction): n >= 8 sums vectors of 8 in four lane accumulators, folds them
 * into the first, then a scalar adds the tail values and the 8 lanes; n < 8
 * uses four scalar accumulators. The order matters: a sequential sum misses
 * the reference by up to 7e-3 px when the patch sum is near zero. */
static float torch_sum(const float *x, int n)
{
    if (n < 8) {
        float a[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        const int n4 = n / 4 * 4;
        for (int i = 0; i < n4; i++)
            a[i % 4] += x[i];
        for (int i = n4; i < n; i++)
            a[0] += x[i];
        return ((a[0] + a[1]) + a[2]) + a[3];
    }
    const int m = n / 8;
    const int q = m / 4;
    float lanes[4][8] = {{0.0f}};
    for (int g = 0; g < q; g++)
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 8; l++)
                lanes[c][l] += x[(4 * g + c) * 8 + l];
    for (int v = 4 * q; v < m; v++)
        for (int l = 0; l < 8; l++)
            lanes[0][l] += x[v * 8 + l];
    for (int c = 1; c < 4; c++)
        for (int l = 0; l < 8; l++)
            lanes[0][l] += lanes[c][l];
    float s = 0.0f;
    for (int i = 8 * m; i < n; i++)
        s += x[i];
    for (int l = 0; l < 8; l++)
        s += lanes[0][l];
    return s;
}

static bool sizes_ok(int64_t s, int64_t c, int64_t h, int64_t w, int64_t *numel)
{
    int64_t n;
    if (s < 0 || c < 0 || h < 1 || w < 1 || s > INT32_MAX || c > INT32_MAX ||
        __builtin_mul_overflow(s, c, &n) || __builtin_mul_overflow(n, h, &n) ||
        __builtin_mul_overflow(n, w, &n) || (uint64_t)n > SIZE_MAX / sizeof(float))
        return false;
    *numel = n;
    return true;
}

sleapc_status sleapc__peaks_refine_integral(const float *map, int64_t h, int64_t w, int k,
                                            int64_t px, int64_t py, float *out_x, float *out_y)
{
    int64_t numel;
    if (!map || !out_x || !out_y || !sizes_ok(1, 1, h, w, &numel))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "refine peak: bad arguments");
    if (k < 1 || k > SLEAPC_PEAKS_MAX_PATCH)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "refine peak: patch size %d not in 1..%d", k,
                            SLEAPC_PEAKS_MAX_PATCH);

    /* `crop_bboxes` origin trunc(tl + k//2) - k//2 with tl = p - k/2 + 0.5; for
     * the integer, non-negative grid peaks that reach here it is p - k//2. */
    const int64_t x0 = px - k / 2;
    const int64_t y0 = py - k / 2;
    float patch[MAX_PATCH_VALUES];
    float gx[MAX_PATCH_VALUES];
    float gy[MAX_PATCH_VALUES];
    float grid[SLEAPC_PEAKS_MAX_PATCH];
    /* torch.arange(k, float32) - ((k - 1) / 2) */
    const float half = (float)((double)(k - 1) / 2.0);
    for (int j = 0; j < k; j++)
        grid[j] = (float)j - half;

    for (int r = 0; r < k; r++) {
        const int64_t y = y0 + r;
        for (int c = 0; c < k; c++) {
            const int64_t x = x0 + c;
            const bool inside = y >= 0 && y < h && x >= 0 && x < w;
            const float v = inside ? map[y * w + x] : 0.0f;
            patch[r * k + c] = v;
            gx[r * k + c] = grid[c] * v;
            gy[r * k + c] = grid[r] * v;
        }
    }
    const int n = k * k;
    const float z = torch_sum(patch, n);
    const float dx = torch_sum(gx, n) / z;
    const float dy = torch_sum(gy, n) / z;
    *out_x = (float)px + dx;
    *out_y = (float)py + dy;
    return SLEAPC_OK;
}

/* a equals the running maximum m, with Torch's NaN-propagating max in mind. */
static bool same_as_max(float a, float m)
{
    return isnan(m) ? isnan(a) : a == m;
}

sleapc_status sleapc__peaks_find_global(const float *cms, int64_t s, int64_t c, int64_t h,
                                        int64_t w, double threshold, int refine_k, float *peaks,
                                        float *vals)
{
    int64_t numel;
    if (!sizes_ok(s, c, h, w, &numel) || (numel > 0 && (!cms || !peaks || !vals)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "find global peaks: bad arguments");
    if (refine_k < 0 || refine_k > SLEAPC_PEAKS_MAX_PATCH)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "find global peaks: patch size %d not in 0..%d",
                            refine_k, SLEAPC_PEAKS_MAX_PATCH);
    const float thr = (float)threshold;
    const int64_t n_maps = s * c;
    for (int64_t m = 0; m < n_maps; m++) {
        const float *map = cms + m * h * w;
        /* Torch's max propagates NaN: the first NaN wins. */
        float best = map[0];
        for (int64_t i = 1; i < h * w && !isnan(best); i++) {
            if (isnan(map[i]) || map[i] > best)
                best = map[i];
        }
        /* `find_global_peaks_rough`: x from the column maxima, y from the row
         * maxima, each the first index holding the global maximum. */
        int64_t x = w, y = -1;
        for (int64_t r = 0; r < h; r++) {
            for (int64_t col = 0; col < w; col++) {
                if (same_as_max(map[r * w + col], best)) {
                    if (y < 0)
                        y = r;
                    if (col < x)
                        x = col;
                }
            }
        }
        float *pk = peaks + 2 * m;
        if (best < thr) {
            pk[0] = NAN;
            pk[1] = NAN;
            vals[m] = 0.0f;
            continue;
        }
        vals[m] = best;
        if (refine_k > 0) {
            sleapc_status st =
                sleapc__peaks_refine_integral(map, h, w, refine_k, x, y, &pk[0], &pk[1]);
            if (st)
                return sleapc__wrap(st, "find global peaks");
        } else {
            pk[0] = (float)x;
            pk[1] = (float)y;
        }
    }
    return SLEAPC_OK;
}

int64_t sleapc__peaks_local_max_count(int64_t s, int64_t c, int64_t h, int64_t w)
{
    int64_t numel, n;
    if (!sizes_ok(s, c, h, w, &numel) || __builtin_mul_overflow(s * c, (h + 1) / 2, &n) ||
        __builtin_mul_overflow(n, (w + 1) / 2, &n))
        return -1;
    return n;
}

/* v is a strict maximum of its 3x3 neighbourhood. A NaN neighbour makes
 * Torch's neighbourhood max NaN, and the comparison false, which `!(v > n)`
 * reproduces. */
static bool strict_local_max(const float *map, int64_t h, int64_t w, int64_t y, int64_t x)
{
    const float v = map[y * w + x];
    for (int64_t dy = -1; dy <= 1; dy++) {
        const int64_t yy = y + dy;
        if (yy < 0 || yy >= h)
            continue;
        for (int64_t dx = -1; dx <= 1; dx++) {
            const int64_t xx = x + dx;
            if ((dy == 0 && dx == 0) || xx < 0 || xx >= w)
                continue;
            if (!(v > map[yy * w + xx]))
                return false;
        }
    }
    return true;
}

/* One local peak at grid (x, y) into slot n: its point (x, y) + (dx, dy) in
 * float32, or refined around the pixel that point floors to (sleap-nn
 * refines a flat top's fractional peak on the pixel grid that way). */
static sleapc_status put_local(const float *map, int64_t h, int64_t w, int refine_k, int64_t x,
                               int64_t y, float dx, float dy, float *pk)
{
    pk[0] = (float)x + dx;
    pk[1] = (float)y + dy;
    if (refine_k == 0)
        return SLEAPC_OK;
    return sleapc__peaks_refine_integral(map, h, w, refine_k, (int64_t)floorf(pk[0]),
                                         (int64_t)floorf(pk[1]), &pk[0], &pk[1]);
}

/* find_local_peaks of 0.3.3 (strict maxima) or of 0.3.5 (flat_tops). */
static sleapc_status find_local(const float *cms, int64_t s, int64_t c, int64_t h, int64_t w,
                                double threshold, int refine_k, bool flat_tops, int64_t capacity,
                                float *peaks, float *vals, int32_t *sample_inds,
                                int32_t *channel_inds, int64_t *n_found)
{
    int64_t numel;
    if (!n_found || !sizes_ok(s, c, h, w, &numel) || (numel > 0 && !cms) || capacity < 0 ||
        (capacity > 0 && (!peaks || !vals || !sample_inds || !channel_inds)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "find local peaks: bad arguments");
    if (refine_k < 0 || refine_k > SLEAPC_PEAKS_MAX_PATCH)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "find local peaks: patch size %d not in 0..%d",
                            refine_k, SLEAPC_PEAKS_MAX_PATCH);
    *n_found = 0;
    const float thr = (float)threshold;
    int64_t n = 0;
    for (int64_t b = 0; b < s; b++) {
        for (int64_t y = 0; y < h; y++) {
            for (int64_t x = 0; x < w; x++) {
                for (int64_t ch = 0; ch < c; ch++) {
                    const float *map = cms + (b * c + ch) * h * w;
                    const float v = map[y * w + x];
                    float dx = 0.0f, dy = 0.0f;
                    if (!(v > thr) ||
                        !(flat_tops ? sleapc__peaks_flat_top(map, h, w, y, x, &dx, &dy)
                                    : strict_local_max(map, h, w, y, x)))
                        continue;
                    if (n < capacity) {
                        sleapc_status st =
                            put_local(map, h, w, refine_k, x, y, dx, dy, peaks + 2 * n);
                        if (st)
                            return sleapc__wrap(st, "find local peaks");
                        vals[n] = v;
                        sample_inds[n] = (int32_t)b;
                        channel_inds[n] = (int32_t)ch;
                    }
                    n++;
                }
            }
        }
    }
    *n_found = n;
    return SLEAPC_OK;
}

sleapc_status sleapc__peaks_find_local(const float *cms, int64_t s, int64_t c, int64_t h, int64_t w,
                                       double threshold, int refine_k, int64_t capacity,
                                       float *peaks, float *vals, int32_t *sample_inds,
                                       int32_t *channel_inds, int64_t *n_found)
{
    return find_local(cms, s, c, h, w, threshold, refine_k, false, capacity, peaks, vals,
                      sample_inds, channel_inds, n_found);
}

sleapc_status sleapc__peaks_find_local_flat(const float *cms, int64_t s, int64_t c, int64_t h,
                                            int64_t w, double threshold, int refine_k,
                                            int64_t capacity, float *peaks, float *vals,
                                            int32_t *sample_inds, int32_t *channel_inds,
                                            int64_t *n_found)
{
    return find_local(cms, s, c, h, w, threshold, refine_k, true, capacity, peaks, vals,
                      sample_inds, channel_inds, n_found);
}
