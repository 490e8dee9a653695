/* Lookups on a parsed ONNX model, and freeing it. */
#include <string.h>

#include "core/alloc.h"
#include "io/onnx/onnx_impl.h"

void sleapc__onnx_tensor_clear(sleapc_onnx_tensor *t)
{
    if (!t)
        return;
    sleapc__free(t->name);
    sleapc__aligned_free(t->data);
    memset(t, 0, sizeof *t);
}

static void free_strings(char **s, int n)
{
    for (int i = 0; s && i < n; i++)
        sleapc__free(s[i]);
    sleapc__free(s);
}

static void attr_clear(sleapc_onnx_attr *a)
{
    sleapc__free(a->name);
    sleapc__free(a->s);
    sleapc__free(a->floats);
    sleapc__free(a->ints);
    if (a->t) {
        sleapc__onnx_tensor_clear(a->t);
        sleapc__free(a->t);
    }
    if (a->g) {
        sleapc__onnx_graph_clear(a->g);
        sleapc__free(a->g);
    }
    memset(a, 0, sizeof *a);
}

static void node_clear(sleapc_onnx_node *n)
{
    sleapc__free(n->name);
    sleapc__free(n->op_type);
    sleapc__free(n->domain);
    free_strings(n->inputs, n->n_inputs);
    free_strings(n->outputs, n->n_outputs);
    for (int i = 0; n->attrs && i < n->n_attrs; i++)
        attr_clear(&n->attrs[i]);
    sleapc__free(n->attrs);
    memset(n, 0, sizeof *n);
}

void sleapc__onnx_graph_clear(sleapc_onnx_graph *g)
{
    if (!g)
        return;
    sleapc__free(g->name);
    for (int i = 0; g->nodes && i < g->n_nodes; i++)
        node_clear(&g->nodes[i]);
    sleapc__free(g->nodes);
    for (int i = 0; g->initializers && i < g->n_initializers; i++)
        sleapc__onnx_tensor_clear(&g->initializers[i]);
    sleapc__free(g->initializers);
    for (int i = 0; g->inputs && i < g->n_inputs; i++)
        sleapc__free(g->inputs[i].name);
    sleapc__free(g->inputs);
    for (int i = 0; g->outputs && i < g->n_outputs; i++)
        sleapc__free(g->outputs[i].name);
    sleapc__free(g->outputs);
    memset(g, 0, sizeof *g);
}

void sleapc__onnx_destroy(sleapc_onnx_model *m)
{
    if (!m)
        return;
    sleapc__onnx_graph_clear(&m->graph);
    free_strings(m->prop_keys, m->n_props);
    free_strings(m->prop_values, m->n_props);
    sleapc__free(m->path);
    sleapc__free(m->producer);
    sleapc__free(m);
}

const char *sleapc__onnx_metadata(const sleapc_onnx_model *m, const char *key)
{
    for (int i = 0; i < m->n_props; i++)
        if (strcmp(m->prop_keys[i], key) == 0)
            return m->prop_values[i];
    return NULL;
}

const sleapc_onnx_attr *sleapc__onnx_node_attr(const sleapc_onnx_node *n, const char *name)
{
    for (int i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0)
            return &n->attrs[i];
    return NULL;
}

const sleapc_onnx_tensor *sleapc__onnx_initializer(const sleapc_onnx_graph *g, const char *name)
{
    for (int i = 0; i < g->n_initializers; i++)
        if (strcmp(g->initializers[i].name, name) == 0)
            return &g->initializers[i];
    return NULL;
}
