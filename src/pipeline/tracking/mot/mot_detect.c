/* Detections and per-video calibration of the MOT trackers (see
 * mot_detect.h). */
#include "pipeline/tracking/mot/mot_detect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_calib_appearance.h"
#include "pipeline/tracking/mot/mot_motion.h"

#define MIN_BOX_SIDE 1.0
#define MIN_BOX_FRACTION 0.25
#define NORMALIZER_FLOOR 1e-6

sleapc_status sleapc__mot_video_alloc(mot_video *v, int n_nodes, int64_t n_frames, int64_t n)
{
    memset(v, 0, sizeof *v);
    v->n_nodes = n_nodes;
    const size_t F = (size_t)(n_frames > 0 ? n_frames : 1), N = (size_t)(n > 0 ? n : 1);
    v->frame_idx = sleapc__calloc(F, sizeof *v->frame_idx);
    v->first = sleapc__calloc(F, sizeof *v->first);
    v->count = sleapc__calloc(F, sizeof *v->count);
    v->kp = sleapc__calloc(N * (size_t)n_nodes * 2, sizeof *v->kp);
    v->box = sleapc__calloc(N * 4, sizeof *v->box);
    v->raw = sleapc__calloc(N * 4, sizeof *v->raw);
    v->score = sleapc__calloc(N, sizeof *v->score);
    v->valid = sleapc__calloc(N, sizeof *v->valid);
    v->n_visible = sleapc__calloc(N, sizeof *v->n_visible);
    if (!v->frame_idx || !v->first || !v->count || !v->kp || !v->box || !v->raw || !v->score ||
        !v->valid || !v->n_visible) {
        sleapc__mot_video_free(v);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
    }
    v->n_frames = n_frames;
    v->n = n;
    return SLEAPC_OK;
}

void sleapc__mot_video_free(mot_video *v)
{
    sleapc__free(v->frame_idx);
    sleapc__free(v->first);
    sleapc__free(v->count);
    sleapc__free(v->kp);
    sleapc__free(v->box);
    sleapc__free(v->raw);
    sleapc__free(v->score);
    sleapc__free(v->valid);
    sleapc__free(v->n_visible);
    sleapc__free(v->emb);
    memset(v, 0, sizeof *v);
}

mot_appearance_calibration sleapc__mot_appearance_uncalibrated(void)
{
    mot_appearance_calibration a = {.status = MOT_APPEARANCE_NO_VECTORS};
    a.assoc_rank1 = a.m_assoc = a.ema_cos_gate = a.gallery_cos_gate = NAN;
    a.mu_pos = a.mu_neg = a.link_thresh = a.link_margin = a.link_recall = NAN;
    a.neg_collision_rate = NAN;
    return a;
}

static double nmax(double a, double b)
{
    return isnan(a) || isnan(b) ? NAN : (a > b ? a : b);
}

void sleapc__mot_detect(mot_video *v, int64_t d, const double *ps, double inst_score,
                        const sleapc_mot_params *p)
{
    const int K = v->n_nodes;
    const double *kp = v->kp + (size_t)d * K * 2;
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    int nvis = 0, n_ps = 0;
    double ps_sum = 0, ps_abs = 0;
    for (int k = 0; k < K; k++) {
        const double x = kp[2 * k], y = kp[2 * k + 1];
        if (!isfinite(x) || !isfinite(y))
            continue;
        nvis++;
        lo[0] = x < lo[0] ? x : lo[0];
        lo[1] = y < lo[1] ? y : lo[1];
        hi[0] = x > hi[0] ? x : hi[0];
        hi[1] = y > hi[1] ? y : hi[1];
        if (ps && isfinite(ps[k])) {
            n_ps++;
            ps_sum += ps[k];
            ps_abs += fabs(ps[k]);
        }
    }
    double *raw = v->raw + 4 * d, *box = v->box + 4 * d;
    raw[0] = lo[0], raw[1] = lo[1], raw[2] = hi[0], raw[3] = hi[1];
    bool valid =
        nvis > 0 && isfinite(raw[0]) && isfinite(raw[1]) && isfinite(raw[2]) && isfinite(raw[3]);
    /* score: mean point score over the visible nodes of a predicted pose,
     * the instance score when none is informative (all zero: from_numpy
     * without point scores) */
    const double inst = isfinite(inst_score) ? inst_score : 1.0;
    double s = 1.0;
    if (p->score_mode == SLEAPC_MOT_SCORE_INSTANCE)
        s = inst;
    else if (p->score_mode == SLEAPC_MOT_SCORE_AUTO)
        s = (n_ps > 0 && ps_abs > 0) ? ps_sum / (double)n_ps : inst;
    s = isfinite(s) ? s : 1.0;
    v->score[d] = s < 0 ? 0.0 : (s > 1 ? 1.0 : s);
    v->valid[d] = valid;
    v->n_visible[d] = nvis;
    if (!valid) {
        for (int i = 0; i < 4; i++)
            raw[i] = box[i] = NAN;
        return;
    }
    const double w = raw[2] - raw[0], h = raw[3] - raw[1];
    const double pad = p->box_padding * nmax(w, h);
    box[0] = raw[0] - pad, box[1] = raw[1] - pad, box[2] = raw[2] + pad, box[3] = raw[3] + pad;
    if (nvis == 1 || w < MIN_BOX_SIDE || h < MIN_BOX_SIDE) {
        /* degenerate, body size unknown yet: 1-px floor per axis, padded */
        const double cx = 0.5 * (raw[0] + raw[2]), cy = 0.5 * (raw[1] + raw[3]);
        const double hx = 0.5 * nmax(w, MIN_BOX_SIDE), hy = 0.5 * nmax(h, MIN_BOX_SIDE);
        raw[0] = cx - hx, raw[1] = cy - hy, raw[2] = cx + hx, raw[3] = cy + hy;
        const double dpad = p->box_padding * 2.0 * nmax(hx, hy);
        box[0] = raw[0] - dpad, box[1] = raw[1] - dpad;
        box[2] = raw[2] + dpad, box[3] = raw[3] + dpad;
    }
}

