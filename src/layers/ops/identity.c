/* Identity assignment after sleap-nn ops/identity.py and the multi-class
 * layers. Assignments go through the scipy-exact solver in hungarian.c, so
 * tied probabilities pick the same class as sleap-nn. */
#include "layers/ops/identity.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/coords.h"
#include "layers/ops/grouping.h"
#include "layers/ops/hungarian.h"

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

static void fill_nan(float *x, int64_t n)
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

/* The arrays of one call, laid out in one block: each starts on an 8-byte
 * boundary, so float64 and int64 arrays stay aligned. */
typedef struct layout {
    size_t bytes;
    bool ok; /* false once a size overflowed */
} layout;

/* Appends count * elem bytes; returns their offset. */
static size_t layout_add(layout *l, size_t count, size_t elem)
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
static unsigned char *ws_reserve(sleapc_identity_ws *ws, size_t bytes)
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
static sleapc_status assign_rows(const float *probs, int64_t n_rows, int64_t n_classes,
                                 sleapc_hungarian_ws *hws, double *cost, int64_t *row,
                                 int64_t *col, int64_t *n_pairs)
{
    for (int64_t i = 0; i < n_rows * n_classes; i++)
        cost[i] = (double)(-probs[i]);
    *n_pairs = n_rows < n_classes ? n_rows : n_classes;
    return sleapc__hungarian_solve_ws(cost, n_rows, n_classes, hws, row, col);
}

static sleapc_status classify(const float *class_maps, int64_t n_samples, int64_t n_classes,
                              int64_t map_h, int64_t map_w, int class_maps_stride,
                              const float *peaks, const float *peak_vals,
                              const int32_t *sample_inds, const int32_t *channel_inds,
                              int64_t n_peaks, int64_t n_nodes, bool outside_reads_zero,
                              sleapc_identity_ws *ws, float *points, float *point_vals,
                              float *class_probs)
{
    if (n_samples < 0 || n_classes < 1 || map_h < 1 || map_w < 1 || class_maps_stride < 1 ||
        n_peaks < 0 || n_nodes < 1 || (n_samples && (!points || !point_vals || !class_probs)) ||
        (n_peaks && (!class_maps || !peaks || !peak_vals || !sample_inds || !channel_inds)))
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
    fill_nan(points, n_samples * n_classes * n_nodes * 2);
    fill_nan(point_vals, n_samples * n_classes * n_nodes);
    fill_nan(class_probs, n_samples * n_classes * n_nodes);
    if (n_peaks == 0)
        return SLEAPC_OK;

    const size_t np = (size_t)n_peaks, nc = (size_t)n_classes;
    if (nc > SIZE_MAX / sizeof(double) / np)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify peaks: too many peaks");
    layout l = {.ok = true};
    const size_t o_cost = layout_add(&l, np * nc, sizeof(double));
    const size_t o_group = layout_add(&l, np, sizeof(int64_t));
    const size_t o_row = layout_add(&l, np, sizeof(int64_t));
    const size_t o_col = layout_add(&l, np, sizeof(int64_t));
    const size_t o_probs = layout_add(&l, np * nc, sizeof(float));
    const size_t o_gprobs = layout_add(&l, np * nc, sizeof(float));
    const size_t o_pcm = layout_add(&l, np * 2, sizeof(float));
    if (!l.ok)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify peaks: too many peaks");
    unsigned char *base = ws_reserve(ws, l.bytes);
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
            sleapc_status st =
                assign_rows(gprobs, n_g, n_classes, &ws->hws, cost, row, col, &n_pairs);
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
                                              float *points, float *point_vals,
                                              float *class_probs)
{
    sleapc_identity_ws tmp = {0};
    sleapc_status st = classify(class_maps, n_samples, n_classes, map_h, map_w, class_maps_stride,
                                peaks, peak_vals, sample_inds, channel_inds, n_peaks, n_nodes,
                                false, ws ? ws : &tmp, points, point_vals, class_probs);
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
    sleapc_status st = classify(class_maps, n_samples, n_classes, map_h, map_w, class_maps_stride,
                                peaks, peak_vals, sample_inds, channel_inds, n_peaks, n_nodes,
                                true, ws ? ws : &tmp, points, point_vals, class_probs);
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
    layout l = {.ok = true};
    layout_add(&l, (size_t)n_classes, sizeof(int64_t));
    int64_t *order = l.ok ? (int64_t *)ws_reserve(ws ? ws : &tmp, l.bytes) : NULL;
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
            fill_nan(points + (s * n_classes + c) * n_nodes * 2, n_nodes * 2);
            fill_nan(point_vals + (s * n_classes + c) * n_nodes, n_nodes);
            tracking_scores[s * n_classes + c] = NAN;
        }
        for (int64_t r = 0; r < n_classes - max_instances; r++)
            scores[order[r]] = NAN;
    }
    sleapc__identity_ws_free(&tmp);
    return SLEAPC_OK;
}

