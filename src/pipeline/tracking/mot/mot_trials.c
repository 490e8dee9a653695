/* Appearance trials (see mot_trials.h). */
#include "pipeline/tracking/mot/mot_trials.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_f32.h"
#include "pipeline/tracking/mot/mot_nprandom.h"

#define LINK_TOPK 5
#define MAX_TRIAL_STRIDE 10

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

void sleapc__mot_anchor_vectors_free(mot_anchor_vectors *av)
{
    sleapc__free(av->vec);
    sleapc__free(av->ema);
    sleapc__free(av->step);
    sleapc__free(av->key);
    sleapc__free(av->off);
    sleapc__free(av->len);
    memset(av, 0, sizeof *av);
}

sleapc_status sleapc__mot_anchor_vectors(const mot_anchors *A, const float *vec, const bool *has,
                                         int dim, double ema_alpha, mot_anchor_vectors *av)
{
    memset(av, 0, sizeof *av);
    const int64_t NA = A->n_anchors, D = dim;
    int64_t n = 0;
    for (int64_t a = 0; a < A->m; a++)
        n += A->anchor[a] >= 0 && has[a];
    const size_t cap = (size_t)(n > 0 ? n : 1), cap_a = (size_t)(NA > 0 ? NA : 1);
    av->vec = sleapc__malloc(cap * (size_t)D * sizeof *av->vec);
    av->ema = sleapc__malloc(cap * (size_t)D * sizeof *av->ema);
    av->step = sleapc__malloc(cap * sizeof *av->step);
    av->key = sleapc__malloc(cap * sizeof *av->key);
    av->off = sleapc__calloc(cap_a, sizeof *av->off);
    av->len = sleapc__calloc(cap_a, sizeof *av->len);
    if (!av->vec || !av->ema || !av->step || !av->key || !av->off || !av->len) {
        sleapc__mot_anchor_vectors_free(av);
        return nomem();
    }
    av->n = n;
    av->n_anchors = NA;
    av->dim = D;
    if (n == 0)
        return SLEAPC_OK;
    for (int64_t a = 0; a < A->m; a++)
        if (A->anchor[a] >= 0 && has[a])
            av->len[A->anchor[a]]++;
    for (int64_t k = 1; k < NA; k++)
        av->off[k] = av->off[k - 1] + av->len[k - 1];
    int64_t *fill = sleapc__calloc(cap_a, sizeof *fill);
    if (!fill) {
        sleapc__mot_anchor_vectors_free(av);
        return nomem();
    }
    /* the flat order is time order within each anchor */
    for (int64_t a = 0; a < A->m; a++) {
        const int64_t k = A->anchor[a];
        if (k < 0 || !has[a])
            continue;
        const int64_t i = av->off[k] + fill[k]++;
        memcpy(av->vec + i * D, vec + a * D, (size_t)D * sizeof *vec);
        av->step[i] = A->steps[A->pos[a]];
    }
    sleapc__free(fill);
    /* the video's last step + 2 separates the anchors in the key */
    av->key_scale = A->last_step + 2;
    for (int64_t k = 0; k < NA; k++)
        for (int64_t i = av->off[k]; i < av->off[k] + av->len[k]; i++)
            av->key[i] = k * av->key_scale + av->step[i];
    /* running EMA in float32: seeded, then renorm(a ema + (1 - a) vec) */
    const float alpha = (float)ema_alpha, beta = 1.0f - alpha, eps = (float)1e-12;
    float *mixed = sleapc__malloc((size_t)D * sizeof *mixed);
    if (!mixed) {
        sleapc__mot_anchor_vectors_free(av);
        return nomem();
    }
    for (int64_t k = 0; k < NA; k++)
        for (int64_t i = av->off[k]; i < av->off[k] + av->len[k]; i++) {
            float *e = av->ema + i * D;
            const float *x = av->vec + i * D;
            if (i == av->off[k]) {
                memcpy(e, x, (size_t)D * sizeof *e);
                continue;
            }
            const float *prev = e - D;
            for (int64_t c = 0; c < D; c++) {
                const float u = alpha * prev[c], w = beta * x[c];
                mixed[c] = u + w;
            }
            const float norm = sleapc__mot_norm_f32(mixed, (int)D);
            for (int64_t c = 0; c < D; c++)
                e[c] = norm > eps ? mixed[c] / (norm > eps ? norm : eps) : prev[c];
        }
    sleapc__free(mixed);
    return SLEAPC_OK;
}

void sleapc__mot_trials_free(mot_trials *t)
{
    sleapc__free(t->true_ema);
    sleapc__free(t->true_gal);
    sleapc__free(t->lag1);
    sleapc__free(t->true_link_n);
    sleapc__free(t->comp_off);
    sleapc__free(t->comp_ema);
    sleapc__free(t->comp_gal);
    sleapc__free(t->comp_link_n);
    memset(t, 0, sizeof *t);
}

