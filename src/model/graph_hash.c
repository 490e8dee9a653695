#include "model/graph_hash.h"

#include <string.h>

#include "core/hash.h"

/* Floats of n's weight and bias, as the backends read them (graph.h). */
static void param_counts(const sleapc_node *n, int64_t *nw, int64_t *nb)
{
    int64_t k = n->kernel, ci = n->c_in, co = n->c_out;
    *nw = *nb = 0;
    switch (n->op) {
    case SLEAPC_OP_CONV2D:
        *nw = co * ci * k * k;
        *nb = co;
        break;
    case SLEAPC_OP_CONV_TRANSPOSE2D:
        *nw = ci * co * 9;
        *nb = co;
        break;
    case SLEAPC_OP_LINEAR:
        *nw = co * ci;
        *nb = co;
        break;
    case SLEAPC_OP_DWCONV:
        *nw = ci * k * k;
        *nb = ci;
        break;
    case SLEAPC_OP_LAYERNORM:
        *nw = *nb = ci;
        break;
    case SLEAPC_OP_SCALE_ADD:
        *nw = ci;
        break;
    case SLEAPC_OP_WINDOW_ATTENTION:
        *nw = (2 * k - 1) * (2 * k - 1) * n->heads;
        *nb = 3 * ci;
        break;
    case SLEAPC_OP_GLOBAL_GEMPOOL:
        *nw = 1;
        break;
    default:
        break;
    }
}

uint64_t sleapc__graph_hash(const sleapc_graph *g)
{
    int32_t head[3] = {g->n_nodes, g->in_channels, g->max_stride};
    uint64_t h = sleapc__hash64(0, head, sizeof head);
    if (g->input_as_is) /* only then, so the other graphs keep their hashes */
        h = sleapc__hash64(h, "input_as_is", 11);
    for (int i = 0; i < g->n_nodes; i++) {
        const sleapc_node *n = &g->nodes[i];
        /* The fields one by one: the struct has padding and a name that
         * does not change what it computes. */
        int32_t f[13] = {n->op,     n->n_inputs, n->c_out,  n->c_in,        n->kernel,
                         n->act,    n->stride,   n->pad,    n->keras_placement,
                         n->heads,  n->shift,    n->patch_merge, 0};
        memcpy(&f[12], &n->eps, sizeof f[12]);
        h = sleapc__hash64(h, f, sizeof f);
        h = sleapc__hash64(h, n->inputs, (size_t)n->n_inputs * sizeof n->inputs[0]);
        int64_t nw, nb;
        param_counts(n, &nw, &nb);
        if (n->weight && nw > 0)
            h = sleapc__hash64(h, n->weight, (size_t)nw * sizeof(float));
        if (n->bias && nb > 0)
            h = sleapc__hash64(h, n->bias, (size_t)nb * sizeof(float));
        h = sleapc__hash64(h, (int32_t[2]){n->weight != NULL, n->bias != NULL}, 8);
    }
    for (int i = 0; i < g->n_outputs; i++) {
        const sleapc_graph_output *o = &g->outputs[i];
        h = sleapc__hash64(h, o->name, strnlen(o->name, sizeof o->name));
        h = sleapc__hash64(h, (int32_t[2]){o->node, o->stride}, 8);
    }
    return h;
}
