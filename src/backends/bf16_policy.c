#include "backends/bf16_policy.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/settings.h"

float sleapc__bf16_round(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u) {
        /* inf stays inf; a NaN stays a (quiet) NaN */
        if (u & 0x007fffffu)
            u |= 0x00400000u;
    } else {
        u += 0x7fffu + ((u >> 16) & 1u);
    }
    u &= 0xffff0000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

void sleapc__bf16_round_array(float *x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        x[k] = sleapc__bf16_round(x[k]);
}

unsigned sleapc__bf16_keep_default(void)
{
    unsigned long v;
    if (sleapc__settings_bf16_keep(&v) && v <= SLEAPC_BF16_KEEP_ALL)
        return (unsigned)v;
    return SLEAPC_BF16_KEEP_DEFAULT;
}

unsigned sleapc__bf16_keep_or_default(unsigned keep)
{
    return keep ? keep : sleapc__bf16_keep_default();
}

static bool is_conv(const sleapc_node *n)
{
    return n->op == SLEAPC_OP_CONV2D || n->op == SLEAPC_OP_CONV_TRANSPOSE2D;
}

static bool is_output(const sleapc_graph *g, int i)
{
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o].node == i)
            return true;
    return false;
}

/* Node j reads a float32 source as bf16. */
static bool reads_as_bf16(const sleapc_bf16_plan *p, const sleapc_graph *g, int j)
{
    return p->compute[j] || (g->nodes[j].op == SLEAPC_OP_CONCAT && p->value[j]);
}

void sleapc__bf16_plan_free(sleapc_bf16_plan *p)
{
    if (!p)
        return;
    sleapc__free(p->compute);
    sleapc__free(p->value);
    sleapc__free(p->rounded);
    memset(p, 0, sizeof *p);
}

sleapc_status sleapc__bf16_plan_make(const sleapc_graph *g, unsigned keep, sleapc_bf16_plan *out)
{
    int n = g->n_nodes;
    memset(out, 0, sizeof *out);
    out->n = n;
    out->compute = sleapc__calloc((size_t)n + 1, sizeof *out->compute);
    out->value = sleapc__calloc((size_t)n + 1, sizeof *out->value);
    out->rounded = sleapc__calloc((size_t)n + 1, sizeof *out->rounded);
    bool *fp32 = sleapc__calloc((size_t)n + 1, sizeof *fp32);
    if (!out->compute || !out->value || !out->rounded || !fp32) {
        sleapc__free(fp32);
        sleapc__bf16_plan_free(out);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "bf16 plan: out of memory");
    }
    bool decoder = false;
    for (int i = 0; i < n; i++) {
        const sleapc_node *nd = &g->nodes[i];
        decoder = decoder || nd->op == SLEAPC_OP_UPSAMPLE2X ||
                  nd->op == SLEAPC_OP_CONV_TRANSPOSE2D || nd->op == SLEAPC_OP_RESIZE_LIKE;
        if (nd->op > SLEAPC_OP_LINEAR) {
            sleapc__free(fp32);
            sleapc__bf16_plan_free(out);
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "bf16: node %s (%s): mixed precision covers UNet graphs only",
                                nd->name, sleapc__op_name(nd->op));
        }
        if (!is_conv(nd))
            continue;
        if ((keep & SLEAPC_BF16_KEEP_FIRST) && nd->n_inputs > 0 && nd->inputs[0] == 0)
            fp32[i] = true;
        if ((keep & SLEAPC_BF16_KEEP_HEADS) && is_output(g, i))
            fp32[i] = true;
        if ((keep & SLEAPC_BF16_KEEP_DECODER) && decoder)
            fp32[i] = true;
    }
    /* Each head's last block: the chain of plain convolutions feeding it,
     * back to the upsampling or concat that starts the block. */
    if (keep & SLEAPC_BF16_KEEP_LAST)
        for (int o = 0; o < g->n_outputs; o++) {
            const sleapc_node *h = &g->nodes[g->outputs[o].node];
            int p = is_conv(h) && h->n_inputs ? h->inputs[0] : -1;
            while (p > 0 && g->nodes[p].op == SLEAPC_OP_CONV2D && !fp32[p]) {
                fp32[p] = true;
                p = g->nodes[p].inputs[0];
            }
        }
    for (int i = 0; i < n; i++) {
        const sleapc_node *nd = &g->nodes[i];
        switch (nd->op) {
        case SLEAPC_OP_CONV2D:
        case SLEAPC_OP_CONV_TRANSPOSE2D:
            out->compute[i] = !fp32[i];
            out->value[i] = out->compute[i] && !is_output(g, i);
            break;
        case SLEAPC_OP_MAXPOOL2D:
        case SLEAPC_OP_UPSAMPLE2X:
        case SLEAPC_OP_RESIZE_LIKE:
        case SLEAPC_OP_GLOBAL_MAXPOOL:
            out->value[i] = out->value[nd->inputs[0]];
            break;
        default:
            break;
        }
    }
    /* A concat is bf16 when its sources are, or when a reader computes in
     * bf16 anyway (then its float32 sources are rounded once, here). Readers
     * come after the concat, so this is decided after the pass above; a
     * pool or resize after a concat takes the concat's type. */
    for (int i = 0; i < n; i++) {
        const sleapc_node *nd = &g->nodes[i];
        if (nd->op == SLEAPC_OP_CONCAT) {
            bool all = nd->n_inputs > 0, any_reader = false;
            for (int k = 0; k < nd->n_inputs; k++)
                all = all && out->value[nd->inputs[k]];
            for (int j = i + 1; j < n; j++)
                for (int k = 0; k < g->nodes[j].n_inputs; k++)
                    if (g->nodes[j].inputs[k] == i && out->compute[j])
                        any_reader = true;
            out->value[i] = all || any_reader;
        } else if (!is_conv(nd) && nd->n_inputs > 0 && nd->op != SLEAPC_OP_LINEAR) {
            out->value[i] = out->value[nd->inputs[0]];
        }
    }
    for (int i = 0; i < n; i++) {
        if (out->value[i]) {
            out->rounded[i] = true;
            continue;
        }
        int readers = 0, converting = 0;
        for (int j = i + 1; j < n; j++)
            for (int k = 0; k < g->nodes[j].n_inputs; k++)
                if (g->nodes[j].inputs[k] == i) {
                    readers++;
                    converting += reads_as_bf16(out, g, j);
                    break;
                }
        out->rounded[i] = readers > 0 && converting == readers;
    }
    sleapc__free(fp32);
    return SLEAPC_OK;
}

double sleapc__bf16_plan_flop_share(const sleapc_graph *g, const sleapc_bf16_plan *p, int64_t h,
                                    int64_t w)
{
    int64_t(*shapes)[4] = sleapc__malloc((size_t)g->n_nodes * sizeof *shapes);
    double all = 0, bf16 = 0;
    if (shapes && sleapc__graph_infer_shapes(g, 1, h, w, shapes) == SLEAPC_OK)
        for (int i = 0; i < g->n_nodes && i < p->n; i++) {
            double f = sleapc__graph_node_flops(g, i, shapes[i]);
            all += f;
            bf16 += p->compute[i] ? f : 0;
        }
    sleapc__free(shapes);
    return all > 0 ? bf16 / all : 0;
}
