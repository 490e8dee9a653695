/* TrackEval's CLEAR-MOT, Identity and HOTA (see trackeval.h). Each step
 * keeps TrackEval's quirks, since each changes a number: the continuity
 * bonus looks one step back, switches any distance back; a step with no
 * prediction does not end a segment; MT is strictly above 80 %; LocA is 1
 * without true positives; empty sequences return counts only. */
#include "pipeline/eval/trackeval.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/hungarian.h"

#define EPS DBL_EPSILON
#define BONUS 1000.0 /* larger than any similarity: last step's pair always wins */
#define NA SLEAPC_MOT_N_ALPHA

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
}

double sleapc__mot_alpha(int k)
{
    /* np.arange fills start + k * (second - start) */
    const double start = 0.05, delta = (start + 0.05) - start;
    return start + k * delta;
}

static sleapc_status grow(void **p, int64_t *cap, int64_t need, size_t elem)
{
    if (need <= *cap)
        return SLEAPC_OK;
    int64_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = sleapc__realloc(*p, (size_t)c * elem);
    if (!q)
        return nomem();
    *p = q;
    *cap = c;
    return SLEAPC_OK;
}

sleapc_status sleapc__mot_seq_push(sleapc_mot_seq *s, const int64_t *gid, int64_t ng,
                                   const int64_t *pid, int64_t np, const double *sim)
{
    const int64_t t = s->n_steps;
    const int64_t g0 = t ? s->g_off[t] : 0, p0 = t ? s->p_off[t] : 0, s0 = t ? s->s_off[t] : 0;
    int64_t cap = s->cap_steps;
    if (grow((void **)&s->g_off, &cap, t + 2, sizeof(int64_t)))
        return nomem();
    cap = s->cap_steps;
    if (grow((void **)&s->p_off, &cap, t + 2, sizeof(int64_t)))
        return nomem();
    cap = s->cap_steps;
    if (grow((void **)&s->s_off, &cap, t + 2, sizeof(int64_t)))
        return nomem();
    s->cap_steps = cap;
    if (grow((void **)&s->gid, &s->cap_g, g0 + ng + 1, sizeof(int64_t)) ||
        grow((void **)&s->pid, &s->cap_p, p0 + np + 1, sizeof(int64_t)) ||
        grow((void **)&s->sim, &s->cap_s, s0 + ng * np + 1, sizeof(double)))
        return nomem();
    if (ng)
        memcpy(s->gid + g0, gid, sizeof(int64_t) * (size_t)ng);
    if (np)
        memcpy(s->pid + p0, pid, sizeof(int64_t) * (size_t)np);
    if (ng > 0 && np > 0)
        memcpy(s->sim + s0, sim, sizeof(double) * (size_t)(ng * np));
    s->g_off[t] = g0;
    s->p_off[t] = p0;
    s->s_off[t] = s0;
    s->g_off[t + 1] = g0 + ng;
    s->p_off[t + 1] = p0 + np;
    s->s_off[t + 1] = s0 + ng * np;
    s->n_steps = t + 1;
    return SLEAPC_OK;
}

sleapc_status sleapc__mot_seq_reset_here(sleapc_mot_seq *s)
{
    if (grow((void **)&s->resets, &s->cap_resets, s->n_resets + 1, sizeof(int64_t)))
        return nomem();
    s->resets[s->n_resets++] = s->n_steps;
    return SLEAPC_OK;
}

void sleapc__mot_seq_free(sleapc_mot_seq *s)
{
    sleapc__free(s->g_off);
    sleapc__free(s->p_off);
    sleapc__free(s->s_off);
    sleapc__free(s->gid);
    sleapc__free(s->pid);
    sleapc__free(s->sim);
    sleapc__free(s->resets);
    memset(s, 0, sizeof *s);
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* relabel_contiguous: ids -> rank among the sequence's sorted distinct ids. */
static sleapc_status relabel(const int64_t *ids, int64_t n, int64_t *out, int64_t *n_ids)
{
    int64_t *u = sleapc__malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!u)
        return nomem();
    if (n)
        memcpy(u, ids, sizeof(int64_t) * (size_t)n);
    qsort(u, (size_t)n, sizeof *u, cmp_i64);
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (!k || u[k - 1] != u[i])
            u[k++] = u[i];
    for (int64_t i = 0; i < n; i++) {
        const int64_t *hit = bsearch(&ids[i], u, (size_t)k, sizeof *u, cmp_i64);
        out[i] = hit - u;
    }
    *n_ids = k;
    sleapc__free(u);
    return SLEAPC_OK;
}

