#include "backends/native/native_bf16.h"

#include "backends/bf16_policy.h"
#include "core/alloc.h"

typedef struct round_job {
    float *x;
    int64_t n;
    void (*fn)(float *x, int64_t n);
} round_job;

#define ROUND_CHUNK ((int64_t)1 << 16)

static void round_task(void *ctx, int64_t t)
{
    const round_job *j = ctx;
    int64_t i0 = t * ROUND_CHUNK;
    j->fn(j->x + i0, j->n - i0 < ROUND_CHUNK ? j->n - i0 : ROUND_CHUNK);
}

static void round_floats(float *x, int64_t n)
{
    sleapc__bf16_round_array(x, n);
}

void sleapc__native_bf16_round(sleapc_threadpool *tp, const native_ukernels *uk, float *x,
                               int64_t n)
{
    round_job j = {.x = x, .n = n, .fn = uk && uk->round_floats ? uk->round_floats : round_floats};
    sleapc__threadpool_run(tp, round_task, &j, (n + ROUND_CHUNK - 1) / ROUND_CHUNK);
}

static bool commutes_with_rounding(const sleapc_graph *g, int i)
{
    sleapc_op op = g->nodes[i].op;
    return op == SLEAPC_OP_CONCAT || op == SLEAPC_OP_MAXPOOL2D;
}

void sleapc__native_bf16_mark_lazy(const sleapc_graph *g, const bool *hw16, bool *lazy)
{
    for (int i = 0; i < g->n_nodes; i++)
        lazy[i] = false;
    bool *out = sleapc__calloc((size_t)g->n_nodes, sizeof *out);
    if (!out)
        return;
    for (int o = 0; o < g->n_outputs; o++)
        out[g->outputs[o].node] = true;
    /* Nodes come in topological order: readers are decided first. */
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        bool ok = !out[i], read = false;
        for (int r = i + 1; r < g->n_nodes && ok; r++)
            for (int k = 0; k < g->nodes[r].n_inputs; k++) {
                if (g->nodes[r].inputs[k] != i)
                    continue;
                read = true;
                if (!hw16[r] && !(commutes_with_rounding(g, r) && lazy[r]))
                    ok = false;
            }
        lazy[i] = ok && read;
    }
    sleapc__free(out);
}
