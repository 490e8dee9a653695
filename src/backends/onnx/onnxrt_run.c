/* Executing a plan: host steps through their kernels, network segments
 * through their backend, If by running one branch. After each main-block
 * step the values it read or made for the last time give their storage back
 * to the pool (onnxrt_pool.c) for later values; what the graph returns lives
 * until the next run. The pool keeps its buffers, so a run on shapes seen
 * just before allocates nothing. */
#include <stdio.h>
#include <string.h>

#include "backends/onnx/onnxrt_impl.h"
#include "core/error.h"

#define MAX_STEP_IO 16

static sleapc_status missing(const sleapc_onnxrt *rt, const char *name)
{
    return sleapc__fail(SLEAPC_ERR_FORMAT, "run ONNX: %s: \"%s\" is read before it is computed",
                        rt->path, name);
}

/* After a main-block step: values nothing reads any more give back their
 * storage. */
static void consumed(sleapc_onnxrt *rt, const rt_step *step)
{
    for (int k = 0; k < step->n_release; k++)
        sleapc__rt_pool_put(&rt->pool, &rt->vals[step->release[k]].t);
}

static sleapc_status run_host(sleapc_onnxrt *rt, const rt_step *step)
{
    rt_op_ctx c = {.node = step->node,
                   .path = rt->path,
                   .budget = &rt->budget,
                   .scratch = &rt->scratch,
                   .pool = &rt->pool};
    if (step->n_in > MAX_STEP_IO || step->n_out > MAX_STEP_IO || step->n_out < 1)
        return sleapc__rt_fail(&c, SLEAPC_ERR_UNSUPPORTED, "%d inputs, %d outputs", step->n_in,
                               step->n_out);
    rt_tensor *in[MAX_STEP_IO];
    for (int k = 0; k < step->n_in; k++) {
        int v = step->in[k];
        in[k] = v >= 0 ? &rt->vals[v].t : NULL;
        if (in[k] && !in[k]->set)
            return missing(rt, rt->vals[v].name);
    }
    /* The kernel fills its outputs in their slots' storage (every output has
     * a slot, onnxrt_plan.c), which then holds the values. */
    rt_tensor out[MAX_STEP_IO];
    for (int k = 0; k < step->n_out; k++) {
        rt_tensor *slot = &rt->vals[step->out[k]].t;
        sleapc__rt_release(slot);
        out[k] = *slot;
        memset(slot, 0, sizeof *slot);
    }
    sleapc_status st = step->fn(&c, in, step->n_in, out, step->n_out);
    for (int k = 0; k < step->n_out; k++) {
        if (st || !out[k].set)
            sleapc__rt_release(&out[k]);
        rt->vals[step->out[k]].t = out[k];
    }
    return st;
}

/* A network segment: its input (float, in [0, 1]) through the backend, its
 * IR outputs "0", "1", ... copied into their value slots. */
