/* Lowering of the graph IR to an XNNPACK subgraph (the API of XNNPACK as of
 * early 2022). Activations are NHWC inside; every value has static dims, so a
 * subgraph describes one input shape.
 *
 * Ops this XNNPACK has no node for are composed from ones it has:
 * - channel concat: each input zero-padded along channels to its place, then
 *   summed (adding exact zeros changes no value);
 * - global max pool: a max pooling whose window is the whole map (and nothing
 *   for a 1 x 1 map, where XNNPACK refuses a 1 x 1 window);
 * - an identity (RESIZE_LIKE of equal sizes, a one-input concat) reuses its
 *   input's value; a graph output that is such an alias gets a copy.
 * An embedding graph's GeM, dense layers and L2 norm are no nodes here: they
 * run on the host after the runtime (xnnpack_tail.c). */
#include "backends/sigmoid.h"
#include "backends/xnnpack/xnnpack_impl.h"

#include <math.h>
#include <string.h>
#include <xnnpack.h>

#include "core/alloc.h"
#include "core/error.h"

const char *sleapc__xnnpack_status_str(int status)
{
    switch (status) {
    case xnn_status_success:
        return "success";
    case xnn_status_uninitialized:
        return "uninitialized";
    case xnn_status_invalid_parameter:
        return "invalid_parameter";
    case xnn_status_invalid_state:
        return "invalid_state";
    case xnn_status_unsupported_parameter:
        return "unsupported_parameter";
    case xnn_status_unsupported_hardware:
        return "unsupported_hardware";
    case xnn_status_out_of_memory:
        return "out_of_memory";
    }
    return "unknown";
}

sleapc_status sleapc__xnnpack_check(const sleapc_graph *g, bool fp16)
{
    if (g->n_nodes < 1 || g->nodes[0].op != SLEAPC_OP_INPUT)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "graph has no input node");
    xnnpack_tail tail;
    sleapc_status st = sleapc__xnnpack_tail_find(g, &tail);
    if (st)
        return st;
    /* The host tail runs in float32: fp16 keeps the refusal of linears below. */
    for (int i = 0; i < g->n_nodes; i++) {
        const sleapc_node *n = &g->nodes[i];
        const char *op = sleapc__op_name(n->op);
        /* The ConvNeXt / SwinT ops (patches and on) are not lowered: such a
         * graph runs on another backend. */
        bool host = i >= tail.start;
        if ((unsigned)n->op >= SLEAPC_OP_COUNT || (n->op >= SLEAPC_OP_PATCHES && !host) ||
            (n->op == SLEAPC_OP_INPUT && i > 0))
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "node %s: op %s (%d) is not supported",
                                n->name, op, (int)n->op);
        bool has_weights = n->op == SLEAPC_OP_CONV2D || n->op == SLEAPC_OP_CONV_TRANSPOSE2D ||
                           n->op == SLEAPC_OP_LINEAR;
        if (has_weights && (!n->weight || n->c_in < 1 || n->c_out < 1))
            return sleapc__fail(SLEAPC_ERR_FORMAT, "node %s: %s without weights or channels",
                                n->name, op);
        if (n->op == SLEAPC_OP_CONV2D && n->kernel < 1)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "node %s: kernel %d", n->name, n->kernel);
        if (n->op == SLEAPC_OP_CONV_TRANSPOSE2D && n->kernel != 3)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "node %s: transposed conv kernel %d (only 3 x 3)", n->name,
                                n->kernel);
        /* Activations: fused ReLU on conv / linear, a sigmoid after any of
         * those, softmax only over a vector's channels. */
        bool act_ok = n->act == SLEAPC_ACT_NONE ||
                      (has_weights && n->act != SLEAPC_ACT_SOFTMAX && n->act != SLEAPC_ACT_GELU) ||
                      (n->op == SLEAPC_OP_LINEAR && n->act == SLEAPC_ACT_SOFTMAX);
        if (!act_ok)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "node %s: %s with activation %d", n->name,
                                op, (int)n->act);
        /* A sigmoid inside the subgraph would be XNNPACK's, which rounds
         * otherwise than the other backends; every model's sigmoid ends a
         * head. */
        if (n->act == SLEAPC_ACT_SIGMOID && !sleapc__sigmoid_on_host(g, i))
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "node %s: a sigmoid that other nodes read (only a head's "
                                "sigmoid is supported)",
                                n->name);
        /* XNNPACK rewrites a subgraph to fp16 only when every node has an
         * fp16 operator; fully connected, sigmoid and softmax have none. */
        if (fp16 && (n->op == SLEAPC_OP_LINEAR || n->act == SLEAPC_ACT_SIGMOID ||
                     n->act == SLEAPC_ACT_SOFTMAX))
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "node %s: %s%s has no fp16 operator in this XNNPACK", n->name, op,
                                n->act == SLEAPC_ACT_NONE ? "" : " with its activation");
    }
    return SLEAPC_OK;
}

