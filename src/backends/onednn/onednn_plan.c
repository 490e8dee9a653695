/* The oneDNN backend's plan for one input shape: values, steps, reorders,
 * packed weights, and the buffers behind them (see onednn_impl.h). */
#include <assert.h>
#include <dnnl_debug.h>
#include <string.h>

#include "backends/onednn/onednn_impl.h"
#include "backends/sigmoid.h"
#include "core/alloc.h"
#include "core/error.h"
#include "model/graph_plan.h"

/* No single tensor may need more bytes than this: a guard against shapes
 * whose sizes would overflow, not a practical limit. */
#define ONEDNN_MAX_BYTES 17592186044416.0 /* 2^44 */

sleapc_status sleapc__onednn_check(dnnl_status_t s, const char *action, const char *name)
{
    if (s == dnnl_success)
        return SLEAPC_OK;
    return sleapc__fail(SLEAPC_ERR_BACKEND, "%s: node %s: oneDNN: %s", action, name,
                        dnnl_status2str(s));
}

sleapc_status sleapc__onednn_attr(sleapc_act act, const char *name, dnnl_primitive_attr_t *out)
{
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    *out = NULL;
    dnnl_status_t s = dnnl_primitive_attr_create(&attr);
    if (s == dnnl_success)
        s = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    /* Not the sigmoid: oneDNN's logistic gives 0.99999994 where the other
     * backends give 1 (see sleapc__onednn_sigmoid_add). */
    if (s == dnnl_success && act == SLEAPC_ACT_RELU) {
        s = dnnl_post_ops_create(&po);
        if (s == dnnl_success)
            s = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
        if (s == dnnl_success)
            s = dnnl_primitive_attr_set_post_ops(attr, po);
        if (po)
            dnnl_post_ops_destroy(po);
    }
    if (s != dnnl_success) {
        if (attr)
            dnnl_primitive_attr_destroy(attr);
        return sleapc__onednn_check(s, "create primitive attributes", name);
    }
    *out = attr;
    return SLEAPC_OK;
}

static sleapc_status value_add(onednn_state *s, const dnnl_memory_desc_t *md, int def_step,
                               const char *name, int *out)
{
    onednn_plan *p = &s->plan;
    size_t bytes = dnnl_memory_desc_get_size(md);
    if (bytes == 0 || (double)bytes > ONEDNN_MAX_BYTES)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "plan: node %s: a tensor of %zu bytes", name,
                            bytes);
    if (p->n_values == p->cap_values) {
        int cap = p->cap_values ? 2 * p->cap_values : 64;
        onednn_value *v = sleapc__realloc(p->values, (size_t)cap * sizeof *v);
        if (!v)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "plan: node %s: out of memory", name);
        p->values = v;
        p->cap_values = cap;
    }
    onednn_value *v = &p->values[p->n_values];
    memset(v, 0, sizeof *v);
    v->md = *md;
    v->bytes = bytes;
    v->def_step = def_step;
    v->last_step = def_step;
    v->reorder_of = -1;
    v->off = -1;
    *out = p->n_values++;
    return SLEAPC_OK;
}

/* Room for one more step, zeroed and named; the caller counts it. */
static sleapc_status step_new(onednn_state *s, const char *name, onednn_step **out)
{
    onednn_plan *p = &s->plan;
    if (p->n_steps == p->cap_steps) {
        int cap = p->cap_steps ? 2 * p->cap_steps : 64;
        onednn_step *st = sleapc__realloc(p->steps, (size_t)cap * sizeof *st);
        if (!st)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "plan: node %s: out of memory", name);
        p->steps = st;
        p->cap_steps = cap;
    }
    onednn_step *st = &p->steps[p->n_steps];
    memset(st, 0, sizeof *st);
    st->name = name;
    *out = st;
    return SLEAPC_OK;
}

