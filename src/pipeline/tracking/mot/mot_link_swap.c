/* Swap correction at crossings (linking.py _Linker.ambiguity_events,
 * correct_swaps, _relabel_after): the ambiguity events are the maximal
 * spans of frames where identities' padded boxes overlap (a chain of
 * crossings is one event); around each, every identity's vectors right
 * after the event are scored against every identity's gallery from before
 * it, and the best permutation (scipy's linear_sum_assignment) relabels
 * the moved identities' later detections when appearance prefers it by the
 * calibrated margin. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "layers/ops/hungarian.h"
#include "pipeline/tracking/mot/mot_link.h"

#define MAX_EVENT_IDENTITIES 4
#define SCORE_EPS 1e-9

typedef struct event {
    int64_t start, end;
    mot_ilist labels, dets;
    int min_det;
} event;

typedef struct events {
    event *v;
    int n, cap;
} events;

static sleapc_status nomem(void)
{
    return sleapc__fail(SLEAPC_ERR_NOMEM, "tracking: out of memory");
}

static bool has(const mot_ilist *l, int x)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i] == x)
            return true;
    return false;
}

static sleapc_status add_unique(mot_ilist *l, int x)
{
    return has(l, x) ? SLEAPC_OK : sleapc__mot_ilist_push(l, x);
}

static bool share_label(const event *a, const event *b)
{
    for (int i = 0; i < a->labels.n; i++)
        if (has(&b->labels, a->labels.v[i]))
            return true;
    return false;
}

/* Union-find over the labels of one frame's overlaps (few). */
typedef struct uf {
    int *lab, *par, n;
} uf;

static int uf_find(uf *u, int x)
{
    int i = 0;
    while (i < u->n && u->lab[i] != x)
        i++;
    if (i == u->n) {
        u->lab[u->n] = x;
        u->par[u->n++] = x;
    }
    for (;;) {
        int a = 0;
        while (u->lab[a] != x)
            a++;
        if (u->par[a] == x)
            return x;
        /* path halving: parent[x] = parent[parent[x]] */
        const int p = u->par[a];
        int b = 0;
        while (u->lab[b] != p)
            b++;
        u->par[a] = u->par[b];
        x = u->par[a];
    }
}

static sleapc_status new_event(events *E, int64_t p, int *at)
{
    if (E->n == E->cap) {
        const int cap = E->cap ? 2 * E->cap : 32;
        event *v = sleapc__realloc(E->v, (size_t)cap * sizeof *v);
        if (!v)
            return nomem();
        E->v = v;
        E->cap = cap;
    }
    *at = E->n++;
    E->v[*at] = (event){.start = p, .end = p};
    return SLEAPC_OK;
}

static void remove_at(int *list, int *n, int x)
{
    int w = 0;
    for (int r = 0; r < *n; r++)
        if (list[r] != x)
            list[w++] = list[r];
    *n = w;
}

/* One frame's overlaps ov[s, e) joined into the live events. alive marks
 * the events not absorbed into another. */
