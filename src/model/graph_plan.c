/* The shared memory planner (graph_plan.h): liveness, aliases, then offsets
 * packed greedily by size, as TFLite's "greedy by size" does, which on the
 * chains and skips of these networks reaches the liveness bound or comes
 * close to it. */
#include "model/graph_plan.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

static int64_t align_up(int64_t x, int64_t a)
{
    return (x + a - 1) & ~(a - 1);
}

typedef struct pack_item {
    int64_t size;
    int first;
    int index;
} pack_item;

typedef struct span {
    int64_t off, end;
} span;

/* Largest first; then earliest, then lowest index, so a plan never depends
 * on qsort's order among equals. */
static int by_size(const void *a, const void *b)
{
    const pack_item *x = a, *y = b;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int by_offset(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

sleapc_status sleapc__plan_pack(int n, const int64_t *bytes, const int *first, const int *last,
                                int64_t align, int64_t *offset, int64_t *arena)
{
    size_t cap = (size_t)(n > 0 ? n : 1);
    pack_item *items = sleapc__malloc(cap * sizeof *items);
    int *placed = sleapc__malloc(cap * sizeof *placed);
    span *spans = sleapc__malloc(cap * sizeof *spans);
    if (!items || !placed || !spans) {
        sleapc__free(items);
        sleapc__free(placed);
        sleapc__free(spans);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "memory plan: out of memory");
    }
    int n_items = 0, n_placed = 0;
    for (int v = 0; v < n; v++) {
        offset[v] = -1;
        if (bytes[v] > 0)
            items[n_items++] = (pack_item){align_up(bytes[v], align), first[v], v};
    }
    qsort(items, (size_t)n_items, sizeof *items, by_size);
    int64_t top = 0;
    for (int k = 0; k < n_items; k++) {
        int v = items[k].index;
        int n_spans = 0;
        for (int j = 0; j < n_placed; j++) {
            int u = placed[j];
            if (first[u] <= last[v] && first[v] <= last[u])
                spans[n_spans++] = (span){offset[u], offset[u] + align_up(bytes[u], align)};
        }
        qsort(spans, (size_t)n_spans, sizeof *spans, by_offset);
        /* The smallest gap between the values it meets that holds it, else
         * past them all. */
        int64_t best = -1, best_gap = INT64_MAX, end = 0;
        for (int j = 0; j < n_spans; j++) {
            int64_t gap = spans[j].off - end;
            if (gap >= items[k].size && gap < best_gap) {
                best = end;
                best_gap = gap;
            }
            if (spans[j].end > end)
                end = spans[j].end;
        }
        offset[v] = best >= 0 ? best : end;
        if (offset[v] + items[k].size > top)
            top = offset[v] + items[k].size;
        placed[n_placed++] = v;
    }
    *arena = top;
    sleapc__free(items);
    sleapc__free(placed);
    sleapc__free(spans);
    return SLEAPC_OK;
}

sleapc_plan_kind sleapc__graph_plan_kind_default(const sleapc_graph *g, int i)
{
    return g->nodes[i].op == SLEAPC_OP_RESIZE_LIKE ? SLEAPC_PLAN_ALIAS : SLEAPC_PLAN_OWN;
}

static bool same_shape(const int64_t *a, const int64_t *b)
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3];
}

void sleapc__graph_plan_free(sleapc_graph_plan *p)
{
    sleapc__free(p->shapes);
    sleapc__free(p->home);
    sleapc__free(p->last);
    sleapc__free(p->offset);
    memset(p, 0, sizeof *p);
}

static int64_t numel(const int64_t *s)
{
    return s[2] ? s[0] * s[1] * s[2] * s[3] : s[0] * s[1];
}

/* Where each value is stored, and until when each storage is read. */
static void liveness(const sleapc_graph *g, const sleapc_plan_opts *opts, sleapc_graph_plan *p)
{
    int n = g->n_nodes;
    for (int i = 0; i < n; i++) {
        const sleapc_node *nd = &g->nodes[i];
        sleapc_plan_kind k = opts->kind ? opts->kind[i] : sleapc__graph_plan_kind_default(g, i);
        p->home[i] = i;
        if (k == SLEAPC_PLAN_PARTS)
            p->home[i] = -1;
        else if (k == SLEAPC_PLAN_ALIAS && nd->n_inputs > 0 && p->home[nd->inputs[0]] >= 0 &&
                 same_shape(p->shapes[nd->inputs[0]], p->shapes[i]))
            p->home[i] = p->home[nd->inputs[0]];
        p->last[i] = i;
        for (int j = 0; j < nd->n_inputs; j++)
            if (p->last[nd->inputs[j]] < i)
                p->last[nd->inputs[j]] = i;
    }
    for (int o = 0; o < g->n_outputs; o++)
        p->last[g->outputs[o].node] = n; /* handed to the caller */
    /* A value of parts is read where its parts are: they live as long. */
    for (int i = n - 1; i >= 0; i--)
        if (p->home[i] < 0)
            for (int j = 0; j < g->nodes[i].n_inputs; j++)
                if (p->last[g->nodes[i].inputs[j]] < p->last[i])
                    p->last[g->nodes[i].inputs[j]] = p->last[i];
    /* A storage lives until the last read of any value in it. */
    for (int i = 0; i < n; i++)
        if (p->home[i] >= 0 && p->home[i] != i && p->last[p->home[i]] < p->last[i])
            p->last[p->home[i]] = p->last[i];
    for (int i = 0; i < n; i++)
        p->last[i] = p->home[i] >= 0 ? p->last[p->home[i]] : -1;
}

