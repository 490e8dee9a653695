/* Runs the graph IR through XNNPACK. This XNNPACK's values have static
 * shapes, so a runtime is built per input shape, at warmup or at the first
 * forward of a new shape, and kept until the shape changes. The runtime reads
 * and writes buffers fixed at that plan, so a forward only converts the input
 * to NHWC, invokes the runtime, applies the sigmoid of sigmoid heads (see
 * sleapc__sigmoid_on_host) and converts the maps back to NCHW: no heap
 * calls. An embedding graph's tail (GeM, dense layers, L2 norm) then runs on
 * the host on the runtime's one output (xnnpack_tail.c). */
#include "backends/xnnpack/xnnpack_backend.h"

#include <math.h>
#include <pthreadpool.h>
#include <stdio.h>
#include <string.h>
#include <xnnpack.h>

#include "backends/sigmoid.h"
#include "backends/xnnpack/xnnpack_impl.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/mem_budget.h"
#include "core/threadpool.h"
#include "model/graph_input.h"

typedef struct xnnpack_state {
    const sleapc_graph *g; /* borrowed: the model outlives the backend */
    xnnpack_consts consts;
    pthreadpool_t pool; /* NULL: everything on the caller's thread */
    int n_threads;
    uint32_t rt_flags; /* XNN_FLAG_* of the runtimes */
    xnnpack_tail tail; /* start == n_nodes: none */

    /* The plan, for input shape `planned` (all zero: none). */
    int64_t planned[4];
    int64_t (*shapes)[4];
    xnn_runtime_t rt;
    float *x_nchw; /* prepared input before the transpose; NULL when C == 1 */
    float *x_nhwc; /* the runtime's input */
    float *out_nhwc[SLEAPC_GRAPH_MAX_OUTPUTS]; /* the runtime's outputs */
    float *out_nchw[SLEAPC_GRAPH_MAX_OUTPUTS]; /* maps handed out; NULL: out_nhwc is NCHW */
    float *tail_buf;     /* the host tail's values (out_nhwc[0] is then the cut) */
    int64_t *tail_off;   /* per node: its offset in tail_buf */
} xnnpack_state;

static bool has_tail(const xnnpack_state *xs)
{
    return xs->tail.start < xs->g->n_nodes;
}

/* The runtime's external outputs: the cut alone with a host tail. */
static int n_runtime_outputs(const xnnpack_state *xs)
{
    return has_tail(xs) ? 1 : xs->g->n_outputs;
}

static int runtime_output_node(const xnnpack_state *xs, int o)
{
    return has_tail(xs) ? xs->tail.cut : xs->g->outputs[o].node;
}

/* Idempotent: XNNPACK initialises once per process and then only reports.
 * XNNPACK keeps its default allocator: this version's memory planner does not
 * check its allocations, so failures injected through sleapc's allocator would
 * crash inside XNNPACK instead of testing sleapc's error paths. */
static enum xnn_status xnnpack_init(void)
{
    return xnn_initialize(NULL);
}

/* NCHW <-> NHWC, split over the pool by (image, row). */
typedef struct transpose_job {
    const float *src;
    float *dst;
    size_t c, h, w;
} transpose_job;

static void nchw_to_nhwc_row(void *ctx, size_t b, size_t y)
{
    const transpose_job *j = ctx;
    size_t c = j->c, hw = j->h * j->w;
    const float *s = j->src + b * c * hw + y * j->w;
    float *d = j->dst + (b * hw + y * j->w) * c;
    for (size_t x = 0; x < j->w; x++)
        for (size_t k = 0; k < c; k++)
            d[x * c + k] = s[k * hw + x];
}

static void nhwc_to_nchw_row(void *ctx, size_t b, size_t y)
{
    const transpose_job *j = ctx;
    size_t c = j->c, hw = j->h * j->w;
    const float *s = j->src + (b * hw + y * j->w) * c;
    float *d = j->dst + b * c * hw + y * j->w;
    for (size_t k = 0; k < c; k++)
        for (size_t x = 0; x < j->w; x++)
            d[k * hw + x] = s[x * c + k];
}