void sleapc__xnnpack_consts_free(xnnpack_consts *c)
{
    if (!c)
        return;
    for (int i = 0; c->weight && i < c->n_nodes; i++)
        sleapc__aligned_free(c->weight[i]);
    sleapc__free(c->weight);
    sleapc__aligned_free(c->zeros);
    memset(c, 0, sizeof *c);
}

/* (c_out, c_in, k, k) -> (c_out, k, k, c_in). */
static void conv_to_ohwi(const float *src, int c_out, int c_in, int k, float *dst)
{
    size_t kk = (size_t)k * (size_t)k;
    for (size_t o = 0; o < (size_t)c_out; o++)
        for (size_t i = 0; i < (size_t)c_in; i++)
            for (size_t t = 0; t < kk; t++)
                dst[(o * kk + t) * (size_t)c_in + i] = src[(o * (size_t)c_in + i) * kk + t];
}

/* ConvTranspose2d (c_in, c_out, k, k) -> (c_out, k, k, c_in). XNNPACK's
 * deconvolution scatters input pixel i with tap a to output 2i + a - pad, as
 * PyTorch does, so the taps keep their order (no flip). */
static void convt_to_ohwi(const float *src, int c_in, int c_out, int k, float *dst)
{
    size_t kk = (size_t)k * (size_t)k;
    for (size_t i = 0; i < (size_t)c_in; i++)
        for (size_t o = 0; o < (size_t)c_out; o++)
            for (size_t t = 0; t < kk; t++)
                dst[(o * kk + t) * (size_t)c_in + i] = src[(i * (size_t)c_out + o) * kk + t];
}

sleapc_status sleapc__xnnpack_consts_create(const sleapc_graph *g, xnnpack_consts *out)
{
    memset(out, 0, sizeof *out);
    out->n_nodes = g->n_nodes;
    out->weight = sleapc__calloc((size_t)g->n_nodes, sizeof *out->weight);
    if (!out->weight)
        goto nomem;
    int max_ch = 1;
    for (int i = 0; i < g->n_nodes; i++) {
        const sleapc_node *n = &g->nodes[i];
        bool conv = n->op == SLEAPC_OP_CONV2D, convt = n->op == SLEAPC_OP_CONV_TRANSPOSE2D;
        if ((conv || convt || n->op == SLEAPC_OP_LINEAR) && n->c_out > max_ch)
            max_ch = n->c_out;
        /* A 1 x 1 conv's OIHW is already OHWI: use the IR's array. */
        if (!(convt || (conv && n->kernel > 1)))
            continue;
        size_t count = (size_t)n->c_out * (size_t)n->c_in * (size_t)n->kernel * (size_t)n->kernel;
        out->weight[i] = sleapc__aligned_alloc(count * sizeof(float));
        if (!out->weight[i])
            goto nomem;
        if (conv)
            conv_to_ohwi(n->weight, n->c_out, n->c_in, n->kernel, out->weight[i]);
        else
            convt_to_ohwi(n->weight, n->c_in, n->c_out, n->kernel, out->weight[i]);
    }
    out->zeros = sleapc__aligned_alloc((size_t)max_ch * sizeof(float));
    if (!out->zeros)
        goto nomem;
    memset(out->zeros, 0, (size_t)max_ch * sizeof(float));
    return SLEAPC_OK;
nomem:
    sleapc__xnnpack_consts_free(out);
    return sleapc__fail(SLEAPC_ERR_NOMEM, "xnnpack: convert weights: out of memory");
}

