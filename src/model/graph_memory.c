/* The memory a forward pass needs at least: activations by liveness, as a
 * backend that frees each value after its last reader holds them. */
#include <stdbool.h>

#include "core/alloc.h"
#include "core/error.h"
#include "model/graph.h"

static double node_bytes(const int64_t s[4])
{
    double n = (double)s[0] * (double)s[1];
    if (s[2] > 0)
        n *= (double)s[2] * (double)s[3];
    return n * (double)sizeof(float);
}

int64_t sleapc__graph_peak_bytes(const sleapc_graph *g, int64_t b, int64_t h, int64_t w)
{
    int n = g->n_nodes;
    int64_t(*shapes)[4] = sleapc__malloc((size_t)(n > 0 ? n : 1) * sizeof *shapes);
    int *last_use = sleapc__malloc((size_t)(n > 0 ? n : 1) * sizeof *last_use);
    double peak = -1.0;
    if (!shapes || !last_use) {
        sleapc__fail(SLEAPC_ERR_NOMEM, "out of memory");
        peak = -2.0;
        goto done;
    }
    if (sleapc__graph_infer_shapes(g, b, h, w, shapes) != SLEAPC_OK)
        goto done;
    for (int i = 0; i < n; i++)
        last_use[i] = i;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < g->nodes[i].n_inputs; k++)
            if (last_use[g->nodes[i].inputs[k]] < i)
                last_use[g->nodes[i].inputs[k]] = i;
    for (int o = 0; o < g->n_outputs; o++)
        last_use[g->outputs[o].node] = n; /* handed to the caller */
    double live = 0.0;
    peak = 0.0;
    for (int i = 0; i < n; i++) {
        /* A node's output is written while its inputs are still held. */
        live += node_bytes(shapes[i]);
        if (live > peak)
            peak = live;
        for (int k = 0; k < g->nodes[i].n_inputs; k++) {
            int in = g->nodes[i].inputs[k];
            bool first = true; /* an input read twice is freed once */
            for (int j = 0; j < k; j++)
                first = first && g->nodes[i].inputs[j] != in;
            if (first && last_use[in] == i)
                live -= node_bytes(shapes[in]);
        }
        if (last_use[i] == i)
            live -= node_bytes(shapes[i]);
    }
done:
    sleapc__free(shapes);
    sleapc__free(last_use);
    if (peak < 0.0)
        return (int64_t)peak;
    return peak >= 9.0e18 ? INT64_MAX : (int64_t)peak;
}
