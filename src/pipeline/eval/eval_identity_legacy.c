/* sleap-nn 0.3.5's legacy identity block (evaluation.py: identity_metrics):
 * each frame's kept ground truth (tracked or not) Hungarian-matched to its
 * tracked predictions; a match on untracked GT is don't-care. Per GT
 * trajectory: switches against the last matched identity, coverage,
 * matched -> unmatched -> re-matched fragmentations; IDF1 from one
 * max-weight assignment of GT to predicted trajectories over the per-frame
 * matches; purity of each predicted trajectory. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/np_sum.h"
#include "layers/ops/hungarian.h"
#include "pipeline/eval/eval_identity_blocks.h"
#include "pipeline/eval/eval_identity_traj.h"

sleapc_status sleapc__id_put_num(sleapc_pyobj *d, const char *k, double v)
{
    return sleapc__pyobj_set(d, k, isfinite(v) ? sleapc__pyobj_float(v) : sleapc__pyobj_none());
}

bool sleapc__id_note(sleapc_id_notes *n, const char *fmt, ...)
{
    if (n->n >= (int)(sizeof n->s / sizeof n->s[0]))
        return true;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return (n->s[n->n] = sleapc__strdup(buf)) ? (n->n++, true) : false;
}

void sleapc__id_notes_free(sleapc_id_notes *n)
{
    for (int k = 0; k < n->n; k++)
        sleapc__free(n->s[k]);
    n->n = 0;
}

sleapc_status sleapc__id_put_notes(sleapc_pyobj *d, sleapc_id_notes *n)
{
    sleapc_status st =
        sleapc__pyobj_set(d, "notes", sleapc__pyobj_list_str((const char *const *)n->s, n->n));
    sleapc__id_notes_free(n);
    return st;
}

bool sleapc__id_align_notes(const sleapc_id_align *al, sleapc_id_notes *n)
{
    bool ok = true;
    if (al->frame_only)
        ok &= sleapc__id_note(n, "aligned on frame_idx only (single video on both sides)");
    if (!al->n)
        return ok && sleapc__id_note(n, "no frames in common -- nothing compared");
    if (al->n_unscored_videos)
        ok &= sleapc__id_note(n,
                              "%lld GT video(s) share no frame with the prediction and were not "
                              "scored",
                              (long long)al->n_unscored_videos);
    int64_t missing = 0;
    for (int64_t k = 0; k < al->n; k++)
        missing += al->pr_frame[k] < 0;
    if (missing)
        ok &= sleapc__id_note(n,
                              "%lld GT frames had no predicted counterpart -- scored as misses "
                              "(every tracked GT detection on them is unmatched)",
                              (long long)missing);
    return ok;
}

int64_t sleapc__id_pred_tracked(const sleapc_ev_labels *pr, int64_t f, int64_t *out)
{
    int64_t n = 0;
    if (f < 0)
        return 0;
    const sleapc_ev_frame *lf = &pr->frames[f];
    for (int64_t i = lf->first; i < lf->first + lf->n; i++)
        if (pr->insts[i].track >= 0)
            out[n++] = i;
    return n;
}

typedef struct entry {
    int64_t traj, pos, pred; /* pred: matched predicted trajectory, -1 none */
    int gt_track, pred_track;
} entry;

typedef struct legacy {
    int64_t n_gt_dets, n_gt_untracked, n_pred_dets, n_matched, n_dont_care, n_pred_untracked;
    int64_t n_gt_predicted, n_superseded, id_switches, frag, mt, pt, ml;
    double coverage, purity, idf1, idp, idr, idf1_matched;
} legacy;