static sleapc_status frame_events(const mot_linker *L, events *E, int s, int e, int *active,
                                  int *n_active, int *current, bool **alive, int *alive_cap)
{
    const int ne = e - s;
    int *buf = sleapc__malloc((size_t)(8 * ne + 1) * sizeof *buf);
    if (!buf)
        return nomem();
    uf u = {buf, buf + 2 * ne, 0};
    int *roots = buf + 4 * ne, *comp = buf + 6 * ne, n_roots = 0;
    const int64_t p = L->pos[L->ov_a[s]];
    sleapc_status st = SLEAPC_OK;
    for (int t = s; t < e; t++) {
        const int ra = uf_find(&u, L->label[L->ov_a[t]]), rb = uf_find(&u, L->label[L->ov_b[t]]);
        if (ra != rb) {
            const int hi = ra > rb ? ra : rb, lo = ra > rb ? rb : ra;
            for (int i = 0; i < u.n; i++)
                if (u.lab[i] == hi)
                    u.par[i] = lo;
        }
    }
    /* components in first-seen order, each a new event */
    for (int t = s; t < e && !st; t++)
        for (int side = 0; side < 2 && !st; side++) {
            const int d = side ? L->ov_b[t] : L->ov_a[t];
            const int root = uf_find(&u, L->label[d]);
            int c = 0;
            while (c < n_roots && roots[c] != root)
                c++;
            if (c == n_roots) {
                roots[n_roots++] = root;
                if ((st = new_event(E, p, &comp[c])))
                    break;
            }
            event *ev = &E->v[comp[c]];
            if (!(st = add_unique(&ev->labels, L->label[d])))
                st = add_unique(&ev->dets, d);
        }
    if (!st && E->n > *alive_cap) {
        bool *a = sleapc__realloc(*alive, (size_t)E->cap * sizeof *a);
        if (!a)
            st = nomem();
        else {
            for (int i = *alive_cap; i < E->cap; i++)
                a[i] = true;
            *alive = a;
            *alive_cap = E->cap;
        }
    }
    int n_act = 0;
    for (int r = 0; r < *n_active; r++)
        if (E->v[active[r]].end == p - 1)
            active[n_act++] = active[r];
    int n_cur = 0;
    /* by root label; an event sharing an identity with a live one is
     * absorbed into it (to a fixpoint), the older's detections first */
    for (int pass = 0; pass < n_roots && !st; pass++) {
        int c = -1;
        for (int q = 0; q < n_roots; q++)
            if (roots[q] != -1 && (c < 0 || roots[q] < roots[c]))
                c = q;
        roots[c] = -1;
        int ev = comp[c];
        for (;;) {
            int other = -1;
            for (int r = 0; r < n_act && other < 0; r++)
                other = share_label(&E->v[active[r]], &E->v[ev]) ? active[r] : -1;
            for (int r = 0; r < n_cur && other < 0; r++)
                other = share_label(&E->v[current[r]], &E->v[ev]) ? current[r] : -1;
            if (other < 0)
                break;
            event *o = &E->v[other], *x = &E->v[ev];
            o->start = o->start < x->start ? o->start : x->start;
            o->end = o->end > x->end ? o->end : x->end;
            for (int i = 0; i < x->labels.n && !st; i++)
                st = add_unique(&o->labels, x->labels.v[i]);
            for (int i = 0; i < x->dets.n && !st; i++)
                st = sleapc__mot_ilist_push(&o->dets, x->dets.v[i]);
            (*alive)[ev] = false;
            remove_at(active, &n_act, other);
            remove_at(current, &n_cur, other);
            ev = other;
        }
        current[n_cur++] = ev;
    }
    memcpy(active, current, (size_t)n_cur * sizeof *active);
    *n_active = n_cur;
    sleapc__free(buf);
    return st;
}

static int cmp_event(const void *a, const void *b)
{
    const event *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return (x->min_det > y->min_det) - (x->min_det < y->min_det);
}

static void events_free(events *E)
{
    for (int i = 0; i < E->n; i++) {
        sleapc__free(E->v[i].labels.v);
        sleapc__free(E->v[i].dets.v);
    }
    sleapc__free(E->v);
}

/* ambiguity_events, sorted by (start, end, first detection). */
static sleapc_status ambiguity_events(const mot_linker *L, events *E)
{
    memset(E, 0, sizeof *E);
    if (L->n_ov == 0)
        return SLEAPC_OK;
    int *active = sleapc__malloc((size_t)(2 * L->n_ov) * sizeof *active);
    int *current = sleapc__malloc((size_t)(2 * L->n_ov) * sizeof *current);
    bool *alive = NULL;
    int n_active = 0, alive_cap = 0;
    sleapc_status st = active && current ? SLEAPC_OK : nomem();
    /* overlaps are collected frame by frame: consecutive groups */
    for (int s = 0; s < L->n_ov && !st;) {
        int e = s;
        while (e < L->n_ov && L->pos[L->ov_a[e]] == L->pos[L->ov_a[s]])
            e++;
        st = frame_events(L, E, s, e, active, &n_active, current, &alive, &alive_cap);
        s = e;
    }
    if (!st) {
        int w = 0;
        for (int i = 0; i < E->n; i++) {
            if (!alive[i]) {
                sleapc__free(E->v[i].labels.v);
                sleapc__free(E->v[i].dets.v);
                continue;
            }
            event ev = E->v[i];
            ev.min_det = ev.dets.v[0];
            for (int r = 1; r < ev.dets.n; r++)
                ev.min_det = ev.dets.v[r] < ev.min_det ? ev.dets.v[r] : ev.min_det;
            E->v[w++] = ev;
        }
        E->n = w;
        qsort(E->v, (size_t)E->n, sizeof *E->v, cmp_event);
    }
    sleapc__free(active);
    sleapc__free(current);
    sleapc__free(alive);
    return st;
}