static void transpose(pthreadpool_t pool, pthreadpool_task_2d_t fn, const float *src, float *dst,
                      const int64_t *s, uint32_t flags)
{
    transpose_job j = {
        .src = src, .dst = dst, .c = (size_t)s[1], .h = (size_t)s[2], .w = (size_t)s[3]};
    pthreadpool_parallelize_2d(pool, fn, &j, (size_t)s[0], (size_t)s[2], flags);
}

static int64_t numel(const int64_t *s)
{
    return s[2] ? s[0] * s[1] * s[2] * s[3] : s[0] * s[1];
}

/* A (B, C, H, W) map whose NHWC and NCHW layouts differ. */
static bool needs_transpose(const int64_t *s)
{
    return s[2] && s[1] > 1 && s[2] * s[3] > 1;
}

static void plan_free(xnnpack_state *xs)
{
    if (xs->rt)
        xnn_delete_runtime(xs->rt);
    xs->rt = NULL;
    sleapc__free(xs->shapes);
    xs->shapes = NULL;
    sleapc__aligned_free(xs->tail_buf);
    sleapc__free(xs->tail_off);
    xs->tail_buf = NULL;
    xs->tail_off = NULL;
    sleapc__aligned_free(xs->x_nchw);
    sleapc__aligned_free(xs->x_nhwc);
    xs->x_nchw = xs->x_nhwc = NULL;
    for (int o = 0; o < SLEAPC_GRAPH_MAX_OUTPUTS; o++) {
        sleapc__aligned_free(xs->out_nhwc[o]);
        sleapc__aligned_free(xs->out_nchw[o]);
        xs->out_nhwc[o] = xs->out_nchw[o] = NULL;
    }
    memset(xs->planned, 0, sizeof xs->planned);
}

/* Every size the lowering casts must fit (see XNNPACK_MAX_SIDE); the element
 * count is bounded factor by factor, so no product can overflow. */
static sleapc_status check_sizes(const xnnpack_state *xs, const int64_t shape[4])
{
    for (int i = 0; i < xs->g->n_nodes; i++) {
        const int64_t *s = xs->shapes[i];
        int64_t elems = 1;
        bool ok = true;
        for (int d = 0; d < 4 && ok; d++) {
            int64_t f = d >= 2 && !s[2] ? 1 : s[d]; /* vectors: (B, C) */
            ok = f >= 1 && f <= XNNPACK_MAX_SIDE && elems <= XNNPACK_MAX_ELEMS / f;
            elems *= ok ? f : 1;
        }
        if (!ok)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "input %lldx%lld batch %lld is too large (node %s)",
                                (long long)shape[2], (long long)shape[3], (long long)shape[0],
                                xs->g->nodes[i].name);
    }
    return SLEAPC_OK;
}

/* What this XNNPACK's plan takes at most: every value in its own buffer
 * (its planner shares some), an indirection buffer of k*k pointers per output
 * pixel for each k x k convolution, and sleapc's NHWC/NCHW copies. Checked
 * before the runtime is built, because this version's planner does not check
 * its workspace allocation and crashes when it fails. */
static sleapc_status check_memory(const xnnpack_state *xs, const int64_t shape[4])
{
    const sleapc_graph *g = xs->g;
    double bytes = 2.0 * (double)numel(shape) * sizeof(float);
    for (int i = 0; i < g->n_nodes; i++) {
        const int64_t *s = xs->shapes[i];
        double px = (double)s[0] * (double)(s[2] ? s[2] * s[3] : 1);
        bytes += px * (double)s[1] * sizeof(float) + XNN_EXTRA_BYTES + 64;
        const sleapc_node *nd = &g->nodes[i];
        bool spatial = nd->op == SLEAPC_OP_CONV2D || nd->op == SLEAPC_OP_CONV_TRANSPOSE2D ||
                       nd->op == SLEAPC_OP_DWCONV;
        if (spatial && nd->kernel > 1)
            bytes += px * (double)nd->kernel * nd->kernel * sizeof(void *);
    }
    for (int o = 0; o < n_runtime_outputs(xs); o++)
        bytes += (double)numel(xs->shapes[runtime_output_node(xs, o)]) * sizeof(float);
    char what[160];
    snprintf(what, sizeof what, "XNNPACK's plan for an input of %lld x %lld x %lld x %lld",
             (long long)shape[0], (long long)shape[1], (long long)shape[2], (long long)shape[3]);
    return sleapc__mem_check(bytes >= 9.0e18 ? INT64_MAX : (int64_t)bytes, what);
}

