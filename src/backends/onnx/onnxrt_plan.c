/* Planning a baked export graph: every value gets a slot, Constant nodes are
 * bound once, the network parts become IR segments run by a backend, and
 * every other node becomes a host step with its kernel. A segment starts at a
 * Conv that reads a host value and takes every later network op whose data
 * inputs all come from it; that is where sleap-nn's wrappers call the model
 * (export.md §3: the image network, and for top-down the instance network on
 * the crops). */
#include <string.h>

#include "backends/onnx/onnxrt_impl.h"
#include "core/alloc.h"
#include "core/error.h"
#include "model/from_onnx.h"

/* Ops that belong to a network segment when their data comes from one. */
static bool is_net_op(const char *op)
{
    static const char *const ops[] = {"Conv",          "ConvTranspose", "MaxPool", "Resize",
                                      "Concat",        "Relu",          "Sigmoid", "Softmax",
                                      "GlobalMaxPool", "Flatten",       "Gemm"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0)
            return true;
    return false;
}

typedef struct planner {
    sleapc_onnxrt *rt;
    int n_max;    /* room in rt->vals */
    int cap;      /* hash slots, a power of two */
    int *slots;   /* value index or -1 */
    int *seg_of;  /* per value: its segment, or -1 */
    bool *pinned; /* per value: never released before the run ends */
    int *last;    /* per value: the main-block step that last uses it, or -1 */
    const char *device; /* the segments' backends' device (NULL: their choice) */
    bool as_is;         /* the segments take their inputs as they are */
} planner;

static uint32_t hash(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

static int find(const planner *p, const char *name)
{
    for (uint32_t i = hash(name) & (uint32_t)(p->cap - 1);; i = (i + 1) & (uint32_t)(p->cap - 1)) {
        int v = p->slots[i];
        if (v < 0 || strcmp(p->rt->vals[v].name, name) == 0)
            return v;
    }
}

static sleapc_status declare(planner *p, const char *name)
{
    sleapc_onnxrt *rt = p->rt;
    if (!name[0])
        return SLEAPC_OK;
    if (find(p, name) >= 0)
        return sleapc__fail(SLEAPC_ERR_FORMAT, "plan ONNX: %s: \"%s\" is defined twice", rt->path,
                            name);
    uint32_t i = hash(name) & (uint32_t)(p->cap - 1);
    while (p->slots[i] >= 0)
        i = (i + 1) & (uint32_t)(p->cap - 1);
    p->slots[i] = rt->n_vals;
    rt->vals[rt->n_vals++].name = name;
    return SLEAPC_OK;
}

/* Values a graph (and its subgraphs) can define, for sizing the table. */
static size_t count_values(const sleapc_onnx_graph *g, int depth)
{
    size_t n = (size_t)g->n_initializers + (size_t)g->n_inputs;
    for (int i = 0; i < g->n_nodes; i++) {
        n += (size_t)g->nodes[i].n_outputs;
        for (int a = 0; a < g->nodes[i].n_attrs && depth < 8; a++)
            if (g->nodes[i].attrs[a].g)
                n += count_values(g->nodes[i].attrs[a].g, depth + 1);
    }
    return n;
}

static sleapc_status declare_graph(planner *p, const sleapc_onnx_graph *g, int depth)
{
    if (depth >= 8)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "plan ONNX: %s: subgraphs nested 8 deep",
                            p->rt->path);
    sleapc_status st = SLEAPC_OK;
    for (int i = 0; !st && i < g->n_initializers; i++) {
        if (!g->initializers[i].name[0])
            continue; /* nothing can read it */
        st = declare(p, g->initializers[i].name);
        if (!st) {
            rt_value *v = &p->rt->vals[p->rt->n_vals - 1];
            sleapc__rt_view(&v->t, &g->initializers[i]);
            v->is_const = true;
        }
    }
    for (int i = 0; !st && i < g->n_nodes; i++) {
        const sleapc_onnx_node *n = &g->nodes[i];
        for (int k = 0; !st && k < n->n_outputs; k++)
            st = declare(p, n->outputs[k]);
        for (int a = 0; !st && a < n->n_attrs; a++)
            if (n->attrs[a].g)
                st = declare_graph(p, n->attrs[a].g, depth + 1);
    }
    return st;
}