/* _match_identity_frame: (gt, pred) index pairs into g and p. */
static sleapc_status match(const sleapc_id_ctx *c, const int64_t *g, int64_t ng, const int64_t *p,
                           int64_t np, double *sim, sleapc_hungarian_ws *ws, int64_t *rows,
                           int64_t *cols, int64_t *n_pairs)
{
    *n_pairs = 0;
    if (!ng || !np)
        return SLEAPC_OK;
    if (c->distance) {
        /* match_centroids on the visible centroids: rows are predictions.
         * Every instance of the frame counts, however many. */
        int64_t *gm = sleapc__malloc((size_t)(ng + np) * sizeof *gm), *pm = gm + ng;
        double *gc = sleapc__malloc((size_t)(ng + np) * 2 * sizeof *gc), *pc = gc + 2 * ng;
        int64_t ngv = 0, npv = 0;
        sleapc_status st = gm && gc ? SLEAPC_OK
                                    : sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
        for (int64_t i = 0; !st && i < ng; i++) {
            sleapc__id_centroid(c->gt, g[i], gc + 2 * ngv);
            if (!isnan(gc[2 * ngv]) && !isnan(gc[2 * ngv + 1]))
                gm[ngv++] = i;
        }
        for (int64_t j = 0; !st && j < np; j++) {
            sleapc__id_centroid(c->pr, p[j], pc + 2 * npv);
            if (!isnan(pc[2 * npv]) && !isnan(pc[2 * npv + 1]))
                pm[npv++] = j;
        }
        for (int64_t j = 0; !st && j < npv; j++)
            for (int64_t i = 0; i < ngv; i++) {
                const double dx = pc[2 * j] - gc[2 * i], dy = pc[2 * j + 1] - gc[2 * i + 1];
                sim[j * ngv + i] = sqrt(dx * dx + dy * dy);
            }
        if (!st && ngv && npv)
            st = sleapc__hungarian_solve_ws(sim, npv, ngv, ws, rows, cols);
        for (int64_t m = 0; !st && ngv && npv && m < (npv < ngv ? npv : ngv); m++)
            if (sim[rows[m] * ngv + cols[m]] <= c->threshold) {
                const int64_t pj = pm[rows[m]], gi = gm[cols[m]];
                rows[*n_pairs] = gi;
                cols[(*n_pairs)++] = pj;
            }
        sleapc__free(gm);
        sleapc__free(gc);
        return st;
    }
    sleapc_status st =
        sleapc__id_pose_similarity(c->gt, g, ng, c->pr, p, np, c->o->oks_stddev, sim);
    if (st)
        return st;
    double *neg = sim + ng * np;
    for (int64_t k = 0; k < ng * np; k++)
        neg[k] = -sim[k];
    if ((st = sleapc__hungarian_solve_ws(neg, ng, np, ws, rows, cols)))
        return sleapc__wrap(st, "eval-tracking: %s: matching a frame", c->gt->path);
    for (int64_t m = 0; m < (ng < np ? ng : np); m++)
        if (sim[rows[m] * np + cols[m]] >= c->threshold) {
            rows[*n_pairs] = rows[m];
            cols[(*n_pairs)++] = cols[m];
        }
    return SLEAPC_OK;
}

static const char *traj_video(const sleapc_id_ctx *c, int64_t k)
{
    return c->o->global_identity ? "" : c->al->video[k];
}

/* Trajectories in sorted (video, name) order, as Python sorts tuples
 * (insertion sort: a handful of tracks). */
static void sort_traj(const sleapc_id_traj *t, int64_t *idx)
{
    for (int64_t i = 0; i < t->n; i++) {
        int64_t k = i;
        for (; k > 0; k--) {
            const int64_t a = idx[k - 1];
            const int cv = strcmp(t->video[a], t->video[i]);
            if (cv < 0 || (!cv && strcmp(t->name[a], t->name[i]) <= 0))
                break;
            idx[k] = a;
        }
        idx[k] = i;
    }
}

