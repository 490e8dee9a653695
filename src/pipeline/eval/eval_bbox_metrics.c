/* sleap-nn compute_bbox_metrics (see eval_bbox.h): per class and IoU
 * threshold, each frame's top-100 finite detections greedily matched in
 * score order; AP / AR per (class, threshold); the IoU-0.5 operating point
 * over all classes. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/eval/eval_bbox.h"

#define N_THR 10
#define MAX_DET 100

/* BBOX_IOU_THRESHOLDS: np.round(np.arange(0.5, 0.96, 0.05), 2). */
static double threshold(int t)
{
    return (double)(50 + 5 * t) / 100.0;
}

/* A frame's kept detections: finite, in stable descending score order,
 * the first MAX_DET. Returns how many; idx gets them, tmp scratch. */
static int64_t kept(const sleapc_ev_bbox_frame *f, int64_t *idx, int64_t *tmp, double *key)
{
    int64_t n = 0;
    for (int64_t i = 0; i < f->n_pred; i++) {
        const double *b = f->pred + 4 * i;
        if (isfinite(f->score[i]) && isfinite(b[0]) && isfinite(b[1]) && isfinite(b[2]) &&
            isfinite(b[3])) {
            tmp[n] = i;
            key[n++] = f->score[i];
        }
    }
    int64_t *pos = tmp + f->n_pred;
    sleapc__ev_bbox_argsort_desc(key, n, idx, pos);
    for (int64_t k = 0; k < n; k++)
        idx[k] = tmp[idx[k]];
    return n < MAX_DET ? n : MAX_DET;
}

typedef struct acc {
    int n_classes;
    int64_t total;      /* kept detections */
    int64_t *off, *len; /* [n_classes]: each class's run of detections */
    int64_t *n_gt;      /* [n_classes] */
    double *score;      /* [total] */
    uint8_t *tp;        /* [N_THR * total] */
    double *iou;        /* [N_THR * total] */
} acc;

static void acc_free(acc *a)
{
    sleapc__free(a->off);
    sleapc__free(a->len);
    sleapc__free(a->n_gt);
    sleapc__free(a->score);
    sleapc__free(a->tp);
    sleapc__free(a->iou);
}

/* Pass 1: counts; pass 2 (fill): the detections' scores and matches. */
static sleapc_status pass(const sleapc_ev_bbox_frame *frames, int64_t n_frames, acc *a, bool fill,
                          int64_t max_pred, int64_t max_gt)
{
    const size_t np1 = (size_t)max_pred + 1, ng1 = (size_t)max_gt + 1;
    int64_t *idx = sleapc__malloc(np1 * sizeof *idx), *tmp = sleapc__malloc(2 * np1 * sizeof *tmp);
    double *key = sleapc__malloc(np1 * sizeof *key);
    double *pb = sleapc__malloc(4 * np1 * sizeof *pb), *gb = sleapc__malloc(4 * ng1 * sizeof *gb);
    double *ps = sleapc__malloc(np1 * sizeof *ps), *iou = sleapc__malloc(np1 * ng1 * sizeof *iou);
    double *m_iou = sleapc__malloc(np1 * sizeof *m_iou);
    int64_t *gt_idx = sleapc__malloc(np1 * sizeof *gt_idx);
    uint8_t *taken = sleapc__malloc(ng1);
    int64_t *at = sleapc__calloc((size_t)a->n_classes + 1, sizeof *at);
    sleapc_status st = SLEAPC_OK;
    if (!idx || !tmp || !key || !pb || !gb || !ps || !iou || !m_iou || !gt_idx || !taken || !at)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    for (int64_t fi = 0; !st && fi < n_frames; fi++) {
        const sleapc_ev_bbox_frame *f = &frames[fi];
        const int64_t nk = kept(f, idx, tmp, key);
        for (int c = 0; c < a->n_classes; c++) {
            int64_t ng = 0, np = 0;
            for (int64_t g = 0; g < f->n_gt; g++)
                if (f->gt_cls[g] == c)
                    memcpy(gb + 4 * ng++, f->gt + 4 * g, 4 * sizeof *gb);
            for (int64_t k = 0; k < nk; k++)
                if (f->pred_cls[idx[k]] == c) {
                    memcpy(pb + 4 * np, f->pred + 4 * idx[k], 4 * sizeof *pb);
                    ps[np++] = f->score[idx[k]];
                }
            if (!fill) {
                a->n_gt[c] += ng;
                a->len[c] += np;
                continue;
            }
            sleapc__ev_bbox_iou(pb, np, gb, ng, iou);
            const int64_t base = a->off[c] + at[c];
            memcpy(a->score + base, ps, (size_t)np * sizeof *ps);
            for (int t = 0; t < N_THR; t++) {
                sleapc__ev_bbox_greedy(iou, np, ng, threshold(t), gt_idx, m_iou, taken);
                for (int64_t d = 0; d < np; d++) {
                    a->tp[t * a->total + base + d] = gt_idx[d] >= 0;
                    a->iou[t * a->total + base + d] = m_iou[d];
                }
            }
            at[c] += np;
        }
    }
    void *all[] = {idx, tmp, key, pb, gb, ps, iou, m_iou, gt_idx, taken, at};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        sleapc__free(all[i]);
    return st;
}

