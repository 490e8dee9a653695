/* Device local peak finding in the plan (vulkan_impl.h's vk_local_peaks):
 * the result buffer the host reads, the rows' counts and offsets, their
 * descriptor set (binding 0 the result, 1 the head's maps, 2 the rows) and
 * the three passes of shaders/peaks_local_*.comp: count each row's peaks,
 * scan the counts into offsets (one workgroup), write the peaks from them
 * in the host's order. When a batch holds more peaks than the room, the
 * head's buffer still holds its maps: a second recorded command buffer
 * copies them into the output staging the plan keeps for them, and forward
 * hands the maps out as it would without the request. */
#include <string.h>

#include "backends/vulkan/vulkan_impl.h"
#include "core/error.h"

/* Shader indices are 32-bit ints. */
#define MAX_WORDS ((int64_t)INT32_MAX)

static const int64_t *head_shape(const sleapc_graph *g, const vk_plan *p)
{
    return p->shapes[g->outputs[p->lpeaks.output].node];
}

/* Result words before the peaks: the total, then a count per sample. */
static int64_t header_words(int64_t batch)
{
    return 1 + batch;
}

/* The rows (sample, map row) as a 2-D grid of workgroups. */
static void grid_of(const vk_context *ctx, int64_t rows, uint32_t *gx, uint32_t *gy)
{
    uint32_t max_x = ctx->props.limits.maxComputeWorkGroupCount[0];
    *gx = rows < (int64_t)max_x ? (uint32_t)(rows > 0 ? rows : 1) : max_x;
    *gy = (uint32_t)((rows + *gx - 1) / *gx);
    if (*gy == 0)
        *gy = 1;
}

static sleapc_status record_maps_copy(vk_context *ctx, const sleapc_graph *g, vk_plan *p)
{
    vk_local_peaks *lp = &p->lpeaks;
    int o = lp->output;
    const int64_t *s = head_shape(g, p);
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = ctx->cmd_pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VkResult r = vkAllocateCommandBuffers(ctx->dev, &cai, &lp->maps_cmd);
    if (r != VK_SUCCESS) {
        lp->maps_cmd = VK_NULL_HANDLE;
        return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: local peaks command buffer: %s",
                            sleapc__vk_result_str(r));
    }
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    r = vkBeginCommandBuffer(lp->maps_cmd, &bi);
    if (r == VK_SUCCESS) {
        const vk_view *head = &p->node[g->outputs[o].node];
        VkBufferCopy region = {.srcOffset = head->off,
                               .size = (VkDeviceSize)(s[0] * s[1] * s[2] * s[3]) * p->elem};
        vkCmdCopyBuffer(lp->maps_cmd, head->buf, p->out[o].buf, 1, &region);
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
        vkCmdPipelineBarrier(lp->maps_cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
        r = vkEndCommandBuffer(lp->maps_cmd);
    }
    if (r != VK_SUCCESS)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: local peaks maps copy: %s",
                            sleapc__vk_result_str(r));
    return SLEAPC_OK;
}

sleapc_status sleapc__vk_local_peaks_alloc(vk_context *ctx, const vk_pipelines *pl,
                                           const sleapc_graph *g, vk_plan *p)
{
    vk_local_peaks *lp = &p->lpeaks;
    const int64_t *s = head_shape(g, p);
    int64_t maps = s[0] * s[1], rows = s[0] * s[2];
    /* The room: per_map a map, at most the most that fit (strict maxima
     * cannot touch: one per 2 x 2 block), at least one. */
    int64_t most = s[2] ? maps * ((s[2] + 1) / 2) * ((s[3] + 1) / 2) : 0;
    int64_t cap = maps * lp->per_map;
    if (cap > most)
        cap = most;
    if (cap < 1)
        cap = 1;
    grid_of(ctx, rows, &lp->grid[0], &lp->grid[1]);
    if (s[2] == 0 || header_words(s[0]) + 7 * cap > MAX_WORDS || 2 * rows > MAX_WORDS ||
        s[3] * s[1] > MAX_WORDS || lp->grid[1] > ctx->props.limits.maxComputeWorkGroupCount[1])
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "vulkan: local peaks of %lld maps of %lld x %lld are too many for %s",
                            (long long)maps, (long long)s[2], (long long)s[3],
                            ctx->props.deviceName);
    lp->cap = cap;
    sleapc_status st = sleapc__vk_buffer_create(
        ctx, (VkDeviceSize)(header_words(s[0]) + 7 * cap) * sizeof(uint32_t), true, &lp->buf);
    if (!st)
        st = sleapc__vk_buffer_create(ctx, (VkDeviceSize)(2 * rows) * sizeof(uint32_t), false,
                                      &lp->rows);
    if (st)
        return st;
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = p->desc_pool,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &pl->set_layout};
    VkResult r = vkAllocateDescriptorSets(ctx->dev, &ai, &lp->set);
    if (r != VK_SUCCESS)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: local peaks descriptor set: %s",
                            sleapc__vk_result_str(r));
    /* Bindings 3-4 are unused: the head's buffer stands in for them. */
    vk_view head = p->node[g->outputs[lp->output].node];
    vk_view views[VK_N_BINDINGS] = {{lp->buf.buf, 0, VK_WHOLE_SIZE}, head,
                                    {lp->rows.buf, 0, VK_WHOLE_SIZE}, head, head};
    sleapc__vk_set_write_views(ctx, lp->set, views);
    return record_maps_copy(ctx, g, p);
}

