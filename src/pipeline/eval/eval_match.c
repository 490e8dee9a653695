/* Matching by OKS, frame by frame: sleap-nn's match_instances (greedy, the
 * predictions in descending score order, each taking the available GT
 * instance of highest OKS above the threshold), compute_oks and
 * compute_dists. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/np_sum.h"
#include "pipeline/eval/eval_numpy.h"
#include "pipeline/eval/evaluation.h"

static bool missing(const double *p)
{
    return isnan(p[0]) || isnan(p[1]);
}

/* compute_instance_area: the bounding box of the visible points (NaN when
 * none is visible). */
static double bbox_area(const double *xy, int n)
{
    double lo[2] = {NAN, NAN}, hi[2] = {NAN, NAN};
    for (int k = 0; k < n; k++)
        for (int c = 0; c < 2; c++) {
            const double v = xy[2 * k + c];
            if (isnan(v))
                continue;
            if (isnan(lo[c]) || v < lo[c])
                lo[c] = v;
            if (isnan(hi[c]) || v > hi[c])
                hi[c] = v;
        }
    return (hi[0] - lo[0]) * (hi[1] - lo[1]);
}

#define DEGENERATE_AREA 1e-9 /* _DEGENERATE_AREA_EPS */
#define DEGENERATE_PX 50.0   /* match_instances' degenerate_pixel_threshold */

/* compute_distance_match_score for one pair: 1 - (mean distance over the
 * nodes visible in both) / 50 px, at least 0; 0 with no such node. */
static double distance_score(const double *g, const double *p, int n, double *tmp)
{
    int k = 0;
    for (int j = 0; j < n; j++) {
        if (isnan(g[2 * j]) || isnan(g[2 * j + 1]) || isnan(p[2 * j]) || isnan(p[2 * j + 1]))
            continue;
        const double dx = g[2 * j] - p[2 * j], dy = g[2 * j + 1] - p[2 * j + 1];
        tmp[k++] = sqrt(dx * dx + dy * dy);
    }
    if (!k)
        return 0.0;
    return fmax(0.0, 1.0 - sleapc__np_pairwise_sum(tmp, k) / k / DEGENERATE_PX);
}

/* compute_oks(points_gt, points_pr) for one pair, use_cocoeval=True:
 * KS = exp(-d^2 / ((2 sigma)^2 * 2 (scale + eps))), missing predicted
 * points have d = inf, missing GT points KS = 0, summed over the nodes and
 * divided by the visible GT nodes. */
static double oks(const double *gt, const double *pr, int n, double scale, double stddev,
                  double *ks)
{
    const double spread = (2 * stddev) * (2 * stddev);
    const double scale_factor = 2 * (scale + DBL_EPSILON);
    const double norm = spread * scale_factor;
    int n_visible = 0;
    for (int k = 0; k < n; k++) {
        const double dx = gt[2 * k] - pr[2 * k], dy = gt[2 * k + 1] - pr[2 * k + 1];
        double d = dx * dx + dy * dy;
        if (missing(pr + 2 * k))
            d = INFINITY;
        ks[k] = exp(-(d / norm));
        if (missing(gt + 2 * k))
            ks[k] = 0;
        else
            n_visible++;
    }
    return sleapc__ev_np_sum(ks, n) / (double)n_visible;
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
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    *p = q;
    *cap = c;
    return SLEAPC_OK;
}

