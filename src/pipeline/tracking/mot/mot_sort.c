/* SORT (Bewley et al., 2016) as sleap-nn 0.3.5 runs it (tracking/mot/sort.py):
 * detections scoring at or below track_low_threshold are ignored; one pool
 * of every live track; the admissible pairs (similarity >=
 * min_match_similarity) taken as they are when they form a one-to-one
 * pattern, else a Hungarian assignment on 1 - similarity. */
#include <math.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_assoc.h"
#include "pipeline/tracking/mot/mot_tracker.h"

sleapc_status sleapc__mot_sort_associate(mot_tracker *T, int64_t d0, int m, mot_result *r)
{
    const mot_video *v = T->v;
    const sleapc_mot_params *p = &T->p;
    int n_cand = 0;
    for (int j = 0; j < m; j++) {
        const bool ignored = v->score[d0 + j] <= p->track_low_threshold;
        r->no_spawn[j] = ignored;
        n_cand += v->valid[d0 + j] && !ignored;
    }
    const int n = T->n_tracks;
    if (n == 0 || n_cand == 0)
        return SLEAPC_OK;
    const size_t nm = (size_t)n * (size_t)m, nc = (size_t)n * (size_t)n_cand;
    double *sim = sleapc__mot_tmp(&T->tmp, (nm + 4 * (size_t)n + 2 * nc) * sizeof *sim);
    int *cand = sleapc__mot_tmp(&T->tmp, ((size_t)n_cand + 2 * (size_t)(n < n_cand ? n_cand : n)) *
                                             sizeof *cand);
    bool *valid = sleapc__mot_tmp(&T->tmp, nc * sizeof *valid);
    sleapc_status st = SLEAPC_OK;
    if (!sim || !cand || !valid) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        goto done;
    }
    double *sub = sim + nm + 4 * (size_t)n, *cost = sub + nc;
    int *rows = cand + n_cand, *cols = rows + (n < n_cand ? n_cand : n);
    sleapc__mot_geometric_sim(T, T->tracks, n, d0, m, sim);
    int c = 0;
    for (int j = 0; j < m; j++)
        if (v->valid[d0 + j] && !r->no_spawn[j])
            cand[c++] = j;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n_cand; k++) {
            const double s = sim[(size_t)i * m + cand[k]];
            sub[(size_t)i * n_cand + k] = s;
            valid[(size_t)i * n_cand + k] = s >= p->min_match_similarity;
            /* 1 - sim is monotone: the admissible set is exactly valid */
            cost[(size_t)i * n_cand + k] = s >= p->min_match_similarity ? 1.0 - s : INFINITY;
        }
    int n_pairs = 0;
    if (!sleapc__mot_one_to_one(valid, n, n_cand, rows, cols, &n_pairs) &&
        (st = sleapc__mot_assign_capped(cost, n, n_cand, 1.0 - p->min_match_similarity, &T->hws,
                                        &T->tmp, rows, cols, &n_pairs)))
        goto done;
    for (int k = 0; k < n_pairs; k++)
        sleapc__mot_result_add(r, T->tracks[rows[k]], cand[cols[k]],
                               sub[(size_t)rows[k] * n_cand + cols[k]]);
done:
    return st;
}
