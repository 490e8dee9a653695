/* Closed-set identity linking (linking.py _Linker: close_set,
 * _select_anchors, _fit, _choose, _decision, _join): with max_tracks
 * animals, the best-supported identities present together become anchors;
 * every other tracklet, most constrained first, joins the anchor it never
 * co-occurs with (apart from duplicate detections) by appearance agreement
 * (mot_link_appearance.c), then the geometric cost of its junctions, or is
 * untracked. The queue is Python's
 * heapq step for step: a priority can be NaN (two duplicate fits), and then
 * only the same sift order gives the same pops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "pipeline/tracking/mot/mot_link.h"

#define MAX_CONFLICT_FRACTION 0.05
#define SCORE_EPS 1e-9

enum { FIT_ORDERED = 0, FIT_INSERTION, FIT_DUPLICATE };

/* How one tracklet fits one anchor. */
typedef struct fit {
    bool some; /* false: they co-occur (None) */
    int anchor, kind;
    int *shared_t, *shared_u, *rest; /* detections */
    int n_shared, n_rest;
    int n_conflict, n_far;
    bool gated;
    int tier; /* appearance: 0 agrees, 1 undecidable, 2 disagrees */
    double cost, gap;
} fit;

typedef struct hentry {
    int c0;
    double c1;
    int c2;
    double first;
    int u;
    int64_t stamp;
} hentry;

typedef struct close_ctx {
    mot_linker *L;
    double arena;
    int n_a, *anchors;
    int n_p, *p_off, *p_len, *p_det;
    double *p_first, *p_last;
    fit *fits; /* n_p x n_a */
    int64_t *version, *seen, *stamp;
    bool *done;
    hentry *heap;
    int64_t n_heap, heap_cap;
} close_ctx;

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

static double norm2(const double *a, const double *b)
{
    const double dx = a[0] - b[0], dy = a[1] - b[1];
    return sqrt(dx * dx + dy * dy);
}

static void fit_clear(fit *f)
{
    sleapc__free(f->shared_t);
    sleapc__free(f->shared_u);
    sleapc__free(f->rest);
    memset(f, 0, sizeof *f);
}