/* IDF1 and purity from the co-matches count[gt traj][pred traj]. */
static sleapc_status identity(const sleapc_id_traj *gt, const sleapc_id_traj *pr,
                              const int64_t *count, legacy *L, int *id_map, sleapc_hungarian_ws *ws)
{
    const int64_t G = gt->n, P = pr->n;
    L->idf1 = L->idp = L->idr = L->idf1_matched = L->purity = NAN;
    if (!G || !P)
        return SLEAPC_OK;
    int64_t *gs = sleapc__malloc(sizeof(int64_t) * (size_t)(G + P + G + P));
    double *w = sleapc__malloc(sizeof(double) * (size_t)(G * P));
    if (!gs || !w) {
        sleapc__free(gs);
        sleapc__free(w);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    }
    int64_t *ps = gs + G, *r = ps + P;
    sort_traj(gt, gs);
    sort_traj(pr, ps);
    for (int64_t i = 0; i < G; i++)
        for (int64_t j = 0; j < P; j++)
            w[i * P + j] = -(double)count[gs[i] * P + ps[j]];
    sleapc_status st = sleapc__hungarian_solve_ws(w, G, P, ws, r, r + G);
    if (!st) {
        double idtp = 0;
        for (int64_t m = 0; m < (G < P ? G : P); m++) {
            idtp += -w[r[m] * P + r[G + m]];
            if (-w[r[m] * P + r[G + m]] > 0)
                id_map[gt->track[gs[r[m]]]] = pr->track[ps[r[G + m]]];
        }
        const double idfn = (double)L->n_gt_dets - idtp;
        const double idfp = (double)(L->n_pred_dets - L->n_pred_untracked - L->n_dont_care) - idtp;
        L->idp = idtp + idfp > 0 ? idtp / (idtp + idfp) : NAN;
        L->idr = idtp + idfn > 0 ? idtp / (idtp + idfn) : NAN;
        const double den = 2 * idtp + idfp + idfn;
        L->idf1 = den > 0 ? 2 * idtp / den : NAN;
        L->idf1_matched = L->n_matched ? idtp / (double)L->n_matched : NAN;
    }
    /* purity: each predicted trajectory's dominant GT share, length-weighted */
    int64_t total = 0, dom = 0;
    for (int64_t j = 0; j < P; j++) {
        int64_t best = 0, sum = 0;
        for (int64_t i = 0; i < G; i++) {
            sum += count[i * P + j];
            best = count[i * P + j] > best ? count[i * P + j] : best;
        }
        total += sum;
        dom += best;
    }
    if (total)
        L->purity = (double)dom / (double)total;
    sleapc__free(gs);
    sleapc__free(w);
    return st;
}

/* Switches, coverage, fragmentation and MT/PT/ML, per GT trajectory. */
static sleapc_status per_trajectory(const sleapc_id_ctx *c, const entry *e, int64_t n_e,
                                    int64_t n_traj, legacy *L, sleapc_et_result *r)
{
    double *cov = sleapc__malloc(sizeof(double) * (size_t)(n_traj + 1));
    bool *m = sleapc__malloc((size_t)n_e + 1);
    if (!cov || !m) {
        sleapc__free(cov);
        sleapc__free(m);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    }
    for (int64_t t = 0; t < n_traj; t++) {
        int64_t n = 0, hits = 0, last = -1;
        int last_track = -1;
        for (int64_t k = 0; k < n_e; k++) {
            if (e[k].traj != t)
                continue;
            m[n++] = e[k].pred >= 0;
            hits += e[k].pred >= 0;
            if (e[k].pred < 0)
                continue;
            if (last >= 0 && e[k].pred != last) {
                L->id_switches++;
                r->switches[r->n_switches++] =
                    (sleapc_et_switch){c->gt->frames[c->al->gt_frame[e[k].pos]].frame_idx,
                                       e[k].gt_track, last_track, e[k].pred_track};
            }
            last = e[k].pred;
            last_track = e[k].pred_track;
        }
        const double coverage = n ? (double)hits / (double)n : 0.0;
        cov[t] = coverage;
        int64_t after = 0; /* matched entries still to come */
        for (int64_t k = 0; k < n; k++)
            after += m[k];
        bool started = false;
        for (int64_t k = 0; k < n; k++) {
            after -= m[k];
            if (m[k])
                started = true;
            else if (started && k > 0 && m[k - 1] && after > 0)
                L->frag++;
        }
        if (coverage >= c->o->mt_threshold)
            L->mt++;
        else if (coverage < c->o->ml_threshold)
            L->ml++;
        else
            L->pt++;
    }
    L->coverage = n_traj ? sleapc__np_pairwise_sum(cov, n_traj) / (double)n_traj : NAN;
    sleapc__free(cov);
    sleapc__free(m);
    return SLEAPC_OK;
}