/* get_class_inds_from_vectors on validated arguments; cost, row, col as
 * for assign_rows. */
static sleapc_status match_vectors(const float *vecs, int64_t n_rows, int64_t n_classes,
                                   sleapc_hungarian_ws *hws, double *cost, int64_t *row,
                                   int64_t *col, int64_t *class_inds, float *class_probs)
{
    for (int64_t i = 0; i < n_rows; i++) {
        class_inds[i] = -1;
        class_probs[i] = NAN;
    }
    int64_t n_pairs;
    sleapc_status st = assign_rows(vecs, n_rows, n_classes, hws, cost, row, col, &n_pairs);
    if (st)
        return sleapc__wrap(st, "classify crops");
    for (int64_t i = 0; i < n_pairs; i++) {
        class_inds[row[i]] = col[i];
        class_probs[row[i]] = vecs[row[i] * n_classes + col[i]];
    }
    return SLEAPC_OK;
}

static sleapc_status classes_from_vectors(const float *vecs, int64_t n_rows, int64_t n_classes,
                                          sleapc_identity_ws *ws, int64_t *class_inds,
                                          float *class_probs)
{
    if (n_rows < 0 || n_classes < 1 || (n_rows && (!vecs || !class_inds || !class_probs)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify crops: bad arguments");
    for (int64_t i = 0; i < n_rows; i++) {
        class_inds[i] = -1;
        class_probs[i] = NAN;
    }
    if (n_rows == 0)
        return SLEAPC_OK;
    const size_t nr = (size_t)n_rows, nc = (size_t)n_classes;
    if (nc > SIZE_MAX / sizeof(double) / nr)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify crops: too many crops");
    const size_t k = nr < nc ? nr : nc;
    layout l = {.ok = true};
    const size_t o_cost = layout_add(&l, nr * nc, sizeof(double));
    const size_t o_row = layout_add(&l, k, sizeof(int64_t));
    const size_t o_col = layout_add(&l, k, sizeof(int64_t));
    if (!l.ok)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify crops: too many crops");
    unsigned char *base = ws_reserve(ws, l.bytes);
    if (!base)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "classify crops: out of memory");
    return match_vectors(vecs, n_rows, n_classes, &ws->hws, (double *)(base + o_cost),
                         (int64_t *)(base + o_row), (int64_t *)(base + o_col), class_inds,
                         class_probs);
}

sleapc_status sleapc__identity_classes_from_vectors(const float *vecs, int64_t n_rows,
                                                    int64_t n_classes, sleapc_identity_ws *ws,
                                                    int64_t *class_inds, float *class_probs)
{
    sleapc_identity_ws tmp = {0};
    sleapc_status st =
        classes_from_vectors(vecs, n_rows, n_classes, ws ? ws : &tmp, class_inds, class_probs);
    sleapc__identity_ws_free(&tmp);
    return st;
}

static sleapc_status topdown_assign(const float *class_vectors, int64_t n_crops,
                                    int64_t n_classes, const int64_t *crop_frame,
                                    const int64_t *crop_slot, int64_t n_frames, int64_t n_slots,
                                    int64_t n_nodes, sleapc_identity_ws *ws,
                                    int64_t *pred_class_inds, float *tracking_scores,
                                    float *pred_class_vectors)
{
    if (n_crops < 0 || n_classes < 1 || n_frames < 0 || n_slots < 0 || n_nodes < 1 ||
        (n_crops && (!class_vectors || !crop_frame || !crop_slot)) ||
        (n_frames && n_slots && (!pred_class_inds || !tracking_scores)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "assign crop classes: bad arguments");
    for (int64_t i = 0; i < n_crops; i++) {
        if (crop_frame[i] < 0 || crop_frame[i] >= n_frames || crop_slot[i] < 0 ||
            crop_slot[i] >= n_slots)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "assign crop classes: crop %lld: frame %lld or slot %lld "
                                "out of range",
                                (long long)i, (long long)crop_frame[i], (long long)crop_slot[i]);
    }
    for (int64_t i = 0; i < n_frames * n_slots * n_nodes; i++)
        pred_class_inds[i] = -1;
    fill_nan(tracking_scores, n_frames * n_slots);
    if (pred_class_vectors)
        fill_nan(pred_class_vectors, n_frames * n_slots * n_classes);
    if (n_crops == 0)
        return SLEAPC_OK;

    /* One frame's rows at a time; sized for the whole batch. */
    const size_t nr = (size_t)n_crops, nc = (size_t)n_classes;
    if (nc > SIZE_MAX / sizeof(double) / nr)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "assign crop classes: too many crops");
    const size_t k = nr < nc ? nr : nc;
    layout l = {.ok = true};
    const size_t o_cost = layout_add(&l, nr * nc, sizeof(double));
    const size_t o_row = layout_add(&l, k, sizeof(int64_t));
    const size_t o_col = layout_add(&l, k, sizeof(int64_t));
    const size_t o_rows = layout_add(&l, nr, sizeof(int64_t));
    const size_t o_inds = layout_add(&l, nr, sizeof(int64_t));
    const size_t o_vecs = layout_add(&l, nr * nc, sizeof(float));
    const size_t o_probs = layout_add(&l, nr, sizeof(float));
    if (!l.ok)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "assign crop classes: too many crops");
    unsigned char *base = ws_reserve(ws, l.bytes);
    if (!base)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "assign crop classes: out of memory");
    double *cost = (double *)(base + o_cost);
    int64_t *row = (int64_t *)(base + o_row), *col = (int64_t *)(base + o_col);
    int64_t *rows = (int64_t *)(base + o_rows), *inds = (int64_t *)(base + o_inds);
    float *vecs = (float *)(base + o_vecs), *probs = (float *)(base + o_probs);
    /* torch.unique(crop_b) is ascending; each frame's crops keep their order. */
    for (int64_t b = 0; b < n_frames; b++) {
        int64_t n = 0;
        for (int64_t i = 0; i < n_crops; i++) {
            if (crop_frame[i] == b) {
                memcpy(vecs + n * n_classes, class_vectors + i * n_classes, nc * sizeof(float));
                rows[n++] = i;
            }
        }
        if (n == 0)
            continue;
        sleapc_status st =
            match_vectors(vecs, n, n_classes, &ws->hws, cost, row, col, inds, probs);
        if (st)
            return sleapc__wrap(st, "assign crop classes: frame %lld", (long long)b);
        for (int64_t r = 0; r < n; r++) {
            const int64_t at = b * n_slots + crop_slot[rows[r]];
            for (int64_t j = 0; j < n_nodes; j++)
                pred_class_inds[at * n_nodes + j] = inds[r];
            tracking_scores[at] = probs[r];
            if (pred_class_vectors)
                memcpy(pred_class_vectors + at * n_classes, vecs + r * n_classes,
                       nc * sizeof(float));
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__identity_topdown_assign(const float *class_vectors, int64_t n_crops,
                                              int64_t n_classes, const int64_t *crop_frame,
                                              const int64_t *crop_slot, int64_t n_frames,
                                              int64_t n_slots, int64_t n_nodes,
                                              sleapc_identity_ws *ws, int64_t *pred_class_inds,
                                              float *tracking_scores, float *pred_class_vectors)
{
    sleapc_identity_ws tmp = {0};
    sleapc_status st = topdown_assign(class_vectors, n_crops, n_classes, crop_frame, crop_slot,
                                      n_frames, n_slots, n_nodes, ws ? ws : &tmp,
                                      pred_class_inds, tracking_scores, pred_class_vectors);
    sleapc__identity_ws_free(&tmp);
    return st;
}

static sleapc_status topdown_classes_sleap1(const float *class_vectors, int64_t n_crops,
                                            int64_t n_classes, const int64_t *crop_frame,
                                            int64_t n_frames, sleapc_identity_ws *ws,
                                            int64_t *crop_class, float *crop_prob)
{
    if (n_crops < 0 || n_classes < 1 || n_frames < 0 ||
        (n_crops && (!class_vectors || !crop_frame || !crop_class || !crop_prob)))
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify crops: bad arguments");
    for (int64_t i = 0; i < n_crops; i++) {
        if (crop_frame[i] < 0 || crop_frame[i] >= n_frames)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify crops: crop %lld: frame %lld "
                                "out of range", (long long)i, (long long)crop_frame[i]);
        crop_class[i] = -1;
        crop_prob[i] = NAN;
    }
    if (n_crops == 0)
        return SLEAPC_OK;
    const size_t nr = (size_t)n_crops, nc = (size_t)n_classes;
    if (nc > SIZE_MAX / sizeof(double) / nr)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify crops: too many crops");
    const size_t k = nr < nc ? nr : nc;
    layout l = {.ok = true};
    const size_t o_cost = layout_add(&l, nr * nc, sizeof(double));
    const size_t o_rows = layout_add(&l, nr, sizeof(int64_t));
    const size_t o_row = layout_add(&l, k, sizeof(int64_t));
    const size_t o_col = layout_add(&l, k, sizeof(int64_t));
    const size_t o_vecs = layout_add(&l, nr * nc, sizeof(float));
    if (!l.ok)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify crops: too many crops");
    unsigned char *base = ws_reserve(ws, l.bytes);
    if (!base)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "classify crops: out of memory");
    double *cost = (double *)(base + o_cost);
    int64_t *rows = (int64_t *)(base + o_rows);
    int64_t *row = (int64_t *)(base + o_row), *col = (int64_t *)(base + o_col);
    float *vecs = (float *)(base + o_vecs);
    for (int64_t f = 0; f < n_frames; f++) {
        int64_t n = 0;
        for (int64_t i = 0; i < n_crops; i++) {
            if (crop_frame[i] == f) {
                memcpy(vecs + n * n_classes, class_vectors + i * n_classes, nc * sizeof(float));
                rows[n++] = i;
            }
        }
        if (n == 0)
            continue;
        int64_t n_pairs;
        sleapc_status st = assign_rows(vecs, n, n_classes, &ws->hws, cost, row, col, &n_pairs);
        if (st)
            return sleapc__wrap(st, "classify crops: frame %lld", (long long)f);
        for (int64_t p = 0; p < n_pairs; p++) {
            const float *pv = vecs + row[p] * n_classes;
            float best = pv[0];
            for (int64_t q = 1; q < n_classes; q++)
                best = pv[q] > best ? pv[q] : best;
            if (pv[col[p]] != best)
                continue; /* group_class_peaks keeps best-class matches only */
            crop_class[rows[row[p]]] = col[p];
            crop_prob[rows[row[p]]] = pv[col[p]];
        }
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__identity_topdown_classes_sleap1(const float *class_vectors, int64_t n_crops,
                                                      int64_t n_classes,
                                                      const int64_t *crop_frame,
                                                      int64_t n_frames, sleapc_identity_ws *ws,
                                                      int64_t *crop_class, float *crop_prob)
{
    sleapc_identity_ws tmp = {0};
    sleapc_status st = topdown_classes_sleap1(class_vectors, n_crops, n_classes, crop_frame,
                                              n_frames, ws ? ws : &tmp, crop_class, crop_prob);
    sleapc__identity_ws_free(&tmp);
    return st;
}
