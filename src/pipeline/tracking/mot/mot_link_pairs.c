/* The open set's candidate pairs (linking.py _Linker: _init_pairs,
 * _add_pairs): every ordered pair inside the spatial-only window and, with
 * appearance, each identity's best appearance candidates; a pair is kept
 * when its junction passes the spatial gate, or, past a track buffer, when
 * its linking statistic clears the calibrated threshold. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_link.h"

#define MAX_WINDOW_CANDIDATES 256

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

static sleapc_status grow_pairs(mot_linker *L, int need)
{
    if (need <= L->pcap)
        return SLEAPC_OK;
    const int cap = need > 2 * L->pcap ? (need > 64 ? need : 64) : 2 * L->pcap;
#define GROW(f)                                                                                    \
    do {                                                                                           \
        void *g = sleapc__realloc(L->f, (size_t)cap * sizeof *L->f);                               \
        if (!g)                                                                                    \
            return nomem();                                                                        \
        L->f = g;                                                                                  \
    } while (0)
    GROW(pi);
    GROW(pj);
    GROW(pgap);
    GROW(pdist);
    GROW(pscore);
    GROW(pwin);
    GROW(plive);
    GROW(papp);
    GROW(pspat);
    GROW(verdict);
#undef GROW
    L->pcap = cap;
    return SLEAPC_OK;
}

sleapc_status sleapc__mot_link_add_pairs(mot_linker *L, const int *ii, const int *jj, int n)
{
    for (int t = 0; t < n; t++) {
        const int i = ii[t], j = jj[t];
        if (!L->alive[i] || !L->alive[j] || i == j)
            continue;
        const double gap = L->first[j] - L->last[i];
        const double dist = sleapc__mot_link_dist(L->start_c + 2 * j, L->end_c + 2 * i);
        const bool gate_ok = sleapc__mot_link_gate_ok(L, gap, dist);
        /* past a track buffer appearance alone may admit a junction */
        if (!(gap > 0) || !(gate_ok || (L->use_app && gap > L->track_buffer)))
            continue;
        int head[MOT_LINK_QUERY_LEN];
        double thresh, margin;
        sleapc__mot_link_rule(L, sleapc__mot_link_head(L, j, head), &thresh, &margin);
        const double score = sleapc__mot_link_pair_score(L, i, j);
        const bool passes = isfinite(score) && score >= thresh;
        if (!gate_ok && !passes)
            continue;
        sleapc_status st = grow_pairs(L, L->np + 1);
        if (st)
            return st;
        const int p = L->np++;
        L->pi[p] = i;
        L->pj[p] = j;
        L->pgap[p] = gap;
        L->pdist[p] = dist;
        L->pscore[p] = score;
        L->pwin[p] = gap <= sleapc__mot_link_window(L);
        L->papp[p] = passes;
        L->pspat[p] = L->pwin[p] && !isfinite(score);
        L->plive[p] = true;
        L->verdict[p] = -1;
        if ((st = sleapc__mot_ilist_push(&L->rows[i], p)) ||
            (st = sleapc__mot_ilist_push(&L->cols[j], p)))
            return st;
    }
    return SLEAPC_OK;
}

/* First index of sorted x[0..n) with x >= key (left) or x > key (right). */
static int search(const double *x, int n, double key, bool right)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (right ? x[mid] <= key : x[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

typedef struct by_first {
    double first;
    int k;
} by_first;

static int cmp_first(const void *a, const void *b)
{
    const by_first *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k); /* stable */
}

typedef struct pair_key {
    int i, j;
} pair_key;

static int cmp_pair(const void *a, const void *b)
{
    const pair_key *x = a, *y = b;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return (x->j > y->j) - (x->j < y->j);
}

/* _init_pairs: every pair inside the spatial-only window (at most 256 per
 * earlier identity, the earliest-starting) and, with appearance, the
 * appearance candidates; unique, in (i, j) order. */
sleapc_status sleapc__mot_link_init_pairs(mot_linker *L)
{
    const int m = L->m;
    int n_alive = 0;
    for (int k = 0; k < m; k++)
        n_alive += L->alive[k];
    if (n_alive < 2)
        return SLEAPC_OK;
    by_first *order = sleapc__malloc((size_t)n_alive * sizeof *order);
    double *firsts = sleapc__malloc((size_t)n_alive * sizeof *firsts);
    int *ii = NULL, *jj = NULL, n = 0, cap = 0;
    pair_key *keys = NULL;
    int *side = NULL;
    sleapc_status st = SLEAPC_OK;
    if (!order || !firsts) {
        st = nomem();
        goto done;
    }
    int c = 0;
    for (int k = 0; k < m; k++)
        if (L->alive[k])
            order[c++] = (by_first){L->first[k], k};
    qsort(order, (size_t)n_alive, sizeof *order, cmp_first);
    for (int r = 0; r < n_alive; r++)
        firsts[r] = order[r].first;
    for (int i = 0; i < m && !st; i++) {
        if (!L->alive[i])
            continue;
        const int lo = search(firsts, n_alive, L->last[i], true);
        int hi = search(firsts, n_alive, L->last[i] + sleapc__mot_link_window(L), true);
        hi = hi < lo + MAX_WINDOW_CANDIDATES ? hi : lo + MAX_WINDOW_CANDIDATES;
        for (int r = lo; r < hi && !st; r++) {
            if (n == cap) {
                const int c2 = cap ? 2 * cap : 256;
                int *a2 = sleapc__realloc(ii, (size_t)c2 * sizeof *a2);
                if (a2)
                    ii = a2;
                int *b2 = sleapc__realloc(jj, (size_t)c2 * sizeof *b2);
                if (b2)
                    jj = b2;
                if (!a2 || !b2) {
                    st = nomem();
                    break;
                }
                cap = c2;
            }
            ii[n] = i;
            jj[n++] = order[r].k;
        }
    }
    if (!st && L->use_app)
        st = sleapc__mot_link_app_candidates(L, &ii, &jj, &n, &cap);
    if (st || n == 0)
        goto done;
    keys = sleapc__malloc((size_t)n * sizeof *keys);
    side = sleapc__malloc((size_t)n * 2 * sizeof *side);
    if (!keys || !side) {
        st = nomem();
        goto done;
    }
    for (int r = 0; r < n; r++)
        keys[r] = (pair_key){ii[r], jj[r]};
    qsort(keys, (size_t)n, sizeof *keys, cmp_pair);
    int u = 0;
    for (int r = 0; r < n; r++)
        if (u == 0 || keys[r].i != side[u - 1] || keys[r].j != side[n + u - 1]) {
            side[u] = keys[r].i;
            side[n + u++] = keys[r].j;
        }
    st = sleapc__mot_link_add_pairs(L, side, side + n, u);
done:
    sleapc__free(order);
    sleapc__free(firsts);
    sleapc__free(ii);
    sleapc__free(jj);
    sleapc__free(keys);
    sleapc__free(side);
    return st;
}