/* One lowering in progress. */
typedef struct lower_ctx {
    const sleapc_graph *g;
    const xnnpack_tail *tail; /* the cut is the one output when tail->start < n_nodes */
    const xnnpack_consts *c;
    const int64_t (*shapes)[4];
    xnn_subgraph_t sg;
    uint32_t *value;   /* per node: its value id */
    size_t (*dims)[4]; /* per node: the value's dims */
    int *n_dims;       /* per node: 4 for maps and pooled vectors, 2 for linear */
} lower_ctx;

static sleapc_status xnn_fail(const sleapc_node *n, const char *what, enum xnn_status s)
{
    return sleapc__fail(SLEAPC_ERR_BACKEND, "node %s (%s): %s: %s", n->name, sleapc__op_name(n->op),
                        what, sleapc__xnnpack_status_str(s));
}

static bool has_tail(const lower_ctx *lc)
{
    return lc->tail->start < lc->g->n_nodes;
}

/* Define a float32 value: static when data is set, external when ext_id is
 * not XNN_INVALID_VALUE_ID. */
static sleapc_status define_value(lower_ctx *lc, const sleapc_node *n, int n_dims,
                                  const size_t *dims, const void *data, uint32_t ext_id,
                                  uint32_t flags, uint32_t *id)
{
    enum xnn_status s = xnn_define_tensor_value(lc->sg, xnn_datatype_fp32, (size_t)n_dims, dims,
                                                data, ext_id, flags, id);
    return s == xnn_status_success ? SLEAPC_OK : xnn_fail(n, "xnn_define_tensor_value", s);
}

/* The value node i writes: the external output of the first graph output that
 * names it, else an internal one. Records its id and dims. */
static sleapc_status node_value(lower_ctx *lc, int i, int n_dims, const size_t *dims)
{
    uint32_t ext = XNN_INVALID_VALUE_ID, flags = 0;
    if (has_tail(lc) && lc->tail->cut == i) {
        ext = XNNPACK_OUTPUT_ID(0);
        flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
    }
    for (int o = 0; !has_tail(lc) && o < lc->g->n_outputs && ext == XNN_INVALID_VALUE_ID; o++)
        if (lc->g->outputs[o].node == i) {
            ext = XNNPACK_OUTPUT_ID(o);
            flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
        }
    memcpy(lc->dims[i], dims, (size_t)n_dims * sizeof *dims);
    lc->n_dims[i] = n_dims;
    return define_value(lc, &lc->g->nodes[i], n_dims, dims, NULL, ext, flags, &lc->value[i]);
}

/* Node i is its input's value, unchanged. */
static void alias(lower_ctx *lc, int i, int src)
{
    lc->value[i] = lc->value[src];
    memcpy(lc->dims[i], lc->dims[src], sizeof lc->dims[i]);
    lc->n_dims[i] = lc->n_dims[src];
}

static void nhwc_dims(const int64_t *s, size_t *d)
{
    d[0] = (size_t)s[0];
    d[1] = (size_t)s[2];
    d[2] = (size_t)s[3];
    d[3] = (size_t)s[1];
}

static void act_range(sleapc_act act, float *lo, float *hi)
{
    *lo = act == SLEAPC_ACT_RELU ? 0.0f : -INFINITY;
    *hi = INFINITY;
}

/* Whether node i's activation is a subgraph node of its own (softmax). ReLU
 * is fused, and the sigmoid is applied on the host after the runtime
 * (sleapc__sigmoid_on_host). */
static bool act_node(const sleapc_node *n)
{
    return n->act == SLEAPC_ACT_SOFTMAX;
}

/* The value a weighted node writes before its activation node: the node's
 * own value when there is no activation node, else an internal one. */
static sleapc_status pre_act_value(lower_ctx *lc, int i, int n_dims, const size_t *dims,
                                   uint32_t *id)
{
    const sleapc_node *n = &lc->g->nodes[i];
    if (!act_node(n)) {
        sleapc_status st = node_value(lc, i, n_dims, dims);
        *id = lc->value[i];
        return st;
    }
    return define_value(lc, n, n_dims, dims, NULL, XNN_INVALID_VALUE_ID, 0, id);
}

