/* The appearance part of identity linking (linking.py): gated vectors
 * (confident, mostly visible, isolated detections), galleries, the linking
 * statistic s_link, the calibrated rule per query length, the open set's
 * appearance candidates and margin, and the closed set's appearance tier.
 * Sums follow numpy's reduction order (the first element, then the
 * pairwise sum of the rest) so that a statistic at a threshold decides the
 * same way. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/np_sum.h"
#include "pipeline/tracking/mot/mot_assoc.h"
#include "pipeline/tracking/mot/mot_link.h"

#define ISOLATION_IOU 0.1
#define AMBIGUITY_IOU 0.1
#define MIN_VISIBLE_FRACTION 0.5
#define LINK_TOP_K 5
#define MIN_BOX_SIDE 1.0
#define MIN_APPEARANCE_CANDIDATES 8
#define MAX_APPEARANCE_CANDIDATES 64
#define SCORE_EPS 1e-9

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

/* np.add.reduce of a contiguous array: the first element plus the rest. */
static double np_sum(const double *a, int n)
{
    return n <= 0 ? 0.0 : a[0] + sleapc__np_pairwise_sum(a + 1, n - 1);
}

/* numpy's pairwise sum of the squares of a[0..n) (float32; blocks of
 * 128 split in halves). */
static float pairwise_sq(const float *a, int n)
{
    if (n < 8) {
        float r = 0.0f;
        for (int i = 0; i < n; i++)
            r += a[i] * a[i];
        return r;
    }
    if (n > 128) {
        const int h = (n / 2) & ~7;
        return pairwise_sq(a, h) + pairwise_sq(a + h, n - h);
    }
    float r[8];
    for (int j = 0; j < 8; j++)
        r[j] = a[j] * a[j];
    int i = 8;
    for (; i < n - (n % 8); i += 8)
        for (int j = 0; j < 8; j++)
            r[j] += a[i + j] * a[i + j];
    float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++)
        res += a[i] * a[i];
    return res;
}

/* The padded box the linker tests isolation and overlaps on: the raw
 * extent padded by box_padding of its longer side; a degenerate pose (one
 * node, or a side under 1 px) is the body-size square, unpadded. */
static void link_box(const mot_video *v, int64_t d, double padding, double body, double out[4])
{
    if (!v->valid[d]) {
        out[0] = out[1] = out[2] = out[3] = NAN;
        return;
    }
    const double *kp = v->kp + (size_t)d * v->n_nodes * 2;
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int k = 0; k < v->n_nodes; k++) {
        const double x = kp[2 * k], y = kp[2 * k + 1];
        if (!isfinite(x) || !isfinite(y))
            continue;
        lo[0] = fmin(lo[0], x), lo[1] = fmin(lo[1], y);
        hi[0] = fmax(hi[0], x), hi[1] = fmax(hi[1], y);
    }
    const double w = hi[0] - lo[0], h = hi[1] - lo[1];
    if (v->n_visible[d] == 1 || w < MIN_BOX_SIDE || h < MIN_BOX_SIDE) {
        const double cx = 0.5 * (lo[0] + hi[0]), cy = 0.5 * (lo[1] + hi[1]);
        const double half = 0.5 * fmax(body, MIN_BOX_SIDE);
        out[0] = cx - half, out[1] = cy - half, out[2] = cx + half, out[3] = cy + half;
        return;
    }
    const double pad = padding * fmax(w, h);
    out[0] = lo[0] - pad, out[1] = lo[1] - pad, out[2] = hi[0] + pad, out[3] = hi[1] + pad;
}

/* Detection d's vector re-normalised in float64 and stored as float32, as
 * extract_detections keeps it; false when unusable (non-finite, zero). */
