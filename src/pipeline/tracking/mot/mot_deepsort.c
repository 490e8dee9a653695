/* DeepSORT (Wojke et al., 2017) and StrongSORT (Du et al., 2023) as
 * sleap-nn 0.3.5 runs them (tracking/mot/deepsort.py). Detections scoring
 * at or below track_low_threshold are ignored. The confirmed (and lost)
 * tracks with a memory go first by appearance, gated by the position-only
 * Mahalanobis distance: DeepSORT in a cascade by time since update (cost 1
 * - gallery-max cosine), StrongSORT in one assignment on lambda (1 - EMA
 * cosine) + (1 - lambda) d^2. Then by geometry (1 - IoU): the tentative
 * tracks, the appearance stage's unmatched tracks seen at the previous
 * step, and the confirmed tracks appearance cannot judge. With appearance
 * off (no vectors, or the calibration found them not discriminative) every
 * confirmed track goes to the geometric stage. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "pipeline/tracking/mot/mot_appearance.h"
#include "pipeline/tracking/mot/mot_assoc.h"
#include "pipeline/tracking/mot/mot_tracker.h"

#define GATING_THRESHOLD 5.9915 /* chi-square 0.95, 2 dof */
#define INFEASIBLE_COST 1e5
#define MC_COST_ALLOWANCE 0.05

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

/* Appearance distance of pool x candidates: 1 - cosine (1 without a
 * vector); gated pairs INFEASIBLE_COST. StrongSORT blends in d^2. */
static void appearance_cost(mot_tracker *T, mot_track *const *pool, int n, int64_t d0, int m,
                            const int *cand, int k, double *cos, double *d2, double *cost)
{
    sleapc__mot_app_cos(T, pool, n, m, T->app_stat, cos);
    const bool strong = T->p.tracker == SLEAPC_MOT_STRONGSORT;
    const double lam = T->p.mc_lambda;
    for (int i = 0; i < n; i++) {
        double *g = d2 + (size_t)i * m;
        sleapc__mot_kf_gating_position(&T->kf, pool[i]->mean, pool[i]->cov, T->v->box + 4 * d0, m,
                                       g);
        for (int c = 0; c < k; c++) {
            const double cs = cos[(size_t)i * m + cand[c]];
            double a = isfinite(cs) ? 1.0 - cs : 1.0, dd = g[cand[c]];
            if (strong) {
                dd = isfinite(dd) ? dd : INFEASIBLE_COST;
                if (dd > GATING_THRESHOLD)
                    a = INFEASIBLE_COST;
                cost[(size_t)i * k + c] = lam * a + (1.0 - lam) * dd;
            } else {
                cost[(size_t)i * k + c] = dd > GATING_THRESHOLD ? INFEASIBLE_COST : a;
            }
        }
    }
}

/* Assigns rows (pool indices) to the free candidates; matched candidates
 * leave free; appends (pool index, candidate index) to mt / mc. */
static sleapc_status assign_rows(mot_tracker *T, const double *cost_all, int k, const int *rows,
                                 int nr, bool *free_c, double max_cost, int *mt, int *mc, int *nm)
{
    int nf = 0;
    int *fidx = sleapc__mot_tmp(&T->tmp, (size_t)(k > 0 ? k : 1) * sizeof *fidx);
    if (!fidx)
        return nomem();
    for (int c = 0; c < k; c++)
        if (free_c[c])
            fidx[nf++] = c;
    if (nr == 0 || nf == 0)
        return SLEAPC_OK;
    double *cost = sleapc__mot_tmp(&T->tmp, (size_t)nr * nf * sizeof *cost);
    int *pr = sleapc__mot_tmp(&T->tmp, 2 * (size_t)(nr < nf ? nr : nf) * sizeof *pr);
    if (!cost || !pr)
        return nomem();
    int *pc = pr + (nr < nf ? nr : nf);
    for (int i = 0; i < nr; i++)
        for (int c = 0; c < nf; c++)
            cost[(size_t)i * nf + c] = cost_all[(size_t)rows[i] * k + fidx[c]];
    int np = 0;
    sleapc_status st =
        sleapc__mot_assign_capped(cost, nr, nf, max_cost, &T->hws, &T->tmp, pr, pc, &np);
    for (int q = 0; !st && q < np; q++) {
        mt[*nm] = rows[pr[q]];
        mc[*nm] = fidx[pc[q]];
        (*nm)++;
        free_c[fidx[pc[q]]] = false;
    }
    return st;
}

