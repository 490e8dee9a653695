/* sleap-nn's two candidate stores: FixedWindowCandidates (the last
 * window_size frames) and LocalQueueCandidates (the last window_size
 * instances of each track), each matching the current frame against its
 * columns, giving it tracks and storing it. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/tracker_impl.h"

/* Columns of the fixed window: list(set(track ids)) over the window, None
 * (-1) placed last (CPython hashes None by address; not reproducible). */
static sleapc_status window_columns(sleapc_tracker *t, int *n_cols)
{
    int total = 0;
    for (int k = 0; k < t->win_n; k++)
        total += t->window[(t->win_head + k) % t->o.window_size].n;
    int64_t need = total + 1, cap = t->cols_cap;
    sleapc_status st =
        sleapc__tracker_grow((void **)&t->col_track, &cap, 2 * need, sizeof *t->col_track);
    if (st)
        return st;
    t->cols_cap = (int)cap;
    int64_t *keys = t->col_track + need;
    int nk = 0;
    bool none = false;
    for (int k = 0; k < t->win_n; k++) {
        const inst_set *f = &t->window[(t->win_head + k) % t->o.window_size];
        for (int i = 0; i < f->n; i++) {
            if (f->track[i] < 0)
                none = true;
            else
                keys[nk++] = f->track[i];
        }
    }
    const int m = sleapc__pyset_order(keys, nk, &t->mws, t->col_track);
    if (m < 0)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
    *n_cols = m;
    if (none)
        t->col_track[(*n_cols)++] = -1;
    return SLEAPC_OK;
}

/* ---- the two stores --------------------------------------------------- */

static void window_push(sleapc_tracker *t, sleapc_status *st)
{
    const int w = t->o.window_size;
    int slot;
    if (t->win_n < w) {
        slot = (t->win_head + t->win_n) % w;
        t->win_n++;
    } else {
        slot = t->win_head;
        t->win_head = (t->win_head + 1) % w;
    }
    *st = sleapc__tracker_set_copy(t, &t->window[slot], &t->cur, -1);
}

/* FixedWindowCandidates.add_new_tracks over the current frame. */
static bool window_add_new(sleapc_tracker *t)
{
    bool any = false;
    for (int i = 0; i < t->cur.n; i++) {
        if (t->cur.valid[i] > t->o.min_new_track_points && t->cur.track[i] < 0) {
            t->cur.track[i] = t->next_id++;
            t->cur_tscore[i] = 1.0;
            any = true;
        }
    }
    return any;
}

sleapc_status sleapc__tracker_track_window(sleapc_tracker *t, const uint8_t *gray, int *order,
                                           int *n_order)
{
    sleapc_status st = SLEAPC_OK;
    const int n = t->cur.n;
    if (t->win_n == 0) {
        if (window_add_new(t))
            window_push(t, &st);
    } else {
        int n_cols = 0, n_pairs = 0;
        if ((st = window_columns(t, &n_cols)) ||
            (st = sleapc__tracker_score_columns(t, n_cols, gray)))
            return st;
        st = sleapc__track_match(t->o.matching, t->cost, n, n_cols, &t->mws, t->rows, t->cols,
                                 &n_pairs);
        if (st)
            return st;
        n_pairs = sleapc__tracker_drop_infeasible(t, n_cols, n_pairs, -1); /* no cap */
        for (int k = 0; k < n_pairs; k++) {
            t->cur.track[t->rows[k]] = t->col_track[t->cols[k]];
            t->cur_tscore[t->rows[k]] = -t->cost[(int64_t)t->rows[k] * n_cols + t->cols[k]];
        }
        if (n_pairs < n) /* an unmatched row: every None instance may spawn */
            window_add_new(t);
        window_push(t, &st); /* the queued frame is the same object in sleap-nn */
    }
    *n_order = 0;
    for (int i = 0; i < n; i++)
        if (t->cur.track[i] >= 0)
            order[(*n_order)++] = i;
    return st;
}

