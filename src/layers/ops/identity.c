/* Identity assignment after sleap-nn ops/identity.py and the multi-class
 * layers. Assignments go through the scipy-exact solver in hungarian.c, so
 * tied probabilities pick the same class as sleap-nn. */
#include "layers/ops/identity.h"

#include <math.h>
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

/* Scipy's assignment of rows to classes on cost = -probs (float32 negation,
 * then float64). cost, row, col: scratch of n_rows * n_classes and
 * min(n_rows, n_classes) entries. Returns the pair count in *n_pairs. */
static sleapc_status assign_rows(const float *probs, int64_t n_rows, int64_t n_classes,
                                 double *cost, int64_t *row, int64_t *col, int64_t *n_pairs)
{
    for (int64_t i = 0; i < n_rows * n_classes; i++)
        cost[i] = (double)(-probs[i]);
    *n_pairs = n_rows < n_classes ? n_rows : n_classes;
    return sleapc__hungarian_solve(cost, n_rows, n_classes, row, col);
}

static sleapc_status classify(const float *class_maps, int64_t n_samples, int64_t n_classes,
                              int64_t map_h, int64_t map_w, int class_maps_stride,
                              const float *peaks, const float *peak_vals,
                              const int32_t *sample_inds, const int32_t *channel_inds,
                              int64_t n_peaks, int64_t n_nodes, bool outside_reads_zero,
                              float *points, float *point_vals, float *class_probs)
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
    float *probs = sleapc__malloc(np * nc * sizeof(float));
    float *pcm = sleapc__malloc(np * 2 * sizeof(float));
    double *cost = sleapc__malloc(np * nc * sizeof(double));
    int64_t *group = sleapc__malloc(np * sizeof(int64_t));
    int64_t *row = sleapc__malloc(np * sizeof(int64_t));
    int64_t *col = sleapc__malloc(np * sizeof(int64_t));
    float *gprobs = sleapc__malloc(np * nc * sizeof(float));
    sleapc_status st = SLEAPC_OK;
    if (!probs || !pcm || !cost || !group || !row || !col || !gprobs) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "classify peaks: out of memory");
        goto done;
    }

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
            st = assign_rows(gprobs, n_g, n_classes, cost, row, col, &n_pairs);
            if (st) {
                st = sleapc__wrap(st, "classify peaks: sample %lld, node %lld", (long long)s,
                                  (long long)n);
                goto done;
            }
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
done:
    sleapc__free(probs);
    sleapc__free(pcm);
    sleapc__free(cost);
    sleapc__free(group);
    sleapc__free(row);
    sleapc__free(col);
    sleapc__free(gprobs);
    return st;
}

sleapc_status sleapc__identity_classify_peaks(const float *class_maps, int64_t n_samples,
                                              int64_t n_classes, int64_t map_h, int64_t map_w,
                                              int class_maps_stride, const float *peaks,
                                              const float *peak_vals, const int32_t *sample_inds,
                                              const int32_t *channel_inds, int64_t n_peaks,
                                              int64_t n_nodes, float *points, float *point_vals,
                                              float *class_probs)
{
    return classify(class_maps, n_samples, n_classes, map_h, map_w, class_maps_stride, peaks,
                    peak_vals, sample_inds, channel_inds, n_peaks, n_nodes, false, points,
                    point_vals, class_probs);
}

sleapc_status sleapc__identity_classify_peaks_sleap1(
    const float *class_maps, int64_t n_samples, int64_t n_classes, int64_t map_h, int64_t map_w,
    int class_maps_stride, const float *peaks, const float *peak_vals, const int32_t *sample_inds,
    const int32_t *channel_inds, int64_t n_peaks, int64_t n_nodes, float *points,
    float *point_vals, float *class_probs)
{
    return classify(class_maps, n_samples, n_classes, map_h, map_w, class_maps_stride, peaks,
                    peak_vals, sample_inds, channel_inds, n_peaks, n_nodes, true, points,
                    point_vals, class_probs);
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
                                               float *points, float *point_vals,
                                               const float *class_probs, float *instance_scores,
                                               float *tracking_scores)
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

    int64_t *order = sleapc__malloc((size_t)n_classes * sizeof *order);
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
    sleapc__free(order);
    return SLEAPC_OK;
}

