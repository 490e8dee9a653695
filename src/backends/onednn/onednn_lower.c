/* Graph IR nodes -> oneDNN primitives, for the shapes of the plan being built.
 *
 * Convolutions, transposed convolutions and inner products are created with
 * format "any" for source, weights and destination, so oneDNN picks its
 * blocked layouts; the other primitives take their source as it is and
 * choose their destination likewise. A source is reordered only when its
 * producer wrote another layout than the consumer asked for. */
#include <string.h>

#include "backends/onednn/onednn_impl.h"
#include "core/error.h"

sleapc_status sleapc__onednn_node_supported(const sleapc_graph *g, int i)
{
    const sleapc_node *n = &g->nodes[i];
    bool act_ok = n->act == SLEAPC_ACT_NONE;
    bool ok = true;
    switch (n->op) {
    case SLEAPC_OP_INPUT:
        ok = i == 0;
        break;
    case SLEAPC_OP_CONV2D:
    case SLEAPC_OP_CONV_TRANSPOSE2D:
        act_ok = act_ok || n->act == SLEAPC_ACT_RELU || n->act == SLEAPC_ACT_SIGMOID;
        ok = n->weight && n->kernel >= 1 && n->c_in >= 1 && n->c_out >= 1 &&
             (n->op == SLEAPC_OP_CONV2D || n->kernel == 3);
        break;
    case SLEAPC_OP_LINEAR:
        act_ok = true; /* relu as a post-op, sigmoid on the host, softmax as a primitive */
        ok = n->weight && n->c_in >= 1 && n->c_out >= 1;
        break;
    case SLEAPC_OP_MAXPOOL2D:
    case SLEAPC_OP_UPSAMPLE2X:
    case SLEAPC_OP_RESIZE_LIKE:
    case SLEAPC_OP_CONCAT:
    case SLEAPC_OP_GLOBAL_MAXPOOL:
    case SLEAPC_OP_GLOBAL_GEMPOOL:
    case SLEAPC_OP_L2NORM:
        break;
    default:
        ok = false;
        break;
    }
    if (!ok || !act_ok)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "node %s: cannot lower %s (kernel %d, activation %d)",
                            n->name, sleapc__op_name(n->op), n->kernel, (int)n->act);
    return SLEAPC_OK;
}

/* A graph output that no other node reads. */
static bool is_final_output(const sleapc_graph *g, int i)
{
    for (int j = i + 1; j < g->n_nodes; j++)
        for (int k = 0; k < g->nodes[j].n_inputs; k++)
            if (g->nodes[j].inputs[k] == i)
                return false;
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o].node == i)
            return true;
    return false;
}

static sleapc_status md_init(dnnl_memory_desc_t *md, int ndims, const int64_t *dims,
                             dnnl_data_type_t dt, dnnl_format_tag_t tag, const char *name)
{
    dnnl_dims_t d = {0};
    for (int k = 0; k < ndims; k++)
        d[k] = dims[k];
    return sleapc__onednn_check(dnnl_memory_desc_init_by_tag(md, ndims, d, dt, tag),
                                "describe memory", name);
}

/* Query md `what` (index k) of pd. */
static const dnnl_memory_desc_t *pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what, int k)
{
    return dnnl_primitive_desc_query_md(pd, what, k);
}

/* Make the step of pd, reading `src` (reordered to what pd wants) and
 * writing a new value that becomes node i's output. */
static sleapc_status add_unary(onednn_state *s, int i, const_dnnl_primitive_desc_t pd, int src,
                               int *out_step)
{
    const char *name = s->g->nodes[i].name;
    int v = src;
    sleapc_status st = sleapc__onednn_value_as(s, src, pd_md(pd, dnnl_query_src_md, 0), name, &v);
    if (st)
        return st;
    st = sleapc__onednn_step_add(s, pd, name, out_step);
    if (st)
        return st;
    sleapc__onednn_step_read(s, *out_step, DNNL_ARG_SRC, v);
    return sleapc__onednn_step_write(s, *out_step, DNNL_ARG_DST, pd_md(pd, dnnl_query_dst_md, 0),
                                     &s->plan.node_value[i]);
}

