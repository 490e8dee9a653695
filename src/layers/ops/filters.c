/* Post-inference filters after sleap-nn inference/filters.py. Torch does the
 * element math in float32 and Python compares the .item() results in
 * float64; the same split is kept here. */
#include "layers/ops/filters.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

sleapc_filter_config sleapc__filters_config_default(void)
{
    sleapc_filter_config c = {
        .min_peak_value = 0.0,
        .min_instance_score = 0.0,
        .min_mean_node_score = 0.0,
        .min_visible_nodes = 0,
        .min_visible_node_fraction = 0.0,
        .overlapping = false,
        .overlapping_threshold = 0.8,
        .overlapping_method = SLEAPC_FILTER_OVERLAP_IOU,
        .min_centroid_distance = 0.0,
    };
    return c;
}

static void nan_fill(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = NAN;
}

/* _nan_out_where for one (frame, slot). */
static void drop_instance(sleapc_filter_outputs *io, int64_t b, int64_t i)
{
    const int64_t at = b * io->n_slots + i, n = io->n_nodes;
    if (io->keypoints)
        nan_fill(io->keypoints + at * n * 2, n * 2);
    if (io->peak_values)
        nan_fill(io->peak_values + at * n, n);
    if (io->instance_scores)
        io->instance_scores[at] = NAN;
    if (io->centroids)
        nan_fill(io->centroids + at * 2, 2);
    if (io->centroid_values)
        io->centroid_values[at] = NAN;
}

static bool point_visible(const float *xy)
{
    return !isnan(xy[0]) && !isnan(xy[1]);
}

static void filter_min_peak_value(sleapc_filter_outputs *io, float threshold)
{
    if (!io->keypoints || !io->peak_values)
        return;
    const int64_t n = io->n_frames * io->n_slots * io->n_nodes;
    for (int64_t p = 0; p < n; p++) {
        if (io->peak_values[p] < threshold) {
            io->keypoints[2 * p] = io->keypoints[2 * p + 1] = NAN;
            io->peak_values[p] = NAN;
        }
    }
}

static void filter_node_count(sleapc_filter_outputs *io, int min_visible, float min_fraction)
{
    if (!io->keypoints)
        return;
    const int64_t n = io->n_nodes;
    const float denom = (float)(n > 1 ? n : 1);
    for (int64_t b = 0; b < io->n_frames; b++) {
        for (int64_t i = 0; i < io->n_slots; i++) {
            const float *kp = io->keypoints + (b * io->n_slots + i) * n * 2;
            int64_t n_vis = 0;
            for (int64_t j = 0; j < n; j++)
                n_vis += point_visible(kp + 2 * j);
            bool keep = true;
            if (min_visible > 0)
                keep = keep && n_vis >= min_visible;
            if (min_fraction > 0.0f)
                keep = keep && (float)n_vis / denom >= min_fraction;
            if (!keep)
                drop_instance(io, b, i);
        }
    }
}

static void filter_confidence(sleapc_filter_outputs *io, const sleapc_filter_config *cfg)
{
    const float min_score = (float)cfg->min_instance_score;
    const float min_mean = (float)cfg->min_mean_node_score;
    if (!io->keypoints) {
        /* Centroid-only: gate on instance scores, else centroid values. */
        if (!io->centroids || !(cfg->min_instance_score > 0.0))
            return;
        const float *scores = io->instance_scores ? io->instance_scores : io->centroid_values;
        if (!scores)
            return;
        for (int64_t b = 0; b < io->n_frames; b++) {
            for (int64_t i = 0; i < io->n_slots; i++) {
                float s = scores[b * io->n_slots + i];
                if (s < min_score || isnan(s))
                    drop_instance(io, b, i);
            }
        }
        return;
    }
    for (int64_t b = 0; b < io->n_frames; b++) {
        for (int64_t i = 0; i < io->n_slots; i++) {
            const int64_t at = b * io->n_slots + i;
            bool keep = true;
            if (cfg->min_instance_score > 0.0 && io->instance_scores)
                keep = io->instance_scores[at] >= min_score; /* NaN fails */
            if (cfg->min_mean_node_score > 0.0 && io->peak_values) {
                float sum = 0.0f;
                int64_t count = 0;
                for (int64_t j = 0; j < io->n_nodes; j++) {
                    float v = io->peak_values[at * io->n_nodes + j];
                    if (!isnan(v)) {
                        sum = sum + v;
                        count++;
                    }
                }
                float mean = count ? sum / (float)count : 0.0f;
                keep = keep && mean >= min_mean;
            }
            if (!keep)
                drop_instance(io, b, i);
        }
    }
}

