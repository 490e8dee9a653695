/* Identity assignment after sleap-nn ops/identity.py and the multi-class
 * layers. Assignments go through the scipy-exact solver in hungarian.c, so
 * tied probabilities pick the same class as sleap-nn.
 *
 * This file holds the workspace, the helpers both model kinds share and the
 * bottom-up (class map) functions; identity_vectors.c holds the top-down
 * (class vector) ones. */
#include "layers/ops/identity.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/coords.h"
#include "layers/ops/grouping.h"
#include "layers/ops/hungarian.h"
#include "layers/ops/identity_impl.h"

/* torch.round(v).to(int32).clamp(0, size - 1); clamping first keeps NaN
 * and huge values defined (NaN lands on 0 as Torch's INT_MIN does). */
static int64_t map_index(float v, int64_t size)
{
    float r = rintf(v);
    if (!(r >= 0.0f))
        return 0;
    if (r > (float)(size - 1))
        return size - 1;
    return (int64_t)r;
}

/* SLEAP 1.x (identity.py classify_peaks_from_maps): tf.round, then a
 * gather_nd that reads 0 outside the map (TensorFlow's GPU gather). -1 marks
 * such a look-up; NaN counts as outside. */
static int64_t map_index_or_outside(float v, int64_t size)
{
    float r = rintf(v);
    if (!(r >= 0.0f) || r > (float)(size - 1))
        return -1;
    return (int64_t)r;
}

void sleapc__identity_fill_nan(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = NAN;
}

void sleapc__identity_ws_free(sleapc_identity_ws *ws)
{
    if (!ws)
        return;
    sleapc__free(ws->block);
    sleapc__hungarian_ws_free(&ws->hws);
    ws->block = NULL;
    ws->cap = 0;
}

/* Appends count * elem bytes; returns their offset. */
size_t sleapc__identity_layout_add(sleapc_identity_layout *l, size_t count, size_t elem)
{
    const size_t at = l->bytes;
    if (count && elem > (SIZE_MAX / 2 - at) / count) {
        l->ok = false;
        return 0;
    }
    l->bytes = at + (count * elem + 7) / 8 * 8;
    return at;
}

/* ws->block with room for bytes (> 0); old contents are dropped. Doubling
 * lets a clip whose peak counts creep up settle after a few batches. */
unsigned char *sleapc__identity_ws_reserve(sleapc_identity_ws *ws, size_t bytes)
{
    if (bytes > ws->cap) {
        const size_t want = ws->cap <= SIZE_MAX / 2 && 2 * ws->cap > bytes ? 2 * ws->cap : bytes;
        sleapc__free(ws->block);
        ws->block = sleapc__malloc(want);
        ws->cap = ws->block ? want : 0;
    }
    return ws->block;
}

/* Scipy's assignment of rows to classes on cost = -probs (float32 negation,
 * then float64). cost, row, col: scratch of n_rows * n_classes and
 * min(n_rows, n_classes) entries. Returns the pair count in *n_pairs. */
sleapc_status sleapc__identity_assign_rows(const float *probs, int64_t n_rows, int64_t n_classes,
                                           sleapc_hungarian_ws *hws, double *cost, int64_t *row,
                                           int64_t *col, int64_t *n_pairs)
{
    for (int64_t i = 0; i < n_rows * n_classes; i++)
        cost[i] = (double)(-probs[i]);
    *n_pairs = n_rows < n_classes ? n_rows : n_classes;
    return sleapc__hungarian_solve_ws(cost, n_rows, n_classes, hws, row, col);
}

/* sampled: (n_peaks, n_classes) class vectors read elsewhere at the cells
 * sleapc__identity_class_cells gives, in place of class_maps (NULL then). */
