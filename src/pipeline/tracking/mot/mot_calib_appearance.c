/* Appearance calibration (see mot_calib_appearance.h). */
#include "pipeline/tracking/mot/mot_calib_appearance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_f32.h"
#include "pipeline/tracking/mot/mot_motion.h"
#include "pipeline/tracking/mot/mot_trials.h"

#define MAX_TRIALS 2000 /* calibrate()'s defaults */
#define SEED 0u
#define MIN_TRIALS 100
#define MIN_ASSOC_RANK1 0.95
#define MIN_ASSOC_MARGIN 0.02
#define MIN_LINK_RECALL 0.2

int sleapc__mot_memory_gallery_size(const sleapc_mot_params *p)
{
    const int g = p->tracker == SLEAPC_MOT_DEEPSORT ? p->gallery_budget : p->gallery_size;
    return g > 1 ? g : 1;
}

bool sleapc__mot_uses_appearance(sleapc_mot_tracker t)
{
    return t == SLEAPC_MOT_DEEPSORT || t == SLEAPC_MOT_STRONGSORT || t == SLEAPC_MOT_BOTSORT ||
           t == SLEAPC_MOT_DEEPOCSORT;
}

bool sleapc__mot_needs_appearance(const sleapc_mot_params *p)
{
    return sleapc__mot_uses_appearance(p->tracker) || sleapc__mot_params_link(p);
}

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : (x > y);
}

/* np.quantile (linear) of n values (sorted in place). */
static double quantile(double *x, int64_t n, double q)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return sleapc__mot_quantile_sorted(x, n, q);
}

static double median(double *x, int64_t n)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2.0;
}

/* _flatten's vectors: the valid detections' FrameDetections vectors,
 * renormalized in float32; has[a] false where unusable. */
static bool flat_vectors(const mot_video *v, const mot_anchors *A, float *vec, bool *has)
{
    const int D = v->emb_dim;
    bool any = false;
    for (int64_t a = 0; a < A->m; a++) {
        float *x = vec + (size_t)a * D;
        has[a] = sleapc__mot_det_unit(v, A->det[a], x);
        bool finite = true;
        for (int i = 0; has[a] && i < D; i++)
            finite = finite && isfinite(x[i]);
        const float norm = has[a] && finite ? sleapc__mot_norm_f32(x, D) : 0.0f;
        has[a] = has[a] && finite && norm > (float)1e-12;
        for (int i = 0; i < D; i++)
            x[i] = has[a] ? x[i] / norm : 0.0f;
        any = any || has[a];
    }
    return any;
}

/* Cosines of the same-frame pairs of different animals (no duplicate
 * pair), both with a vector: _same_frame_pairs' neg_cos. */
static int64_t negative_cosines(const mot_video *v, const mot_anchors *A, const float *vec,
                                const bool *has, float *out)
{
    const int D = v->emb_dim;
    int64_t n = 0;
    for (int64_t a = 0; a < A->m;) {
        int64_t e = a;
        while (e < A->m && A->pos[e] == A->pos[a])
            e++;
        for (int64_t i = a; i < e; i++)
            for (int64_t j = i + 1; j < e; j++)
                if (has[i] && has[j] &&
                    !(sleapc__mot_iomin(v->raw + 4 * A->det[i], v->raw + 4 * A->det[j]) > 0.5))
                    out[n++] = sleapc__mot_dot_f32(vec + (size_t)i * D, vec + (size_t)j * D, D);
        a = e;
    }
    return n;
}

/* _link_rule_at: threshold, margin (NaN: none reaches the precision) and
 * recall of one statistic; true_s (T,), comp (per trial comp_off ranges). */