static bool is_dup(const mot_linker *L, int a, int b)
{
    const int64_t n = L->n > 0 ? L->n : 1;
    const int64_t key = (int64_t)(a < b ? a : b) * n + (a < b ? b : a);
    int lo = 0, hi = L->n_dups;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (L->dup_keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < L->n_dups && L->dup_keys[lo] == key;
}

/* _junction_cost: 4.5 (dist / r)^2 + 2 ln r with r the gate radius capped
 * at the arena; without a motion scale 4.5 (dist / body)^2 + ln gap. */
static double junction_cost(const close_ctx *C, double gap, double dist)
{
    const mot_linker *L = C->L;
    gap = gap > 1.0 ? gap : 1.0;
    double c;
    if (isfinite(L->step_scale)) {
        const double r = fmin(sleapc__mot_link_radius(L, gap), C->arena);
        const double z = dist / r;
        c = 4.5 * (z * z) + 2.0 * log(r);
    } else {
        const double z = dist / L->body;
        c = 4.5 * (z * z) + log(gap);
    }
    return isfinite(c) ? c : INFINITY;
}

/* Members of a before (count) the first with pos >= p (left) or step > s. */
static int lower_pos(const mot_linker *L, const mot_ilist *mem, int64_t p)
{
    int lo = 0, hi = mem->n;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (L->pos[mem->v[mid]] < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int search_step(const mot_linker *L, const mot_ilist *mem, double s, bool right)
{
    int lo = 0, hi = mem->n;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        const double x = L->step[mem->v[mid]];
        if (right ? x <= s : x < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* _fit: how tracklet t[0..nt) fits anchor a; f->some false when they
 * co-occur beyond a few conflicts. */
static sleapc_status make_fit(const close_ctx *C, const int *t, int nt, int a, fit *f)
{
    const mot_linker *L = C->L;
    const mot_ilist *amem = &L->mem[a];
    fit_clear(f);
    f->anchor = a;
    f->shared_t = sleapc__malloc((size_t)(nt > 0 ? nt : 1) * sizeof *f->shared_t);
    f->shared_u = sleapc__malloc((size_t)(nt > 0 ? nt : 1) * sizeof *f->shared_u);
    f->rest = sleapc__malloc((size_t)(nt > 0 ? nt : 1) * sizeof *f->rest);
    int *seq = sleapc__malloc((size_t)(nt + amem->n + 1) * sizeof *seq);
    if (!f->shared_t || !f->shared_u || !f->rest || !seq) {
        sleapc__free(seq);
        return nomem();
    }
    for (int r = 0; r < nt; r++) {
        const int at = amem->n ? lower_pos(L, amem, L->pos[t[r]]) : 0;
        const int u = amem->n ? amem->v[at < amem->n ? at : amem->n - 1] : -1;
        if (u >= 0 && L->pos[u] == L->pos[t[r]]) {
            f->shared_t[f->n_shared] = t[r];
            f->shared_u[f->n_shared++] = u;
        } else {
            f->rest[f->n_rest++] = t[r];
        }
    }
    for (int s = 0; s < f->n_shared; s++)
        if (!is_dup(L, f->shared_t[s], f->shared_u[s]))
            f->n_conflict++;
    if (f->n_conflict > MAX_CONFLICT_FRACTION * nt) {
        sleapc__free(seq);
        fit_clear(f);
        return SLEAPC_OK; /* two animals: no fit */
    }
    for (int s = 0; s < f->n_shared; s++)
        if (!is_dup(L, f->shared_t[s], f->shared_u[s]) &&
            !(norm2(L->cen + 2 * f->shared_t[s], L->cen + 2 * f->shared_u[s]) < L->body))
            f->n_far++;
    f->some = true;
    f->gated = true;
    f->tier = 1;
    f->gap = 0.0;
    if (f->n_rest == 0) {
        f->kind = FIT_DUPLICATE;
        f->cost = -INFINITY;
        sleapc__free(seq);
        return SLEAPC_OK;
    }
    f->kind = FIT_ORDERED;
    f->cost = INFINITY;
    /* junctions with the anchor's detections around and inside rest's span */
    const int lo = search_step(L, amem, L->step[f->rest[0]], false) - 1;
    const int hi = search_step(L, amem, L->step[f->rest[f->n_rest - 1]], true);
    if (lo >= 0 && hi < amem->n)
        f->kind = FIT_INSERTION;
    const int l0 = lo > 0 ? lo : 0, l1 = hi + 1 < amem->n ? hi + 1 : amem->n;
    /* merge the two time-ordered runs (distinct frames), valid centroids */
    int n = 0, x = l0, y = 0;
    while (x < l1 || y < f->n_rest) {
        const bool take_a =
            y >= f->n_rest || (x < l1 && L->step[amem->v[x]] <= L->step[f->rest[y]]);
        const int d = take_a ? amem->v[x++] : f->rest[y++];
        if (L->valid_c[d])
            seq[n++] = take_a ? -1 - d : d; /* negative: the anchor's */
    }
    bool any = false;
    for (int k = 0; k + 1 < n; k++) {
        if ((seq[k] < 0) == (seq[k + 1] < 0))
            continue;
        const int d0 = seq[k] < 0 ? -1 - seq[k] : seq[k];
        const int d1 = seq[k + 1] < 0 ? -1 - seq[k + 1] : seq[k + 1];
        const double gap = L->step[d1] - L->step[d0];
        const double dist = norm2(L->cen + 2 * d1, L->cen + 2 * d0);
        const double cost = junction_cost(C, gap, dist);
        f->gated = f->gated && sleapc__mot_link_gate_ok(L, gap, dist);
        f->cost = any ? fmax(f->cost, cost) : cost;
        f->gap = any ? fmax(f->gap, gap) : gap;
        any = true;
    }
    sleapc__free(seq);
    f->tier = sleapc__mot_link_fit_tier(L, f->rest, f->n_rest, a);
    return SLEAPC_OK;
}

/* _fit_key order: (appearance tier, far conflicts, cost, gap, anchor
 * name). */
static bool key_lt(const mot_linker *L, const fit *x, const fit *y)
{
    if (x->tier != y->tier)
        return x->tier < y->tier;
    const bool fx = x->n_far > 0, fy = y->n_far > 0;
    if (fx != fy)
        return fx < fy;
    if (x->cost != y->cost)
        return x->cost < y->cost;
    if (x->gap != y->gap)
        return x->gap < y->gap;
    return L->name_rank[x->anchor] < L->name_rank[y->anchor];
}

/* _choose over the fits (skipping index skip): a duplicate first, then the
 * best gated fit, else the best fit appearance agrees with, else for a
 * tracklet longer than track_buffer the best fit appearance does not
 * contradict; -1: untrack. */
static int choose(const mot_linker *L, const fit *fs, int n_a, int skip, int n_dets)
{
    int best = -1;
    for (int pass = 0; pass < 4 && best < 0; pass++) {
        if (pass == 3 && !(n_dets > L->track_buffer))
            break;
        for (int a = 0; a < n_a; a++) {
            const fit *f = &fs[a];
            if (!f->some || a == skip)
                continue;
            if ((pass == 0 && f->kind != FIT_DUPLICATE) || (pass == 1 && !f->gated) ||
                (pass == 2 && f->tier != 0) || (pass == 3 && f->tier != 1))
                continue;
            if (best < 0 || key_lt(L, f, &fs[best]))
                best = a;
        }
    }
    return best;
}

/* _decision: the priority (c0, c1, c2) and the chosen fit (-1: untrack). */
static int decision(const mot_linker *L, const fit *fs, int n_a, int n_dets, hentry *prio)
{
    const int choice = choose(L, fs, n_a, -1, n_dets);
    prio->c2 = -n_dets;
    if (choice < 0) {
        prio->c0 = 0;
        prio->c1 = 0.0;
        return -1;
    }
    const int runner = choose(L, fs, n_a, choice, n_dets);
    if (runner < 0) {
        prio->c0 = 1;
        prio->c1 = 0.0;
        return choice;
    }
    const fit *c = &fs[choice], *r = &fs[runner];
    prio->c0 = 2;
    const bool same = (c->kind == FIT_DUPLICATE) == (r->kind == FIT_DUPLICATE) &&
                      c->gated == r->gated && c->tier == r->tier &&
                      (c->n_far > 0) == (r->n_far > 0);
    /* both duplicates: -inf - -inf is NaN, kept as it is */
    prio->c1 = same ? -(r->cost - c->cost) : -INFINITY;
    return choice;
}

/* Python's tuple order on ((c0, c1, c2), first, u, stamp): the first
 * element that is not == decides by <, so a NaN decides as "not less". */
static bool h_lt(const hentry *x, const hentry *y)
{
    const bool prio_eq = x->c0 == y->c0 && x->c1 == y->c1 && x->c2 == y->c2;
    if (!prio_eq) {
        if (x->c0 != y->c0)
            return x->c0 < y->c0;
        if (!(x->c1 == y->c1))
            return x->c1 < y->c1;
        return x->c2 < y->c2;
    }
    if (x->first != y->first)
        return x->first < y->first;
    if (x->u != y->u)
        return x->u < y->u;
    return x->stamp < y->stamp;
}

/* heapq._siftdown / _siftup. */
static void sift_down(hentry *h, int64_t start, int64_t pos)
{
    const hentry item = h[pos];
    while (pos > start) {
        const int64_t parent = (pos - 1) >> 1;
        if (!h_lt(&item, &h[parent]))
            break;
        h[pos] = h[parent];
        pos = parent;
    }
    h[pos] = item;
}

static void sift_up(hentry *h, int64_t end, int64_t pos)
{
    const int64_t start = pos;
    const hentry item = h[pos];
    int64_t child = 2 * pos + 1;
    while (child < end) {
        const int64_t right = child + 1;
        if (right < end && !h_lt(&h[child], &h[right]))
            child = right;
        h[pos] = h[child];
        pos = child;
        child = 2 * pos + 1;
    }
    h[pos] = item;
    sift_down(h, start, pos);
}

static sleapc_status push(close_ctx *C, int u)
{
    if (C->n_heap == C->heap_cap) {
        const int64_t cap = C->heap_cap ? 2 * C->heap_cap : 64;
        hentry *h = sleapc__realloc(C->heap, (size_t)cap * sizeof *h);
        if (!h)
            return nomem();
        C->heap = h;
        C->heap_cap = cap;
    }
    C->stamp[u]++;
    hentry e;
    decision(C->L, C->fits + (size_t)u * C->n_a, C->n_a, C->p_len[u], &e);
    e.first = C->p_first[u];
    e.u = u;
    e.stamp = C->stamp[u];
    C->heap[C->n_heap++] = e;
    sift_down(C->heap, 0, C->n_heap - 1);
    return SLEAPC_OK;
}

static hentry pop(close_ctx *C)
{
    const hentry last = C->heap[--C->n_heap];
    if (C->n_heap == 0)
        return last;
    const hentry top = C->heap[0];
    C->heap[0] = last;
    sift_up(C->heap, C->n_heap, 0);
    return top;
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* _join: rest (and the tracklet's higher-scoring detections of shared
 * frames) joins the anchor; the other detection of a shared frame is
 * untracked. Returns the number untracked. */
static sleapc_status join(mot_linker *L, const fit *f, int *n_out)
{
    const int a = f->anchor;
    mot_ilist *mem = &L->mem[a];
    *n_out = 0;
    for (int s = 0; s < f->n_shared; s++) {
        const int dt = f->shared_t[s], du = f->shared_u[s];
        if (L->score[dt] > L->score[du] + SCORE_EPS) {
            L->label[du] = -1;
            for (int r = 0; r < mem->n; r++)
                if (mem->v[r] == du) {
                    memmove(mem->v + r, mem->v + r + 1, (size_t)(mem->n - r - 1) * sizeof *mem->v);
                    mem->n--;
                    break;
                }
        } else {
            L->label[dt] = -1;
        }
        ++*n_out;
    }
    sleapc_status st = SLEAPC_OK;
    for (int r = 0; r < f->n_rest && !st; r++)
        st = sleapc__mot_ilist_push(mem, f->rest[r]);
    for (int s = 0; s < f->n_shared && !st; s++)
        if (L->score[f->shared_t[s]] > L->score[f->shared_u[s]] + SCORE_EPS)
            st = sleapc__mot_ilist_push(mem, f->shared_t[s]);
    if (st)
        return st;
    for (int r = 0; r < f->n_rest; r++)
        L->label[f->rest[r]] = a;
    for (int s = 0; s < f->n_shared; s++)
        if (L->score[f->shared_t[s]] > L->score[f->shared_u[s]] + SCORE_EPS)
            L->label[f->shared_t[s]] = a;
    qsort(mem->v, (size_t)mem->n, sizeof *mem->v, cmp_int);
    L->n_dets[a] = mem->n;
    return SLEAPC_OK;
}

/* The other identities' tracklets (split at gaps over track_buffer), in
 * identity order. */
static sleapc_status make_pieces(close_ctx *C, const bool *is_anchor)
{
    mot_linker *L = C->L;
    const size_t N = (size_t)(L->n > 0 ? L->n : 1);
    C->p_off = sleapc__malloc(N * sizeof *C->p_off);
    C->p_len = sleapc__malloc(N * sizeof *C->p_len);
    C->p_det = sleapc__malloc(N * sizeof *C->p_det);
    C->p_first = sleapc__malloc(N * sizeof *C->p_first);
    C->p_last = sleapc__malloc(N * sizeof *C->p_last);
    if (!C->p_off || !C->p_len || !C->p_det || !C->p_first || !C->p_last)
        return nomem();
    const double tb = L->track_buffer > 0 ? L->track_buffer : 0;
    int at = 0;
    for (int k = 0; k < L->m; k++) {
        if (!L->alive[k] || is_anchor[k])
            continue;
        const mot_ilist *mem = &L->mem[k];
        for (int r = 0; r < mem->n; r++) {
            if (r == 0 || L->step[mem->v[r]] - L->step[mem->v[r - 1]] > tb) {
                C->p_off[C->n_p] = at;
                C->p_len[C->n_p++] = 0;
            }
            C->p_det[at++] = mem->v[r];
            C->p_len[C->n_p - 1]++;
        }
    }
    for (int u = 0; u < C->n_p; u++) {
        C->p_first[u] = L->step[C->p_det[C->p_off[u]]];
        C->p_last[u] = L->step[C->p_det[C->p_off[u] + C->p_len[u] - 1]];
    }
    return SLEAPC_OK;
}

static sleapc_status refit(close_ctx *C, int u, int ai)
{
    C->seen[(size_t)u * C->n_a + ai] = C->version[ai];
    return make_fit(C, C->p_det + C->p_off[u], C->p_len[u], C->anchors[ai],
                    &C->fits[(size_t)u * C->n_a + ai]);
}

/* The heap loop of close_set. */
static sleapc_status run(close_ctx *C, int *n_forced, int *n_untracked)
{
    mot_linker *L = C->L;
    sleapc_status st = SLEAPC_OK;
    for (int u = 0; u < C->n_p && !st; u++)
        st = push(C, u);
    const double reach = L->track_buffer > 1 ? L->track_buffer : 1;
    while (!st && C->n_heap > 0) {
        const hentry e = pop(C);
        const int u = e.u;
        if (C->done[u] || e.stamp != C->stamp[u])
            continue;
        fit *fs = C->fits + (size_t)u * C->n_a;
        bool stale = false;
        for (int ai = 0; ai < C->n_a && !st; ai++)
            if (C->seen[(size_t)u * C->n_a + ai] != C->version[ai]) {
                stale = true;
                st = refit(C, u, ai);
            }
        if (st)
            break;
        if (stale) {
            hentry now;
            decision(L, fs, C->n_a, C->p_len[u], &now);
            /* the tuple order on the priority alone */
            now.first = e.first;
            now.u = e.u;
            now.stamp = e.stamp;
            const bool eq = now.c0 == e.c0 && now.c1 == e.c1 && now.c2 == e.c2;
            if (!eq && h_lt(&e, &now)) {
                st = push(C, u);
                continue;
            }
        }
        C->done[u] = true;
        hentry prio;
        const int choice = decision(L, fs, C->n_a, C->p_len[u], &prio);
        if (choice < 0) {
            for (int r = 0; r < C->p_len[u]; r++)
                L->label[C->p_det[C->p_off[u] + r]] = -1;
            *n_untracked += C->p_len[u];
            continue;
        }
        int n_out = 0;
        if ((st = join(L, &fs[choice], &n_out)))
            break;
        *n_untracked += n_out;
        *n_forced += fs[choice].kind != FIT_DUPLICATE;
        /* re-fit now the tracklets around the join */
        C->version[choice]++;
        for (int v = 0; v < C->n_p && !st; v++) {
            if (C->done[v] || !(C->p_last[v] >= C->p_first[u] - reach) ||
                !(C->p_first[v] <= C->p_last[u] + reach))
                continue;
            if (!(st = refit(C, v, choice)))
                st = push(C, v);
        }
    }
    return st;
}

sleapc_status sleapc__mot_link_close(mot_linker *L, int n_max, int *n_forced, int *n_untracked)
{
    *n_forced = *n_untracked = 0;
    close_ctx C = {.L = L};
    int n_alive = 0;
    for (int k = 0; k < L->m; k++)
        n_alive += L->alive[k];
    if (n_alive <= n_max)
        return SLEAPC_OK;
    for (int d = 0; d < L->n; d++)
        L->owner[d] = L->label[d];
    /* arena: the diagonal of every centroid's bounding box, at least a body */
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    bool any = false;
    for (int d = 0; d < L->n; d++) {
        if (!L->valid_c[d])
            continue;
        any = true;
        for (int a = 0; a < 2; a++) {
            lo[a] = fmin(lo[a], L->cen[2 * d + a]);
            hi[a] = fmax(hi[a], L->cen[2 * d + a]);
        }
    }
    C.arena = fmax(any ? hypot(hi[0] - lo[0], hi[1] - lo[1]) : 0.0, L->body);
    bool *is_anchor = sleapc__calloc((size_t)L->m, sizeof *is_anchor);
    C.anchors = sleapc__malloc((size_t)(n_max > 0 ? n_max : 1) * sizeof *C.anchors);
    sleapc_status st =
        is_anchor && C.anchors ? sleapc__mot_link_anchors(L, n_max, C.anchors, &C.n_a) : nomem();
    if (!st) {
        for (int i = 0; i < C.n_a; i++)
            is_anchor[C.anchors[i]] = true;
        st = make_pieces(&C, is_anchor);
    }
    if (!st) {
        const size_t np = (size_t)(C.n_p > 0 ? C.n_p : 1), na = (size_t)(C.n_a > 0 ? C.n_a : 1);
        C.fits = sleapc__calloc(np * na, sizeof *C.fits);
        C.seen = sleapc__calloc(np * na, sizeof *C.seen);
        C.version = sleapc__calloc(na, sizeof *C.version);
        C.stamp = sleapc__calloc(np, sizeof *C.stamp);
        C.done = sleapc__calloc(np, sizeof *C.done);
        if (!C.fits || !C.seen || !C.version || !C.stamp || !C.done)
            st = nomem();
    }
    for (int u = 0; u < C.n_p && !st; u++)
        for (int ai = 0; ai < C.n_a && !st; ai++)
            st = refit(&C, u, ai);
    if (!st)
        st = run(&C, n_forced, n_untracked);
    if (!st)
        for (int k = 0; k < L->m; k++)
            if (L->alive[k] && !is_anchor[k]) {
                L->alive[k] = false;
                L->mem[k].n = 0;
            }
    if (C.fits)
        for (size_t i = 0; i < (size_t)C.n_p * (size_t)C.n_a; i++)
            fit_clear(&C.fits[i]);
    sleapc__free(C.fits);
    sleapc__free(C.seen);
    sleapc__free(C.version);
    sleapc__free(C.stamp);
    sleapc__free(C.done);
    sleapc__free(C.heap);
    sleapc__free(C.anchors);
    sleapc__free(C.p_off);
    sleapc__free(C.p_len);
    sleapc__free(C.p_det);
    sleapc__free(C.p_first);
    sleapc__free(C.p_last);
    sleapc__free(is_anchor);
    return st;
}
