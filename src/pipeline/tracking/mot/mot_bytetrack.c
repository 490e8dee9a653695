/* ByteTrack (Zhang et al., 2022) as sleap-nn 0.3.5 runs it
 * (tracking/mot/bytetrack.py): confirmed and lost tracks against the
 * high-score detections (cost 1 - sim * score with fuse_score), the
 * tracks still unmatched that were tracked at the previous step against the
 * low-score detections (1 - sim), tentative tracks against the high-score
 * detections left; then tracked-vs-lost duplicate removal. Pose IoU is the
 * larger of the Kalman-box IoU and the IoU of the nodes both poses show. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_appearance.h"
#include "pipeline/tracking/mot/mot_assoc.h"
#include "pipeline/tracking/mot/mot_tracker.h"

#define MIN_BOX_FRACTION 0.25

/* _geometric_similarity of ByteTracker: fmax(box IoU, shared-node IoU). */
static sleapc_status bytetrack_sim(mot_tracker *T, int64_t d0, int m, double *sim)
{
    const mot_video *v = T->v;
    const int n = T->n_tracks, K = v->n_nodes;
    sleapc__mot_geometric_sim(T, T->tracks, n, d0, m, sim);
    double *pred = sleapc__mot_tmp(&T->tmp, ((size_t)n * K * 2 + (size_t)n * m) * sizeof *pred);
    if (!pred)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    double *shared = pred + (size_t)n * K * 2;
    /* predicted pose: the last pose shifted by the Kalman center's motion */
    for (int i = 0; i < n; i++) {
        const mot_track *t = T->tracks[i];
        const double sx = t->mean[0] - t->kf_center[0], sy = t->mean[1] - t->kf_center[1];
        for (int k = 0; k < K; k++) {
            pred[((size_t)i * K + k) * 2] = t->last_kp[2 * k] + sx;
            pred[((size_t)i * K + k) * 2 + 1] = t->last_kp[2 * k + 1] + sy;
        }
    }
    sleapc__mot_shared_node_iou(pred, n, v->kp + (size_t)d0 * K * 2, m, K, T->p.box_padding,
                                MIN_BOX_FRACTION * T->cal.body_size, shared);
    for (size_t c = 0; c < (size_t)n * m; c++)
        sim[c] = fmax(sim[c], shared[c]); /* fmax: a NaN side loses */
    sleapc__mot_finish_sim(sim, n, m, v->valid + d0);
    return SLEAPC_OK;
}

/* One stage: tracks rows[0..nr) (indices into T->tracks) vs detections
 * cols[0..nc) of the frame, capped at max_cost; appends the matches and
 * shrinks rows / cols to those left (order kept). */
static sleapc_status assign(mot_tracker *T, int64_t d0, int m, const double *sim, int *rows,
                            int *nr, int *cols, int *nc, double max_cost, bool fused, mot_result *r)
{
    if (*nr == 0 || *nc == 0)
        return SLEAPC_OK;
    const int n = *nr, k = *nc;
    double *cost = sleapc__mot_tmp(&T->tmp, (size_t)n * k * sizeof *cost);
    int *pr = sleapc__mot_tmp(&T->tmp, 2 * (size_t)(n < k ? n : k) * sizeof *pr);
    if (!cost || !pr) {
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    }
    int *pc = pr + (n < k ? n : k);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < k; c++) {
            double s = sim[(size_t)rows[i] * m + cols[c]];
            if (fused && T->p.fuse_score)
                s = s * T->v->score[d0 + cols[c]];
            cost[(size_t)i * k + c] = 1.0 - s;
        }
    sleapc_status st;
    if (fused && T->p.tracker == SLEAPC_MOT_BOTSORT &&
        (st = sleapc__mot_botsort_cost(T, m, sim, rows, n, cols, k, cost)))
        return st;
    int n_pairs = 0;
    st = sleapc__mot_assign_capped(cost, n, k, max_cost, &T->hws, &T->tmp, pr, pc, &n_pairs);
    if (!st) {
        for (int q = 0; q < n_pairs; q++)
            sleapc__mot_result_add(r, T->tracks[rows[pr[q]]], cols[pc[q]],
                                   sim[(size_t)rows[pr[q]] * m + cols[pc[q]]]);
        int a = 0;
        for (int i = 0; i < n; i++) {
            bool used = false;
            for (int q = 0; q < n_pairs && !used; q++)
                used = pr[q] == i;
            if (!used)
                rows[a++] = rows[i];
        }
        *nr = a;
        a = 0;
        for (int c = 0; c < k; c++) {
            bool used = false;
            for (int q = 0; q < n_pairs && !used; q++)
                used = pc[q] == c;
            if (!used)
                cols[a++] = cols[c];
        }
        *nc = a;
    }
    return st;
}