/* The most bytes live at one step (each rounded up to the alignment). */
static sleapc_status live_bound(int n, const int64_t *bytes, const int *last, int64_t align,
                                int64_t *out)
{
    int64_t *delta = sleapc__calloc((size_t)n + 2, sizeof *delta);
    if (!delta)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "memory plan: out of memory");
    for (int i = 0; i < n; i++)
        if (bytes[i] > 0) {
            delta[i] += align_up(bytes[i], align);
            delta[last[i] + 1] -= align_up(bytes[i], align);
        }
    int64_t live = 0, peak = 0;
    for (int t = 0; t <= n; t++) {
        live += delta[t];
        if (live > peak)
            peak = live;
    }
    *out = peak;
    sleapc__free(delta);
    return SLEAPC_OK;
}

sleapc_status sleapc__graph_plan(const sleapc_graph *g, int64_t b, int64_t h, int64_t w,
                                 const sleapc_plan_opts *opts, sleapc_graph_plan *out)
{
    memset(out, 0, sizeof *out);
    int n = g->n_nodes;
    size_t cap = (size_t)(n > 0 ? n : 1);
    out->n_nodes = n;
    out->shapes = sleapc__malloc(cap * sizeof *out->shapes);
    out->home = sleapc__malloc(cap * sizeof *out->home);
    out->last = sleapc__malloc(cap * sizeof *out->last);
    out->offset = sleapc__malloc(cap * sizeof *out->offset);
    int64_t *bytes = sleapc__calloc(cap, sizeof *bytes);
    int *first = sleapc__malloc(cap * sizeof *first);
    sleapc_status st = SLEAPC_OK;
    if (!out->shapes || !out->home || !out->last || !out->offset || !bytes || !first) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "memory plan: out of memory");
        goto done;
    }
    st = sleapc__graph_infer_shapes(g, b, h, w, out->shapes);
    if (st)
        goto done;
    liveness(g, opts, out);
    for (int i = 0; i < n; i++) {
        first[i] = i;
        if (out->home[i] == i)
            bytes[i] = numel(out->shapes[i]) * (int64_t)opts->elem;
    }
    st = live_bound(n, bytes, out->last, opts->align, &out->live_bound);
    if (!st)
        st = sleapc__plan_pack(n, bytes, first, out->last, opts->align, out->offset, &out->arena);
    if (st)
        goto done;
    for (int i = 0; i < n; i++)
        out->offset[i] = out->home[i] >= 0 ? out->offset[out->home[i]] : -1;
done:
    sleapc__free(bytes);
    sleapc__free(first);
    if (st)
        sleapc__graph_plan_free(out);
    return st;
}

/* All of g's activations at once, in double: sizes whose bytes would
 * overflow are refused by the memory check, not planned. */
static double all_bytes(const sleapc_graph *g, int64_t b, int64_t h, int64_t w, sleapc_status *st)
{
    int64_t(*shapes)[4] =
        sleapc__malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1) * sizeof *shapes);
    if (!shapes) {
        *st = sleapc__fail(SLEAPC_ERR_NOMEM, "memory plan: out of memory");
        return 0.0;
    }
    double sum = 0.0;
    *st = sleapc__graph_infer_shapes(g, b, h, w, shapes);
    for (int i = 0; i < g->n_nodes && !*st; i++) {
        const int64_t *s = shapes[i];
        sum += (double)s[0] * (double)s[1] * (s[2] ? (double)s[2] * (double)s[3] : 1.0) * 4.0;
    }
    sleapc__free(shapes);
    return sum;
}

int64_t sleapc__graph_peak_bytes(const sleapc_graph *g, int64_t b, int64_t h, int64_t w)
{
    sleapc_status st = SLEAPC_OK;
    double sum = all_bytes(g, b, h, w, &st);
    if (st)
        return st == SLEAPC_ERR_NOMEM ? -2 : -1;
    if (sum >= 0x1p60)
        return INT64_MAX;
    sleapc_plan_opts opts = {.elem = sizeof(float), .align = 64};
    sleapc_graph_plan p;
    st = sleapc__graph_plan(g, b, h, w, &opts, &p);
    int64_t arena = p.arena;
    sleapc__graph_plan_free(&p);
    if (st == SLEAPC_ERR_NOMEM)
        return -2;
    return st ? -1 : arena;
}
