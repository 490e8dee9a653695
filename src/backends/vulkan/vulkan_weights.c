/* What the Vulkan backend accepts of a graph, and the weights it uploads
 * once at create. */
#include <string.h>

#include "backends/sigmoid.h"
#include "backends/vulkan/vulkan_impl.h"
#include "core/alloc.h"
#include "core/error.h"

sleapc_status sleapc__vk_check_graph(const sleapc_graph *g)
{
    for (int i = 0; i < g->n_nodes; i++) {
        const sleapc_node *n = &g->nodes[i];
        switch (n->op) {
        case SLEAPC_OP_INPUT:
        case SLEAPC_OP_MAXPOOL2D:
        case SLEAPC_OP_UPSAMPLE2X:
        case SLEAPC_OP_RESIZE_LIKE:
        case SLEAPC_OP_CONCAT:
        case SLEAPC_OP_GLOBAL_MAXPOOL:
        case SLEAPC_OP_GLOBAL_GEMPOOL: /* p goes up as a push constant */
        case SLEAPC_OP_L2NORM:
        case SLEAPC_OP_PATCHES:
        case SLEAPC_OP_LAYERNORM:
        case SLEAPC_OP_SCALE_ADD:
        case SLEAPC_OP_WINDOW_ATTENTION:
            break;
        case SLEAPC_OP_DWCONV:
            if (n->act == SLEAPC_ACT_SOFTMAX)
                return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                    "vulkan: node %s: depthwise convolution with softmax is not "
                                    "supported",
                                    n->name);
            break;
        case SLEAPC_OP_CONV2D:
            if (n->kernel < 1 || n->kernel > VK_CONV_MAX_K || n->kernel % 2 == 0 ||
                n->act == SLEAPC_ACT_SOFTMAX)
                return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                    "vulkan: node %s: a %dx%d convolution%s is not supported",
                                    n->name, n->kernel, n->kernel,
                                    n->act == SLEAPC_ACT_SOFTMAX ? " with softmax" : "");
            break;
        case SLEAPC_OP_CONV_TRANSPOSE2D:
            if (n->act != SLEAPC_ACT_NONE && n->act != SLEAPC_ACT_RELU)
                return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                    "vulkan: node %s: transposed convolution with activation %d "
                                    "is not supported",
                                    n->name, (int)n->act);
            break;
        case SLEAPC_OP_LINEAR:
            if (n->act == SLEAPC_ACT_GELU)
                return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                    "vulkan: node %s: linear with GELU is not supported", n->name);
            break;
        default:
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "vulkan: node %s: op %s is not supported by the vulkan backend "
                                "yet",
                                n->name, sleapc__op_name(n->op));
        }
        /* A head's sigmoid is applied on the host with the one every backend
         * shares; one that other nodes read would be the GPU's exp, which
         * rounds otherwise. Every model's sigmoid ends a head. */
        if (n->act == SLEAPC_ACT_SIGMOID && !sleapc__sigmoid_on_host(g, i))
            return sleapc__fail(SLEAPC_ERR_UNSUPPORTED,
                                "vulkan: node %s: a sigmoid that other nodes read (only a "
                                "head's sigmoid is supported)",
                                n->name);
    }
    return SLEAPC_OK;
}

/* Weight elements of node n (0: none). */
static int64_t weight_numel(const sleapc_node *n)
{
    switch (n->op) {
    case SLEAPC_OP_CONV2D: return (int64_t)n->c_out * n->c_in * n->kernel * n->kernel;
    case SLEAPC_OP_CONV_TRANSPOSE2D: return (int64_t)n->c_in * n->c_out * 9;
    case SLEAPC_OP_LINEAR: return (int64_t)n->c_out * n->c_in;
    case SLEAPC_OP_DWCONV: return (int64_t)n->c_out * n->kernel * n->kernel;
    case SLEAPC_OP_LAYERNORM: return n->c_out;
    case SLEAPC_OP_SCALE_ADD: return n->weight ? n->c_in : 0;
    case SLEAPC_OP_WINDOW_ATTENTION:
        return (int64_t)(2 * n->kernel - 1) * (2 * n->kernel - 1) * n->heads;
    default: return 0;
    }
}

/* n floats (NULL: zeros) into a new device buffer, as binary16 with fp16. */
static sleapc_status upload(vk_context *ctx, const float *src, int64_t n, bool fp16,
                            vk_buffer *b)
{
    size_t elem = fp16 ? sizeof(uint16_t) : sizeof(float);
    sleapc_status st = sleapc__vk_buffer_create(ctx, (VkDeviceSize)n * elem, false, b);
    if (st)
        return st;
    float *tmp = sleapc__calloc((size_t)n, sizeof *tmp);
    if (!tmp)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "vulkan: out of memory for the weights");
    if (src)
        memcpy(tmp, src, (size_t)n * sizeof *tmp);
    if (fp16)
        sleapc__vk_half_from_float(tmp, n);
    st = sleapc__vk_buffer_upload(ctx, b, tmp, (VkDeviceSize)n * elem);
    sleapc__free(tmp);
    return st;
}

sleapc_status sleapc__vk_weights_create(vk_context *ctx, const sleapc_graph *g, bool fp16,
                                        vk_weights *out)
{
    memset(out, 0, sizeof *out);
    out->w = sleapc__calloc((size_t)g->n_nodes, sizeof *out->w);
    out->b = sleapc__calloc((size_t)g->n_nodes, sizeof *out->b);
    if (!out->w || !out->b) {
        sleapc__vk_weights_destroy(ctx, g, out);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "vulkan: out of memory for the weights");
    }
    float zeros[4] = {0};
    sleapc_status st = sleapc__vk_buffer_create(ctx, sizeof zeros, false, &out->dummy);
    if (!st)
        st = sleapc__vk_buffer_upload(ctx, &out->dummy, zeros, sizeof zeros);
    for (int i = 0; i < g->n_nodes && !st; i++) {
        const sleapc_node *n = &g->nodes[i];
        int64_t nw = weight_numel(n);
        if (nw == 0)
            continue;
        /* A LayerNorm without weight reads none (the shader's flag). */
        if (!n->weight && n->op != SLEAPC_OP_LAYERNORM) {
            st = sleapc__fail(SLEAPC_ERR_FORMAT, "vulkan: node %s has no weight", n->name);
            break;
        }
        /* A window attention's bias is the qkv bias (3C). */
        int64_t nb = n->op == SLEAPC_OP_WINDOW_ATTENTION ? 3 * (int64_t)n->c_in : n->c_out;
        if (n->weight)
            st = upload(ctx, n->weight, nw, fp16, &out->w[i]);
        if (n->op == SLEAPC_OP_SCALE_ADD)
            continue; /* no bias */
        if (!st) /* no bias: zeros */
            st = upload(ctx, n->bias, nb, fp16, &out->b[i]);
    }
    if (st)
        sleapc__vk_weights_destroy(ctx, g, out);
    return st;
}

void sleapc__vk_weights_destroy(vk_context *ctx, const sleapc_graph *g, vk_weights *w)
{
    for (int i = 0; i < g->n_nodes; i++) {
        if (w->w)
            sleapc__vk_buffer_destroy(ctx, &w->w[i]);
        if (w->b)
            sleapc__vk_buffer_destroy(ctx, &w->b[i]);
    }
    sleapc__free(w->w);
    sleapc__free(w->b);
    sleapc__vk_buffer_destroy(ctx, &w->dummy);
    memset(w, 0, sizeof *w);
}
