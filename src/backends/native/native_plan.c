/* The native backend's plan for one input shape: one arena from the shared
 * planner (model/graph_plan.h), with no storage for a concat only convs
 * read (they read its parts) and none for an identity resize (it is its
 * input); the scratch of the largest kernel; and bf16 staging. */
#include <stdio.h>
#include <string.h>

#include "backends/native/native_conv_choose.h"
#include "backends/native/native_impl.h"
#include "core/alloc.h"
#include "core/error.h"

void sleapc__native_plan_free(native_state *ns)
{
    for (int o = 0; ns->outs && o < ns->g->n_outputs; o++)
        sleapc__aligned_free(ns->outs[o]);
    sleapc__free(ns->outs);
    ns->outs = NULL;
    ns->items_on = false;
    sleapc__graph_plan_free(&ns->plan);
    sleapc__aligned_free(ns->arena);
    sleapc__aligned_free(ns->scratch);
    sleapc__aligned_free(ns->stage);
    ns->arena = NULL;
    ns->stage = NULL;
    ns->stage_numel = 0;
    ns->scratch = NULL;
    ns->scratch_bytes = 0;
    memset(ns->planned, 0, sizeof ns->planned);
}

/* Whether every part of concat n is rounded to bf16 where it is written. */
static bool parts_rounded(const native_state *ns, const sleapc_node *n)
{
    for (int k = 0; k < n->n_inputs; k++)
        if (!ns->bf16.rounded[n->inputs[k]] || ns->lazy[n->inputs[k]])
            return false;
    return true;
}

/* A concat every consumer of which is a conv, so they can read its parts
 * where they are (native_conv_src) and it needs no buffer. */
static bool concat_is_virtual(const native_state *ns, int i)
{
    const sleapc_graph *g = ns->g;
    const sleapc_node *n = &g->nodes[i];
    if (n->op != SLEAPC_OP_CONCAT || n->n_inputs < 1 || n->n_inputs > NATIVE_CONV_MAX_PARTS)
        return false;
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o].node == i)
            return false;
    int consumers = 0;
    for (int j = i + 1; j < g->n_nodes; j++)
        for (int k = 0; k < g->nodes[j].n_inputs; k++)
            if (g->nodes[j].inputs[k] == i) {
                /* Emulated bf16 rounds each value where it is written, so
                 * every concat has its buffer, except where only bf16
                 * kernels read it (they round as they stage its parts) or
                 * its parts are all rounded where written (bf16 on the
                 * float32 kernels: a concat of rounded values is rounded). */
                if (g->nodes[j].op != SLEAPC_OP_CONV2D ||
                    (ns->bf16.n && !ns->hw16[j] && !(ns->bf16_f32 && parts_rounded(ns, n))))
                    return false;
                consumers++;
            }
    return consumers > 0;
}

/* The method of each conv node i (conv_choose), and whether its twin runs. */
typedef struct choose_job {
    native_state *ns;
    const char *key;
    const int *nodes;
    sleapc_status *st;
    char (*why)[256];
} choose_job;

static void choose_one(void *ctx, int64_t k, int thread)
{
    (void)thread;
    choose_job *j = ctx;
    native_state *ns = j->ns;
    int i = j->nodes[k];
    const sleapc_node *nd = &ns->g->nodes[i];
    const int64_t *s0 = ns->plan.shapes[nd->inputs[0]];
    native_conv_pick pick = {.alt = ns->convs16 ? ns->convs16[i] : NULL, .force_alt = ns->pick16};
    /* A backend that may run items times on one thread, as items run. */
    j->st[k] = sleapc__native_conv_choose(ns->convs[i], &pick, nd->c_in, nd->c_out,
                                          ns->items ? NULL : ns->tp, ns->conv_how, ns->wino_tile,
                                          j->key, i, s0[0], s0[2], s0[3]);
    if (j->st[k])
        snprintf(j->why[k], sizeof j->why[k], "%s", sleapc__last_error());
    if (ns->use16)
        ns->use16[i] = pick.use_alt;
}

