/* sleap-nn Evaluator.voc_metrics: VOC-style precision/recall over matched
 * pairs ranked by prediction score, at the OKS (or PCK) thresholds
 * 0.50:0.05:0.95 and 101 recall points. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/eval/eval_numpy.h"
#include "pipeline/eval/evaluation.h"

#define N_THR 10
#define N_REC 101

static sleapc_status set(sleapc_pyobj *d, const char *name, const char *key, sleapc_pyobj *v)
{
    char k[64];
    snprintf(k, sizeof k, "%s.%s", name, key);
    return sleapc__pyobj_set(d, k, v);
}

sleapc_status sleapc__ev_voc_metrics(const sleapc_ev_result *r, bool by_pck,
                                     const double *pck_scores, sleapc_pyobj *dst)
{
    const char *name = by_pck ? "pck_voc" : "oks_voc";
    const int64_t n = r->n_pairs;
    sleapc_status st = SLEAPC_OK;
    if (n == 0) {
        /* tp.size == 0: every value is the int 0 */
        static const char *const keys[] = {"match_score_thresholds",
                                           "recall_thresholds",
                                           "match_scores",
                                           "precisions",
                                           "recalls",
                                           "AP",
                                           "AR",
                                           "mAP",
                                           "mAR"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0] && !st; k++)
            st = set(dst, name, keys[k], sleapc__pyobj_int(0));
        return st;
    }
    double *det = sleapc__malloc(sizeof(double) * (size_t)n);
    double *ms = sleapc__malloc(sizeof(double) * (size_t)n);
    int64_t *order = sleapc__malloc(sizeof(int64_t) * (size_t)n);
    double *rc = sleapc__malloc(sizeof(double) * (size_t)n);
    double *pr = sleapc__malloc(sizeof(double) * (size_t)n);
    double *prec = sleapc__malloc(sizeof(double) * N_THR * N_REC);
    if (!det || !ms || !order || !rc || !pr || !prec) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
        goto done;
    }
    for (int64_t p = 0; p < n; p++)
        det[p] = r->pr->insts[r->pairs[p].pr].score;
    sleapc__ev_np_argsort_desc(det, n, order);
    for (int64_t p = 0; p < n; p++)
        ms[p] = by_pck ? pck_scores[order[p]] : r->pairs[order[p]].score;
    const int64_t npig = r->n_pairs + r->n_fn;
    double thr[N_THR], rec_thr[N_REC], recalls[N_THR], ap[N_THR];
    for (int t = 0; t < N_THR; t++)
        thr[t] = sleapc__ev_np_linspace(0.5, 0.95, N_THR, t);
    for (int k = 0; k < N_REC; k++)
        rec_thr[k] = sleapc__ev_np_linspace(0, 1, N_REC, k);
    for (int t = 0; t < N_THR; t++) {
        int64_t tp = 0, fp = 0;
        for (int64_t p = 0; p < n; p++) {
            tp += ms[p] >= thr[t];
            fp += ms[p] < thr[t];
            rc[p] = (double)tp / (double)npig;
            pr[p] = (double)tp / ((double)(fp + tp) + DBL_EPSILON);
        }
        recalls[t] = rc[n - 1];
        for (int64_t i = n - 1; i > 0; i--)
            if (pr[i] > pr[i - 1])
                pr[i - 1] = pr[i];
        /* searchsorted(rc, recall_thresholds, side="left") */
        int64_t i = 0;
        for (int k = 0; k < N_REC; k++) {
            while (i < n && rc[i] < rec_thr[k])
                i++;
            prec[t * N_REC + k] = i < n ? pr[i] : 0.0;
        }
        ap[t] = sleapc__ev_np_mean(prec + t * N_REC, N_REC);
    }
    const int64_t s_thr[1] = {N_THR}, s_rec[1] = {N_REC}, s_n[1] = {n};
    const int64_t s_prec[2] = {N_THR, N_REC};
    st = set(dst, name, "match_score_thresholds", sleapc__pyobj_array_f64(thr, 1, s_thr));
    if (!st)
        st = set(dst, name, "recall_thresholds", sleapc__pyobj_array_f64(rec_thr, 1, s_rec));
    if (!st)
        st = set(dst, name, "match_scores", sleapc__pyobj_array_f64(ms, 1, s_n));
    if (!st)
        st = set(dst, name, "precisions", sleapc__pyobj_array_f64(prec, 2, s_prec));
    if (!st)
        st = set(dst, name, "recalls", sleapc__pyobj_array_f64(recalls, 1, s_thr));
    if (!st)
        st = set(dst, name, "AP", sleapc__pyobj_array_f64(ap, 1, s_thr));
    if (!st)
        st = set(dst, name, "AR", sleapc__pyobj_array_f64(recalls, 1, s_thr));
    if (!st)
        st = set(dst, name, "mAP", sleapc__pyobj_np_f64(sleapc__ev_np_mean(prec, N_THR * N_REC)));
    if (!st)
        st = set(dst, name, "mAR", sleapc__pyobj_np_f64(sleapc__ev_np_mean(recalls, N_THR)));
done:
    sleapc__free(det);
    sleapc__free(ms);
    sleapc__free(order);
    sleapc__free(rc);
    sleapc__free(pr);
    sleapc__free(prec);
    return st;
}
