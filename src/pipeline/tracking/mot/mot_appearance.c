/* The appearance trackers' shared machinery (see mot_appearance.h). */
#include "pipeline/tracking/mot/mot_appearance.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/np_sum.h"
#include "pipeline/tracking/mot/mot_assoc.h"
#include "pipeline/tracking/mot/mot_calib_appearance.h"
#include "pipeline/tracking/mot/mot_f32.h"

/* A LOST track counts as a neighbor in the gate's isolation test while it
 * has been missing for at most this many steps. */
#define GATE_LOST_MAX_STEPS 5

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

void sleapc__mot_app_init(mot_tracker *T)
{
    const mot_video *v = T->v;
    T->uses_app = sleapc__mot_uses_appearance(T->p.tracker);
    T->app_gallery = sleapc__mot_memory_gallery_size(&T->p);
    /* the calibration saw vectors (a video tracked as it comes: the
     * whole video's calibration is given) */
    const mot_appearance_status s = T->cal.app.status;
    T->vectors_seen = s == MOT_APPEARANCE_OK || s == MOT_APPEARANCE_INSUFFICIENT;
    if (!T->uses_app || v->emb_dim <= 0 || !v->emb)
        return;
    for (int64_t d = 0; d < v->n && !T->vectors_seen; d++)
        T->vectors_seen = sleapc__mot_det_unit(v, d, NULL);
}

sleapc_status sleapc__mot_app_frame(mot_tracker *T, int64_t d0, int m)
{
    const mot_video *v = T->v;
    const int D = v->emb_dim;
    T->frame_vec = false;
    T->gate_on = false;
    T->m_frame = m;
    if (!T->uses_app || D <= 0 || !v->emb)
        return SLEAPC_OK;
    const size_t cap = (size_t)(m > 0 ? m : 1);
    T->vhas = sleapc__mot_tmp(&T->tmp, cap * sizeof *T->vhas);
    T->vraw = sleapc__mot_tmp(&T->tmp, cap * (size_t)D * sizeof *T->vraw);
    T->vunit = sleapc__mot_tmp(&T->tmp, cap * (size_t)D * sizeof *T->vunit);
    float *f = sleapc__mot_tmp(&T->tmp, (size_t)D * sizeof *f);
    double *sq = sleapc__mot_tmp(&T->tmp, (size_t)D * sizeof *sq);
    if (!T->vhas || !T->vraw || !T->vunit || !f || !sq)
        return nomem();
    for (int j = 0; j < m; j++) {
        double *raw = T->vraw + (size_t)j * D, *u = T->vunit + (size_t)j * D;
        T->vhas[j] = sleapc__mot_det_unit(v, d0 + j, f);
        if (!T->vhas[j])
            continue;
        /* FrameDetections' float32 vector; renormalized in float64 (unit_rows) */
        for (int i = 0; i < D; i++) {
            raw[i] = (double)f[i];
            sq[i] = raw[i] * raw[i];
        }
        const double norm = sqrt(sleapc__np_pairwise_sum(sq, D));
        if (!(isfinite(norm) && norm > 1e-12)) {
            T->vhas[j] = false;
            continue;
        }
        for (int i = 0; i < D; i++)
            u[i] = raw[i] / norm;
        T->frame_vec = true;
    }
    T->vectors_seen = T->vectors_seen || T->frame_vec;
    return SLEAPC_OK;
}

double sleapc__mot_app_gate(const mot_tracker *T, int stat)
{
    if (!T->uses_app || !T->vectors_seen)
        return NAN;
    if (!isnan(T->p.appearance_threshold))
        return T->p.appearance_threshold;
    const mot_appearance_calibration *a = &T->cal.app;
    if (a->status != MOT_APPEARANCE_OK || !a->for_association)
        return NAN;
    const double g = stat == MOT_STAT_EMA ? a->ema_cos_gate : a->gallery_cos_gate;
    return isfinite(g) ? g : NAN;
}

double sleapc__mot_app_margin(const mot_tracker *T)
{
    return isfinite(T->cal.app.m_assoc) ? T->cal.app.m_assoc : 0.0;
}

bool sleapc__mot_app_has(const mot_track *t)
{
    return t->app.has_ema;
}

/* Cosines of the tracks' EMAs to the frame's vectors (_ema_cos). */
static void ema_cos(const mot_tracker *T, mot_track *const *tracks, int n, int m, double *out)
{
    const int D = T->v->emb_dim;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            out[i * m + j] =
                T->frame_vec && T->vhas[j] && tracks[i]->app.has_ema
                    ? sleapc__mot_memory_ema_cos(&tracks[i]->app, T->vraw + (size_t)j * D)
                    : NAN;
}