static bool usable_vector(const mot_video *v, int64_t d, float *out)
{
    if (!v->emb || v->emb_dim <= 0)
        return false;
    const float *e = v->emb + (size_t)d * v->emb_dim;
    double ss = 0.0;
    for (int i = 0; i < v->emb_dim; i++)
        ss += (double)e[i] * (double)e[i];
    const double norm = sqrt(ss);
    if (!isfinite(norm) || norm <= 0.0)
        return false;
    for (int i = 0; i < v->emb_dim; i++)
        out[i] = (float)((double)e[i] / norm);
    return true;
}

static sleapc_status push_overlap(mot_linker *L, int a, int b)
{
    if (L->n_ov == L->ov_cap) {
        const int cap = L->ov_cap ? 2 * L->ov_cap : 64;
        int *na = sleapc__realloc(L->ov_a, (size_t)cap * sizeof *na);
        if (na)
            L->ov_a = na;
        int *nb = sleapc__realloc(L->ov_b, (size_t)cap * sizeof *nb);
        if (nb)
            L->ov_b = nb;
        if (!na || !nb)
            return nomem();
        L->ov_cap = cap;
    }
    L->ov_a[L->n_ov] = a;
    L->ov_b[L->n_ov++] = b;
    L->in_event[a] = L->in_event[b] = true;
    return SLEAPC_OK;
}

sleapc_status sleapc__mot_link_gate_frame(mot_linker *L, const mot_video *v,
                                          const sleapc_mot_params *p, int64_t f, int o, int k)
{
    const int c = v->count[f];
    const int64_t d0 = v->first[f];
    double *box = sleapc__malloc((size_t)(4 * c + c * c) * sizeof *box);
    if (!box)
        return nomem();
    double *iou = box + 4 * c;
    for (int i = 0; i < c; i++)
        link_box(v, d0 + i, p->box_padding, L->body, box + 4 * i);
    sleapc__mot_iou(box, c, box, c, iou);
    sleapc_status st = SLEAPC_OK;
    for (int t = 0; t < k; t++) {
        const int x = o + t, i = (int)(L->det[x] - d0);
        L->gated[x] = false;
        L->in_event[x] = false;
        bool isolated = true;
        for (int j = 0; j < c && isolated; j++)
            isolated = j == i || iou[i * c + j] < ISOLATION_IOU;
        const int nn = v->n_nodes > 1 ? v->n_nodes : 1;
        const bool visible = (double)v->n_visible[L->det[x]] / nn >= MIN_VISIBLE_FRACTION;
        if (L->vec && v->valid[L->det[x]] && v->score[L->det[x]] >= p->track_high_threshold &&
            visible && isolated)
            L->gated[x] = usable_vector(v, L->det[x], L->vec + (size_t)x * L->dim);
    }
    /* overlaps between different identities: the ambiguity events' edges */
    for (int a = 0; a < k && !st; a++)
        for (int b = a + 1; b < k && !st; b++) {
            const int ia = (int)(L->det[o + a] - d0), ib = (int)(L->det[o + b] - d0);
            if (iou[ia * c + ib] >= AMBIGUITY_IOU && L->label[o + a] != L->label[o + b])
                st = push_overlap(L, o + a, o + b);
        }
    sleapc__free(box);
    return st;
}

void sleapc__mot_link_rule_tables(mot_linker *L, const mot_appearance_calibration *app)
{
    const int q = MOT_LINK_QUERY_LEN;
    for (int n = 0; n < q; n++) {
        const int at = n < app->n_by_len - 1 ? n : app->n_by_len - 1;
        L->thresh_n[n] = app->n_by_len > 0 ? app->link_thresh_by_len[at] : app->link_thresh;
        L->margin_n[n] = app->n_by_len > 0 ? app->link_margin_by_len[at] : app->link_margin;
        if (!isfinite(L->thresh_n[n]) || !isfinite(L->margin_n[n]))
            L->thresh_n[n] = L->margin_n[n] = NAN;
    }
}