/* Box of the visible points of an instance; false when there is none. */
static bool visible_box(const float *xy, int64_t n, float box[4])
{
    bool any = false;
    for (int64_t j = 0; j < n; j++) {
        if (!point_visible(xy + 2 * j))
            continue;
        float x = xy[2 * j], y = xy[2 * j + 1];
        if (!any) {
            box[0] = box[2] = x;
            box[1] = box[3] = y;
            any = true;
        }
        box[0] = fminf(box[0], x);
        box[1] = fminf(box[1], y);
        box[2] = fmaxf(box[2], x);
        box[3] = fmaxf(box[3], y);
    }
    return any;
}

double sleapc__filters_bbox_iou(const float *a, const float *b, int64_t n_nodes)
{
    float ba[4], bb[4];
    if (!visible_box(a, n_nodes, ba) || !visible_box(b, n_nodes, bb))
        return 0.0;
    float iw = fminf(ba[2], bb[2]) - fmaxf(ba[0], bb[0]);
    float ih = fminf(ba[3], bb[3]) - fmaxf(ba[1], bb[1]);
    iw = iw > 0.0f ? iw : 0.0f;
    ih = ih > 0.0f ? ih : 0.0f;
    const double inter = (double)(iw * ih);
    const double area_a = (double)((ba[2] - ba[0]) * (ba[3] - ba[1]));
    const double area_b = (double)((bb[2] - bb[0]) * (bb[3] - bb[1]));
    const double uni = area_a + area_b - inter;
    return uni > 0.0 ? inter / uni : 0.0;
}

double sleapc__filters_oks(const float *a, const float *b, int64_t n_nodes)
{
    int64_t n_shared = 0, n_a = 0;
    for (int64_t j = 0; j < n_nodes; j++) {
        n_a += point_visible(a + 2 * j);
        n_shared += point_visible(a + 2 * j) && point_visible(b + 2 * j);
    }
    float box[4];
    if (n_shared == 0 || n_a < 2 || !visible_box(a, n_nodes, box))
        return 0.0;
    const float scale_sq = (box[2] - box[0]) * (box[3] - box[1]);
    if (!((double)scale_sq > 0.0))
        return 0.0;
    /* 2 * scale_sq * kappa**2: the Python double 0.1**2 becomes float32. */
    const float denom = (2.0f * scale_sq) * (float)(0.1 * 0.1);
    float sum = 0.0f;
    for (int64_t j = 0; j < n_nodes; j++) {
        if (!point_visible(a + 2 * j) || !point_visible(b + 2 * j))
            continue;
        float dx = a[2 * j] - b[2 * j], dy = a[2 * j + 1] - b[2 * j + 1];
        float d2 = dx * dx;
        d2 = d2 + dy * dy;
        sum = sum + expf(-d2 / denom);
    }
    return (double)(sum / (float)n_shared);
}

/* Tensor.argsort(descending=True) on CPU: NaN first, then descending; ties
 * keep index order (stable insertion sort). */
static void argsort_desc(const float *v, int64_t n, int64_t *order)
{
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i;
        while (j > 0) {
            float x = v[i], y = v[order[j - 1]];
            bool before = (isnan(x) && !isnan(y)) || x > y;
            if (!before)
                break;
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
}

static sleapc_status filter_overlapping(sleapc_filter_outputs *io, double threshold,
                                        sleapc_filter_overlap_method method)
{
    if (!io->keypoints || io->n_slots == 0)
        return SLEAPC_OK;
    if (method == SLEAPC_FILTER_OVERLAP_OKS && io->n_nodes < 2)
        method = SLEAPC_FILTER_OVERLAP_IOU;
    const int64_t n_s = io->n_slots, n = io->n_nodes;
    int64_t *order = sleapc__malloc((size_t)n_s * 2 * sizeof(int64_t));
    float *scores = sleapc__malloc((size_t)n_s * sizeof(float));
    bool *drop = sleapc__malloc((size_t)n_s * sizeof(bool));
    if (!order || !scores || !drop) {
        sleapc__free(order);
        sleapc__free(scores);
        sleapc__free(drop);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "filter overlapping instances: out of memory");
    }
    int64_t *kept = order + n_s;
    for (int64_t b = 0; b < io->n_frames; b++) {
        const float *kp = io->keypoints + b * n_s * n * 2;
        int64_t n_valid = 0;
        for (int64_t i = 0; i < n_s; i++) {
            bool valid = false;
            for (int64_t j = 0; j < 2 * n && !valid; j++)
                valid = !isnan(kp[i * n * 2 + j]);
            drop[i] = !valid; /* reused below as "skip" for empty slots */
            n_valid += valid;
            scores[i] = io->instance_scores ? io->instance_scores[b * n_s + i] : 0.0f;
        }
        if (n_valid <= 1)
            continue;
        argsort_desc(scores, n_s, order);
        int64_t n_kept = 0;
        for (int64_t r = 0; r < n_s; r++) {
            const int64_t idx = order[r];
            if (drop[idx])
                continue; /* empty slot */
            bool too_similar = false;
            for (int64_t q = 0; q < n_kept && !too_similar; q++) {
                const float *other = kp + kept[q] * n * 2;
                double sim = method == SLEAPC_FILTER_OVERLAP_OKS
                                 ? sleapc__filters_oks(kp + idx * n * 2, other, n)
                                 : sleapc__filters_bbox_iou(kp + idx * n * 2, other, n);
                too_similar = sim > threshold;
            }
            if (too_similar)
                drop_instance(io, b, idx);
            else
                kept[n_kept++] = idx;
        }
    }
    sleapc__free(order);
    sleapc__free(scores);
    sleapc__free(drop);
    return SLEAPC_OK;
}