static float *alloc_floats(int64_t n, size_t extra)
{
    return sleapc__aligned_alloc((size_t)n * sizeof(float) + extra);
}

static sleapc_status alloc_buffers(xnnpack_state *xs, const int64_t shape[4])
{
    int64_t n_in = shape[0] * shape[1] * shape[2] * shape[3];
    xs->x_nhwc = alloc_floats(n_in, XNN_EXTRA_BYTES);
    bool ok = xs->x_nhwc != NULL;
    if (ok)
        memset(xs->x_nhwc, 0, (size_t)n_in * sizeof(float)); /* warmup runs on zeros */
    if (ok && needs_transpose(shape))
        ok = (xs->x_nchw = alloc_floats(n_in, 0)) != NULL;
    for (int o = 0; ok && o < n_runtime_outputs(xs); o++) {
        const int64_t *s = xs->shapes[runtime_output_node(xs, o)];
        ok = (xs->out_nhwc[o] = alloc_floats(numel(s), XNN_EXTRA_BYTES)) != NULL;
        if (ok && needs_transpose(s) && !has_tail(xs)) /* the tail reads NHWC */
            ok = (xs->out_nchw[o] = alloc_floats(numel(s), 0)) != NULL;
    }
    if (!ok)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory for the buffers");
    if (!has_tail(xs))
        return SLEAPC_OK;
    xs->tail_off = sleapc__calloc((size_t)xs->g->n_nodes, sizeof *xs->tail_off);
    if (!xs->tail_off)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory for the buffers");
    return sleapc__xnnpack_tail_plan(xs->g, &xs->tail, (const int64_t(*)[4])xs->shapes,
                                     &xs->tail_buf, xs->tail_off);
}

static sleapc_status build_runtime(xnnpack_state *xs)
{
    const sleapc_graph *g = xs->g;
    xnn_subgraph_t sg = NULL;
    enum xnn_status s = xnn_create_subgraph(XNNPACK_OUTPUT_ID(g->n_outputs), 0, &sg);
    if (s != xnn_status_success)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "xnn_create_subgraph: %s",
                            sleapc__xnnpack_status_str(s));
    sleapc_status st = sleapc__xnnpack_lower(g, &xs->consts, &xs->tail,
                                             (const int64_t(*)[4])xs->shapes, sg);
    if (!st) {
        s = xnn_create_runtime_v2(sg, xs->pool, xs->rt_flags, &xs->rt);
        if (s != xnn_status_success) {
            xs->rt = NULL;
            st = sleapc__fail(SLEAPC_ERR_BACKEND, "xnn_create_runtime_v2: %s",
                              sleapc__xnnpack_status_str(s));
        }
    }
    xnn_delete_subgraph(sg);
    return st;
}

