/* Kept in its own file so that every backend runs the same compiled code,
 * whatever its own files' flags. */
#include "backends/sigmoid.h"

#include <math.h>

void sleapc__sigmoid_apply(float *x, int64_t n)
{
    /* expf(-x) overflows to inf for x < -88, which gives the right 0. For
     * x >= 24 ln 2 (about 16.6) it is at most 2^-24, half an ulp of 1, so
     * the sum rounds to 1 and the result is exactly 1. */
    for (int64_t i = 0; i < n; i++)
        x[i] = 1.0f / (1.0f + expf(-x[i]));
}

bool sleapc__sigmoid_on_host(const sleapc_graph *g, int i)
{
    if (g->nodes[i].act != SLEAPC_ACT_SIGMOID)
        return false;
    for (int j = i + 1; j < g->n_nodes; j++)
        for (int k = 0; k < g->nodes[j].n_inputs; k++)
            if (g->nodes[j].inputs[k] == i)
                return false;
    return true;
}
