/* Box Kalman filters (see mot_kalman.h). The correction is the Joseph form,
 * as sleap-nn writes it, with the gain from a Cholesky solve of the
 * innovation covariance. */
#include "pipeline/tracking/mot/mot_kalman.h"

#include <math.h>
#include <string.h>

#define STD_POS (1.0 / 20)
#define STD_VEL (1.0 / 160)
#define MIN_SIZE 1.0
#define MIN_RATIO 1e-6
#define NSA_MAX_CONF 0.99

/* np.maximum: NaN wins. */
static double nmax(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : (a > b ? a : b);
}

mot_kf sleapc__mot_kf(mot_kf_kind kind, bool nsa)
{
    mot_kf kf = {kind, kind == MOT_KF_XYSR ? 7 : 8, nsa};
    return kf;
}

/* [cx, cy, w, h] with w, h >= 1. */
static void cxcywh(const double b[4], double c[4])
{
    c[0] = 0.5 * (b[0] + b[2]);
    c[1] = 0.5 * (b[1] + b[3]);
    c[2] = nmax(b[2] - b[0], MIN_SIZE);
    c[3] = nmax(b[3] - b[1], MIN_SIZE);
}

static void xyxy(const double c[4], double b[4])
{
    const double hw = 0.5 * c[2], hh = 0.5 * c[3];
    b[0] = c[0] - hw;
    b[1] = c[1] - hh;
    b[2] = c[0] + hw;
    b[3] = c[1] + hh;
}

void sleapc__mot_kf_z(const mot_kf *kf, const double box[4], double z[4])
{
    cxcywh(box, z);
    const double w = z[2], h = z[3];
    if (kf->kind == MOT_KF_XYSR) {
        z[2] = w * h;
        z[3] = w / h;
    } else if (kf->kind == MOT_KF_XYAH) {
        z[2] = w / h;
    }
}

void sleapc__mot_kf_box(const mot_kf *kf, const double *m, double box[4])
{
    double c[4] = {m[0], m[1], m[2], m[3]};
    if (kf->kind == MOT_KF_XYSR) {
        const double s = nmax(m[2], MIN_SIZE), r = nmax(m[3], MIN_RATIO);
        c[2] = nmax(sqrt(s * r), MIN_SIZE);
        c[3] = nmax(sqrt(s / r), MIN_SIZE);
    } else if (kf->kind == MOT_KF_XYAH) {
        const double h = nmax(m[3], MIN_SIZE);
        c[2] = nmax(m[2] * h, MIN_SIZE);
        c[3] = h;
    } else {
        c[2] = nmax(m[2], MIN_SIZE);
        c[3] = nmax(m[3], MIN_SIZE);
    }
    xyxy(c, box);
}

