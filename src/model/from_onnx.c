/* ONNX graph -> graph IR: the walk over the nodes, the value table, the
 * graph input and outputs. The ops are in from_onnx_glue.c (glue,
 * normalisation, activations), from_onnx_ops.c (Conv-like) and
 * from_onnx_shape.c (shape arithmetic). */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "model/from_onnx_impl.h"

typedef sleapc_status (*op_fn)(onnx_importer *im, const sleapc_onnx_node *n);

static const struct {
    const char *op_type;
    op_fn fn;
} op_table[] = {
    {"Conv", sleapc__onnx_op_conv},
    {"ConvTranspose", sleapc__onnx_op_conv_transpose},
    {"MaxPool", sleapc__onnx_op_maxpool},
    {"Resize", sleapc__onnx_op_resize},
    {"Concat", sleapc__onnx_op_concat},
    {"Gemm", sleapc__onnx_op_gemm},
    {"GlobalMaxPool", sleapc__onnx_op_global_maxpool},
    {"Flatten", sleapc__onnx_op_flatten},
    {"Reshape", sleapc__onnx_op_flatten},
    {"Relu", sleapc__onnx_op_activation},
    {"Sigmoid", sleapc__onnx_op_activation},
    {"Softmax", sleapc__onnx_op_activation},
    {"Constant", sleapc__onnx_op_constant},
    {"Identity", sleapc__onnx_op_identity},
    {"Dropout", sleapc__onnx_op_identity},
    {"Cast", sleapc__onnx_op_cast},
    {"Div", sleapc__onnx_op_normalise},
    {"Mul", sleapc__onnx_op_normalise},
    {"Shape", sleapc__onnx_op_shape},
    {"Gather", sleapc__onnx_op_gather},
    {"Slice", sleapc__onnx_op_slice},
    {"Unsqueeze", sleapc__onnx_op_unsqueeze},
    {"Squeeze", sleapc__onnx_op_squeeze},
};

static sleapc_status import_node(onnx_importer *im, const sleapc_onnx_node *n)
{
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
        return sleapc__onnx_imp_unsupported(im, n, "domain \"%s\"", n->domain);
    for (size_t i = 0; i < sizeof op_table / sizeof op_table[0]; i++)
        if (strcmp(n->op_type, op_table[i].op_type) == 0)
            return op_table[i].fn(im, n);
    return sleapc__onnx_imp_unsupported(im, n, NULL);
}

static sleapc_status declare(onnx_importer *im, const char *name, onnx_val_kind kind,
                             const sleapc_onnx_tensor *t)
{
    if (sleapc__onnx_imp_val(im, name))
        return sleapc__fail(SLEAPC_ERR_FORMAT, "import ONNX: %s: \"%s\" is defined twice", im->path,
                            name);
    im->vals[im->n_vals++] = (onnx_val){.name = name, .kind = kind, .t = t};
    return SLEAPC_OK;
}

/* Reads of main-graph values from inside n's subgraphs (If branches). */
static void count_subgraph_uses(onnx_importer *im, const sleapc_onnx_node *n, int depth)
{
    for (int a = 0; a < n->n_attrs && depth < 8; a++) {
        const sleapc_onnx_graph *sub = n->attrs[a].g;
        for (int i = 0; sub && i < sub->n_nodes; i++) {
            for (int k = 0; k < sub->nodes[i].n_inputs; k++) {
                onnx_val *v = sleapc__onnx_imp_val(im, sub->nodes[i].inputs[k]);
                if (v)
                    v->n_uses++;
            }
            count_subgraph_uses(im, &sub->nodes[i], depth + 1);
        }
    }
}