/* remove_duplicate_stracks: a lost track whose predicted box overlaps a
 * matched (or would-be new) detection's box above duplicate_similarity;
 * the shorter history is removed, the tracked side on ties. */
static sleapc_status remove_duplicates(mot_tracker *T, int64_t d0, const int *left_high, int n_left,
                                       const bool *spawnable, mot_result *r)
{
    const mot_video *v = T->v;
    const int n = T->n_tracks;
    mot_track **lost = sleapc__mot_tmp(&T->tmp, (size_t)(n > 0 ? n : 1) * sizeof *lost);
    const int nt_cap = r->n_matches + n_left + 1;
    int *tdet = sleapc__mot_tmp(&T->tmp, (size_t)nt_cap * sizeof *tdet);
    if (!lost || !tdet) {
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    }
    int n_lost = 0;
    for (int i = 0; i < n; i++) {
        mot_track *t = T->tracks[i];
        bool matched = false;
        for (int k = 0; k < r->n_matches && !matched; k++)
            matched = r->matches[k].t == t;
        if (t->state != MOT_TENTATIVE && !matched && t->tsu <= T->p.track_buffer)
            lost[n_lost++] = t;
    }
    /* tracked side: the matches, then the would-be new tracks (history 0) */
    int n_tr = 0;
    for (int k = 0; k < r->n_matches; k++)
        tdet[n_tr++] = r->matches[k].det;
    sleapc_status st = SLEAPC_OK;
    double *dup = NULL;
    bool *drop_tr = NULL, *drop_lost = NULL;
    if (n_lost == 0)
        goto done;
    for (int c = 0; c < n_left; c++)
        if (spawnable[left_high[c]])
            tdet[n_tr++] = left_high[c];
    if (n_tr == 0)
        goto done;
    dup = sleapc__mot_tmp(&T->tmp, ((size_t)n_lost * n_tr + 4 * (size_t)n_lost + 4 * (size_t)n_tr) *
                                       sizeof *dup);
    drop_tr = sleapc__mot_tmp_zero(&T->tmp, ((size_t)n_tr + (size_t)n_lost) * sizeof *drop_tr);
    if (!dup || !drop_tr) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        goto done;
    }
    drop_lost = drop_tr + n_tr;
    double *lb = dup + (size_t)n_lost * n_tr, *tb = lb + 4 * (size_t)n_lost;
    for (int q = 0; q < n_lost; q++)
        sleapc__mot_kf_box(&T->kf, lost[q]->mean, lb + 4 * q);
    for (int k = 0; k < n_tr; k++)
        memcpy(tb + 4 * k, v->box + 4 * (d0 + tdet[k]), 4 * sizeof *tb);
    sleapc__mot_iou(lb, n_lost, tb, n_tr, dup);
    const int64_t frame_idx = T->last_frame_idx;
    bool any = false;
    for (int q = 0; q < n_lost; q++)
        for (int k = 0; k < n_tr; k++) {
            if (!(dup[(size_t)q * n_tr + k] > T->p.duplicate_similarity))
                continue;
            const int64_t lost_hist = lost[q]->last_frame - lost[q]->start_frame;
            const int64_t tr_hist = k < r->n_matches ? frame_idx - r->matches[k].t->start_frame : 0;
            if (tr_hist > lost_hist)
                drop_lost[q] = true;
            else
                drop_tr[k] = true;
            any = true;
        }
    if (!any)
        goto done;
    /* removed: the dropped tracked tracks (their detections stay untracked
     * and start nothing), then the dropped lost tracks */
    for (int k = 0; k < n_tr; k++) {
        if (!drop_tr[k])
            continue;
        r->no_spawn[tdet[k]] = true;
        if (k < r->n_matches) {
            mot_track *t = r->matches[k].t;
            bool seen = false;
            for (int i = 0; i < r->n_removed && !seen; i++)
                seen = r->removed[i] == t;
            if (!seen)
                r->removed[r->n_removed++] = t;
        }
    }
    for (int q = 0; q < n_lost; q++) {
        if (!drop_lost[q])
            continue;
        bool seen = false;
        for (int i = 0; i < r->n_removed && !seen; i++)
            seen = r->removed[i] == lost[q];
        if (!seen)
            r->removed[r->n_removed++] = lost[q];
    }
    int a = 0;
    for (int k = 0; k < r->n_matches; k++) {
        bool gone = false;
        for (int i = 0; i < r->n_removed && !gone; i++)
            gone = r->removed[i] == r->matches[k].t;
        if (!gone)
            r->matches[a++] = r->matches[k];
    }
    r->n_matches = a;