void sleapc__mot_link_rule(const mot_linker *L, int n, double *thresh, double *margin)
{
    const int q = MOT_LINK_QUERY_LEN;
    n = (n < 1 ? 1 : n) < q ? (n < 1 ? 1 : n) : q;
    *thresh = L->thresh_n[n - 1];
    *margin = L->margin_n[n - 1];
}

/* The top-k cosines of query detection q against g[0..ng), descending. */
static int top_cos(const mot_linker *L, int q, const int *g, int ng, double *top)
{
    const float *x = L->vec + (size_t)q * L->dim;
    double cos[MOT_LINK_GALLERY_LEN];
    for (int t = 0; t < ng; t++) {
        const float *y = L->vec + (size_t)g[t] * L->dim;
        double s = 0.0;
        for (int i = 0; i < L->dim; i++)
            s += (double)x[i] * (double)y[i];
        cos[t] = s;
    }
    const int kk = ng < LINK_TOP_K ? ng : LINK_TOP_K;
    for (int r = 0; r < kk; r++) {
        int best = r;
        for (int t = r + 1; t < ng; t++)
            best = cos[t] > cos[best] ? t : best;
        const double s = cos[r];
        cos[r] = cos[best];
        cos[best] = s;
        top[r] = cos[r];
    }
    return kk;
}

double sleapc__mot_link_s_link(const mot_linker *L, const int *q, int nq, const int *g, int ng)
{
    if (nq <= 0 || ng <= 0)
        return NAN;
    double top[MOT_LINK_QUERY_LEN * LINK_TOP_K];
    int n = 0;
    for (int r = 0; r < nq && r < MOT_LINK_QUERY_LEN; r++)
        n += top_cos(L, q[r], g, ng < MOT_LINK_GALLERY_LEN ? ng : MOT_LINK_GALLERY_LEN, top + n);
    return np_sum(top, n) / n;
}

int sleapc__mot_link_head(const mot_linker *L, int k, int *out)
{
    int n = 0;
    const mot_ilist *mem = &L->mem[k];
    for (int r = 0; r < mem->n && n < MOT_LINK_QUERY_LEN; r++)
        if (L->gated[mem->v[r]])
            out[n++] = mem->v[r];
    return n;
}

int sleapc__mot_link_tail(const mot_linker *L, int k, int *out)
{
    int n = 0;
    const mot_ilist *mem = &L->mem[k];
    for (int r = mem->n - 1; r >= 0 && n < MOT_LINK_GALLERY_LEN; r--)
        if (L->gated[mem->v[r]])
            out[n++] = mem->v[r];
    for (int a = 0, b = n - 1; a < b; a++, b--) {
        const int s = out[a];
        out[a] = out[b];
        out[b] = s;
    }
    return n;
}

double sleapc__mot_link_pair_score(const mot_linker *L, int i, int j)
{
    if (!L->use_app)
        return NAN;
    int head[MOT_LINK_QUERY_LEN], tail[MOT_LINK_GALLERY_LEN];
    const int nh = sleapc__mot_link_head(L, j, head);
    const int nt = sleapc__mot_link_tail(L, i, tail);
    if (nh == 0 || nt == 0)
        return NAN;
    /* per query the mean of its top-k, then their mean */
    double per_q[MOT_LINK_QUERY_LEN], top[LINK_TOP_K];
    for (int r = 0; r < nh; r++) {
        const int kk = top_cos(L, head[r], tail, nt, top);
        per_q[r] = np_sum(top, kk) / kk;
    }
    return np_sum(per_q, nh) / nh;
}

/* Gated members of h before step s (the last 30) or after it (the first
 * 10); the count. */
static int gated_before(const mot_linker *L, int h, double s, int *out)
{
    const mot_ilist *mem = &L->mem[h];
    int n = 0;
    for (int r = mem->n - 1; r >= 0 && n < MOT_LINK_GALLERY_LEN; r--) {
        const int d = mem->v[r];
        if (L->gated[d] && L->step[d] < s)
            out[n++] = d;
    }
    for (int a = 0, b = n - 1; a < b; a++, b--) {
        const int t = out[a];
        out[a] = out[b];
        out[b] = t;
    }
    return n;
}