/* Build the runtime for shape (B, in_channels, H, W) and bind its buffers. */
static sleapc_status plan(xnnpack_state *xs, const int64_t shape[4])
{
    const sleapc_graph *g = xs->g;
    plan_free(xs);
    xs->shapes = sleapc__malloc((size_t)g->n_nodes * sizeof *xs->shapes);
    if (!xs->shapes)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory");
    sleapc_status st = sleapc__graph_infer_shapes(g, shape[0], shape[2], shape[3], xs->shapes);
    if (!st)
        st = check_sizes(xs, shape);
    if (!st)
        st = check_memory(xs, shape);
    if (!st)
        st = build_runtime(xs);
    if (!st)
        st = alloc_buffers(xs, shape);
    if (!st) {
        struct xnn_external_value ext[1 + SLEAPC_GRAPH_MAX_OUTPUTS];
        ext[0] = (struct xnn_external_value){.id = XNNPACK_INPUT_ID, .data = xs->x_nhwc};
        for (int o = 0; o < n_runtime_outputs(xs); o++)
            ext[1 + o] =
                (struct xnn_external_value){.id = XNNPACK_OUTPUT_ID(o), .data = xs->out_nhwc[o]};
        enum xnn_status s = xnn_setup_runtime(xs->rt, 1 + (size_t)n_runtime_outputs(xs), ext);
        if (s != xnn_status_success)
            st = sleapc__fail(SLEAPC_ERR_BACKEND, "xnn_setup_runtime: %s",
                              sleapc__xnnpack_status_str(s));
    }
    if (st) {
        plan_free(xs);
        return sleapc__wrap(st, "plan for input (%lld, %lld, %lld, %lld)", (long long)shape[0],
                            (long long)shape[1], (long long)shape[2], (long long)shape[3]);
    }
    memcpy(xs->planned, shape, sizeof xs->planned);
    return SLEAPC_OK;
}

static sleapc_status invoke(xnnpack_state *xs)
{
    enum xnn_status s = xnn_invoke_runtime(xs->rt);
    if (s != xnn_status_success)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "xnn_invoke_runtime: %s",
                            sleapc__xnnpack_status_str(s));
    return SLEAPC_OK;
}

