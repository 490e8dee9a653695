/* The plan for one input shape: one arena for the nodes' values, placed by
 * the shared planner (model/graph_plan.h) at the device's storage-buffer
 * offset alignment, each node's descriptor set bound at its values' ranges;
 * staging for the input and each output; and one command buffer recorded
 * here once and replayed by every forward of that shape: normalise the input
 * (shaders/input_u8.comp), run the nodes in order with a barrier after each,
 * copy the outputs down (or find a head's peaks: vulkan_peaks.c, and its
 * local peaks: vulkan_local_peaks.c; or leave a kept head on the device:
 * vulkan_keep.c).
 * Concats are buffer copies, a same-size resize is its input (an alias in
 * the plan); the rest are dispatches of the shaders in shaders/. */
#include <string.h>

#include "backends/sigmoid.h"
#include "backends/vulkan/vulkan_impl.h"
#include "backends/vulkan/vulkan_input.h"
#include "core/alloc.h"
#include "core/error.h"
#include "model/graph_plan.h"

/* Every index a shader computes is a 32-bit int. */
#define MAX_ELEMS ((int64_t)INT32_MAX)

static int64_t numel(const int64_t *s)
{
    return s[2] ? s[0] * s[1] * s[2] * s[3] : s[0] * s[1];
}

static uint32_t div_up(int64_t a, int64_t b)
{
    return (uint32_t)((a + b - 1) / b);
}

typedef struct recorder {
    vk_context *ctx;
    const vk_pipelines *pl;
    const sleapc_graph *g;
    vk_plan *p;
    VkCommandBuffer cmd;
} recorder;