static sleapc_status filter_centroid_distance(sleapc_filter_outputs *io, double min_distance)
{
    if (!io->centroids || io->n_slots == 0)
        return SLEAPC_OK;
    const int64_t n_s = io->n_slots;
    const float *score_src = io->centroid_values ? io->centroid_values : io->instance_scores;
    int64_t *order = sleapc__malloc((size_t)n_s * 2 * sizeof(int64_t));
    float *scores = sleapc__malloc((size_t)n_s * sizeof(float));
    bool *drop = sleapc__malloc((size_t)n_s * sizeof(bool));
    if (!order || !scores || !drop) {
        sleapc__free(order);
        sleapc__free(scores);
        sleapc__free(drop);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "filter close centroids: out of memory");
    }
    int64_t *kept = order + n_s;
    const double thresh_sq = min_distance * min_distance;
    for (int64_t b = 0; b < io->n_frames; b++) {
        const float *cen = io->centroids + b * n_s * 2;
        int64_t n_valid = 0;
        for (int64_t i = 0; i < n_s; i++) {
            bool valid = point_visible(cen + 2 * i);
            n_valid += valid;
            drop[i] = false;
            float s = score_src ? score_src[b * n_s + i] : 0.0f;
            scores[i] = isnan(s) ? -INFINITY : s; /* NaN scores sort last */
        }
        if (n_valid <= 1)
            continue;
        argsort_desc(scores, n_s, order);
        int64_t n_kept = 0;
        for (int64_t r = 0; r < n_s; r++) {
            const int64_t idx = order[r];
            if (!point_visible(cen + 2 * idx))
                continue;
            bool too_close = false;
            for (int64_t q = 0; q < n_kept && !too_close; q++) {
                float dx = cen[2 * idx] - cen[2 * kept[q]];
                float dy = cen[2 * idx + 1] - cen[2 * kept[q] + 1];
                float d2 = dx * dx;
                d2 = d2 + dy * dy;
                too_close = (double)d2 < thresh_sq;
            }
            if (too_close)
                drop[idx] = true;
            else
                kept[n_kept++] = idx;
        }
        /* The drop mask is applied after the walk, as _nan_out_where does. */
        for (int64_t i = 0; i < n_s; i++) {
            if (drop[i])
                drop_instance(io, b, i);
        }
    }
    sleapc__free(order);
    sleapc__free(scores);
    sleapc__free(drop);
    return SLEAPC_OK;
}

sleapc_status sleapc__filters_apply(const sleapc_filter_config *cfg, sleapc_filter_outputs *io)
{
    if (!cfg || !io || io->n_frames < 0 || io->n_slots < 0 || io->n_nodes < 0 ||
        (io->keypoints && io->n_nodes < 1))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "filter instances: bad arguments");
    if (cfg->min_peak_value > 0.0)
        filter_min_peak_value(io, (float)cfg->min_peak_value);
    if (cfg->min_visible_nodes > 0 || cfg->min_visible_node_fraction > 0.0)
        filter_node_count(io, cfg->min_visible_nodes, (float)cfg->min_visible_node_fraction);
    if (cfg->min_instance_score > 0.0 || cfg->min_mean_node_score > 0.0)
        filter_confidence(io, cfg);
    if (cfg->overlapping) {
        sleapc_status st =
            filter_overlapping(io, cfg->overlapping_threshold, cfg->overlapping_method);
        if (st)
            return st;
    }
    if (cfg->min_centroid_distance > 0.0)
        return filter_centroid_distance(io, cfg->min_centroid_distance);
    return SLEAPC_OK;
}