/* Every conv's method. Emulated bf16 keeps the direct method it rounds
 * like; bf16 on the float32 kernels chooses as float32 does. Timed on one
 * thread (items), the threads time different convs at once: a first run
 * pays the timing once, not once per thread. */
static sleapc_status choose_convs(native_state *ns, const char *key)
{
    const sleapc_graph *g = ns->g;
    int *nodes = sleapc__malloc((size_t)g->n_nodes * sizeof *nodes);
    sleapc_status *st = sleapc__calloc((size_t)g->n_nodes, sizeof *st);
    char(*why)[256] = sleapc__calloc((size_t)g->n_nodes, sizeof *why);
    sleapc_status out = SLEAPC_OK;
    if (!nodes || !st || !why) {
        out = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory");
        goto done;
    }
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++)
        if (ns->convs[i] && (!ns->bf16.n || (ns->bf16_f32 && !ns->hw16[i])))
            nodes[n++] = i;
    choose_job j = {.ns = ns, .key = key, .nodes = nodes, .st = st, .why = why};
    if (ns->items)
        sleapc__threadpool_run_indexed(ns->tp, choose_one, &j, n);
    else
        for (int k = 0; k < n; k++)
            choose_one(&j, k, 0);
    for (int k = 0; k < n && !out; k++)
        if (st[k])
            out = sleapc__fail(st[k], "%s", why[k]);
done:
    sleapc__free(nodes);
    sleapc__free(st);
    sleapc__free(why);
    return out;
}

/* The arena from the shared planner; then, node by node, the conv methods
 * and the largest scratch and staging they need. */