int64_t sleapc__mot_steps_between(int64_t delta, int64_t frame_step)
{
    frame_step = frame_step > 1 ? frame_step : 1;
    const double s = nearbyint((double)delta / (double)frame_step); /* half to even */
    return s > 1.0 ? (int64_t)s : 1;
}

double sleapc__mot_quantile_sorted(const double *x, int64_t n, double q)
{
    /* numpy's "linear" method: virtual index n q + (1 - q) - 1, then its lerp */
    const double vi = (double)n * q + (1.0 + q * (1.0 - 1.0 - 1.0)) - 1.0;
    double prev = floor(vi);
    int64_t lo = (int64_t)prev, hi = lo + 1;
    if (vi <= 0) {
        lo = hi = 0;
        prev = vi;
    }
    if (lo >= n - 1)
        lo = hi = n - 1;
    if (hi > n - 1)
        hi = n - 1;
    const double g = vi - prev;
    const double a = x[lo], b = x[hi], diff = b - a;
    return g >= 0.5 ? b - diff * (1.0 - g) : a + diff * g;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y);
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : (x > y);
}

/* np.median of x (sorted in place). */
static double median(double *x, int64_t n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2.0;
}

bool sleapc__mot_sized_diag(const mot_video *v, int64_t d, double *diag)
{
    if (!v->valid[d] || v->n_visible[d] < 2)
        return false;
    const double *r = v->raw + 4 * d;
    *diag = hypot(r[2] - r[0], r[3] - r[1]);
    return isfinite(*diag) && *diag > 0;
}

sleapc_status sleapc__mot_calibrate_data(mot_calib_data *c, const sleapc_mot_params *p,
                                         mot_calibration *cal)
{
    *cal = (mot_calibration){.frame_step = 1,
                             .regular = true,
                             .body_size = NAN,
                             .score_q95 = NAN,
                             .normalizer = NAN,
                             .step_p95 = NAN,
                             .app = sleapc__mot_appearance_uncalibrated()};
    /* stride: the most common positive delta (ties: the smallest) */
    const int64_t nd = c->n_deltas;
    qsort(c->deltas, (size_t)nd, sizeof *c->deltas, cmp_i64);
    int64_t best = 1, best_n = 0;
    for (int64_t i = 0; i < nd;) {
        int64_t j = i;
        while (j < nd && c->deltas[j] == c->deltas[i])
            j++;
        if (j - i > best_n) {
            best_n = j - i;
            best = c->deltas[i];
        }
        i = j;
    }
    if (nd > 0) {
        cal->frame_step = best;
        cal->regular = (double)best_n >= 0.5 * (double)nd;
    }
    cal->frames_time_base = p->time_base == SLEAPC_MOT_TIME_AUTO
                                ? cal->regular
                                : p->time_base == SLEAPC_MOT_TIME_FRAMES;
    /* body size: median raw-box diagonal of the sized detections */
    const double measured = c->n_diags ? median(c->diags, c->n_diags) : NAN;
    if (isfinite(p->body_size) && p->body_size > 0)
        cal->body_size = p->body_size;
    else if (isfinite(measured) && measured > 0)
        cal->body_size = measured;
    /* score quantiles of the valid detections */
    if (c->n_scores) {
        qsort(c->scores, (size_t)c->n_scores, sizeof *c->scores, cmp_double);
        cal->score_q95 = sleapc__mot_quantile_sorted(c->scores, c->n_scores, 0.95);
    }
    if (p->normalize_scores)
        cal->normalizer =
            !isfinite(cal->score_q95)
                ? 1.0
                : (cal->score_q95 > NORMALIZER_FLOOR ? cal->score_q95 : NORMALIZER_FLOOR);
    if (c->n_valid > 0 && !isfinite(cal->body_size))
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "tracking: no detection has two visible nodes, so the animals' size "
                            "cannot be measured; sleap-nn then sizes them from their motion, "
                            "which sleapc does not reproduce: give --mot_param body_size=<px>");
    return SLEAPC_OK;
}

