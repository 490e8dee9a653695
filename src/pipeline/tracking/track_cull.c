/* Culling to a per-frame count and connecting single track breaks. */
#include "pipeline/tracking/track_cull.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/track_score.h"

/* numpy's maximum / minimum propagate NaN. */
static double np_max(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : (a > b ? a : b);
}

static double np_min(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : (a < b ? a : b);
}

/* a sorts before b by score, ascending, NaN last. */
static bool score_less(double a, double b)
{
    if (isnan(a))
        return false;
    return isnan(b) || a < b;
}

/* Stable insertion sort of idx[0..n) by score (frames hold few instances). */
static void sort_by_score(int *idx, int n, const double *scores, bool descending)
{
    for (int i = 1; i < n; i++) {
        const int v = idx[i];
        int j = i - 1;
        while (j >= 0 && (descending ? score_less(scores[idx[j]], scores[v])
                                     : score_less(scores[v], scores[idx[j]]))) {
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
}

sleapc_status sleapc__track_cull_reserve(sleapc_track_cull_ws *ws, int n)
{
    if (n <= ws->cap)
        return SLEAPC_OK;
    int *ints = sleapc__realloc(ws->ints, (size_t)n * 4 * sizeof *ints);
    if (ints)
        ws->ints = ints;
    double *doubles = sleapc__realloc(ws->doubles, (size_t)n * 5 * sizeof *doubles);
    if (doubles)
        ws->doubles = doubles;
    bool *removed = sleapc__realloc(ws->removed, (size_t)n * sizeof *removed);
    if (removed)
        ws->removed = removed;
    if (!ints || !doubles || !removed)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
    ws->cap = n;
    return SLEAPC_OK;
}

void sleapc__track_cull_ws_free(sleapc_track_cull_ws *ws)
{
    sleapc__free(ws->ints);
    sleapc__free(ws->doubles);
    sleapc__free(ws->removed);
    memset(ws, 0, sizeof *ws);
}

/* nms_fast: picks flags out. idxs, nms, order: n ints each; area: n. */
static void nms_fast(const double *boxes, const double *scores, int n, double thr, int target,
                     int *idxs, int *nms, int *order, double *area, bool *picked)
{
    int n_idx = n, n_nms = 0, n_picked = 0;
    for (int i = 0; i < n; i++) {
        idxs[i] = i;
        picked[i] = false;
        const double *b = boxes + 4 * i;
        area[i] = (b[2] - b[0] + 1) * (b[3] - b[1] + 1);
    }
    sort_by_score(idxs, n, scores, false);
    while (n_idx > 0) {
        const int p = idxs[n_idx - 1];
        picked[p] = true;
        n_picked++;
        const double *bp = boxes + 4 * p;
        int kept = 0;
        for (int k = 0; k < n_idx - 1; k++) {
            const int o = idxs[k];
            const double *bo = boxes + 4 * o;
            const double w = np_max(0, np_min(bp[2], bo[2]) - np_max(bp[0], bo[0]) + 1);
            const double h = np_max(0, np_min(bp[3], bo[3]) - np_max(bp[1], bo[1]) + 1);
            if ((w * h) / area[o] > thr)
                nms[n_nms++] = o;
            else
                idxs[kept++] = o;
        }
        n_idx = kept;
    }
    if (target && n_nms && n_picked < target) {
        memcpy(order, nms, sizeof(int) * (size_t)n_nms);
        sort_by_score(order, n_nms, scores, true);
        /* min(len(nms), picked - target) is negative here: a Python slice
         * nms[:k] with k < 0 keeps all but the last -k */
        int k = n_picked - target < n_nms ? n_picked - target : n_nms;
        const int take = k >= 0 ? k : (n_nms + k > 0 ? n_nms + k : 0);
        for (int i = 0; i < take; i++)
            picked[order[i]] = true;
    }
}

static bool same_pose(const double *a, const double *b, int n_nodes)
{
    for (int i = 0; i < 2 * n_nodes; i++) {
        if (isnan(a[i]) != isnan(b[i]))
            return false;
        if (!isnan(a[i]) && a[i] != b[i])
            return false;
    }
    return true;
}

void sleapc__track_cull(sleapc_track_cull_ws *ws, const double *points, const double *scores,
                        int n, int n_nodes, int count, double iou_threshold, bool *keep)
{
    for (int i = 0; i < n; i++)
        keep[i] = true;
    if (n <= count || n == 0)
        return;
    bool *removed = ws->removed;
    int *idx = ws->ints + 3 * (size_t)n;
    for (int i = 0; i < n; i++)
        removed[i] = false;
    if (iou_threshold != 0) {
        double *area = ws->doubles, *boxes = ws->doubles + n;
        for (int i = 0; i < n; i++)
            sleapc__track_feature(SLEAPC_TRACK_BBOXES, points + (int64_t)i * n_nodes * 2,
                                  n_nodes, boxes + 4 * i, NULL);
        nms_fast(boxes, scores, n, iou_threshold, count, ws->ints, ws->ints + n,
                 ws->ints + 2 * (size_t)n, area, keep);
        for (int i = 0; i < n; i++)
            removed[i] = !keep[i];
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (keep[i])
            idx[m++] = i;
    if (m > count) {
        sort_by_score(idx, m, scores, false);
        for (int i = 0; i < m - count; i++)
            removed[idx[i]] = true;
    }
    for (int i = 0; i < n; i++) {
        keep[i] = true;
        for (int j = 0; j < n && keep[i]; j++)
            if (removed[j] && same_pose(points + (int64_t)i * n_nodes * 2,
                                        points + (int64_t)j * n_nodes * 2, n_nodes))
                keep[i] = false;
    }
}

void sleapc__track_connect_free(sleapc_track_connect *c)
{
    sleapc__free(c->frame);
    sleapc__free(c->map_from);
    sleapc__free(c->map_to);
    sleapc__free(c->last_good);
    memset(c, 0, sizeof *c);
}

static bool has(const int64_t *set, int n, int64_t v)
{
    for (int i = 0; i < n; i++)
        if (set[i] == v)
            return true;
    return false;
}

static int set_of(const int *tracks, int n, int64_t *set)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!has(set, m, tracks[i]))
            set[m++] = tracks[i];
    return m;
}

static int map_find(const sleapc_track_connect *c, int64_t from)
{
    for (int i = 0; i < c->n_map; i++)
        if (c->map_from[i] == from)
            return i;
    return -1;
}

sleapc_status sleapc__track_connect_frame(sleapc_track_connect *c, int *tracks, int n)
{
    if (n > c->frame_cap) {
        int64_t *f = sleapc__realloc(c->frame, (size_t)n * sizeof *f);
        if (!f)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
        c->frame = f;
        c->frame_cap = n;
    }
    int64_t *frame = c->frame;
    int n_frame = set_of(tracks, n, frame);
    bool fixed_before = false;
    for (int i = 0; i < n_frame && !fixed_before; i++)
        fixed_before = map_find(c, frame[i]) >= 0;
    if (fixed_before) {
        for (int i = 0; i < n; i++) {
            const int k = map_find(c, tracks[i]);
            if (k >= 0 && !has(frame, n_frame, c->map_to[k])) {
                tracks[i] = (int)c->map_to[k];
                n_frame = set_of(tracks, n, frame);
            }
        }
    }
    int n_extra = 0, n_missing = 0;
    int64_t extra = 0, missing = 0;
    for (int i = 0; i < n_frame; i++)
        if (!has(c->last_good, c->n_last, frame[i])) {
            n_extra++;
            extra = frame[i];
        }
    for (int i = 0; i < c->n_last; i++)
        if (!has(frame, n_frame, c->last_good[i])) {
            n_missing++;
            missing = c->last_good[i];
        }
    if (n_extra == 1 && n_missing == 1) {
        for (int i = 0; i < n; i++) {
            if (tracks[i] != extra)
                continue;
            int k = map_find(c, extra);
            if (k < 0) {
                if (c->n_map == c->map_cap) {
                    const int cap = c->map_cap ? 2 * c->map_cap : 8;
                    int64_t *f = sleapc__realloc(c->map_from, (size_t)cap * sizeof *f);
                    if (f)
                        c->map_from = f;
                    int64_t *t = sleapc__realloc(c->map_to, (size_t)cap * sizeof *t);
                    if (t)
                        c->map_to = t;
                    if (!f || !t)
                        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
                    c->map_cap = cap;
                }
                k = c->n_map++;
                c->map_from[k] = extra;
            }
            c->map_to[k] = missing;
            tracks[i] = (int)missing;
            break;
        }
    } else if (n_frame >= c->n_last) {
        if (n_frame > c->last_cap) {
            int64_t *s = sleapc__realloc(c->last_good, (size_t)n_frame * sizeof *s);
            if (!s)
                return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
            c->last_good = s;
            c->last_cap = n_frame;
        }
        memcpy(c->last_good, frame, (size_t)n_frame * sizeof *frame);
        c->n_last = n_frame;
    }
    return SLEAPC_OK;
}