/* Finish a primitive from its op descriptor: pd, step, packed weights. */
static sleapc_status add_weighted(onednn_state *s, int i, const void *op_desc,
                                  const dnnl_memory_desc_t *user_w,
                                  const dnnl_memory_desc_t *user_b, const char *what)
{
    const sleapc_node *n = &s->g->nodes[i];
    onednn_plan *p = &s->plan;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    sleapc_status st = sleapc__onednn_attr(n->act, n->name, &attr);
    if (st)
        return st;
    st = sleapc__onednn_check(dnnl_primitive_desc_create(&pd, op_desc, attr, s->eng, NULL), what,
                              n->name);
    dnnl_primitive_attr_destroy(attr);
    if (st)
        return st;
    st = sleapc__onednn_pack(s, &s->wpack[i], pd_md(pd, dnnl_query_weights_md, 0), user_w,
                             n->weight, n->name);
    if (!st && n->bias)
        st = sleapc__onednn_pack(s, &s->bpack[i], pd_md(pd, dnnl_query_weights_md, 1), user_b,
                                 n->bias, n->name);
    int step = -1;
    if (!st)
        st = add_unary(s, i, pd, p->node_value[n->inputs[0]], &step);
    if (!st) {
        sleapc__onednn_step_fixed(s, step, DNNL_ARG_WEIGHTS, s->wpack[i].mem);
        if (n->bias)
            sleapc__onednn_step_fixed(s, step, DNNL_ARG_BIAS, s->bpack[i].mem);
    }
    dnnl_primitive_desc_destroy(pd);
    if (!st && n->act == SLEAPC_ACT_SIGMOID)
        st = sleapc__onednn_sigmoid_add(s, i);
    return st;
}

/* CONV2D: stride 1, "same" padding with the odd one out at the bottom/right
 * (PyTorch padding="same"). CONV_TRANSPOSE2D: 3x3 stride 2, whose full output
 * has 2H+1 rows; PyTorch's padding=1, output_padding=1 keeps rows 1..2H
 * (padding l/r = 1/0) and Keras "same" keeps rows 0..2H-1 (0/1). oneDNN's
 * deconvolution uses weights(oc, ic, kh, kw) with dst row = src row * 2 + kh -
 * padding_l, the same taps as PyTorch's (ic, oc, kh, kw) unflipped, so the
 * PyTorch buffer is read as layout "iohw". */