static sleapc_status unsupported(const sleapc_onnxrt *rt, const sleapc_onnx_node *n,
                                 const char *why)
{
    return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                        "plan ONNX: %s: ONNX node %s (%s) is not supported%s%s", rt->path,
                        n->name[0]     ? n->name
                        : n->n_outputs ? n->outputs[0]
                                       : "?",
                        n->op_type, why ? ": " : "", why ? why : "");
}

/* Slots of a name list; an unknown name is SLEAPC_ERR_FORMAT. An omitted
 * input ("") is -1; an omitted output gets a slot of its own, nameless and
 * never read, so that its storage too is kept across runs. */
static sleapc_status slots_of(planner *p, char *const *names, int n, bool outputs, int **out)
{
    sleapc_onnxrt *rt = p->rt;
    *out = sleapc__malloc((size_t)(n ? n : 1) * sizeof **out);
    if (!*out)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
    for (int k = 0; k < n; k++) {
        if (!names[k][0] && outputs) {
            /* count_values counted every output, named or not. */
            if (rt->n_vals >= p->n_max)
                return sleapc__fail(SLEAPC_ERR_FORMAT, "plan ONNX: %s: too many values", rt->path);
            rt->vals[rt->n_vals].name = "";
            (*out)[k] = rt->n_vals++;
            continue;
        }
        (*out)[k] = names[k][0] ? find(p, names[k]) : -1;
        if (names[k][0] && (*out)[k] < 0)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "plan ONNX: %s: \"%s\" is never defined",
                                rt->path, names[k]);
    }
    return SLEAPC_OK;
}

static sleapc_status bind_constant(planner *p, const sleapc_onnx_node *n)
{
    const sleapc_onnx_attr *a = sleapc__onnx_node_attr(n, "value");
    if (!a || a->type != SLEAPC_ONNX_ATTR_TENSOR || !a->t || n->n_outputs != 1 || !n->outputs[0][0])
        return unsupported(p->rt, n, "only a \"value\" tensor is");
    rt_value *v = &p->rt->vals[find(p, n->outputs[0])];
    sleapc__rt_view(&v->t, a->t);
    v->is_const = true;
    return SLEAPC_OK;
}

/* Room for one more (zeroed) step. */
static sleapc_status grow_steps(sleapc_onnxrt *rt, rt_block *b)
{
    if (b->n_steps == b->cap_steps) {
        int cap = b->cap_steps ? 2 * b->cap_steps : 64;
        rt_step *s = sleapc__realloc(b->steps, (size_t)cap * sizeof *s);
        if (!s)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: %s: out of memory", rt->path);
        b->steps = s;
        b->cap_steps = cap;
    }
    memset(&b->steps[b->n_steps], 0, sizeof b->steps[0]);
    return SLEAPC_OK;
}

/* The segment a network op joins (-1: none): all its non-constant inputs come
 * from one segment, or it is a Conv on a host value that opens a new one. */