/* Every value of the graph, with how often it is read. */
static sleapc_status declare_values(onnx_importer *im)
{
    const sleapc_onnx_graph *og = &im->om->graph;
    size_t cap = (size_t)og->n_initializers + (size_t)og->n_inputs;
    for (int i = 0; i < og->n_nodes; i++)
        cap += (size_t)og->nodes[i].n_outputs;
    im->vals = sleapc__calloc(cap ? cap : 1, sizeof *im->vals);
    if (!im->vals)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "import ONNX: out of memory");
    sleapc_status st = SLEAPC_OK;
    for (int i = 0; !st && i < og->n_initializers; i++)
        st = declare(im, og->initializers[i].name, ONNX_VAL_CONST, &og->initializers[i]);
    for (int i = 0; !st && i < og->n_inputs; i++)
        if (!sleapc__onnx_initializer(og, og->inputs[i].name))
            st = declare(im, og->inputs[i].name, ONNX_VAL_UNDEFINED, NULL);
    for (int i = 0; !st && i < og->n_nodes; i++)
        for (int k = 0; !st && k < og->nodes[i].n_outputs; k++)
            if (og->nodes[i].outputs[k][0])
                st = declare(im, og->nodes[i].outputs[k], ONNX_VAL_UNDEFINED, NULL);
    for (int i = 0; !st && i < og->n_nodes; i++) {
        const sleapc_onnx_node *n = &og->nodes[i];
        for (int k = 0; !st && k < n->n_inputs; k++) {
            if (!n->inputs[k][0])
                continue;
            onnx_val *v = sleapc__onnx_imp_val(im, n->inputs[k]);
            if (!v)
                st = sleapc__fail(
                    SLEAPC_ERR_FORMAT,
                    "import ONNX: %s: ONNX node %s reads \"%s\", which nothing defines", im->path,
                    sleapc__onnx_imp_label(n), n->inputs[k]);
            else
                v->n_uses++;
        }
    }
    for (int i = 0; !st && i < og->n_nodes; i++)
        count_subgraph_uses(im, &og->nodes[i], 0);
    for (int i = 0; !st && i < og->n_outputs; i++) {
        onnx_val *v = sleapc__onnx_imp_val(im, og->outputs[i].name);
        if (!v)
            st = sleapc__fail(SLEAPC_ERR_FORMAT,
                              "import ONNX: %s: graph output \"%s\" is never defined", im->path,
                              og->outputs[i].name);
        else
            v->n_uses++;
    }
    return st;
}

/* The one graph input (initializers aside): (B, C, H, W) uint8 or float32. */
static sleapc_status import_input(onnx_importer *im)
{
    const sleapc_onnx_graph *og = &im->om->graph;
    const sleapc_onnx_value *in = NULL;
    int n_in = 0;
    for (int i = 0; i < og->n_inputs; i++)
        if (!sleapc__onnx_initializer(og, og->inputs[i].name)) {
            in = &og->inputs[i];
            n_in++;
        }
    if (n_in != 1)
        return sleapc__fail(
            SLEAPC_ERR_UNSUPPORTED,
            "import ONNX: %s: the graph has %d inputs (sleapc runs one image input)", im->path,
            n_in);
    if (in->ndim != 4 || in->shape[1] < 1 || in->shape[1] > 64 ||
        (in->dtype != SLEAPC_ONNX_DTYPE_FLOAT && in->dtype != SLEAPC_ONNX_DTYPE_UINT8))
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "import ONNX: %s: input \"%s\" is not a (B, C, H, W) uint8 or float32 "
                            "image with a fixed C",
                            im->path, in->name);
    im->g->in_channels = (int)in->shape[1];
    sleapc_node node = {.op = SLEAPC_OP_INPUT};
    snprintf(node.name, sizeof node.name, "%s", in->name);
    sleapc_status st = sleapc__graph_add(im->g, &node, NULL);
    if (st)
        return st;
    /* A float input is already x / 255 (or 0..255, which the IR input node
     * divides by 255 too); a uint8 one goes through Cast and Div first. */
    onnx_val *v = sleapc__onnx_imp_val(im, in->name);
    v->kind = in->dtype == SLEAPC_ONNX_DTYPE_UINT8 ? ONNX_VAL_RAW_INPUT : ONNX_VAL_NODE;
    v->node = 0;
    v->rank = 4;
    return SLEAPC_OK;
}

#define STRIDE_VECTOR (-1000)

/* log2 of each node's output stride relative to the input; STRIDE_VECTOR for
 * (B, C) outputs. */
