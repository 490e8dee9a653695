#include "layers/ops/instance_centroids.h"

#include <math.h>
#include <string.h>

static int method_of(const char *name, sleapc_centroid_method *out)
{
    if (!strcmp(name, "center_of_mass"))
        *out = SLEAPC_CENTROID_CENTER_OF_MASS;
    else if (!strcmp(name, "bbox_center"))
        *out = SLEAPC_CENTROID_BBOX_CENTER;
    else if (!strcmp(name, "anchor"))
        *out = SLEAPC_CENTROID_ANCHOR;
    else
        return -1;
    return 0;
}

sleapc_status sleapc__centroid_rule_resolve(int anchor, const char *method, const char *fallback,
                                            const char *where, sleapc_centroid_rule *out)
{
    *out = (sleapc_centroid_rule){SLEAPC_CENTROID_CENTER_OF_MASS, SLEAPC_CENTROID_CENTER_OF_MASS,
                                  -1};
    sleapc_centroid_method m = SLEAPC_CENTROID_CENTER_OF_MASS, f = m;
    if (method && method_of(method, &m))
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "%s: centroid_method '%s' is not supported (center_of_mass, "
                            "bbox_center or anchor)", where, method);
    if (fallback && (method_of(fallback, &f) || f == SLEAPC_CENTROID_ANCHOR))
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "%s: centroid_fallback '%s' is not supported (center_of_mass or "
                            "bbox_center)", where, fallback);
    if (anchor >= 0) {
        if (method && m != SLEAPC_CENTROID_ANCHOR)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "%s: anchor_part asks for a node but centroid_method '%s' for a "
                                "whole-instance reduction", where, method);
        *out = (sleapc_centroid_rule){SLEAPC_CENTROID_ANCHOR, f, anchor};
        return SLEAPC_OK;
    }
    if (m == SLEAPC_CENTROID_ANCHOR)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "%s: centroid_method 'anchor' needs anchor_part", where);
    out->method = m;
    return SLEAPC_OK;
}

/* find_points_mean: float32 sums divided by each axis's count of non-NaN
 * (at least 1); NaN only when no coordinate at all is visible. */
static void mean_of(const float *xy, int64_t n, float out[2])
{
    int64_t seen = 0;
    for (int a = 0; a < 2; a++) {
        float sum = 0.0f;
        int64_t count = 0;
        for (int64_t k = 0; k < n; k++)
            if (!isnan(xy[2 * k + a])) {
                sum += xy[2 * k + a];
                count++;
            }
        out[a] = sum / (float)(count ? count : 1);
        seen += count;
    }
    if (!seen)
        out[0] = out[1] = NAN;
}

/* find_points_bbox_midpoint: (min + max) / 2 over the non-NaN values. */
static void bbox_of(const float *xy, int64_t n, float out[2])
{
    for (int a = 0; a < 2; a++) {
        float lo = INFINITY, hi = -INFINITY;
        for (int64_t k = 0; k < n; k++) {
            float v = xy[2 * k + a];
            if (isnan(v))
                continue;
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
        out[a] = (hi + lo) * 0.5f; /* no value: inf - inf, NaN */
    }
}

static void reduce(sleapc_centroid_method m, const float *xy, int64_t n, float out[2])
{
    if (m == SLEAPC_CENTROID_BBOX_CENTER)
        bbox_of(xy, n, out);
    else
        mean_of(xy, n, out);
}

void sleapc__instance_centroid(const sleapc_centroid_rule *r, const float *xy, int64_t n_nodes,
                               float out[2])
{
    if (r->method == SLEAPC_CENTROID_ANCHOR && r->anchor < n_nodes) {
        out[0] = xy[2 * r->anchor];
        out[1] = xy[2 * r->anchor + 1];
        if (!isnan(out[0]) && !isnan(out[1]))
            return;
        reduce(r->fallback, xy, n_nodes, out);
        return;
    }
    reduce(r->method, xy, n_nodes, out);
}