static sleapc_status run_segment(sleapc_onnxrt *rt, const rt_step *step)
{
    rt_segment *seg = &rt->segs[step->seg];
    rt_value *src = &rt->vals[seg->input];
    const rt_tensor *x = &src->t;
    if (!x->set)
        return missing(rt, src->name);
    /* The IR input would convert 1 <-> 3 channels; ONNX's Conv would not. */
    if (x->dtype != SLEAPC_ONNX_DTYPE_FLOAT || x->ndim != 4 || x->shape[1] != seg->g.in_channels)
        return sleapc__fail(
            SLEAPC_ERR_FORMAT,
            "run ONNX: %s: network input \"%s\" is not a float (B, %d, H, W) tensor", rt->path,
            src->name, seg->g.in_channels);
    /* The IR input divides by 255 when a float input exceeds 1; the pose
     * exports feed it normalised images, so a larger value means a graph it
     * misreads (a segment planned as_is takes any value). */
    const float *px = x->data;
    for (int64_t i = 0; !seg->g.input_as_is && i < x->numel; i++)
        if (px[i] > 1.0f)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "run ONNX: %s: network input \"%s\" exceeds 1", rt->path,
                                src->name);
    sleapc_tensor view = {.dtype = SLEAPC_DTYPE_F32, .ndim = 4, .data = x->data};
    memcpy(view.shape, x->shape, 4 * sizeof *x->shape);
    sleapc_tensor_map out = {0};
    sleapc_status st = sleapc__backend_forward(seg->be, &view, &out);
    if (st)
        return sleapc__wrap(st, "run ONNX: %s: network %d", rt->path, step->seg);
    rt_op_ctx c = {.node = &rt->om->graph.nodes[seg->nodes[0]],
                   .path = rt->path,
                   .budget = &rt->budget,
                   .scratch = &rt->scratch,
                   .pool = &rt->pool};
    for (int o = 0; o < seg->n_outputs; o++) {
        char name[16];
        snprintf(name, sizeof name, "%d", o);
        const sleapc_tensor *t = sleapc__tensor_map_get(&out, name);
        if (!t || t->dtype != SLEAPC_DTYPE_F32)
            return sleapc__fail(SLEAPC_ERR_BACKEND,
                                "run ONNX: %s: network %d returned no output %s", rt->path,
                                step->seg, name);
        rt_tensor *dst = &rt->vals[seg->outputs[o]].t;
        st = sleapc__rt_alloc(&c, dst, SLEAPC_ONNX_DTYPE_FLOAT, t->ndim, t->shape);
        if (st)
            return st;
        memcpy(dst->data, t->data, (size_t)dst->numel * sizeof(float));
    }
    return SLEAPC_OK;
}

static sleapc_status run_if(sleapc_onnxrt *rt, const rt_step *step)
{
    rt_op_ctx c = {.node = step->node,
                   .path = rt->path,
                   .budget = &rt->budget,
                   .scratch = &rt->scratch,
                   .pool = &rt->pool};
    int cv = step->in[0];
    double cond = 0;
    if (cv < 0 || !rt->vals[cv].t.set)
        return missing(rt, cv < 0 ? "" : rt->vals[cv].name);
    sleapc_status st = sleapc__rt_scalar(&c, &rt->vals[cv].t, &cond);
    if (st)
        return st;
    const rt_block *b = step->branch[cond != 0.0 ? 0 : 1];
    st = sleapc__rt_run_block(rt, b);
    for (int o = 0; !st && o < step->n_out; o++) {
        const rt_value *src = &rt->vals[b->outputs[o]];
        if (!src->t.set)
            return missing(rt, src->name);
        if (step->out[o] >= 0)
            st = sleapc__rt_copy(&c, &src->t, &rt->vals[step->out[o]].t);
    }
    return st;
}

sleapc_status sleapc__rt_run_block(sleapc_onnxrt *rt, const rt_block *b)
{
    bool main = b == &rt->main;
    for (int s = 0; s < b->n_steps; s++) {
        const rt_step *step = &b->steps[s];
        sleapc_status st = step->kind == RT_STEP_HOST      ? run_host(rt, step)
                           : step->kind == RT_STEP_SEGMENT ? run_segment(rt, step)
                                                           : run_if(rt, step);
        if (st)
            return st;
        if (main)
            consumed(rt, step);
    }
    return SLEAPC_OK;
}

