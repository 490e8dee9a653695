/* Appearance memory and quality gate (see mot_memory.h). */
#include "pipeline/tracking/mot/mot_memory.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/np_sum.h"

#define EPS 1e-12 /* a norm below it counts as zero */
#define MIN_VISIBLE_FRACTION 0.5
#define MAX_OVERLAP_IOU 0.1
#define MIN_GALLERY_FOR_MARGIN 3

sleapc_status sleapc__mot_memory_init(mot_memory *m, int dim, int cap, double alpha, bool adaptive,
                                      double score_floor)
{
    const int need = dim * (cap + 3); /* EMA, gallery, two work rows */
    if (need > m->room) {
        double *p = sleapc__realloc(m->ema, (size_t)need * sizeof *p);
        if (!p)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        m->ema = p;
        m->room = need;
    }
    m->gal = m->ema + dim;
    m->dim = dim;
    m->cap = cap;
    m->n_gal = m->head = 0;
    m->has_ema = false;
    m->alpha = alpha;
    m->adaptive = adaptive;
    m->floor = score_floor;
    return SLEAPC_OK;
}

void sleapc__mot_memory_free(mot_memory *m)
{
    sleapc__free(m->ema);
    memset(m, 0, sizeof *m);
}

static void gallery_push(mot_memory *m, const double *u)
{
    if (m->cap <= 0)
        return;
    int slot;
    if (m->n_gal < m->cap) {
        slot = (m->head + m->n_gal) % m->cap;
        m->n_gal++;
    } else { /* full: the oldest goes */
        slot = m->head;
        m->head = (m->head + 1) % m->cap;
    }
    memcpy(m->gal + (size_t)slot * m->dim, u, (size_t)m->dim * sizeof *u);
}

void sleapc__mot_memory_seed(mot_memory *m, const double *u)
{
    memcpy(m->ema, u, (size_t)m->dim * sizeof *u);
    m->has_ema = true;
    m->n_gal = m->head = 0;
    gallery_push(m, u);
}

/* The EMA's weight on the old vector for a detection scoring score. */
static double momentum(const mot_memory *m, double score)
{
    if (!m->adaptive)
        return m->alpha;
    double trust;
    if (!isfinite(score))
        trust = 0.0;
    else if (m->floor >= 1.0)
        trust = score >= m->floor ? 1.0 : 0.0;
    else {
        trust = (score - m->floor) / (1.0 - m->floor);
        trust = trust < 0 ? 0.0 : (trust > 1 ? 1.0 : trust);
    }
    return m->alpha + (1.0 - m->alpha) * (1.0 - trust);
}

void sleapc__mot_memory_update(mot_memory *m, const double *u, double score, bool gated)
{
    if (!m->has_ema) {
        sleapc__mot_memory_seed(m, u);
        return;
    }
    if (!gated)
        return;
    const double a = momentum(m, score);
    const int D = m->dim;
    double *mixed = m->gal + (size_t)m->cap * D, *sq = mixed + D;
    for (int i = 0; i < D; i++) {
        mixed[i] = a * m->ema[i] + (1.0 - a) * u[i];
        sq[i] = mixed[i] * mixed[i];
    }
    const double norm = sqrt(sleapc__np_pairwise_sum(sq, D));
    /* antipodal old and new vectors cancel out: the old EMA stays */
    if (isfinite(norm) && norm > EPS)
        for (int i = 0; i < D; i++)
            m->ema[i] = mixed[i] / norm;
    gallery_push(m, u);
}

static double dot(const double *a, const double *b, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

static double clip1(double c)
{
    return c < -1.0 ? -1.0 : (c > 1.0 ? 1.0 : c);
}

double sleapc__mot_memory_ema_cos(const mot_memory *m, const double *x)
{
    return m->has_ema ? clip1(dot(x, m->ema, m->dim)) : NAN;
}

double sleapc__mot_memory_gallery_max(const mot_memory *m, const double *u)
{
    if (m->n_gal == 0)
        return sleapc__mot_memory_ema_cos(m, u);
    double best = -INFINITY;
    for (int g = 0; g < m->n_gal; g++) {
        const double c = clip1(dot(u, m->gal + (size_t)((m->head + g) % m->cap) * m->dim, m->dim));
        best = c > best ? c : best;
    }
    return best;
}

bool sleapc__mot_quality_gate(double score, int n_visible, int n_nodes, double max_iou_other,
                              double margin, double high_threshold, double min_margin,
                              int gallery_len)
{
    if (!(score >= high_threshold))
        return false;
    if ((double)n_visible < MIN_VISIBLE_FRACTION * (double)(n_nodes > 1 ? n_nodes : 1))
        return false;
    if (!isnan(max_iou_other) && !(max_iou_other < MAX_OVERLAP_IOU))
        return false;
    /* a young memory has no reliable margin yet; NaN fails */
    if (!isnan(min_margin) && gallery_len >= MIN_GALLERY_FOR_MARGIN && !(margin >= min_margin))
        return false;
    return true;
}
