/* Open-set gap linking (linking.py _Linker: init_linking, best_gap_link,
 * merge): candidate pairs (i ends, j starts later; within four track
 * buffers, or among the appearance candidates: mot_link_pairs.c) are
 * linked best-first:
 * a pair with vectors on both sides when its linking statistic clears the
 * calibrated threshold and margin (mot_link_appearance.c), a pair without
 * when it is unique on the window's frontier and no host (an identity with
 * i's end or j's start inside one of its gaps) could take the junction. A
 * pair's verdict is cached and reset, as there, only for the pairs around
 * a merge. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_link.h"

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

/* Drops the dead pairs from a pair list (order kept). */
static void prune(const mot_linker *L, mot_ilist *l)
{
    int w = 0;
    for (int r = 0; r < l->n; r++)
        if (L->plive[l->v[r]])
            l->v[w++] = l->v[r];
    l->n = w;
}

/* The same over the steps of members mem[0..n) (only those passing keep
 * when keep is not NULL): count of members before key. */
static int search_mem(const mot_linker *L, const mot_ilist *mem, double key, bool right,
                      const bool *keep, int *last_kept, int *next_kept)
{
    /* members are few per identity next to the pairs: a linear scan */
    int idx = 0, prev = -1, next = -1;
    for (int r = 0; r < mem->n; r++) {
        const int d = mem->v[r];
        if (keep && !keep[d])
            continue;
        const double s = L->step[d];
        if (right ? s <= key : s < key) {
            idx++;
            prev = d;
        } else {
            next = d;
            break;
        }
    }
    if (last_kept)
        *last_kept = prev;
    if (next_kept)
        *next_kept = next;
    return idx;
}

/* _gap_fits(h, [k]), with the distances to h's nearest valid centroids. */
bool sleapc__mot_link_gap_fits(const mot_linker *L, int h, int k, double *gap1, double *gap2,
                               double *d1, double *d2)
{
    const mot_ilist *mem = &L->mem[h];
    if (!L->alive[h] || mem->n < 2)
        return false;
    if (!(L->alive[k] && L->first[k] > L->first[h] && L->last[k] < L->last[h]))
        return false;
    int before = -1, after = -1;
    const int lo = search_mem(L, mem, L->first[k], false, NULL, &before, NULL);
    const int hi = search_mem(L, mem, L->last[k], true, NULL, NULL, &after);
    if (lo != hi)
        return false;
    *gap1 = L->first[k] - L->step[before];
    *gap2 = L->step[after] - L->last[k];
    int prev = -1, next = -1;
    search_mem(L, mem, L->first[k], false, L->valid_c, &prev, NULL);
    search_mem(L, mem, L->last[k], true, L->valid_c, NULL, &next);
    const double nan2[2] = {NAN, NAN};
    *d1 = sleapc__mot_link_dist(L->start_c + 2 * k, prev >= 0 ? L->cen + 2 * prev : nan2);
    *d2 = sleapc__mot_link_dist(next >= 0 ? L->cen + 2 * next : nan2, L->end_c + 2 * k);
    return true;
}

/* _spatially_unique: no host of j (other than i) could take j's start, and
 * no host of i (other than j) i's end, within the window. */
static bool spatially_unique(const mot_linker *L, int i, int j)
{
    double g1, g2, d1, d2;
    for (int side = 0; side < 2; side++) {
        const int k = side ? i : j, other = side ? j : i;
        for (int h = 0; h < L->m; h++) {
            if (!L->alive[h] || !(L->first[h] < L->first[k]) || !(L->last[h] > L->last[k]))
                continue;
            if (!sleapc__mot_link_gap_fits(L, h, k, &g1, &g2, &d1, &d2) || h == other)
                continue;
            const double gap = side ? g2 : g1, dist = side ? d2 : d1;
            if (gap <= sleapc__mot_link_window(L) && sleapc__mot_link_gate_ok(L, gap, dist))
                return false;
        }
    }
    return true;
}

/* The cached verdict: by appearance when the pair has a statistic, else
 * spatial uniqueness. */
