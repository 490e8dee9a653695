/* Features, similarities and reductions of sleap-nn's tracker. Each follows
 * the numpy expression it replaces, operation by operation. */
#include "pipeline/tracking/track_score.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/np_sum.h"

double sleapc__np_sum(const double *a, int64_t n)
{
    return 0.0 + sleapc__np_pairwise_sum(a, n); /* add.reduce starts from its identity */
}

int sleapc__track_valid_points(const double *pts, int n_nodes)
{
    int k = 0;
    for (int i = 0; i < n_nodes; i++)
        k += !isnan(pts[2 * i]) && !isnan(pts[2 * i + 1]);
    return k;
}

int sleapc__track_feature_dim(sleapc_track_features f, int n_nodes)
{
    switch (f) {
    case SLEAPC_TRACK_CENTROIDS:
        return 2;
    case SLEAPC_TRACK_BBOXES:
        return 4;
    case SLEAPC_TRACK_KEYPOINTS:
    default:
        return 2 * n_nodes;
    }
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* np.nanmedian of column `axis` of pts (n_nodes, 2); v: n_nodes scratch. */
static double nanmedian_axis(const double *pts, int n_nodes, int axis, double *v)
{
    int k = 0;
    for (int i = 0; i < n_nodes; i++)
        if (!isnan(pts[2 * i + axis]))
            v[k++] = pts[2 * i + axis];
    if (k == 0)
        return NAN;
    qsort(v, (size_t)k, sizeof v[0], cmp_double);
    if (k % 2)
        return v[k / 2];
    return (v[k / 2 - 1] + v[k / 2]) / 2.0;
}

void sleapc__track_feature(sleapc_track_features f, const double *pts, int n_nodes, double *dst,
                           double *work)
{
    if (f == SLEAPC_TRACK_CENTROIDS) {
        dst[0] = nanmedian_axis(pts, n_nodes, 0, work);
        dst[1] = nanmedian_axis(pts, n_nodes, 1, work);
    } else if (f == SLEAPC_TRACK_BBOXES) {
        for (int axis = 0; axis < 2; axis++) {
            double lo = NAN, hi = NAN;
            for (int i = 0; i < n_nodes; i++) {
                const double x = pts[2 * i + axis];
                if (isnan(x))
                    continue;
                if (isnan(lo) || x < lo)
                    lo = x;
                if (isnan(hi) || x > hi)
                    hi = x;
            }
            dst[axis] = lo;
            dst[2 + axis] = hi;
        }
    } else {
        for (int i = 0; i < 2 * n_nodes; i++)
            dst[i] = pts[i];
    }
}

int sleapc__track_score_width(const sleapc_tracker_opts *o, int n_nodes)
{
    (void)n_nodes;
    return o->scoring == SLEAPC_TRACK_COSINE_SIM && o->features == SLEAPC_TRACK_KEYPOINTS &&
                   o->cosine_matrix
               ? 4
               : 1;
}

/* compute_oks(gt = a, pr = b) for one pair, cocoeval normalisation. */
static double oks(const double *a, const double *b, int n_nodes, double stddev, double *ks)
{
    double minx = NAN, miny = NAN, maxx = NAN, maxy = NAN;
    for (int i = 0; i < n_nodes; i++) { /* compute_instance_area: nanmin/nanmax */
        const double x = a[2 * i], y = a[2 * i + 1];
        if (!isnan(x)) {
            minx = isnan(minx) || x < minx ? x : minx;
            maxx = isnan(maxx) || x > maxx ? x : maxx;
        }
        if (!isnan(y)) {
            miny = isnan(miny) || y < miny ? y : miny;
            maxy = isnan(maxy) || y > maxy ? y : maxy;
        }
    }
    const double area = (maxx - minx) * (maxy - miny);
    const double spread = (2 * stddev) * (2 * stddev);
    const double norm = spread * (2 * (area + 2.220446049250313e-16));
    int visible = 0;
    for (int i = 0; i < n_nodes; i++) {
        const bool gt_missing = isnan(a[2 * i]) || isnan(a[2 * i + 1]);
        const bool pr_missing = isnan(b[2 * i]) || isnan(b[2 * i + 1]);
        if (gt_missing) {
            ks[i] = 0.0;
            continue;
        }
        visible++;
        const double dx = a[2 * i] - b[2 * i], dy = a[2 * i + 1] - b[2 * i + 1];
        const double d = pr_missing ? INFINITY : (0.0 + dx * dx) + dy * dy;
        ks[i] = exp(-(d / norm));
    }
    return sleapc__np_sum(ks, n_nodes) / (double)(float)visible;
}

/* np.linalg.norm of a flat vector: sqrt(x.dot(x)). */
static double norm2(const double *x, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += x[i] * x[i];
    return sqrt(s);
}

/* Python's built-in max/min on two floats: the first unless the second
 * compares greater (smaller); NaN never compares. */
static double py_max(double a, double b)
{
    return b > a ? b : a;
}

static double py_min(double a, double b)
{
    return b < a ? b : a;
}

/* compute_iou with sleap-nn's +1 pixel convention. */
static double iou(const double *a, const double *b)
{
    const double ix0 = py_max(a[0], b[0]), iy0 = py_max(a[1], b[1]);
    const double ix1 = py_min(a[2], b[2]), iy1 = py_min(a[3], b[3]);
    const double inter = py_max(0, ix1 - ix0 + 1) * py_max(0, iy1 - iy0 + 1);
    const double area1 = (a[2] - a[0] + 1) * (a[3] - a[1] + 1);
    const double area2 = (b[2] - b[0] + 1) * (b[3] - b[1] + 1);
    return inter / (area1 + area2 - inter);
}

void sleapc__track_similarity(const sleapc_tracker_opts *o, int n_nodes, const double *a,
                              const double *b, double *dst, double *work)
{
    const int dim = o->features == SLEAPC_TRACK_EMBEDDINGS
                        ? o->emb_dim
                        : sleapc__track_feature_dim(o->features, n_nodes);
    switch (o->scoring) {
    case SLEAPC_TRACK_OKS:
        dst[0] = oks(a, b, n_nodes, o->oks_stddev, work);
        return;
    case SLEAPC_TRACK_IOU:
        dst[0] = iou(a, b);
        return;
    case SLEAPC_TRACK_EUCLIDEAN_DIST: {
        /* norm2 of a - b, term by term in the same order */
        double s = 0.0;
        for (int i = 0; i < dim; i++) {
            const double d = a[i] - b[i];
            s += d * d;
        }
        dst[0] = -sqrt(s);
        return;
    }
    case SLEAPC_TRACK_COSINE_SIM:
    default: {
        const double denom = norm2(a, dim) * norm2(b, dim);
        if (sleapc__track_score_width(o, n_nodes) == 4) {
            /* np.dot of two (2, 2) arrays is their matrix product */
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    dst[2 * i + j] = (a[2 * i] * b[j] + a[2 * i + 1] * b[2 + j]) / denom;
            return;
        }
        /* compute_cosine_sim: NaN where the norms' product is not finite or 0 */
        double dot = 0.0;
        for (int i = 0; i < dim; i++)
            dot += a[i] * b[i];
        dst[0] = isfinite(denom) && denom != 0.0 ? dot / denom : NAN;
        return;
    }
    }
}

/* np.nanquantile(v, q), method "linear" (numpy's _quantile and _lerp). */
static double nanquantile(double *v, int64_t n, double q)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[k++] = v[i];
    if (k == 0)
        return NAN;
    qsort(v, (size_t)k, sizeof v[0], cmp_double);
    const double virt = (double)(k - 1) * q;
    int64_t prev, next;
    if (virt >= (double)(k - 1)) {
        prev = next = k - 1;
    } else if (virt < 0) {
        prev = next = 0;
    } else {
        prev = (int64_t)floor(virt);
        next = prev + 1;
    }
    const double t = virt - (double)prev, lo = v[prev], hi = v[next];
    const double diff = hi - lo;
    return t >= 0.5 ? hi - diff * (1 - t) : lo + diff * t;
}

double sleapc__track_reduce(const sleapc_tracker_opts *o, double *v, int64_t n)
{
    if (n == 0)
        return NAN;
    if (o->reduction == SLEAPC_TRACK_ROBUST_QUANTILE)
        return nanquantile(v, n, o->robust_best_instance);
    if (o->reduction == SLEAPC_TRACK_MAX) {
        double m = NAN;
        for (int64_t i = 0; i < n; i++)
            if (!isnan(v[i]) && (isnan(m) || v[i] > m))
                m = v[i];
        return m;
    }
    int64_t cnt = 0; /* np.nanmean: NaN -> 0, sum, divide by the count */
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i]))
            v[i] = 0.0;
        else
            cnt++;
    }
    if (cnt == 0)
        return NAN;
    return sleapc__np_sum(v, n) / (double)cnt;
}
