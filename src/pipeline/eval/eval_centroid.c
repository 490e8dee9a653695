/* Matching by centroid distance, frame by frame: sleap-nn's
 * Evaluator._process_frames_centroid, compute_gt_centroids and
 * match_centroids (scipy's linear_sum_assignment on the pairwise distances,
 * pairs farther than the threshold dropped). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/hungarian.h"
#include "pipeline/eval/evaluation.h"

/* _collapse_pred_centroid: the first visible point, else node 0. */
static void pred_centroid(const double *xy, int n, double c[2])
{
    for (int k = 0; k < n; k++)
        if (!isnan(xy[2 * k]) && !isnan(xy[2 * k + 1])) {
            c[0] = xy[2 * k];
            c[1] = xy[2 * k + 1];
            return;
        }
    c[0] = n ? xy[0] : NAN;
    c[1] = n ? xy[1] : NAN;
}

/* find_points_mean: the NaN-ignoring mean of each coordinate. */
static void mean_centroid(const double *xy, int n, double c[2])
{
    for (int d = 0; d < 2; d++) {
        double sum = 0;
        int cnt = 0;
        for (int k = 0; k < n; k++)
            if (!isnan(xy[2 * k + d])) {
                sum += xy[2 * k + d];
                cnt++;
            }
        c[d] = cnt ? sum / cnt : NAN;
    }
}

/* find_points_bbox_midpoint: (min + max) / 2 per axis, NaN ignored (none
 * visible: inf - inf, NaN). */
static void bbox_centroid(const double *xy, int n, double c[2])
{
    for (int d = 0; d < 2; d++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int k = 0; k < n; k++)
            if (!isnan(xy[2 * k + d])) {
                lo = fmin(lo, xy[2 * k + d]);
                hi = fmax(hi, xy[2 * k + d]);
            }
        c[d] = (hi + lo) * 0.5;
    }
}

/* find_points_geometric_median: Weiszfeld from the mean of the points
 * visible in both coordinates; points within 1e-12 of the estimate are left
 * out of a step; stops once a step moves less than 1e-6 (100 steps at most). */
static void median_centroid(const double *xy, int n, double c[2])
{
    double e[2] = {0, 0};
    int cnt = 0;
    for (int k = 0; k < n; k++)
        if (!isnan(xy[2 * k]) && !isnan(xy[2 * k + 1])) {
            e[0] += xy[2 * k];
            e[1] += xy[2 * k + 1];
            cnt++;
        }
    if (!cnt) {
        c[0] = c[1] = NAN;
        return;
    }
    e[0] /= cnt;
    e[1] /= cnt;
    for (int it = 0; it < 100; it++) {
        double w = 0, u[2] = {0, 0};
        for (int k = 0; k < n; k++) {
            if (isnan(xy[2 * k]) || isnan(xy[2 * k + 1]))
                continue;
            const double dx = xy[2 * k] - e[0], dy = xy[2 * k + 1] - e[1];
            const double dd = sqrt(dx * dx + dy * dy);
            if (!(dd > 1e-12))
                continue;
            w += 1.0 / dd;
            u[0] += xy[2 * k] / dd;
            u[1] += xy[2 * k + 1] / dd;
        }
        const double ne[2] = {w > 0 ? u[0] / fmax(w, 1e-12) : e[0],
                              w > 0 ? u[1] / fmax(w, 1e-12) : e[1]};
        const double sx = ne[0] - e[0], sy = ne[1] - e[1];
        e[0] = ne[0];
        e[1] = ne[1];
        if (!(sqrt(sx * sx + sy * sy) >= 1e-6))
            break;
    }
    c[0] = e[0];
    c[1] = e[1];
}

static void reduce(sleapc_ev_centroid m, const double *xy, int n, double c[2])
{
    if (m == SLEAPC_EV_C_BBOX)
        bbox_centroid(xy, n, c);
    else if (m == SLEAPC_EV_C_MEDIAN)
        median_centroid(xy, n, c);
    else
        mean_centroid(xy, n, c);
}

/* compute_gt_centroids (generate_centroids): the anchor node when visible,
 * else the fallback; or the method's reduction of the nodes. */
static void gt_centroid(const double *xy, int n, int anchor, const sleapc_ev_opts *o, double c[2])
{
    sleapc_ev_centroid m = o->centroid_method;
    if (m == SLEAPC_EV_C_INFER)
        m = anchor >= 0 ? SLEAPC_EV_C_ANCHOR : SLEAPC_EV_C_MEAN;
    if (m != SLEAPC_EV_C_ANCHOR) {
        reduce(m, xy, n, c);
        return;
    }
    c[0] = anchor < n ? xy[2 * anchor] : NAN;
    c[1] = anchor < n ? xy[2 * anchor + 1] : NAN;
    if (isnan(c[0]) || isnan(c[1]))
        reduce(o->centroid_fallback, xy, n, c);
}

static double dist(const double a[2], const double b[2])
{
    const double dx = a[0] - b[0], dy = a[1] - b[1];
    return sqrt(dx * dx + dy * dy);
}