/* LocalQueueCandidates.get_new_track_id; -1 = refused by max_tracks. */
static int64_t queue_new_id(sleapc_tracker *t, sleapc_status *st)
{
    if (t->n_queues > 0 && t->o.max_tracks >= 0 && t->n_queues >= t->o.max_tracks)
        return -1;
    if (t->n_queues == t->queues_cap) {
        const int cap = t->queues_cap ? 2 * t->queues_cap : 8;
        local_queue *q = sleapc__realloc(t->queues, (size_t)cap * sizeof *q);
        if (!q) {
            *st = sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
            return -1;
        }
        t->queues = q;
        t->queues_cap = cap;
    }
    local_queue *q = &t->queues[t->n_queues];
    memset(q, 0, sizeof *q);
    q->entries = sleapc__calloc((size_t)t->o.window_size, sizeof *q->entries);
    if (!q->entries) {
        *st = sleapc__fail(SLEAPC_ERR_NOMEM, "tracker: out of memory");
        return -1;
    }
    t->next_id = t->n_queues + 1;
    return t->n_queues++;
}

static sleapc_status queue_push(sleapc_tracker *t, int i)
{
    local_queue *q = &t->queues[t->cur.track[i]];
    const int w = t->o.window_size;
    int slot;
    if (q->n < w) {
        slot = (q->head + q->n) % w;
        q->n++;
    } else {
        slot = q->head;
        q->head = (q->head + 1) % w;
    }
    return sleapc__tracker_set_copy(t, &q->entries[slot], &t->cur, i);
}

/* LocalQueueCandidates.add_new_tracks for instance i: 1 = keep it in the
 * output list (tracked, or too few points), 0 = refused by max_tracks. */
static int queue_add_new(sleapc_tracker *t, int i, sleapc_status *st)
{
    if (t->cur.valid[i] <= t->o.min_new_track_points)
        return 1;
    const int64_t id = queue_new_id(t, st);
    if (id < 0)
        return 0;
    t->cur.track[i] = id;
    t->cur_tscore[i] = 1.0;
    *st = queue_push(t, i);
    return 1;
}

sleapc_status sleapc__tracker_track_queues(sleapc_tracker *t, const uint8_t *gray, int *order,
                                           int *n_order)
{
    sleapc_status st = SLEAPC_OK;
    const int n = t->cur.n;
    *n_order = 0;
    if (t->n_queues == 0) {
        for (int i = 0; i < n && !st; i++)
            if (queue_add_new(t, i, &st))
                order[(*n_order)++] = i;
        return st;
    }
    const int n_cols = t->n_queues;
    int n_pairs = 0;
    if ((st = sleapc__tracker_score_columns(t, n_cols, gray)))
        return st;
    st =
        sleapc__track_match(t->o.matching, t->cost, n, n_cols, &t->mws, t->rows, t->cols, &n_pairs);
    if (st)
        return st;
    /* LocalQueueCandidates.available_new_tracks: ids run 0 .. n_queues - 1. */
    const int64_t slots = t->o.max_tracks < 0                 ? -1
                          : t->o.max_tracks > t->n_queues ? t->o.max_tracks - t->n_queues
                                                              : 0;
    n_pairs = sleapc__tracker_drop_infeasible(t, n_cols, n_pairs, slots);
    for (int k = 0; k < n_pairs; k++) {
        t->cur.track[t->rows[k]] = t->cols[k];
        t->cur_tscore[t->rows[k]] = -t->cost[(int64_t)t->rows[k] * n_cols + t->cols[k]];
        order[(*n_order)++] = t->rows[k];
    }
    for (int i = 0; i < n && !st; i++)
        if (t->cur.track[i] >= 0)
            st = queue_push(t, i);
    for (int i = 0; i < n && !st; i++) {
        bool matched = false;
        for (int k = 0; k < n_pairs && !matched; k++)
            matched = t->rows[k] == i;
        if (!matched && queue_add_new(t, i, &st) && t->cur.track[i] >= 0)
            order[(*n_order)++] = i;
    }
    return st;
}
