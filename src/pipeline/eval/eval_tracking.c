/* CLEAR-MOT and IDF1 (see eval_tracking.h). */
#include "pipeline/eval/eval_tracking.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/hungarian.h"
#include "pipeline/eval/eval_numpy.h"
#include "pipeline/eval/evaluation.h"

#define MAX_INST 256

sleapc_et_opts sleapc__et_opts_default(void)
{
    return (sleapc_et_opts){.oks = false, .threshold = NAN, .oks_stddev = 0.025};
}

void sleapc__et_result_free(sleapc_et_result *r)
{
    if (!r)
        return;
    sleapc__ev_labels_free(r->gt);
    sleapc__ev_labels_free(r->pr);
    sleapc__free(r->frame_idx);
    sleapc__free(r->assigned);
    sleapc__free(r->switches);
    sleapc__free(r->id_map);
    sleapc__pyobj_free(r->metrics);
    sleapc__free(r);
}

typedef struct shared_nodes {
    int n;
    int gt[64], pr[64];
} shared_nodes;

/* Mean distance over the shared nodes visible in both; inf when none. */
static double mean_distance(const double *g, const double *p, const shared_nodes *s)
{
    double sum = 0;
    int k = 0;
    for (int j = 0; j < s->n; j++) {
        const double *a = g + 2 * s->gt[j], *b = p + 2 * s->pr[j];
        if (isnan(a[0]) || isnan(a[1]) || isnan(b[0]) || isnan(b[1]))
            continue;
        const double dx = a[0] - b[0], dy = a[1] - b[1];
        sum += sqrt(dx * dx + dy * dy);
        k++;
    }
    return k ? sum / k : INFINITY;
}

/* sleap-nn compute_oks over the shared nodes (GT bounding-box area). */
static double shared_oks(const double *g, const double *p, const shared_nodes *s, double stddev)
{
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY}, ks[64];
    int n_vis = 0;
    for (int j = 0; j < s->n; j++) {
        const double *a = g + 2 * s->gt[j];
        for (int c = 0; c < 2 && !isnan(a[0]) && !isnan(a[1]); c++) {
            lo[c] = fmin(lo[c], a[c]);
            hi[c] = fmax(hi[c], a[c]);
        }
    }
    const double area = (hi[0] - lo[0]) * (hi[1] - lo[1]);
    const double norm = (2 * stddev) * (2 * stddev) * (2 * (area + DBL_EPSILON));
    for (int j = 0; j < s->n; j++) {
        const double *a = g + 2 * s->gt[j], *b = p + 2 * s->pr[j];
        ks[j] = 0;
        if (isnan(a[0]) || isnan(a[1]))
            continue;
        n_vis++;
        if (isnan(b[0]) || isnan(b[1]))
            continue;
        const double dx = a[0] - b[0], dy = a[1] - b[1];
        ks[j] = exp(-((dx * dx + dy * dy) / norm));
    }
    return n_vis ? sleapc__ev_np_sum(ks, s->n) / n_vis : 0.0;
}

static sleapc_status put_num(sleapc_pyobj *d, const char *k, double v)
{
    return sleapc__pyobj_set(d, k, sleapc__pyobj_float(v));
}

static sleapc_status put_int(sleapc_pyobj *d, const char *k, int64_t v)
{
    return sleapc__pyobj_set(d, k, sleapc__pyobj_int(v));
}

typedef struct counts {
    int64_t n_gt, n_pr, n_match, n_switch, n_frag, idtp, mt, pt, ml, n_pr_tracks;
    double match_sum;
} counts;