sleapc_status sleapc__mot_calibrate(const mot_video *v, const sleapc_mot_params *p,
                                    mot_calibration *cal)
{
    const size_t cap = (size_t)(v->n > v->n_frames ? v->n : v->n_frames) + 1;
    mot_calib_data c = {0};
    c.diags = sleapc__malloc(cap * sizeof *c.diags);
    c.scores = sleapc__malloc(cap * sizeof *c.scores);
    c.deltas = sleapc__malloc(cap * sizeof *c.deltas);
    sleapc_status st = SLEAPC_OK;
    if (!c.diags || !c.scores || !c.deltas) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
        goto done;
    }
    for (int64_t f = 1; f < v->n_frames; f++)
        if (v->frame_idx[f] - v->frame_idx[f - 1] > 0)
            c.deltas[c.n_deltas++] = v->frame_idx[f] - v->frame_idx[f - 1];
    for (int64_t d = 0; d < v->n; d++) {
        double diag;
        if (sleapc__mot_sized_diag(v, d, &diag))
            c.diags[c.n_diags++] = diag;
        if (v->valid[d] && isfinite(v->score[d]))
            c.scores[c.n_scores++] = v->score[d];
        c.n_valid += v->valid[d];
    }
    if ((st = sleapc__mot_calibrate_data(&c, p, cal)))
        goto done;
    double p99;
    if (sleapc__mot_params_link(p))
        st = sleapc__mot_step_quantiles(v, cal, &cal->step_p95, &p99);
    if (!st && sleapc__mot_needs_appearance(p))
        st = sleapc__mot_calibrate_appearance(v, p, cal);
done:
    sleapc__free(c.diags);
    sleapc__free(c.scores);
    sleapc__free(c.deltas);
    return st;
}

void sleapc__mot_finish_detections(mot_video *v, const sleapc_mot_params *p,
                                   const mot_calibration *cal)
{
    for (int64_t d = 0; d < v->n; d++)
        sleapc__mot_finish_detection(v, d, p, cal);
}

void sleapc__mot_finish_detection(mot_video *v, int64_t d, const sleapc_mot_params *p,
                                  const mot_calibration *cal)
{
    const double body = cal->body_size;
    const double min_box = MIN_BOX_FRACTION * body;
    const double norm = cal->normalizer;
    if (isfinite(norm) && norm > 0) {
        const double s = v->score[d] / norm;
        v->score[d] = s < 0 ? 0.0 : (s > 1 ? 1.0 : s);
    }
    if (!v->valid[d] || !isfinite(body))
        return;
    double *raw = v->raw + 4 * d, *box = v->box + 4 * d;
    /* the first pass floored a degenerate box at 1 px: recover it */
    const double *kp = v->kp + (size_t)d * v->n_nodes * 2;
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int k = 0; k < v->n_nodes; k++) {
        const double x = kp[2 * k], y = kp[2 * k + 1];
        if (!isfinite(x) || !isfinite(y))
            continue;
        lo[0] = x < lo[0] ? x : lo[0];
        lo[1] = y < lo[1] ? y : lo[1];
        hi[0] = x > hi[0] ? x : hi[0];
        hi[1] = y > hi[1] ? y : hi[1];
    }
    const double w = hi[0] - lo[0], h = hi[1] - lo[1];
    if (v->n_visible[d] == 1 || w < MIN_BOX_SIDE || h < MIN_BOX_SIDE) {
        /* degenerate: a square of the body size, raw and padded */
        const double cx = 0.5 * (lo[0] + hi[0]), cy = 0.5 * (lo[1] + hi[1]);
        const double half = 0.5 * (body > MIN_BOX_SIDE ? body : MIN_BOX_SIDE);
        raw[0] = cx - half, raw[1] = cy - half, raw[2] = cx + half, raw[3] = cy + half;
        memcpy(box, raw, 4 * sizeof *box);
    }
    (void)p;
    for (int a = 0; a < 2; a++) {
        const double side = box[a + 2] - box[a];
        const double g = min_box - side > 0 ? 0.5 * (min_box - side) : 0.0;
        box[a] -= g;
        box[a + 2] += g;
    }
}