typedef struct seqv {
    const sleapc_mot_seq *s;
    int64_t *g, *p; /* relabelled ids */
    int64_t n_g, n_p, n_gdets, n_pdets;
    int64_t max_ng, max_np;
    sleapc_hungarian_ws ws;
    int64_t *rows, *cols;
    double *cost;
} seqv;

static const double *step_sim(const seqv *v, int64_t t)
{
    return v->s->sim + v->s->s_off[t];
}

/* CLEAR-MOT (TrackEval clear.py). */
static sleapc_status clear(seqv *v, double thr, sleapc_mot_counts *c)
{
    const sleapc_mot_seq *s = v->s;
    if (v->n_pdets == 0) {
        c->fn = v->n_gdets;
        c->ml = v->n_g;
        return SLEAPC_OK;
    }
    if (v->n_gdets == 0) {
        c->fp = v->n_pdets;
        return SLEAPC_OK;
    }
    const size_t G = (size_t)v->n_g + 1;
    int64_t *seen = sleapc__calloc(G, sizeof(int64_t)), *hit = sleapc__calloc(G, sizeof(int64_t));
    int64_t *seg = sleapc__calloc(G, sizeof(int64_t));
    int64_t *last = sleapc__malloc(G * sizeof(int64_t)),
            *prev = sleapc__malloc(G * sizeof(int64_t));
    bool *was_un = sleapc__malloc(G);
    sleapc_status st = SLEAPC_OK;
    if (!seen || !hit || !seg || !last || !prev || !was_un) {
        st = nomem();
        goto done;
    }
    for (int64_t i = 0; i < v->n_g; i++)
        last[i] = prev[i] = -1;
    int64_t r = 0;
    for (int64_t t = 0; t < s->n_steps; t++) {
        if (r < s->n_resets && s->resets[r] == t) {
            while (r < s->n_resets && s->resets[r] == t)
                r++;
            for (int64_t i = 0; i < v->n_g; i++) {
                last[i] = prev[i] = -1;
                c->frag += seg[i] > 0 ? seg[i] - 1 : 0;
                seg[i] = 0;
            }
        }
        const int64_t ng = s->g_off[t + 1] - s->g_off[t], np = s->p_off[t + 1] - s->p_off[t];
        const int64_t *g = v->g + s->g_off[t], *p = v->p + s->p_off[t];
        const double *sim = step_sim(v, t);
        if (ng == 0) {
            c->fp += np;
            continue;
        }
        if (np == 0) {
            c->fn += ng;
            for (int64_t i = 0; i < ng; i++)
                seen[g[i]]++;
            continue;
        }
        for (int64_t i = 0; i < ng; i++)
            for (int64_t j = 0; j < np; j++) {
                const double x = sim[i * np + j];
                const double sc = x + BONUS * (double)(p[j] == prev[g[i]]);
                v->cost[i * np + j] = x < thr - EPS ? -0.0 : -sc;
            }
        if ((st = sleapc__hungarian_solve_ws(v->cost, ng, np, &v->ws, v->rows, v->cols)))
            goto done;
        const int64_t k = ng < np ? ng : np;
        int64_t n_match = 0;
        for (int64_t m = 0; m < k; m++) {
            if (!(-v->cost[v->rows[m] * np + v->cols[m]] > EPS))
                continue;
            v->rows[n_match] = v->rows[m];
            v->cols[n_match++] = v->cols[m];
        }
        for (int64_t m = 0; m < n_match; m++) {
            const int64_t gi = g[v->rows[m]], pj = p[v->cols[m]];
            c->idsw += last[gi] >= 0 && last[gi] != pj;
        }
        for (int64_t i = 0; i < ng; i++)
            seen[g[i]]++;
        for (int64_t i = 0; i < v->n_g; i++) {
            was_un[i] = prev[i] < 0;
            prev[i] = -1;
        }
        for (int64_t m = 0; m < n_match; m++) {
            const int64_t gi = g[v->rows[m]], pj = p[v->cols[m]];
            hit[gi]++;
            last[gi] = pj;
            prev[gi] = pj;
        }
        for (int64_t i = 0; i < v->n_g; i++)
            seg[i] += was_un[i] && prev[i] >= 0;
        c->tp += n_match;
        c->fn += ng - n_match;
        c->fp += np - n_match;
        double msum = 0; /* numpy sums a handful of pairs in order */
        for (int64_t m = 0; m < n_match; m++)
            msum += sim[v->rows[m] * np + v->cols[m]];
        c->motp_sum += msum;
    }
    int64_t mt = 0, over_ml = 0;
    for (int64_t i = 0; i < v->n_g; i++) {
        c->frag += seg[i] > 0 ? seg[i] - 1 : 0;
        if (seen[i] > 0) {
            const double cov = (double)hit[i] / (double)seen[i];
            mt += cov > 0.8;
            over_ml += cov >= 0.2;
        }
    }
    c->mt = mt;
    c->pt = over_ml - mt;
    c->ml = v->n_g - mt - c->pt;
    c->frames = s->n_steps;
done:
    sleapc__free(seen);
    sleapc__free(hit);
    sleapc__free(seg);
    sleapc__free(last);
    sleapc__free(prev);
    sleapc__free(was_un);
    return st;
}