sleapc_status sleapc__native_plan(native_state *ns, const int64_t shape[4])
{
    const sleapc_graph *g = ns->g;
    int n = g->n_nodes;
    sleapc__native_plan_free(ns);
    sleapc_plan_kind *kind = sleapc__malloc((size_t)n * sizeof *kind);
    if (!kind)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory");
    for (int i = 0; i < n; i++) {
        kind[i] = SLEAPC_PLAN_OWN;
        if (concat_is_virtual(ns, i))
            kind[i] = SLEAPC_PLAN_PARTS;
        else if (g->nodes[i].op == SLEAPC_OP_RESIZE_LIKE &&
                 (!ns->bf16.n || (ns->bf16_f32 && ns->bf16.rounded[g->nodes[i].inputs[0]])))
            kind[i] = SLEAPC_PLAN_ALIAS; /* emulated bf16 rounds each value where written */
    }
    int n_threads = sleapc__threadpool_n_threads(ns->tp);
    /* Items across the threads: the plan of one thread's share, once per
     * thread (the same bytes as the whole batch's where it divides). A
     * backend that may run items times its convs' methods on one thread,
     * as items run them, whatever this plan's batch: a frame then gets the
     * same methods, and bits, in any batch. */
    ns->items_on = ns->items && !ns->node_hook && n_threads > 1 && shape[0] >= n_threads;
    ns->items_per = ns->items_on ? (shape[0] + n_threads - 1) / n_threads : shape[0];
    sleapc_plan_opts opts = {.elem = sizeof(float), .align = 64, .kind = kind};
    sleapc_status st =
        sleapc__graph_plan(g, ns->items_per, shape[2], shape[3], &opts, &ns->plan);
    sleapc__free(kind);
    if (st)
        return st;

    /* The graph's hash reads every weight: only when a conv may be timed. */
    char key_prefix[512] = "";
    if (ns->conv_how != NATIVE_CONV_DIRECT && (!ns->bf16.n || ns->bf16_f32) && !ns->wino_tile &&
        !ns->pick16)
        sleapc__native_conv_key_prefix(g, ns->conv_how, ns->convs16 != NULL,
                                       ns->items ? 1 : n_threads, key_prefix, sizeof key_prefix);
    if ((st = choose_convs(ns, *key_prefix ? key_prefix : NULL)))
        goto done;
    size_t scratch = 0, scratch1 = 0;
    for (int i = 0; i < n; i++) {
        const int64_t *s0 = g->nodes[i].n_inputs ? ns->plan.shapes[g->nodes[i].inputs[0]] : NULL;
        size_t sb = 0;
        if (ns->convs[i])
            sb = sleapc__native_conv_scratch_size(native_active_conv(ns, i), s0[2], s0[3],
                                                  n_threads);
        else if (ns->convts[i])
            sb = sleapc__native_convt_scratch_size(ns->convts[i], s0[2], s0[3], n_threads);
        else if (ns->wattns[i])
            sb = sleapc__native_wattn_scratch_size(ns->wattns[i], n_threads);
        if (sb > scratch)
            scratch = sb;
        /* One thread's, for items across the threads. */
        size_t s1 = 0;
        if (ns->items_on && ns->convs[i])
            s1 = sleapc__native_conv_scratch_size(native_active_conv(ns, i), s0[2], s0[3], 1);
        else if (ns->items_on && ns->convts[i])
            s1 = sleapc__native_convt_scratch_size(ns->convts[i], s0[2], s0[3], 1);
        else if (ns->items_on && ns->wattns[i])
            s1 = sleapc__native_wattn_scratch_size(ns->wattns[i], 1);
        if (s1 > scratch1)
            scratch1 = s1;
        if (ns->bf16.n && ns->bf16.compute[i] && !ns->bf16.rounded[g->nodes[i].inputs[0]] &&
            !ns->hw16[i] && native_node_numel(s0) > ns->stage_numel)
            ns->stage_numel = native_node_numel(s0);
    }
    ns->copy_floats = (ns->plan.arena + 63) / 64 * 16;
    ns->arena = sleapc__aligned_alloc(
        ns->items_on ? (size_t)ns->copy_floats * sizeof(float) * (size_t)n_threads
                     : (size_t)(ns->plan.arena ? ns->plan.arena : 64));
    if (!ns->arena) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory for %lld bytes of activations",
                          (long long)ns->plan.arena);
        goto done;
    }
    sleapc__log(SLEAPC_LOG_INFO,
                "native: activations for (%lld, %lld, %lld, %lld): %lld bytes in one arena "
                "(liveness bound %lld)",
                (long long)shape[0], (long long)shape[1], (long long)shape[2], (long long)shape[3],
                (long long)ns->plan.arena, (long long)ns->plan.live_bound);
    if (ns->stage_numel) {
        ns->stage = sleapc__aligned_alloc((size_t)ns->stage_numel * sizeof(float));
        if (!ns->stage) {
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory for bf16 staging");
            goto done;
        }
    }
    ns->items_scratch = (scratch1 + 63) / 64 * 64;
    if (ns->items_on && ns->items_scratch * (size_t)n_threads > scratch)
        scratch = ns->items_scratch * (size_t)n_threads;
    ns->scratch_bytes = scratch;
    if (scratch) {
        ns->scratch = sleapc__aligned_alloc(scratch);
        if (!ns->scratch) {
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory for scratch");
            goto done;
        }
    }
    if (ns->items_on) {
        ns->outs = sleapc__calloc((size_t)g->n_outputs, sizeof *ns->outs);
        for (int o = 0; ns->outs && o < g->n_outputs; o++) {
            const int64_t *so = ns->plan.shapes[g->outputs[o].node];
            size_t item = (size_t)(native_node_numel(so) / so[0]);
            ns->outs[o] = sleapc__aligned_alloc(item * (size_t)shape[0] * sizeof(float));
            if (!ns->outs[o])
                break;
        }
        for (int o = 0; !st && o < g->n_outputs; o++)
            if (!ns->outs || !ns->outs[o])
                st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory for outputs");
        if (st)
            goto done;
    }
    memcpy(ns->planned, shape, sizeof ns->planned);
done:
    if (st)
        sleapc__native_plan_free(ns);
    return st;
}