/* Every earlier write (shader or copy) is seen by every later read or write. */
static void barrier(VkCommandBuffer cmd)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT |
                                           VK_ACCESS_TRANSFER_WRITE_BIT};
    VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT |
                                  VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(cmd, stages, stages, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void dispatch(recorder *r, int i, vk_kernel k, const void *push, size_t push_bytes,
                     uint32_t gx, uint32_t gy, uint32_t gz)
{
    vkCmdBindPipeline(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, r->pl->pipe[k]);
    vkCmdBindDescriptorSets(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, r->pl->layout, 0, 1,
                            &r->p->sets[i], 0, NULL);
    vkCmdPushConstants(r->cmd, r->pl->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       (uint32_t)push_bytes, push);
    vkCmdDispatch(r->cmd, gx, gy, gz);
}

static void copy(recorder *r, vk_view src, VkDeviceSize src_off, vk_view dst,
                 VkDeviceSize dst_off, VkDeviceSize bytes)
{
    VkBufferCopy region = {
        .srcOffset = src.off + src_off, .dstOffset = dst.off + dst_off, .size = bytes};
    vkCmdCopyBuffer(r->cmd, src.buf, dst.buf, 1, &region);
}

/* The shader's activation for node i: none where the host applies the
 * sigmoid (see sleapc__sigmoid_on_host) or a separate shader the softmax. */
static int32_t shader_act(const sleapc_graph *g, int i)
{
    sleapc_act a = g->nodes[i].act;
    if (a == SLEAPC_ACT_SOFTMAX || sleapc__sigmoid_on_host(g, i))
        return 0;
    return (int32_t)a;
}

static void record_node(recorder *r, int i)
{
    const sleapc_node *n = &r->g->nodes[i];
    const int64_t *d = r->p->shapes[i];
    const int64_t *s = n->n_inputs ? r->p->shapes[n->inputs[0]] : NULL;
    vk_view dst = r->p->node[i];
    switch (n->op) {
    case SLEAPC_OP_CONV2D: {
        int32_t groups = (int32_t)div_up(n->c_out, VK_CONV_CO);
        int32_t pc[7] = {n->c_in, n->c_out, (int32_t)s[2], (int32_t)s[3], n->kernel,
                         shader_act(r->g, i), groups};
        dispatch(r, i, VK_K_CONV2D, pc, sizeof pc, div_up(d[3], VK_CONV_TILE),
                 div_up(d[2], VK_CONV_TILE), (uint32_t)(d[0] * groups));
        break;
    }
    case SLEAPC_OP_CONV_TRANSPOSE2D: {
        int32_t pc[6] = {n->c_in, n->c_out, (int32_t)s[2], (int32_t)s[3],
                         n->keras_placement ? 0 : 1, shader_act(r->g, i)};
        dispatch(r, i, VK_K_CONVT, pc, sizeof pc, div_up(d[3], 8), div_up(d[2], 8),
                 (uint32_t)(d[0] * d[1]));
        break;
    }
    case SLEAPC_OP_MAXPOOL2D: {
        int32_t pc[2] = {(int32_t)s[2], (int32_t)s[3]};
        dispatch(r, i, VK_K_MAXPOOL2, pc, sizeof pc, div_up(d[3], 8), div_up(d[2], 8),
                 (uint32_t)(d[0] * d[1]));
        break;
    }
    case SLEAPC_OP_UPSAMPLE2X:
    case SLEAPC_OP_RESIZE_LIKE: {
        if (s[2] == d[2] && s[3] == d[3])
            break; /* the plan made it its input */
        /* nn.Upsample(scale_factor=2) maps with 1/scale_factor; a resize to
         * another map's size with in/out, as F.interpolate(size=...). */
        struct {
            int32_t h, w, oh, ow;
            float sh, sw;
        } pc = {(int32_t)s[2], (int32_t)s[3], (int32_t)d[2], (int32_t)d[3],
                n->op == SLEAPC_OP_UPSAMPLE2X ? 0.5f : (float)s[2] / (float)d[2],
                n->op == SLEAPC_OP_UPSAMPLE2X ? 0.5f : (float)s[3] / (float)d[3]};
        dispatch(r, i, VK_K_RESIZE, &pc, sizeof pc, div_up(d[3], 8), div_up(d[2], 8),
                 (uint32_t)(d[0] * d[1]));
        break;
    }
    case SLEAPC_OP_CONCAT: {
        int64_t hw = d[2] * d[3];
        VkDeviceSize e = r->p->elem;
        for (int64_t b = 0; b < d[0]; b++) {
            int64_t off = b * d[1] * hw;
            for (int k = 0; k < n->n_inputs; k++) {
                int64_t len = r->p->shapes[n->inputs[k]][1] * hw;
                copy(r, r->p->node[n->inputs[k]], (VkDeviceSize)(b * len) * e, dst,
                     (VkDeviceSize)off * e, (VkDeviceSize)len * e);
                off += len;
            }
        }
        break;
    }
    case SLEAPC_OP_GLOBAL_MAXPOOL: {
        int32_t pc[2] = {(int32_t)(s[0] * s[1]), (int32_t)(s[2] * s[3])};
        dispatch(r, i, VK_K_GLOBAL_MAXPOOL, pc, sizeof pc, div_up(pc[0], 64), 1, 1);
        break;
    }
    case SLEAPC_OP_GLOBAL_GEMPOOL: {
        /* p clamped here as the native kernel clamps it (GEM_P_MIN, GEM_P_MAX). */
        float gp = n->weight ? n->weight[0] : 1.0f;
        struct {
            int32_t planes, plane_size, has_p;
            float p, eps;
        } pc = {(int32_t)(s[0] * s[1]), (int32_t)(s[2] * s[3]), n->weight ? 1 : 0,
                gp < 1.0f ? 1.0f : gp > 6.0f ? 6.0f : gp, n->eps};
        dispatch(r, i, VK_K_GLOBAL_GEMPOOL, &pc, sizeof pc, div_up(pc.planes, 64), 1, 1);
        break;
    }
    case SLEAPC_OP_L2NORM: {
        struct {
            int32_t rows, n;
            float eps;
        } pc = {(int32_t)s[0], (int32_t)s[1], n->eps};
        dispatch(r, i, VK_K_L2NORM, &pc, sizeof pc, div_up(s[0], 64), 1, 1);
        break;
    }
    case SLEAPC_OP_LINEAR: {
        int32_t pc[4] = {(int32_t)s[0], n->c_in, n->c_out, shader_act(r->g, i)};
        dispatch(r, i, VK_K_LINEAR, pc, sizeof pc, div_up(s[0] * n->c_out, 64), 1, 1);
        if (n->act == SLEAPC_ACT_SOFTMAX) {
            barrier(r->cmd);
            int32_t sm[2] = {(int32_t)d[0], (int32_t)d[1]};
            dispatch(r, i, VK_K_SOFTMAX, sm, sizeof sm, div_up(d[0], 64), 1, 1);
        }
        break;
    }
    case SLEAPC_OP_PATCHES: {
        int32_t pc[9] = {(int32_t)s[1], (int32_t)s[2], (int32_t)s[3], (int32_t)d[2],
                         (int32_t)d[3], n->kernel, n->stride, n->pad, n->patch_merge ? 1 : 0};
        dispatch(r, i, VK_K_PATCHES, pc, sizeof pc, div_up(d[3], 8), div_up(d[2], 8),
                 (uint32_t)(d[0] * d[1]));
        break;
    }
    case SLEAPC_OP_DWCONV: {
        /* No fused activation: the native backend applies none here either. */
        int32_t pc[5] = {(int32_t)s[1], (int32_t)s[2], (int32_t)s[3], n->kernel, 0};
        dispatch(r, i, VK_K_DWCONV, pc, sizeof pc, div_up(d[3], 8), div_up(d[2], 8),
                 (uint32_t)(d[0] * d[1]));
        break;
    }
    case SLEAPC_OP_LAYERNORM: {
        struct {
            int32_t c, hw, has_weight;
            float eps;
        } pc = {(int32_t)s[1], (int32_t)(s[2] * s[3]), n->weight ? 1 : 0, n->eps};
        dispatch(r, i, VK_K_LAYERNORM, &pc, sizeof pc, div_up(s[2] * s[3], 64), (uint32_t)s[0],
                 1);
        break;
    }
    case SLEAPC_OP_SCALE_ADD: {
        int32_t pc[3] = {(int32_t)d[1], (int32_t)(d[2] * d[3]), n->weight ? 1 : 0};
        dispatch(r, i, VK_K_SCALE_ADD, pc, sizeof pc, div_up(d[2] * d[3], 64),
                 (uint32_t)(d[0] * d[1]), 1);
        break;
    }
    case SLEAPC_OP_WINDOW_ATTENTION: {
        int64_t ph, pw;
        int sh, sw;
        sleapc__window_geometry(n, s[2], s[3], &ph, &pw, &sh, &sw);
        int32_t pc[10] = {n->c_in, n->heads, n->kernel, (int32_t)s[2], (int32_t)s[3],
                          (int32_t)ph, (int32_t)pw, sh, sw, sh + sw > 0};
        dispatch(r, i, VK_K_WINDOW_ATTENTION, pc, sizeof pc, div_up(n->kernel * n->kernel, 64),
                 (uint32_t)((ph / n->kernel) * (pw / n->kernel)), (uint32_t)(d[0] * n->heads));
        break;
    }
    default:
        break; /* INPUT: copied up; other ops are refused at create */
    }
}

/* Sizes every shader index and dispatch can hold. */
static sleapc_status check_sizes(const vk_context *ctx, const sleapc_graph *g,
                                 const int64_t (*shapes)[4])
{
    const uint32_t *max = ctx->props.limits.maxComputeWorkGroupCount;
    for (int i = 0; i < g->n_nodes; i++) {
        const int64_t *s = shapes[i];
        bool ok = s[0] <= MAX_ELEMS && s[1] <= MAX_ELEMS && s[2] <= MAX_ELEMS &&
                  s[3] <= MAX_ELEMS && (s[2] ? s[2] * s[3] <= MAX_ELEMS : true) &&
                  s[0] * s[1] <= MAX_ELEMS && numel(s) <= MAX_ELEMS;
        ok = ok && div_up(s[3], 8) <= max[0] && div_up(s[2], 8) <= max[1] &&
             (uint64_t)s[0] * (uint64_t)s[1] <= max[2] && div_up(s[0] * s[1], 64) <= max[0] &&
             (uint64_t)s[0] * (uint64_t)s[1] <= max[1] &&
             (s[2] ? div_up(s[2] * s[3], 64) <= max[0] : true);
        const sleapc_node *n = &g->nodes[i];
        if (ok && n->op == SLEAPC_OP_WINDOW_ATTENTION) {
            int64_t ph, pw;
            int sh, sw;
            sleapc__window_geometry(n, s[2], s[3], &ph, &pw, &sh, &sw);
            ok = ph <= MAX_ELEMS && pw <= MAX_ELEMS &&
                 (uint64_t)(ph / n->kernel) * (uint64_t)(pw / n->kernel) <= max[1] &&
                 (uint64_t)s[0] * (uint64_t)n->heads <= max[2];
        }
        if (!ok)
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "vulkan: node %s: (%lld, %lld, %lld, %lld) is too large for %s",
                                g->nodes[i].name, (long long)s[0], (long long)s[1],
                                (long long)s[2], (long long)s[3], ctx->props.deviceName);
    }
    return SLEAPC_OK;
}

