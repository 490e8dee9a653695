/* The re-ID embedding head's two reductions as oneDNN primitives:
 *
 *   GLOBAL_GEMPOOL  clip(x, eps, FLT_MAX) -> pow(p) -> mean over H x W ->
 *                   pow(1/p), p = weight[0] clamped to [1, 6] (read at plan
 *                   time); without a weight only the mean
 *   L2NORM          sqrt(max(sum x^2, eps^2)) per row (oneDNN's norm_lp_max,
 *                   which is max(||x||, eps)) -> x / that, the row broadcast
 *
 * Each is its own primitive in float32: the tensors are (B, C) vectors or a
 * few pixels per channel, so fusing buys nothing. */
#include <float.h>

#include "backends/onednn/onednn_impl.h"
#include "core/error.h"

#define GEM_P_MIN 1.0f /* sleap-nn's GeM clamps p to [1, 6] */
#define GEM_P_MAX 6.0f

/* Make a step from an op descriptor reading src (as the primitive wants it)
 * and writing a new value, returned in *out_value. */
static sleapc_status add_step(onednn_state *s, const char *name, const void *op_desc,
                              const char *what, int src, int src_arg, int *out_value)
{
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    sleapc_status st = sleapc__onednn_attr(SLEAPC_ACT_NONE, name, &attr);
    if (!st)
        st = sleapc__onednn_check(dnnl_primitive_desc_create(&pd, op_desc, attr, s->eng, NULL),
                                  what, name);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    int v = src, step = -1;
    if (!st)
        st = sleapc__onednn_value_as(s, src, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                                     name, &v);
    if (!st)
        st = sleapc__onednn_step_add(s, pd, name, &step);
    if (!st) {
        sleapc__onednn_step_read(s, step, src_arg, v);
        st = sleapc__onednn_step_write(s, step, DNNL_ARG_DST,
                                       dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                                       out_value);
    }
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return st;
}

/* Value v as plain float32 in layout tag (a copy only when it is not). */
static sleapc_status as_plain_f32(onednn_state *s, int v, int ndims, const int64_t *dims,
                                  dnnl_format_tag_t tag, const char *name, int *out)
{
    dnnl_memory_desc_t md;
    dnnl_dims_t d = {0};
    for (int k = 0; k < ndims; k++)
        d[k] = dims[k];
    sleapc_status st = sleapc__onednn_check(
        dnnl_memory_desc_init_by_tag(&md, ndims, d, dnnl_f32, tag), "describe memory", name);
    return st ? st : sleapc__onednn_value_as(s, v, &md, name, out);
}

static sleapc_status eltwise(onednn_state *s, const char *name, int v, dnnl_alg_kind_t alg,
                             float alpha, float beta, int *out)
{
    dnnl_eltwise_desc_t d;
    sleapc_status st =
        sleapc__onednn_check(dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, alg,
                                                            &s->plan.values[v].md, alpha, beta),
                             "describe eltwise", name);
    return st ? st : add_step(s, name, &d, "plan eltwise", v, DNNL_ARG_SRC, out);
}

/* (B, C, H, W) -> (B, C, 1, 1), the layout a global pool writes for the
 * dense layers after it. */
static sleapc_status lower_gempool(onednn_state *s, int i)
{
    const sleapc_node *n = &s->g->nodes[i];
    const int64_t *si = s->plan.shapes[n->inputs[0]];
    int v = s->plan.node_value[n->inputs[0]];
    sleapc_status st = as_plain_f32(s, v, 4, si, dnnl_nchw, n->name, &v);
    float p = 1.0f;
    if (n->weight)
        p = n->weight[0] < GEM_P_MIN   ? GEM_P_MIN
            : n->weight[0] > GEM_P_MAX ? GEM_P_MAX
                                       : n->weight[0];
    if (!st && n->weight)
        st = eltwise(s, n->name, v, dnnl_eltwise_clip, n->eps, FLT_MAX, &v);
    if (!st && n->weight && p != 1.0f)
        st = eltwise(s, n->name, v, dnnl_eltwise_pow, 1.0f, p, &v);
    dnnl_memory_desc_t dst;
    dnnl_dims_t dd = {si[0], si[1], 1, 1};
    if (!st)
        st = sleapc__onednn_check(dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32, dnnl_nchw),
                                  "describe memory", n->name);
    dnnl_reduction_desc_t rd;
    if (!st)
        st = sleapc__onednn_check(dnnl_reduction_desc_init(&rd, dnnl_reduction_mean,
                                                           &s->plan.values[v].md, &dst, 0.0f, 0.0f),
                                  "describe reduction", n->name);
    if (!st)
        st = add_step(s, n->name, &rd, "plan reduction", v, DNNL_ARG_SRC, &v);
    if (!st && n->weight && p != 1.0f)
        st = eltwise(s, n->name, v, dnnl_eltwise_pow, 1.0f, 1.0f / p, &v);
    if (!st)
        s->plan.node_value[i] = v;
    return st;
}