static sleapc_status bind_input(sleapc_onnxrt *rt, const sleapc_tensor *x)
{
    const sleapc_onnx_graph *g = &rt->om->graph;
    rt_value *v = &rt->vals[rt->input];
    const sleapc_onnx_value *decl = NULL;
    for (int i = 0; i < g->n_inputs; i++)
        if (strcmp(g->inputs[i].name, v->name) == 0)
            decl = &g->inputs[i];
    sleapc_onnx_dtype dt = x->dtype == SLEAPC_DTYPE_U8    ? SLEAPC_ONNX_DTYPE_UINT8
                           : x->dtype == SLEAPC_DTYPE_F32 ? SLEAPC_ONNX_DTYPE_FLOAT
                           : x->dtype == SLEAPC_DTYPE_I64 ? SLEAPC_ONNX_DTYPE_INT64
                                                          : SLEAPC_ONNX_DTYPE_INT32;
    bool ok = x->data && x->ndim >= 0 && x->ndim <= SLEAPC_TENSOR_MAX_DIMS && decl &&
              (decl->dtype == dt) && (decl->ndim < 0 || decl->ndim == x->ndim);
    int64_t numel = 1;
    for (int i = 0; ok && i < x->ndim; i++) {
        ok = x->shape[i] >= 0 && x->shape[i] <= RT_MAX_NUMEL &&
             (decl->ndim < 0 || decl->shape[i] < 0 || decl->shape[i] == x->shape[i]) &&
             (x->shape[i] == 0 || numel <= RT_MAX_NUMEL / x->shape[i]);
        numel *= ok ? x->shape[i] : 1;
    }
    if (!ok)
        return sleapc__fail(
            SLEAPC_ERR_INVALID_ARG,
            "run ONNX: %s: the input is not what input \"%s\" declares (%s, %d dimensions)",
            rt->path, v->name, decl ? sleapc__onnx_dtype_name(decl->dtype) : "?",
            decl ? decl->ndim : -1);
    sleapc__rt_release(&v->t);
    v->t.dtype = dt;
    v->t.ndim = x->ndim;
    v->t.numel = numel;
    v->t.data = x->data;
    v->t.set = true;
    memcpy(v->t.shape, x->shape, (size_t)x->ndim * sizeof *x->shape);
    return SLEAPC_OK;
}

sleapc_status sleapc__onnxrt_run(sleapc_onnxrt *rt, const sleapc_tensor *x, sleapc_tensor_map *out)
{
    if (!rt || !x || !out)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "run ONNX: runner, input and output are required");
    sleapc__tensor_map_clear(out);
    for (int v = 0; v < rt->n_vals; v++)
        if (!rt->vals[v].is_const)
            sleapc__rt_pool_put(&rt->pool, &rt->vals[v].t);
    rt->pool.peak = rt->pool.busy;
    sleapc_status st = bind_input(rt, x);
    /* Host bytes one run may allocate in all. The exports use 8 to 270
     * times the input's bytes (top-down: twenty crops and their maps) and a
     * few MB at most on the test frames; a hostile graph asking for
     * gigabytes is stopped. */
    const rt_tensor *in = &rt->vals[rt->input].t;
    rt->budget = ((int64_t)256 << 20) + (st ? 0 : 1024 * in->numel * (int64_t)sleapc__rt_esize(in));
    if (!st)
        st = sleapc__rt_run_block(rt, &rt->main);
    for (int o = 0; !st && o < rt->n_outputs; o++) {
        const rt_value *v = &rt->vals[rt->outputs[o]];
        const rt_tensor *t = &v->t;
        if (!t->set)
            return missing(rt, v->name);
        sleapc_tensor view = {.ndim = t->ndim, .data = t->data};
        switch (t->dtype) {
        case SLEAPC_ONNX_DTYPE_FLOAT:
            view.dtype = SLEAPC_DTYPE_F32;
            break;
        case SLEAPC_ONNX_DTYPE_INT64:
            view.dtype = SLEAPC_DTYPE_I64;
            break;
        case SLEAPC_ONNX_DTYPE_INT32:
            view.dtype = SLEAPC_DTYPE_I32;
            break;
        case SLEAPC_ONNX_DTYPE_BOOL:
        case SLEAPC_ONNX_DTYPE_UINT8:
            view.dtype = SLEAPC_DTYPE_U8;
            break;
        default:
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "run ONNX: %s: output \"%s\" is %s",
                                rt->path, v->name, sleapc__onnx_dtype_name(t->dtype));
        }
        if (t->ndim > SLEAPC_TENSOR_MAX_DIMS || strlen(v->name) >= SLEAPC_TENSOR_NAME_CAP)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "run ONNX: %s: output \"%s\" has %d dimensions", rt->path, v->name,
                                t->ndim);
        memcpy(view.shape, t->shape, (size_t)t->ndim * sizeof *t->shape);
        st = sleapc__tensor_map_set(out, v->name, &view);
    }
    return st;
}