sleapc_status sleapc__identity_classes_from_vectors(const float *vecs, int64_t n_rows,
                                                    int64_t n_classes, int64_t *class_inds,
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
    double *cost = sleapc__malloc(nr * nc * sizeof(double));
    int64_t *row = sleapc__malloc(k * sizeof(int64_t));
    int64_t *col = sleapc__malloc(k * sizeof(int64_t));
    sleapc_status st;
    if (!cost || !row || !col) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "classify crops: out of memory");
    } else {
        int64_t n_pairs;
        st = assign_rows(vecs, n_rows, n_classes, cost, row, col, &n_pairs);
        if (st) {
            st = sleapc__wrap(st, "classify crops");
        } else {
            for (int64_t i = 0; i < n_pairs; i++) {
                class_inds[row[i]] = col[i];
                class_probs[row[i]] = vecs[row[i] * n_classes + col[i]];
            }
        }
    }
    sleapc__free(cost);
    sleapc__free(row);
    sleapc__free(col);
    return st;
}

sleapc_status sleapc__identity_topdown_assign(const float *class_vectors, int64_t n_crops,
                                              int64_t n_classes, const int64_t *crop_frame,
                                              const int64_t *crop_slot, int64_t n_frames,
                                              int64_t n_slots, int64_t n_nodes,
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

    const size_t nc = (size_t)n_classes;
    float *vecs = sleapc__malloc((size_t)n_crops * nc * sizeof(float));
    int64_t *rows = sleapc__malloc((size_t)n_crops * sizeof(int64_t));
    int64_t *inds = sleapc__malloc((size_t)n_crops * sizeof(int64_t));
    float *probs = sleapc__malloc((size_t)n_crops * sizeof(float));
    sleapc_status st = SLEAPC_OK;
    if (!vecs || !rows || !inds || !probs) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "assign crop classes: out of memory");
        goto done;
    }
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
        st = sleapc__identity_classes_from_vectors(vecs, n, n_classes, inds, probs);
        if (st) {
            st = sleapc__wrap(st, "assign crop classes: frame %lld", (long long)b);
            goto done;
        }
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
done:
    sleapc__free(vecs);
    sleapc__free(rows);
    sleapc__free(inds);
    sleapc__free(probs);
    return st;
}

sleapc_status sleapc__identity_topdown_classes_sleap1(const float *class_vectors, int64_t n_crops,
                                                      int64_t n_classes,
                                                      const int64_t *crop_frame,
                                                      int64_t n_frames, int64_t *crop_class,
                                                      float *crop_prob)
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
    float *vecs = sleapc__malloc(nr * nc * sizeof(float));
    double *cost = sleapc__malloc(nr * nc * sizeof(double));
    int64_t *rows = sleapc__malloc(nr * sizeof(int64_t));
    int64_t *row = sleapc__malloc(k * sizeof(int64_t));
    int64_t *col = sleapc__malloc(k * sizeof(int64_t));
    sleapc_status st = SLEAPC_OK;
    if (!vecs || !cost || !rows || !row || !col) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "classify crops: out of memory");
        goto done;
    }
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
        st = assign_rows(vecs, n, n_classes, cost, row, col, &n_pairs);
        if (st) {
            st = sleapc__wrap(st, "classify crops: frame %lld", (long long)f);
            goto done;
        }
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
done:
    sleapc__free(vecs);
    sleapc__free(cost);
    sleapc__free(rows);
    sleapc__free(row);
    sleapc__free(col);
    return st;
}