/* np.nanmean, NaN when nothing is finite (sleap-nn's _nanmean). */
static double nanmean(const double *x, int64_t n, int64_t stride)
{
    double s = 0;
    int64_t k = 0;
    bool finite = false;
    for (int64_t i = 0; i < n; i++) {
        const double v = x[i * stride];
        finite = finite || isfinite(v);
        if (!isnan(v)) {
            s += v;
            k++;
        }
    }
    return finite ? s / (double)k : NAN;
}

/* The AP and AR tables: ap, ar [n_classes * N_THR]. */
static sleapc_status ap_tables(const acc *a, double *ap, double *ar)
{
    int64_t *order = sleapc__malloc((2 * (size_t)a->total + 1) * sizeof *order);
    double *work = sleapc__malloc((2 * (size_t)a->total + 1) * sizeof *work);
    sleapc_status st =
        order && work ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    for (int c = 0; !st && c < a->n_classes; c++)
        for (int t = 0; t < N_THR; t++)
            ap[c * N_THR + t] =
                sleapc__ev_bbox_ap(a->score + a->off[c], a->tp + t * a->total + a->off[c],
                                   a->len[c], a->n_gt[c], &ar[c * N_THR + t], order, work);
    sleapc__free(order);
    sleapc__free(work);
    return st;
}

static sleapc_status put_f(sleapc_pyobj *d, const char *k, double v)
{
    return sleapc__pyobj_set(d, k, sleapc__pyobj_float(v));
}

static sleapc_status put_i(sleapc_pyobj *d, const char *k, int64_t v)
{
    return sleapc__pyobj_set(d, k, sleapc__pyobj_int(v));
}

/* The IoU-0.5 operating point into d, and pr_curve (t50 = 0): the detections of all
 * classes in class order, stably sorted by score. */
static sleapc_status operating_point(const acc *a, int64_t n_gt, sleapc_pyobj *d,
                                     sleapc_pyobj **curve_out)
{
    const int64_t n = a->total;
    int64_t *order = sleapc__malloc((2 * (size_t)n + 1) * sizeof *order);
    double *s = sleapc__malloc(((size_t)n + 1) * sizeof *s);
    double *p = sleapc__malloc(((size_t)n + 1) * sizeof *p);
    double *r = sleapc__malloc(((size_t)n + 1) * sizeof *r);
    sleapc_status st =
        order && s && p && r ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    if (!st)
        sleapc__ev_bbox_argsort_desc(a->score, n, order, order + n);
    int64_t best = -1, ctp = 0, cfp = 0, best_tp = 0, best_fp = 0;
    double best_f1 = 0, iou_sum = 0, best_iou_sum = 0;
    for (int64_t k = 0; !st && k < n; k++) {
        const int64_t i = order[k];
        s[k] = a->score[i];
        if (a->tp[i]) {
            ctp++;
            iou_sum += a->iou[i];
        } else {
            cfp++;
        }
        p[k] = (double)ctp / (double)(ctp + cfp > 1 ? ctp + cfp : 1);
        r[k] = (double)ctp / (double)(n_gt > 1 ? n_gt : 1);
        const double f1 = 2 * p[k] * r[k] / fmax(p[k] + r[k], 1e-12);
        if (best < 0 || f1 > best_f1) { /* np.argmax: the first maximum */
            best = k;
            best_f1 = f1;
            best_tp = ctp;
            best_fp = cfp;
            best_iou_sum = iou_sum;
        }
    }
    if (!st && best >= 0) {
        st = put_f(d, "bbox_precision", p[best]);
        if (!st)
            st = put_f(d, "bbox_recall", n_gt ? r[best] : NAN);
        if (!st)
            st = put_f(d, "bbox_f1", best_f1);
        if (!st)
            st = put_f(d, "bbox_f1_threshold", s[best]);
        if (!st)
            st = put_f(d, "bbox_mean_iou", best_tp ? best_iou_sum / (double)best_tp : 0.0);
    } else if (!st) {
        st = put_f(d, "bbox_precision", NAN);
        if (!st)
            st = put_f(d, "bbox_recall", n_gt ? 0.0 : NAN);
        if (!st)
            st = put_f(d, "bbox_f1", 0.0);
        if (!st)
            st = put_f(d, "bbox_f1_threshold", NAN);
        if (!st)
            st = put_f(d, "bbox_mean_iou", NAN);
    }
    if (!st)
        st = put_i(d, "bbox_n_tp", best_tp);
    if (!st)
        st = put_i(d, "bbox_n_fp", best_fp);
    if (!st)
        st = put_i(d, "bbox_n_fn", n_gt - best_tp);
    sleapc_pyobj *curve = st ? NULL : sleapc__pyobj_dict();
    if (!st && !curve)
        st = SLEAPC_ERR_NOMEM;
    const int64_t shape[1] = {n};
    if (!st)
        st = sleapc__pyobj_set(curve, "scores", sleapc__pyobj_array_f64(s, 1, shape));
    if (!st)
        st = sleapc__pyobj_set(curve, "precision", sleapc__pyobj_array_f64(p, 1, shape));
    if (!st)
        st = sleapc__pyobj_set(curve, "recall", sleapc__pyobj_array_f64(r, 1, shape));
    if (!st)
        *curve_out = curve;
    else
        sleapc__pyobj_free(curve);
    sleapc__free(order);
    sleapc__free(s);
    sleapc__free(p);
    sleapc__free(r);
    return st;
}

