/* sleap-nn 0.3.5's TrackEval-faithful block (evaluation.py:
 * compute_mot_metrics): per frame, a similarity for every GT x tracked
 * prediction pair (OKS, or 1 - d / (2 threshold) on centroid distance; NaN
 * as 0); predictions matched to untracked GT removed (MOTChallenge's
 * distractors); one sequence per video (one in all under global identities,
 * reset at each video); scored by trackeval.h and combined. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "core/np_sum.h"
#include "layers/ops/hungarian.h"
#include "pipeline/eval/eval_identity_blocks.h"
#include "pipeline/eval/eval_identity_traj.h"
#include "pipeline/eval/trackeval.h"

typedef struct mot_acc {
    int64_t n_gt_untracked, n_pred_untracked, n_dont_care, missing, n_superseded;
    char error[512];
} mot_acc;

/* _mot_similarity for kept GT g x tracked predictions p. */
static sleapc_status similarity(const sleapc_id_ctx *c, const int64_t *g, int64_t ng,
                                const int64_t *p, int64_t np, double *sim)
{
    if (c->distance) {
        for (int64_t i = 0; i < ng; i++) {
            double a[2];
            sleapc__id_centroid(c->gt, g[i], a);
            for (int64_t j = 0; j < np; j++) {
                double b[2];
                sleapc__id_centroid(c->pr, p[j], b);
                const double dx = a[0] - b[0], dy = a[1] - b[1];
                sim[i * np + j] = fmax(0.0, 1.0 - sqrt(dx * dx + dy * dy) / (2.0 * c->threshold));
                if (isnan(dx) || isnan(dy))
                    sim[i * np + j] = 0.0;
            }
        }
        return SLEAPC_OK;
    }
    sleapc_status st =
        sleapc__id_pose_similarity(c->gt, g, ng, c->pr, p, np, c->o->oks_stddev, sim);
    for (int64_t k = 0; !st && k < ng * np; k++)
        if (isnan(sim[k]))
            sim[k] = 0.0;
    return st;
}

/* _drop_dont_care_predictions: keep[j] false for a prediction matched
 * (at the threshold) to untracked GT. */
static sleapc_status dont_care(const double *sim, const bool *tracked, int64_t ng, int64_t np,
                               double thr, double *cost, sleapc_hungarian_ws *ws, int64_t *rows,
                               int64_t *cols, bool *keep)
{
    for (int64_t j = 0; j < np; j++)
        keep[j] = true;
    bool all = true;
    for (int64_t i = 0; i < ng; i++)
        all &= tracked[i];
    if (all || !ng || !np)
        return SLEAPC_OK;
    for (int64_t k = 0; k < ng * np; k++)
        cost[k] = -(sim[k] < thr - DBL_EPSILON ? 0.0 : sim[k]);
    sleapc_status st = sleapc__hungarian_solve_ws(cost, ng, np, ws, rows, cols);
    if (st)
        return st;
    for (int64_t m = 0; m < (ng < np ? ng : np); m++)
        if (-cost[rows[m] * np + cols[m]] > DBL_EPSILON && !tracked[rows[m]])
            keep[cols[m]] = false;
    return SLEAPC_OK;
}

/* A track name twice among one frame's scored detections: sleap-nn refuses. */
static bool duplicate(const sleapc_ev_labels *l, const int64_t *ids, int64_t n, const char **name)
{
    for (int64_t a = 0; a < n; a++)
        for (int64_t b = a + 1; b < n; b++)
            if (!strcmp(l->track_names[l->insts[ids[a]].track],
                        l->track_names[l->insts[ids[b]].track])) {
                *name = l->track_names[l->insts[ids[a]].track];
                return true;
            }
    return false;
}