sleapc_status sleapc__onednn_step_add(onednn_state *s, const_dnnl_primitive_desc_t pd,
                                      const char *name, int *out_step)
{
    onednn_plan *p = &s->plan;
    onednn_step *st = NULL;
    sleapc_status rc = step_new(s, name, &st);
    if (rc)
        return rc;
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (smd) {
        st->scratch_md = *smd;
        st->scratch_bytes = dnnl_memory_desc_get_size(smd);
    }
    rc = sleapc__onednn_check(dnnl_primitive_create(&st->prim, pd), "create primitive", name);
    if (rc)
        return rc;
    *out_step = p->n_steps++;
    return SLEAPC_OK;
}

static void step_arg(onednn_step *st, int arg, int v, dnnl_memory_t fixed)
{
    /* The lowering never gives a primitive more arguments than this. */
    assert(st->n_args < ONEDNN_MAX_ARGS);
    st->arg[st->n_args] = arg;
    st->value[st->n_args] = v;
    st->fixed[st->n_args] = fixed;
    st->n_args++;
}

void sleapc__onednn_step_read(onednn_state *s, int step, int arg, int v)
{
    step_arg(&s->plan.steps[step], arg, v, NULL);
    onednn_value *val = &s->plan.values[v];
    if (val->last_step < step)
        val->last_step = step;
}

void sleapc__onednn_step_fixed(onednn_state *s, int step, int arg, dnnl_memory_t mem)
{
    step_arg(&s->plan.steps[step], arg, -1, mem);
}

sleapc_status sleapc__onednn_step_write(onednn_state *s, int step, int arg,
                                        const dnnl_memory_desc_t *md, int *out_value)
{
    sleapc_status st = value_add(s, md, step, s->plan.steps[step].name, out_value);
    if (st)
        return st;
    step_arg(&s->plan.steps[step], arg, *out_value, NULL);
    return SLEAPC_OK;
}

/* Plain float32 layout of a value's dims: NCHW for maps, (B, C) vectors. */
static sleapc_status plain_f32(const dnnl_memory_desc_t *md, const char *name,
                               dnnl_memory_desc_t *out)
{
    dnnl_format_tag_t tag = md->ndims == 4 ? dnnl_nchw : dnnl_nc;
    dnnl_status_t ds = dnnl_memory_desc_init_by_tag(out, md->ndims, md->dims, dnnl_f32, tag);
    return sleapc__onednn_check(ds, "describe output", name);
}

sleapc_status sleapc__onednn_value_as(onednn_state *s, int v, const dnnl_memory_desc_t *want,
                                      const char *name, int *out_value)
{
    onednn_plan *p = &s->plan;
    if (dnnl_memory_desc_equal(&p->values[v].md, want)) {
        *out_value = v;
        return SLEAPC_OK;
    }
    for (int u = 0; u < p->n_values; u++)
        if (p->values[u].reorder_of == v && dnnl_memory_desc_equal(&p->values[u].md, want)) {
            *out_value = u;
            return SLEAPC_OK;
        }
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    sleapc_status st = sleapc__onednn_attr(SLEAPC_ACT_NONE, name, &attr);
    if (st)
        return st;
    st = sleapc__onednn_check(dnnl_reorder_primitive_desc_create(&pd, &p->values[v].md, s->eng,
                                                                 want, s->eng, attr),
                              "plan reorder", name);
    dnnl_primitive_attr_destroy(attr);
    int step = -1;
    if (!st)
        st = sleapc__onednn_step_add(s, pd, name, &step);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (st)
        return st;
    sleapc__onednn_step_read(s, step, DNNL_ARG_FROM, v);
    st = sleapc__onednn_step_write(s, step, DNNL_ARG_TO, want, out_value);
    if (st)
        return st;
    p->values[*out_value].reorder_of = v;
    return SLEAPC_OK;
}