/* Softmax from pre (the weighted op's result) into node i's value. */
static sleapc_status post_act(lower_ctx *lc, int i, int n_dims, const size_t *dims, uint32_t pre)
{
    const sleapc_node *n = &lc->g->nodes[i];
    if (!act_node(n))
        return SLEAPC_OK;
    sleapc_status st = node_value(lc, i, n_dims, dims);
    if (st)
        return st;
    enum xnn_status s = xnn_define_softmax(lc->sg, pre, lc->value[i], 0);
    return s == xnn_status_success ? SLEAPC_OK : xnn_fail(n, "xnn_define_softmax", s);
}

static sleapc_status lower_conv(lower_ctx *lc, int i)
{
    const sleapc_node *n = &lc->g->nodes[i];
    bool transposed = n->op == SLEAPC_OP_CONV_TRANSPOSE2D;
    int k = n->kernel;
    size_t d[4], wd[4] = {(size_t)n->c_out, (size_t)k, (size_t)k, (size_t)n->c_in};
    size_t bd[1] = {(size_t)n->c_out};
    nhwc_dims(lc->shapes[i], d);
    const float *w = lc->c->weight[i] ? lc->c->weight[i] : n->weight;
    const float *b = n->bias ? n->bias : lc->c->zeros;
    uint32_t w_id, b_id, out_id;
    sleapc_status st = define_value(lc, n, 4, wd, w, XNN_INVALID_VALUE_ID, 0, &w_id);
    if (!st)
        st = define_value(lc, n, 1, bd, b, XNN_INVALID_VALUE_ID, 0, &b_id);
    if (!st)
        st = pre_act_value(lc, i, 4, d, &out_id);
    if (st)
        return st;
    float lo, hi;
    act_range(n->act, &lo, &hi);
    uint32_t in_id = lc->value[n->inputs[0]];
    enum xnn_status s;
    if (!transposed) {
        /* PyTorch padding="same" (stride 1): the odd one out goes bottom/right. */
        uint32_t p0 = (uint32_t)(k - 1) / 2, p1 = (uint32_t)(k - 1) - p0;
        s = xnn_define_convolution_2d(lc->sg, p0, p1, p1, p0, (uint32_t)k, (uint32_t)k, 1, 1, 1, 1,
                                      1, (size_t)n->c_in, (size_t)n->c_out, lo, hi, in_id, w_id,
                                      b_id, out_id, 0);
        if (s != xnn_status_success)
            return xnn_fail(n, "xnn_define_convolution_2d", s);
    } else {
        /* The full stride-2 result has 2H + 1 rows; PyTorch (padding 1,
         * output_padding 1) keeps rows 1..2H, Keras "same" rows 0..2H-1. As
         * XNNPACK's output padding: one row/col cut at the top/left or at the
         * bottom/right. */
        uint32_t pt = n->keras_placement ? 0 : 1, pb = 1 - pt;
        s = xnn_define_deconvolution_2d(lc->sg, pt, pb, pb, pt, 0, 0, 3, 3, 2, 2, 1, 1, 1,
                                        (size_t)n->c_in, (size_t)n->c_out, lo, hi, in_id, w_id,
                                        b_id, out_id, 0);
        if (s != xnn_status_success)
            return xnn_fail(n, "xnn_define_deconvolution_2d", s);
    }
    return post_act(lc, i, 4, d, out_id);
}

static sleapc_status lower_linear(lower_ctx *lc, int i)
{
    const sleapc_node *n = &lc->g->nodes[i];
    size_t d[2] = {(size_t)lc->shapes[i][0], (size_t)n->c_out};
    size_t wd[2] = {(size_t)n->c_out, (size_t)n->c_in}; /* nn.Linear's (out, in) */
    size_t bd[1] = {(size_t)n->c_out};
    const float *b = n->bias ? n->bias : lc->c->zeros;
    uint32_t w_id, b_id, out_id;
    sleapc_status st = define_value(lc, n, 2, wd, n->weight, XNN_INVALID_VALUE_ID, 0, &w_id);
    if (!st)
        st = define_value(lc, n, 1, bd, b, XNN_INVALID_VALUE_ID, 0, &b_id);
    if (!st)
        st = pre_act_value(lc, i, 2, d, &out_id);
    if (st)
        return st;
    float lo, hi;
    act_range(n->act, &lo, &hi);
    /* RESHAPE_2D: a pooled (B,1,1,C) input is read as (B,C). */
    enum xnn_status s = xnn_define_fully_connected(lc->sg, lo, hi, lc->value[n->inputs[0]], w_id,
                                                   b_id, out_id, XNN_FLAG_TENSORFLOW_RESHAPE_2D);
    if (s != xnn_status_success)
        return xnn_fail(n, "xnn_define_fully_connected", s);
    return post_act(lc, i, 2, d, out_id);
}