static int gated_after(const mot_linker *L, int h, double s, int *out)
{
    const mot_ilist *mem = &L->mem[h];
    int n = 0;
    for (int r = 0; r < mem->n && n < MOT_LINK_QUERY_LEN; r++) {
        const int d = mem->v[r];
        if (L->gated[d] && L->step[d] > s)
            out[n++] = d;
    }
    return n;
}

/* _junction_score: k against host h across the junction at k's start
 * (h's gallery right before k) or end (h's query right after k). */
static double junction_score(const mot_linker *L, int h, int k, bool start)
{
    int a[MOT_LINK_GALLERY_LEN], b[MOT_LINK_GALLERY_LEN];
    if (start) {
        const int ng = gated_before(L, h, L->first[k], a);
        const int nq = sleapc__mot_link_head(L, k, b);
        return sleapc__mot_link_s_link(L, b, nq, a, ng);
    }
    const int nq = gated_after(L, h, L->last[k], a);
    const int ng = sleapc__mot_link_tail(L, k, b);
    return sleapc__mot_link_s_link(L, a, nq, b, ng);
}

/* _cooccur: whether live identity x overlaps k in time. */
static bool cooccur(const mot_linker *L, int x, int k)
{
    return L->alive[x] && !(L->last[x] < L->first[k] || L->last[k] < L->first[x]);
}

bool sleapc__mot_link_margin_ok(mot_linker *L, int i, int j, double score)
{
    double best = -INFINITY; /* np.nanmax over the competitors */
    for (int t = 0; t < L->cols[j].n; t++) {
        const int p = L->cols[j].v[t];
        if (L->plive[p] && L->pi[p] != i && isfinite(L->pscore[p]) && cooccur(L, L->pi[p], i))
            best = fmax(best, L->pscore[p]);
    }
    for (int t = 0; t < L->rows[i].n; t++) {
        const int p = L->rows[i].v[t];
        if (L->plive[p] && L->pj[p] != j && isfinite(L->pscore[p]) && cooccur(L, L->pj[p], j))
            best = fmax(best, L->pscore[p]);
    }
    /* hosts that could take j's start or i's end inside one of their gaps */
    double g1, g2, d1, d2;
    for (int side = 0; side < 2; side++) {
        const int k = side ? i : j, other = side ? j : i;
        for (int h = 0; h < L->m; h++) {
            if (!L->alive[h] || !(L->first[h] < L->first[k]) || !(L->last[h] > L->last[k]))
                continue;
            if (h == other || !cooccur(L, h, other) ||
                !sleapc__mot_link_gap_fits(L, h, k, &g1, &g2, &d1, &d2))
                continue;
            if (!sleapc__mot_link_gate_ok(L, side ? g2 : g1, side ? d2 : d1))
                continue;
            const double s = junction_score(L, h, k, !side);
            if (!isnan(s))
                best = fmax(best, s);
        }
    }
    if (!isfinite(best))
        return true;
    int head[MOT_LINK_QUERY_LEN];
    double thresh, margin;
    sleapc__mot_link_rule(L, sleapc__mot_link_head(L, j, head), &thresh, &margin);
    return score - best >= margin - SCORE_EPS;
}

/* The unit mean vector (float32, numpy's order) of vectors ds[0..n). */
static void mean_unit(const mot_linker *L, const int *ds, int n, float *out)
{
    const int D = L->dim;
    for (int i = 0; i < D; i++)
        out[i] = L->vec[(size_t)ds[0] * D + i];
    for (int r = 1; r < n; r++)
        for (int i = 0; i < D; i++)
            out[i] += L->vec[(size_t)ds[r] * D + i];
    for (int i = 0; i < D; i++)
        out[i] /= (float)n;
    const float norm = sqrtf(out[0] * out[0] + pairwise_sq(out + 1, D - 1));
    const float div = norm > 1e-12f ? norm : 1e-12f;
    for (int i = 0; i < D; i++)
        out[i] /= div;
}