/* Each pass's writes are seen by the next. */
static void compute_barrier(VkCommandBuffer cmd)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
}

void sleapc__vk_local_peaks_record(VkCommandBuffer cmd, const vk_pipelines *pl,
                                   const sleapc_graph *g, const vk_plan *p)
{
    const vk_local_peaks *lp = &p->lpeaks;
    const int64_t *s = head_shape(g, p);
    struct {
        int32_t rows, b, c, h, w, k, cap;
        uint32_t thr;
    } pc = {(int32_t)(s[0] * s[2]), (int32_t)s[0], (int32_t)s[1], (int32_t)s[2], (int32_t)s[3],
            lp->refine_k, (int32_t)lp->cap, 0};
    memcpy(&pc.thr, &lp->threshold, sizeof pc.thr);
    static const vk_kernel passes[3] = {VK_K_PEAKS_LOCAL_COUNT, VK_K_PEAKS_LOCAL_SCAN,
                                        VK_K_PEAKS_LOCAL_WRITE};
    for (int i = 0; i < 3; i++) {
        if (i > 0)
            compute_barrier(cmd);
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->pipe[passes[i]]);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->layout, 0, 1, &lp->set, 0,
                                NULL);
        vkCmdPushConstants(cmd, pl->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
        if (passes[i] == VK_K_PEAKS_LOCAL_SCAN)
            vkCmdDispatch(cmd, 1, 1, 1);
        else
            vkCmdDispatch(cmd, lp->grid[0], lp->grid[1], 1);
    }
}

sleapc_status sleapc__vk_local_peaks_outputs(vk_context *ctx, vk_plan *p, sleapc_tensor_map *out,
                                             bool *fits)
{
    vk_local_peaks *lp = &p->lpeaks;
    const int64_t batch = p->shape[0];
    uint32_t *words = lp->buf.map;
    int64_t n = words[0];
    *fits = n <= lp->cap;
    if (!*fits) {
        if (!lp->told)
            sleapc__log(SLEAPC_LOG_INFO,
                        "vulkan: %lld local peaks in a batch of %lld, room for %lld: the maps "
                        "come back for such batches",
                        (long long)n, (long long)batch, (long long)lp->cap);
        lp->told = true;
        return sleapc__vk_submit_wait(ctx, lp->maps_cmd, p->fence);
    }
    int64_t hdr = header_words(batch);
    sleapc_tensor counts = {.dtype = SLEAPC_DTYPE_I32, .ndim = 1, .shape = {batch},
                            .data = words + 1};
    sleapc_tensor xy = {.dtype = SLEAPC_DTYPE_F32, .ndim = 2, .shape = {n, 2},
                        .data = words + hdr};
    sleapc_tensor vals = {.dtype = SLEAPC_DTYPE_F32, .ndim = 1, .shape = {n},
                          .data = words + hdr + 2 * lp->cap};
    sleapc_tensor inds = {.dtype = SLEAPC_DTYPE_I32, .ndim = 2, .shape = {n, 4},
                          .data = words + hdr + 3 * lp->cap};
    sleapc_status st = sleapc__tensor_map_set(out, "local_peak_counts", &counts);
    if (!st)
        st = sleapc__tensor_map_set(out, "local_peaks", &xy);
    if (!st)
        st = sleapc__tensor_map_set(out, "local_peak_vals", &vals);
    if (!st)
        st = sleapc__tensor_map_set(out, "local_peak_inds", &inds);
    return st;
}

void sleapc__vk_local_peaks_destroy(vk_context *ctx, vk_plan *p)
{
    vk_local_peaks *lp = &p->lpeaks;
    if (lp->maps_cmd)
        vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1, &lp->maps_cmd);
    sleapc__vk_buffer_destroy(ctx, &lp->buf);
    sleapc__vk_buffer_destroy(ctx, &lp->rows);
    lp->maps_cmd = VK_NULL_HANDLE;
}