static int64_t max_frame_insts(const sleapc_ev_labels *l)
{
    int64_t m = 1;
    for (int64_t f = 0; f < l->n_frames; f++)
        m = l->frames[f].n > m ? l->frames[f].n : m;
    return m;
}

static sleapc_status put_block(const sleapc_id_ctx *c, const legacy *L, int64_t n_gt_tracks,
                               int64_t n_pred_tracks, sleapc_pyobj *d)
{
    const sleapc_id_align *al = c->al;
    int64_t missing = 0;
    for (int64_t k = 0; k < al->n; k++)
        missing += al->pr_frame[k] < 0;
    const struct {
        const char *key;
        double v;
        bool is_int;
    } f[] = {
        {"id_switches", (double)L->id_switches, true},
        {"idf1", L->idf1, false},
        {"idp", L->idp, false},
        {"idr", L->idr, false},
        {"idf1_matched", L->idf1_matched, false},
        {"mostly_tracked", (double)L->mt, true},
        {"partly_tracked", (double)L->pt, true},
        {"mostly_lost", (double)L->ml, true},
        {"fragmentations", (double)L->frag, true},
        {"mean_gt_coverage", L->coverage, false},
        {"mean_track_purity", L->purity, false},
        {"n_gt_dets", (double)L->n_gt_dets, true},
        {"n_gt_untracked", (double)L->n_gt_untracked, true},
        {"n_pred_dets", (double)L->n_pred_dets, true},
        {"n_matched", (double)L->n_matched, true},
        {"n_dont_care", (double)L->n_dont_care, true},
        {"n_frames_compared", (double)al->n, true},
        {"n_frames_missing_pred", (double)missing, true},
        {"n_videos_compared", (double)al->n_videos, true},
        {"n_gt_tracks", (double)n_gt_tracks, true},
        {"n_pred_tracks", (double)n_pred_tracks, true},
        {"n_pred_untracked", (double)L->n_pred_untracked, true},
    };
    sleapc_status st = SLEAPC_OK;
    for (size_t k = 0; !st && k < sizeof f / sizeof f[0]; k++)
        st = f[k].is_int ? sleapc__pyobj_set(d, f[k].key, sleapc__pyobj_int((int64_t)f[k].v))
                         : sleapc__id_put_num(d, f[k].key, f[k].v);
    if (!st)
        st = sleapc__pyobj_set(d, "match_method",
                               sleapc__pyobj_str(c->distance ? "distance" : "oks"));
    if (!st)
        st = sleapc__id_put_num(d, "match_threshold", c->threshold);
    if (!st)
        st = sleapc__pyobj_set(d, "global_identity", sleapc__pyobj_bool(c->o->global_identity));
    return st;
}

