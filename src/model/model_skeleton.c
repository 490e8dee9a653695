/* A model's skeleton as instances use it: the config's skeleton, else the
 * heads' part names. */
#include "model/model.h"

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
