/* Runs the graph IR node by node with the native kernels. Buffers are planned
 * for one input shape at warmup (or at the first forward of a new shape):
 * activations lie in one arena laid out by the shared planner
 * (model/graph_plan.h), so a forward of a planned shape allocates nothing. Two decoder copies are never made: a resize to
 * the size its input already has reads its input's buffer, and a concat
 * whose only consumers are convs is read by them from its parts. */
#include "backends/native/native_backend.h"

#include <string.h>

#include "backends/bf16_policy.h"
#include "backends/native/native_amx.h"
#include "backends/native/native_bf16.h"
#include "backends/native/native_conv_choose.h"
#include "backends/native/native_impl.h"
#include "backends/native/native_kernels.h"
#include "backends/native/native_ukernel.h"
#include "core/alloc.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/threadpool.h"
#include "model/graph_input.h"

static float *node_buf(native_state *ns, int i)
{
    return ns->arena + ns->plan.offset[i] / (int64_t)sizeof(float);
}

/* One pass of the nodes over nb items: the pool their kernels share (NULL:
 * serial, one thread's items), the scratch, and the arena or a thread's
 * copy of the plan in it. */
typedef struct native_exec {
    sleapc_threadpool *tp;
    void *scratch;
    float *arena;
    int64_t nb;
} native_exec;

/* Node i's value in this pass's arena. */
static float *item_buf(native_state *ns, int i, const native_exec *x)
{
    return x->arena + ns->plan.offset[i] / (int64_t)sizeof(float);
}

/* A conv's input as parts: one buffer, or the parts of a virtual concat. */
static void conv_source(native_state *ns, int in, const native_exec *x, native_conv_src *out)
{
    const sleapc_node *c = &ns->g->nodes[in];
    if (ns->plan.home[in] >= 0) {
        *out = (native_conv_src){
            .n = 1, .data = {item_buf(ns, in, x)}, .c = {(int)ns->plan.shapes[in][1]}};
        return;
    }
    out->n = c->n_inputs;
    for (int k = 0; k < c->n_inputs; k++) {
        out->data[k] = item_buf(ns, c->inputs[k], x);
        out->c[k] = (int)ns->plan.shapes[c->inputs[k]][1];
    }
}

/* The source of bf16 node i when it reads a float32 value that is not
 * rounded where written: a rounded copy (what oneDNN's reorder makes). */
static const float *bf16_source(native_state *ns, int i, const float *src)
{
    int in = ns->g->nodes[i].inputs[0];
    if (!ns->bf16.n || !ns->bf16.compute[i] || ns->bf16.rounded[in] || ns->hw16[i])
        return src;
    int64_t numel = native_node_numel(ns->plan.shapes[in]);
    memcpy(ns->stage, src, (size_t)numel * sizeof(float));
    sleapc__bf16_round_array(ns->stage, numel);
    return ns->stage;
}

/* Whether node i's value is rounded to bf16 where it is written. */
static bool rounds_where_written(const native_state *ns, int i)
{
    return ns->bf16.n && ns->bf16.rounded[i] && !ns->lazy[i] && ns->plan.home[i] == i;
}

/* A resize that rounds its rows as it writes them (bf16 on the float32
 * kernels), instead of a pass over its value after; NULL: none. */
static native_round_rows_fn resize_rounding(const native_state *ns, int i)
{
    return ns->bf16_f32 && rounds_where_written(ns, i) ? ns->hw_uk->round_floats : NULL;
}

