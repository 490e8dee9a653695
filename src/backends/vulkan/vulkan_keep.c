/* Heads kept on the device (vulkan_impl.h's vk_kept): the plan's recorded
 * run leaves their maps in their node buffers, where the device ops read
 * them, and copies nothing down. For the host's fall-backs each kept output
 * has a second command buffer, recorded with the plan, that copies its maps
 * into the output staging the plan keeps for it; a fetch submits it once per
 * run (widened from fp16 and finished with the host's sigmoid, as forward
 * hands out the maps that come back with it). */
#include "backends/sigmoid.h"
#include "backends/vulkan/vulkan_impl.h"
#include "core/error.h"

static int64_t numel(const int64_t *s)
{
    return s[2] ? s[0] * s[1] * s[2] * s[3] : s[0] * s[1];
}

static sleapc_status record_fetch(vk_context *ctx, const sleapc_graph *g, vk_plan *p, int o)
{
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = ctx->cmd_pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VkResult r = vkAllocateCommandBuffers(ctx->dev, &cai, &p->kept.fetch[o]);
    if (r != VK_SUCCESS) {
        p->kept.fetch[o] = VK_NULL_HANDLE;
        return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: kept head command buffer: %s",
                            sleapc__vk_result_str(r));
    }
    VkCommandBuffer cmd = p->kept.fetch[o];
    int node = g->outputs[o].node;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    r = vkBeginCommandBuffer(cmd, &bi);
    if (r == VK_SUCCESS) {
        /* The run's writes (an earlier submission) before the copy; the
         * copy before the host reads. */
        VkMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                  .srcAccessMask =
                                      VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                                  .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
        vkCmdPipelineBarrier(cmd,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
        VkBufferCopy region = {.srcOffset = p->node[node].off,
                               .size = (VkDeviceSize)numel(p->shapes[node]) * p->elem};
        vkCmdCopyBuffer(cmd, p->node[node].buf, p->out[o].buf, 1, &region);
        VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                                 .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                                 .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                             &after, 0, NULL, 0, NULL);
        r = vkEndCommandBuffer(cmd);
    }
    if (r != VK_SUCCESS)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: kept head fetch: %s",
                            sleapc__vk_result_str(r));
    return SLEAPC_OK;
}

sleapc_status sleapc__vk_kept_alloc(vk_context *ctx, const sleapc_graph *g, vk_plan *p)
{
    sleapc_status st = SLEAPC_OK;
    for (int o = 0; o < g->n_outputs && !st; o++)
        if (p->kept.mask >> o & 1)
            st = record_fetch(ctx, g, p, o);
    return st;
}

sleapc_status sleapc__vk_kept_fetch(vk_context *ctx, const sleapc_graph *g, vk_plan *p, int o)
{
    if (!(p->kept.mask >> o & 1) || !p->kept.fetch[o])
        return sleapc__fail(SLEAPC_ERR_STATE, "vulkan: output %s is not kept on the device",
                            g->outputs[o].name);
    if (p->kept.fetched[o])
        return SLEAPC_OK;
    sleapc_status st = sleapc__vk_submit_wait(ctx, p->kept.fetch[o], p->fence);
    if (st)
        return st;
    const int node = g->outputs[o].node;
    if (p->elem == sizeof(uint16_t))
        sleapc__vk_half_to_float(p->out[o].map, numel(p->shapes[node]));
    if (sleapc__sigmoid_on_host(g, node))
        sleapc__sigmoid_apply(p->out[o].map, numel(p->shapes[node]));
    p->kept.fetched[o] = true;
    return SLEAPC_OK;
}

void sleapc__vk_kept_destroy(vk_context *ctx, vk_plan *p)
{
    for (int o = 0; o < SLEAPC_GRAPH_MAX_OUTPUTS; o++)
        if (p->kept.fetch[o])
            vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1, &p->kept.fetch[o]);
    p->kept = (vk_kept){0};
}
