/* Deep OC-SORT's stage 1 (Maggiolino et al., 2023; sleap-nn 0.3.5
 * tracking/mot/ocsort.py DeepOCSORTTracker._first_stage): OC-SORT's
 * geometric admissibility extended by decisive-appearance rescues, and its
 * objective sim + OCM plus an adaptively weighted appearance term. The term
 * standardizes the EMA cosine by the video's calibrated true / competitor
 * medians, E' = clip(2 (cos - mu_neg) / (mu_pos - mu_neg) - 1, 0, 1) (the
 * raw cosine without a usable spread), counts only where the geometry
 * overlaps, and never pulls a lone admissible pair below its OC-SORT
 * score. */
#include <math.h>

#include "core/error.h"
#include "pipeline/tracking/mot/mot_appearance.h"
#include "pipeline/tracking/mot/mot_tracker.h"

#define MIN_APPEARANCE_SPREAD 1e-6

/* Top-1 minus top-2 of n values at stride (all finite here). */
static double top2(const double *x, int n, int stride)
{
    double t1 = -INFINITY, t2 = -INFINITY;
    for (int i = 0; i < n; i++) {
        const double c = x[(size_t)i * stride];
        if (c > t1) {
            t2 = t1;
            t1 = c;
        } else if (c > t2) {
            t2 = c;
        }
    }
    return t1 - t2;
}

/* The appearance values of the term (n x k): standardized, raw, or off. */
static void appearance_term(const mot_tracker *T, const double *cos, const double *sim, size_t nk,
                            double *out)
{
    const mot_appearance_calibration *a = &T->cal.app;
    const bool off = isnan(sleapc__mot_app_gate(T, MOT_STAT_EMA));
    const bool spread = isfinite(a->mu_pos) && isfinite(a->mu_neg) &&
                        !(a->mu_pos - a->mu_neg < MIN_APPEARANCE_SPREAD);
    const double width = a->mu_pos - a->mu_neg;
    for (size_t q = 0; q < nk; q++) {
        double e = 0.0;
        if (!off && isfinite(cos[q])) {
            e = spread ? 2.0 * (cos[q] - a->mu_neg) / width - 1.0 : cos[q];
            const double lo = spread ? 0.0 : -1.0;
            e = e < lo ? lo : (e > 1.0 ? 1.0 : e);
        }
        out[q] = sim[q] <= 0.0 ? 0.0 : e;
    }
}

sleapc_status sleapc__mot_deepocsort_stage1(mot_tracker *T, int m, const int *cols, int k,
                                            const double *sim, bool *valid, double *score)
{
    const int n = T->n_tracks;
    const size_t nk = (size_t)n * k;
    const sleapc_mot_params *p = &T->p;
    double *cos_all = sleapc__mot_tmp(&T->tmp, (size_t)n * m * sizeof *cos_all);
    double *cos = sleapc__mot_tmp(&T->tmp, (3 * nk + n + k) * sizeof *cos);
    bool *flags = sleapc__mot_tmp(&T->tmp, 2 * nk * sizeof *flags);
    if (!cos_all || !cos || !flags)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    double *app = cos + nk, *work = app + nk;
    sleapc__mot_app_cos(T, T->tracks, n, m, MOT_STAT_EMA, cos_all);
    bool any = false;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < k; c++) {
            cos[(size_t)i * k + c] = cos_all[(size_t)i * m + cols[c]];
            any = any || isfinite(cos[(size_t)i * k + c]);
        }
    if (!any)
        return SLEAPC_OK; /* no appearance evidence: plain OC-SORT */
    /* rescue: decisive appearance among the geometrically plausible pairs */
    const double gate = sleapc__mot_app_gate(T, MOT_STAT_EMA);
    if (p->rescue && !isnan(gate)) {
        const double floor = p->rescue_min_similarity < p->min_match_similarity
                                 ? p->rescue_min_similarity
                                 : p->min_match_similarity;
        bool *plausible = flags, *decisive = flags + nk;
        bool any_p = false;
        for (size_t q = 0; q < nk; q++) {
            plausible[q] = sim[q] >= floor && isfinite(cos[q]);
            any_p = any_p || plausible[q];
        }
        if (any_p) {
            sleapc__mot_decisive_cells(cos, plausible, n, k, sleapc__mot_app_margin(T), work,
                                       decisive);
            for (size_t q = 0; q < nk; q++)
                valid[q] = valid[q] ||
                           (decisive[q] && sim[q] >= p->rescue_min_similarity && cos[q] >= gate);
        }
    }
    appearance_term(T, cos, sim, nk, app);
    bool any_app = false;
    for (size_t q = 0; q < nk; q++)
        any_app = any_app || app[q] != 0.0;
    if (!any_app)
        return SLEAPC_OK;
    /* adaptive weight: half the row and column top-1 / top-2 margins, capped */
    double *rb = work, *cb = work + n;
    const bool adaptive = !p->aw_off && n >= 2 && k >= 2;
    for (int i = 0; i < n; i++) {
        const double g = adaptive ? top2(app + (size_t)i * k, k, 1) : 0.0;
        rb[i] = 0.5 * (g < p->aw_param ? g : p->aw_param);
    }
    for (int c = 0; c < k; c++) {
        const double g = adaptive ? top2(app + c, n, k) : 0.0;
        cb[c] = 0.5 * (g < p->aw_param ? g : p->aw_param);
    }
    for (int i = 0; i < n; i++) {
        int row_count = 0;
        for (int c = 0; c < k; c++)
            row_count += valid[(size_t)i * k + c];
        for (int c = 0; c < k; c++) {
            const size_t q = (size_t)i * k + c;
            const double w = adaptive ? p->w_assoc_emb + rb[i] + cb[c] : p->w_assoc_emb;
            const double term = w * app[q];
            int col_count = 0;
            for (int r = 0; valid[q] && row_count == 1 && r < n; r++)
                col_count += valid[(size_t)r * k + c];
            const bool lone = valid[q] && row_count == 1 && col_count == 1;
            score[q] = score[q] + (lone ? (term > 0.0 ? term : 0.0) : term);
        }
    }
    return SLEAPC_OK;
}