static sleapc_status node_strides(const onnx_importer *im, int *lg, int *max_lg)
{
    const sleapc_graph *g = im->g;
    *max_lg = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const sleapc_node *n = &g->nodes[i];
        int in = n->n_inputs ? lg[n->inputs[0]] : 0;
        switch (n->op) {
        case SLEAPC_OP_MAXPOOL2D:
            lg[i] = in + 1;
            break;
        case SLEAPC_OP_UPSAMPLE2X:
        case SLEAPC_OP_CONV_TRANSPOSE2D:
            lg[i] = in - 1;
            break;
        case SLEAPC_OP_RESIZE_LIKE:
            lg[i] = lg[n->inputs[1]];
            break;
        case SLEAPC_OP_GLOBAL_MAXPOOL:
        case SLEAPC_OP_LINEAR:
            lg[i] = STRIDE_VECTOR;
            break;
        default:
            lg[i] = in;
            break;
        }
        for (int k = 1; n->op == SLEAPC_OP_CONCAT && k < n->n_inputs; k++)
            if (lg[n->inputs[k]] != in)
                return sleapc__fail(
                    SLEAPC_ERR_FORMAT,
                    "import ONNX: %s: node %s concatenates maps of different strides", im->path,
                    n->name);
        if (lg[i] != STRIDE_VECTOR && lg[i] > *max_lg)
            *max_lg = lg[i];
    }
    return SLEAPC_OK;
}

/* IR output for graph output `o`, named `name`; checks against `head`. */
static sleapc_status add_output(onnx_importer *im, const char *onnx_name, const char *name,
                                const sleapc_head_spec *head, const int *lg)
{
    onnx_val *v = sleapc__onnx_imp_val(im, onnx_name);
    if (!v || v->kind != ONNX_VAL_NODE || v->node == 0 || v->pooled)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "import ONNX: %s: graph output \"%s\" is not a network output",
                            im->path, onnx_name);
    int l = lg[v->node];
    if (l != STRIDE_VECTOR && (l < 0 || l > 20))
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "import ONNX: %s: output \"%s\" is at stride 2^%d", im->path, onnx_name,
                            l);
    int stride = l == STRIDE_VECTOR ? 0 : 1 << l;
    int64_t channels = 0;
    sleapc_status st = sleapc__onnx_imp_channels(im, v->node, &channels);
    if (st)
        return st;
    if (head && (head->stride != stride || head->channels != channels))
        return sleapc__fail(SLEAPC_ERR_FORMAT,
                            "import ONNX: %s: output \"%s\" has %lld channels at stride %d, the "
                            "config says %d at stride %d",
                            im->path, onnx_name, (long long)channels, stride, head->channels,
                            head->stride);
    return sleapc__graph_add_output(im->g, name, v->node, stride);
}

static sleapc_status import_outputs(onnx_importer *im, const sleapc_head_spec *heads, int n_heads)
{
    const sleapc_onnx_graph *og = &im->om->graph;
    int *lg = sleapc__calloc((size_t)im->g->n_nodes, sizeof *lg);
    if (!lg)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "import ONNX: out of memory");
    int max_lg = 0;
    sleapc_status st = node_strides(im, lg, &max_lg);
    if (!st && max_lg > 20)
        st = sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "import ONNX: %s: stride 2^%d", im->path, max_lg);
    if (!st)
        im->g->max_stride = 1 << max_lg;
    for (int h = 0; !st && h < n_heads; h++) {
        bool found = false;
        for (int i = 0; !found && i < og->n_outputs; i++)
            found = strcmp(og->outputs[i].name, heads[h].name) == 0;
        st = found ? add_output(im, heads[h].name, heads[h].name, &heads[h], lg)
                   : sleapc__fail(SLEAPC_ERR_FORMAT,
                                  "import ONNX: %s: no graph output \"%s\" (a head of this model)",
                                  im->path, heads[h].name);
    }
    for (int i = 0; !st && n_heads == 0 && i < og->n_outputs; i++)
        st = add_output(im, og->outputs[i].name, og->outputs[i].name, NULL, lg);
    sleapc__free(lg);
    return st;
}

/* Shape-check the whole graph once on the smallest valid input, then free
 * the importer; on failure clear what it built. */
static sleapc_status finish(onnx_importer *im, sleapc_status st)
{
    sleapc_graph *g = im->g;
    if (!st && g->n_outputs == 0)
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "import ONNX: %s: the graph has no outputs", im->path);
    if (!st) {
        int64_t(*shapes)[4] = sleapc__malloc((size_t)g->n_nodes * sizeof *shapes);
        int64_t side = g->max_stride;
        st = shapes ? sleapc__graph_infer_shapes(g, 1, side, side, shapes)
                    : sleapc__fail(SLEAPC_ERR_NOMEM, "import ONNX: out of memory");
        sleapc__free(shapes);
        if (st)
            st = sleapc__wrap(st, "import ONNX: %s", im->path);
    }
    sleapc__free(im->vals);
    if (st) {
        sleapc__graph_clear(g);
        sleapc__weights_clear(im->w);
    }
    return st;
}