static bool legacy_notes(const sleapc_id_ctx *c, const legacy *L, int64_t n_pred_tracks,
                         sleapc_id_notes *n)
{
    bool ok = sleapc__id_align_notes(c->al, n);
    if (L->n_gt_predicted && c->o->user_labels_only) {
        ok &= sleapc__id_note(n,
                              "%lld predicted detections were dropped from the ground truth "
                              "(user_labels_only=True)",
                              (long long)L->n_gt_predicted);
        if (!L->n_gt_dets)
            ok &= sleapc__id_note(
                n, "user_labels_only=True left NO ground truth: every tracked detection is "
                   "model output. Tracked GT is usually predicted poses with tracks assigned "
                   "afterwards -- pass user_labels_only=False to score it.");
    } else if (L->n_gt_predicted) {
        ok &= sleapc__id_note(n,
                              "%lld of the ground-truth detections are model output (tracks "
                              "assigned over predictions); scored as ground truth. Pass "
                              "user_labels_only=True to exclude them.",
                              (long long)L->n_gt_predicted);
    }
    if (L->n_superseded)
        ok &= sleapc__id_note(n,
                              "%lld ground-truth detections were left out because a user label "
                              "on the same frame replaces them (a prediction corrected in the "
                              "GUI -- same track, or linked by from_predicted -- or its mask)",
                              (long long)L->n_superseded);
    if (L->n_gt_untracked)
        ok &= sleapc__id_note(n,
                              "%lld untracked ground-truth detections are don't-care; %lld "
                              "tracked predictions matched them and are scored as neither hits "
                              "nor false positives",
                              (long long)L->n_gt_untracked, (long long)L->n_dont_care);
    if (L->n_dont_care && L->n_gt_dets && !L->n_matched)
        ok &= sleapc__id_note(n, "every prediction that matched ground truth matched an UNTRACKED "
                                 "detection (don't-care) and was not scored. If the untracked "
                                 "ground truth is stale predictions rather than animals left "
                                 "unlabeled, pass user_labels_only=True (--user_labels_only).");
    if (L->n_gt_dets && n_pred_tracks && !L->n_matched) {
        if (c->distance)
            ok &= sleapc__id_note(n,
                                  "no tracked prediction matched a tracked ground-truth "
                                  "detection (centroid distance <= %g px) -- check the match "
                                  "threshold and the carrier",
                                  c->threshold);
        else
            ok &= sleapc__id_note(n,
                                  "no tracked prediction matched a tracked ground-truth "
                                  "detection (OKS >= %g) -- check the match threshold and the "
                                  "carrier",
                                  c->threshold);
    }
    return ok;
}

