/* sleap-nn Evaluator.evaluate: the metrics dict, with sleap-nn's keys, its
 * order and its Python / numpy types (which the .npz keeps). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/eval/eval_numpy.h"
#include "pipeline/eval/evaluation.h"

#define N_PCK 10

static int cmp_double(const void *pa, const void *pb)
{
    const double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* The non-NaN distances, sorted (n_out of them). */
static double *sorted_non_nan(const sleapc_ev_result *r, int64_t n, int64_t *n_out)
{
    double *v = sleapc__malloc(sizeof(double) * (size_t)(n + 1));
    if (!v)
        return NULL;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(r->dists[i]))
            v[k++] = r->dists[i];
    *n_out = k;
    return v;
}

static const char *video_path(const sleapc_ev_labels *l, int64_t frame)
{
    const sleapc_ev_video *v = &l->videos[l->frames[frame].video];
    return v->root_filename ? v->root_filename : v->found ? v->found : v->filename;
}

/* The frame of each GT instance (instances are stored frame by frame). */
static int64_t frame_of(const sleapc_ev_labels *l, int64_t inst)
{
    int64_t lo = 0, hi = l->n_frames - 1;
    while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (l->frames[mid].first <= inst)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* distance_metrics (and detection_metrics's percentiles: same_as_detection). */
static sleapc_status distance_metrics(const sleapc_ev_result *r, bool detection, sleapc_pyobj *d)
{
    const int64_t n_vals = r->n_pairs * (r->dist_cols ? r->dist_cols : 1);
    int64_t n_ok = 0;
    double *sorted = sorted_non_nan(r, n_vals, &n_ok);
    int64_t *fidx = sleapc__malloc(sizeof(int64_t) * (size_t)(r->n_pairs + 1));
    const char **paths = sleapc__malloc(sizeof(char *) * (size_t)(r->n_pairs + 1));
    double *zeroed = sleapc__malloc(sizeof(double) * (size_t)(n_vals + 1));
    sleapc_status st = SLEAPC_OK;
    if (!sorted || !fidx || !paths || !zeroed) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
        goto done;
    }
    /* np.nanmean: NaN replaced by 0, the whole array summed, / count */
    for (int64_t i = 0; i < n_vals; i++)
        zeroed[i] = isnan(r->dists[i]) ? 0.0 : r->dists[i];
    const double nanmean = n_ok ? sleapc__ev_np_sum(zeroed, n_vals) / (double)n_ok : NAN;
    qsort(sorted, (size_t)n_ok, sizeof(double), cmp_double);
    static const int ptiles[5] = {50, 75, 90, 95, 99};
    static const char *const pnames[5] = {"p50", "p75", "p90", "p95", "p99"};
    if (detection) {
        /* float(np.mean(non_nans)) over the non-NaN values in pair order */
        int64_t k = 0;
        for (int64_t i = 0; i < n_vals; i++)
            if (!isnan(r->dists[i]))
                zeroed[k++] = r->dists[i];
        st = sleapc__pyobj_set(d, "avg",
                               sleapc__pyobj_float(n_ok ? sleapc__ev_np_mean(zeroed, k) : NAN));
        for (int p = 0; p < 5 && !st; p++)
            st = sleapc__pyobj_set(
                d, pnames[p],
                sleapc__pyobj_float(n_ok ? sleapc__ev_np_percentile_sorted(sorted, n_ok, ptiles[p])
                                         : NAN));
        goto done;
    }
    for (int64_t p = 0; p < r->n_pairs; p++) {
        const int64_t f = frame_of(r->gt, r->pairs[p].gt);
        fidx[p] = r->gt->frames[f].frame_idx;
        paths[p] = video_path(r->gt, f);
    }
    st = sleapc__pyobj_set(d, "frame_idxs", sleapc__pyobj_list_int(fidx, r->n_pairs));
    if (!st)
        st = sleapc__pyobj_set(d, "video_paths", sleapc__pyobj_list_str(paths, r->n_pairs));
    if (!st) {
        const int64_t shape[2] = {r->n_pairs, r->dist_cols};
        const int ndim = r->dist_cols && r->n_pairs ? 2 : 1;
        st = sleapc__pyobj_set(d, "dists", sleapc__pyobj_array_f64(r->dists, ndim, shape));
    }
    if (!st)
        st = sleapc__pyobj_set(d, "avg", sleapc__pyobj_float(nanmean));
    for (int p = 0; p < 5 && !st; p++)
        st = sleapc__pyobj_set(
            d, pnames[p],
            n_ok ? sleapc__pyobj_np_f64(sleapc__ev_np_percentile_sorted(sorted, n_ok, ptiles[p]))
                 : sleapc__pyobj_float(NAN));
done:
    sleapc__free(sorted);
    sleapc__free(fidx);
    sleapc__free(paths);
    sleapc__free(zeroed);
    return st;
}

/* pck_metrics; fills pck_scores[n_pairs] (pck_voc's match scores). */
static sleapc_status pck_metrics(const sleapc_ev_result *r, sleapc_pyobj *d, double *pck_scores)
{
    const int64_t P = r->n_pairs, N = r->dist_cols;
    double thr[N_PCK];
    for (int t = 0; t < N_PCK; t++)
        thr[t] = sleapc__ev_np_linspace(1, 10, N_PCK, t);
    uint8_t *pcks = sleapc__malloc((size_t)(P * N * N_PCK + 1));
    double *parts = sleapc__malloc(sizeof(double) * (size_t)(N * N_PCK + N + 1));
    sleapc_status st = SLEAPC_OK;
    if (!pcks || !parts) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
        goto done;
    }
    for (int64_t i = 0; i < P * N; i++) {
        const double v = isnan(r->dists[i]) ? INFINITY : r->dists[i];
        for (int t = 0; t < N_PCK; t++)
            pcks[i * N_PCK + t] = v < thr[t];
    }
    const int64_t s_thr[1] = {N_PCK};
    st = sleapc__pyobj_set(d, "thresholds", sleapc__pyobj_array_f64(thr, 1, s_thr));
    if (P == 0) {
        const int64_t shape[3] = {1, 0, N_PCK}, zero[1] = {0};
        if (!st)
            st = sleapc__pyobj_set(d, "pcks", sleapc__pyobj_array_bool(pcks, 3, shape));
        if (!st)
            st = sleapc__pyobj_set(d, "mPCK_parts", sleapc__pyobj_array_f64(parts, 1, zero));
        if (!st)
            st = sleapc__pyobj_set(d, "mPCK", sleapc__pyobj_float(NAN));
        if (!st)
            st = sleapc__pyobj_set(d, "PCK@5", sleapc__pyobj_float(NAN));
        if (!st)
            st = sleapc__pyobj_set(d, "PCK@10", sleapc__pyobj_float(NAN));
        goto done;
    }
    /* pcks.mean(axis=0).mean(axis=-1): counts over pairs (exact), / P,
     * then the mean over the thresholds */
    double *per_thr = parts, *node_parts = parts + N * N_PCK;
    for (int64_t k = 0; k < N; k++) {
        for (int t = 0; t < N_PCK; t++) {
            int64_t c = 0;
            for (int64_t p = 0; p < P; p++)
                c += pcks[(p * N + k) * N_PCK + t];
            per_thr[k * N_PCK + t] = (double)c / (double)P;
        }
        node_parts[k] = sleapc__ev_np_mean(per_thr + k * N_PCK, N_PCK);
    }
    /* pcks.mean(axis=-1).mean(axis=-1) per pair */
    double *node_mean = per_thr; /* reused: N values */
    for (int64_t p = 0; p < P; p++) {
        for (int64_t k = 0; k < N; k++) {
            int c = 0;
            for (int t = 0; t < N_PCK; t++)
                c += pcks[(p * N + k) * N_PCK + t];
            node_mean[k] = (double)c / N_PCK;
        }
        pck_scores[p] = sleapc__ev_np_mean(node_mean, N);
    }
    int64_t c5 = 0, c10 = 0;
    for (int64_t i = 0; i < P * N; i++) {
        c5 += pcks[i * N_PCK + 4];
        c10 += pcks[i * N_PCK + 9];
    }
    const int64_t shape[3] = {P, N, N_PCK}, s_n[1] = {N};
    if (!st)
        st = sleapc__pyobj_set(d, "pcks", sleapc__pyobj_array_bool(pcks, 3, shape));
    if (!st)
        st = sleapc__pyobj_set(d, "mPCK_parts", sleapc__pyobj_array_f64(node_parts, 1, s_n));
    if (!st)
        st = sleapc__pyobj_set(d, "mPCK", sleapc__pyobj_float(sleapc__ev_np_mean(node_parts, N)));
    if (!st)
        st = sleapc__pyobj_set(d, "PCK@5", sleapc__pyobj_float((double)c5 / (double)(P * N)));
    if (!st)
        st = sleapc__pyobj_set(d, "PCK@10", sleapc__pyobj_float((double)c10 / (double)(P * N)));
done:
    sleapc__free(pcks);
    sleapc__free(parts);
    return st;
}