static sleapc_status segment_for(planner *p, const sleapc_onnx_node *n, int node_index, int *seg)
{
    sleapc_onnxrt *rt = p->rt;
    *seg = -1;
    if (!is_net_op(n->op_type))
        return SLEAPC_OK;
    int s = -2, n_data = 0, data = -1;
    for (int k = 0; k < n->n_inputs; k++) {
        int v = n->inputs[k][0] ? find(p, n->inputs[k]) : -1;
        if (v < 0 || rt->vals[v].is_const)
            continue;
        n_data++;
        data = v;
        s = s == -2 ? p->seg_of[v] : s == p->seg_of[v] ? s : -1;
    }
    if (n_data > 0 && s >= 0) {
        *seg = s;
    } else if (strcmp(n->op_type, "Conv") == 0 && n_data == 1 && p->seg_of[data] < 0) {
        int w = n->n_inputs > 1 ? find(p, n->inputs[1]) : -1;
        const rt_tensor *wt = w >= 0 ? &rt->vals[w].t : NULL;
        if (!wt || !rt->vals[w].is_const || wt->ndim != 4 || wt->shape[1] < 1 || wt->shape[1] > 64)
            return unsupported(rt, n, "a network must start at a Conv with constant weights");
        rt_segment *segs = sleapc__realloc(rt->segs, (size_t)(rt->n_segs + 1) * sizeof *segs);
        if (!segs)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
        rt->segs = segs;
        memset(&segs[rt->n_segs], 0, sizeof *segs);
        segs[rt->n_segs].input = data;
        segs[rt->n_segs].g.in_channels = (int)wt->shape[1];
        *seg = rt->n_segs++;
        /* The step that runs the whole segment sits where it begins. */
        sleapc_status st = grow_steps(rt, &rt->main);
        if (st)
            return st;
        rt_step *step = &rt->main.steps[rt->main.n_steps++];
        step->kind = RT_STEP_SEGMENT;
        step->seg = *seg;
        step->n_in = 1;
        step->in = sleapc__malloc(sizeof *step->in);
        if (!step->in)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
        step->in[0] = data;
    }
    if (*seg >= 0) {
        rt_segment *sg = &rt->segs[*seg];
        int *nodes = sleapc__realloc(sg->nodes, (size_t)(sg->n_nodes + 1) * sizeof *nodes);
        if (!nodes)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
        sg->nodes = nodes;
        nodes[sg->n_nodes++] = node_index;
        for (int k = 0; k < n->n_outputs; k++)
            if (n->outputs[k][0])
                p->seg_of[find(p, n->outputs[k])] = *seg;
    }
    return SLEAPC_OK;
}

static sleapc_status plan_block(planner *p, const sleapc_onnx_graph *g, rt_block *b, bool main);

static sleapc_status plan_node(planner *p, const sleapc_onnx_node *n, int index, rt_block *b,
                               bool main)
{
    sleapc_onnxrt *rt = p->rt;
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
        return unsupported(rt, n, "a custom domain");
    if (strcmp(n->op_type, "Constant") == 0)
        return bind_constant(p, n);
    int seg = -1;
    sleapc_status st = main ? segment_for(p, n, index, &seg) : SLEAPC_OK;
    if (st || seg >= 0)
        return st;
    bool is_if = strcmp(n->op_type, "If") == 0;
    rt_op_fn fn = sleapc__rt_kernel(n->op_type);
    if (!fn && !is_if)
        return unsupported(rt, n, NULL);
    st = grow_steps(rt, b);
    if (st)
        return st;
    rt_step *step = &b->steps[b->n_steps++];
    step->kind = is_if ? RT_STEP_IF : RT_STEP_HOST;
    step->node = n;
    step->fn = fn;
    step->n_in = n->n_inputs;
    step->n_out = n->n_outputs;
    st = slots_of(p, n->inputs, n->n_inputs, false, &step->in);
    if (!st)
        st = slots_of(p, n->outputs, n->n_outputs, true, &step->out);
    if (st || !is_if)
        return st;
    const char *names[2] = {"then_branch", "else_branch"};
    for (int k = 0; k < 2 && !st; k++) {
        const sleapc_onnx_attr *a = sleapc__onnx_node_attr(n, names[k]);
        if (!a || !a->g || a->g->n_outputs != n->n_outputs || n->n_inputs != 1)
            return unsupported(rt, n, "malformed branches");
        step->branch[k] = sleapc__calloc(1, sizeof *step->branch[k]);
        if (!step->branch[k])
            return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
        st = plan_block(p, a->g, step->branch[k], false);
        if (st)
            return st;
        rt_block *br = step->branch[k];
        br->n_outputs = a->g->n_outputs;
        br->outputs = sleapc__malloc((size_t)(br->n_outputs ? br->n_outputs : 1) * sizeof(int));
        if (!br->outputs)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
        for (int o = 0; o < br->n_outputs; o++)
            if ((br->outputs[o] = find(p, a->g->outputs[o].name)) < 0)
                return sleapc__fail(SLEAPC_ERR_FORMAT,
                                    "plan ONNX: %s: branch output \"%s\" is never defined",
                                    rt->path, a->g->outputs[o].name);
    }
    return st;
}