static sleapc_status lower_conv(onednn_state *s, int i)
{
    const sleapc_node *n = &s->g->nodes[i];
    const int64_t *si = s->plan.shapes[n->inputs[0]], *so = s->plan.shapes[i];
    bool deconv = n->op == SLEAPC_OP_CONV_TRANSPOSE2D;
    /* Mixed precision (bf16_policy.h): a node computes in bf16 or float32
     * and stores bf16 or float32; heads always write float32. */
    dnnl_data_type_t dt = s->bf16.n && s->bf16.compute[i] ? dnnl_bf16 : dnnl_f32;
    dnnl_data_type_t dst_dt =
        is_final_output(s->g, i) || !(s->bf16.n && s->bf16.value[i]) ? dnnl_f32 : dnnl_bf16;
    int64_t wdims[4] = {n->c_out, n->c_in, n->kernel, n->kernel};
    int64_t bdims[1] = {n->c_out};
    dnnl_memory_desc_t src, wei, bia, dst, user_w, user_b;
    sleapc_status st = md_init(&src, 4, si, dt, dnnl_format_tag_any, n->name);
    if (!st)
        st = md_init(&dst, 4, so, dst_dt, dnnl_format_tag_any, n->name);
    if (!st)
        st = md_init(&wei, 4, wdims, dt, dnnl_format_tag_any, n->name);
    if (!st)
        st = md_init(&bia, 1, bdims, dnnl_f32, dnnl_x, n->name);
    if (!st)
        st = md_init(&user_w, 4, wdims, dnnl_f32, deconv ? dnnl_iohw : dnnl_oihw, n->name);
    if (!st)
        st = md_init(&user_b, 1, bdims, dnnl_f32, dnnl_x, n->name);
    if (st)
        return st;
    const dnnl_memory_desc_t *bias = n->bias ? &bia : NULL;
    dnnl_status_t ds;
    if (deconv) {
        dnnl_dims_t strides = {2, 2};
        dnnl_dims_t pad_l = {n->keras_placement ? 0 : 1, n->keras_placement ? 0 : 1};
        dnnl_dims_t pad_r = {n->keras_placement ? 1 : 0, n->keras_placement ? 1 : 0};
        dnnl_deconvolution_desc_t d;
        ds = dnnl_deconvolution_forward_desc_init(&d, dnnl_forward_inference,
                                                  dnnl_deconvolution_direct, &src, &wei, bias,
                                                  &dst, strides, pad_l, pad_r);
        if (ds == dnnl_success)
            return add_weighted(s, i, &d, &user_w, &user_b, "plan deconvolution");
    } else {
        int64_t pl = (n->kernel - 1) / 2, pr = n->kernel - 1 - pl;
        dnnl_dims_t strides = {1, 1}, pad_l = {pl, pl}, pad_r = {pr, pr};
        dnnl_convolution_desc_t d;
        ds = dnnl_convolution_forward_desc_init(&d, dnnl_forward_inference,
                                                dnnl_convolution_direct, &src, &wei, bias, &dst,
                                                strides, pad_l, pad_r);
        if (ds == dnnl_success)
            return add_weighted(s, i, &d, &user_w, &user_b, "plan convolution");
    }
    return sleapc__onednn_check(ds, deconv ? "describe deconvolution" : "describe convolution",
                                n->name);
}

/* LINEAR on a (B, C) vector, or on the (B, C, 1, 1) map a global pool
 * writes, always in float32 (a few hundred values); softmax follows as its
 * own primitive. */
static sleapc_status lower_linear(onednn_state *s, int i)
{
    const sleapc_node *n = &s->g->nodes[i];
    const dnnl_memory_desc_t *in_md = &s->plan.values[s->plan.node_value[n->inputs[0]]].md;
    int nd = in_md->ndims == 4 ? 4 : 2;
    int64_t sdims[4] = {in_md->dims[0], n->c_in, 1, 1};
    int64_t wdims[4] = {n->c_out, n->c_in, 1, 1};
    int64_t ddims[2] = {in_md->dims[0], n->c_out};
    int64_t bdims[1] = {n->c_out};
    dnnl_memory_desc_t src, wei, bia, dst, user_w, user_b;
    sleapc_status st = md_init(&src, nd, sdims, dnnl_f32, dnnl_format_tag_any, n->name);
    if (!st)
        st = md_init(&wei, nd, wdims, dnnl_f32, dnnl_format_tag_any, n->name);
    if (!st)
        st = md_init(&bia, 1, bdims, dnnl_f32, dnnl_x, n->name);
    if (!st)
        st = md_init(&dst, 2, ddims, dnnl_f32, dnnl_format_tag_any, n->name);
    if (!st)
        st = md_init(&user_w, nd, wdims, dnnl_f32, nd == 4 ? dnnl_oihw : dnnl_oi, n->name);
    if (!st)
        st = md_init(&user_b, 1, bdims, dnnl_f32, dnnl_x, n->name);
    if (st)
        return st;
    dnnl_inner_product_desc_t d;
    st = sleapc__onednn_check(
        dnnl_inner_product_forward_desc_init(&d, dnnl_forward_inference, &src, &wei,
                                             n->bias ? &bia : NULL, &dst),
        "describe inner product", n->name);
    if (!st)
        st = add_weighted(s, i, &d, &user_w, &user_b, "plan inner product");
    if (st || n->act != SLEAPC_ACT_SOFTMAX)
        return st;

    const dnnl_memory_desc_t *lin = &s->plan.values[s->plan.node_value[i]].md;
    dnnl_softmax_desc_t sd;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    st = sleapc__onednn_check(dnnl_softmax_forward_desc_init(&sd, dnnl_forward_inference, lin, 1),
                              "describe softmax", n->name);
    if (!st)
        st = sleapc__onednn_attr(SLEAPC_ACT_NONE, n->name, &attr);
    if (!st)
        st = sleapc__onednn_check(dnnl_primitive_desc_create(&pd, &sd, attr, s->eng, NULL),
                                  "plan softmax", n->name);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    int step;
    if (!st)
        st = add_unary(s, i, pd, s->plan.node_value[i], &step);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return st;
}