static sleapc_status link_rule_at(const double *true_s, const double *comp, const int64_t *comp_off,
                                  int64_t T, int64_t stride, double *thresh, double *margin,
                                  double *recall)
{
    static const double grid[] = {0.0, 0.01, 0.02, 0.05, 0.1, 0.2};
    const int64_t nc = comp_off[T];
    double *pooled = sleapc__malloc((size_t)(nc > 0 ? nc : 1) * sizeof *pooled);
    double *best = sleapc__malloc((size_t)(T > 0 ? T : 1) * sizeof *best);
    double *second = sleapc__malloc((size_t)(T > 0 ? T : 1) * sizeof *second);
    bool *correct = sleapc__malloc((size_t)(T > 0 ? T : 1) * sizeof *correct);
    if (!pooled || !best || !second || !correct) {
        sleapc__free(pooled);
        sleapc__free(best);
        sleapc__free(second);
        sleapc__free(correct);
        return nomem();
    }
    for (int64_t k = 0; k < nc; k++)
        pooled[k] = comp[k * stride];
    *thresh = quantile(pooled, nc, 0.99);
    for (int64_t t = 0; t < T; t++) {
        double b1 = -INFINITY, b2 = -INFINITY;
        for (int64_t k = comp_off[t]; k < comp_off[t + 1]; k++) {
            const double c = comp[k * stride];
            if (c > b1) {
                b2 = b1;
                b1 = c;
            } else if (c > b2) {
                b2 = c;
            }
        }
        const double s = true_s[t * stride];
        correct[t] = s > b1; /* a tie is not a correct decision */
        best[t] = s > b1 ? s : b1;
        const double lo = s < b1 ? s : b1;
        second[t] = correct[t] ? b1 : (lo > b2 ? lo : b2);
    }
    *margin = *recall = NAN;
    for (size_t g = 0; g < sizeof grid / sizeof *grid; g++) {
        int64_t n_accept = 0, n_correct = 0;
        for (int64_t t = 0; t < T; t++)
            if (best[t] >= *thresh && best[t] - second[t] >= grid[g]) {
                n_accept++;
                n_correct += correct[t];
            }
        if (n_accept && (double)n_correct / (double)n_accept >= 0.99) {
            *margin = grid[g];
            *recall = (double)n_correct / (double)T;
            break;
        }
    }
    sleapc__free(pooled);
    sleapc__free(best);
    sleapc__free(second);
    sleapc__free(correct);
    return SLEAPC_OK;
}

/* The g = 1 statistics: association gates and margins. */
static sleapc_status short_stats(const mot_trials *S, const float *neg, int64_t n_neg,
                                 mot_appearance_calibration *app)
{
    const int64_t T = S->n, nc = S->comp_off[T];
    double *a = sleapc__malloc((size_t)(T + nc + 1) * sizeof *a);
    if (!a)
        return nomem();
    int64_t n_rank1 = 0;
    for (int64_t t = 0; t < T; t++) {
        double mx = -INFINITY;
        for (int64_t k = S->comp_off[t]; k < S->comp_off[t + 1]; k++)
            mx = S->comp_ema[k] > mx ? S->comp_ema[k] : mx;
        n_rank1 += S->true_ema[t] > mx;
        a[t] = S->true_ema[t] - mx;
    }
    app->assoc_rank1 = (double)n_rank1 / (double)T;
    const double q10 = quantile(a, T, 0.1);
    app->m_assoc = q10 > MIN_ASSOC_MARGIN ? q10 : MIN_ASSOC_MARGIN;
    memcpy(a, S->comp_ema, (size_t)nc * sizeof *a);
    app->ema_cos_gate = quantile(a, nc, 0.95);
    app->mu_neg = median(a, nc);
    memcpy(a, S->comp_gal, (size_t)nc * sizeof *a);
    app->gallery_cos_gate = quantile(a, nc, 0.95);
    memcpy(a, S->true_ema, (size_t)T * sizeof *a);
    app->mu_pos = median(a, T);
    if (n_neg > 0) {
        memcpy(a, S->lag1, (size_t)T * sizeof *a);
        /* numpy compares the float32 cosines with the quantile as float32 */
        const float pos_q05 = (float)quantile(a, T, 0.05);
        int64_t hits = 0;
        for (int64_t k = 0; k < n_neg; k++)
            hits += neg[k] >= pos_q05;
        app->neg_collision_rate = (double)hits / (double)n_neg;
    }
    app->for_association = app->assoc_rank1 >= MIN_ASSOC_RANK1;
    sleapc__free(a);
    return SLEAPC_OK;
}