static sleapc_status plan_block(planner *p, const sleapc_onnx_graph *g, rt_block *b, bool main)
{
    for (int i = 0; i < g->n_nodes; i++) {
        sleapc_status st = plan_node(p, &g->nodes[i], i, b, main);
        if (st)
            return st;
    }
    return SLEAPC_OK;
}

/* Every value step reads or makes counts as used at main-block step `at`;
 * so do those of its branches: a branch reads outer values, and defines and
 * yields its own, only while its If runs. */
static void mark_uses(planner *p, const rt_step *step, int at)
{
    const rt_segment *seg = step->kind == RT_STEP_SEGMENT ? &p->rt->segs[step->seg] : NULL;
    for (int k = 0; k < step->n_in; k++)
        if (step->in[k] >= 0)
            p->last[step->in[k]] = at;
    /* A segment's outputs are its step's (build_segments copies them later). */
    int n_out = seg ? seg->n_outputs : step->n_out;
    const int *out = seg ? seg->outputs : step->out;
    for (int k = 0; k < n_out; k++)
        if (out[k] >= 0)
            p->last[out[k]] = at;
    for (int k = 0; k < 2; k++) {
        const rt_block *b = step->branch[k];
        for (int s = 0; b && s < b->n_steps; s++)
            mark_uses(p, &b->steps[s], at);
        for (int o = 0; b && o < b->n_outputs; o++)
            p->last[b->outputs[o]] = at;
    }
}

/* Liveness: each value's storage goes back to the pool after the main-block
 * step that last uses it (steps run in order, each once), except graph
 * outputs (read after the run) and constants (not the run's storage).
 * Values no step uses (inside a network) are never set. */
static sleapc_status plan_releases(planner *p)
{
    sleapc_onnxrt *rt = p->rt;
    rt_block *m = &rt->main;
    for (int v = 0; v < rt->n_vals; v++)
        p->last[v] = -1;
    for (int s = 0; s < m->n_steps; s++)
        mark_uses(p, &m->steps[s], s);
    for (int v = 0; v < rt->n_vals; v++)
        if (p->last[v] >= 0 && !p->pinned[v] && !rt->vals[v].is_const)
            m->steps[p->last[v]].n_release++;
    for (int s = 0; s < m->n_steps; s++) {
        rt_step *step = &m->steps[s];
        step->release =
            sleapc__malloc((size_t)(step->n_release ? step->n_release : 1) * sizeof(int));
        if (!step->release)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
        step->n_release = 0;
    }
    for (int v = 0; v < rt->n_vals; v++)
        if (p->last[v] >= 0 && !p->pinned[v] && !rt->vals[v].is_const) {
            rt_step *step = &m->steps[p->last[v]];
            step->release[step->n_release++] = v;
        }
    return SLEAPC_OK;
}

/* A segment value read outside the segment becomes an IR output. */
static sleapc_status export_reads(planner *p, const rt_block *b)
{
    sleapc_onnxrt *rt = p->rt;
    for (int s = 0; s < b->n_steps; s++) {
        const rt_step *step = &b->steps[s];
        for (int k = 0; k < step->n_in; k++) {
            int v = step->in[k];
            int sg = v >= 0 ? p->seg_of[v] : -1;
            if (sg < 0 || (step->kind == RT_STEP_SEGMENT && step->seg == sg))
                continue;
            rt_segment *seg = &rt->segs[sg];
            bool have = false;
            for (int o = 0; o < seg->n_outputs && !have; o++)
                have = seg->outputs[o] == v;
            if (have)
                continue;
            if (seg->n_outputs == SLEAPC_GRAPH_MAX_OUTPUTS)
                return sleapc__fail(
                    SLEAPC_ERR_UNSUPPORTED,
                    "plan ONNX: %s: more than %d network values are read outside it", rt->path,
                    SLEAPC_GRAPH_MAX_OUTPUTS);
            seg->outputs[seg->n_outputs++] = v;
        }
        for (int k = 0; k < 2; k++)
            if (step->branch[k]) {
                sleapc_status st = export_reads(p, step->branch[k]);
                if (st)
                    return st;
            }
    }
    return SLEAPC_OK;
}

