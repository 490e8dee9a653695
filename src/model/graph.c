#include "model/graph.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

static const char *const op_names[] = {
    [SLEAPC_OP_INPUT] = "input",
    [SLEAPC_OP_CONV2D] = "conv2d",
    [SLEAPC_OP_CONV_TRANSPOSE2D] = "conv_transpose2d",
    [SLEAPC_OP_MAXPOOL2D] = "maxpool2d",
    [SLEAPC_OP_UPSAMPLE2X] = "upsample2x",
    [SLEAPC_OP_RESIZE_LIKE] = "resize_like",
    [SLEAPC_OP_CONCAT] = "concat",
    [SLEAPC_OP_GLOBAL_MAXPOOL] = "global_maxpool",
    [SLEAPC_OP_LINEAR] = "linear",
    [SLEAPC_OP_PATCHES] = "patches",
    [SLEAPC_OP_DWCONV] = "dwconv",
    [SLEAPC_OP_LAYERNORM] = "layernorm",
    [SLEAPC_OP_SCALE_ADD] = "scale_add",
    [SLEAPC_OP_WINDOW_ATTENTION] = "window_attention",
    [SLEAPC_OP_GLOBAL_GEMPOOL] = "global_gempool",
    [SLEAPC_OP_L2NORM] = "l2norm",
};
_Static_assert(sizeof op_names / sizeof op_names[0] == SLEAPC_OP_COUNT, "every op needs a name");

const char *sleapc__op_name(sleapc_op op)
{
    return (unsigned)op < SLEAPC_OP_COUNT ? op_names[op] : "unknown";
}

void sleapc__window_geometry(const sleapc_node *n, int64_t h, int64_t w, int64_t *ph,
                             int64_t *pw, int *shift_h, int *shift_w)
{
    int64_t k = n->kernel;
    *ph = (h + k - 1) / k * k;
    *pw = (w + k - 1) / k * k;
    *shift_h = k >= *ph ? 0 : n->shift;
    *shift_w = k >= *pw ? 0 : n->shift;
}

sleapc_status sleapc__graph_add(sleapc_graph *g, const sleapc_node *node, int *out_index)
{
    if (node->n_inputs < 0 || node->n_inputs > SLEAPC_NODE_MAX_INPUTS)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: %d inputs", node->name,
                            node->n_inputs);
    for (int i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] < 0 || node->inputs[i] >= g->n_nodes)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: input %d is not a node",
                                node->name, node->inputs[i]);
    if (g->n_nodes == g->cap) {
        int cap = g->cap ? g->cap * 2 : 64;
        sleapc_node *nodes = sleapc__realloc(g->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "build graph: out of memory");
        g->nodes = nodes;
        g->cap = cap;
    }
    g->nodes[g->n_nodes] = *node;
    if (out_index)
        *out_index = g->n_nodes;
    g->n_nodes++;
    return SLEAPC_OK;
}

sleapc_status sleapc__graph_add_output(sleapc_graph *g, const char *name, int node, int stride)
{
    if (g->n_outputs == SLEAPC_GRAPH_MAX_OUTPUTS)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "build graph: more than %d outputs",
                            SLEAPC_GRAPH_MAX_OUTPUTS);
    if (node < 0 || node >= g->n_nodes)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "build graph: output %s is not a node", name);
    sleapc_graph_output *o = &g->outputs[g->n_outputs++];
    memset(o, 0, sizeof *o);
    strncpy(o->name, name, sizeof o->name - 1);
    o->node = node;
    o->stride = stride;
    return SLEAPC_OK;
}

void sleapc__graph_clear(sleapc_graph *g)
{
    if (!g)
        return;
    sleapc__free(g->nodes);
    memset(g, 0, sizeof *g);
}