/* oneDNN's logistic (as a post-op or an eltwise primitive) rounds to
 * 0.99999994 where expf's sigmoid gives exactly 1, and SLEAP 1.x's class
 * assignment breaks ties between class-map values of exactly 1; so the
 * sigmoid runs on the host, with the function the native backend uses. It
 * needs a plain layout only because blocked ones pad channels with zeros that
 * must stay zero. Heads are small: a serial pass costs next to nothing. */
sleapc_status sleapc__onednn_sigmoid_add(onednn_state *s, int i)
{
    onednn_plan *p = &s->plan;
    const char *name = s->g->nodes[i].name;
    dnnl_memory_desc_t plain;
    int v = -1;
    onednn_step *st = NULL;
    sleapc_status rc = plain_f32(&p->values[p->node_value[i]].md, name, &plain);
    if (!rc)
        rc = sleapc__onednn_value_as(s, p->node_value[i], &plain, name, &v);
    if (!rc)
        rc = step_new(s, name, &st);
    if (rc)
        return rc;
    int step = p->n_steps++;
    sleapc__onednn_step_read(s, step, DNNL_ARG_DST, v);
    p->node_value[i] = v;
    return SLEAPC_OK;
}

void sleapc__onednn_pack_free(onednn_pack *pk)
{
    if (pk->mem)
        dnnl_memory_destroy(pk->mem);
    sleapc__aligned_free(pk->data);
    memset(pk, 0, sizeof *pk);
}

/* One-off reorder of user data into pk (plan time, so the library's own
 * scratchpad is fine here). */
static sleapc_status pack_reorder(onednn_state *s, onednn_pack *pk,
                                  const dnnl_memory_desc_t *user_md, const float *data,
                                  const char *name)
{
    dnnl_memory_t user = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t prim = NULL;
    /* oneDNN takes a non-const handle; a reorder only reads its source. */
    dnnl_status_t ds = dnnl_memory_create(&user, user_md, s->eng, (void *)data);
    if (ds == dnnl_success)
        ds = dnnl_reorder_primitive_desc_create(&pd, user_md, s->eng, &pk->md, s->eng, NULL);
    if (ds == dnnl_success)
        ds = dnnl_primitive_create(&prim, pd);
    if (ds == dnnl_success) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, pk->mem}};
        ds = dnnl_primitive_execute(prim, s->stream, 2, args);
    }
    if (ds == dnnl_success)
        ds = dnnl_stream_wait(s->stream);
    if (prim)
        dnnl_primitive_destroy(prim);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (user)
        dnnl_memory_destroy(user);
    return sleapc__onednn_check(ds, "pack weights", name);
}

sleapc_status sleapc__onednn_pack(onednn_state *s, onednn_pack *pk, const dnnl_memory_desc_t *want,
                                  const dnnl_memory_desc_t *user_md, const float *data,
                                  const char *name)
{
    if (pk->mem && dnnl_memory_desc_equal(&pk->md, want))
        return SLEAPC_OK;
    sleapc__onednn_pack_free(pk);
    pk->md = *want;
    if (dnnl_memory_desc_equal(user_md, want))
        return sleapc__onednn_check(dnnl_memory_create(&pk->mem, want, s->eng, (void *)data),
                                    "wrap weights", name);
    size_t bytes = dnnl_memory_desc_get_size(want);
    pk->data = sleapc__aligned_alloc(bytes ? bytes : 1);
    if (!pk->data) {
        sleapc__onednn_pack_free(pk);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "pack weights: node %s: out of memory for %zu bytes",
                            name, bytes);
    }
    sleapc_status st = sleapc__onednn_check(dnnl_memory_create(&pk->mem, want, s->eng, pk->data),
                                            "pack weights", name);
    if (!st)
        st = pack_reorder(s, pk, user_md, data, name);
    if (st)
        sleapc__onednn_pack_free(pk);
    return st;
}