sleapc_status sleapc__ev_bbox_metrics(const sleapc_ev_bbox_frame *frames, int64_t n_frames,
                                      int n_classes, const char *const *categories,
                                      sleapc_pyobj **out)
{
    *out = NULL;
    acc a = {.n_classes = n_classes};
    int64_t max_pred = 0, max_gt = 0;
    for (int64_t i = 0; i < n_frames; i++) {
        max_pred = frames[i].n_pred > max_pred ? frames[i].n_pred : max_pred;
        max_gt = frames[i].n_gt > max_gt ? frames[i].n_gt : max_gt;
    }
    a.off = sleapc__calloc((size_t)n_classes + 1, sizeof *a.off);
    a.len = sleapc__calloc((size_t)n_classes + 1, sizeof *a.len);
    a.n_gt = sleapc__calloc((size_t)n_classes + 1, sizeof *a.n_gt);
    double *ap = sleapc__malloc(((size_t)n_classes * N_THR + 1) * sizeof *ap);
    double *ar = sleapc__malloc(((size_t)n_classes * N_THR + 1) * sizeof *ar);
    sleapc_pyobj *d = NULL, *curve = NULL;
    sleapc_status st = a.off && a.len && a.n_gt && ap && ar
                           ? pass(frames, n_frames, &a, false, max_pred, max_gt)
                           : sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    int64_t n_gt = 0;
    for (int c = 0; !st && c < n_classes; c++) {
        a.off[c] = a.total;
        a.total += a.len[c];
        n_gt += a.n_gt[c];
    }
    if (!st) {
        a.score = sleapc__malloc(((size_t)a.total + 1) * sizeof *a.score);
        a.tp = sleapc__malloc((size_t)N_THR * (size_t)a.total + 1);
        a.iou = sleapc__malloc(((size_t)N_THR * (size_t)a.total + 1) * sizeof *a.iou);
        if (!a.score || !a.tp || !a.iou)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
    }
    if (!st)
        st = pass(frames, n_frames, &a, true, max_pred, max_gt);
    if (!st)
        st = ap_tables(&a, ap, ar);
    if (!st && !(d = sleapc__pyobj_dict()))
        st = SLEAPC_ERR_NOMEM;
    const int64_t nca = (int64_t)n_classes * N_THR;
    /* t50 = 0 and t75 = 5: the thresholds nearest 0.5 and 0.75 */
    if (!st)
        st = put_f(d, "bbox_mAP", nanmean(ap, nca, 1));
    if (!st)
        st = put_f(d, "bbox_AP50", nanmean(ap, n_classes, N_THR));
    if (!st)
        st = put_f(d, "bbox_AP75", nanmean(ap + 5, n_classes, N_THR));
    if (!st)
        st = put_f(d, "bbox_AR", nanmean(ar, nca, 1));
    if (!st)
        st = operating_point(&a, n_gt, d, &curve);
    if (!st)
        st = put_i(d, "n_frames", n_frames);
    if (!st)
        st = put_i(d, "n_gt", n_gt);
    if (!st)
        st = put_i(d, "n_pred", a.total);
    double thr[N_THR];
    for (int t = 0; t < N_THR; t++)
        thr[t] = threshold(t);
    const int64_t s1[1] = {N_THR}, s2[2] = {n_classes, N_THR};
    if (!st)
        st = sleapc__pyobj_set(d, "iou_thresholds", sleapc__pyobj_array_f64(thr, 1, s1));
    if (!st)
        st = sleapc__pyobj_set(d, "ap_per_class", sleapc__pyobj_array_f64(ap, 2, s2));
    if (!st)
        st = sleapc__pyobj_set(d, "ar_per_class", sleapc__pyobj_array_f64(ar, 2, s2));
    if (!st) {
        st = sleapc__pyobj_set(d, "pr_curve", curve);
        curve = NULL;
    }
    if (!st)
        st = sleapc__pyobj_set(d, "categories", sleapc__pyobj_list_str(categories, n_classes));
    sleapc__pyobj_free(curve);
    acc_free(&a);
    sleapc__free(ap);
    sleapc__free(ar);
    if (st) {
        sleapc__pyobj_free(d);
        return st == SLEAPC_ERR_NOMEM ? sleapc__fail(st, "eval: out of memory") : st;
    }
    *out = d;
    return SLEAPC_OK;
}