/* Index of the last key <= x (searchsorted right, minus one). */
static int64_t last_at_or_before(const int64_t *key, int64_t n, int64_t x)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (key[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

static int cmp_desc(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x > y ? -1 : (x < y);
}

/* Room for one more trial with nc competitors. */
static sleapc_status grow(mot_trials *t, int64_t nc)
{
    const int Q = t->query_len;
    if (t->n + 1 >= t->cap) {
        const int64_t cap = t->cap ? 2 * t->cap : 256;
        double **f[] = {&t->true_ema, &t->true_gal, &t->lag1};
        for (int i = 0; i < 3; i++) {
            double *p = sleapc__realloc(*f[i], (size_t)cap * sizeof *p);
            if (!p)
                return nomem();
            *f[i] = p;
        }
        double *ln = sleapc__realloc(t->true_link_n, (size_t)cap * Q * sizeof *ln);
        if (!ln)
            return nomem();
        t->true_link_n = ln;
        int64_t *co = sleapc__realloc(t->comp_off, (size_t)(cap + 1) * sizeof *co);
        if (!co)
            return nomem();
        if (!t->comp_off)
            co[0] = 0;
        t->comp_off = co;
        t->cap = cap;
    }
    const int64_t need = t->comp_off[t->n] + nc;
    if (need > t->comp_cap) {
        int64_t cap = t->comp_cap ? 2 * t->comp_cap : 1024;
        while (cap < need)
            cap *= 2;
        double **f[] = {&t->comp_ema, &t->comp_gal};
        for (int i = 0; i < 2; i++) {
            double *p = sleapc__realloc(*f[i], (size_t)cap * sizeof *p);
            if (!p)
                return nomem();
            *f[i] = p;
        }
        double *ln = sleapc__realloc(t->comp_link_n, (size_t)cap * Q * sizeof *ln);
        if (!ln)
            return nomem();
        t->comp_link_n = ln;
        t->comp_cap = cap;
    }
    return SLEAPC_OK;
}

/* The statistics of memory c (gallery [start, end], EMA at end) against
 * the nq queries at q: EMA cosine, gallery max, linking statistic per
 * query length. cos: room for nq * gallery_size. */
static void memory_stats(const mot_anchor_vectors *av, int64_t start, int64_t end, const float *q,
                         int nq, int query_len, double *cos, double *s_ema, double *s_gal,
                         double *lag1, double *link_n)
{
    const int64_t D = av->dim, ng = end - start + 1;
    for (int i = 0; i < nq; i++)
        for (int64_t g = 0; g < ng; g++)
            cos[i * ng + g] = sleapc__mot_dot_f32(q + i * D, av->vec + (start + g) * D, (int)D);
    double mx = -INFINITY;
    for (int64_t g = 0; g < ng; g++)
        mx = cos[g] > mx ? cos[g] : mx;
    *s_gal = mx;
    *lag1 = cos[ng - 1];
    const int64_t k_eff = ng < LINK_TOPK ? ng : LINK_TOPK;
    double run = 0.0;
    for (int i = 0; i < nq; i++) {
        double *row = cos + i * ng;
        qsort(row, (size_t)ng, sizeof *row, cmp_desc);
        double top = 0.0;
        for (int64_t g = 0; g < k_eff; g++)
            top += row[g];
        run += top / (double)k_eff;
        link_n[i] = run / (double)(i + 1);
    }
    for (int i = nq; i < query_len; i++) /* a query cut short keeps its value */
        link_n[i] = link_n[nq - 1];
    double e = 0.0;
    for (int64_t c = 0; c < D; c++)
        e += (double)av->ema[end * D + c] * (double)q[c];
    *s_ema = e;
}

sleapc_status sleapc__mot_run_trials(const mot_anchor_vectors *av, int64_t gap, int gallery_size,
                                     int query_len, int64_t max_trials, uint32_t seed,
                                     mot_trials *out)
{
    memset(out, 0, sizeof *out);
    out->query_len = query_len;
    const int64_t NA = av->n_anchors, D = av->dim, gs = gallery_size;
    /* split points: from the first vector gap steps after the anchor's first */
    int64_t *first = sleapc__malloc((size_t)(NA > 0 ? NA : 1) * sizeof *first);
    int64_t *cand = NULL, *pick = NULL, *comp = NULL, *comp_end = NULL;
    double *cos = NULL;
    sleapc_status st = SLEAPC_OK;
    if (!first)
        return nomem();
    int64_t n_pos = 0;
    for (int64_t a = 0; a < NA; a++) {
        const int64_t lo = av->off[a], n = av->len[a];
        int64_t j = 0;
        while (j < n && av->step[lo + j] < av->step[lo] + gap)
            j++;
        first[a] = j;
        n_pos += n > 0 && n - j > 0 ? n - j : 0;
    }
    int64_t stride = n_pos / (max_trials > 1 ? max_trials : 1);
    stride = stride < 1 ? 1 : (stride > MAX_TRIAL_STRIDE ? MAX_TRIAL_STRIDE : stride);
    int64_t n_cand = 0;
    for (int64_t a = 0; a < NA; a++)
        for (int64_t j = first[a]; j < av->len[a]; j += stride)
            n_cand++;
    cand = sleapc__malloc((size_t)(n_cand > 0 ? n_cand : 1) * 2 * sizeof *cand);
    pick = sleapc__malloc((size_t)(n_cand > 0 ? n_cand : 1) * sizeof *pick);
    comp = sleapc__malloc((size_t)(NA + 1) * sizeof *comp);
    comp_end = sleapc__malloc((size_t)(NA + 1) * sizeof *comp_end);
    cos = sleapc__malloc((size_t)query_len * (size_t)gs * sizeof *cos);
    if (!cand || !pick || !comp || !comp_end || !cos) {
        st = nomem();
        goto done;
    }
    n_cand = 0;
    for (int64_t a = 0; a < NA; a++)
        for (int64_t j = first[a]; j < av->len[a]; j += stride) {
            cand[2 * n_cand] = a;
            cand[2 * n_cand + 1] = av->off[a] + j;
            n_cand++;
        }
    int64_t n_pick = n_cand;
    if (n_cand > max_trials) {
        mot_pcg64 g;
        const uint32_t words[2] = {seed, (uint32_t)gap};
        sleapc__mot_pcg64_seed(&g, words, 2);
        n_pick = max_trials > 0 ? max_trials : 0;
        if ((st = sleapc__mot_choice_sorted(&g, n_cand, n_pick, pick)))
            goto done;
    } else {
        for (int64_t i = 0; i < n_cand; i++)
            pick[i] = i;
    }
    for (int64_t k = 0; k < n_pick; k++) {
        const int64_t a = cand[2 * pick[k]], pos = cand[2 * pick[k] + 1];
        const int64_t w1 = av->step[pos] - gap, lo_a = av->off[a];
        const int64_t end_a = last_at_or_before(av->key, av->n, a * av->key_scale + w1);
        const int64_t start_a = end_a - gs + 1 > lo_a ? end_a - gs + 1 : lo_a;
        const int64_t w0 = av->step[start_a];
        /* competitors: other anchors with a vector in [w0, w1] */
        int nc = 0;
        comp[0] = a;
        comp_end[0] = end_a;
        for (int64_t b = 0; b < NA; b++) {
            if (b == a || av->len[b] == 0)
                continue;
            const int64_t bo = av->off[b], bn = av->len[b];
            if (!(av->step[bo] <= w1 && av->step[bo + bn - 1] >= w0))
                continue;
            const int64_t e = last_at_or_before(av->key, av->n, b * av->key_scale + w1);
            if (e >= bo && av->step[e > 0 ? e : 0] >= w0) {
                nc++;
                comp[nc] = b;
                comp_end[nc] = e;
            }
        }
        if (nc == 0)
            continue;
        if ((st = grow(out, nc)))
            goto done;
        const int64_t q_end =
            pos + query_len < lo_a + av->len[a] ? pos + query_len : lo_a + av->len[a];
        const int nq = (int)(q_end - pos);
        const float *q = av->vec + pos * D;
        const int64_t t = out->n, c0 = out->comp_off[t];
        for (int c = 0; c <= nc; c++) {
            const int64_t start =
                comp_end[c] - gs + 1 > av->off[comp[c]] ? comp_end[c] - gs + 1 : av->off[comp[c]];
            double s_ema, s_gal, lag1;
            double *link_n = c == 0 ? out->true_link_n + t * query_len
                                    : out->comp_link_n + (c0 + c - 1) * query_len;
            memory_stats(av, start, comp_end[c], q, nq, query_len, cos, &s_ema, &s_gal, &lag1,
                         link_n);
            if (c == 0) {
                out->true_ema[t] = s_ema;
                out->true_gal[t] = s_gal;
                out->lag1[t] = lag1;
            } else {
                out->comp_ema[c0 + c - 1] = s_ema;
                out->comp_gal[c0 + c - 1] = s_gal;
            }
        }
        out->comp_off[t + 1] = c0 + nc;
        out->n++;
    }
done:
    sleapc__free(first);
    sleapc__free(cand);
    sleapc__free(pick);
    sleapc__free(comp);
    sleapc__free(comp_end);
    sleapc__free(cos);
    return st;
}
