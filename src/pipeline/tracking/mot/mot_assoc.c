/* MOT similarities and assignment (see mot_assoc.h). */
#include "pipeline/tracking/mot/mot_assoc.h"

#include <math.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/error.h"

#define CAP_EPS 1e-5
#define INFEASIBLE 1e5
#define PI 3.141592653589793

static double clip0(double v)
{
    return v > 0 ? v : 0.0;
}

static bool finite4(const double *b)
{
    return isfinite(b[0]) && isfinite(b[1]) && isfinite(b[2]) && isfinite(b[3]);
}

void sleapc__mot_iou(const double *a, int n, const double *b, int m, double *out)
{
    for (int i = 0; i < n; i++) {
        const double *p = a + 4 * i;
        const bool oka = finite4(p);
        const double pa = oka ? clip0(p[2] - p[0]) * clip0(p[3] - p[1]) : 0.0;
        for (int j = 0; j < m; j++) {
            const double *q = b + 4 * j;
            if (!oka || !finite4(q)) {
                out[i * m + j] = 0.0;
                continue;
            }
            const double qa = clip0(q[2] - q[0]) * clip0(q[3] - q[1]);
            const double iw = fmin(p[2], q[2]) - fmax(p[0], q[0]);
            const double ih = fmin(p[3], q[3]) - fmax(p[1], q[1]);
            const double inter = clip0(iw) * clip0(ih);
            const double uni = pa + qa - inter;
            double v = uni > 0 ? inter / uni : 0.0;
            out[i * m + j] = v < 0 ? 0.0 : (v > 1 ? 1.0 : v);
        }
    }
}

void sleapc__mot_finish_sim(double *sim, int n, int m, const bool *det_valid)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            double v = sim[i * m + j];
            v = isfinite(v) ? v : 0.0;
            v = v < 0 ? 0.0 : (v > 1 ? 1.0 : v);
            sim[i * m + j] = det_valid[j] ? v : 0.0;
        }
}