static sleapc_status put_scores(const sleapc_id_ctx *c, const sleapc_mot_scores *s,
                                const mot_acc *acc, sleapc_pyobj *d)
{
    const double n_a = SLEAPC_MOT_N_ALPHA;
    const int64_t shape[1] = {SLEAPC_MOT_N_ALPHA};
    const struct {
        const char *key;
        const double *arr;
    } arrays[] = {{"hota", s->hota},     {"det_a", s->det_a},   {"ass_a", s->ass_a},
                  {"loc_a", s->loc_a},   {"det_re", s->det_re}, {"det_pr", s->det_pr},
                  {"ass_re", s->ass_re}, {"ass_pr", s->ass_pr}, {"owta", s->owta}};
    sleapc_status st = sleapc__id_put_num(d, "mota", s->mota);
    if (!st)
        st = sleapc__id_put_num(d, "motp", s->motp);
    if (!st)
        st = sleapc__id_put_num(d, "moda", s->moda);
    const struct {
        const char *key;
        int64_t v;
    } ints[] = {{"idsw", s->idsw},     {"frag", s->frag},    {"mt", s->mt},
                {"pt", s->pt},         {"ml", s->ml},        {"clr_tp", s->clr_tp},
                {"clr_fn", s->clr_fn}, {"clr_fp", s->clr_fp}};
    for (size_t k = 0; !st && k < sizeof ints / sizeof ints[0]; k++)
        st = sleapc__pyobj_set(d, ints[k].key, sleapc__pyobj_int(ints[k].v));
    if (!st)
        st = sleapc__id_put_num(d, "idf1", s->idf1);
    if (!st)
        st = sleapc__id_put_num(d, "idp", s->idp);
    if (!st)
        st = sleapc__id_put_num(d, "idr", s->idr);
    if (!st)
        st = sleapc__pyobj_set(d, "idtp", sleapc__pyobj_int(s->idtp));
    if (!st)
        st = sleapc__pyobj_set(d, "idfp", sleapc__pyobj_int(s->idfp));
    if (!st)
        st = sleapc__pyobj_set(d, "idfn", sleapc__pyobj_int(s->idfn));
    /* headline HOTA-family numbers: np.mean over the alphas */
    for (size_t k = 0; !st && k < sizeof arrays / sizeof arrays[0]; k++)
        st = sleapc__id_put_num(d, arrays[k].key,
                                sleapc__np_pairwise_sum(arrays[k].arr, SLEAPC_MOT_N_ALPHA) / n_a);
    if (!st)
        st = sleapc__id_put_num(d, "hota_0", s->hota[0]);
    if (!st)
        st = sleapc__id_put_num(d, "loc_a_0", s->loc_a[0]);
    const char *alpha_keys[] = {"hota_alpha", "det_a_alpha", "ass_a_alpha", "loc_a_alpha"};
    const double *alpha_vals[] = {s->hota, s->det_a, s->ass_a, s->loc_a};
    for (int k = 0; !st && k < 4; k++)
        st = sleapc__pyobj_set(d, alpha_keys[k], sleapc__pyobj_array_f64(alpha_vals[k], 1, shape));
    const int64_t frames = c->al->n;
    const struct {
        const char *key;
        int64_t v;
    } tail[] = {
        {"n_gt_dets", s->clr_tp + s->clr_fn},    {"n_gt_untracked", acc->n_gt_untracked},
        {"n_pred_dets", s->clr_tp + s->clr_fp},  {"n_pred_untracked", acc->n_pred_untracked},
        {"n_dont_care", acc->n_dont_care},       {"n_frames", frames},
        {"n_frames_missing_pred", acc->missing}, {"n_videos", c->al->n_videos}};
    for (size_t k = 0; !st && k < sizeof tail / sizeof tail[0]; k++)
        st = sleapc__pyobj_set(d, tail[k].key, sleapc__pyobj_int(tail[k].v));
    if (!st)
        st = sleapc__pyobj_set(d, "match_method",
                               sleapc__pyobj_str(c->distance ? "distance" : "oks"));
    if (!st)
        st = sleapc__id_put_num(d, "match_threshold", c->threshold);
    if (!st)
        st = sleapc__id_put_num(d, "oks_stddev", c->o->oks_stddev);
    if (!st)
        st = sleapc__pyobj_set(d, "global_identity", sleapc__pyobj_bool(c->o->global_identity));
    return st;
}

static bool mot_notes(const sleapc_id_ctx *c, const sleapc_mot_scores *s, const mot_acc *acc,
                      sleapc_id_notes *n)
{
    bool ok = sleapc__id_align_notes(c->al, n);
    if (acc->n_superseded)
        ok &= sleapc__id_note(n,
                              "%lld ground-truth detections were left out because a user label "
                              "on the same frame replaces them (a prediction corrected in the "
                              "GUI -- same track, or linked by from_predicted -- or its mask)",
                              (long long)acc->n_superseded);
    if (acc->n_gt_untracked)
        ok &= sleapc__id_note(n,
                              "%lld untracked ground-truth detections are don't-care; %lld "
                              "tracked predictions matched them and were removed before scoring",
                              (long long)acc->n_gt_untracked, (long long)acc->n_dont_care);
    const int64_t n_gt = s->clr_tp + s->clr_fn, n_pr = s->clr_tp + s->clr_fp;
    if (acc->n_dont_care && n_gt && !s->clr_tp)
        ok &= sleapc__id_note(n, "every prediction that matched ground truth matched an UNTRACKED "
                                 "detection (don't-care) and was not scored. If the untracked "
                                 "ground truth is stale predictions rather than animals left "
                                 "unlabeled, pass user_labels_only=True (--user_labels_only).");
    if (n_gt && n_pr && !s->clr_tp)
        ok &= sleapc__id_note(n,
                              c->distance ? "no tracked prediction matched a tracked ground-truth "
                                            "detection (centroid distance <= %g px) -- check the "
                                            "match threshold and the carrier"
                                          : "no tracked prediction matched a tracked ground-truth "
                                            "detection (OKS >= %g) -- check the match threshold "
                                            "and the carrier",
                              c->threshold);
    return ok;
}