/* _pre_gallery: the last 30 gated vectors of k before position start. */
static int pre_gallery(const mot_linker *L, int k, int64_t start, int *out)
{
    const mot_ilist *mem = &L->mem[k];
    int n = 0;
    for (int r = mem->n - 1; r >= 0 && n < MOT_LINK_GALLERY_LEN; r--)
        if (L->pos[mem->v[r]] < start && L->gated[mem->v[r]])
            out[n++] = mem->v[r];
    for (int a = 0, b = n - 1; a < b; a++, b--) {
        const int t = out[a];
        out[a] = out[b];
        out[b] = t;
    }
    return n;
}

/* _post_query: the first 10 gated vectors of k after position end, up to
 * its next detection in an overlap. */
static int post_query(const mot_linker *L, int k, int64_t end, int *out)
{
    const mot_ilist *mem = &L->mem[k];
    int r = 0, n = 0;
    while (r < mem->n && L->pos[mem->v[r]] <= end)
        r++;
    for (; r < mem->n && !L->in_event[mem->v[r]] && n < MOT_LINK_QUERY_LEN; r++)
        if (L->gated[mem->v[r]])
            out[n++] = mem->v[r];
    return n;
}

/* _relabel_after: identity perm_to[r] takes the detections of perm_from[r]
 * after position end. */
static sleapc_status relabel_after(mot_linker *L, const int *from, const int *to, int n,
                                   int64_t end)
{
    int cut[MAX_EVENT_IDENTITIES];
    mot_ilist old[MAX_EVENT_IDENTITIES] = {{0}};
    sleapc_status st = SLEAPC_OK;
    for (int r = 0; r < n && !st; r++) {
        const mot_ilist *mem = &L->mem[from[r]];
        for (int t = 0; t < mem->n && !st; t++)
            st = sleapc__mot_ilist_push(&old[r], mem->v[t]);
        cut[r] = 0;
        while (cut[r] < mem->n && L->pos[mem->v[cut[r]]] <= end)
            cut[r]++;
    }
    for (int r = 0; r < n && !st; r++) {
        /* to[r] keeps its own head and takes from[r]'s tail */
        const int src = r;
        int dst = 0;
        while (from[dst] != to[r])
            dst++;
        mot_ilist *mem = &L->mem[to[r]];
        mem->n = 0;
        for (int t = 0; t < cut[dst] && !st; t++)
            st = sleapc__mot_ilist_push(mem, old[dst].v[t]);
        for (int t = cut[src]; t < old[src].n && !st; t++) {
            st = sleapc__mot_ilist_push(mem, old[src].v[t]);
            L->label[old[src].v[t]] = to[r];
        }
    }
    for (int r = 0; r < n; r++)
        sleapc__free(old[r].v);
    return st;
}

