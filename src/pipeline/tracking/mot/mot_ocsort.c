/* OC-SORT (Cao et al., 2023) as sleap-nn 0.3.5 runs it
 * (tracking/mot/ocsort.py): detections above track_high_threshold (D_hi)
 * against every live track, admissible on geometry alone and ordered by
 * similarity plus the observation-centric momentum; with use_byte, the
 * remaining tracks against the low-score detections; then OCR, the
 * remaining D_hi against the remaining tracks' last observations. Only D_hi
 * starts tracks. The re-update along a virtual trajectory (ORU) is the
 * tracker core's. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_appearance.h"
#include "pipeline/tracking/mot/mot_assoc.h"
#include "pipeline/tracking/mot/mot_tracker.h"

/* The observation delta_t steps back (the oldest within the window), else
 * the latest one; NULL without any. */
static const double *previous_obs(const mot_tracker *T, const mot_track *t)
{
    for (int dt = T->p.delta_t; dt > 0; dt--)
        for (int i = 0; i < t->n_obs; i++)
            if (t->obs_step[i] == T->step - dt)
                return t->obs_box + 4 * i;
    return t->has_last_obs ? t->last_obs : NULL;
}

/* Records a stage's pairs; rows / cols are the stage's track and detection
 * positions, free_* shrink to those left unmatched (order kept). */
static void record(mot_result *r, mot_track *const *tracks, int *free_rows, int *n_rows,
                   int *free_cols, int *n_cols, const int *pr, const int *pc, int n_pairs,
                   const double *sim, int sim_m)
{
    for (int k = 0; k < n_pairs; k++)
        sleapc__mot_result_add(r, tracks[free_rows[pr[k]]], free_cols[pc[k]],
                               sim[(size_t)pr[k] * sim_m + pc[k]]);
    int a = 0;
    for (int i = 0; i < *n_rows; i++) {
        bool used = false;
        for (int k = 0; k < n_pairs && !used; k++)
            used = pr[k] == i;
        if (!used)
            free_rows[a++] = free_rows[i];
    }
    *n_rows = a;
    a = 0;
    for (int j = 0; j < *n_cols; j++) {
        bool used = false;
        for (int k = 0; k < n_pairs && !used; k++)
            used = pc[k] == j;
        if (!used)
            free_cols[a++] = free_cols[j];
    }
    *n_cols = a;
}