static sleapc_status error_block(const char *msg, sleapc_pyobj **out)
{
    sleapc_pyobj *d = sleapc__pyobj_dict();
    sleapc_status st = d ? sleapc__pyobj_set(d, "error", sleapc__pyobj_str(msg)) : SLEAPC_ERR_NOMEM;
    if (st) {
        sleapc__pyobj_free(d);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    }
    *out = d;
    return SLEAPC_OK;
}

static void duplicate_error(const sleapc_id_ctx *c, bool gt_side, const char *name, int64_t pos,
                            mot_acc *acc)
{
    const char *hint =
        gt_side && !c->o->user_labels_only
            ? " Predictions a user label on the same frame replaces (same track, or linked by "
              "from_predicted) are already left out, so two ground-truth detections share a "
              "track: two user labels, or a stale prediction carrying a user track. Fix the "
              "tracks, or pass user_labels_only=True (--user_labels_only) to score the user "
              "labels only."
            : " Fix the tracks (or drop the duplicate detections) before scoring.";
    snprintf(acc->error, sizeof acc->error,
             "%s track(s) ['%s'] occur on more than one scored detection in video '%s', frame "
             "%lld -- a track can hold one detection per frame.%s",
             gt_side ? "Ground-truth" : "Predicted", name, c->al->video[pos],
             (long long)c->gt->frames[c->al->gt_frame[pos]].frame_idx, hint);
}