bool sleapc__mot_one_to_one(const bool *valid, int n, int m, int *rows, int *cols, int *n_pairs)
{
    *n_pairs = 0;
    if (n == 0 || m == 0)
        return false;
    int total = 0;
    for (int i = 0; i < n; i++) {
        int c = 0;
        for (int j = 0; j < m; j++)
            c += valid[i * m + j];
        if (c > 1)
            return false;
        total += c;
    }
    if (total == 0)
        return false;
    for (int j = 0; j < m; j++) {
        int c = 0;
        for (int i = 0; i < n; i++)
            c += valid[i * m + j];
        if (c > 1)
            return false;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            if (valid[i * m + j]) {
                rows[*n_pairs] = i;
                cols[(*n_pairs)++] = j;
            }
    return true;
}

/* Solves the filled matrix and keeps the pairs keep[] allows. */
static sleapc_status solve_keep(const double *solve, const bool *keep, int n, int m,
                                sleapc_hungarian_ws *ws, mot_scratch *tmp, int *rows, int *cols,
                                int *n_pairs)
{
    const int k = n < m ? n : m;
    int64_t *ri = sleapc__mot_tmp(tmp, (size_t)k * 2 * sizeof *ri);
    if (!ri)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    int64_t *ci = ri + k;
    sleapc_status st = sleapc__hungarian_solve_ws(solve, n, m, ws, ri, ci);
    if (!st)
        for (int p = 0; p < k; p++)
            if (keep[ri[p] * m + ci[p]]) {
                rows[*n_pairs] = (int)ri[p];
                cols[(*n_pairs)++] = (int)ci[p];
            }
    return st;
}

sleapc_status sleapc__mot_assign_capped(const double *cost, int n, int m, double max_cost,
                                        sleapc_hungarian_ws *ws, mot_scratch *tmp, int *rows,
                                        int *cols, int *n_pairs)
{
    *n_pairs = 0;
    if (n == 0 || m == 0)
        return SLEAPC_OK;
    const size_t nm = (size_t)n * (size_t)m;
    double *solve = sleapc__mot_tmp(tmp, nm * (sizeof(double) + sizeof(bool)));
    if (!solve)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    bool *feasible = (bool *)(solve + nm);
    bool any = false;
    double fmax_cost = -INFINITY;
    for (size_t i = 0; i < nm; i++) {
        feasible[i] = isfinite(cost[i]) && cost[i] <= max_cost;
        if (feasible[i]) {
            any = true;
            fmax_cost = cost[i] > fmax_cost ? cost[i] : fmax_cost;
        }
    }
    sleapc_status st = SLEAPC_OK;
    if (any) {
        const double fill = isfinite(max_cost) ? max_cost + CAP_EPS : fmax_cost + INFEASIBLE;
        for (size_t i = 0; i < nm; i++)
            solve[i] = feasible[i] ? cost[i] : fill;
        st = solve_keep(solve, feasible, n, m, ws, tmp, rows, cols, n_pairs);
    }
    return st;
}

sleapc_status sleapc__mot_assign_masked(const double *score, const bool *valid, int n, int m,
                                        sleapc_hungarian_ws *ws, mot_scratch *tmp, int *rows,
                                        int *cols, int *n_pairs)
{
    *n_pairs = 0;
    if (n == 0 || m == 0)
        return SLEAPC_OK;
    const size_t nm = (size_t)n * (size_t)m;
    double *solve = sleapc__mot_tmp(tmp, nm * (sizeof(double) + sizeof(bool)));
    if (!solve)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    bool *keep = (bool *)(solve + nm);
    bool any = false;
    double lo = INFINITY;
    for (size_t i = 0; i < nm; i++) {
        keep[i] = valid[i] && isfinite(score[i]);
        any = any || keep[i];
        if (isfinite(score[i]) && score[i] < lo)
            lo = score[i];
    }
    sleapc_status st = SLEAPC_OK;
    if (any) {
        const double floor_v = lo - INFEASIBLE;
        for (size_t i = 0; i < nm; i++)
            solve[i] = -(isfinite(score[i]) ? score[i] : floor_v);
        st = solve_keep(solve, keep, n, m, ws, tmp, rows, cols, n_pairs);
    }
    return st;
}

/* (dy, dx) as a unit vector; zero-length or non-finite -> (0, 0). */
static void unit(double dy, double dx, double out[2])
{
    const double norm = hypot(dy, dx);
    if (isfinite(norm) && norm > 0) {
        out[0] = dy / norm;
        out[1] = dx / norm;
    } else {
        out[0] = out[1] = 0.0;
    }
}

void sleapc__mot_speed_direction(const double prev[4], const double cur[4], double dir[2])
{
    const double dy = 0.5 * (cur[1] + cur[3]) - 0.5 * (prev[1] + prev[3]);
    const double dx = 0.5 * (cur[0] + cur[2]) - 0.5 * (prev[0] + prev[2]);
    unit(dy, dx, dir);
}

void sleapc__mot_ocm(const double *dirs, const double *prev, const bool *has_dir, int n,
                     const double *det_boxes, const double *det_scores, int m, double inertia,
                     double *out)
{
    for (int i = 0; i < n; i++) {
        const bool hd = has_dir[i] && isfinite(dirs[2 * i]) && isfinite(dirs[2 * i + 1]);
        const double ty = hd ? dirs[2 * i] : 0.0, tx = hd ? dirs[2 * i + 1] : 0.0;
        const double *p = prev + 4 * i;
        const double pcy = 0.5 * (p[1] + p[3]), pcx = 0.5 * (p[0] + p[2]);
        for (int j = 0; j < m; j++) {
            const double *d = det_boxes + 4 * j;
            const double dcy = 0.5 * (d[1] + d[3]), dcx = 0.5 * (d[0] + d[2]);
            double u[2];
            unit(dcy - pcy, dcx - pcx, u);
            double c = ty * u[0] + tx * u[1];
            c = c < -1.0 ? -1.0 : (c > 1.0 ? 1.0 : c);
            const double theta = fabs(acos(c));
            const double term = (PI / 2.0 - theta) / PI;
            const double s = isfinite(det_scores[j]) ? det_scores[j] : 0.0;
            out[i * m + j] = inertia * term * (hd ? 1.0 : 0.0) * s;
        }
    }
}

/* Pads an extent like the detections and floors its sides. */
static void padded(double lo[2], double hi[2], double pad_frac, double min_box)
{
    const double w = hi[0] - lo[0], h = hi[1] - lo[1];
    const double pad = pad_frac * (isnan(w) || isnan(h) ? NAN : (w > h ? w : h));
    for (int a = 0; a < 2; a++) {
        lo[a] -= pad;
        hi[a] += pad;
    }
    if (isfinite(min_box) && min_box > 0)
        for (int a = 0; a < 2; a++) {
            const double grow = 0.5 * clip0(min_box - (hi[a] - lo[a]));
            lo[a] -= grow;
            hi[a] += grow;
        }
}

void sleapc__mot_shared_node_iou(const double *trk, int n, const double *det, int m, int k,
                                 double box_padding, double min_box_size, double *out)
{
    const bool floored = isfinite(min_box_size) && min_box_size > 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            double lt[2] = {INFINITY, INFINITY}, ht[2] = {-INFINITY, -INFINITY};
            double ld[2] = {INFINITY, INFINITY}, hd[2] = {-INFINITY, -INFINITY};
            int shared = 0;
            for (int q = 0; q < k; q++) {
                const double *a = trk + ((size_t)i * k + q) * 2;
                const double *b = det + ((size_t)j * k + q) * 2;
                if (!isfinite(a[0]) || !isfinite(a[1]) || !isfinite(b[0]) || !isfinite(b[1]))
                    continue;
                shared++;
                for (int c = 0; c < 2; c++) {
                    lt[c] = a[c] < lt[c] ? a[c] : lt[c];
                    ht[c] = a[c] > ht[c] ? a[c] : ht[c];
                    ld[c] = b[c] < ld[c] ? b[c] : ld[c];
                    hd[c] = b[c] > hd[c] ? b[c] : hd[c];
                }
            }
            double *o = out + (size_t)i * m + j;
            *o = NAN;
            if (shared < 2)
                continue;
            const bool wt0 = ht[0] - lt[0] >= 1.0, wt1 = ht[1] - lt[1] >= 1.0;
            const bool wd0 = hd[0] - ld[0] >= 1.0, wd1 = hd[1] - ld[1] >= 1.0;
            const bool wide_t = floored ? (wt0 || wt1) : (wt0 && wt1);
            const bool wide_d = floored ? (wd0 || wd1) : (wd0 && wd1);
            if (!wide_t || !wide_d)
                continue;
            padded(lt, ht, box_padding, min_box_size);
            padded(ld, hd, box_padding, min_box_size);
            const double ow = clip0(fmin(ht[0], hd[0]) - fmax(lt[0], ld[0]));
            const double oh = clip0(fmin(ht[1], hd[1]) - fmax(lt[1], ld[1]));
            const double inter = ow * oh;
            const double uni =
                (ht[0] - lt[0]) * (ht[1] - lt[1]) + (hd[0] - ld[0]) * (hd[1] - ld[1]) - inter;
            double v = uni > 0 ? inter / uni : 0.0;
            *o = v < 0 ? 0.0 : (v > 1 ? 1.0 : v);
        }
}