sleapc_status sleapc__mot_ocsort_associate(mot_tracker *T, int64_t d0, int m, mot_result *r)
{
    const mot_video *v = T->v;
    const sleapc_mot_params *p = &T->p;
    const int n = T->n_tracks;
    const size_t nm = (size_t)(n > 0 ? n : 1) * (size_t)(m > 0 ? m : 1);
    const size_t nn = (size_t)(n > 0 ? n : 1), mm = (size_t)(m > 0 ? m : 1);
    /* sim_all and sim leave room for n boxes after their n x m cells */
    double *sim_all = sleapc__mot_tmp(&T->tmp, (nm + 4 * nn) * sizeof *sim_all);
    double *sim = sleapc__mot_tmp(&T->tmp, (nm + 4 * nn) * sizeof *sim);
    double *score = sleapc__mot_tmp(&T->tmp, nm * sizeof *score);
    double *ocm = sleapc__mot_tmp(&T->tmp, nm * sizeof *ocm);
    double *geo = sleapc__mot_tmp(&T->tmp, 6 * nn * sizeof *geo); /* dirs, prev */
    double *hb = sleapc__mot_tmp(&T->tmp, 5 * mm * sizeof *hb);   /* D_hi boxes, scores */
    int *ibuf = sleapc__mot_tmp(&T->tmp, (3 * mm + nn + 2 * (nn + mm)) * sizeof *ibuf);
    bool *valid = sleapc__mot_tmp(&T->tmp, nm * sizeof *valid);
    bool *has_dir = sleapc__mot_tmp(&T->tmp, nn * sizeof *has_dir);
    mot_track **rem = sleapc__mot_tmp(&T->tmp, nn * sizeof *rem);
    sleapc_status st = SLEAPC_OK;
    if (!sim_all || !sim || !score || !ocm || !geo || !hb || !ibuf || !valid || !has_dir || !rem) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        goto done;
    }
    double *dirs = geo, *prev = geo + 2 * nn, *hs = hb + 4 * mm;
    int *free_rows = ibuf, *free_hi = free_rows + nn, *lo_idx = free_hi + mm, *pr = lo_idx + mm,
        *pc = pr + (nn + mm);
    int n_hi = 0, n_lo = 0;
    for (int j = 0; j < m; j++) {
        const double s = v->score[d0 + j];
        const bool usable = v->valid[d0 + j] && isfinite(s);
        const bool high = usable && s > p->track_high_threshold;
        const bool low = usable && s > p->track_low_threshold && s <= p->track_high_threshold;
        r->no_spawn[j] = !high;
        if (high)
            free_hi[n_hi++] = j;
        if (low)
            lo_idx[n_lo++] = j;
    }
    /* Deep OC-SORT has no BYTE stage */
    const bool use_byte = p->use_byte && p->tracker != SLEAPC_MOT_DEEPOCSORT;
    if (n == 0 || (n_hi == 0 && !use_byte))
        goto done;
    sleapc__mot_geometric_sim(T, T->tracks, n, d0, m, sim_all);
    int n_rows = n;
    for (int i = 0; i < n; i++)
        free_rows[i] = i;
    const int n_hi_all = n_hi;
    int n_pairs = 0;
    if (n_hi > 0) {
        /* stage 1: every live track vs D_hi; momentum orders the pairs */
        for (int i = 0; i < n; i++) {
            const mot_track *t = T->tracks[i];
            const double *obs = t->has_vel ? previous_obs(T, t) : NULL;
            has_dir[i] = obs != NULL;
            dirs[2 * i] = obs ? t->vel[0] : 0.0;
            dirs[2 * i + 1] = obs ? t->vel[1] : 0.0;
            for (int k = 0; k < 4; k++)
                prev[4 * i + k] = obs ? obs[k] : NAN;
        }
        for (int c = 0; c < n_hi; c++) {
            memcpy(hb + 4 * c, v->box + 4 * (d0 + free_hi[c]), 4 * sizeof *hb);
            hs[c] = v->score[d0 + free_hi[c]];
        }
        sleapc__mot_ocm(dirs, prev, has_dir, n, hb, hs, n_hi, p->inertia, ocm);
        for (int i = 0; i < n; i++)
            for (int c = 0; c < n_hi; c++) {
                const double s = sim_all[(size_t)i * m + free_hi[c]];
                sim[(size_t)i * n_hi + c] = s;
                valid[(size_t)i * n_hi + c] = s >= p->min_match_similarity;
                score[(size_t)i * n_hi + c] = s + ocm[(size_t)i * n_hi + c];
            }
        if (p->tracker == SLEAPC_MOT_DEEPOCSORT &&
            (st = sleapc__mot_deepocsort_stage1(T, m, free_hi, n_hi, sim, valid, score)))
            goto done;
        if (!sleapc__mot_one_to_one(valid, n, n_hi, pr, pc, &n_pairs) &&
            (st = sleapc__mot_assign_masked(score, valid, n, n_hi, &T->hws, &T->tmp, pr, pc,
                                            &n_pairs)))
            goto done;
        record(r, T->tracks, free_rows, &n_rows, free_hi, &n_hi, pr, pc, n_pairs, sim, n_hi_all);
    }
    if (use_byte && n_rows > 0 && n_lo > 0) {
        /* BYTE: the remaining tracks' predictions vs D_lo */
        for (int i = 0; i < n_rows; i++)
            for (int c = 0; c < n_lo; c++) {
                const double s = sim_all[(size_t)free_rows[i] * m + lo_idx[c]];
                sim[(size_t)i * n_lo + c] = s;
                valid[(size_t)i * n_lo + c] = s >= p->min_match_similarity;
            }
        if ((st = sleapc__mot_assign_masked(sim, valid, n_rows, n_lo, &T->hws, &T->tmp, pr, pc,
                                            &n_pairs)))
            goto done;
        int n_lo_left = n_lo;
        record(r, T->tracks, free_rows, &n_rows, lo_idx, &n_lo_left, pr, pc, n_pairs, sim, n_lo);
    }
    if (n_rows > 0 && n_hi > 0) {
        /* OCR: the remaining D_hi vs the remaining tracks' last observations */
        for (int i = 0; i < n_rows; i++)
            rem[i] = T->tracks[free_rows[i]];
        sleapc__mot_last_obs_sim(T, rem, n_rows, d0, m, sim_all);
        for (int i = 0; i < n_rows; i++)
            for (int c = 0; c < n_hi; c++) {
                const double s = sim_all[(size_t)i * m + free_hi[c]];
                sim[(size_t)i * n_hi + c] = s;
                valid[(size_t)i * n_hi + c] = s >= p->min_match_similarity;
            }
        if ((st = sleapc__mot_assign_masked(sim, valid, n_rows, n_hi, &T->hws, &T->tmp, pr, pc,
                                            &n_pairs)))
            goto done;
        const int n_hi_now = n_hi;
        record(r, T->tracks, free_rows, &n_rows, free_hi, &n_hi, pr, pc, n_pairs, sim, n_hi_now);
    }
done:
    return st;
}