static sleapc_status visibility_metrics(const sleapc_ev_result *r, sleapc_pyobj *d)
{
    int64_t tp = 0, fp = 0, tn = 0, fn = 0;
    for (int64_t p = 0; p < r->n_pairs; p++) {
        const double *g = sleapc__ev_points(r->gt, r->pairs[p].gt);
        const double *q = sleapc__ev_points(r->pr, r->pairs[p].pr);
        for (int k = 0; k < r->dist_cols; k++) {
            const bool mg = isnan(g[2 * k]) || isnan(g[2 * k + 1]);
            const bool mp = isnan(q[2 * k]) || isnan(q[2 * k + 1]);
            tn += mg && mp;
            fn += !mg && mp;
            fp += mg && !mp;
            tp += !mg && !mp;
        }
    }
    /* numpy counts after a pair, Python ints with none */
    sleapc_pyobj *(*count)(int64_t) = r->n_pairs ? sleapc__pyobj_np_i64 : sleapc__pyobj_int;
    sleapc_pyobj *(*ratio)(double) = tp + fp ? sleapc__pyobj_np_f64 : sleapc__pyobj_float;
    sleapc_status st = sleapc__pyobj_set(d, "tp", count(tp));
    if (!st)
        st = sleapc__pyobj_set(d, "fp", count(fp));
    if (!st)
        st = sleapc__pyobj_set(d, "tn", count(tn));
    if (!st)
        st = sleapc__pyobj_set(d, "fn", count(fn));
    if (!st)
        st = sleapc__pyobj_set(d, "precision",
                               ratio(tp + fp ? (double)tp / (double)(tp + fp) : NAN));
    ratio = tp + fn ? sleapc__pyobj_np_f64 : sleapc__pyobj_float;
    if (!st)
        st = sleapc__pyobj_set(d, "recall", ratio(tp + fn ? (double)tp / (double)(tp + fn) : NAN));
    return st;
}