static void run_node(native_state *ns, int i, const native_exec *x)
{
    const sleapc_node *n = &ns->g->nodes[i];
    /* Nothing to compute: an identity resize or a virtual concat. */
    if (ns->plan.home[i] != i)
        return;
    /* The shapes of this pass's items. */
    int64_t d[4], s[4] = {0};
    memcpy(d, ns->plan.shapes[i], sizeof d);
    d[0] = x->nb;
    if (n->n_inputs) {
        memcpy(s, ns->plan.shapes[n->inputs[0]], sizeof s);
        s[0] = x->nb;
    }
    sleapc_threadpool *tp = x->tp;
    void *scratch = x->scratch;
    const float *src =
        n->n_inputs && ns->plan.home[n->inputs[0]] >= 0 ? item_buf(ns, n->inputs[0], x) : NULL;
    float *dst = item_buf(ns, i, x);
    switch (n->op) {
    case SLEAPC_OP_INPUT:
        break;
    case SLEAPC_OP_CONV2D: {
        native_conv_src parts;
        conv_source(ns, n->inputs[0], x, &parts);
        if (parts.n == 1)
            parts.data[0] = bf16_source(ns, i, parts.data[0]);
        sleapc__native_conv_run_parts(native_active_conv(ns, i), tp, &parts, s[0], s[2], s[3], dst,
                                      scratch);
        if (n->act == SLEAPC_ACT_SIGMOID)
            sleapc__native_sigmoid(dst, native_node_numel(d));
        else if (n->act == SLEAPC_ACT_GELU)
            sleapc__native_gelu(tp, dst, native_node_numel(d));
        break;
    }
    case SLEAPC_OP_CONV_TRANSPOSE2D:
        sleapc__native_convt_run(ns->convts[i], tp, bf16_source(ns, i, src), s[0], s[2], s[3],
                                 dst, scratch);
        break;
    case SLEAPC_OP_MAXPOOL2D:
        sleapc__native_maxpool2(tp, src, s[0], s[1], s[2], s[3], dst);
        break;
    case SLEAPC_OP_UPSAMPLE2X:
        /* nn.Upsample(scale_factor=2): PyTorch maps with 1/scale_factor. */
        sleapc__native_resize_bilinear_rounded(tp, src, s[0], s[1], s[2], s[3], dst, d[2], d[3],
                                               0.5f, 0.5f, resize_rounding(ns, i));
        break;
    case SLEAPC_OP_RESIZE_LIKE:
        if (s[2] == d[2] && s[3] == d[3])
            memcpy(dst, src, (size_t)native_node_numel(d) * sizeof(float));
        else
            sleapc__native_resize_bilinear_rounded(
                tp, src, s[0], s[1], s[2], s[3], dst, d[2], d[3], (float)s[2] / (float)d[2],
                (float)s[3] / (float)d[3], resize_rounding(ns, i));
        break;
    case SLEAPC_OP_CONCAT: {
        int64_t hw = d[2] * d[3];
        for (int64_t b = 0; b < d[0]; b++) {
            float *o = dst + b * d[1] * hw;
            for (int k = 0; k < n->n_inputs; k++) {
                const int64_t *sk = ns->plan.shapes[n->inputs[k]];
                size_t len = (size_t)(sk[1] * hw);
                memcpy(o, item_buf(ns, n->inputs[k], x) + b * (int64_t)len, len * sizeof(float));
                o += len;
            }
        }
        break;
    }
    case SLEAPC_OP_GLOBAL_MAXPOOL:
        sleapc__native_global_maxpool(src, s[0], s[1], s[2], s[3], dst);
        break;
    case SLEAPC_OP_LINEAR:
        sleapc__native_linear(src, s[0], n->c_in, n->c_out, n->weight, n->bias,
                              n->act == SLEAPC_ACT_RELU, dst);
        if (n->act == SLEAPC_ACT_SOFTMAX)
            sleapc__native_softmax(dst, d[0], d[1]);
        else if (n->act == SLEAPC_ACT_SIGMOID)
            sleapc__native_sigmoid(dst, native_node_numel(d));
        break;
    case SLEAPC_OP_PATCHES:
        sleapc__native_patches(tp, src, s[0], s[1], s[2], s[3], n->kernel, n->stride, n->pad,
                               n->patch_merge, dst, d[2], d[3]);
        break;
    case SLEAPC_OP_DWCONV:
        sleapc__native_dwconv(tp, src, s[0], s[1], s[2], s[3], n->kernel, n->weight, n->bias,
                              dst);
        break;
    case SLEAPC_OP_LAYERNORM:
        sleapc__native_layernorm(tp, src, s[0], s[1], s[2] * s[3], n->weight, n->bias, n->eps,
                                 dst);
        break;
    case SLEAPC_OP_SCALE_ADD:
        sleapc__native_scale_add(tp, src, item_buf(ns, n->inputs[1], x), n->weight, d[0], d[1],
                                 d[2] * d[3], dst);
        break;
    case SLEAPC_OP_WINDOW_ATTENTION:
        sleapc__native_wattn_run(ns->wattns[i], tp, src, s[0], s[2], s[3], dst, scratch);
        break;
    case SLEAPC_OP_GLOBAL_GEMPOOL:
        sleapc__native_global_gempool(src, s[0], s[1], s[2], s[3], n->weight, n->eps, dst);
        break;
    case SLEAPC_OP_L2NORM:
        memcpy(dst, src, (size_t)native_node_numel(d) * sizeof(float));
        sleapc__native_l2norm(dst, d[0], d[1], n->eps);
        break;
    case SLEAPC_OP_COUNT:
        break;
    }
}