sleapc_status sleapc__ev_match_centroids(sleapc_ev_result *r, const sleapc_ev_opts *o)
{
    const sleapc_ev_labels *gt = r->gt, *pr = r->pr;
    int64_t max_inst = 1, total_gt = 0, total_pr = 0;
    for (int64_t fp = 0; fp < r->n_frame_pairs; fp++) {
        const int64_t ng = gt->frames[r->frame_pairs[fp].gt_frame].n;
        const int64_t np = pr->frames[r->frame_pairs[fp].pr_frame].n;
        max_inst = ng > max_inst ? ng : max_inst;
        max_inst = np > max_inst ? np : max_inst;
        total_gt += ng;
        total_pr += np;
    }
    const size_t m = (size_t)max_inst;
    int64_t *gidx = sleapc__malloc(sizeof(int64_t) * m),
            *pidx = sleapc__malloc(sizeof(int64_t) * m);
    int64_t *gmap = sleapc__malloc(sizeof(int64_t) * m),
            *pmap = sleapc__malloc(sizeof(int64_t) * m);
    int64_t *rows = sleapc__malloc(sizeof(int64_t) * m),
            *cols = sleapc__malloc(sizeof(int64_t) * m);
    uint8_t *gused = sleapc__malloc(m), *pused = sleapc__malloc(m);
    double(*gc)[2] = sleapc__malloc(sizeof *gc * m), (*pc)[2] = sleapc__malloc(sizeof *pc * m);
    double *cost = sleapc__malloc(sizeof(double) * m * m);
    r->pairs = sleapc__malloc(sizeof *r->pairs * (size_t)(total_gt + 1));
    r->fn = sleapc__malloc(sizeof *r->fn * (size_t)(total_gt + 1));
    r->fp = sleapc__malloc(sizeof *r->fp * (size_t)(total_pr + 1));
    sleapc_status st = SLEAPC_OK;
    if (!gidx || !pidx || !gmap || !pmap || !rows || !cols || !gused || !pused || !gc || !pc ||
        !cost || !r->pairs || !r->fn || !r->fp) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
        goto done;
    }
    for (int64_t fp = 0; fp < r->n_frame_pairs && !st; fp++) {
        const sleapc_ev_frame *gf = &gt->frames[r->frame_pairs[fp].gt_frame];
        const sleapc_ev_frame *pf = &pr->frames[r->frame_pairs[fp].pr_frame];
        int ng = 0, np = 0, nvg = 0, nvp = 0;
        for (int64_t i = gf->first; i < gf->first + gf->n; i++)
            if (sleapc__ev_gt_considered(gt, i, o->user_labels_only)) {
                gt_centroid(sleapc__ev_points(gt, i), gt->insts[i].n_nodes, r->anchor_ind, o,
                            gc[ng]);
                gidx[ng++] = i;
            }
        for (int64_t i = pf->first; i < pf->first + pf->n; i++) {
            pred_centroid(sleapc__ev_points(pr, i), pr->insts[i].n_nodes, pc[np]);
            pidx[np++] = i;
        }
        /* NaN centroids take no part: a GT one is a false negative, a
         * predicted one is no detection */
        for (int g = 0; g < ng; g++)
            if (!isnan(gc[g][0]) && !isnan(gc[g][1]))
                gmap[nvg++] = g;
        for (int p = 0; p < np; p++)
            if (!isnan(pc[p][0]) && !isnan(pc[p][1]))
                pmap[nvp++] = p;
        memset(gused, 0, m);
        memset(pused, 0, m);
        if (nvg && nvp) {
            for (int p = 0; p < nvp; p++)
                for (int g = 0; g < nvg; g++)
                    cost[p * nvg + g] = dist(pc[pmap[p]], gc[gmap[g]]);
            if ((st = sleapc__hungarian_solve(cost, nvp, nvg, rows, cols)))
                goto done;
            const int n_assigned = nvp < nvg ? nvp : nvg;
            for (int k = 0; k < n_assigned; k++) {
                if (!(cost[rows[k] * nvg + cols[k]] <= r->match_threshold))
                    continue;
                const int p = (int)pmap[rows[k]], g = (int)gmap[cols[k]];
                pused[rows[k]] = gused[cols[k]] = 1;
                r->pairs[r->n_pairs++] = (sleapc_ev_pair){gidx[g], pidx[p], dist(pc[p], gc[g])};
            }
        }
        for (int g = 0; g < nvg; g++)
            if (!gused[g])
                r->fn[r->n_fn++] = gidx[gmap[g]];
        for (int g = 0; g < ng; g++)
            if (isnan(gc[g][0]) || isnan(gc[g][1]))
                r->fn[r->n_fn++] = gidx[g];
        for (int p = 0; p < nvp; p++)
            if (!pused[p])
                r->fp[r->n_fp++] = pidx[pmap[p]];
    }
    r->dist_cols = 0;
    r->dists = sleapc__malloc(sizeof(double) * (size_t)(r->n_pairs + 1));
    if (!r->dists) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
        goto done;
    }
    for (int64_t p = 0; p < r->n_pairs; p++)
        r->dists[p] = r->pairs[p].score;
done:
    sleapc__free(gidx);
    sleapc__free(pidx);
    sleapc__free(gmap);
    sleapc__free(pmap);
    sleapc__free(rows);
    sleapc__free(cols);
    sleapc__free(gused);
    sleapc__free(pused);
    sleapc__free(gc);
    sleapc__free(pc);
    sleapc__free(cost);
    return st;
}