/* Pooling on the source as it is: 2x2 stride 2 with floor (the right
 * padding 0 drops an odd last row, as PyTorch's MaxPool2d(2) does), or one
 * window over the whole map for the global max pool. */
static sleapc_status lower_pool(onednn_state *s, int i, bool global)
{
    const sleapc_node *n = &s->g->nodes[i];
    int src = s->plan.node_value[n->inputs[0]];
    const dnnl_memory_desc_t *smd = &s->plan.values[src].md;
    const int64_t *si = s->plan.shapes[n->inputs[0]], *so = s->plan.shapes[i];
    int64_t ddims[4] = {so[0], so[1], global ? 1 : so[2], global ? 1 : so[3]};
    dnnl_memory_desc_t dst;
    sleapc_status st = md_init(&dst, 4, ddims, smd->data_type, dnnl_format_tag_any, n->name);
    if (st)
        return st;
    dnnl_dims_t kernel = {global ? si[2] : 2, global ? si[3] : 2};
    dnnl_dims_t strides = {global ? 1 : 2, global ? 1 : 2};
    dnnl_dims_t pad = {0, 0};
    dnnl_pooling_desc_t d;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    st = sleapc__onednn_check(dnnl_pooling_forward_desc_init(&d, dnnl_forward_inference,
                                                             dnnl_pooling_max, smd, &dst, strides,
                                                             kernel, pad, pad),
                              "describe pooling", n->name);
    if (!st)
        st = sleapc__onednn_attr(SLEAPC_ACT_NONE, n->name, &attr);
    if (!st)
        st = sleapc__onednn_check(dnnl_primitive_desc_create(&pd, &d, attr, s->eng, NULL),
                                  "plan pooling", n->name);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    int step;
    if (!st)
        st = add_unary(s, i, pd, src, &step);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return st;
}

/* Bilinear resize, align_corners=False: oneDNN's linear resampling maps
 * dst x to src (x + 0.5) * in / out - 0.5 and clamps both neighbours to the
 * edge, which is PyTorch's upsample_bilinear2d when the scale is in / out
 * (nn.Upsample(scale_factor=2) uses 1 / 2, the same ratio). A resize to the
 * same size is the identity: the node shares its input's value. */
static sleapc_status lower_resample(onednn_state *s, int i)
{
    const sleapc_node *n = &s->g->nodes[i];
    int src = s->plan.node_value[n->inputs[0]];
    const int64_t *si = s->plan.shapes[n->inputs[0]], *so = s->plan.shapes[i];
    if (si[2] == so[2] && si[3] == so[3]) {
        s->plan.node_value[i] = src;
        return SLEAPC_OK;
    }
    const dnnl_memory_desc_t *smd = &s->plan.values[src].md;
    dnnl_memory_desc_t dst;
    sleapc_status st = md_init(&dst, 4, so, smd->data_type, dnnl_format_tag_any, n->name);
    if (st)
        return st;
    dnnl_resampling_desc_t d;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    st = sleapc__onednn_check(dnnl_resampling_forward_desc_init(&d, dnnl_forward_inference,
                                                                dnnl_resampling_linear, NULL, smd,
                                                                &dst),
                              "describe resampling", n->name);
    if (!st)
        st = sleapc__onednn_attr(SLEAPC_ACT_NONE, n->name, &attr);
    if (!st)
        st = sleapc__onednn_check(dnnl_primitive_desc_create(&pd, &d, attr, s->eng, NULL),
                                  "plan resampling", n->name);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    int step;
    if (!st)
        st = add_unary(s, i, pd, src, &step);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return st;
}