static sleapc_status make_metrics(sleapc_et_result *r, const counts *c)
{
    sleapc_pyobj *d = sleapc__pyobj_dict();
    if (!d)
        return SLEAPC_ERR_NOMEM;
    const double n_gt = (double)c->n_gt, n_pr = (double)c->n_pr, idtp = (double)c->idtp;
    const int64_t fn = c->n_gt - c->n_match, fp = c->n_pr - c->n_match;
    sleapc_status st =
        sleapc__pyobj_set(d, "match", sleapc__pyobj_str(r->oks ? "oks" : "distance"));
    if (!st)
        st = put_num(d, "match_threshold", r->threshold);
    if (!st)
        st = put_int(d, "n_frames", r->n_frames);
    if (!st)
        st = put_int(d, "n_gt_tracks", r->gt->n_tracks);
    if (!st)
        st = put_int(d, "n_pred_tracks", c->n_pr_tracks);
    if (!st)
        st = put_int(d, "n_gt", c->n_gt);
    if (!st)
        st = put_int(d, "n_pred", c->n_pr);
    if (!st)
        st = put_int(d, "n_matches", c->n_match);
    if (!st)
        st = put_int(d, "n_misses", fn);
    if (!st)
        st = put_int(d, "n_false_positives", fp);
    if (!st)
        st = put_int(d, "id_switches", c->n_switch);
    if (!st)
        st = put_int(d, "fragmentations", c->n_frag);
    if (!st)
        st = put_num(d, "mota", c->n_gt ? 1.0 - (double)(fn + fp + c->n_switch) / n_gt : NAN);
    if (!st)
        st = put_num(d, "motp", c->n_match ? c->match_sum / (double)c->n_match : NAN);
    if (!st)
        st = put_int(d, "idtp", c->idtp);
    if (!st)
        st = put_int(d, "idfp", c->n_pr - c->idtp);
    if (!st)
        st = put_int(d, "idfn", c->n_gt - c->idtp);
    if (!st)
        st = put_num(d, "idf1", n_gt + n_pr > 0 ? 2 * idtp / (n_gt + n_pr) : NAN);
    if (!st)
        st = put_num(d, "idp", n_pr > 0 ? idtp / n_pr : NAN);
    if (!st)
        st = put_num(d, "idr", n_gt > 0 ? idtp / n_gt : NAN);
    if (!st)
        st = put_int(d, "mostly_tracked", c->mt);
    if (!st)
        st = put_int(d, "partly_tracked", c->pt);
    if (!st)
        st = put_int(d, "mostly_lost", c->ml);
    if (st) {
        sleapc__pyobj_free(d);
        return st;
    }
    r->metrics = d;
    return SLEAPC_OK;
}

/* The scored frames: GT frames of matched videos with tracked user
 * instances, each with its prediction frame (-1: none). */
static sleapc_status pair_frames(sleapc_et_result *r, int64_t **pr_frame)
{
    sleapc_ev_result tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.gt = r->gt;
    tmp.pr = r->pr;
    sleapc_status st = sleapc__ev_match_videos(&tmp);
    const sleapc_ev_labels *gt = r->gt, *pr = r->pr;
    r->frame_idx = sleapc__malloc(sizeof(int64_t) * (size_t)(gt->n_frames + 1));
    *pr_frame = sleapc__malloc(sizeof(int64_t) * 2 * (size_t)(gt->n_frames + 1));
    if (!st && (!r->frame_idx || !*pr_frame))
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    int64_t q = 0;
    for (int64_t f = 0; !st && f < gt->n_frames; f++) {
        const sleapc_ev_frame *gf = &gt->frames[f];
        bool tracked = false;
        for (int64_t i = gf->first; i < gf->first + gf->n; i++)
            tracked |= !gt->insts[i].predicted && gt->insts[i].track >= 0;
        int vp = -1;
        for (int v = 0; v < pr->n_videos && vp < 0; v++)
            if (tmp.video_map[v] == gf->video)
                vp = v;
        if (!tracked || vp < 0)
            continue;
        int64_t found = -1;
        /* frames are usually in the same order: look near the last one */
        for (int64_t k = 0; k < pr->n_frames && found < 0; k++) {
            const int64_t p = (q + k) % pr->n_frames;
            if (pr->frames[p].video == vp && pr->frames[p].frame_idx == gf->frame_idx)
                found = p;
        }
        if (found >= 0)
            q = found;
        r->frame_idx[r->n_frames] = f; /* GT frame index for now */
        (*pr_frame)[r->n_frames++] = found;
    }
    sleapc__free(tmp.video_map);
    sleapc__free(tmp.video_rule);
    return st;
}