static sleapc_status lower_maxpool(lower_ctx *lc, int i, uint32_t ph, uint32_t pw, int n_dims,
                                   const size_t *d)
{
    const sleapc_node *n = &lc->g->nodes[i];
    sleapc_status st = node_value(lc, i, n_dims, d);
    if (st)
        return st;
    enum xnn_status s =
        xnn_define_max_pooling_2d(lc->sg, 0, 0, 0, 0, ph, pw, ph, pw, 1, 1, -INFINITY, INFINITY,
                                  lc->value[n->inputs[0]], lc->value[i], 0);
    return s == xnn_status_success ? SLEAPC_OK : xnn_fail(n, "xnn_define_max_pooling_2d", s);
}

static sleapc_status lower_resize(lower_ctx *lc, int i)
{
    const sleapc_node *n = &lc->g->nodes[i];
    const int64_t *s0 = lc->shapes[n->inputs[0]], *d0 = lc->shapes[i];
    if (s0[2] == d0[2] && s0[3] == d0[3]) {
        alias(lc, i, n->inputs[0]);
        return SLEAPC_OK;
    }
    size_t d[4];
    nhwc_dims(d0, d);
    sleapc_status st = node_value(lc, i, 4, d);
    if (st)
        return st;
    /* No flag: half-pixel centres with the source coordinate clamped to the
     * map, as PyTorch's align_corners=False; the scale is in / out, as
     * nn.Upsample(scale_factor=2) and F.interpolate(size=...) use. */
    enum xnn_status s = xnn_define_static_resize_bilinear_2d(
        lc->sg, d[1], d[2], lc->value[n->inputs[0]], lc->value[i], 0);
    return s == xnn_status_success ? SLEAPC_OK
                                   : xnn_fail(n, "xnn_define_static_resize_bilinear_2d", s);
}

static sleapc_status lower_concat(lower_ctx *lc, int i)
{
    const sleapc_node *n = &lc->g->nodes[i];
    if (n->n_inputs == 1) {
        alias(lc, i, n->inputs[0]);
        return SLEAPC_OK;
    }
    size_t d[4];
    nhwc_dims(lc->shapes[i], d);
    uint32_t sum = XNN_INVALID_VALUE_ID;
    size_t offset = 0;
    for (int k = 0; k < n->n_inputs; k++) {
        size_t ck = (size_t)lc->shapes[n->inputs[k]][1];
        size_t pre[4] = {0, 0, 0, offset}, post[4] = {0, 0, 0, d[3] - offset - ck};
        offset += ck;
        uint32_t padded;
        sleapc_status st = define_value(lc, n, 4, d, NULL, XNN_INVALID_VALUE_ID, 0, &padded);
        if (st)
            return st;
        enum xnn_status s = xnn_define_static_constant_pad(lc->sg, pre, post, 0.0f,
                                                           lc->value[n->inputs[k]], padded, 0);
        if (s != xnn_status_success)
            return xnn_fail(n, "xnn_define_static_constant_pad", s);
        if (k == 0) {
            sum = padded;
            continue;
        }
        uint32_t next;
        if (k == n->n_inputs - 1) {
            st = node_value(lc, i, 4, d);
            next = lc->value[i];
        } else {
            st = define_value(lc, n, 4, d, NULL, XNN_INVALID_VALUE_ID, 0, &next);
        }
        if (st)
            return st;
        s = xnn_define_add2(lc->sg, -INFINITY, INFINITY, sum, padded, next, 0);
        if (s != xnn_status_success)
            return xnn_fail(n, "xnn_define_add2", s);
        sum = next;
    }
    return SLEAPC_OK;
}