/* Identity (TrackEval identity.py): one global assignment over the steps on
 * which each pair could match (>= threshold, no epsilon). */
static sleapc_status identity(seqv *v, double thr, sleapc_mot_counts *c)
{
    const sleapc_mot_seq *s = v->s;
    if (v->n_pdets == 0) {
        c->idfn = v->n_gdets;
        return SLEAPC_OK;
    }
    if (v->n_gdets == 0) {
        c->idfp = v->n_pdets;
        return SLEAPC_OK;
    }
    const int64_t G = v->n_g, P = v->n_p;
    double *could = sleapc__calloc((size_t)(G * P) + 1, sizeof(double));
    int64_t *r = sleapc__malloc(sizeof(int64_t) * (size_t)(G + P + 1));
    if (!could || !r) {
        sleapc__free(could);
        sleapc__free(r);
        return nomem();
    }
    for (int64_t t = 0; t < s->n_steps; t++) {
        const int64_t ng = s->g_off[t + 1] - s->g_off[t], np = s->p_off[t + 1] - s->p_off[t];
        const int64_t *g = v->g + s->g_off[t], *p = v->p + s->p_off[t];
        const double *sim = step_sim(v, t);
        for (int64_t i = 0; i < ng; i++)
            for (int64_t j = 0; j < np; j++)
                could[g[i] * P + p[j]] += sim[i * np + j] >= thr;
    }
    for (int64_t k = 0; k < G * P; k++)
        could[k] = -could[k];
    sleapc_status st = sleapc__hungarian_solve_ws(could, G, P, &v->ws, r, r + G);
    if (!st) {
        double idtp = 0;
        for (int64_t m = 0; m < (G < P ? G : P); m++)
            idtp += -could[r[m] * P + r[G + m]];
        c->idtp = (int64_t)llround(idtp);
        c->idfn = v->n_gdets - c->idtp;
        c->idfp = v->n_pdets - c->idtp;
    }
    sleapc__free(could);
    sleapc__free(r);
    return st;
}

/* HOTA (TrackEval hota.py): a global alignment score between identities,
 * then one matching per step on alignment x similarity, thresholded at each
 * alpha. */