typedef struct cand {
    float sim;
    int idx;
} cand;

static int cmp_cand(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->sim != y->sim)
        return x->sim > y->sim ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static sleapc_status push_pair(int **ii, int **jj, int *n, int *cap, int i, int j)
{
    if (*n == *cap) {
        const int c = *cap ? 2 * *cap : 256;
        int *a = sleapc__realloc(*ii, (size_t)c * sizeof *a);
        if (a)
            *ii = a;
        int *b = sleapc__realloc(*jj, (size_t)c * sizeof *b);
        if (b)
            *jj = b;
        if (!a || !b)
            return nomem();
        *cap = c;
    }
    (*ii)[*n] = i;
    (*jj)[(*n)++] = j;
    return SLEAPC_OK;
}

/* The proxy similarity of row identity i's tail mean (a) and column
 * identity j's head mean (b); -inf where the pair is not an ordered,
 * feasible junction. */
static float proxy_sim(const mot_linker *L, int i, int j, const float *a, const float *b)
{
    const double gap = L->first[j] - L->last[i];
    const double dx = L->start_c[2 * j] - L->end_c[2 * i];
    const double dy = L->start_c[2 * j + 1] - L->end_c[2 * i + 1];
    const double dist = sqrt(dx * dx + dy * dy);
    const bool ok = gap > 0 && (sleapc__mot_link_gate_ok(L, gap, dist) ||
                                (L->use_app && gap > L->track_buffer));
    if (!ok)
        return -INFINITY;
    double s = 0.0;
    for (int t = 0; t < L->dim; t++)
        s += (double)a[t] * (double)b[t];
    return (float)s;
}

/* Inserts x into the best-first list top[0..*n) of at most k entries. */
static void keep_best(cand *top, int *n, int k, cand x)
{
    if (*n == k && cmp_cand(&x, &top[k - 1]) >= 0)
        return;
    int at = *n < k ? (*n)++ : k - 1;
    while (at > 0 && cmp_cand(&x, &top[at - 1]) < 0) {
        top[at] = top[at - 1];
        at--;
    }
    top[at] = x;
}

/* The most identities tracked in one frame (at least 1). */
static sleapc_status max_concurrent(const mot_linker *L, int *out)
{
    *out = 1;
    if (L->n == 0)
        return SLEAPC_OK;
    int *per_frame = sleapc__calloc((size_t)(L->pos[L->n - 1] + 1), sizeof *per_frame);
    if (!per_frame)
        return nomem();
    for (int d = 0; d < L->n; d++)
        if (L->label[d] >= 0 && ++per_frame[L->pos[d]] > *out)
            *out = per_frame[L->pos[d]];
    sleapc__free(per_frame);
    return SLEAPC_OK;
}