void sleapc__mot_app_cos(const mot_tracker *T, mot_track *const *tracks, int n, int m, int stat,
                         double *out)
{
    for (int k = 0; k < n * m; k++)
        out[k] = NAN;
    if (n == 0 || m == 0 || !T->frame_vec || isnan(sleapc__mot_app_gate(T, stat)))
        return;
    if (stat == MOT_STAT_EMA) {
        ema_cos(T, tracks, n, m, out);
        return;
    }
    const int D = T->v->emb_dim;
    for (int i = 0; i < n; i++) {
        if (!tracks[i]->app.has_ema)
            continue;
        for (int j = 0; j < m; j++)
            if (T->vhas[j])
                out[i * m + j] =
                    sleapc__mot_memory_gallery_max(&tracks[i]->app, T->vunit + (size_t)j * D);
    }
}

sleapc_status sleapc__mot_app_gate_context(mot_tracker *T, mot_track *const *pool, int n,
                                           int64_t d0, int m, bool matches)
{
    T->gate_on = T->uses_app && T->frame_vec && matches && n > 0 && m > 0;
    if (!T->gate_on)
        return SLEAPC_OK;
    const size_t nm = (size_t)n * m;
    T->gpool = (mot_track **)pool;
    T->n_gpool = n;
    T->gneighbor = sleapc__mot_tmp(&T->tmp, (size_t)n * sizeof *T->gneighbor);
    T->gdet_iou = sleapc__mot_tmp(&T->tmp, (size_t)m * m * sizeof *T->gdet_iou);
    T->gtrk_iou = sleapc__mot_tmp(&T->tmp, (nm + 4 * (size_t)n) * sizeof *T->gtrk_iou);
    T->ggeo = sleapc__mot_tmp(&T->tmp, (nm + 4 * (size_t)n) * sizeof *T->ggeo);
    T->gcos = sleapc__mot_tmp(&T->tmp, nm * sizeof *T->gcos);
    if (!T->gneighbor || !T->gdet_iou || !T->gtrk_iou || !T->ggeo || !T->gcos)
        return nomem();
    const double *boxes = T->v->box + 4 * d0;
    sleapc__mot_iou(boxes, m, boxes, m, T->gdet_iou);
    for (int j = 0; j < m; j++)
        T->gdet_iou[j * m + j] = 0.0;
    double *pred = T->gtrk_iou + nm;
    for (int i = 0; i < n; i++) {
        const mot_track *t = pool[i];
        T->gneighbor[i] =
            t->state == MOT_CONFIRMED || (t->state == MOT_LOST && t->tsu <= GATE_LOST_MAX_STEPS);
        sleapc__mot_kf_box(&T->kf, t->mean, pred + 4 * i);
    }
    sleapc__mot_iou(pred, n, boxes, m, T->gtrk_iou);
    sleapc__mot_geometric_sim(T, pool, n, d0, m, T->ggeo);
    ema_cos(T, pool, n, m, T->gcos);
    return SLEAPC_OK;
}

void sleapc__mot_app_matched(mot_tracker *T, mot_track *t, int64_t d0, int j)
{
    if (!T->uses_app || !T->frame_vec || !T->vhas[j])
        return;
    const mot_video *v = T->v;
    const double *u = T->vunit + (size_t)j * v->emb_dim;
    if (!t->app.has_ema) {
        sleapc__mot_memory_seed(&t->app, u);
        return;
    }
    int row = -1;
    for (int i = 0; T->gate_on && i < T->n_gpool && row < 0; i++)
        row = T->gpool[i] == t ? i : -1;
    bool gated = false;
    const int64_t d = d0 + j;
    if (row >= 0) {
        const int n = T->n_gpool;
        const int m = (int)T->m_frame;
        double max_iou = 0.0;
        for (int k = 0; k < m; k++)
            max_iou = T->gdet_iou[j * m + k] > max_iou ? T->gdet_iou[j * m + k] : max_iou;
        double best = -INFINITY;
        bool any = false;
        for (int i = 0; i < n; i++) {
            if (i == row)
                continue;
            if (T->gneighbor[i] && T->gtrk_iou[i * m + j] > max_iou)
                max_iou = T->gtrk_iou[i * m + j];
            const double c = T->gcos[i * m + j];
            if (T->ggeo[i * m + j] > 0 && isfinite(c)) {
                any = true;
                best = c > best ? c : best;
            }
        }
        const double own = T->gcos[row * m + j];
        const double margin = !isfinite(own) || !any ? INFINITY : own - best;
        gated = sleapc__mot_quality_gate(v->score[d], v->n_visible[d], v->n_nodes, max_iou, margin,
                                         T->p.track_high_threshold, sleapc__mot_app_margin(T),
                                         t->app.n_gal);
    }
    sleapc__mot_memory_update(&t->app, u, v->score[d], gated);
}

sleapc_status sleapc__mot_app_spawned(mot_tracker *T, mot_track *t, int j)
{
    if (!T->uses_app)
        return SLEAPC_OK;
    const int D = T->v->emb_dim > 0 && T->v->emb ? T->v->emb_dim : 0;
    sleapc_status st = sleapc__mot_memory_init(&t->app, D, T->app_gallery, T->p.ema_alpha,
                                               T->p.adaptive_ema, T->p.track_high_threshold);
    if (!st && T->frame_vec && T->vhas[j])
        sleapc__mot_memory_seed(&t->app, T->vunit + (size_t)j * D);
    return st;
}