void sleapc__onednn_plan_free(onednn_state *s)
{
    onednn_plan *p = &s->plan;
    for (int i = 0; i < p->n_steps; i++) {
        if (p->steps[i].prim)
            dnnl_primitive_destroy(p->steps[i].prim);
        if (p->steps[i].scratch_mem)
            dnnl_memory_destroy(p->steps[i].scratch_mem);
    }
    for (int i = 0; i < p->n_values; i++)
        if (p->values[i].mem)
            dnnl_memory_destroy(p->values[i].mem);
    sleapc__aligned_free(p->arena);
    sleapc__free(p->steps);
    sleapc__free(p->values);
    sleapc__free(p->node_value);
    sleapc__free(p->shapes);
    sleapc__aligned_free(p->scratch);
    memset(p, 0, sizeof *p);
}

/* The values' offsets in one arena, from the shared planner's packing
 * (model/graph_plan.h): a value lives from the step writing it to the last
 * step reading it, so no step writes over its inputs. */
static sleapc_status assign_buffers(onednn_state *s)
{
    onednn_plan *p = &s->plan;
    size_t n = (size_t)(p->n_values > 0 ? p->n_values : 1);
    int64_t *bytes = sleapc__malloc(n * sizeof *bytes);
    int64_t *off = sleapc__malloc(n * sizeof *off);
    int *first = sleapc__malloc(n * sizeof *first);
    int *last = sleapc__malloc(n * sizeof *last);
    sleapc_status st = SLEAPC_OK;
    if (!bytes || !off || !first || !last) {
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory");
        goto done;
    }
    for (int v = 0; v < p->n_values; v++) {
        bytes[v] = (int64_t)p->values[v].bytes;
        first[v] = p->values[v].def_step;
        last[v] = p->values[v].last_step;
    }
    st = sleapc__plan_pack(p->n_values, bytes, first, last, 64, off, &p->arena_bytes);
    if (st)
        goto done;
    for (int v = 0; v < p->n_values; v++)
        p->values[v].off = off[v];
    p->arena = sleapc__aligned_alloc((size_t)(p->arena_bytes ? p->arena_bytes : 64));
    if (!p->arena)
        st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory for %lld bytes",
                          (long long)p->arena_bytes);
    else
        sleapc__log(SLEAPC_LOG_INFO, "onednn: activations: %lld bytes in one arena",
                    (long long)p->arena_bytes);
done:
    sleapc__free(bytes);
    sleapc__free(off);
    sleapc__free(first);
    sleapc__free(last);
    return st;
}

/* Memory objects over the buffers, and each step's argument list. */
static sleapc_status bind_memories(onednn_state *s)
{
    onednn_plan *p = &s->plan;
    for (int v = 0; v < p->n_values; v++) {
        onednn_value *val = &p->values[v];
        sleapc_status st = sleapc__onednn_check(
            dnnl_memory_create(&val->mem, &val->md, s->eng, onednn_value_data(p, v)), "bind memory",
            "(plan)");
        if (st)
            return st;
    }
    size_t scratch = 0;
    for (int i = 0; i < p->n_steps; i++)
        if (p->steps[i].scratch_bytes > scratch)
            scratch = p->steps[i].scratch_bytes;
    if (scratch) {
        p->scratch = sleapc__aligned_alloc(scratch);
        if (!p->scratch)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory for %zu bytes of scratch",
                                scratch);
    }
    for (int i = 0; i < p->n_steps; i++) {
        onednn_step *st = &p->steps[i];
        st->n_exec = 0;
        for (int k = 0; k < st->n_args; k++) {
            st->exec[st->n_exec].arg = st->arg[k];
            st->exec[st->n_exec].memory =
                st->value[k] >= 0 ? p->values[st->value[k]].mem : st->fixed[k];
            st->n_exec++;
        }
        if (st->scratch_bytes) {
            sleapc_status rc = sleapc__onednn_check(
                dnnl_memory_create(&st->scratch_mem, &st->scratch_md, s->eng, p->scratch),
                "bind scratchpad", st->name);
            if (rc)
                return rc;
            st->exec[st->n_exec].arg = DNNL_ARG_SCRATCHPAD;
            st->exec[st->n_exec].memory = st->scratch_mem;
            st->n_exec++;
        }
    }
    return SLEAPC_OK;
}