sleapc_status sleapc__id_legacy(const sleapc_id_ctx *c, sleapc_et_result *r, sleapc_pyobj *d)
{
    const sleapc_ev_labels *gt = c->gt, *pr = c->pr;
    const sleapc_id_align *al = c->al;
    const int64_t mg = max_frame_insts(gt), mp = max_frame_insts(pr), T = gt->n_tracks;
    legacy L;
    memset(&L, 0, sizeof L);
    sleapc_id_traj tg = {0}, tp = {0};
    sleapc_id_notes notes = {0};
    sleapc_hungarian_ws ws = {0};
    int64_t *keep = sleapc__malloc(sizeof(int64_t) * (size_t)mg);
    int64_t *pk = sleapc__malloc(sizeof(int64_t) * (size_t)mp);
    int64_t *rows = sleapc__malloc(sizeof(int64_t) * (size_t)(mg + mp));
    int64_t *cols = sleapc__malloc(sizeof(int64_t) * (size_t)(mg + mp));
    int64_t *matched = sleapc__malloc(sizeof(int64_t) * (size_t)mg);
    double *sim = sleapc__malloc(sizeof(double) * (size_t)(2 * mg * mp + 1));
    entry *e = sleapc__malloc(sizeof *e * (size_t)(gt->n_insts + 1));
    int64_t *count = NULL, n_e = 0;
    r->n_frames = al->n;
    r->frame_idx = sleapc__malloc(sizeof(int64_t) * (size_t)(al->n + 1));
    r->assigned = sleapc__malloc(sizeof(int) * (size_t)(al->n * T + 1));
    r->switches = sleapc__malloc(sizeof *r->switches * (size_t)(gt->n_insts + 1));
    r->id_map = sleapc__malloc(sizeof(int) * (size_t)(T + 1));
    sleapc_status st = SLEAPC_OK;
    if (!keep || !pk || !rows || !cols || !matched || !sim || !e || !r->frame_idx || !r->assigned ||
        !r->switches || !r->id_map)
        goto nomem;
    for (int64_t t = 0; t < T; t++)
        r->id_map[t] = -1;
    for (int64_t pos = 0; pos < al->n; pos++) {
        const int64_t gf = al->gt_frame[pos], pf = al->pr_frame[pos];
        const char *video = traj_video(c, pos);
        int64_t sup = 0;
        const int64_t nk = sleapc__id_gt_keep(gt, gf, c->o->user_labels_only, keep, &sup);
        L.n_superseded += sup;
        const sleapc_ev_frame *lf = &gt->frames[gf];
        for (int64_t i = lf->first; i < lf->first + lf->n; i++) {
            bool kept = false;
            for (int64_t k = 0; k < nk && !kept; k++)
                kept = keep[k] == i;
            L.n_gt_predicted += gt->insts[i].predicted && (c->o->user_labels_only || kept);
        }
        const int64_t np = sleapc__id_pred_tracked(pr, pf, pk);
        const int64_t n_pred_all = pf >= 0 ? pr->frames[pf].n : 0;
        L.n_pred_dets += n_pred_all;
        L.n_pred_untracked += n_pred_all - np;
        r->frame_idx[pos] = lf->frame_idx;
        int *row = r->assigned + pos * T;
        for (int64_t t = 0; t < T; t++)
            row[t] = -2;
        for (int64_t k = 0; k < nk; k++) {
            const int track = gt->insts[keep[k]].track;
            matched[k] = -1;
            if (track < 0) {
                L.n_gt_untracked++;
                continue;
            }
            L.n_gt_dets++;
            row[track] = -1;
            if (sleapc__id_traj_get(&tg, video, gt->track_names[track], track) < 0)
                goto nomem;
        }
        for (int64_t j = 0; j < np; j++) {
            const int track = pr->insts[pk[j]].track;
            if (sleapc__id_traj_get(&tp, video, pr->track_names[track], track) < 0)
                goto nomem;
        }
        int64_t n_pairs = 0;
        if ((st = match(c, keep, nk, pk, np, sim, &ws, rows, cols, &n_pairs)))
            goto done;
        for (int64_t m = 0; m < n_pairs; m++) {
            const int gtrack = gt->insts[keep[rows[m]]].track;
            if (gtrack < 0) {
                L.n_dont_care++;
                continue;
            }
            const int ptrack = pr->insts[pk[cols[m]]].track;
            matched[rows[m]] = sleapc__id_traj_get(&tp, video, pr->track_names[ptrack], ptrack);
            row[gtrack] = ptrack;
            L.n_matched++;
        }
        for (int64_t k = 0; k < nk; k++) {
            const int track = gt->insts[keep[k]].track;
            if (track < 0)
                continue;
            const int64_t pt = matched[k];
            e[n_e++] = (entry){sleapc__id_traj_get(&tg, video, gt->track_names[track], track), pos,
                               pt, track, pt >= 0 ? tp.track[pt] : -1};
        }
    }
    count = sleapc__calloc((size_t)(tg.n * tp.n) + 1, sizeof *count);
    if (!count)
        goto nomem;
    for (int64_t k = 0; k < n_e; k++)
        if (e[k].pred >= 0)
            count[e[k].traj * tp.n + e[k].pred]++;
    /* timeline order: trajectories in order of first appearance, which is
     * also the order of tg */
    if ((st = per_trajectory(c, e, n_e, tg.n, &L, r)))
        goto done;
    if ((st = identity(&tg, &tp, count, &L, r->id_map, &ws)))
        goto done;
    if (!legacy_notes(c, &L, tp.n, &notes))
        goto nomem;
    st = put_block(c, &L, tg.n, tp.n, d);
    if (!st)
        st = sleapc__id_put_notes(d, &notes);
    goto done;
nomem:
    st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
done:
    sleapc__id_notes_free(&notes);
    sleapc__hungarian_ws_free(&ws);
    sleapc__id_traj_free(&tg);
    sleapc__id_traj_free(&tp);
    sleapc__free(keep);
    sleapc__free(pk);
    sleapc__free(rows);
    sleapc__free(cols);
    sleapc__free(matched);
    sleapc__free(sim);
    sleapc__free(e);
    sleapc__free(count);
    return st;
}
