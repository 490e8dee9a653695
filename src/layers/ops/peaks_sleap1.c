/* SLEAP 1.x peak refinement (sleap/nn/peak_finding.py: find_global_peaks,
 * find_local_peaks, crop_bboxes, integral_regression,
 * find_offsets_local_direction) on top of the grid peaks of peaks.c. */
#include "layers/ops/peaks_sleap1.h"

#include <math.h>

#include "core/error.h"
#include "layers/ops/resize_tf.h"

static float sign_of(float v)
{
    /* tf.sign through Eigen: (v > 0) - (v < 0), so NaN gives 0. */
    return (float)((v > 0.0f) - (v < 0.0f));
}

sleapc_status sleapc__peaks_sleap1_refine(const float *map, int64_t h, int64_t w, int refine_k,
                                          float xy[2])
{
    if (!map || !xy || refine_k < 0 || refine_k > SLEAPC_PEAKS_MAX_PATCH)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "refine peak: bad arguments");
    if (isnan(xy[0]) || isnan(xy[1]))
        return SLEAPC_OK;
    const int k = refine_k > 0 ? refine_k : 3;
    /* make_centered_bboxes: (y, x, y, x) + float32([-k+1, -k+1, k-1, k-1] * 0.5). */
    const float d = (float)(k - 1) * 0.5f;
    const float box[4] = {xy[1] - d, xy[0] - d, xy[1] + d, xy[0] + d};
    float patch[SLEAPC_PEAKS_MAX_PATCH * SLEAPC_PEAKS_MAX_PATCH];
    sleapc_status st = sleapc__resize_tf_crop(map, false, 1, h, w, box, k, k, patch);
    if (st)
        return sleapc__wrap(st, "refine peak");
    float ox, oy;
    if (refine_k > 0) {
        /* integral_regression with gv = float32(range(k)) - (k - 1) / 2. */
        const float half = (float)((double)(k - 1) / 2.0);
        float z = 0.0f, sx = 0.0f, sy = 0.0f;
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < k; j++) {
                const float v = patch[i * k + j];
                z = z + v;
                sx = sx + ((float)j - half) * v;
                sy = sy + ((float)i - half) * v;
            }
        }
        ox = sx / z;
        oy = sy / z;
    } else {
        ox = sign_of(patch[1 * 3 + 2] - patch[1 * 3 + 0]) * 0.25f;
        oy = sign_of(patch[2 * 3 + 1] - patch[0 * 3 + 1]) * 0.25f;
    }
    xy[0] = xy[0] + ox;
    xy[1] = xy[1] + oy;
    return SLEAPC_OK;
}

sleapc_status sleapc__peaks_sleap1_find_global(const float *cms, int64_t s, int64_t c, int64_t h,
                                               int64_t w, double threshold, int refine_k,
                                               float *peaks, float *vals)
{
    /* Every grid peak first (no threshold), then SLEAP's threshold, which
     * blanks the coordinates only. */
    sleapc_status st = sleapc__peaks_find_global(cms, s, c, h, w, -INFINITY, 0, peaks, vals);
    if (st)
        return st;
    const float thr = (float)threshold;
    for (int64_t i = 0; i < s * c && !st; i++) {
        if (vals[i] < thr) {
            peaks[2 * i] = peaks[2 * i + 1] = NAN;
            continue;
        }
        st = sleapc__peaks_sleap1_refine(cms + i * h * w, h, w, refine_k, peaks + 2 * i);
    }
    return st;
}

sleapc_status sleapc__peaks_sleap1_find_local(const float *cms, int64_t s, int64_t c, int64_t h,
                                              int64_t w, double threshold, int refine_k,
                                              int64_t capacity, float *peaks, float *vals,
                                              int32_t *sample_inds, int32_t *channel_inds,
                                              int64_t *n_found)
{
    sleapc_status st = sleapc__peaks_find_local(cms, s, c, h, w, threshold, 0, capacity, peaks,
                                                vals, sample_inds, channel_inds, n_found);
    if (st)
        return st;
    const int64_t n = *n_found < capacity ? *n_found : capacity;
    for (int64_t i = 0; i < n && !st; i++) {
        const float *map = cms + ((int64_t)sample_inds[i] * c + channel_inds[i]) * h * w;
        st = sleapc__peaks_sleap1_refine(map, h, w, refine_k, peaks + 2 * i);
    }
    return st;
}