/* (B, C), or the (B, C, 1, 1) of a pool, -> unit rows of the same shape. */
static sleapc_status lower_l2norm(onednn_state *s, int i)
{
    const sleapc_node *n = &s->g->nodes[i];
    int x = s->plan.node_value[n->inputs[0]];
    int rank = s->plan.values[x].md.ndims == 4 ? 4 : 2;
    int64_t dims[4] = {s->plan.values[x].md.dims[0], n->c_in, 1, 1};
    sleapc_status st = as_plain_f32(s, x, rank, dims, rank == 4 ? dnnl_nchw : dnnl_nc, n->name, &x);
    dnnl_memory_desc_t norm_md, dst_md;
    dnnl_dims_t nd = {dims[0], 1, 1, 1}, dd = {dims[0], dims[1], 1, 1};
    dnnl_format_tag_t tag = rank == 4 ? dnnl_nchw : dnnl_nc;
    if (!st)
        st = sleapc__onednn_check(dnnl_memory_desc_init_by_tag(&norm_md, rank, nd, dnnl_f32, tag),
                                  "describe memory", n->name);
    if (!st)
        st = sleapc__onednn_check(dnnl_memory_desc_init_by_tag(&dst_md, rank, dd, dnnl_f32, tag),
                                  "describe memory", n->name);
    dnnl_reduction_desc_t rd;
    if (!st)
        st = sleapc__onednn_check(dnnl_reduction_desc_init(&rd, dnnl_reduction_norm_lp_max,
                                                           &s->plan.values[x].md, &norm_md, 2.0f,
                                                           n->eps * n->eps),
                                  "describe reduction", n->name);
    int norm = -1;
    if (!st)
        st = add_step(s, n->name, &rd, "plan reduction", x, DNNL_ARG_SRC, &norm);

    /* x / norm: src0 x, src1 the (B, 1) norms broadcast along the row. */
    dnnl_binary_desc_t bd;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    if (!st)
        st = sleapc__onednn_check(dnnl_binary_desc_init(&bd, dnnl_binary_div, &s->plan.values[x].md,
                                                        &s->plan.values[norm].md, &dst_md),
                                  "describe binary", n->name);
    if (!st)
        st = sleapc__onednn_attr(SLEAPC_ACT_NONE, n->name, &attr);
    if (!st)
        st = sleapc__onednn_check(dnnl_primitive_desc_create(&pd, &bd, attr, s->eng, NULL),
                                  "plan binary", n->name);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    int step = -1;
    if (!st)
        st = sleapc__onednn_step_add(s, pd, n->name, &step);
    if (!st) {
        sleapc__onednn_step_read(s, step, DNNL_ARG_SRC_0, x);
        sleapc__onednn_step_read(s, step, DNNL_ARG_SRC_1, norm);
        st = sleapc__onednn_step_write(s, step, DNNL_ARG_DST,
                                       dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                                       &s->plan.node_value[i]);
    }
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return st;
}

sleapc_status sleapc__onednn_lower_embed(onednn_state *s, int i)
{
    return s->g->nodes[i].op == SLEAPC_OP_L2NORM ? lower_l2norm(s, i) : lower_gempool(s, i);
}