static sleapc_status detection_metrics(const sleapc_ev_result *r, sleapc_pyobj *d)
{
    const int64_t tp = r->n_pairs, fp = r->n_fp, fn = r->n_fn;
    const double precision = tp + fp > 0 ? (double)tp / (double)(tp + fp) : 0.0;
    const double recall = tp + fn > 0 ? (double)tp / (double)(tp + fn) : 0.0;
    const double f1 = precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0;
    sleapc_status st = sleapc__pyobj_set(d, "precision", sleapc__pyobj_float(precision));
    if (!st)
        st = sleapc__pyobj_set(d, "recall", sleapc__pyobj_float(recall));
    if (!st)
        st = sleapc__pyobj_set(d, "f1", sleapc__pyobj_float(f1));
    if (!st)
        st = sleapc__pyobj_set(d, "n_tp", sleapc__pyobj_int(tp));
    if (!st)
        st = sleapc__pyobj_set(d, "n_fp", sleapc__pyobj_int(fp));
    if (!st)
        st = sleapc__pyobj_set(d, "n_fn", sleapc__pyobj_int(fn));
    return st ? st : distance_metrics(r, true, d);
}

static sleapc_status section(sleapc_pyobj *m, const char *key, sleapc_pyobj **out)
{
    *out = sleapc__pyobj_dict();
    sleapc_status st = sleapc__pyobj_set(m, key, *out);
    if (st)
        *out = NULL;
    return st;
}

sleapc_status sleapc__ev_metrics(sleapc_ev_result *r)
{
    sleapc_pyobj *m = sleapc__pyobj_dict(), *s = NULL;
    if (!m)
        return SLEAPC_ERR_NOMEM;
    sleapc_status st;
    double *pck_scores = NULL;
    if (r->method == SLEAPC_EV_CENTROID) {
        st = section(m, "detection_metrics", &s);
        if (!st)
            st = detection_metrics(r, s);
        if (!st)
            st = section(m, "distance_metrics", &s);
        if (!st)
            st = distance_metrics(r, false, s);
        goto done;
    }
    pck_scores = sleapc__malloc(sizeof(double) * (size_t)(r->n_pairs + 1));
    sleapc_pyobj *pck = sleapc__pyobj_dict();
    if (!pck_scores || !pck) {
        sleapc__pyobj_free(pck);
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
        goto done;
    }
    st = pck_metrics(r, pck, pck_scores); /* its scores feed pck_voc */
    if (!st)
        st = section(m, "voc_metrics", &s);
    if (!st)
        st = sleapc__ev_voc_metrics(r, false, NULL, s);
    if (!st)
        st = sleapc__ev_voc_metrics(r, true, pck_scores, s);
    if (!st)
        st = section(m, "mOKS", &s);
    if (!st) {
        double sum_src[1];
        double *oks = r->n_pairs ? sleapc__malloc(sizeof(double) * (size_t)r->n_pairs) : sum_src;
        if (!oks) {
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "eval: out of memory");
        } else {
            for (int64_t p = 0; p < r->n_pairs; p++)
                oks[p] = r->pairs[p].score;
            st = sleapc__pyobj_set(s, "mOKS",
                                   sleapc__pyobj_float(sleapc__ev_np_mean(oks, r->n_pairs)));
            if (oks != sum_src)
                sleapc__free(oks);
        }
    }
    if (!st)
        st = section(m, "distance_metrics", &s);
    if (!st)
        st = distance_metrics(r, false, s);
    if (!st)
        st = sleapc__pyobj_set(m, "pck_metrics", pck);
    else
        sleapc__pyobj_free(pck);
    pck = NULL;
    if (!st)
        st = section(m, "visibility_metrics", &s);
    if (!st)
        st = visibility_metrics(r, s);
done:
    sleapc__free(pck_scores);
    if (st) {
        sleapc__pyobj_free(m);
        return st;
    }
    r->metrics = m;
    return SLEAPC_OK;
}