/* Channel concat of the sources as they are, in the graph's order (sleap-nn
 * puts the skip first); oneDNN chooses the destination layout. */
static sleapc_status lower_concat(onednn_state *s, int i)
{
    const sleapc_node *n = &s->g->nodes[i];
    onednn_plan *p = &s->plan;
    dnnl_memory_desc_t srcs[SLEAPC_NODE_MAX_INPUTS], dst;
    int in_values[SLEAPC_NODE_MAX_INPUTS];
    sleapc_status st = SLEAPC_OK;
    /* One data type for all sources: a source of the other type is
     * converted first. */
    dnnl_data_type_t dt = s->bf16.n && s->bf16.value[i] ? dnnl_bf16 : dnnl_f32;
    for (int k = 0; k < n->n_inputs && !st; k++) {
        in_values[k] = p->node_value[n->inputs[k]];
        srcs[k] = p->values[in_values[k]].md;
        if (srcs[k].data_type != dt) {
            st = md_init(&srcs[k], 4, p->shapes[n->inputs[k]], dt, dnnl_nchw, n->name);
            if (!st)
                st = sleapc__onednn_value_as(s, in_values[k], &srcs[k], n->name, &in_values[k]);
        }
    }
    if (!st)
        st = md_init(&dst, 4, p->shapes[i], dt, dnnl_format_tag_any, n->name);
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (!st)
        st = sleapc__onednn_attr(SLEAPC_ACT_NONE, n->name, &attr);
    if (!st)
        st = sleapc__onednn_check(
            dnnl_concat_primitive_desc_create(&pd, &dst, n->n_inputs, 1, srcs, attr, s->eng),
            "plan concat", n->name);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    int step = -1;
    if (!st)
        st = sleapc__onednn_step_add(s, pd, n->name, &step);
    for (int k = 0; k < n->n_inputs && !st; k++)
        sleapc__onednn_step_read(s, step, DNNL_ARG_MULTIPLE_SRC + k, in_values[k]);
    if (!st)
        st = sleapc__onednn_step_write(s, step, DNNL_ARG_DST, pd_md(pd, dnnl_query_dst_md, 0),
                                       &p->node_value[i]);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return st;
}

sleapc_status sleapc__onednn_lower_node(onednn_state *s, int i)
{
    switch (s->g->nodes[i].op) {
    case SLEAPC_OP_CONV2D:
    case SLEAPC_OP_CONV_TRANSPOSE2D:
        return lower_conv(s, i);
    case SLEAPC_OP_MAXPOOL2D:
        return lower_pool(s, i, false);
    case SLEAPC_OP_GLOBAL_MAXPOOL:
        return lower_pool(s, i, true);
    case SLEAPC_OP_UPSAMPLE2X:
    case SLEAPC_OP_RESIZE_LIKE:
        return lower_resample(s, i);
    case SLEAPC_OP_CONCAT:
        return lower_concat(s, i);
    case SLEAPC_OP_LINEAR:
        return lower_linear(s, i);
    case SLEAPC_OP_GLOBAL_GEMPOOL:
    case SLEAPC_OP_L2NORM:
        return sleapc__onednn_lower_embed(s, i);
    default:
        return sleapc__onednn_node_supported(s->g, i);
    }
}