static bool all_finite(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

void sleapc__mot_kf_initiate(const mot_kf *kf, const double box[4], double *mean, double *cov)
{
    const int n = kf->ndim;
    double z[4];
    sleapc__mot_kf_z(kf, box, z);
    if (!all_finite(z, 4)) {
        double b[4];
        for (int i = 0; i < 4; i++)
            b[i] = isfinite(box[i]) ? box[i] : 0.0;
        sleapc__mot_kf_z(kf, b, z);
        if (!all_finite(z, 4)) {
            const double zero[4] = {0, 0, 0, 0};
            sleapc__mot_kf_z(kf, zero, z);
        }
    }
    memset(mean, 0, (size_t)n * sizeof *mean);
    memset(cov, 0, (size_t)n * n * sizeof *cov);
    memcpy(mean, z, sizeof z);
    double sd[MOT_KF_MAX];
    if (kf->kind == MOT_KF_XYSR) {
        static const double p0[7] = {10, 10, 10, 10, 1e4, 1e4, 1e4};
        for (int i = 0; i < 7; i++)
            cov[i * n + i] = p0[i];
        return;
    }
    const double p = 2 * STD_POS, v = 10 * STD_VEL;
    if (kf->kind == MOT_KF_XYWH) {
        const double w = nmax(z[2], MIN_SIZE), h = nmax(z[3], MIN_SIZE);
        const double s[8] = {p * w, p * h, p * w, p * h, v * w, v * h, v * w, v * h};
        memcpy(sd, s, sizeof s);
    } else {
        const double h = nmax(z[3], MIN_SIZE), ph = p * h, vh = v * h;
        const double s[8] = {ph, ph, 1e-2, ph, vh, vh, 1e-5, vh};
        memcpy(sd, s, sizeof s);
    }
    for (int i = 0; i < 8; i++)
        cov[i * n + i] = sd[i] * sd[i];
}

/* Process-noise variances from the pre-step mean. */
static void process_var(const mot_kf *kf, const double *m, double *q)
{
    if (kf->kind == MOT_KF_XYSR) {
        static const double q0[7] = {1, 1, 1, 1, 1e-2, 1e-2, 1e-4};
        memcpy(q, q0, sizeof q0);
        return;
    }
    double s[8];
    if (kf->kind == MOT_KF_XYWH) {
        const double w = nmax(m[2], MIN_SIZE), h = nmax(m[3], MIN_SIZE);
        const double t[8] = {STD_POS * w, STD_POS * h, STD_POS * w, STD_POS * h,
                             STD_VEL * w, STD_VEL * h, STD_VEL * w, STD_VEL * h};
        memcpy(s, t, sizeof t);
    } else {
        const double h = nmax(m[3], MIN_SIZE), p = STD_POS * h, v = STD_VEL * h;
        const double t[8] = {p, p, 1e-2, p, v, v, 1e-5, v};
        memcpy(s, t, sizeof t);
    }
    for (int i = 0; i < 8; i++)
        q[i] = s[i] * s[i];
}

static void measurement_var(const mot_kf *kf, const double *m, double score, double r[4])
{
    if (kf->kind == MOT_KF_XYSR) {
        r[0] = r[1] = 1;
        r[2] = r[3] = 10;
    } else if (kf->kind == MOT_KF_XYWH) {
        const double w = nmax(m[2], MIN_SIZE), h = nmax(m[3], MIN_SIZE);
        const double s[4] = {STD_POS * w, STD_POS * h, STD_POS * w, STD_POS * h};
        for (int i = 0; i < 4; i++)
            r[i] = s[i] * s[i];
    } else {
        const double p = STD_POS * nmax(m[3], MIN_SIZE);
        r[0] = r[1] = r[3] = p * p;
        r[2] = 1e-1 * 1e-1;
    }
    if (kf->nsa && isfinite(score)) {
        double c = score < 0 ? 0 : score;
        c = c > NSA_MAX_CONF ? NSA_MAX_CONF : c;
        const double f = (1.0 - c) * (1.0 - c);
        for (int i = 0; i < 4; i++)
            r[i] = r[i] * f;
    }
}

static void symmetrize(double *a, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const double s = 0.5 * (a[i * n + j] + a[j * n + i]);
            a[i * n + j] = a[j * n + i] = s;
        }
}

void sleapc__mot_kf_predict(const mot_kf *kf, double *m, double *cov)
{
    const int n = kf->ndim;
    /* a size must not shrink through zero (SORT's s + vs <= 0 rule) */
    if (kf->kind == MOT_KF_XYSR) {
        if (m[2] + m[6] <= 0)
            m[6] = 0.0;
    } else {
        if (m[2] + m[6] <= 0)
            m[6] = 0.0;
        if (m[3] + m[7] <= 0)
            m[7] = 0.0;
    }
    double q[MOT_KF_MAX];
    process_var(kf, m, q);
    const int nv = n - 4; /* velocities of entries 0..nv-1 */
    for (int i = 0; i < nv; i++)
        m[i] = m[i] + m[4 + i];
    /* F P F^T with F = I + (velocity of i into i): rows, then columns */
    double t[MOT_KF_MAX * MOT_KF_MAX];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            t[i * n + j] = cov[i * n + j] + (i < nv ? cov[(4 + i) * n + j] : 0.0);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            cov[i * n + j] = t[i * n + j] + (j < nv ? t[i * n + 4 + j] : 0.0);
    for (int i = 0; i < n; i++)
        cov[i * n + i] += q[i];
    symmetrize(cov, n);
}