/* Import each segment into the IR and give it a backend. */
static sleapc_status build_segments(planner *p, const char *backend, int n_threads)
{
    sleapc_onnxrt *rt = p->rt;
    for (int s = 0; s < rt->n_segs; s++) {
        rt_segment *seg = &rt->segs[s];
        const char *names[SLEAPC_GRAPH_MAX_OUTPUTS];
        for (int o = 0; o < seg->n_outputs; o++)
            names[o] = rt->vals[seg->outputs[o]].name;
        sleapc_onnx_segment spec = {.input = rt->vals[seg->input].name,
                                    .in_channels = seg->g.in_channels,
                                    .nodes = seg->nodes,
                                    .n_nodes = seg->n_nodes,
                                    .outputs = names,
                                    .n_outputs = seg->n_outputs};
        sleapc_status st = sleapc__graph_from_onnx_segment(rt->om, &spec, &seg->w, &seg->g);
        seg->g.input_as_is = p->as_is;
        sleapc_backend_opts opts = {.n_threads = n_threads, .device = p->device};
        if (!st)
            st = sleapc__backend_create(backend, &seg->g, &opts, &seg->be);
        if (st)
            return sleapc__wrap(st, "plan ONNX: network %d of %s", s, rt->path);
        /* Its outputs are its step's outputs. */
        for (int i = 0; i < rt->main.n_steps; i++) {
            rt_step *step = &rt->main.steps[i];
            if (step->kind != RT_STEP_SEGMENT || step->seg != s)
                continue;
            step->n_out = seg->n_outputs;
            step->out = sleapc__malloc((size_t)(seg->n_outputs ? seg->n_outputs : 1) * sizeof(int));
            if (!step->out)
                return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
            memcpy(step->out, seg->outputs, (size_t)seg->n_outputs * sizeof(int));
        }
    }
    return SLEAPC_OK;
}

static sleapc_status plan(planner *p, const char *backend, int n_threads)
{
    sleapc_onnxrt *rt = p->rt;
    const sleapc_onnx_graph *g = &rt->om->graph;
    sleapc_status st = declare_graph(p, g, 0);
    /* The one graph input that is not an initializer. */
    int n_in = 0;
    for (int i = 0; !st && i < g->n_inputs; i++) {
        if (sleapc__onnx_initializer(g, g->inputs[i].name))
            continue;
        n_in++;
        if (!g->inputs[i].name[0])
            st = sleapc__fail(SLEAPC_ERR_FORMAT, "plan ONNX: %s: a graph input has no name",
                              rt->path);
        else
            st = declare(p, g->inputs[i].name);
        rt->input = rt->n_vals - 1;
    }
    if (!st && n_in != 1)
        st = sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "plan ONNX: %s: %d graph inputs (one image)",
                          rt->path, n_in);
    if (!st)
        st = plan_block(p, g, &rt->main, true);
    if (st)
        return st;
    if (g->n_outputs > SLEAPC_TENSOR_MAP_CAP)
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "plan ONNX: %s: %d graph outputs (at most %d)",
                            rt->path, g->n_outputs, SLEAPC_TENSOR_MAP_CAP);
    rt->n_outputs = g->n_outputs;
    rt->outputs = sleapc__malloc((size_t)(g->n_outputs ? g->n_outputs : 1) * sizeof(int));
    if (!rt->outputs)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
    for (int i = 0; i < g->n_outputs; i++) {
        int v = find(p, g->outputs[i].name);
        if (v < 0)
            return sleapc__fail(SLEAPC_ERR_FORMAT, "plan ONNX: %s: output \"%s\" is never defined",
                                rt->path, g->outputs[i].name);
        rt->outputs[i] = v;
        p->pinned[v] = true;
    }
    for (int s = 0; s < rt->n_segs; s++) {
        rt->segs[s].outputs = sleapc__malloc(SLEAPC_GRAPH_MAX_OUTPUTS * sizeof(int));
        if (!rt->segs[s].outputs)
            return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
    }
    /* Graph outputs made inside a network are read "outside" it too. */
    rt_step out_reader = {.kind = RT_STEP_HOST, .n_in = rt->n_outputs, .in = rt->outputs};
    rt_block readers = {.n_steps = 1, .steps = &out_reader};
    st = export_reads(p, &rt->main);
    if (!st)
        st = export_reads(p, &readers);
    if (st)
        return st;
    st = plan_releases(p);
    return st ? st : build_segments(p, backend, n_threads);
}