static sleapc_status classify(const float *class_maps, const float *sampled, int64_t n_samples,
                              int64_t n_classes, int64_t map_h, int64_t map_w,
                              int class_maps_stride, const float *peaks, const float *peak_vals,
                              const int32_t *sample_inds, const int32_t *channel_inds,
                              int64_t n_peaks, int64_t n_nodes, bool outside_reads_zero,
                              sleapc_identity_ws *ws, float *points, float *point_vals,
                              float *class_probs)
{
    if (n_samples < 0 || n_classes < 1 || map_h < 1 || map_w < 1 || class_maps_stride < 1 ||
        n_peaks < 0 || n_nodes < 1 || (n_samples && (!points || !point_vals || !class_probs)) ||
        (n_peaks && ((!class_maps && !sampled) || !peaks || !peak_vals || !sample_inds ||
                     !channel_inds)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify peaks: bad arguments");
    if (n_samples == INT64_MAX || map_h > INT64_MAX / map_w / n_classes / (n_samples + 1) ||
        n_classes > INT64_MAX / 2 / n_nodes / (n_samples + 1))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify peaks: sizes overflow");
    for (int64_t p = 0; p < n_peaks; p++) {
        if (sample_inds[p] < 0 || sample_inds[p] >= n_samples || channel_inds[p] < 0 ||
            channel_inds[p] >= n_nodes)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "classify peaks: peak %lld: sample %d or node %d out of range",
                                (long long)p, (int)sample_inds[p], (int)channel_inds[p]);
    }
    sleapc__identity_fill_nan(points, n_samples * n_classes * n_nodes * 2);
    sleapc__identity_fill_nan(point_vals, n_samples * n_classes * n_nodes);
    sleapc__identity_fill_nan(class_probs, n_samples * n_classes * n_nodes);
    if (n_peaks == 0)
        return SLEAPC_OK;

    const size_t np = (size_t)n_peaks, nc = (size_t)n_classes;
    if (nc > SIZE_MAX / sizeof(double) / np)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify peaks: too many peaks");
    sleapc_identity_layout l = {.ok = true};
    const size_t o_cost = sleapc__identity_layout_add(&l, np * nc, sizeof(double));
    const size_t o_group = sleapc__identity_layout_add(&l, np, sizeof(int64_t));
    const size_t o_row = sleapc__identity_layout_add(&l, np, sizeof(int64_t));
    const size_t o_col = sleapc__identity_layout_add(&l, np, sizeof(int64_t));
    const size_t o_probs = sleapc__identity_layout_add(&l, np * nc, sizeof(float));
    const size_t o_gprobs = sleapc__identity_layout_add(&l, np * nc, sizeof(float));
    const size_t o_pcm = sleapc__identity_layout_add(&l, np * 2, sizeof(float));
    if (!l.ok)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify peaks: too many peaks");
    unsigned char *base = sleapc__identity_ws_reserve(ws, l.bytes);
    if (!base)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "classify peaks: out of memory");
    double *cost = (double *)(base + o_cost);
    int64_t *group = (int64_t *)(base + o_group);
    int64_t *row = (int64_t *)(base + o_row);
    int64_t *col = (int64_t *)(base + o_col);
    float *probs = (float *)(base + o_probs);
    float *gprobs = (float *)(base + o_gprobs);
    float *pcm = (float *)(base + o_pcm);

    /* Peaks in class-map cells (float32 peaks / stride), and the class
     * vector under each. */
    const float stride = (float)class_maps_stride;
    const int64_t plane = map_h * map_w;
    for (int64_t p = 0; p < n_peaks; p++) {
        pcm[2 * p] = peaks[2 * p] / stride;
        pcm[2 * p + 1] = peaks[2 * p + 1] / stride;
        if (sampled) {
            memcpy(probs + p * n_classes, sampled + p * n_classes, nc * sizeof(float));
            continue;
        }
        int64_t x, y;
        if (outside_reads_zero) {
            x = map_index_or_outside(pcm[2 * p], map_w);
            y = map_index_or_outside(pcm[2 * p + 1], map_h);
            if (x < 0 || y < 0) {
                for (int64_t c = 0; c < n_classes; c++)
                    probs[p * n_classes + c] = 0.0f;
                continue;
            }
        } else {
            x = map_index(pcm[2 * p], map_w);
            y = map_index(pcm[2 * p + 1], map_h);
        }
        const float *at = class_maps + (int64_t)sample_inds[p] * n_classes * plane + y * map_w + x;
        for (int64_t c = 0; c < n_classes; c++)
            probs[p * n_classes + c] = at[c * plane];
    }

    /* group_class_peaks: one assignment per (sample, node). */
    for (int64_t s = 0; s < n_samples; s++) {
        for (int64_t n = 0; n < n_nodes; n++) {
            int64_t n_g = 0;
            for (int64_t p = 0; p < n_peaks; p++) {
                if (sample_inds[p] == s && channel_inds[p] == n)
                    group[n_g++] = p;
            }
            if (n_g == 0)
                continue;
            for (int64_t i = 0; i < n_g; i++)
                memcpy(gprobs + i * n_classes, probs + group[i] * n_classes, nc * sizeof(float));
            int64_t n_pairs;
            sleapc_status st = sleapc__identity_assign_rows(gprobs, n_g, n_classes, &ws->hws, cost,
                                                            row, col, &n_pairs);
            if (st)
                return sleapc__wrap(st, "classify peaks: sample %lld, node %lld", (long long)s,
                                    (long long)n);
            for (int64_t i = 0; i < n_pairs; i++) {
                const int64_t p = group[row[i]], c = col[i];
                const float *pv = probs + p * n_classes;
                float best = pv[0];
                for (int64_t q = 1; q < n_classes; q++)
                    best = pv[q] > best ? pv[q] : best;
                if (pv[c] != best)
                    continue; /* matched, but not to the peak's best class */
                const int64_t at = (s * n_classes + c) * n_nodes + n;
                /* BottomUpMultiClassLayer: instances * class_maps_stride. */
                points[2 * at] = pcm[2 * p] * stride;
                points[2 * at + 1] = pcm[2 * p + 1] * stride;
                point_vals[at] = peak_vals[p];
                class_probs[at] = pv[c];
            }
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__identity_classify_peaks(const float *class_maps, int64_t n_samples,
                                              int64_t n_classes, int64_t map_h, int64_t map_w,
                                              int class_maps_stride, const float *peaks,
                                              const float *peak_vals, const int32_t *sample_inds,
                                              const int32_t *channel_inds, int64_t n_peaks,
                                              int64_t n_nodes, sleapc_identity_ws *ws,
                                              float *points, float *point_vals, float *class_probs)
{
    sleapc_identity_ws tmp = {0};
    sleapc_status st = classify(class_maps, NULL, n_samples, n_classes, map_h, map_w,
                                class_maps_stride, peaks, peak_vals, sample_inds, channel_inds,
                                n_peaks, n_nodes, false, ws ? ws : &tmp, points, point_vals,
                                class_probs);
    sleapc__identity_ws_free(&tmp);
    return st;
}

sleapc_status sleapc__identity_classify_peaks_sleap1(
    const float *class_maps, int64_t n_samples, int64_t n_classes, int64_t map_h, int64_t map_w,
    int class_maps_stride, const float *peaks, const float *peak_vals, const int32_t *sample_inds,
    const int32_t *channel_inds, int64_t n_peaks, int64_t n_nodes, sleapc_identity_ws *ws,
    float *points, float *point_vals, float *class_probs)
{
    sleapc_identity_ws tmp = {0};
    sleapc_status st = classify(class_maps, NULL, n_samples, n_classes, map_h, map_w,
                                class_maps_stride, peaks, peak_vals, sample_inds, channel_inds,
                                n_peaks, n_nodes, true, ws ? ws : &tmp, points, point_vals,
                                class_probs);
    sleapc__identity_ws_free(&tmp);
    return st;
}

/* torch.nanmean over the last axis: nansum (float32) / count of non-NaN. */
static float nanmean(const float *x, int64_t n)
{
    float sum = 0.0f;
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!isnan(x[i])) {
            sum = sum + x[i];
            count++;
        }
    }
    return sum / (float)count; /* 0 / 0 = NaN for an empty row */
}

sleapc_status sleapc__identity_bottomup_finish(int64_t n_samples, int64_t n_classes,
                                               int64_t n_nodes, float input_scale,
                                               const float *eff_scale, int64_t max_instances,
                                               sleapc_identity_ws *ws, float *points,
                                               float *point_vals, const float *class_probs,
                                               float *instance_scores, float *tracking_scores)
{
    if (n_samples < 0 || n_classes < 1 || n_nodes < 1 ||
        (n_samples &&
         (!points || !point_vals || !class_probs || !instance_scores || !tracking_scores)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "finish class instances: bad arguments");
    const int64_t per_sample = n_classes * n_nodes;
    for (int64_t s = 0; s < n_samples; s++) {
        float *xy = points + s * per_sample * 2;
        sleapc__coords_undo_input_scale(xy, per_sample, input_scale);
        sleapc__coords_undo_eff_scale(xy, per_sample, eff_scale ? eff_scale[s] : 1.0f);
    }
    for (int64_t i = 0; i < n_samples * n_classes; i++) {
        instance_scores[i] = nanmean(point_vals + i * n_nodes, n_nodes);
        tracking_scores[i] = nanmean(class_probs + i * n_nodes, n_nodes);
    }
    if (max_instances <= 0 || n_samples == 0)
        return SLEAPC_OK;

    sleapc_identity_ws tmp = {0};
    sleapc_identity_layout l = {.ok = true};
    sleapc__identity_layout_add(&l, (size_t)n_classes, sizeof(int64_t));
    int64_t *order = l.ok ? (int64_t *)sleapc__identity_ws_reserve(ws ? ws : &tmp, l.bytes) : NULL;
    if (!order)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "finish class instances: out of memory");
    for (int64_t s = 0; s < n_samples; s++) {
        float *scores = instance_scores + s * n_classes;
        int64_t n_valid = 0;
        for (int64_t c = 0; c < n_classes; c++)
            n_valid += !isnan(scores[c]);
        if (n_valid <= max_instances)
            continue;
        /* _cap_instances_by_score: keep np.argsort(scores)[::-1][:max]. */
        sleapc__grouping_argsort(scores, n_classes, order);
        for (int64_t r = 0; r < n_classes - max_instances; r++) {
            const int64_t c = order[r]; /* the tail of the reversed order */
            sleapc__identity_fill_nan(points + (s * n_classes + c) * n_nodes * 2, n_nodes * 2);
            sleapc__identity_fill_nan(point_vals + (s * n_classes + c) * n_nodes, n_nodes);
            tracking_scores[s * n_classes + c] = NAN;
        }
        for (int64_t r = 0; r < n_classes - max_instances; r++)
            scores[order[r]] = NAN;
    }
    sleapc__identity_ws_free(&tmp);
    return SLEAPC_OK;
}

void sleapc__identity_class_cells(const float *peaks, const int32_t *sample_inds, int64_t n_peaks,
                                  int64_t map_h, int64_t map_w, int class_maps_stride,
                                  int32_t (*cells)[3])
{
    const float stride = (float)class_maps_stride;
    for (int64_t p = 0; p < n_peaks; p++) {
        cells[p][0] = sample_inds[p];
        cells[p][1] = (int32_t)map_index(peaks[2 * p + 1] / stride, map_h);
        cells[p][2] = (int32_t)map_index(peaks[2 * p] / stride, map_w);
    }
}

sleapc_status sleapc__identity_classify_sampled(const float *sampled, int64_t n_samples,
                                                int64_t n_classes, int64_t map_h, int64_t map_w,
                                                int class_maps_stride, const float *peaks,
                                                const float *peak_vals,
                                                const int32_t *sample_inds,
                                                const int32_t *channel_inds, int64_t n_peaks,
                                                int64_t n_nodes, sleapc_identity_ws *ws,
                                                float *points, float *point_vals,
                                                float *class_probs)
{
    sleapc_identity_ws tmp = {0};
    sleapc_status st = classify(NULL, sampled, n_samples, n_classes, map_h, map_w,
                                class_maps_stride, peaks, peak_vals, sample_inds, channel_inds,
                                n_peaks, n_nodes, false, ws ? ws : &tmp, points, point_vals,
                                class_probs);
    sleapc__identity_ws_free(&tmp);
    return st;
}