/* Cholesky (lower) of a 4x4 SPD matrix; false when not positive definite. */
static bool cholesky4(const double *a, double *l)
{
    memset(l, 0, 16 * sizeof *l);
    for (int j = 0; j < 4; j++) {
        double d = a[j * 4 + j];
        for (int k = 0; k < j; k++)
            d -= l[j * 4 + k] * l[j * 4 + k];
        if (!(d > 0))
            return false;
        d = sqrt(d);
        l[j * 4 + j] = d;
        for (int i = j + 1; i < 4; i++) {
            double s = a[i * 4 + j];
            for (int k = 0; k < j; k++)
                s -= l[i * 4 + k] * l[j * 4 + k];
            l[i * 4 + j] = s / d;
        }
    }
    return true;
}

/* x = A^-1 b for the n columns of b (4 x n, row-major), via L L^T. */
static void chol_solve(const double *l, double *b, int n)
{
    for (int c = 0; c < n; c++) {
        double y[4];
        for (int i = 0; i < 4; i++) {
            double s = b[i * n + c];
            for (int k = 0; k < i; k++)
                s -= l[i * 4 + k] * y[k];
            y[i] = s / l[i * 4 + i];
        }
        for (int i = 3; i >= 0; i--) {
            double s = y[i];
            for (int k = i + 1; k < 4; k++)
                s -= l[k * 4 + i] * b[k * n + c];
            b[i * n + c] = s / l[i * 4 + i];
        }
    }
}

/* S^-1 B with a jitter retry when S is numerically not positive definite
 * (sleap-nn's _solve_spd); false when every try fails. */
static bool solve_spd(const double *s, double *b, int n)
{
    double l[16], a[16];
    memcpy(a, s, sizeof a);
    double scale = 0;
    for (int attempt = 0; attempt < 5; attempt++) {
        if (cholesky4(a, l)) {
            chol_solve(l, b, n);
            return all_finite(b, 4 * n);
        }
        if (attempt == 0) {
            for (int i = 0; i < 4; i++)
                scale = fabs(s[i * 4 + i]) > scale ? fabs(s[i * 4 + i]) : scale;
            scale = scale > 1e-12 ? scale : 1e-12;
        }
        const double jitter = scale * pow(10.0, -12 + 3 * attempt);
        memcpy(a, s, sizeof a);
        for (int i = 0; i < 4; i++)
            a[i * 4 + i] += jitter;
    }
    return false;
}

void sleapc__mot_kf_update(const mot_kf *kf, double *mean, double *cov, const double box[4],
                           double score)
{
    const int n = kf->ndim;
    double z[4];
    sleapc__mot_kf_z(kf, box, z);
    if (!all_finite(z, 4))
        return;
    double r[4], s[16], x[4 * MOT_KF_MAX];
    measurement_var(kf, mean, score, r);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            s[i * 4 + j] = cov[i * n + j] + (i == j ? r[i] : 0.0);
    symmetrize(s, 4);
    memcpy(x, cov, (size_t)(4 * n) * sizeof *x); /* H P = the first 4 rows */
    if (!solve_spd(s, x, n))
        return;
    /* gain K = x^T (n x 4) */
    double nm[MOT_KF_MAX], d[4];
    for (int i = 0; i < 4; i++)
        d[i] = z[i] - mean[i];
    for (int i = 0; i < n; i++) {
        double acc = 0;
        for (int k = 0; k < 4; k++)
            acc += x[k * n + i] * d[k];
        nm[i] = mean[i] + acc;
    }
    /* Joseph form: (I - K H) P (I - K H)^T + K R K^T */
    double a[MOT_KF_MAX * MOT_KF_MAX], t[MOT_KF_MAX * MOT_KF_MAX], nc[MOT_KF_MAX * MOT_KF_MAX];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            a[i * n + j] = (i == j ? 1.0 : 0.0) - (j < 4 ? x[j * n + i] : 0.0);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0;
            for (int k = 0; k < n; k++)
                acc += a[i * n + k] * cov[k * n + j];
            t[i * n + j] = acc;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0, kr = 0;
            for (int k = 0; k < n; k++)
                acc += t[i * n + k] * a[j * n + k];
            for (int k = 0; k < 4; k++)
                kr += (x[k * n + i] * r[k]) * x[k * n + j];
            nc[i * n + j] = acc + kr;
        }
    symmetrize(nc, n);
    if (!all_finite(nm, n) || !all_finite(nc, n * n))
        return;
    memcpy(mean, nm, (size_t)n * sizeof *mean);
    memcpy(cov, nc, (size_t)n * n * sizeof *cov);
}