static sleapc_status hota(seqv *v, sleapc_mot_counts *c)
{
    const sleapc_mot_seq *s = v->s;
    if (v->n_pdets == 0 || v->n_gdets == 0) {
        for (int a = 0; a < NA; a++) {
            c->hota_fn[a] = v->n_pdets == 0 ? (double)v->n_gdets : 0;
            c->hota_fp[a] = v->n_pdets == 0 ? 0 : (double)v->n_pdets;
            c->loc_a[a] = 1.0;
        }
        return SLEAPC_OK;
    }
    const int64_t G = v->n_g, P = v->n_p;
    const size_t GP = (size_t)(G * P) + 1, mx = (size_t)(v->max_ng + v->max_np) + 1;
    double *overlap = sleapc__calloc(GP, sizeof(double));
    double *gl = sleapc__calloc((size_t)G + 1, sizeof(double)),
           *pl = sleapc__calloc((size_t)P + 1, sizeof(double));
    double *matches = sleapc__calloc(GP * NA, sizeof(double));
    double *rs = sleapc__malloc(sizeof(double) * mx), *cs = sleapc__malloc(sizeof(double) * mx);
    sleapc_status st = SLEAPC_OK;
    if (!overlap || !gl || !pl || !matches || !rs || !cs) {
        st = nomem();
        goto done;
    }
    for (int64_t t = 0; t < s->n_steps; t++) {
        const int64_t ng = s->g_off[t + 1] - s->g_off[t], np = s->p_off[t + 1] - s->p_off[t];
        const int64_t *g = v->g + s->g_off[t], *p = v->p + s->p_off[t];
        const double *sim = step_sim(v, t);
        for (int64_t j = 0; j < np; j++) {
            cs[j] = 0;
            for (int64_t i = 0; i < ng; i++)
                cs[j] += sim[i * np + j];
        }
        for (int64_t i = 0; i < ng; i++) {
            rs[i] = 0;
            for (int64_t j = 0; j < np; j++)
                rs[i] += sim[i * np + j];
        }
        for (int64_t i = 0; i < ng; i++)
            for (int64_t j = 0; j < np; j++) {
                const double x = sim[i * np + j], mass = cs[j] + rs[i] - x;
                overlap[g[i] * P + p[j]] += mass > EPS ? x / mass : 0.0;
            }
        for (int64_t i = 0; i < ng; i++)
            gl[g[i]] += 1;
        for (int64_t j = 0; j < np; j++)
            pl[p[j]] += 1;
    }
    for (int64_t i = 0; i < G; i++)
        for (int64_t j = 0; j < P; j++)
            overlap[i * P + j] /= gl[i] + pl[j] - overlap[i * P + j]; /* now the alignment */
    double tp[NA] = {0}, loc[NA] = {0};
    for (int64_t t = 0; t < s->n_steps; t++) {
        const int64_t ng = s->g_off[t + 1] - s->g_off[t], np = s->p_off[t + 1] - s->p_off[t];
        const int64_t *g = v->g + s->g_off[t], *p = v->p + s->p_off[t];
        const double *sim = step_sim(v, t);
        if (ng == 0 || np == 0) {
            for (int a = 0; a < NA; a++) {
                c->hota_fp[a] += (double)np;
                c->hota_fn[a] += (double)ng;
            }
            continue;
        }
        for (int64_t i = 0; i < ng; i++)
            for (int64_t j = 0; j < np; j++)
                v->cost[i * np + j] = -(overlap[g[i] * P + p[j]] * sim[i * np + j]);
        if ((st = sleapc__hungarian_solve_ws(v->cost, ng, np, &v->ws, v->rows, v->cols)))
            goto done;
        const int64_t k = ng < np ? ng : np;
        for (int a = 0; a < NA; a++) {
            const double alpha = sleapc__mot_alpha(a);
            int64_t n_ok = 0;
            double lsum = 0;
            for (int64_t m = 0; m < k; m++) {
                const double x = sim[v->rows[m] * np + v->cols[m]];
                if (!(x >= alpha - EPS))
                    continue;
                n_ok++;
                lsum += x;
                matches[(size_t)a * GP + (size_t)(g[v->rows[m]] * P + p[v->cols[m]])] += 1;
            }
            tp[a] += (double)n_ok;
            c->hota_fn[a] += (double)(ng - n_ok);
            c->hota_fp[a] += (double)(np - n_ok);
            loc[a] += lsum;
        }
    }
    for (int a = 0; a < NA; a++) {
        const double *mt = matches + (size_t)a * GP;
        double sa = 0, sr = 0, sp = 0;
        for (int64_t i = 0; i < G; i++)
            for (int64_t j = 0; j < P; j++) {
                const double m = mt[i * P + j];
                sa += m * m / fmax(1.0, gl[i] + pl[j] - m);
                sr += m * m / fmax(1.0, gl[i]);
                sp += m * m / fmax(1.0, pl[j]);
            }
        const double tps = fmax(1.0, tp[a]);
        c->hota_tp[a] = tp[a];
        c->ass_a[a] = sa / tps;
        c->ass_re[a] = sr / tps;
        c->ass_pr[a] = sp / tps;
        c->loc_a[a] = fmax(1e-10, loc[a]) / fmax(1e-10, tp[a]);
    }
done:
    sleapc__free(overlap);
    sleapc__free(gl);
    sleapc__free(pl);
    sleapc__free(matches);
    sleapc__free(rs);
    sleapc__free(cs);
    return st;
}