static sleapc_status score(sleapc_et_result *r, const int64_t *pr_frame, const shared_nodes *s,
                           double stddev)
{
    const sleapc_ev_labels *gt = r->gt, *pr = r->pr;
    const int T = gt->n_tracks, P = pr->n_tracks;
    counts c = {0};
    int64_t *cooc = sleapc__calloc((size_t)T * (size_t)P + 1, sizeof *cooc);
    int64_t *present = sleapc__calloc((size_t)T + 1, sizeof *present);
    int64_t *matched = sleapc__calloc((size_t)T + 1, sizeof *matched);
    int *last = sleapc__malloc(sizeof(int) * (size_t)(T + 1));
    double *cost = sleapc__malloc(sizeof(double) * MAX_INST * MAX_INST);
    double *tcost = sleapc__malloc(sizeof(double) * ((size_t)T * (size_t)P + 1));
    int64_t rows[MAX_INST], cols[MAX_INST], n_pairs = 0;
    int64_t gi[MAX_INST], pi[MAX_INST];
    bool *used = sleapc__calloc((size_t)P + 1, 1);
    r->assigned = sleapc__malloc(sizeof(int) * (size_t)(r->n_frames * T + 1));
    r->switches = sleapc__malloc(sizeof *r->switches * (size_t)(gt->n_insts + 1));
    r->id_map = sleapc__malloc(sizeof(int) * (size_t)(T + 1));
    sleapc_hungarian_ws ws = {0};
    sleapc_status st = SLEAPC_OK;
    if (!cooc || !present || !matched || !last || !cost || !tcost || !used || !r->assigned ||
        !r->switches || !r->id_map) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
        goto done;
    }
    for (int t = 0; t < T; t++)
        last[t] = -1;
    for (int64_t k = 0; k < r->n_frames && !st; k++) {
        const sleapc_ev_frame *gf = &gt->frames[r->frame_idx[k]];
        int ng = 0, np = 0;
        for (int64_t i = gf->first; i < gf->first + gf->n && ng < MAX_INST; i++)
            if (!gt->insts[i].predicted && gt->insts[i].track >= 0)
                gi[ng++] = i;
        if (pr_frame[k] >= 0) {
            const sleapc_ev_frame *pf = &pr->frames[pr_frame[k]];
            for (int64_t i = pf->first; i < pf->first + pf->n && np < MAX_INST; i++)
                if (pr->insts[i].predicted && pr->insts[i].track >= 0)
                    pi[np++] = i;
        }
        int *row = r->assigned + k * T;
        for (int t = 0; t < T; t++)
            row[t] = -2;
        for (int a = 0; a < ng; a++) {
            row[gt->insts[gi[a]].track] = -1;
            present[gt->insts[gi[a]].track]++;
        }
        c.n_gt += ng;
        c.n_pr += np;
        for (int b = 0; b < np; b++)
            used[pr->insts[pi[b]].track] = true;
        for (int a = 0; a < ng; a++)
            for (int b = 0; b < np; b++) {
                const double *g = sleapc__ev_points(gt, gi[a]), *p = sleapc__ev_points(pr, pi[b]);
                double v;
                bool ok;
                if (r->oks) {
                    v = shared_oks(g, p, s, stddev);
                    ok = v >= r->threshold;
                    v = 1.0 - v;
                } else {
                    v = mean_distance(g, p, s);
                    ok = v <= r->threshold;
                }
                cost[a * np + b] = ok ? v : INFINITY;
                if (ok)
                    cooc[gt->insts[gi[a]].track * P + pr->insts[pi[b]].track]++;
            }
        n_pairs = 0;
        if (ng && np &&
            (st = sleapc__hungarian_solve_partial_ws(cost, ng, np, &ws, rows, cols, &n_pairs)))
            goto done;
        for (int64_t m = 0; m < n_pairs; m++) {
            const int t = gt->insts[gi[rows[m]]].track, p = pr->insts[pi[cols[m]]].track;
            row[t] = p;
            matched[t]++;
            c.n_match++;
            c.match_sum +=
                r->oks ? 1.0 - cost[rows[m] * np + cols[m]] : cost[rows[m] * np + cols[m]];
            if (last[t] >= 0 && last[t] != p)
                r->switches[r->n_switches++] = (sleapc_et_switch){gf->frame_idx, t, last[t], p};
            last[t] = p;
        }
    }
    c.n_switch = r->n_switches;
    for (int p = 0; p < P; p++)
        c.n_pr_tracks += used[p];
    /* fragmentations: within each GT track's span from its first to its last
     * match, the times it goes from matched to unmatched */
    for (int t = 0; t < T; t++) {
        int64_t first = -1, lastm = -1;
        for (int64_t k = 0; k < r->n_frames; k++)
            if (r->assigned[k * T + t] >= 0) {
                first = first < 0 ? k : first;
                lastm = k;
            }
        int prev = -2;
        for (int64_t k = first; first >= 0 && k <= lastm; k++) {
            const int a = r->assigned[k * T + t];
            if (a == -2)
                continue;
            c.n_frag += prev >= 0 && a == -1;
            prev = a;
        }
        if (present[t] > 0) {
            const double ratio = (double)matched[t] / (double)present[t];
            c.mt += ratio >= 0.8;
            c.ml += ratio <= 0.2;
            c.pt += ratio > 0.2 && ratio < 0.8;
        }
    }
    /* Ristani: predicted-to-GT tracks one to one, maximising IDTP */
    for (int t = 0; t < T; t++)
        r->id_map[t] = -1;
    if (T && P) {
        for (int64_t i = 0; i < (int64_t)T * P; i++)
            tcost[i] = -(double)cooc[i];
        int64_t *tr = sleapc__malloc(sizeof(int64_t) * (size_t)(T + P));
        if (!tr) {
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
            goto done;
        }
        if (!(st = sleapc__hungarian_solve_ws(tcost, T, P, &ws, tr, tr + T)))
            for (int m = 0; m < (T < P ? T : P); m++) {
                c.idtp += cooc[tr[m] * P + tr[T + m]];
                if (cooc[tr[m] * P + tr[T + m]] > 0)
                    r->id_map[tr[m]] = (int)tr[T + m];
            }
        sleapc__free(tr);
    }
    if (!st)
        st = make_metrics(r, &c);