/* Run the host tail on the cut and hand out its (B, C) vectors. */
static sleapc_status publish_tail(xnnpack_state *xs, sleapc_tensor_map *out)
{
    const sleapc_graph *g = xs->g;
    const int64_t(*shapes)[4] = (const int64_t(*)[4])xs->shapes;
    sleapc__xnnpack_tail_run(g, &xs->tail, shapes, xs->out_nhwc[0], xs->tail_buf, xs->tail_off);
    for (int o = 0; o < g->n_outputs; o++) {
        const sleapc_graph_output *go = &g->outputs[o];
        const int64_t *s = shapes[go->node];
        sleapc_tensor t = {.dtype = SLEAPC_DTYPE_F32, .ndim = 2, .shape = {s[0], s[1]},
                           .data = xs->tail_buf + xs->tail_off[go->node]};
        sleapc_status st = sleapc__tensor_map_set(out, go->name, &t);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

static sleapc_status xnnpack_forward(sleapc_backend *be, const sleapc_tensor *x,
                                     sleapc_tensor_map *out)
{
    xnnpack_state *xs = be->impl;
    const sleapc_graph *g = xs->g;
    sleapc_status st = sleapc__graph_input_check(x, g->in_channels);
    if (st)
        return st;
    int64_t shape[4] = {x->shape[0], g->in_channels, x->shape[2], x->shape[3]};
    if (memcmp(shape, xs->planned, sizeof shape) != 0) {
        st = plan(xs, shape);
        if (st)
            return st;
    }
    st = sleapc__graph_input_prepare_as(x, g->in_channels, g->input_as_is,
                                        xs->x_nchw ? xs->x_nchw : xs->x_nhwc);
    if (st)
        return st;
    if (xs->x_nchw)
        transpose(xs->pool, nchw_to_nhwc_row, xs->x_nchw, xs->x_nhwc, shape, 0);
    st = invoke(xs);
    if (st)
        return st;
    if (has_tail(xs))
        return publish_tail(xs, out);
    for (int o = 0; o < g->n_outputs; o++) {
        const sleapc_graph_output *go = &g->outputs[o];
        const int64_t *s = xs->shapes[go->node];
        float *data = xs->out_nhwc[o];
        /* Elementwise, so NHWC is as good as NCHW. */
        if (sleapc__sigmoid_on_host(g, go->node))
            sleapc__sigmoid_apply(data, numel(s));
        if (xs->out_nchw[o]) {
            transpose(xs->pool, nhwc_to_nchw_row, data, xs->out_nchw[o], s,
                      PTHREADPOOL_FLAG_YIELD_WORKERS);
            data = xs->out_nchw[o];
        }
        sleapc_tensor t = {.dtype = SLEAPC_DTYPE_F32,
                           .ndim = s[2] ? 4 : 2,
                           .shape = {s[0], s[1], s[2], s[3]},
                           .data = data};
        st = sleapc__tensor_map_set(out, go->name, &t);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

/* Plan, then run once on zeros so the runtime's memory is touched before the
 * first real frame. */
static sleapc_status xnnpack_warmup(sleapc_backend *be, const int64_t shape[4])
{
    xnnpack_state *xs = be->impl;
    int64_t s[4] = {shape[0], xs->g->in_channels, shape[2], shape[3]};
    if (memcmp(s, xs->planned, sizeof s) == 0)
        return SLEAPC_OK;
    sleapc_status st = plan(xs, s);
    return st ? st : invoke(xs);
}

static sleapc_status pool_create(int n_threads, pthreadpool_t *pool, int *n_out)
{
    int n = n_threads > 0 ? n_threads : sleapc__cpu_count();
    *pool = NULL;
    if (n > SLEAPC_THREADPOOL_MAX_THREADS)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "%d threads: at most %d", n,
                            SLEAPC_THREADPOOL_MAX_THREADS);
    /* One thread: no pool, XNNPACK then runs on the caller's thread. */
    if (n > 1 && !(*pool = pthreadpool_create((size_t)n)))
        return sleapc__fail(SLEAPC_ERR_NOMEM, "create a pool of %d threads: failed", n);
    *n_out = n;
    return SLEAPC_OK;
}

static void pool_destroy(pthreadpool_t pool)
{
    if (pool)
        pthreadpool_destroy(pool);
}

/* The runtime holds the pool, so a new count drops the plan; the next
 * forward builds it again. */
static sleapc_status xnnpack_set_n_threads(sleapc_backend *be, int n_threads)
{
    xnnpack_state *xs = be->impl;
    int n = n_threads > 0 ? n_threads : sleapc__cpu_count();
    if (n == xs->n_threads)
        return SLEAPC_OK;
    pthreadpool_t pool = NULL;
    sleapc_status st = pool_create(n, &pool, &n);
    if (st)
        return sleapc__wrap(st, "xnnpack: set threads");
    plan_free(xs);
    pool_destroy(xs->pool);
    xs->pool = pool;
    xs->n_threads = n;
    return SLEAPC_OK;
}

static void xnnpack_destroy(sleapc_backend *be)
{
    if (!be)
        return;
    xnnpack_state *xs = be->impl;
    if (xs) {
        plan_free(xs);
        sleapc__xnnpack_consts_free(&xs->consts);
        pool_destroy(xs->pool);
        sleapc__free(xs);
    }
    sleapc__free(be);
}

static const struct sleapc_backend_ops xnnpack_ops = {
    .abi = SLEAPC_BACKEND_ABI,
    .name = "xnnpack",
    .forward = xnnpack_forward,
    .warmup = xnnpack_warmup,
    .destroy = xnnpack_destroy,
    .set_n_threads = xnnpack_set_n_threads,
};

/* Whether XNNPACK runs fp16 on this machine: a one-conv runtime with fp16
 * forced (XNNPACK refuses it without native or emulated fp16 operators). */
static sleapc_status probe_fp16(void)
{
    static const float one = 1.0f, zero = 0.0f;
    const size_t dims[4] = {1, 2, 2, 1}, wdims[4] = {1, 1, 1, 1}, bdims[1] = {1};
    xnn_subgraph_t sg = NULL;
    xnn_runtime_t rt = NULL;
    uint32_t in, out, w, b;
    enum xnn_status s = xnn_create_subgraph(2, 0, &sg);
    if (s == xnn_status_success)
        s = xnn_define_tensor_value(sg, xnn_datatype_fp32, 4, dims, NULL, 0,
                                    XNN_VALUE_FLAG_EXTERNAL_INPUT, &in);
    if (s == xnn_status_success)
        s = xnn_define_tensor_value(sg, xnn_datatype_fp32, 4, dims, NULL, 1,
                                    XNN_VALUE_FLAG_EXTERNAL_OUTPUT, &out);
    if (s == xnn_status_success)
        s = xnn_define_tensor_value(sg, xnn_datatype_fp32, 4, wdims, &one, XNN_INVALID_VALUE_ID, 0,
                                    &w);
    if (s == xnn_status_success)
        s = xnn_define_tensor_value(sg, xnn_datatype_fp32, 1, bdims, &zero, XNN_INVALID_VALUE_ID, 0,
                                    &b);
    if (s == xnn_status_success)
        s = xnn_define_convolution_2d(sg, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, -INFINITY,
                                      INFINITY, in, w, b, out, 0);
    if (s == xnn_status_success)
        s = xnn_create_runtime_v2(sg, NULL, XNN_FLAG_FORCE_FP16_INFERENCE, &rt);
    if (rt)
        xnn_delete_runtime(rt);
    if (sg)
        xnn_delete_subgraph(sg);
    if (s != xnn_status_success)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "xnnpack: fp16 is not available on this machine (%s)",
                            sleapc__xnnpack_status_str(s));
    return SLEAPC_OK;
}

static sleapc_status xnnpack_create(const sleapc_graph *g, const sleapc_backend_opts *opts,
                                    sleapc_backend **out)
{
    if (opts->precision == SLEAPC_PRECISION_BF16)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                            "xnnpack: bf16 is not supported (XNNPACK computes fp32 or fp16)");
    if (opts->precision != SLEAPC_PRECISION_FP32 && opts->precision != SLEAPC_PRECISION_FP16)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "xnnpack: unknown precision %d",
                            (int)opts->precision);
    enum xnn_status s = xnnpack_init();
    if (s != xnn_status_success)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "xnnpack: xnn_initialize: %s",
                            sleapc__xnnpack_status_str(s));
    bool fp16 = opts->precision == SLEAPC_PRECISION_FP16;
    sleapc_status st = sleapc__xnnpack_check(g, fp16);
    if (!st && fp16)
        st = probe_fp16();
    if (st)
        return st;

    sleapc_backend *be = sleapc__calloc(1, sizeof *be);
    xnnpack_state *xs = sleapc__calloc(1, sizeof *xs);
    if (!be || !xs) {
        sleapc__free(be);
        sleapc__free(xs);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "xnnpack: out of memory");
    }
    be->ops = &xnnpack_ops;
    be->impl = xs;
    strcpy(be->device, "cpu");
    xs->g = g;
    st = sleapc__xnnpack_tail_find(g, &xs->tail); /* checked above: cannot fail */
    /* Idle workers sleep after a forward instead of spinning, so they leave
     * the cores to the decode and write threads between frames. */
    xs->rt_flags = XNN_FLAG_YIELD_WORKERS | (fp16 ? XNN_FLAG_FORCE_FP16_INFERENCE : 0);
    if (!st)
        st = sleapc__xnnpack_consts_create(g, &xs->consts);
    if (!st)
        st = pool_create(opts->n_threads, &xs->pool, &xs->n_threads);
    if (st) {
        xnnpack_destroy(be);
        return st;
    }
    *out = be;
    return SLEAPC_OK;
}

static int xnnpack_score(void)
{
    if (xnnpack_init() != xnn_status_success)
        return 0;
#if defined(__aarch64__)
    return 20; /* on ARM it beats oneDNN and the native kernels */
#else
    return 1; /* measured 2-3x slower than native on x86: below it for "auto" */
#endif
}

const struct sleapc_backend_factory sleapc__xnnpack_factory = {
    .name = "xnnpack",
    .score = xnnpack_score,
    .create = xnnpack_create,
};
