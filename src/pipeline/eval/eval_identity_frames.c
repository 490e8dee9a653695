/* Frame alignment, kept ground truth and pose similarity for eval-tracking
 * (see eval_identity_frames.h). */
#include "pipeline/eval/eval_identity_frames.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/np_sum.h"
#include "pipeline/eval/eval_identity.h"

#define DEGENERATE_AREA 1e-9 /* _DEGENERATE_AREA_EPS */
#define DEGENERATE_PX 50.0   /* _IDENTITY_DEGENERATE_PIXEL_THRESHOLD */

typedef struct fkey {
    const char *video;
    int64_t frame_idx, frame; /* frame: index into the labels' frames */
} fkey;

static int cmp_key(const void *a, const void *b)
{
    const fkey *x = a, *y = b;
    const int c = strcmp(x->video, y->video);
    if (c)
        return c;
    if (x->frame_idx != y->frame_idx)
        return (x->frame_idx > y->frame_idx) - (x->frame_idx < y->frame_idx);
    return (x->frame > y->frame) - (x->frame < y->frame);
}

/* A dict keyed by (video, frame_idx): sorted, the last of equal keys kept. */
static fkey *keys_of(const sleapc_ev_labels *l, bool frame_only, int64_t *n)
{
    fkey *k = sleapc__malloc(sizeof *k * (size_t)(l->n_frames + 1));
    if (!k)
        return NULL;
    for (int64_t f = 0; f < l->n_frames; f++)
        k[f] = (fkey){frame_only ? "" : sleapc__id_video_key(l, l->frames[f].video),
                      l->frames[f].frame_idx, f};
    qsort(k, (size_t)l->n_frames, sizeof *k, cmp_key);
    int64_t m = 0;
    for (int64_t f = 0; f < l->n_frames; f++) {
        if (m && !strcmp(k[m - 1].video, k[f].video) && k[m - 1].frame_idx == k[f].frame_idx)
            m--;
        k[m++] = k[f];
    }
    *n = m;
    return k;
}

static int64_t find(const fkey *k, int64_t n, const char *video, int64_t frame_idx)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(k[mid].video, video);
        if (c < 0 || (!c && k[mid].frame_idx < frame_idx))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && !strcmp(k[lo].video, video) && k[lo].frame_idx == frame_idx ? k[lo].frame : -1;
}

static int64_t n_distinct_videos(const fkey *k, int64_t n)
{
    int64_t d = 0;
    for (int64_t i = 0; i < n; i++)
        d += !i || strcmp(k[i - 1].video, k[i].video);
    return d;
}

void sleapc__id_align_free(sleapc_id_align *a)
{
    sleapc__free(a->gt_frame);
    sleapc__free(a->pr_frame);
    sleapc__free(a->video);
    memset(a, 0, sizeof *a);
}

sleapc_status sleapc__id_align(const sleapc_ev_labels *gt, const sleapc_ev_labels *pr,
                               sleapc_id_align *out)
{
    memset(out, 0, sizeof *out);
    sleapc_status st = SLEAPC_OK;
    bool *scored = NULL;
    int64_t ng = 0, np = 0;
    fkey *gk = keys_of(gt, false, &ng), *pk = keys_of(pr, false, &np);
    if (!gk || !pk)
        goto nomem;
    int64_t shared = 0;
    for (int64_t i = 0; i < ng; i++)
        shared += find(pk, np, gk[i].video, gk[i].frame_idx) >= 0;
    if (!shared && n_distinct_videos(gk, ng) == 1 && n_distinct_videos(pk, np) == 1) {
        /* one video each side under different paths: pair on frame_idx */
        sleapc__free(gk);
        sleapc__free(pk);
        gk = keys_of(gt, true, &ng);
        pk = keys_of(pr, true, &np);
        if (!gk || !pk)
            goto nomem;
        out->frame_only = true;
        for (int64_t i = 0; i < ng; i++)
            shared += find(pk, np, gk[i].video, gk[i].frame_idx) >= 0;
    }
    if (!shared)
        goto done;
    scored = sleapc__calloc((size_t)ng + 1, 1); /* per key: its video is scored */
    out->gt_frame = sleapc__malloc(sizeof(int64_t) * (size_t)(ng + 1));
    out->pr_frame = sleapc__malloc(sizeof(int64_t) * (size_t)(ng + 1));
    out->video = sleapc__malloc(sizeof(char *) * (size_t)(ng + 1));
    if (!scored || !out->gt_frame || !out->pr_frame || !out->video)
        goto nomem;
    /* keys are sorted by video: a video's keys are one run */
    for (int64_t i = 0, j; i < ng; i = j) {
        bool any = false;
        for (j = i; j < ng && !strcmp(gk[j].video, gk[i].video); j++)
            any |= find(pk, np, gk[j].video, gk[j].frame_idx) >= 0;
        out->n_videos += any;
        out->n_unscored_videos += !any;
        for (int64_t k = i; k < j; k++)
            scored[k] = any;
    }
    for (int64_t i = 0; i < ng; i++) {
        if (!scored[i])
            continue;
        out->gt_frame[out->n] = gk[i].frame;
        out->pr_frame[out->n] = find(pk, np, gk[i].video, gk[i].frame_idx);
        out->video[out->n++] = gk[i].video;
    }
    goto done;
nomem:
    st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    sleapc__id_align_free(out);
done:
    sleapc__free(scored);
    sleapc__free(gk);
    sleapc__free(pk);
    return st;
}