sleapc_status sleapc__graph_infer_shapes(const sleapc_graph *g, int64_t b, int64_t h, int64_t w,
                                         int64_t (*shapes)[4])
{
    if (g->n_nodes < 1 || g->nodes[0].op != SLEAPC_OP_INPUT)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "graph has no input node");
    if (b < 1 || h < 1 || w < 1)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "input shape %lldx%lld batch %lld is empty",
                            (long long)h, (long long)w, (long long)b);
    for (int i = 0; i < g->n_nodes; i++) {
        const sleapc_node *n = &g->nodes[i];
        const int64_t *s0 = n->n_inputs > 0 ? shapes[n->inputs[0]] : NULL;
        int64_t *d = shapes[i];
        d[0] = b;
        switch (n->op) {
        case SLEAPC_OP_INPUT:
            d[1] = g->in_channels;
            d[2] = h;
            d[3] = w;
            break;
        case SLEAPC_OP_CONV2D:
        case SLEAPC_OP_CONV_TRANSPOSE2D:
            if (!s0 || s0[2] == 0 || s0[1] != n->c_in)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: expects %d channels, gets %lld",
                                    n->name, n->c_in, s0 ? (long long)s0[1] : 0LL);
            d[1] = n->c_out;
            d[2] = n->op == SLEAPC_OP_CONV2D ? s0[2] : 2 * s0[2];
            d[3] = n->op == SLEAPC_OP_CONV2D ? s0[3] : 2 * s0[3];
            break;
        case SLEAPC_OP_MAXPOOL2D:
            if (!s0 || s0[2] < 2 || s0[3] < 2)
                return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                    "input %lldx%lld is too small for the network (node %s)",
                                    (long long)h, (long long)w, n->name);
            d[1] = s0[1];
            d[2] = s0[2] / 2;
            d[3] = s0[3] / 2;
            break;
        case SLEAPC_OP_UPSAMPLE2X:
            d[1] = s0[1];
            d[2] = 2 * s0[2];
            d[3] = 2 * s0[3];
            break;
        case SLEAPC_OP_RESIZE_LIKE:
            if (n->n_inputs != 2)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: needs 2 inputs", n->name);
            d[1] = s0[1];
            d[2] = shapes[n->inputs[1]][2];
            d[3] = shapes[n->inputs[1]][3];
            break;
        case SLEAPC_OP_CONCAT:
            d[1] = 0;
            d[2] = s0[2];
            d[3] = s0[3];
            for (int k = 0; k < n->n_inputs; k++) {
                const int64_t *sk = shapes[n->inputs[k]];
                if (sk[2] != d[2] || sk[3] != d[3])
                    return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: concat of %lldx%lld and %lldx%lld",
                                        n->name, (long long)d[2], (long long)d[3],
                                        (long long)sk[2], (long long)sk[3]);
                d[1] += sk[1];
            }
            break;
        case SLEAPC_OP_GLOBAL_MAXPOOL:
        case SLEAPC_OP_GLOBAL_GEMPOOL:
            if (!s0 || s0[2] == 0)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: expects a map", n->name);
            d[1] = s0[1];
            d[2] = d[3] = 0;
            break;
        case SLEAPC_OP_L2NORM:
            if (!s0 || s0[2] != 0)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: expects a vector",
                                    n->name);
            d[1] = s0[1];
            d[2] = d[3] = 0;
            break;
        case SLEAPC_OP_LINEAR:
            if (!s0 || s0[2] != 0 || s0[1] != n->c_in)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: expects a %d vector",
                                    n->name, n->c_in);
            d[1] = n->c_out;
            d[2] = d[3] = 0;
            break;
        case SLEAPC_OP_PATCHES:
            if (!s0 || s0[2] == 0 || n->kernel < 1 || n->stride < 1 || n->pad < 0 ||
                (n->patch_merge && (n->kernel != 2 || n->stride != 2 || n->pad != 0)))
                return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: bad patches", n->name);
            d[1] = s0[1] * n->kernel * n->kernel;
            if (n->patch_merge) {
                d[2] = (s0[2] + 1) / 2;
                d[3] = (s0[3] + 1) / 2;
            } else {
                if (s0[2] + 2 * n->pad < n->kernel || s0[3] + 2 * n->pad < n->kernel)
                    return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                        "input %lldx%lld is too small for the network (node %s)",
                                        (long long)h, (long long)w, n->name);
                d[2] = (s0[2] + 2 * n->pad - n->kernel) / n->stride + 1;
                d[3] = (s0[3] + 2 * n->pad - n->kernel) / n->stride + 1;
            }
            break;
        case SLEAPC_OP_DWCONV:
        case SLEAPC_OP_LAYERNORM:
            if (!s0 || s0[2] == 0 || s0[1] != n->c_in || (n->op == SLEAPC_OP_DWCONV && n->kernel < 1))
                return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: expects %d channels, gets %lld",
                                    n->name, n->c_in, s0 ? (long long)s0[1] : 0LL);
            memcpy(d, s0, 4 * sizeof *d);
            break;
        case SLEAPC_OP_SCALE_ADD: {
            const int64_t *s1 = n->n_inputs == 2 ? shapes[n->inputs[1]] : NULL;
            if (!s1 || s0[1] != s1[1] || s0[2] != s1[2] || s0[3] != s1[3] ||
                (n->weight && s0[1] != n->c_in))
                return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: adds unequal shapes",
                                    n->name);
            memcpy(d, s0, 4 * sizeof *d);
            break;
        }
        case SLEAPC_OP_WINDOW_ATTENTION:
            if (!s0 || s0[2] == 0 || s0[1] != 3 * (int64_t)n->c_in || n->kernel < 1 ||
                n->heads < 1 || n->c_in % n->heads != 0 || n->shift < 0 || n->shift >= n->kernel)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: bad window attention",
                                    n->name);
            d[1] = n->c_in;
            d[2] = s0[2];
            d[3] = s0[3];
            break;
        default:
            return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: unknown op %d", n->name, n->op);
        }
        if (n->op != SLEAPC_OP_INPUT && n->n_inputs < 1)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "graph node %s: no input", n->name);
    }
    return SLEAPC_OK;
}

