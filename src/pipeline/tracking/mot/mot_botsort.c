/* BoT-SORT's appearance cost (sleap-nn 0.3.5 tracking/mot/bytetrack.py
 * BoTSORTTracker._fused_cost): ByteTrack's association whose stages 1 and
 * 3 lower the geometric cost of a pair where appearance decides it,
 * min(d_geo, (1 - cos) / 2) + 1e-3 d_geo; appearance only inside the
 * proximity gate and the calibrated EMA gate, and (animal preset) only on
 * the cell that is the top in-gate cosine of its row and of its column by
 * the calibrated margin. Deep OC-SORT's rescue shares the decisive rule. */
#include <math.h>

#include "core/error.h"
#include "pipeline/tracking/mot/mot_appearance.h"
#include "pipeline/tracking/mot/mot_tracker.h"

#define GEOMETRY_TIE_BREAK 1e-3

/* Top-1 minus top-2 of the n finite values at x[0], x[stride], ...: inf
 * with one, NaN with none. */
static double top2_margin(const double *x, int n, int stride)
{
    double t1 = -INFINITY, t2 = -INFINITY;
    int count = 0;
    for (int i = 0; i < n; i++) {
        const double c = x[(size_t)i * stride];
        if (!isfinite(c))
            continue;
        count++;
        if (c > t1) {
            t2 = t1;
            t1 = c;
        } else if (c > t2) {
            t2 = c;
        }
    }
    return count == 0 ? NAN : (count == 1 ? INFINITY : t1 - t2);
}

void sleapc__mot_decisive_cells(const double *cos, const bool *admissible, int n, int m,
                                double margin, double *work, bool *out)
{
    /* work: n * m + n + m doubles */
    double *filled = work, *rmax = work + (size_t)n * m, *cmax = rmax + n;
    bool any = false;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            const size_t k = (size_t)i * m + j;
            const bool a = admissible[k] && isfinite(cos[k]);
            filled[k] = a ? cos[k] : -INFINITY;
            out[k] = a;
            any = any || a;
        }
    if (!any)
        return;
    for (int i = 0; i < n; i++) {
        rmax[i] = -INFINITY;
        for (int j = 0; j < m; j++)
            rmax[i] = filled[(size_t)i * m + j] > rmax[i] ? filled[(size_t)i * m + j] : rmax[i];
    }
    for (int j = 0; j < m; j++) {
        cmax[j] = -INFINITY;
        for (int i = 0; i < n; i++)
            cmax[j] = filled[(size_t)i * m + j] > cmax[j] ? filled[(size_t)i * m + j] : cmax[j];
    }
    margin = margin > 0.0 ? margin : 0.0;
    for (int i = 0; i < n; i++) {
        double rm = top2_margin(filled + (size_t)i * m, m, 1);
        rm = isnan(rm) ? 0.0 : rm;
        const bool row_ok = rm > 0.0 && rm >= margin;
        for (int j = 0; j < m; j++) {
            const size_t k = (size_t)i * m + j;
            if (!out[k])
                continue;
            double cm = top2_margin(filled + j, n, m);
            cm = isnan(cm) ? 0.0 : cm;
            const bool col_ok = cm > 0.0 && cm >= margin;
            out[k] = filled[k] >= rmax[i] && filled[k] >= cmax[j] && row_ok && col_ok;
        }
    }
}

sleapc_status sleapc__mot_botsort_cost(mot_tracker *T, int m, const double *sim, const int *rows,
                                       int n, const int *cols, int k, double *cost)
{
    const double gate = sleapc__mot_app_gate(T, MOT_STAT_EMA);
    if (isnan(gate) || !T->frame_vec || n == 0 || k == 0)
        return SLEAPC_OK;
    const size_t nk = (size_t)n * k;
    mot_track **tr = sleapc__mot_tmp(&T->tmp, (size_t)n * sizeof *tr);
    double *cos_all = sleapc__mot_tmp(&T->tmp, (size_t)n * m * sizeof *cos_all);
    double *cos = sleapc__mot_tmp(&T->tmp, (2 * nk + n + k) * sizeof *cos);
    bool *adm = sleapc__mot_tmp(&T->tmp, 2 * nk * sizeof *adm);
    if (!tr || !cos_all || !cos || !adm)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    bool *decisive = adm + nk;
    for (int i = 0; i < n; i++)
        tr[i] = T->tracks[rows[i]];
    sleapc__mot_app_cos(T, tr, n, m, MOT_STAT_EMA, cos_all);
    bool any = false;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < k; c++) {
            const size_t q = (size_t)i * k + c;
            cos[q] = cos_all[(size_t)i * m + cols[c]];
            const bool near = sim[(size_t)rows[i] * m + cols[c]] >= T->p.proximity_threshold;
            adm[q] = isfinite(cos[q]) && cos[q] >= gate && near;
            any = any || adm[q];
        }
    if (!any)
        return SLEAPC_OK;
    if (T->p.paper) {
        for (size_t q = 0; q < nk; q++)
            decisive[q] = adm[q];
    } else {
        sleapc__mot_decisive_cells(cos, adm, n, k, sleapc__mot_app_margin(T), cos + nk, decisive);
    }
    for (size_t q = 0; q < nk; q++) {
        if (!decisive[q])
            continue;
        const double d_geo = cost[q], d_emb = 0.5 * (1.0 - cos[q]);
        cost[q] = (d_geo < d_emb ? d_geo : d_emb) + GEOMETRY_TIE_BREAK * d_geo;
    }
    return SLEAPC_OK;
}
