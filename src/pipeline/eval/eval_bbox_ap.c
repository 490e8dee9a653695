/* The pieces of sleap-nn's box AP (see eval_bbox.h): IoU, greedy matching,
 * the stable score sort and the 101-point interpolated AP. */
#include <math.h>
#include <string.h>

#include "pipeline/eval/eval_bbox.h"

void sleapc__ev_bbox_iou(const double *a, int64_t n, const double *b, int64_t m, double *out)
{
    for (int64_t i = 0; i < n; i++) {
        const double *p = a + 4 * i;
        const double area_a = (p[2] - p[0]) * (p[3] - p[1]);
        for (int64_t j = 0; j < m; j++) {
            const double *q = b + 4 * j;
            const double x1 = fmax(p[0], q[0]), y1 = fmax(p[1], q[1]);
            const double x2 = fmin(p[2], q[2]), y2 = fmin(p[3], q[3]);
            const double w = x2 - x1 > 0 ? x2 - x1 : 0, h = y2 - y1 > 0 ? y2 - y1 : 0;
            const double inter = w * h;
            const double area_b = (q[2] - q[0]) * (q[3] - q[1]);
            const double uni = area_a + area_b - inter;
            out[i * m + j] = uni > 0 ? inter / fmax(uni, 1e-12) : 0.0;
        }
    }
}

void sleapc__ev_bbox_greedy(const double *iou, int64_t n_det, int64_t n_gt, double thr,
                            int64_t *gt_idx, double *m_iou, uint8_t *taken)
{
    memset(taken, 0, (size_t)n_gt);
    for (int64_t d = 0; d < n_det; d++) {
        int64_t best = -1;
        for (int64_t g = 0; g < n_gt; g++)
            if (!taken[g] && iou[d * n_gt + g] >= thr &&
                (best < 0 || iou[d * n_gt + g] > iou[d * n_gt + best]))
                best = g; /* argmax: the first of equal IoUs */
        gt_idx[d] = best;
        m_iou[d] = best >= 0 ? iou[d * n_gt + best] : 0.0;
        if (best >= 0)
            taken[best] = 1;
    }
}

static void msort(const double *key, int64_t *idx, int64_t *tmp, int64_t n)
{
    if (n < 2)
        return;
    const int64_t h = n / 2;
    msort(key, idx, tmp, h);
    msort(key, idx + h, tmp, n - h);
    int64_t i = 0, j = h, k = 0;
    /* the right run goes first only when strictly higher: stable */
    while (i < h && j < n)
        tmp[k++] = key[idx[j]] > key[idx[i]] ? idx[j++] : idx[i++];
    while (i < h)
        tmp[k++] = idx[i++];
    while (j < n)
        tmp[k++] = idx[j++];
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
}

void sleapc__ev_bbox_argsort_desc(const double *key, int64_t n, int64_t *idx, int64_t *tmp)
{
    for (int64_t i = 0; i < n; i++)
        idx[i] = i;
    msort(key, idx, tmp, n);
}

double sleapc__ev_bbox_ap(const double *scores, const uint8_t *is_tp, int64_t n, int64_t npig,
                          double *max_recall, int64_t *order, double *work)
{
    if (npig <= 0) {
        *max_recall = NAN;
        return NAN;
    }
    if (n == 0) {
        *max_recall = 0.0;
        return 0.0;
    }
    sleapc__ev_bbox_argsort_desc(scores, n, order, order + n);
    double *rc = work, *pr = work + n;
    int64_t tp = 0, fp = 0;
    for (int64_t i = 0; i < n; i++) {
        if (is_tp[order[i]])
            tp++;
        else
            fp++;
        rc[i] = (double)tp / (double)npig;
        pr[i] = (double)tp / (double)(tp + fp); /* tp + fp >= 1 > np.spacing(1) */
    }
    *max_recall = rc[n - 1];
    for (int64_t i = n - 1; i > 0; i--)
        if (pr[i] > pr[i - 1])
            pr[i - 1] = pr[i];
    /* np.linspace(0, 1, 101): i * 0.01, the last exactly 1; searchsorted left */
    double sum = 0;
    int64_t ind = 0;
    for (int k = 0; k <= 100; k++) {
        const double g = k == 100 ? 1.0 : (double)k * (1.0 / 100.0);
        while (ind < n && rc[ind] < g)
            ind++;
        sum += ind < n ? pr[ind] : 0.0;
    }
    return sum / 101.0;
}