sleapc_status sleapc__id_mot(const sleapc_id_ctx *c, sleapc_pyobj **out)
{
    *out = NULL;
    if (c->distance && !(c->threshold > 0)) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "match_threshold must be a positive pixel distance for single-node skeletons, "
                 "got %.17g.",
                 c->threshold);
        return error_block(msg, out);
    }
    const sleapc_ev_labels *gt = c->gt, *pr = c->pr;
    const sleapc_id_align *al = c->al;
    const double sim_thr = c->distance ? 0.5 : c->threshold;
    int64_t mg = 1, mp = 1;
    for (int64_t f = 0; f < gt->n_frames; f++)
        mg = gt->frames[f].n > mg ? gt->frames[f].n : mg;
    for (int64_t f = 0; f < pr->n_frames; f++)
        mp = pr->frames[f].n > mp ? pr->frames[f].n : mp;
    mot_acc acc;
    memset(&acc, 0, sizeof acc);
    sleapc_id_traj tg = {0}, tp = {0};
    sleapc_id_notes notes = {0};
    sleapc_hungarian_ws ws = {0};
    sleapc_mot_seq *seqs = sleapc__calloc((size_t)al->n_videos + 1, sizeof *seqs);
    sleapc_mot_counts *counts = sleapc__calloc((size_t)al->n_videos + 1, sizeof *counts);
    int64_t *keep = sleapc__malloc(sizeof(int64_t) * (size_t)mg);
    int64_t *pk = sleapc__malloc(sizeof(int64_t) * (size_t)mp);
    int64_t *gsel = sleapc__malloc(sizeof(int64_t) * (size_t)mg);
    int64_t *psel = sleapc__malloc(sizeof(int64_t) * (size_t)mp);
    int64_t *gid = sleapc__malloc(sizeof(int64_t) * (size_t)mg);
    int64_t *pid = sleapc__malloc(sizeof(int64_t) * (size_t)mp);
    int64_t *rows = sleapc__malloc(sizeof(int64_t) * (size_t)(mg + mp));
    int64_t *cols = sleapc__malloc(sizeof(int64_t) * (size_t)(mg + mp));
    bool *tracked = sleapc__malloc((size_t)mg), *kp = sleapc__malloc((size_t)mp);
    double *sim = sleapc__malloc(sizeof(double) * (size_t)(3 * mg * mp + 1));
    sleapc_pyobj *d = NULL;
    sleapc_status st = SLEAPC_OK;
    if (!seqs || !counts || !keep || !pk || !gsel || !psel || !gid || !pid || !rows || !cols ||
        !tracked || !kp || !sim)
        goto nomem;
    int64_t n_seq = 0;
    for (int64_t pos = 0; pos < al->n; pos++) {
        const bool new_video = pos == 0 || strcmp(al->video[pos], al->video[pos - 1]);
        if (new_video && (pos == 0 || !c->o->global_identity))
            n_seq++;
        else if (new_video && (st = sleapc__mot_seq_reset_here(&seqs[n_seq - 1])))
            goto done;
        sleapc_mot_seq *seq = &seqs[n_seq - 1];
        const char *video = c->o->global_identity ? "" : al->video[pos];
        const int64_t gf = al->gt_frame[pos], pf = al->pr_frame[pos];
        acc.missing += pf < 0;
        int64_t sup = 0;
        const int64_t nk = sleapc__id_gt_keep(gt, gf, c->o->user_labels_only, keep, &sup);
        acc.n_superseded += sup;
        const int64_t np = sleapc__id_pred_tracked(pr, pf, pk);
        acc.n_pred_untracked += (pf >= 0 ? pr->frames[pf].n : 0) - np;
        for (int64_t i = 0; i < nk; i++) {
            tracked[i] = gt->insts[keep[i]].track >= 0;
            acc.n_gt_untracked += !tracked[i];
        }
        double *s = sim, *cost = sim + mg * mp, *sub = sim + 2 * mg * mp;
        if ((st = similarity(c, keep, nk, pk, np, s)))
            goto done;
        if ((st = dont_care(s, tracked, nk, np, sim_thr, cost, &ws, rows, cols, kp)))
            goto done;
        int64_t ng2 = 0, np2 = 0;
        for (int64_t i = 0; i < nk; i++)
            if (tracked[i])
                gsel[ng2++] = i;
        for (int64_t j = 0; j < np; j++) {
            acc.n_dont_care += !kp[j];
            if (kp[j])
                psel[np2++] = j;
        }
        for (int64_t a = 0; a < ng2; a++)
            for (int64_t b = 0; b < np2; b++)
                sub[a * np2 + b] = s[gsel[a] * np + psel[b]];
        const char *dup = NULL;
        for (int64_t a = 0; a < ng2; a++)
            keep[a] = keep[gsel[a]];
        for (int64_t b = 0; b < np2; b++)
            pk[b] = pk[psel[b]];
        if (!acc.error[0] && duplicate(gt, keep, ng2, &dup))
            duplicate_error(c, true, dup, pos, &acc);
        if (!acc.error[0] && duplicate(pr, pk, np2, &dup))
            duplicate_error(c, false, dup, pos, &acc);
        if (acc.error[0])
            break;
        for (int64_t a = 0; a < ng2; a++) {
            const int t = gt->insts[keep[a]].track;
            if ((gid[a] = sleapc__id_traj_get(&tg, video, gt->track_names[t], t)) < 0)
                goto nomem;
        }
        for (int64_t b = 0; b < np2; b++) {
            const int t = pr->insts[pk[b]].track;
            if ((pid[b] = sleapc__id_traj_get(&tp, video, pr->track_names[t], t)) < 0)
                goto nomem;
        }
        if ((st = sleapc__mot_seq_push(seq, gid, ng2, pid, np2, sub)))
            goto done;
    }
    if (acc.error[0]) {
        st = error_block(acc.error, out);
        goto done;
    }
    for (int64_t k = 0; k < n_seq; k++)
        if ((st = sleapc__mot_sequence(&seqs[k], sim_thr, &counts[k])))
            goto done;
    sleapc_mot_scores sc;
    sleapc__mot_combine(counts, n_seq, &sc);
    if (!(d = sleapc__pyobj_dict()))
        goto nomem;
    if ((st = put_scores(c, &sc, &acc, d)))
        goto done;
    if (!mot_notes(c, &sc, &acc, &notes))
        goto nomem;
    if ((st = sleapc__id_put_notes(d, &notes)))
        goto done;
    *out = d;
    d = NULL;
    goto done;
nomem:
    st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
done:
    sleapc__pyobj_free(d);
    sleapc__id_notes_free(&notes);
    sleapc__hungarian_ws_free(&ws);
    sleapc__id_traj_free(&tg);
    sleapc__id_traj_free(&tp);
    for (int64_t k = 0; seqs && k < al->n_videos; k++)
        sleapc__mot_seq_free(&seqs[k]);
    sleapc__free(seqs);
    sleapc__free(counts);
    sleapc__free(keep);
    sleapc__free(pk);
    sleapc__free(gsel);
    sleapc__free(psel);
    sleapc__free(gid);
    sleapc__free(pid);
    sleapc__free(rows);
    sleapc__free(cols);
    sleapc__free(tracked);
    sleapc__free(kp);
    sleapc__free(sim);
    return st;
}
