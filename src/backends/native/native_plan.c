/* The native backend's plan for one input shape: a buffer per live value
 * (greedy liveness packing), no buffer for a concat only convs read (they
 * read its parts), the scratch of the largest kernel, and bf16 staging. */
#include <string.h>

#include "backends/native/native_conv_choose.h"
#include "backends/native/native_impl.h"
#include "core/alloc.h"
#include "core/error.h"

void sleapc__native_plan_free(native_state *ns)
{
    for (int i = 0; i < ns->n_bufs; i++)
        sleapc__aligned_free(ns->bufs[i]);
    sleapc__free(ns->bufs);
    sleapc__free(ns->buf_of);
    sleapc__free(ns->home);
    sleapc__free(ns->shapes);
    sleapc__aligned_free(ns->scratch);
    sleapc__aligned_free(ns->stage);
    ns->stage = NULL;
    ns->stage_numel = 0;
    ns->bufs = NULL;
    ns->buf_of = NULL;
    ns->home = NULL;
    ns->shapes = NULL;
    ns->scratch = NULL;
    ns->n_bufs = 0;
    ns->scratch_bytes = 0;
    memset(ns->planned, 0, sizeof ns->planned);
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
                 * kernels read it: they round as they stage its parts. */
                if (g->nodes[j].op != SLEAPC_OP_CONV2D || (ns->bf16.n && !ns->hw16[j]))
                    return false;
                consumers++;
            }
    return consumers > 0;
}

/* The nodes whose buffers node i reads: the homes of its inputs, or of a
 * virtual concat's parts. Returns their count (at most
 * SLEAPC_NODE_MAX_INPUTS * NATIVE_CONV_MAX_PARTS). */
int sleapc__native_node_sources(const native_state *ns, int i, int *src)
{
    const sleapc_node *n = &ns->g->nodes[i];
    int count = 0;
    for (int k = 0; k < n->n_inputs; k++) {
        int in = n->inputs[k];
        if (ns->buf_of[in] == -1) {
            const sleapc_node *c = &ns->g->nodes[in];
            for (int m = 0; m < c->n_inputs; m++)
                src[count++] = ns->home[c->inputs[m]];
        } else {
            src[count++] = ns->home[in];
        }
    }
    return count;
}

/* Greedy liveness packing: a buffer whose value is dead is reused by the next
 * node that fits in it (the smallest such buffer). */