static bool accepted(mot_linker *L, int p)
{
    if (L->verdict[p] < 0) {
        const int i = L->pi[p], j = L->pj[p];
        const bool ok = isfinite(L->pscore[p]) ? sleapc__mot_link_margin_ok(L, i, j, L->pscore[p])
                                               : spatially_unique(L, i, j);
        L->verdict[p] = (signed char)ok;
    }
    return L->verdict[p] == 1;
}

/* Working arrays of one run. */
typedef struct open_ws {
    double *end_first, *start_last;
    int *row_n, *col_n, *cand, *order, *where;
    bool *mark;
    int cap;
} open_ws;

typedef struct rank_key {
    bool spatial;
    double neg_score, gap, first;
    int ri, rj, k;
} rank_key;

/* (appearance before spatial, score desc, gap, start of j, name of i, name
 * of j), then the candidate order (np.lexsort is stable). */
static int cmp_rank(const void *a, const void *b)
{
    const rank_key *x = a, *y = b;
    if (x->spatial != y->spatial)
        return x->spatial ? 1 : -1;
    if (x->neg_score != y->neg_score)
        return x->neg_score < y->neg_score ? -1 : 1;
    if (x->gap != y->gap)
        return x->gap < y->gap ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    if (x->ri != y->ri)
        return x->ri < y->ri ? -1 : 1;
    if (x->rj != y->rj)
        return x->rj < y->rj ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* The candidates cand[0..n) with sel[k] == want, in ranked order, into
 * out; returns their count. keys: n slots. */
static int ranked(const mot_linker *L, const int *cand, const bool *sel, bool want, int n,
                  rank_key *keys, int *out)
{
    int c = 0;
    for (int k = 0; k < n; k++) {
        if (sel[k] != want)
            continue;
        const int p = cand[k];
        const bool spatial = !isfinite(L->pscore[p]);
        keys[c++] = (rank_key){spatial,
                               spatial ? -0.0 : -L->pscore[p],
                               L->pgap[p],
                               L->first[L->pj[p]],
                               L->name_rank[L->pi[p]],
                               L->name_rank[L->pj[p]],
                               k};
    }
    qsort(keys, (size_t)c, sizeof *keys, cmp_rank);
    for (int r = 0; r < c; r++)
        out[r] = keys[r].k;
    return c;
}

/* best_gap_link: the pair to link next, or -1. */
static sleapc_status best_gap_link(mot_linker *L, open_ws *w, int *best)
{
    *best = -1;
    const int m = L->m;
    for (int k = 0; k < m; k++) {
        w->end_first[k] = INFINITY;
        w->start_last[k] = -INFINITY;
        w->row_n[k] = w->col_n[k] = 0;
    }
    /* the window's frontier: a successor of i starting after i's nearest
     * window successor ends can follow through it (no competitor) */
    for (int p = 0; p < L->np; p++) {
        if (!L->plive[p] || !L->pspat[p])
            continue;
        const int i = L->pi[p], j = L->pj[p];
        w->end_first[i] = fmin(w->end_first[i], L->last[j]);
        w->start_last[j] = fmax(w->start_last[j], L->first[i]);
    }
    for (int p = 0; p < L->np; p++) {
        if (!L->plive[p] || !L->pspat[p])
            continue;
        const int i = L->pi[p], j = L->pj[p];
        w->row_n[i] += L->first[j] <= w->end_first[i];
        w->col_n[j] += L->last[i] >= w->start_last[j];
    }
    if (L->np > w->cap) {
        const int cap = L->np;
        int *c = sleapc__realloc(w->cand, (size_t)cap * sizeof *c);
        if (c)
            w->cand = c;
        int *o = sleapc__realloc(w->order, (size_t)cap * sizeof *o);
        if (o)
            w->order = o;
        int *wh = sleapc__realloc(w->where, (size_t)cap * sizeof *wh);
        if (wh)
            w->where = wh;
        if (!c || !o || !wh)
            return nomem();
        w->cap = cap;
    }
    /* the candidates: appearance links that clear the threshold, then the
     * spatial ones unique on the window's frontier */
    int n = 0;
    for (int p = 0; p < L->np; p++) {
        w->where[p] = -1;
        if (L->plive[p] && L->papp[p]) {
            w->where[p] = n;
            w->cand[n++] = p;
        }
    }
    for (int p = 0; p < L->np; p++) {
        if (!L->plive[p] || !L->pspat[p])
            continue;
        const int i = L->pi[p], j = L->pj[p];
        if (L->first[j] <= w->end_first[i] && L->last[i] >= w->start_last[j] && w->row_n[i] == 1 &&
            w->col_n[j] == 1) {
            w->where[p] = n;
            w->cand[n++] = p;
        }
    }
    if (n == 0)
        return SLEAPC_OK;
    /* stage A: candidates that skip no other candidate of either identity */
    for (int k = 0; k < m; k++) {
        w->end_first[k] = INFINITY;
        w->start_last[k] = -INFINITY;
    }
    for (int k = 0; k < n; k++) {
        const int i = L->pi[w->cand[k]], j = L->pj[w->cand[k]];
        w->end_first[i] = fmin(w->end_first[i], L->last[j]);
        w->start_last[j] = fmax(w->start_last[j], L->first[i]);
    }
    bool *frontier = sleapc__malloc((size_t)n * sizeof *frontier);
    rank_key *keys = sleapc__malloc((size_t)n * sizeof *keys);
    if (!frontier || !keys) {
        sleapc__free(frontier);
        sleapc__free(keys);
        return nomem();
    }
    for (int k = 0; k < n; k++) {
        const int i = L->pi[w->cand[k]], j = L->pj[w->cand[k]];
        frontier[k] = L->first[j] <= w->end_first[i] && L->last[i] >= w->start_last[j];
    }
    int c = ranked(L, w->cand, frontier, true, n, keys, w->order);
    for (int r = 0; r < c && *best < 0; r++)
        if (accepted(L, w->cand[w->order[r]]))
            *best = w->cand[w->order[r]];
    /* stage B: a link that skips only rejected candidates */
    c = *best < 0 ? ranked(L, w->cand, frontier, false, n, keys, w->order) : 0;
    for (int r = 0; r < c && *best < 0; r++) {
        const int p = w->cand[w->order[r]];
        if (!accepted(L, p))
            continue;
        const int i = L->pi[p], j = L->pj[p];
        bool skips = false;
        prune(L, &L->rows[i]);
        for (int t = 0; t < L->rows[i].n && !skips; t++) {
            const int q = L->rows[i].v[t];
            skips = L->last[L->pj[q]] < L->first[j] && w->where[q] >= 0 && accepted(L, q);
        }
        prune(L, &L->cols[j]);
        for (int t = 0; t < L->cols[j].n && !skips; t++) {
            const int q = L->cols[j].v[t];
            skips = L->first[L->pi[q]] > L->last[i] && w->where[q] >= 0 && accepted(L, q);
        }
        if (!skips)
            *best = p;
    }
    sleapc__free(frontier);
    sleapc__free(keys);
    return SLEAPC_OK;
}

/* _neighborhood: k, its candidate predecessors and successors, its guests. */
static void neighborhood(mot_linker *L, int k, bool *mark)
{
    mark[k] = true;
    prune(L, &L->cols[k]);
    for (int t = 0; t < L->cols[k].n; t++)
        mark[L->pi[L->cols[k].v[t]]] = true;
    prune(L, &L->rows[k]);
    for (int t = 0; t < L->rows[k].n; t++)
        mark[L->pj[L->rows[k].v[t]]] = true;
    double g1, g2, d1, d2;
    for (int c = 0; c < L->m; c++)
        if (L->alive[c] && sleapc__mot_link_gap_fits(L, k, c, &g1, &g2, &d1, &d2))
            mark[c] = true;
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sorted, unique, without a and b; returns the new count. */
static int unique_without(int *x, int n, int a, int b)
{
    qsort(x, (size_t)n, sizeof *x, cmp_int);
    int w = 0;
    for (int r = 0; r < n; r++)
        if (x[r] != a && x[r] != b && (w == 0 || x[w - 1] != x[r]))
            x[w++] = x[r];
    return w;
}

/* merge: j (later) into i; the merged identity keeps j's successors and
 * i's predecessors; verdicts around both are reset. */
static sleapc_status merge(mot_linker *L, open_ws *w, int i, int j)
{
    bool *dirty = w->mark;
    memset(dirty, 0, (size_t)L->m * sizeof *dirty);
    neighborhood(L, i, dirty);
    neighborhood(L, j, dirty);
    const int ns = L->rows[i].n + L->rows[j].n, npd = L->cols[i].n + L->cols[j].n;
    int *succ = sleapc__malloc((size_t)(ns + npd + 1) * sizeof *succ);
    int *side = sleapc__malloc((size_t)(ns + npd + 1) * sizeof *side);
    if (!succ || !side) {
        sleapc__free(succ);
        sleapc__free(side);
        return nomem();
    }
    int *pred = succ + ns;
    int a = 0, b = 0;
    for (int s = 0; s < 2; s++) {
        const int k = s ? j : i;
        for (int t = 0; t < L->rows[k].n; t++)
            succ[a++] = L->pj[L->rows[k].v[t]];
        for (int t = 0; t < L->cols[k].n; t++)
            pred[b++] = L->pi[L->cols[k].v[t]];
    }
    for (int s = 0; s < 2; s++) {
        const int k = s ? j : i;
        for (int t = 0; t < L->rows[k].n; t++)
            L->plive[L->rows[k].v[t]] = false;
        for (int t = 0; t < L->cols[k].n; t++)
            L->plive[L->cols[k].v[t]] = false;
        L->rows[k].n = L->cols[k].n = 0;
    }
    L->alive[j] = false;
    sleapc_status st = SLEAPC_OK;
    for (int t = 0; t < L->mem[j].n && !st; t++)
        st = sleapc__mot_ilist_push(&L->mem[i], L->mem[j].v[t]);
    if (st)
        goto done;
    L->mem[j].n = 0;
    for (int t = 0; t < L->mem[i].n; t++)
        L->label[L->mem[i].v[t]] = L->owner[L->mem[i].v[t]] = i;
    sleapc__mot_link_extent(L, i);
    L->n_dets[i] += L->n_dets[j];
    a = unique_without(succ, a, i, j);
    b = unique_without(pred, b, i, j);
    for (int t = 0; t < a; t++)
        side[t] = i;
    if ((st = sleapc__mot_link_add_pairs(L, side, succ, a)))
        goto done;
    for (int t = 0; t < b; t++)
        side[t] = i;
    if ((st = sleapc__mot_link_add_pairs(L, pred, side, b)))
        goto done;
    neighborhood(L, i, dirty);
    for (int k = 0; k < L->m; k++) {
        if (!dirty[k])
            continue;
        for (int t = 0; t < L->rows[k].n; t++)
            L->verdict[L->rows[k].v[t]] = -1;
        for (int t = 0; t < L->cols[k].n; t++)
            L->verdict[L->cols[k].v[t]] = -1;
    }
done:
    sleapc__free(succ);
    sleapc__free(side);
    return st;
}

sleapc_status sleapc__mot_link_open(mot_linker *L, int *n_merges)
{
    *n_merges = 0;
    open_ws w = {0};
    const size_t M = (size_t)(L->m > 0 ? L->m : 1);
    w.end_first = sleapc__malloc(M * sizeof *w.end_first);
    w.start_last = sleapc__malloc(M * sizeof *w.start_last);
    w.row_n = sleapc__malloc(M * sizeof *w.row_n);
    w.col_n = sleapc__malloc(M * sizeof *w.col_n);
    w.mark = sleapc__malloc(M * sizeof *w.mark);
    sleapc_status st = SLEAPC_OK;
    if (!w.end_first || !w.start_last || !w.row_n || !w.col_n || !w.mark)
        st = nomem();
    if (!st)
        st = sleapc__mot_link_init_pairs(L);
    while (!st) {
        int p = -1;
        if ((st = best_gap_link(L, &w, &p)) || p < 0)
            break;
        st = merge(L, &w, L->pi[p], L->pj[p]);
        ++*n_merges;
    }
    sleapc__free(w.end_first);
    sleapc__free(w.start_last);
    sleapc__free(w.row_n);
    sleapc__free(w.col_n);
    sleapc__free(w.mark);
    sleapc__free(w.cand);
    sleapc__free(w.order);
    sleapc__free(w.where);
    return st;
}