static sleapc_status build(onednn_state *s, const int64_t shape[4])
{
    const sleapc_graph *g = s->g;
    onednn_plan *p = &s->plan;
    p->shapes = sleapc__malloc((size_t)g->n_nodes * sizeof *p->shapes);
    p->node_value = sleapc__malloc((size_t)g->n_nodes * sizeof *p->node_value);
    if (!p->shapes || !p->node_value)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "plan: out of memory");
    sleapc_status st = sleapc__graph_infer_shapes(g, shape[0], shape[2], shape[3], p->shapes);
    if (st)
        return st;
    /* Refuse sizes oneDNN's own int64 arithmetic could overflow on (a warmup
     * shape comes without data, so nothing else bounds it). */
    for (int i = 0; i < g->n_nodes; i++) {
        const int64_t *d = p->shapes[i];
        double hw = d[2] ? (double)d[2] * (double)d[3] : 1.0;
        double bytes = 4.0 * (double)d[0] * (double)d[1] * hw;
        if (bytes > ONEDNN_MAX_BYTES)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG, "plan: node %s: %.3g bytes for %lldx%lld "
                                "batch %lld", g->nodes[i].name, bytes, (long long)shape[2],
                                (long long)shape[3], (long long)shape[0]);
    }

    dnnl_memory_desc_t md;
    dnnl_dims_t dims = {shape[0], shape[1], shape[2], shape[3]};
    st = sleapc__onednn_check(dnnl_memory_desc_init_by_tag(&md, 4, dims, dnnl_f32, dnnl_nchw),
                              "describe input", g->nodes[0].name);
    if (!st)
        st = value_add(s, &md, -1, g->nodes[0].name, &p->node_value[0]);
    for (int i = 1; i < g->n_nodes && !st; i++)
        st = sleapc__onednn_lower_node(s, i);
    for (int o = 0; o < g->n_outputs && !st; o++) {
        int node = g->outputs[o].node;
        int v = p->node_value[node];
        st = plain_f32(&p->values[v].md, g->nodes[node].name, &md);
        if (!st)
            st = sleapc__onednn_value_as(s, v, &md, g->nodes[node].name, &p->out_value[o]);
        if (!st)
            p->values[p->out_value[o]].last_step = ONEDNN_KEEP;
    }
    if (!st)
        st = assign_buffers(s);
    if (!st)
        st = bind_memories(s);
    if (!st)
        memcpy(p->shape, shape, sizeof p->shape);
    return st;
}

sleapc_status sleapc__onednn_plan_build(onednn_state *s, const int64_t shape[4])
{
    sleapc__onednn_plan_free(s);
    sleapc_status st = build(s, shape);
    if (st)
        sleapc__onednn_plan_free(s);
    return st;
}

sleapc_status sleapc__onednn_plan_run(onednn_state *s)
{
    onednn_plan *p = &s->plan;
    for (int i = 0; i < p->n_steps; i++) {
        onednn_step *st = &p->steps[i];
        dnnl_status_t ds;
        if (!st->prim) {
            /* The host sigmoid reads what the primitives before it wrote. */
            ds = dnnl_stream_wait(s->stream);
            if (ds != dnnl_success)
                return sleapc__onednn_check(ds, "wait for stream", st->name);
            const onednn_value *v = &p->values[st->value[0]];
            sleapc__sigmoid_apply(onednn_value_data(p, st->value[0]),
                                  (int64_t)(v->bytes / sizeof(float)));
            continue;
        }
        ds = dnnl_primitive_execute(st->prim, s->stream, st->n_exec, st->exec);
        if (ds != dnnl_success)
            return sleapc__onednn_check(ds, "execute", st->name);
    }
    return sleapc__onednn_check(dnnl_stream_wait(s->stream), "wait for stream", "(all)");
}