sleapc_status sleapc__mot_deepsort_associate(mot_tracker *T, int64_t d0, int m, mot_result *r)
{
    const mot_video *v = T->v;
    const int n = T->n_tracks;
    int k = 0;
    int *cand = sleapc__mot_tmp(&T->tmp, (size_t)m * sizeof *cand);
    if (!cand)
        return nomem();
    for (int j = 0; j < m; j++) {
        const bool ignored = v->score[d0 + j] <= T->p.track_low_threshold;
        r->no_spawn[j] = r->no_spawn[j] || ignored;
        if (v->valid[d0 + j] && !ignored)
            cand[k++] = j;
    }
    if (n == 0 || k == 0)
        return SLEAPC_OK;
    const size_t nm = (size_t)n * m;
    double *sim = sleapc__mot_tmp(&T->tmp, (nm + 4 * (size_t)n) * sizeof *sim);
    mot_track **pool = sleapc__mot_tmp(&T->tmp, 2 * (size_t)n * sizeof *pool);
    int *mt = sleapc__mot_tmp(&T->tmp, 3 * (size_t)n * sizeof *mt);
    bool *free_c = sleapc__mot_tmp(&T->tmp, (size_t)k * sizeof *free_c);
    if (!sim || !pool || !mt || !free_c)
        return nomem();
    mot_track **geo = pool + n;
    int *mc = mt + n, *rows = mc + n;
    sleapc__mot_geometric_sim(T, T->tracks, n, d0, m, sim);
    for (int c = 0; c < k; c++)
        free_c[c] = true;
    const double gate = sleapc__mot_app_gate(T, T->app_stat);
    /* confirmed tracks: with a memory (appearance stage) or coasting */
    int np = 0, ng = 0, n_matched = 0;
    for (int i = 0; i < n; i++) {
        mot_track *t = T->tracks[i];
        if (t->state == MOT_CONFIRMED || t->state == MOT_LOST) {
            if (!isnan(gate) && sleapc__mot_app_has(t))
                pool[np++] = t;
        }
    }
    if (np > 0) {
        double *cos = sleapc__mot_tmp(&T->tmp, 2 * (size_t)np * m * sizeof *cos);
        double *cost = sleapc__mot_tmp(&T->tmp, (size_t)np * k * sizeof *cost);
        if (!cos || !cost)
            return nomem();
        appearance_cost(T, pool, np, d0, m, cand, k, cos, cos + (size_t)np * m, cost);
        sleapc_status st = SLEAPC_OK;
        if (T->p.tracker == SLEAPC_MOT_STRONGSORT) {
            const double max_cost = 1.0 - gate + (T->p.mc_lambda < 1.0 ? MC_COST_ALLOWANCE : 0.0);
            for (int i = 0; i < np; i++)
                rows[i] = i;
            st = assign_rows(T, cost, k, rows, np, free_c, max_cost, mt, mc, &n_matched);
        } else {
            /* the cascade: levels 1 .. track_buffer of time since update */
            for (int64_t level = 1; !st && level <= T->p.track_buffer; level++) {
                int nr = 0;
                for (int i = 0; i < np; i++)
                    if (pool[i]->tsu == level)
                        rows[nr++] = i;
                bool any_free = false;
                for (int c = 0; c < k; c++)
                    any_free = any_free || free_c[c];
                if (!any_free)
                    break;
                if (nr > 0)
                    st = assign_rows(T, cost, k, rows, nr, free_c, 1.0 - gate, mt, mc, &n_matched);
            }
        }
        if (st)
            return st;
    }
    /* the geometric stage, in track id (creation) order */
    for (int i = 0; i < n; i++) {
        mot_track *t = T->tracks[i];
        bool in_pool = false, matched = false;
        for (int q = 0; q < np; q++)
            in_pool = in_pool || pool[q] == t;
        for (int q = 0; q < n_matched; q++)
            matched = matched || pool[mt[q]] == t;
        const bool confirmed = t->state == MOT_CONFIRMED || t->state == MOT_LOST;
        if (t->state == MOT_TENTATIVE || (in_pool && !matched && t->tsu == 1) ||
            (confirmed && !in_pool && t->tsu <= T->p.track_buffer))
            geo[ng++] = t;
    }
    int *grow = rows; /* geo index -> tracks index */
    for (int g = 0; g < ng; g++)
        for (int i = 0; i < n; i++)
            if (T->tracks[i] == geo[g])
                grow[g] = i;
    int nf = 0;
    int *fidx = sleapc__mot_tmp(&T->tmp, (size_t)k * sizeof *fidx);
    if (!fidx)
        return nomem();
    for (int c = 0; c < k; c++)
        if (free_c[c])
            fidx[nf++] = c;
    /* the appearance stage's matches first, in its order */
    for (int q = 0; q < n_matched; q++) {
        mot_track *t = pool[mt[q]];
        int i = 0;
        while (T->tracks[i] != t)
            i++;
        sleapc__mot_result_add(r, t, cand[mc[q]], sim[(size_t)i * m + cand[mc[q]]]);
    }
    if (ng == 0 || nf == 0)
        return SLEAPC_OK;
    const double min_sim = T->p.min_match_similarity;
    double *cost = sleapc__mot_tmp(&T->tmp, (size_t)ng * nf * sizeof *cost);
    int *pr = sleapc__mot_tmp(&T->tmp, 2 * (size_t)(ng < nf ? ng : nf) * sizeof *pr);
    if (!cost || !pr)
        return nomem();
    int *pc = pr + (ng < nf ? ng : nf);
    for (int g = 0; g < ng; g++)
        for (int c = 0; c < nf; c++) {
            const double s = sim[(size_t)grow[g] * m + cand[fidx[c]]];
            cost[(size_t)g * nf + c] = s >= min_sim ? 1.0 - s : INFINITY;
        }
    int npairs = 0;
    sleapc_status st =
        sleapc__mot_assign_capped(cost, ng, nf, 1.0 - min_sim, &T->hws, &T->tmp, pr, pc, &npairs);
    for (int q = 0; !st && q < npairs; q++) {
        const int j = cand[fidx[pc[q]]];
        sleapc__mot_result_add(r, geo[pr[q]], j, sim[(size_t)grow[pr[q]] * m + j]);
    }
    return st;
}