sleapc_status sleapc__mot_sequence(const sleapc_mot_seq *s, double threshold,
                                   sleapc_mot_counts *out)
{
    memset(out, 0, sizeof *out);
    seqv v;
    memset(&v, 0, sizeof v);
    v.s = s;
    const int64_t ng_all = s->n_steps ? s->g_off[s->n_steps] : 0;
    const int64_t np_all = s->n_steps ? s->p_off[s->n_steps] : 0;
    for (int64_t t = 0; t < s->n_steps; t++) {
        const int64_t ng = s->g_off[t + 1] - s->g_off[t], np = s->p_off[t + 1] - s->p_off[t];
        v.max_ng = ng > v.max_ng ? ng : v.max_ng;
        v.max_np = np > v.max_np ? np : v.max_np;
        for (int64_t k = s->s_off[t]; k < s->s_off[t + 1]; k++)
            if (!isfinite(s->sim[k]))
                return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                    "eval-tracking: timestep %lld: similarity has non-finite "
                                    "values",
                                    (long long)t);
    }
    v.n_gdets = ng_all;
    v.n_pdets = np_all;
    v.g = sleapc__malloc(sizeof(int64_t) * (size_t)(ng_all + 1));
    v.p = sleapc__malloc(sizeof(int64_t) * (size_t)(np_all + 1));
    const int64_t mn = (v.max_ng < v.max_np ? v.max_ng : v.max_np) + 1;
    v.rows = sleapc__malloc(sizeof(int64_t) * (size_t)mn);
    v.cols = sleapc__malloc(sizeof(int64_t) * (size_t)mn);
    v.cost = sleapc__malloc(sizeof(double) * (size_t)(v.max_ng * v.max_np + 1));
    sleapc_status st = SLEAPC_OK;
    if (!v.g || !v.p || !v.rows || !v.cols || !v.cost)
        st = nomem();
    if (!st)
        st = relabel(s->gid, ng_all, v.g, &v.n_g);
    if (!st)
        st = relabel(s->pid, np_all, v.p, &v.n_p);
    if (!st)
        st = clear(&v, threshold, out);
    if (!st)
        st = identity(&v, threshold, out);
    if (!st)
        st = hota(&v, out);
    sleapc__hungarian_ws_free(&v.ws);
    sleapc__free(v.g);
    sleapc__free(v.p);
    sleapc__free(v.rows);
    sleapc__free(v.cols);
    sleapc__free(v.cost);
    return st;
}

void sleapc__mot_combine(const sleapc_mot_counts *per, int64_t n, sleapc_mot_scores *o)
{
    memset(o, 0, sizeof *o);
    double motp_sum = 0, tp[NA] = {0}, fn[NA] = {0}, fp[NA] = {0};
    double are[NA] = {0}, apr[NA] = {0}, aa[NA] = {0}, loc[NA] = {0};
    for (int64_t k = 0; k < n; k++) {
        const sleapc_mot_counts *c = &per[k];
        o->clr_tp += c->tp;
        o->clr_fn += c->fn;
        o->clr_fp += c->fp;
        o->idsw += c->idsw;
        o->mt += c->mt;
        o->pt += c->pt;
        o->ml += c->ml;
        o->frag += c->frag;
        motp_sum += c->motp_sum;
        o->idtp += c->idtp;
        o->idfn += c->idfn;
        o->idfp += c->idfp;
    }
    /* HOTA's arrays: numpy sums the per-sequence arrays in order */
    for (int a = 0; a < NA; a++)
        for (int64_t k = 0; k < n; k++) {
            const sleapc_mot_counts *c = &per[k];
            tp[a] += c->hota_tp[a];
            fn[a] += c->hota_fn[a];
            fp[a] += c->hota_fp[a];
            are[a] += c->ass_re[a] * c->hota_tp[a];
            apr[a] += c->ass_pr[a] * c->hota_tp[a];
            aa[a] += c->ass_a[a] * c->hota_tp[a];
            loc[a] += c->loc_a[a] * c->hota_tp[a];
        }
    const double ctp = (double)o->clr_tp, cfn = (double)o->clr_fn, cfp = (double)o->clr_fp;
    const double ngt = fmax(1.0, ctp + cfn);
    o->moda = (ctp - cfp) / ngt;
    o->mota = (ctp - cfp - (double)o->idsw) / ngt;
    o->motp = motp_sum / fmax(1.0, ctp);
    const double itp = (double)o->idtp, ifn = (double)o->idfn, ifp = (double)o->idfp;
    o->idr = itp / fmax(1.0, itp + ifn);
    o->idp = itp / fmax(1.0, itp + ifp);
    o->idf1 = itp / fmax(1.0, itp + 0.5 * ifp + 0.5 * ifn);
    for (int a = 0; a < NA; a++) {
        const double w = fmax(1.0, tp[a]);
        o->ass_re[a] = are[a] / w;
        o->ass_pr[a] = apr[a] / w;
        o->ass_a[a] = aa[a] / w;
        o->loc_a[a] = fmax(1e-10, loc[a]) / fmax(1e-10, tp[a]);
        o->det_re[a] = tp[a] / fmax(1.0, tp[a] + fn[a]);
        o->det_pr[a] = tp[a] / fmax(1.0, tp[a] + fp[a]);
        o->det_a[a] = tp[a] / fmax(1.0, tp[a] + fn[a] + fp[a]);
        o->hota[a] = sqrt(o->det_a[a] * o->ass_a[a]);
        o->owta[a] = sqrt(o->det_re[a] * o->ass_a[a]);
    }
}