/* bf16 on the float32 kernels: whether node i's value is rounded without a
 * pass, by its conv or resize as it stores it (resize_rounding), or as a
 * copy or max of values that are rounded (rounding commutes with both). */
static bool rounded_already(const native_state *ns, int i)
{
    if (!ns->bf16_f32)
        return false;
    const sleapc_node *n = &ns->g->nodes[i];
    if (ns->convs[i] || n->op == SLEAPC_OP_UPSAMPLE2X)
        return true;
    if (n->op == SLEAPC_OP_RESIZE_LIKE) {
        const int64_t *s = ns->plan.shapes[n->inputs[0]], *d = ns->plan.shapes[i];
        if (s[2] != d[2] || s[3] != d[3])
            return true;
    } else if (n->op != SLEAPC_OP_CONCAT && n->op != SLEAPC_OP_MAXPOOL2D) {
        return false;
    }
    for (int k = 0; k < n->n_inputs; k++)
        if (!ns->bf16.rounded[n->inputs[k]])
            return false;
    return true;
}

/* bf16 emulation: round node i's value where it is written. */
static void round_value(native_state *ns, int i)
{
    if (rounds_where_written(ns, i) && !rounded_already(ns, i))
        sleapc__native_bf16_round(ns->tp, ns->hw_uk, node_buf(ns, i),
                                  native_node_numel(ns->plan.shapes[i]));
}

/* Batch items across the threads ("items"): with a batch of at least as
 * many items as threads, each thread runs its share of whole items through
 * every node on serial kernels, in its own copy of the plan, with no wait
 * between nodes, rather than all threads splitting each node (a wait per
 * node, and on small maps too few rows or tiles per thread to share well:
 * top-down crops, small frames). Items are independent, and a kernel's
 * result does not depend on its split, so the bits do not change. */
typedef struct items_job {
    native_state *ns;
    int64_t b;
} items_job;

/* Items [t * per, ...) of a batch of b: how many copy t holds. */
static int64_t copy_items(const native_state *ns, int64_t t, int64_t b)
{
    int64_t n = b - t * ns->items_per;
    return n < 0 ? 0 : n < ns->items_per ? n : ns->items_per;
}

static void items_task(void *ctx, int64_t task, int thread)
{
    items_job *j = ctx;
    native_state *ns = j->ns;
    native_exec x = {.tp = NULL,
                     .scratch = (char *)ns->scratch + (size_t)thread * ns->items_scratch,
                     .arena = ns->arena + task * ns->copy_floats,
                     .nb = copy_items(ns, task, j->b)};
    for (int i = 1; x.nb > 0 && i < ns->g->n_nodes; i++)
        run_node(ns, i, &x);
}

static void run_all(native_state *ns, int64_t b)
{
    if (ns->items_on) {
        items_job j = {.ns = ns, .b = b};
        sleapc__threadpool_run_indexed(ns->tp, items_task, &j,
                                       sleapc__threadpool_n_threads(ns->tp));
        return;
    }
    native_exec all = {.tp = ns->tp, .scratch = ns->scratch, .arena = ns->arena, .nb = b};
    for (int i = 1; i < ns->g->n_nodes; i++) {
        run_node(ns, i, &all);
        round_value(ns, i);
    }
}

