/* The closed set's anchors (linking.py _Linker._select_anchors): the
 * identities that best represent the animals, present together. */
#include <stdlib.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_link.h"

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

typedef struct sel_key {
    int64_t pos;
    double support;
    int rank, k;
} sel_key;

static int cmp_sel(const void *a, const void *b)
{
    const sel_key *x = a, *y = b;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    if (x->support != y->support)
        return x->support > y->support ? -1 : 1;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* _select_anchors: the top n_max identities (by support, then name) of the
 * frame where the most of them, then the most support, are present
 * together (earliest on ties; a detection that duplicates a better
 * supported identity's does not count); then the rest by support. */
sleapc_status sleapc__mot_link_anchors(const mot_linker *L, int n_max, int *anchors, int *n_a)
{
    const size_t N = (size_t)(L->n > 0 ? L->n : 1);
    bool *present = sleapc__malloc(N * sizeof *present);
    sel_key *keys = sleapc__malloc(N * sizeof *keys);
    int64_t n_pos = 1;
    for (int d = 0; d < L->n; d++)
        n_pos = L->pos[d] + 1 > n_pos ? L->pos[d] + 1 : n_pos;
    int64_t *counts = sleapc__calloc((size_t)n_pos, sizeof *counts);
    double *sums = sleapc__calloc((size_t)n_pos, sizeof *sums);
    sleapc_status st = SLEAPC_OK;
    if (!present || !keys || !counts || !sums) {
        st = nomem();
        goto done;
    }
    for (int d = 0; d < L->n; d++)
        present[d] = L->label[d] >= 0;
    for (int q = 0; q < L->n_dups; q++) {
        const int a = L->dup_a[q], b = L->dup_b[q];
        const int la = L->label[a], lb = L->label[b];
        if (la < 0 || lb < 0 || la == lb)
            continue;
        const double sa = L->n_dets[la], sb = L->n_dets[lb];
        const bool a_wins = sa > sb || (sa == sb && L->name_rank[la] < L->name_rank[lb]);
        present[a_wins ? b : a] = false;
    }
    int n = 0;
    for (int d = 0; d < L->n; d++)
        if (present[d])
            keys[n++] = (sel_key){L->pos[d], (double)L->n_dets[L->label[d]],
                                  L->name_rank[L->label[d]], L->label[d]};
    qsort(keys, (size_t)n, sizeof *keys, cmp_sel);
    for (int r = 0, start = 0; r < n; r++) {
        if (r > 0 && keys[r].pos != keys[r - 1].pos)
            start = r;
        if (r - start < n_max) {
            counts[keys[r].pos]++;
            sums[keys[r].pos] += keys[r].support;
        }
    }
    int64_t best = -1;
    for (int64_t p = 0; p < n_pos; p++)
        if (counts[p] > 0 && (best < 0 || counts[p] > counts[best] ||
                              (counts[p] == counts[best] && sums[p] > sums[best])))
            best = p;
    *n_a = 0;
    for (int r = 0, start = 0; r < n && best >= 0; r++) {
        if (r > 0 && keys[r].pos != keys[r - 1].pos)
            start = r;
        if (keys[r].pos == best && r - start < n_max)
            anchors[(*n_a)++] = keys[r].k;
    }
    while (*n_a < n_max) {
        /* the best-supported identity not yet an anchor */
        int pick = -1;
        for (int k = 0; k < L->m; k++) {
            if (!L->alive[k])
                continue;
            bool taken = false;
            for (int i = 0; i < *n_a && !taken; i++)
                taken = anchors[i] == k;
            if (taken)
                continue;
            if (pick < 0 || L->n_dets[k] > L->n_dets[pick] ||
                (L->n_dets[k] == L->n_dets[pick] && L->name_rank[k] < L->name_rank[pick]))
                pick = k;
        }
        if (pick < 0)
            break;
        anchors[(*n_a)++] = pick;
    }
done:
    sleapc__free(present);
    sleapc__free(keys);
    sleapc__free(counts);
    sleapc__free(sums);
    return st;
}