sleapc_status sleapc__mot_link_app_candidates(const mot_linker *L, int **ii, int **jj, int *n,
                                              int *cap)
{
    const int m = L->m > 0 ? L->m : 1, D = L->dim;
    int k_app = 1;
    sleapc_status st = max_concurrent(L, &k_app);
    if (st)
        return st;
    k_app *= 2;
    k_app = k_app < MIN_APPEARANCE_CANDIDATES ? MIN_APPEARANCE_CANDIDATES : k_app;
    k_app = k_app > MAX_APPEARANCE_CANDIDATES ? MAX_APPEARANCE_CANDIDATES : k_app;
    int *ids = sleapc__malloc((size_t)m * sizeof *ids);
    float *mu = sleapc__malloc((size_t)m * 2 * D * sizeof *mu);
    cand *row = sleapc__malloc((size_t)k_app * sizeof *row);
    cand *col = sleapc__malloc((size_t)m * k_app * sizeof *col);
    int *n_col = sleapc__calloc((size_t)m, sizeof *n_col);
    if (!ids || !mu || !row || !col || !n_col) {
        st = nomem();
        goto done;
    }
    /* rows (tails) and columns (heads) are the same identities: the live
     * ones with a gated vector */
    int nk = 0;
    int buf[MOT_LINK_GALLERY_LEN];
    for (int k = 0; k < L->m; k++) {
        if (!L->alive[k])
            continue;
        const int nt = sleapc__mot_link_tail(L, k, buf);
        if (nt == 0)
            continue;
        mean_unit(L, buf, nt, mu + (size_t)nk * 2 * D);
        mean_unit(L, buf, sleapc__mot_link_head(L, k, buf), mu + (size_t)nk * 2 * D + D);
        ids[nk++] = k;
    }
    /* each row's best successors now, each column's best predecessors
     * gathered over the rows */
    for (int r = 0; r < nk && !st; r++) {
        int n_row = 0;
        for (int q = 0; q < nk; q++) {
            const float sim =
                proxy_sim(L, ids[r], ids[q], mu + (size_t)r * 2 * D, mu + (size_t)q * 2 * D + D);
            if (!isfinite(sim))
                continue;
            keep_best(row, &n_row, k_app, (cand){sim, q});
            keep_best(col + (size_t)q * k_app, &n_col[q], k_app, (cand){sim, r});
        }
        for (int t = 0; t < n_row && !st; t++)
            st = push_pair(ii, jj, n, cap, ids[r], ids[row[t].idx]);
    }
    for (int q = 0; q < nk && !st; q++)
        for (int t = 0; t < n_col[q] && !st; t++)
            st = push_pair(ii, jj, n, cap, ids[col[(size_t)q * k_app + t].idx], ids[q]);
done:
    sleapc__free(ids);
    sleapc__free(mu);
    sleapc__free(row);
    sleapc__free(col);
    sleapc__free(n_col);
    return st;
}

int sleapc__mot_link_fit_tier(const mot_linker *L, const int *rest, int n_rest, int a)
{
    if (!L->use_app)
        return 1;
    int rg_head[MOT_LINK_QUERY_LEN], rg_tail[MOT_LINK_GALLERY_LEN];
    int nh = 0, nt = 0, n_g = 0;
    for (int r = 0; r < n_rest; r++)
        if (L->gated[rest[r]]) {
            if (nh < MOT_LINK_QUERY_LEN)
                rg_head[nh++] = rest[r];
            n_g++;
        }
    if (n_g == 0)
        return 1;
    for (int r = n_rest - 1; r >= 0 && nt < MOT_LINK_GALLERY_LEN; r--)
        if (L->gated[rest[r]])
            rg_tail[nt++] = rest[r];
    for (int x = 0, y = nt - 1; x < y; x++, y--) {
        const int t = rg_tail[x];
        rg_tail[x] = rg_tail[y];
        rg_tail[y] = t;
    }
    double scores[2];
    int n_s = 0, min_q = MOT_LINK_QUERY_LEN + 1;
    int g[MOT_LINK_GALLERY_LEN];
    const int nb = gated_before(L, a, L->step[rest[0]], g);
    if (nb > 0) {
        scores[n_s++] = sleapc__mot_link_s_link(L, rg_head, nh, g, nb);
        min_q = nh < min_q ? nh : min_q;
    }
    const int na = gated_after(L, a, L->step[rest[n_rest - 1]], g);
    if (na > 0) {
        scores[n_s++] = sleapc__mot_link_s_link(L, g, na, rg_tail, nt);
        min_q = na < min_q ? na : min_q;
    }
    if (n_s == 0)
        return 1;
    double thresh, margin;
    sleapc__mot_link_rule(L, min_q, &thresh, &margin);
    if (!isfinite(thresh))
        return 1;
    return np_sum(scores, n_s) / n_s >= thresh ? 0 : 2;
}