static sleapc_status lower_node(lower_ctx *lc, int i)
{
    const sleapc_node *n = &lc->g->nodes[i];
    const int64_t *s = lc->shapes[i];
    size_t d[4];
    nhwc_dims(s, d);
    switch (n->op) {
    case SLEAPC_OP_INPUT:
        memcpy(lc->dims[i], d, sizeof d);
        lc->n_dims[i] = 4;
        return define_value(lc, n, 4, d, NULL, XNNPACK_INPUT_ID, XNN_VALUE_FLAG_EXTERNAL_INPUT,
                            &lc->value[i]);
    case SLEAPC_OP_CONV2D:
    case SLEAPC_OP_CONV_TRANSPOSE2D:
        return lower_conv(lc, i);
    case SLEAPC_OP_MAXPOOL2D:
        return lower_maxpool(lc, i, 2, 2, 4, d);
    case SLEAPC_OP_UPSAMPLE2X:
    case SLEAPC_OP_RESIZE_LIKE:
        return lower_resize(lc, i);
    case SLEAPC_OP_CONCAT:
        return lower_concat(lc, i);
    case SLEAPC_OP_GLOBAL_MAXPOOL: {
        const int64_t *s0 = lc->shapes[n->inputs[0]];
        if (s0[2] * s0[3] == 1) {
            alias(lc, i, n->inputs[0]);
            return SLEAPC_OK;
        }
        size_t pd[4] = {(size_t)s0[0], 1, 1, (size_t)s0[1]};
        return lower_maxpool(lc, i, (uint32_t)s0[2], (uint32_t)s0[3], 4, pd);
    }
    case SLEAPC_OP_LINEAR:
        return lower_linear(lc, i);
    default:
        break;
    }
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "node %s: op %d is not supported", n->name,
                        (int)n->op);
}

/* A graph output whose node did not get that output's external value (an
 * alias, or a node named by two outputs) is copied into it. */
static sleapc_status copy_outputs(lower_ctx *lc)
{
    int n_out = has_tail(lc) ? 1 : lc->g->n_outputs;
    for (int o = 0; o < n_out; o++) {
        int i = has_tail(lc) ? lc->tail->cut : lc->g->outputs[o].node;
        if (lc->value[i] == XNNPACK_OUTPUT_ID(o))
            continue;
        const sleapc_node *n = &lc->g->nodes[i];
        uint32_t id;
        sleapc_status st = define_value(lc, n, lc->n_dims[i], lc->dims[i], NULL,
                                        XNNPACK_OUTPUT_ID(o), XNN_VALUE_FLAG_EXTERNAL_OUTPUT, &id);
        if (st)
            return st;
        enum xnn_status s = xnn_define_static_reshape(lc->sg, (size_t)lc->n_dims[i], lc->dims[i],
                                                      lc->value[i], id, 0);
        if (s != xnn_status_success)
            return xnn_fail(n, "xnn_define_static_reshape (output copy)", s);
    }
    return SLEAPC_OK;
}

sleapc_status sleapc__xnnpack_lower(const sleapc_graph *g, const xnnpack_consts *c,
                                    const xnnpack_tail *tail, const int64_t (*shapes)[4],
                                    struct xnn_subgraph *sg)
{
    lower_ctx lc = {.g = g, .tail = tail, .c = c, .shapes = shapes, .sg = sg};
    lc.value = sleapc__malloc((size_t)g->n_nodes * sizeof *lc.value);
    lc.dims = sleapc__calloc((size_t)g->n_nodes, sizeof *lc.dims);
    lc.n_dims = sleapc__calloc((size_t)g->n_nodes, sizeof *lc.n_dims);
    sleapc_status st = SLEAPC_OK;
    if (!lc.value || !lc.dims || !lc.n_dims)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "xnnpack: lower graph: out of memory");
    for (int i = 0; !st && i < tail->start; i++)
        st = lower_node(&lc, i);
    if (!st)
        st = copy_outputs(&lc);
    sleapc__free(lc.value);
    sleapc__free(lc.dims);
    sleapc__free(lc.n_dims);
    return st;
}