void sleapc__mot_kf_oru(const mot_kf *kf, const double *frozen_mean, const double *frozen_cov,
                        const double last_obs[4], const double new_obs[4], int n_gap, double score,
                        int frozen_steps, double *mean, double *cov)
{
    const int n = kf->ndim;
    n_gap = n_gap > 1 ? n_gap : 1;
    frozen_steps = frozen_steps < 0 ? 0 : (frozen_steps > n_gap ? n_gap : frozen_steps);
    memcpy(mean, frozen_mean, (size_t)n * sizeof *mean);
    memcpy(cov, frozen_cov, (size_t)n * n * sizeof *cov);
    double start[4], end[4];
    cxcywh(last_obs, start);
    cxcywh(new_obs, end);
    if (!all_finite(start, 4) || !all_finite(end, 4)) {
        for (int k = 0; k < n_gap - frozen_steps; k++)
            sleapc__mot_kf_predict(kf, mean, cov);
        return;
    }
    if (frozen_steps == 0)
        sleapc__mot_kf_predict(kf, mean, cov);
    const int first = frozen_steps > 1 ? frozen_steps : 1;
    for (int j = first; j <= n_gap; j++) {
        if (j > first)
            sleapc__mot_kf_predict(kf, mean, cov);
        double v[4];
        if (j == n_gap) {
            memcpy(v, new_obs, sizeof v);
        } else {
            const double frac = (double)j / n_gap;
            double c[4];
            for (int i = 0; i < 4; i++)
                c[i] = (1.0 - frac) * start[i] + frac * end[i];
            xyxy(c, v);
        }
        sleapc__mot_kf_update(kf, mean, cov, v, score);
    }
}

void sleapc__mot_kf_gating_position(const mot_kf *kf, const double *mean, const double *cov,
                                    const double *boxes, int m, double *out)
{
    const int n = kf->ndim;
    for (int j = 0; j < m; j++)
        out[j] = INFINITY;
    if (!all_finite(mean, n) || !all_finite(cov, n * n))
        return;
    /* the innovation covariance's position block, never NSA-scaled */
    double r[4];
    measurement_var(kf, mean, NAN, r);
    const double a00 = cov[0] + r[0], a11 = cov[n + 1] + r[1];
    const double a01 = 0.5 * (cov[1] + cov[n]);
    double l00, l10, l11, jitter = 0.0;
    const double scale = fmax(fmax(fabs(a00), fabs(a11)), 1e-12);
    bool ok = false;
    for (int attempt = 0; attempt < 5 && !ok; attempt++) {
        if (attempt > 0) /* 1e-12, 1e-9, 1e-6, 1e-3 of the largest variance */
            jitter = scale * pow(10.0, -12 + 3 * (attempt - 1));
        const double d0 = a00 + jitter;
        l00 = d0 > 0 ? sqrt(d0) : NAN;
        l10 = a01 / l00;
        const double d1 = a11 + jitter - l10 * l10;
        l11 = d1 > 0 ? sqrt(d1) : NAN;
        ok = d0 > 0 && d1 > 0;
    }
    if (!ok)
        return; /* sleap-nn's pseudo-inverse fallback is not reproduced: out of the gate */
    for (int j = 0; j < m; j++) {
        double z[4];
        sleapc__mot_kf_z(kf, boxes + 4 * j, z);
        if (!all_finite(z, 4))
            continue;
        const double e0 = z[0] - mean[0], e1 = z[1] - mean[1];
        const double y0 = e0 / l00, y1 = (e1 - y0 * l10) / l11;
        const double x1 = y1 / l11, x0 = (y0 - l10 * x1) / l00;
        const double d2 = e0 * x0 + e1 * x1;
        out[j] = d2 > 0 ? d2 : 0.0;
    }
}