static sleapc_status vk_check(VkResult r, const char *what)
{
    if (r == VK_SUCCESS)
        return SLEAPC_OK;
    return sleapc__fail(r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY
                            ? SLEAPC_ERR_NOMEM
                            : SLEAPC_ERR_BACKEND,
                        "vulkan: %s: %s", what, sleapc__vk_result_str(r));
}

int64_t sleapc__vk_plan_align(const vk_context *ctx)
{
    int64_t a = (int64_t)ctx->props.limits.minStorageBufferOffsetAlignment;
    return a < 4 ? 4 : a;
}

/* The values' offsets from the shared planner, then one device buffer. */
static sleapc_status alloc_buffers(vk_context *ctx, const sleapc_graph *g, vk_plan *p)
{
    sleapc_plan_opts opts = {.elem = p->elem, .align = sleapc__vk_plan_align(ctx)};
    sleapc_graph_plan mp;
    sleapc_status st = sleapc__graph_plan(g, p->shapes[0][0], p->shapes[0][2], p->shapes[0][3],
                                          &opts, &mp);
    if (!st)
        st = sleapc__vk_buffer_create(ctx, (VkDeviceSize)mp.arena, false, &p->arena);
    for (int i = 0; i < g->n_nodes && !st; i++)
        p->node[i] = (vk_view){p->arena.buf, (VkDeviceSize)mp.offset[i],
                               (VkDeviceSize)numel(p->shapes[i]) * p->elem};
    if (!st)
        sleapc__log(SLEAPC_LOG_INFO,
                    "vulkan: activations for (%lld, %lld, %lld, %lld): %lld bytes of device "
                    "memory in one arena",
                    (long long)p->shapes[0][0], (long long)g->in_channels,
                    (long long)p->shapes[0][2], (long long)p->shapes[0][3], (long long)mp.arena);
    sleapc__graph_plan_free(&mp);
    if (!st)
        st = sleapc__vk_buffer_create(ctx, (VkDeviceSize)sleapc__vk_input_bytes(p->shapes[0]),
                                      true, &p->in);
    for (int o = 0; o < g->n_outputs && !st; o++)
        if (o != p->peaks.output) /* its peaks come back instead */
            st = sleapc__vk_buffer_create(
                ctx, (VkDeviceSize)numel(p->shapes[g->outputs[o].node]) * sizeof(float), true,
                &p->out[o]);
    if (!st) /* warmup runs on zeros */
        sleapc__vk_input_init(p->in.map, (uint64_t)p->in.size, g->in_channels);
    return st;
}

