/* Identity assignment, top-down half: classes from per-crop class vectors
 * (sleap-nn's get_class_inds_from_vectors and the multi-class top-down
 * layers, and SLEAP 1.x's per-frame variant). Shared helpers and the class
 * map functions are in identity.c. */
#include "layers/ops/identity.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/error.h"
#include "layers/ops/hungarian.h"
#include "layers/ops/identity_impl.h"

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
    sleapc_status st =
        sleapc__identity_assign_rows(vecs, n_rows, n_classes, hws, cost, row, col, &n_pairs);
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
    sleapc_identity_layout l = {.ok = true};
    const size_t o_cost = sleapc__identity_layout_add(&l, nr * nc, sizeof(double));
    const size_t o_row = sleapc__identity_layout_add(&l, k, sizeof(int64_t));
    const size_t o_col = sleapc__identity_layout_add(&l, k, sizeof(int64_t));
    if (!l.ok)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify crops: too many crops");
    unsigned char *base = sleapc__identity_ws_reserve(ws, l.bytes);
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

static sleapc_status topdown_assign(const float *class_vectors, int64_t n_crops, int64_t n_classes,
                                    const int64_t *crop_frame, const int64_t *crop_slot,
                                    int64_t n_frames, int64_t n_slots, int64_t n_nodes,
                                    sleapc_identity_ws *ws, int64_t *pred_class_inds,
                                    float *tracking_scores, float *pred_class_vectors)
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
    sleapc__identity_fill_nan(tracking_scores, n_frames * n_slots);
    if (pred_class_vectors)
        sleapc__identity_fill_nan(pred_class_vectors, n_frames * n_slots * n_classes);
    if (n_crops == 0)
        return SLEAPC_OK;

    /* One frame's rows at a time; sized for the whole batch. */
    const size_t nr = (size_t)n_crops, nc = (size_t)n_classes;
    if (nc > SIZE_MAX / sizeof(double) / nr)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "assign crop classes: too many crops");
    const size_t k = nr < nc ? nr : nc;
    sleapc_identity_layout l = {.ok = true};
    const size_t o_cost = sleapc__identity_layout_add(&l, nr * nc, sizeof(double));
    const size_t o_row = sleapc__identity_layout_add(&l, k, sizeof(int64_t));
    const size_t o_col = sleapc__identity_layout_add(&l, k, sizeof(int64_t));
    const size_t o_rows = sleapc__identity_layout_add(&l, nr, sizeof(int64_t));
    const size_t o_inds = sleapc__identity_layout_add(&l, nr, sizeof(int64_t));
    const size_t o_vecs = sleapc__identity_layout_add(&l, nr * nc, sizeof(float));
    const size_t o_probs = sleapc__identity_layout_add(&l, nr, sizeof(float));
    if (!l.ok)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "assign crop classes: too many crops");
    unsigned char *base = sleapc__identity_ws_reserve(ws, l.bytes);
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
        sleapc_status st = match_vectors(vecs, n, n_classes, &ws->hws, cost, row, col, inds, probs);
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
                                      n_frames, n_slots, n_nodes, ws ? ws : &tmp, pred_class_inds,
                                      tracking_scores, pred_class_vectors);
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
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "classify crops: crop %lld: frame %lld "
                                "out of range",
                                (long long)i, (long long)crop_frame[i]);
        crop_class[i] = -1;
        crop_prob[i] = NAN;
    }
    if (n_crops == 0)
        return SLEAPC_OK;
    const size_t nr = (size_t)n_crops, nc = (size_t)n_classes;
    if (nc > SIZE_MAX / sizeof(double) / nr)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify crops: too many crops");
    const size_t k = nr < nc ? nr : nc;
    sleapc_identity_layout l = {.ok = true};
    const size_t o_cost = sleapc__identity_layout_add(&l, nr * nc, sizeof(double));
    const size_t o_rows = sleapc__identity_layout_add(&l, nr, sizeof(int64_t));
    const size_t o_row = sleapc__identity_layout_add(&l, k, sizeof(int64_t));
    const size_t o_col = sleapc__identity_layout_add(&l, k, sizeof(int64_t));
    const size_t o_vecs = sleapc__identity_layout_add(&l, nr * nc, sizeof(float));
    if (!l.ok)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "classify crops: too many crops");
    unsigned char *base = sleapc__identity_ws_reserve(ws, l.bytes);
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
        sleapc_status st =
            sleapc__identity_assign_rows(vecs, n, n_classes, &ws->hws, cost, row, col, &n_pairs);
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
                                                      int64_t n_classes, const int64_t *crop_frame,
                                                      int64_t n_frames, sleapc_identity_ws *ws,
                                                      int64_t *crop_class, float *crop_prob)
{
    sleapc_identity_ws tmp = {0};
    sleapc_status st = topdown_classes_sleap1(class_vectors, n_crops, n_classes, crop_frame,
                                              n_frames, ws ? ws : &tmp, crop_class, crop_prob);
    sleapc__identity_ws_free(&tmp);
    return st;
}