done:
    sleapc__hungarian_ws_free(&ws);
    sleapc__free(cooc);
    sleapc__free(present);
    sleapc__free(matched);
    sleapc__free(last);
    sleapc__free(cost);
    sleapc__free(tcost);
    sleapc__free(used);
    return st;
}

sleapc_status sleapc__et_run(const char *gt_path, const char *pr_path, const sleapc_et_opts *o,
                             sleapc_et_result **out)
{
    *out = NULL;
    sleapc_ev_labels *gt = NULL, *pr = NULL;
    sleapc_status st = sleapc__ev_labels_load(gt_path, &gt);
    if (st)
        return sleapc__wrap(st, "eval-tracking: ground truth");
    if ((st = sleapc__ev_labels_load(pr_path, &pr))) {
        sleapc__ev_labels_free(gt);
        return sleapc__wrap(st, "eval-tracking: predictions");
    }
    return sleapc__et_run_labels(gt, pr, o, out);
}

sleapc_status sleapc__et_run_labels(sleapc_ev_labels *gt, sleapc_ev_labels *pr,
                                    const sleapc_et_opts *o, sleapc_et_result **out)
{
    *out = NULL;
    sleapc_et_result *r = sleapc__calloc(1, sizeof *r);
    if (!r) {
        sleapc__ev_labels_free(gt);
        sleapc__ev_labels_free(pr);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "eval-tracking: out of memory");
    }
    r->gt = gt;
    r->pr = pr;
    r->oks = o->oks;
    r->threshold = !isnan(o->threshold) ? o->threshold : o->oks ? 0.5 : 50.0;
    int64_t *pr_frame = NULL;
    shared_nodes s = {0};
    sleapc_status st = SLEAPC_OK;
    if (r->gt->n_tracks == 0 || r->pr->n_tracks == 0) {
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG, "eval-tracking: %s has no tracks",
                          r->gt->n_tracks == 0 ? r->gt->path : r->pr->path);
        goto fail;
    }
    int64_t n_tracked = 0;
    for (int64_t i = 0; i < r->gt->n_insts; i++)
        n_tracked += !r->gt->insts[i].predicted && r->gt->insts[i].track >= 0;
    if (n_tracked == 0) {
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "eval-tracking: %s holds no user-labeled instance with a track",
                          r->gt->path);
        goto fail;
    }
    for (int k = 0; k < r->gt->n_nodes && s.n < 64; k++)
        for (int j = 0; j < r->pr->n_nodes; j++)
            if (!strcmp(r->gt->node_names[k], r->pr->node_names[j])) {
                s.gt[s.n] = k;
                s.pr[s.n++] = j;
                break;
            }
    if (s.n == 0) {
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "eval-tracking: the skeletons of %s and %s share no node name",
                          r->gt->path, r->pr->path);
        goto fail;
    }
    if ((st = pair_frames(r, &pr_frame)))
        goto fail;
    int64_t n_with_pred = 0;
    for (int64_t k = 0; k < r->n_frames; k++)
        n_with_pred += pr_frame[k] >= 0;
    if (n_with_pred == 0) {
        st = sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                          "eval-tracking: no tracked labeled frame of %s is a frame of %s (videos "
                          "or frame numbers differ)",
                          r->gt->path, r->pr->path);
        goto fail;
    }
    if ((st = score(r, pr_frame, &s, o->oks_stddev)))
        goto fail;
    for (int64_t k = 0; k < r->n_frames; k++) /* GT frame index -> frame number */
        r->frame_idx[k] = r->gt->frames[r->frame_idx[k]].frame_idx;
    sleapc__free(pr_frame);
    *out = r;
    return SLEAPC_OK;
fail:
    sleapc__free(pr_frame);
    sleapc__et_result_free(r);
    return st;
}