sleapc_status sleapc__ev_match_oks(sleapc_ev_result *r, const sleapc_ev_opts *o)
{
    const sleapc_ev_labels *gt = r->gt, *pr = r->pr;
    int64_t cap_pairs = 0, cap_fn = 0;
    int64_t *avail = NULL, *order = NULL;
    double *scores = NULL, *score_oks = NULL, *ks = NULL;
    sleapc_status st = SLEAPC_OK;
    int max_inst = 1, max_nodes = 1;
    for (int64_t f = 0; f < gt->n_frames; f++)
        if (gt->frames[f].n > max_inst)
            max_inst = (int)gt->frames[f].n;
    for (int64_t f = 0; f < pr->n_frames; f++)
        if (pr->frames[f].n > max_inst)
            max_inst = (int)pr->frames[f].n;
    for (int64_t i = 0; i < gt->n_insts; i++)
        if (gt->insts[i].n_nodes > max_nodes)
            max_nodes = gt->insts[i].n_nodes;
    avail = sleapc__malloc(sizeof *avail * (size_t)max_inst);
    order = sleapc__malloc(sizeof *order * (size_t)max_inst);
    scores = sleapc__malloc(sizeof *scores * (size_t)max_inst);
    score_oks = sleapc__malloc(sizeof *score_oks * (size_t)max_inst);
    ks = sleapc__malloc(sizeof *ks * (size_t)max_nodes);
    if (!avail || !order || !scores || !score_oks || !ks) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
        goto done;
    }
    for (int64_t fp = 0; fp < r->n_frame_pairs && !st; fp++) {
        const sleapc_ev_frame *gf = &gt->frames[r->frame_pairs[fp].gt_frame];
        const sleapc_ev_frame *pf = &pr->frames[r->frame_pairs[fp].pr_frame];
        int n_avail = 0;
        for (int64_t i = gf->first; i < gf->first + gf->n; i++)
            if (sleapc__ev_gt_considered(gt, i, o->user_labels_only))
                avail[n_avail++] = i;
        /* The scores of the instances that have one (predicted ones), sorted;
         * sleap-nn then takes the instance at that position of the frame's
         * whole list, user instances included. */
        int n_scored = 0;
        for (int64_t k = 0; k < pf->n; k++)
            if (pr->insts[pf->first + k].predicted)
                scores[n_scored++] = pr->insts[pf->first + k].score;
        sleapc__ev_np_argsort_desc(scores, n_scored, order);
        for (int s = 0; s < n_scored && n_avail > 0; s++) {
            const int64_t ip = pf->first + order[s];
            const sleapc_ev_inst *pi = &pr->insts[ip];
            int best = -1;
            double best_oks = NAN;
            for (int a = 0; a < n_avail; a++) {
                const sleapc_ev_inst *gi = &gt->insts[avail[a]];
                if (gi->n_nodes != pi->n_nodes) {
                    st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                      "eval: frame %lld: a ground-truth instance has %d nodes, "
                                      "a predicted one %d: OKS needs the same skeleton",
                                      (long long)gf->frame_idx, gi->n_nodes, pi->n_nodes);
                    goto done;
                }
                const double *g = sleapc__ev_points(gt, avail[a]);
                const double area = bbox_area(g, gi->n_nodes);
                const double scale = isnan(o->oks_scale) ? area : o->oks_scale;
                double v = oks(g, sleapc__ev_points(pr, ip), gi->n_nodes, scale, o->oks_stddev, ks);
                /* sleap-nn 0.3.5: a GT box of no area makes OKS an equality
                 * test; such GT is scored by mean distance instead */
                if (o->degenerate_fallback && area < DEGENERATE_AREA)
                    v = distance_score(g, sleapc__ev_points(pr, ip), gi->n_nodes, ks);
                if (v <= r->match_threshold)
                    v = NAN;
                /* argsort(-oks)[0]: the first of the highest, NaN last */
                if (!isnan(v) && (best < 0 || v > best_oks)) {
                    best = a;
                    best_oks = v;
                }
            }
            if (best < 0)
                continue;
            if ((st = grow((void **)&r->pairs, &cap_pairs, r->n_pairs + 1, sizeof *r->pairs)))
                goto done;
            r->pairs[r->n_pairs++] = (sleapc_ev_pair){avail[best], ip, best_oks};
            memmove(avail + best, avail + best + 1, sizeof *avail * (size_t)(n_avail - best - 1));
            n_avail--;
        }
        if ((st = grow((void **)&r->fn, &cap_fn, r->n_fn + n_avail + 1, sizeof *r->fn)))
            goto done;
        for (int a = 0; a < n_avail; a++)
            r->fn[r->n_fn++] = avail[a];
    }
    /* compute_dists: the per-node distance of every matched pair */
    r->dist_cols = r->n_pairs ? gt->insts[r->pairs[0].gt].n_nodes : 0;
    r->dists = sleapc__malloc(sizeof(double) * (size_t)(r->n_pairs * r->dist_cols + 1));
    if (!r->dists) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
        goto done;
    }
    for (int64_t p = 0; p < r->n_pairs; p++) {
        const double *g = sleapc__ev_points(gt, r->pairs[p].gt);
        const double *q = sleapc__ev_points(pr, r->pairs[p].pr);
        for (int k = 0; k < r->dist_cols; k++) {
            const double dx = q[2 * k] - g[2 * k], dy = q[2 * k + 1] - g[2 * k + 1];
            r->dists[p * r->dist_cols + k] = sqrt(dx * dx + dy * dy);
        }
    }
done:
    sleapc__free(avail);
    sleapc__free(order);
    sleapc__free(scores);
    sleapc__free(score_oks);
    sleapc__free(ks);
    return st;
}
