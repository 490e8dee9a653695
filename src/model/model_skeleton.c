/* A model's skeleton as instances use it: the config's skeleton, else the
 * heads' part names. */
#include "model/model_impl.h"

const char *sleapc__model_skeleton_name(const sleapc_model *m)
{
    return m->cfg.skeleton.name ? m->cfg.skeleton.name : "";
}

int sleapc__model_n_nodes(const sleapc_model *m)
{
    return m->cfg.skeleton.n_nodes ? m->cfg.skeleton.n_nodes : m->cfg.n_part_names;
}

const char *sleapc__model_node_name(const sleapc_model *m, int i)
{
    if (i < 0 || i >= sleapc__model_n_nodes(m))
        return NULL;
    return m->cfg.skeleton.n_nodes ? m->cfg.skeleton.node_names[i] : m->cfg.part_names[i];
}

int sleapc__model_n_edges(const sleapc_model *m)
{
    return m->cfg.skeleton.n_edges;
}

void sleapc__model_edge(const sleapc_model *m, int i, int *src, int *dst)
{
    int s = -1, d = -1;
    if (m && i >= 0 && i < m->cfg.skeleton.n_edges) {
        s = m->cfg.skeleton.edges[i][0];
        d = m->cfg.skeleton.edges[i][1];
    }
    if (src)
        *src = s;
    if (dst)
        *dst = d;
}

static bool is_multiclass(const sleapc_model *m)
{
    sleapc_model_type t = m->cfg.model_type;
    return t == SLEAPC_MODEL_TYPE_MULTI_CLASS_BOTTOMUP ||
           t == SLEAPC_MODEL_TYPE_MULTI_CLASS_TOPDOWN;
}

void sleapc__model_skeleton(const sleapc_model *m, sleapc_skeleton *out)
{
    /* sleap-nn's one-node skeleton of a centroid model without node names. */
    static const char *const centroid[] = {"centroid"};
    const sleapc_skeleton_config *sk = &m->cfg.skeleton;
    *out = (sleapc_skeleton){.name = sleapc__model_skeleton_name(m)};
    out->n_nodes = sleapc__model_n_nodes(m);
    if (m->cfg.model_type == SLEAPC_MODEL_TYPE_CENTROID && out->n_nodes < 1)
        out->n_nodes = 1;
    if (sk->n_nodes)
        out->node_names = (const char *const *)sk->node_names;
    else if (m->cfg.part_names && m->cfg.n_part_names == out->n_nodes)
        out->node_names = (const char *const *)m->cfg.part_names;
    else if (out->n_nodes == 1)
        out->node_names = centroid;
    else
        out->n_nodes = 0;
    out->n_edges = sk->n_edges;
    out->edges = sk->n_edges ? &sk->edges[0][0] : NULL;
    out->n_symmetries = sk->n_symmetries;
    out->symmetries = sk->n_symmetries ? &sk->symmetries[0][0] : NULL;
    if (is_multiclass(m)) {
        if (m->cfg.n_classes > 0) {
            out->n_classes = m->cfg.n_classes;
            out->class_names = (const char *const *)m->cfg.classes;
        } else if (m->has_export_meta) {
            out->n_classes = m->export_meta.n_classes;
            out->class_names = (const char *const *)m->export_meta.class_names;
        }
    }
}