sleapc_status sleapc__onnxrt_create(const sleapc_onnx_model *om, const char *backend, int n_threads,
                                    sleapc_onnxrt **out)
{
    return sleapc__onnxrt_create_on(om, backend, n_threads, NULL, false, out);
}

sleapc_status sleapc__onnxrt_create_on(const sleapc_onnx_model *om, const char *backend,
                                       int n_threads, const char *device, bool as_is,
                                       sleapc_onnxrt **out)
{
    *out = NULL;
    sleapc_onnxrt *rt = sleapc__calloc(1, sizeof *rt);
    if (!rt)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
    rt->om = om;
    rt->path = om->path ? om->path : "model";
    rt->input = -1;
    planner p = {.rt = rt, .device = device, .as_is = as_is};
    size_t n = count_values(&om->graph, 0) + 1;
    size_t cap = 16;
    while (cap < 2 * n && cap < ((size_t)1 << 30))
        cap *= 2;
    sleapc_status st = SLEAPC_OK;
    if (n > (1u << 26))
        st = sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "plan ONNX: %s: %zu values", rt->path, n);
    if (!st) {
        p.cap = (int)cap;
        p.n_max = (int)n;
        p.slots = sleapc__malloc(cap * sizeof *p.slots);
        rt->vals = sleapc__calloc(n, sizeof *rt->vals);
        p.seg_of = sleapc__malloc(n * sizeof *p.seg_of);
        p.pinned = sleapc__calloc(n, sizeof *p.pinned);
        p.last = sleapc__malloc(n * sizeof *p.last);
        if (!p.slots || !rt->vals || !p.seg_of || !p.pinned || !p.last)
            st = sleapc__fail(SLEAPC_ERR_NOMEM, "plan ONNX: out of memory");
    }
    if (!st) {
        memset(p.slots, 0xff, cap * sizeof *p.slots);
        memset(p.seg_of, 0xff, n * sizeof *p.seg_of);
        st = plan(&p, backend, n_threads);
    }
    sleapc__free(p.slots);
    sleapc__free(p.seg_of);
    sleapc__free(p.pinned);
    sleapc__free(p.last);
    if (st) {
        sleapc__onnxrt_destroy(rt);
        return st;
    }
    *out = rt;
    return SLEAPC_OK;
}

int sleapc__onnxrt_n_segments(const sleapc_onnxrt *rt)
{
    return rt ? rt->n_segs : 0;
}

void sleapc__rt_block_free(rt_block *b)
{
    for (int s = 0; b && s < b->n_steps; s++) {
        rt_step *step = &b->steps[s];
        sleapc__free(step->in);
        sleapc__free(step->out);
        sleapc__free(step->release);
        for (int k = 0; k < 2; k++) {
            sleapc__rt_block_free(step->branch[k]);
            sleapc__free(step->branch[k]);
        }
    }
    if (b) {
        sleapc__free(b->steps);
        sleapc__free(b->outputs);
        memset(b, 0, sizeof *b);
    }
}

void sleapc__onnxrt_destroy(sleapc_onnxrt *rt)
{
    if (!rt)
        return;
    for (int v = 0; v < rt->n_vals; v++)
        sleapc__rt_free(&rt->vals[v].t);
    sleapc__free(rt->vals);
    sleapc__rt_pool_free(&rt->pool);
    sleapc__aligned_free(rt->scratch.data);
    sleapc__rt_block_free(&rt->main);
    for (int s = 0; s < rt->n_segs; s++) {
        sleapc__backend_destroy(rt->segs[s].be);
        sleapc__graph_clear(&rt->segs[s].g);
        sleapc__weights_clear(&rt->segs[s].w);
        sleapc__free(rt->segs[s].outputs);
        sleapc__free(rt->segs[s].nodes);
    }
    sleapc__free(rt->segs);
    sleapc__free(rt->outputs);
    sleapc__free(rt);
}
