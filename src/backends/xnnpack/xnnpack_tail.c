/* The re-ID embedding head's tail, run on the host after the XNNPACK runtime.
 *
 * This XNNPACK (early 2022) has no power operator, so GeM's
 * mean(max(x, eps)^p)^(1/p) with a learned, non-integer p cannot be a
 * subgraph node. The graph is cut instead: XNNPACK runs every node before
 * the first GLOBAL_GEMPOOL / L2NORM and writes the one map they start from
 * (the "cut", NHWC) as its external output; the nodes from there on (GeM or
 * mean pool, the dense layers, the head's linear, the L2 norm) are a few
 * hundred values per crop and run here in plain C, in float32, with the
 * sums taken as the native backend takes them. */
#include <math.h>
#include <string.h>

#include "backends/xnnpack/xnnpack_impl.h"
#include "core/alloc.h"
#include "core/error.h"

#define GEM_P_MIN 1.0f /* sleap-nn's GeM clamps p to [1, 6] */
#define GEM_P_MAX 6.0f

static bool tail_op(const sleapc_node *n)
{
    return n->op == SLEAPC_OP_GLOBAL_GEMPOOL || n->op == SLEAPC_OP_L2NORM ||
           (n->op == SLEAPC_OP_LINEAR && (n->act == SLEAPC_ACT_NONE || n->act == SLEAPC_ACT_RELU));
}

sleapc_status sleapc__xnnpack_tail_find(const sleapc_graph *g, xnnpack_tail *out)
{
    out->start = g->n_nodes;
    out->cut = -1;
    for (int i = 0; i < g->n_nodes && out->start == g->n_nodes; i++)
        if (g->nodes[i].op == SLEAPC_OP_GLOBAL_GEMPOOL || g->nodes[i].op == SLEAPC_OP_L2NORM)
            out->start = i;
    if (out->start == g->n_nodes)
        return SLEAPC_OK;
    for (int i = out->start; i < g->n_nodes; i++) {
        const sleapc_node *n = &g->nodes[i];
        if (!tail_op(n))
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "node %s: op %s after a gempool / l2norm is not supported", n->name,
                                sleapc__op_name(n->op));
        if (n->op == SLEAPC_OP_LINEAR && (!n->weight || n->c_in < 1 || n->c_out < 1))
            return sleapc__fail(SLEAPC_ERR_FORMAT, "node %s: linear without weights or channels",
                                n->name);
        int src = n->inputs[0];
        if (n->n_inputs != 1 || (src < out->start && out->cut >= 0 && src != out->cut))
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "node %s: the host tail reads one map of the network", n->name);
        if (src < out->start)
            out->cut = src;
    }
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o].node < out->start)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "output %s: a network output beside the host tail",
                                g->outputs[o].name);
    return SLEAPC_OK;
}

sleapc_status sleapc__xnnpack_tail_plan(const sleapc_graph *g, const xnnpack_tail *t,
                                        const int64_t (*shapes)[4], float **buf, int64_t *offsets)
{
    int64_t total = 0;
    const int64_t *sc = shapes[t->cut];
    for (int i = t->start; i < g->n_nodes; i++) {
        const sleapc_node *n = &g->nodes[i];
        /* Only a pool reads a map; the others read (B, C) vectors. */
        if (n->op != SLEAPC_OP_GLOBAL_GEMPOOL && n->inputs[0] == t->cut && sc[2] * sc[3] > 1)
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "node %s: %s of a map", n->name,
                                sleapc__op_name(n->op));
        if (n->op == SLEAPC_OP_GLOBAL_GEMPOOL && !sc[2])
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "node %s: pool of a vector", n->name);
        offsets[i] = total;
        total += shapes[i][0] * shapes[i][1];
    }
    *buf = sleapc__aligned_alloc((size_t)(total > 0 ? total : 1) * sizeof(float));
    return *buf ? SLEAPC_OK : sleapc__fail(SLEAPC_ERR_NOMEM, "host tail: out of memory");
}

/* (B, H, W, C) -> (B, C): the native backend's GeM, channel by channel. */
static void gempool_nhwc(const float *src, int64_t b, int64_t c, int64_t plane, const float *p,
                         float eps, float *dst)
{
    float e = 1.0f;
    if (p)
        e = *p < GEM_P_MIN ? GEM_P_MIN : *p > GEM_P_MAX ? GEM_P_MAX : *p;
    for (int64_t bi = 0; bi < b; bi++)
        for (int64_t k = 0; k < c; k++) {
            const float *s = src + bi * plane * c + k;
            double sum = 0.0;
            for (int64_t i = 0; i < plane; i++) {
                float v = s[i * c];
                sum += p ? (double)powf(v < eps ? eps : v, e) : (double)v;
            }
            float mean = plane > 0 ? (float)(sum / (double)plane) : 0.0f;
            dst[bi * c + k] = p ? powf(mean, 1.0f / e) : mean;
        }
}

static void linear(const float *src, int64_t b, const sleapc_node *n, float *dst)
{
    for (int64_t bi = 0; bi < b; bi++) {
        const float *x = src + bi * n->c_in;
        for (int64_t o = 0; o < n->c_out; o++) {
            const float *wr = n->weight + o * n->c_in;
            float acc = n->bias ? n->bias[o] : 0.0f;
            for (int64_t i = 0; i < n->c_in; i++)
                acc += wr[i] * x[i];
            dst[bi * n->c_out + o] = n->act == SLEAPC_ACT_RELU && !(acc > 0.0f) ? 0.0f : acc;
        }
    }
}

/* F.normalize: x / max(||x||_2, eps) per row. */
static void l2norm(const float *src, int64_t b, int64_t c, float eps, float *dst)
{
    for (int64_t r = 0; r < b; r++) {
        const float *v = src + r * c;
        double ss = 0.0;
        for (int64_t i = 0; i < c; i++)
            ss += (double)v[i] * v[i];
        float norm = (float)sqrt(ss);
        if (norm < eps)
            norm = eps;
        for (int64_t i = 0; i < c; i++)
            dst[r * c + i] = v[i] / norm;
    }
}

void sleapc__xnnpack_tail_run(const sleapc_graph *g, const xnnpack_tail *t,
                              const int64_t (*shapes)[4], const float *cut_nhwc, float *buf,
                              const int64_t *offsets)
{
    for (int i = t->start; i < g->n_nodes; i++) {
        const sleapc_node *n = &g->nodes[i];
        int src = n->inputs[0];
        const float *x = src == t->cut ? cut_nhwc : buf + offsets[src];
        const int64_t *si = shapes[src];
        float *y = buf + offsets[i];
        if (n->op == SLEAPC_OP_GLOBAL_GEMPOOL)
            gempool_nhwc(x, si[0], si[1], si[2] * si[3], n->weight, n->eps, y);
        else if (n->op == SLEAPC_OP_LINEAR)
            linear(x, si[0], n, y);
        else
            l2norm(x, si[0], si[1], n->eps, y);
    }
}