double sleapc__graph_node_flops(const sleapc_graph *g, int i, const int64_t d[4])
{
    const sleapc_node *n = &g->nodes[i];
    if (n->op == SLEAPC_OP_CONV2D)
        return 2.0 * (double)(d[0] * d[1] * d[2] * d[3]) * n->c_in * n->kernel * n->kernel;
    if (n->op == SLEAPC_OP_CONV_TRANSPOSE2D)
        return 2.0 * (double)(d[0] * n->c_in * (d[2] / 2) * (d[3] / 2)) * n->c_out * 9;
    if (n->op == SLEAPC_OP_LINEAR)
        return 2.0 * (double)d[0] * n->c_in * n->c_out;
    if (n->op == SLEAPC_OP_DWCONV)
        return 2.0 * (double)(d[0] * d[1] * d[2] * d[3]) * n->kernel * n->kernel;
    if (n->op == SLEAPC_OP_WINDOW_ATTENTION) {
        /* q k^T and attn v over the padded tokens: 2 * 2 * N * C per token. */
        int64_t ph, pw;
        int sh, sw;
        sleapc__window_geometry(n, d[2], d[3], &ph, &pw, &sh, &sw);
        return 4.0 * (double)(d[0] * ph * pw) * n->kernel * n->kernel * n->c_in;
    }
    return 0.0;
}

double sleapc__graph_flops(const sleapc_graph *g, int64_t b, int64_t h, int64_t w)
{
    int64_t(*shapes)[4] = sleapc__malloc((size_t)g->n_nodes * sizeof *shapes);
    if (!shapes)
        return 0.0;
    double flops = 0.0;
    if (sleapc__graph_infer_shapes(g, b, h, w, shapes) == SLEAPC_OK)
        for (int i = 0; i < g->n_nodes; i++)
            flops += sleapc__graph_node_flops(g, i, shapes[i]);
    sleapc__free(shapes);
    return flops;
}