/* correct_swaps for one event; *swapped when its identities were permuted. */
static sleapc_status correct_event(mot_linker *L, const event *ev, bool *swapped)
{
    *swapped = false;
    int ks[MAX_EVENT_IDENTITIES + 1], n = 0;
    for (int r = 0; r < ev->dets.n; r++) {
        const int k = L->label[ev->dets.v[r]];
        bool seen = false;
        for (int i = 0; i < n && !seen; i++)
            seen = ks[i] == k;
        if (seen)
            continue;
        if (n == MAX_EVENT_IDENTITIES)
            return SLEAPC_OK; /* too many identities: not corrected */
        ks[n++] = k;
    }
    for (int a = 1; a < n; a++) /* sorted */
        for (int b = a; b > 0 && ks[b - 1] > ks[b]; b--) {
            const int t = ks[b];
            ks[b] = ks[b - 1];
            ks[b - 1] = t;
        }
    int pre[MAX_EVENT_IDENTITIES][MOT_LINK_GALLERY_LEN], npre[MAX_EVENT_IDENTITIES];
    int post[MAX_EVENT_IDENTITIES][MOT_LINK_QUERY_LEN], npost[MAX_EVENT_IDENTITIES];
    int c = 0;
    for (int i = 0; i < n; i++) {
        npre[c] = pre_gallery(L, ks[i], ev->start, pre[c]);
        npost[c] = post_query(L, ks[i], ev->end, post[c]);
        if (npre[c] > 0 && npost[c] > 0)
            ks[c++] = ks[i];
    }
    n = c;
    if (n < 2)
        return SLEAPC_OK;
    double s[MAX_EVENT_IDENTITIES * MAX_EVENT_IDENTITIES],
        cost[MAX_EVENT_IDENTITIES * MAX_EVENT_IDENTITIES];
    for (int l = 0; l < n; l++)
        for (int k = 0; k < n; k++) {
            s[l * n + k] = sleapc__mot_link_s_link(L, post[l], npost[l], pre[k], npre[k]);
            cost[l * n + k] = -s[l * n + k];
        }
    int64_t rows[MAX_EVENT_IDENTITIES], cols[MAX_EVENT_IDENTITIES];
    sleapc_status st = sleapc__hungarian_solve(cost, n, n, rows, cols);
    if (st)
        return st;
    int moved[MAX_EVENT_IDENTITIES], nm = 0;
    for (int r = 0; r < n; r++)
        if (cols[r] != rows[r])
            moved[nm++] = (int)rows[r];
    if (nm == 0)
        return SLEAPC_OK;
    double th[MAX_EVENT_IDENTITIES], mg[MAX_EVENT_IDENTITIES];
    for (int t = 0; t < nm; t++) {
        sleapc__mot_link_rule(L, npost[moved[t]], &th[t], &mg[t]);
        if (!isfinite(th[t]))
            return SLEAPC_OK;
    }
    /* numpy's sums: the first element plus the rest */
    double chosen = s[rows[0] * n + cols[0]], trace = s[0], rest_c = 0.0, rest_t = 0.0;
    for (int r = 1; r < n; r++) {
        rest_c += s[rows[r] * n + cols[r]];
        rest_t += s[r * n + r];
    }
    const double gain = (chosen + rest_c) - (trace + rest_t);
    bool pair_ok = true;
    double need = 0.0;
    for (int t = 0; t < nm; t++) {
        const int r = moved[t];
        const double sc = s[r * n + cols[r]];
        pair_ok = pair_ok && sc >= th[t] && sc - s[r * n + r] >= mg[t] - SCORE_EPS;
        need += mg[t];
    }
    if (gain < need - SCORE_EPS || !pair_ok)
        return SLEAPC_OK;
    int from[MAX_EVENT_IDENTITIES], to[MAX_EVENT_IDENTITIES];
    for (int t = 0; t < nm; t++) {
        from[t] = ks[moved[t]];
        to[t] = ks[cols[moved[t]]];
    }
    st = relabel_after(L, from, to, nm, ev->end);
    *swapped = !st;
    return st;
}

sleapc_status sleapc__mot_link_swaps(mot_linker *L, int *n_swaps)
{
    *n_swaps = 0;
    events E;
    sleapc_status st = ambiguity_events(L, &E);
    for (int i = 0; i < E.n && !st; i++) {
        bool swapped = false;
        st = correct_event(L, &E.v[i], &swapped);
        *n_swaps += swapped;
    }
    events_free(&E);
    return st;
}