static sleapc_status alloc_sets(vk_context *ctx, const vk_pipelines *pl, const vk_weights *w,
                                const sleapc_graph *g, vk_plan *p)
{
    int n = g->n_nodes + 2; /* the last two for the peaks (vulkan_peaks.c, vulkan_local_peaks.c) */
    VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                 .descriptorCount = (uint32_t)(n * VK_N_BINDINGS)};
    VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = (uint32_t)n,
                                       .poolSizeCount = 1,
                                       .pPoolSizes = &size};
    sleapc_status st = vk_check(vkCreateDescriptorPool(ctx->dev, &dpci, NULL, &p->desc_pool),
                                "descriptor pool");
    if (st)
        return st;
    VkDescriptorSetLayout *layouts = sleapc__malloc((size_t)n * sizeof *layouts);
    if (!layouts)
        return sleapc__fail(SLEAPC_ERR_NOMEM, "vulkan: out of memory");
    for (int i = 0; i < n; i++)
        layouts[i] = pl->set_layout;
    n = g->n_nodes;
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = p->desc_pool,
                                      .descriptorSetCount = (uint32_t)n,
                                      .pSetLayouts = layouts};
    st = vk_check(vkAllocateDescriptorSets(ctx->dev, &ai, p->sets), "descriptor sets");
    sleapc__free(layouts);
    for (int i = 0; i < n && !st; i++) {
        const sleapc_node *nd = &g->nodes[i];
        vk_view dummy = {w->dummy.buf, 0, VK_WHOLE_SIZE};
        vk_view views[VK_N_BINDINGS] = {
            p->node[i],
            i == 0             ? (vk_view){p->in.buf, 0, VK_WHOLE_SIZE} /* input_u8.comp */
            : nd->n_inputs > 0 ? p->node[nd->inputs[0]]
                               : dummy,
            nd->n_inputs > 1 ? p->node[nd->inputs[1]] : dummy,
            w->w[i].buf ? (vk_view){w->w[i].buf, 0, VK_WHOLE_SIZE} : dummy,
            w->b[i].buf ? (vk_view){w->b[i].buf, 0, VK_WHOLE_SIZE} : dummy,
        };
        sleapc__vk_set_write_views(ctx, p->sets[i], views);
    }
    return st;
}