/* The input into node 0's value: the whole batch, or each copy's items. */
static sleapc_status put_input(native_state *ns, const sleapc_tensor *x)
{
    if (!ns->items_on)
        return sleapc__graph_input_prepare_as(x, ns->g->in_channels, ns->g->input_as_is,
                                              node_buf(ns, 0));
    size_t item = (size_t)(sleapc__tensor_numel(x) / x->shape[0]) * sleapc__dtype_size(x->dtype);
    int n_threads = sleapc__threadpool_n_threads(ns->tp);
    for (int t = 0; t < n_threads; t++) {
        sleapc_tensor v = *x;
        v.shape[0] = copy_items(ns, t, x->shape[0]);
        v.data = (char *)x->data + (size_t)(t * ns->items_per) * item;
        if (v.shape[0] <= 0)
            continue;
        sleapc_status st = sleapc__graph_input_prepare_as(
            &v, ns->g->in_channels, ns->g->input_as_is,
            ns->arena + t * ns->copy_floats + ns->plan.offset[0] / (int64_t)sizeof(float));
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

/* Output o, whole: its buffer, or the copies' items gathered. */
static float *take_output(native_state *ns, int o, int64_t b)
{
    int node = ns->g->outputs[o].node;
    if (!ns->items_on)
        return node_buf(ns, node);
    const int64_t *s = ns->plan.shapes[node];
    int64_t item = native_node_numel(s) / s[0];
    int n_threads = sleapc__threadpool_n_threads(ns->tp);
    for (int t = 0; t < n_threads; t++)
        memcpy(ns->outs[o] + t * ns->items_per * item,
               ns->arena + t * ns->copy_floats + ns->plan.offset[node] / (int64_t)sizeof(float),
               (size_t)(copy_items(ns, t, b) * item) * sizeof(float));
    return ns->outs[o];
}

static sleapc_status native_forward(sleapc_backend *be, const sleapc_tensor *x,
                                    sleapc_tensor_map *out)
{
    native_state *ns = be->impl;
    sleapc_status st = sleapc__graph_input_check(x, ns->g->in_channels);
    if (st)
        return st;
    int64_t shape[4] = {x->shape[0], ns->g->in_channels, x->shape[2], x->shape[3]};
    if (memcmp(shape, ns->planned, sizeof shape) != 0) {
        st = sleapc__native_plan(ns, shape);
        if (st)
            return st;
    }
    st = put_input(ns, x);
    if (st)
        return st;
    round_value(ns, 0);
    if (ns->node_hook && !ns->items_on) {
        native_exec all = {.tp = ns->tp, .scratch = ns->scratch, .arena = ns->arena, .nb = shape[0]};
        ns->node_hook(ns->node_hook_ctx, 0);
        for (int i = 1; i < ns->g->n_nodes; i++) {
            run_node(ns, i, &all);
            round_value(ns, i);
            ns->node_hook(ns->node_hook_ctx, i);
        }
    } else {
        run_all(ns, shape[0]);
    }
    for (int o = 0; o < ns->g->n_outputs; o++) {
        const sleapc_graph_output *go = &ns->g->outputs[o];
        const int64_t *s = ns->plan.shapes[go->node];
        sleapc_tensor t = {.dtype = SLEAPC_DTYPE_F32,
                           .ndim = s[2] ? 4 : 2,
                           .shape = {shape[0], s[1], s[2], s[3]},
                           .data = take_output(ns, o, shape[0])};
        st = sleapc__tensor_map_set(out, go->name, &t);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

static sleapc_status native_warmup(sleapc_backend *be, const int64_t shape[4])
{
    native_state *ns = be->impl;
    int64_t s[4] = {shape[0], ns->g->in_channels, shape[2], shape[3]};
    if (memcmp(s, ns->planned, sizeof s) == 0)
        return SLEAPC_OK;
    sleapc_status st = sleapc__native_plan(ns, s);
    if (st)
        return st;
    /* Run once on zeros, as the contract says: the first pass faults in every
     * buffer page and warms the caches, and took 3-10x a steady one. */
    int n_copies = ns->items_on ? sleapc__threadpool_n_threads(ns->tp) : 1;
    for (int t = 0; t < n_copies; t++)
        memset(ns->arena + t * ns->copy_floats + ns->plan.offset[0] / (int64_t)sizeof(float), 0,
               (size_t)(ns->items_per * s[1] * s[2] * s[3]) * sizeof(float));
    run_all(ns, s[0]);
    return SLEAPC_OK;
}

static void native_destroy(sleapc_backend *be)
{
    if (!be)
        return;
    native_state *ns = be->impl;
    if (ns) {
        sleapc__native_plan_free(ns);
        for (int i = 0; i < ns->g->n_nodes; i++) {
            if (ns->convs)
                sleapc__native_conv_destroy(ns->convs[i]);
            if (ns->convs16)
                sleapc__native_conv_destroy(ns->convs16[i]);
            if (ns->convts)
                sleapc__native_convt_destroy(ns->convts[i]);
            if (ns->wattns)
                sleapc__native_wattn_destroy(ns->wattns[i]);
        }
        sleapc__free(ns->convs);
        sleapc__free(ns->convs16);
        sleapc__free(ns->use16);
        sleapc__free(ns->convts);
        sleapc__free(ns->wattns);
        sleapc__bf16_plan_free(&ns->bf16);
        sleapc__free(ns->hw16);
        sleapc__free(ns->lazy);
        sleapc__threadpool_destroy(ns->tp);
        sleapc__free(ns);
    }
    sleapc__free(be);
}

static const struct sleapc_backend_ops native_ops = {
    .abi = SLEAPC_BACKEND_ABI,
    .name = "native",
    .forward = native_forward,
    .warmup = native_warmup,
    .destroy = native_destroy,
};

static sleapc_status native_create(const sleapc_graph *g, const sleapc_backend_opts *opts,
                                   sleapc_backend **out)
{
    bool hw_bf16 = opts->precision == SLEAPC_PRECISION_BF16;
    /* bf16 on AMX tiles where there are (or their model, when forced), else
     * on AVX512-BF16. */
    const native_amx_ops *amx = hw_bf16 ? sleapc__native_amx_ops() : NULL;
    if (hw_bf16 && !amx && !sleapc__native_ukernels_bf16())
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "the native backend's bf16 needs a CPU with AVX512-BF16 or AMX (any "
                            "CPU can emulate it exactly: bf16-emulated)");
    if (opts->precision != SLEAPC_PRECISION_FP32 && !hw_bf16 &&
        opts->precision != SLEAPC_PRECISION_BF16_EMULATED)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "the native backend computes in fp32 or bf16 (or emulates bf16 "
                            "exactly: bf16-emulated)");
    sleapc_backend *be = sleapc__calloc(1, sizeof *be);
    native_state *ns = sleapc__calloc(1, sizeof *ns);
    if (!be || !ns) {
        sleapc__free(be);
        sleapc__free(ns);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
    }
    be->ops = &native_ops;
    be->impl = ns;
    strcpy(be->device, "cpu");
    ns->g = g;
    ns->conv_how = sleapc__native_conv_method_of(opts->conv);
    ns->wino_tile = opts->winograd_tile;
    sleapc_status st = sleapc__threadpool_create(opts->n_threads, &ns->tp);
    if (st)
        goto fail;
    ns->convs = sleapc__calloc((size_t)g->n_nodes, sizeof *ns->convs);
    ns->convts = sleapc__calloc((size_t)g->n_nodes, sizeof *ns->convts);
    ns->wattns = sleapc__calloc((size_t)g->n_nodes, sizeof *ns->wattns);
    ns->hw16 = sleapc__calloc((size_t)g->n_nodes, sizeof *ns->hw16);
    ns->lazy = sleapc__calloc((size_t)g->n_nodes, sizeof *ns->lazy);
    if (!ns->convs || !ns->convts || !ns->wattns || !ns->hw16 || !ns->lazy) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if (hw_bf16 || opts->precision == SLEAPC_PRECISION_BF16_EMULATED) {
        st = sleapc__bf16_plan_make(g, sleapc__bf16_keep_or_default(opts->bf16_keep), &ns->bf16);
        if (st)
            goto fail;
    }
    ns->bf16_f32 = hw_bf16 && !amx && ns->conv_how != NATIVE_CONV_DIRECT;
    if (ns->bf16_f32 && ns->conv_how == NATIVE_CONV_AUTO) {
        ns->convs16 = sleapc__calloc((size_t)g->n_nodes, sizeof *ns->convs16);
        ns->use16 = sleapc__calloc((size_t)g->n_nodes, sizeof *ns->use16);
        ns->pick16 = opts->pick_bf16_direct;
        if (!ns->convs16 || !ns->use16) {
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
            goto fail;
        }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const sleapc_node *n = &g->nodes[i];
        /* bf16 nodes pack weights rounded to bf16 (the bias stays float32). */
        float *rounded = NULL;
        const float *w = n->weight;
        if (ns->bf16.n && ns->bf16.compute[i] && n->weight) {
            int64_t numel = (int64_t)n->c_out * n->c_in * n->kernel * n->kernel;
            rounded = sleapc__malloc((size_t)numel * sizeof *rounded);
            if (!rounded) {
                st = sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
                goto fail;
            }
            memcpy(rounded, n->weight, (size_t)numel * sizeof *rounded);
            sleapc__bf16_round_array(rounded, numel);
            w = rounded;
        }
        /* bf16: the convs of the plan on the AMX tiles, or the 3x3 ones on
         * AVX512-BF16's kernels where the direct method is pinned (they
         * round as the emulation does); the rest on the float32 kernels
         * (ns->bf16_f32). */
        ns->hw16[i] = n->op == SLEAPC_OP_CONV2D && hw_bf16 && ns->bf16.compute[i] &&
                      (amx || (n->kernel == 3 && !ns->bf16_f32));
        if (ns->hw16[i] && amx)
            st = sleapc__native_conv_create_amx(amx, n->c_in, n->c_out, n->kernel, n->kernel, w,
                                                n->bias, n->act == SLEAPC_ACT_RELU,
                                                &ns->convs[i]);
        else if (ns->hw16[i])
            st = sleapc__native_conv_create_bf16(n->c_in, n->c_out, w, n->bias,
                                                 n->act == SLEAPC_ACT_RELU, &ns->convs[i]);
        else if (n->op == SLEAPC_OP_CONV2D)
            st = sleapc__native_conv_create(n->c_in, n->c_out, n->kernel, n->kernel, w, n->bias,
                                            n->act == SLEAPC_ACT_RELU, &ns->convs[i]);
        else if (n->op == SLEAPC_OP_CONV_TRANSPOSE2D)
            st = sleapc__native_convt_create(n->c_in, n->c_out, w, n->bias,
                                             n->act == SLEAPC_ACT_RELU, n->keras_placement,
                                             &ns->convts[i]);
        else if (n->op == SLEAPC_OP_WINDOW_ATTENTION)
            st = sleapc__native_wattn_create(n->c_in, n->heads, n->kernel, n->shift, n->weight,
                                             n->bias, &ns->wattns[i]);
        else if (n->op >= SLEAPC_OP_COUNT)
            st = sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "node %s: op %d", n->name, (int)n->op);
        if (!st && ns->convs16 && n->op == SLEAPC_OP_CONV2D && n->kernel == 3 &&
            ns->bf16.compute[i])
            st = sleapc__native_conv_create_bf16(n->c_in, n->c_out, w, n->bias,
                                                 n->act == SLEAPC_ACT_RELU, &ns->convs16[i]);
        sleapc__free(rounded);
        if (st)
            goto fail;
        /* bf16 on the float32 kernels: a conv whose value is rounded where
         * written rounds it as it stores it (no pass over it after); so does
         * its twin. */
        if (ns->bf16_f32 && ns->convs[i] && ns->bf16.rounded[i])
            sleapc__native_conv_set_round_bf16(ns->convs[i], true);
        if (ns->convs16 && ns->convs16[i] && ns->bf16.rounded[i])
            sleapc__native_conv_set_round_bf16(ns->convs16[i], true);
    }
    /* Items across the threads in float32 (bf16 rounds whole values in
     * place, which a share of the items cannot). */
    ns->items = !ns->bf16.n && sleapc__threadpool_n_threads(ns->tp) > 1;
    if (hw_bf16) {
        ns->hw_uk = sleapc__native_ukernels_bf16();
        sleapc__native_bf16_mark_lazy(g, ns->hw16, ns->lazy);
    }
    *out = be;
    return SLEAPC_OK;
fail:
    native_destroy(be);
    return st;
}

void sleapc__native_backend_set_node_hook(sleapc_backend *be, sleapc_native_node_fn fn, void *ctx)
{
    if (!be || be->ops != &native_ops)
        return;
    native_state *ns = be->impl;
    ns->node_hook = fn;
    ns->node_hook_ctx = ctx;
}

double sleapc__native_backend_cpu_s(const sleapc_backend *be)
{
    if (!be || be->ops != &native_ops)
        return -1;
    const native_state *ns = be->impl;
    double cpu, wait;
    sleapc__threadpool_times(ns->tp, &cpu, &wait);
    return cpu;
}

static int native_score(void)
{
    return 2; /* runs anywhere; faster backends score higher */
}

const struct sleapc_backend_factory sleapc__native_factory = {
    .name = "native",
    .score = native_score,
    .create = native_create,
};