done:
    return st;
}

sleapc_status sleapc__mot_bytetrack_associate(mot_tracker *T, int64_t d0, int m, mot_result *r)
{
    const mot_video *v = T->v;
    const sleapc_mot_params *p = &T->p;
    const int n = T->n_tracks;
    const size_t nn = (size_t)(n > 0 ? n : 1), mm = (size_t)(m > 0 ? m : 1);
    bool *spawnable = sleapc__mot_tmp(&T->tmp, mm * sizeof *spawnable);
    int *ibuf = sleapc__mot_tmp(&T->tmp, (3 * mm + 3 * nn) * sizeof *ibuf);
    double *sim = sleapc__mot_tmp(&T->tmp, (nn * mm + 4 * nn) * sizeof *sim);
    sleapc_status st = SLEAPC_OK;
    if (!spawnable || !ibuf || !sim) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        goto done;
    }
    int *high = ibuf, *low = high + mm, *pool = low + mm, *tracked = pool + nn,
        *tentative = tracked + nn;
    int n_high = 0, n_low = 0;
    for (int j = 0; j < m; j++) {
        const double s = v->score[d0 + j];
        const bool ok = v->valid[d0 + j];
        const bool hi = ok && s > p->track_high_threshold;
        if (hi)
            high[n_high++] = j;
        if (ok && s > p->track_low_threshold && s < p->track_high_threshold)
            low[n_low++] = j;
        spawnable[j] = hi && s >= p->new_track_threshold;
        r->no_spawn[j] = !spawnable[j];
    }
    if (n == 0)
        goto done;
    if ((st = bytetrack_sim(T, d0, m, sim)))
        goto done;
    /* stage 1: confirmed and lost tracks vs the high-score detections */
    int n_pool = 0, n_tent = 0;
    for (int i = 0; i < n; i++) {
        if (T->tracks[i]->state != MOT_TENTATIVE)
            pool[n_pool++] = i;
        else
            tentative[n_tent++] = i;
    }
    if ((st = assign(T, d0, m, sim, pool, &n_pool, high, &n_high, 1.0 - p->min_match_similarity,
                     true, r)))
        goto done;
    /* stage 2: those left that were tracked at the previous step vs the
     * low-score detections, never fused */
    int n_tracked = 0;
    for (int i = 0; i < n_pool; i++)
        if (T->tracks[pool[i]]->state == MOT_CONFIRMED)
            tracked[n_tracked++] = pool[i];
    if ((st = assign(T, d0, m, sim, tracked, &n_tracked, low, &n_low,
                     1.0 - p->low_stage_min_similarity, false, r)))
        goto done;
    /* stage 3: tentative tracks vs the high-score detections left */
    if ((st = assign(T, d0, m, sim, tentative, &n_tent, high, &n_high,
                     1.0 - p->unconfirmed_min_similarity, true, r)))
        goto done;
    st = remove_duplicates(T, d0, high, n_high, spawnable, r);
done:
    return st;
}