static sleapc_status record(vk_context *ctx, const vk_pipelines *pl, const sleapc_graph *g,
                            vk_plan *p)
{
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = ctx->cmd_pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    sleapc_status st = vk_check(vkAllocateCommandBuffers(ctx->dev, &cai, &p->cmd),
                                "command buffer");
    if (st) {
        p->cmd = VK_NULL_HANDLE;
        return st;
    }
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    st = vk_check(vkCreateFence(ctx->dev, &fci, NULL, &p->fence), "fence");
    if (st) {
        p->fence = VK_NULL_HANDLE;
        return st;
    }
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    st = vk_check(vkBeginCommandBuffer(p->cmd, &bi), "begin commands");
    if (st)
        return st;
    recorder r = {.ctx = ctx, .pl = pl, .g = g, .p = p, .cmd = p->cmd};
    /* The host's writes to the mapped input are visible to the first shader
     * (the submission makes them so); it normalises them into node 0. */
    const int64_t *s0 = p->shapes[0];
    int32_t in_pc[2] = {(int32_t)s0[1], (int32_t)(s0[2] * s0[3])};
    dispatch(&r, 0, VK_K_INPUT_U8, in_pc, sizeof in_pc, div_up(s0[2] * s0[3], 64),
             (uint32_t)s0[0], 1);
    barrier(p->cmd);
    for (int i = 1; i < g->n_nodes; i++) {
        record_node(&r, i);
        barrier(p->cmd);
    }
    for (int o = 0; o < g->n_outputs; o++) {
        int node = g->outputs[o].node;
        if (o == p->peaks.output) {
            sleapc__vk_peaks_record(p->cmd, pl, g, p);
            continue;
        }
        if (o == p->lpeaks.output) {
            sleapc__vk_local_peaks_record(p->cmd, pl, g, p);
            continue;
        }
        if (p->kept.mask >> o & 1)
            continue; /* stays on the device; fetched on demand */
        copy(&r, p->node[node], 0, (vk_view){p->out[o].buf, 0, VK_WHOLE_SIZE}, 0,
             (VkDeviceSize)numel(p->shapes[node]) * p->elem);
    }
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(p->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    return vk_check(vkEndCommandBuffer(p->cmd), "end commands");
}

sleapc_status sleapc__vk_plan_create(vk_context *ctx, const vk_pipelines *pl,
                                     const vk_weights *w, const sleapc_graph *g,
                                     const int64_t shape[4], size_t elem, const vk_peaks *peaks,
                                     const vk_local_peaks *lpeaks, uint32_t kept,
                                     vk_plan *out)
{
    memset(out, 0, sizeof *out);
    out->elem = elem;
    out->peaks.output = -1;
    if (peaks && peaks->output >= 0) {
        out->peaks.output = peaks->output;
        out->peaks.threshold = peaks->threshold;
        out->peaks.refine_k = peaks->refine_k;
    }
    out->lpeaks.output = -1;
    if (lpeaks && lpeaks->output >= 0)
        out->lpeaks = (vk_local_peaks){.output = lpeaks->output, .threshold = lpeaks->threshold,
                                       .refine_k = lpeaks->refine_k, .per_map = lpeaks->per_map};
    out->kept.mask = kept;
    int n = g->n_nodes;
    out->shapes = sleapc__malloc((size_t)n * sizeof *out->shapes);
    out->node = sleapc__calloc((size_t)n, sizeof *out->node);
    out->sets = sleapc__calloc((size_t)n, sizeof *out->sets);
    sleapc_status st = out->shapes && out->node && out->sets
                           ? SLEAPC_OK
                           : sleapc__fail(SLEAPC_ERR_NOMEM, "vulkan: out of memory");
    if (!st)
        st = sleapc__graph_infer_shapes(g, shape[0], shape[2], shape[3], out->shapes);
    if (!st)
        st = check_sizes(ctx, g, (const int64_t(*)[4])out->shapes);
    if (!st)
        st = alloc_buffers(ctx, g, out);
    if (!st)
        st = alloc_sets(ctx, pl, w, g, out);
    if (!st && out->peaks.output >= 0)
        st = sleapc__vk_peaks_alloc(ctx, pl, g, out);
    if (!st && out->lpeaks.output >= 0)
        st = sleapc__vk_local_peaks_alloc(ctx, pl, g, out);
    if (!st && out->kept.mask)
        st = sleapc__vk_kept_alloc(ctx, g, out);
    if (!st)
        st = record(ctx, pl, g, out);
    if (st) {
        sleapc__vk_plan_destroy(ctx, g, out);
        return sleapc__wrap(st, "plan for input (%lld, %lld, %lld, %lld)", (long long)shape[0],
                            (long long)shape[1], (long long)shape[2], (long long)shape[3]);
    }
    memcpy(out->shape, shape, sizeof out->shape);
    return SLEAPC_OK;
}

void sleapc__vk_plan_destroy(vk_context *ctx, const sleapc_graph *g, vk_plan *p)
{
    if (p->fence)
        vkDestroyFence(ctx->dev, p->fence, NULL);
    if (p->cmd)
        vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1, &p->cmd);
    if (p->desc_pool)
        vkDestroyDescriptorPool(ctx->dev, p->desc_pool, NULL);
    (void)g;
    sleapc__vk_buffer_destroy(ctx, &p->arena);
    sleapc__vk_buffer_destroy(ctx, &p->in);
    sleapc__vk_buffer_destroy(ctx, &p->peaks.buf);
    sleapc__vk_local_peaks_destroy(ctx, p);
    sleapc__vk_kept_destroy(ctx, p);
    for (int o = 0; o < SLEAPC_GRAPH_MAX_OUTPUTS; o++)
        sleapc__vk_buffer_destroy(ctx, &p->out[o]);
    sleapc__free(p->shapes);
    sleapc__free(p->node);
    sleapc__free(p->sets);
    memset(p, 0, sizeof *p);
}