/* The long-gap statistics: the linking rule, full length and per length. */
static sleapc_status link_stats(const mot_trials *L, mot_appearance_calibration *app)
{
    const int Q = L->query_len;
    sleapc_status st = SLEAPC_OK;
    for (int n = 0; n < Q && !st; n++) {
        double r;
        st = link_rule_at(L->true_link_n + n, L->comp_link_n + n, L->comp_off, L->n, Q,
                          &app->link_thresh_by_len[n], &app->link_margin_by_len[n], &r);
    }
    app->n_by_len = Q;
    if (!st)
        st = link_rule_at(L->true_link_n + Q - 1, L->comp_link_n + Q - 1, L->comp_off, L->n, Q,
                          &app->link_thresh, &app->link_margin, &app->link_recall);
    app->for_linking = isfinite(app->link_margin) && app->link_recall >= MIN_LINK_RECALL;
    return st;
}

sleapc_status sleapc__mot_calibrate_appearance(const mot_video *v, const sleapc_mot_params *p,
                                               mot_calibration *cal)
{
    mot_appearance_calibration *app = &cal->app;
    *app = sleapc__mot_appearance_uncalibrated();
    mot_anchors A;
    sleapc_status st = sleapc__mot_anchors(v, cal, &A);
    const int D = v->emb_dim;
    const size_t M = (size_t)(A.m > 0 ? A.m : 1);
    float *vec = NULL, *neg = NULL;
    bool *has = NULL;
    mot_anchor_vectors av = {0};
    mot_trials S = {0}, L = {0};
    app->n_anchors = A.n_anchors;
    if (st || D <= 0 || !v->emb)
        goto done; /* no vectors */
    vec = sleapc__malloc(M * (size_t)D * sizeof *vec);
    has = sleapc__malloc(M * sizeof *has);
    if (!vec || !has) {
        st = nomem();
        goto done;
    }
    if (!flat_vectors(v, &A, vec, has))
        goto done;
    /* room for every same-frame pair */
    int64_t n_pairs = 0;
    for (int64_t a = 0, k = 0; a < A.m; a++) {
        k = a > 0 && A.pos[a] == A.pos[a - 1] ? k + 1 : 0;
        n_pairs += k;
    }
    neg = sleapc__malloc((size_t)(n_pairs > 0 ? n_pairs : 1) * sizeof *neg);
    if (!neg) {
        st = nomem();
        goto done;
    }
    const int64_t n_neg = negative_cosines(v, &A, vec, has, neg);
    app->status = MOT_APPEARANCE_INSUFFICIENT;
    if ((st = sleapc__mot_anchor_vectors(&A, vec, has, D, p->ema_alpha, &av)) || av.n == 0)
        goto done;
    const int gs = sleapc__mot_memory_gallery_size(p);
    if ((st = sleapc__mot_run_trials(&av, 1, gs, MOT_LINK_QUERY_LEN, MAX_TRIALS, SEED, &S)))
        goto done;
    app->n_trials = S.n;
    if (S.n < MIN_TRIALS)
        goto done;
    app->status = MOT_APPEARANCE_OK;
    if ((st = short_stats(&S, neg, n_neg, app)))
        goto done;
    /* the linker's statistic: its gallery length, whatever the tracker's */
    const int long_gap = p->track_buffer > 1 ? p->track_buffer : 1;
    const mot_trials *lt = &S;
    if (!(long_gap == 1 && gs == MOT_LINK_GALLERY_LEN)) {
        if ((st = sleapc__mot_run_trials(&av, long_gap, MOT_LINK_GALLERY_LEN, MOT_LINK_QUERY_LEN,
                                         MAX_TRIALS, SEED, &L)))
            goto done;
        lt = &L;
    }
    if (lt->n >= MIN_TRIALS)
        st = link_stats(lt, app);
done:
    sleapc__mot_trials_free(&S);
    sleapc__mot_trials_free(&L);
    sleapc__mot_anchor_vectors_free(&av);
    sleapc__free(vec);
    sleapc__free(has);
    sleapc__free(neg);
    sleapc__mot_anchors_free(&A);
    return st;
}