sleapc_status sleapc__native_plan(native_state *ns, const int64_t shape[4])
{
    const sleapc_graph *g = ns->g;
    int n = g->n_nodes;
    sleapc__native_plan_free(ns);
    ns->shapes = sleapc__malloc((size_t)n * sizeof *ns->shapes);
    ns->buf_of = sleapc__malloc((size_t)n * sizeof *ns->buf_of);
    ns->home = sleapc__malloc((size_t)n * sizeof *ns->home);
    ns->bufs = sleapc__calloc((size_t)n, sizeof *ns->bufs);
    int *last_use = sleapc__malloc((size_t)n * sizeof *last_use);
    int64_t *buf_cap = sleapc__calloc((size_t)n, sizeof *buf_cap);
    bool *buf_busy = sleapc__calloc((size_t)n, sizeof *buf_busy);
    sleapc_status st = SLEAPC_OK;
    if (!ns->shapes || !ns->buf_of || !ns->home || !ns->bufs || !last_use || !buf_cap ||
        !buf_busy) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory");
        goto done;
    }
    st = sleapc__graph_infer_shapes(g, shape[0], shape[2], shape[3], ns->shapes);
    if (st)
        goto done;
    /* Which nodes own a buffer (buf_of 0 for now), share their input's
     * (an identity resize) or have none (a virtual concat). */
    for (int i = 0; i < n; i++) {
        const sleapc_node *nd = &g->nodes[i];
        ns->home[i] = i;
        ns->buf_of[i] = 0;
        if (nd->op == SLEAPC_OP_RESIZE_LIKE && !ns->bf16.n && ns->buf_of[nd->inputs[0]] != -1 &&
            ns->shapes[nd->inputs[0]][2] == ns->shapes[i][2] &&
            ns->shapes[nd->inputs[0]][3] == ns->shapes[i][3])
            ns->home[i] = ns->home[nd->inputs[0]];
        else if (concat_is_virtual(ns, i))
            ns->buf_of[i] = -1;
    }
    int src[MAX_SOURCES];
    for (int i = 0; i < n; i++)
        last_use[i] = i;
    for (int i = 0; i < n; i++) {
        int n_src = sleapc__native_node_sources(ns, i, src);
        for (int k = 0; k < n_src; k++)
            if (last_use[src[k]] < i)
                last_use[src[k]] = i;
    }
    for (int o = 0; o < g->n_outputs; o++)
        last_use[ns->home[g->outputs[o].node]] = n; /* live until the next forward */

    int n_threads = sleapc__threadpool_n_threads(ns->tp);
    /* The graph's hash reads every weight: only when a conv may be timed. */
    char key_prefix[512] = "";
    if (ns->conv_how != NATIVE_CONV_DIRECT && !ns->bf16.n && !ns->wino_tile)
        sleapc__native_conv_key_prefix(g, ns->conv_how, n_threads, key_prefix, sizeof key_prefix);
    size_t scratch = 0;
    for (int i = 0; i < n; i++) {
        bool owns = ns->buf_of[i] != -1 && ns->home[i] == i;
        int pick = -1;
        if (owns) {
            int64_t need = native_node_numel(ns->shapes[i]);
            for (int bi = 0; bi < ns->n_bufs; bi++)
                if (!buf_busy[bi] && buf_cap[bi] >= need &&
                    (pick < 0 || buf_cap[bi] < buf_cap[pick]))
                    pick = bi;
            if (pick < 0) {
                /* No free buffer fits: grow the largest free one, else add one. */
                for (int bi = 0; bi < ns->n_bufs; bi++)
                    if (!buf_busy[bi] && (pick < 0 || buf_cap[bi] > buf_cap[pick]))
                        pick = bi;
                if (pick < 0)
                    pick = ns->n_bufs++;
                buf_cap[pick] = need;
            }
            buf_busy[pick] = true;
            ns->buf_of[i] = pick;
        } else if (ns->home[i] != i) {
            ns->buf_of[i] = ns->buf_of[ns->home[i]];
        }
        /* Free the inputs whose last use is this node (after choosing the
         * output buffer: a node never writes over its own inputs). */
        int n_src = sleapc__native_node_sources(ns, i, src);
        for (int k = 0; k < n_src; k++)
            if (last_use[src[k]] == i)
                buf_busy[ns->buf_of[src[k]]] = false;
        if (owns && last_use[i] == i)
            buf_busy[pick] = false;
        const int64_t *s0 = g->nodes[i].n_inputs ? ns->shapes[g->nodes[i].inputs[0]] : NULL;
        size_t sb = 0;
        /* bf16 (emulated or not) keeps the direct method it rounds like. */
        if (ns->convs[i] && !ns->bf16.n &&
            (st = sleapc__native_conv_choose(
                 ns->convs[i], g->nodes[i].c_in, g->nodes[i].c_out, ns->tp, ns->conv_how,
                 ns->wino_tile, *key_prefix ? key_prefix : NULL, i, s0[0], s0[2], s0[3])))
            goto done;
        if (ns->convs[i])
            sb = sleapc__native_conv_scratch_size(ns->convs[i], s0[2], s0[3], n_threads);
        else if (ns->convts[i])
            sb = sleapc__native_convt_scratch_size(ns->convts[i], s0[2], s0[3], n_threads);
        else if (ns->wattns[i])
            sb = sleapc__native_wattn_scratch_size(ns->wattns[i], n_threads);
        if (sb > scratch)
            scratch = sb;
        if (ns->bf16.n && ns->bf16.compute[i] && !ns->bf16.rounded[g->nodes[i].inputs[0]] &&
            !ns->hw16[i] && native_node_numel(s0) > ns->stage_numel)
            ns->stage_numel = native_node_numel(s0);
    }
    for (int bi = 0; bi < ns->n_bufs; bi++) {
        ns->bufs[bi] = sleapc__aligned_alloc((size_t)buf_cap[bi] * sizeof(float));
        if (!ns->bufs[bi]) {
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory for %lld floats",
                              (long long)buf_cap[bi]);
            goto done;
        }
    }
    if (ns->stage_numel) {
        ns->stage = sleapc__aligned_alloc((size_t)ns->stage_numel * sizeof(float));
        if (!ns->stage) {
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory for bf16 staging");
            goto done;
        }
    }
    ns->scratch_bytes = scratch;
    if (scratch) {
        ns->scratch = sleapc__aligned_alloc(scratch);
        if (!ns->scratch) {
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory for scratch");
            goto done;
        }
    }
    memcpy(ns->planned, shape, sizeof ns->planned);
done:
    sleapc__free(last_use);
    sleapc__free(buf_cap);
    sleapc__free(buf_busy);
    if (st)
        sleapc__native_plan_free(ns);
    return st;
}