int64_t sleapc__id_gt_keep(const sleapc_ev_labels *gt, int64_t f, bool user_labels_only,
                           int64_t *keep, int64_t *n_superseded)
{
    const sleapc_ev_frame *lf = &gt->frames[f];
    const int64_t a = lf->first, b = lf->first + lf->n;
    int64_t n = 0, dropped = 0;
    bool any_track = false;
    for (int64_t i = a; i < b; i++)
        any_track |= gt->insts[i].track >= 0;
    for (int64_t i = a; i < b; i++) {
        const sleapc_ev_inst *in = &gt->insts[i];
        bool drop = false;
        if (user_labels_only) {
            drop = in->predicted;
        } else if (in->predicted) {
            /* sleap-io's unused_predictions, inverted: a user instance on the
             * frame holds its track, or (no tracks on the frame) links to it;
             * and any prediction a user instance links to */
            for (int64_t u = a; u < b && !drop; u++) {
                const sleapc_ev_inst *ui = &gt->insts[u];
                if (ui->linked == i + 1 && !ui->predicted)
                    drop = true;
                else if (any_track && !ui->predicted && ui->track >= 0 && ui->track == in->track)
                    drop = true;
                else if (!any_track && ui->linked == i + 1)
                    drop = true;
            }
            dropped += drop;
        }
        if (!drop)
            keep[n++] = i;
    }
    *n_superseded = dropped;
    return n;
}

void sleapc__id_centroid(const sleapc_ev_labels *l, int64_t inst, double c[2])
{
    const double *xy = sleapc__ev_points(l, inst);
    for (int d = 0; d < 2; d++) {
        double s = 0;
        int k = 0;
        for (int j = 0; j < l->insts[inst].n_nodes; j++)
            if (!isnan(xy[2 * j + d])) {
                s += xy[2 * j + d];
                k++;
            }
        c[d] = k ? s / k : NAN;
    }
}

/* compute_instance_area: the box of the nodes, NaN ignored per axis. */
static double area(const double *xy, int n)
{
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    bool any[2] = {false, false};
    for (int j = 0; j < n; j++)
        for (int d = 0; d < 2; d++)
            if (!isnan(xy[2 * j + d])) {
                lo[d] = fmin(lo[d], xy[2 * j + d]);
                hi[d] = fmax(hi[d], xy[2 * j + d]);
                any[d] = true;
            }
    return any[0] && any[1] ? (hi[0] - lo[0]) * (hi[1] - lo[1]) : NAN;
}

/* compute_distance_match_score for one pair. */
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
    const double mean = sleapc__np_pairwise_sum(tmp, k) / k;
    return fmax(0.0, 1.0 - mean / DEGENERATE_PX);
}

sleapc_status sleapc__id_pose_similarity(const sleapc_ev_labels *gt, const int64_t *g, int64_t ng,
                                         const sleapc_ev_labels *pr, const int64_t *p, int64_t np,
                                         double stddev, double *sim)
{
    if (!ng || !np)
        return SLEAPC_OK;
    const int n = gt->insts[g[0]].n_nodes;
    for (int64_t i = 1; i < ng; i++)
        if (gt->insts[g[i]].n_nodes != n)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "eval-tracking: %s: the instances of one frame have different "
                                "skeletons (%d and %d nodes)",
                                gt->path, n, gt->insts[g[i]].n_nodes);
    for (int64_t j = 0; j < np; j++)
        if (pr->insts[p[j]].n_nodes != n)
            return sleapc__fail(
                SLEAPC_ERR_INVALID_ARG,
                "eval-tracking: cannot reshape array of size %d into shape (1,1,%d,2): "
                "%s has %d nodes per instance, the ground truth %s %d; OKS compares the "
                "skeletons node by node",
                2 * pr->insts[p[j]].n_nodes, n, pr->path, pr->insts[p[j]].n_nodes, gt->path, n);
    double *ks = sleapc__malloc(sizeof(double) * ((size_t)n + 1));
    if (!ks)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    const double spread = (2 * stddev) * (2 * stddev);
    for (int64_t i = 0; i < ng; i++) {
        const double *a = sleapc__ev_points(gt, g[i]);
        const double ar = area(a, n);
        const bool degenerate = ar < DEGENERATE_AREA;
        const double norm = spread * (2 * (ar + DBL_EPSILON));
        int n_vis = 0;
        for (int k = 0; k < n; k++)
            n_vis += !isnan(a[2 * k]) && !isnan(a[2 * k + 1]);
        for (int64_t j = 0; j < np; j++) {
            const double *b = sleapc__ev_points(pr, p[j]);
            if (degenerate) {
                sim[i * np + j] = distance_score(a, b, n, ks);
                continue;
            }
            for (int k = 0; k < n; k++) {
                ks[k] = 0.0;
                if (isnan(a[2 * k]) || isnan(a[2 * k + 1]) || isnan(b[2 * k]) ||
                    isnan(b[2 * k + 1]))
                    continue;
                const double dx = a[2 * k] - b[2 * k], dy = a[2 * k + 1] - b[2 * k + 1];
                ks[k] = exp(-((dx * dx + dy * dy) / norm));
            }
            sim[i * np + j] = sleapc__np_pairwise_sum(ks, n) / (double)n_vis;
        }
    }
    sleapc__free(ks);
    return SLEAPC_OK;
}