sleapc_status sleapc__graph_from_onnx(const sleapc_onnx_model *om, const sleapc_head_spec *heads,
                                      int n_heads, sleapc_weights *w, sleapc_graph *g)
{
    memset(g, 0, sizeof *g);
    onnx_importer im = {.om = om, .path = om->path ? om->path : "model", .w = w, .g = g};
    sleapc_status st = declare_values(&im);
    if (!st)
        st = import_input(&im);
    for (int i = 0; !st && i < om->graph.n_nodes; i++)
        st = import_node(&im, &om->graph.nodes[i]);
    if (!st)
        st = import_outputs(&im, heads, n_heads);
    return finish(&im, st);
}

/* Whether a node of the segment reads an output of n. */
static bool segment_reads(const sleapc_onnx_model *om, const sleapc_onnx_segment *seg,
                          const sleapc_onnx_node *n)
{
    for (int i = 0; i < seg->n_nodes; i++) {
        if (seg->nodes[i] < 0 || seg->nodes[i] >= om->graph.n_nodes)
            continue;
        const sleapc_onnx_node *r = &om->graph.nodes[seg->nodes[i]];
        for (int k = 0; k < r->n_inputs; k++)
            for (int o = 0; o < n->n_outputs; o++)
                if (n->outputs[o][0] && strcmp(r->inputs[k], n->outputs[o]) == 0)
                    return true;
    }
    return false;
}

sleapc_status sleapc__graph_from_onnx_segment(const sleapc_onnx_model *om,
                                              const sleapc_onnx_segment *seg, sleapc_weights *w,
                                              sleapc_graph *g)
{
    memset(g, 0, sizeof *g);
    onnx_importer im = {.om = om, .path = om->path ? om->path : "model", .w = w, .g = g};
    sleapc_status st = declare_values(&im);
    onnx_val *in = st ? NULL : sleapc__onnx_imp_val(&im, seg->input);
    if (!st && (!in || seg->in_channels < 1 || seg->n_outputs > SLEAPC_GRAPH_MAX_OUTPUTS))
        st = sleapc__fail(SLEAPC_ERR_FORMAT, "import ONNX: %s: bad network segment at \"%s\"",
                          im.path, seg->input);
    if (!st) {
        g->in_channels = seg->in_channels;
        sleapc_node node = {.op = SLEAPC_OP_INPUT};
        snprintf(node.name, sizeof node.name, "%s", seg->input);
        st = sleapc__graph_add(g, &node, NULL);
        *in = (onnx_val){.name = in->name, .n_uses = in->n_uses, .kind = ONNX_VAL_NODE, .rank = 4};
    }
    /* Constant nodes are pure: wherever they sit, the ones the segment reads
     * are imported first. */
    for (int i = 0; !st && i < om->graph.n_nodes; i++)
        if (strcmp(om->graph.nodes[i].op_type, "Constant") == 0 &&
            segment_reads(om, seg, &om->graph.nodes[i]))
            st = import_node(&im, &om->graph.nodes[i]);
    for (int i = 0; !st && i < seg->n_nodes; i++)
        st = seg->nodes[i] >= 0 && seg->nodes[i] < om->graph.n_nodes
                 ? import_node(&im, &om->graph.nodes[seg->nodes[i]])
                 : sleapc__fail(SLEAPC_ERR_FORMAT, "import ONNX: %s: no node %d", im.path,
                                seg->nodes[i]);
    int *lg = st ? NULL : sleapc__calloc((size_t)g->n_nodes, sizeof *lg);
    int max_lg = 0;
    if (!st && !lg)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "import ONNX: out of memory");
    if (!st)
        st = node_strides(&im, lg, &max_lg);
    if (!st)
        g->max_stride = 1 << (max_lg < 20 ? max_lg : 20);
    for (int k = 0; !st && k < seg->n_outputs; k++) {
        char name[16];
        snprintf(name, sizeof name, "%d", k);
        st = add_output(&im, seg->outputs[k], name, NULL, lg);
    }
    sleapc__free(lg);
    return finish(&im, st);
}
