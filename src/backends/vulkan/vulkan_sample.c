/* A head's maps read at cells (vulkan_sample.h): check and copy the cells
 * up, point the descriptor set at the head and the buffers, record and
 * submit one dispatch of sample_cells.comp, copy the values out. */
#include "backends/vulkan/vulkan_sample.h"

#include <string.h>

#include "core/error.h"

#define LOCAL_SIZE 64 /* sample_cells.comp's local_size_x */

static sleapc_status vk_fail(VkResult r, const char *what)
{
    return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: sample head: %s: %s", what,
                        sleapc__vk_result_str(r));
}

/* Grow the host-visible buffers to n cells of c channels. */
static sleapc_status reserve(vk_context *ctx, vk_sample *sm, int64_t n, int64_t c)
{
    int64_t want = n * c;
    if (want <= sm->cap)
        return SLEAPC_OK;
    if (sm->cap <= INT64_MAX / 2 && 2 * sm->cap > want)
        want = 2 * sm->cap; /* peak counts vary frame to frame */
    sleapc__vk_buffer_destroy(ctx, &sm->values);
    sleapc__vk_buffer_destroy(ctx, &sm->cells);
    sm->cap = 0;
    /* want >= n * c >= n cells: the cells' buffer holds want of them. */
    sleapc_status st =
        sleapc__vk_buffer_create(ctx, (VkDeviceSize)want * sizeof(float), true, &sm->values);
    if (!st)
        st = sleapc__vk_buffer_create(ctx, (VkDeviceSize)want * 3 * sizeof(int32_t), true,
                                      &sm->cells);
    if (!st)
        sm->cap = want;
    return st;
}

static void bind(vk_context *ctx, vk_sample *sm, vk_view head)
{
    vk_view cells = {sm->cells.buf, 0, VK_WHOLE_SIZE};
    const vk_view views[VK_N_BINDINGS] = {{sm->values.buf, 0, VK_WHOLE_SIZE}, head, cells, cells,
                                          cells};
    sleapc__vk_set_write_views(ctx, sm->set, views);
}

static VkResult record(const vk_pipelines *pl, vk_sample *sm, const int64_t shape[4], int64_t n)
{
    VkResult r = vkResetCommandBuffer(sm->cmd, 0);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (r == VK_SUCCESS)
        r = vkBeginCommandBuffer(sm->cmd, &bi);
    if (r != VK_SUCCESS)
        return r;
    /* The forward's writes of the head (an earlier submission) before the
     * reads here; the values' writes before the host reads them. */
    VkMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask =
                                  VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_SHADER_READ_BIT};
    vkCmdPipelineBarrier(sm->cmd,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
    int32_t pc[4] = {(int32_t)n, (int32_t)shape[1], (int32_t)shape[2], (int32_t)shape[3]};
    vkCmdBindPipeline(sm->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->pipe[VK_K_SAMPLE_CELLS]);
    vkCmdBindDescriptorSets(sm->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->layout, 0, 1, &sm->set, 0,
                            NULL);
    vkCmdPushConstants(sm->cmd, pl->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, pc);
    vkCmdDispatch(sm->cmd, (uint32_t)((n * shape[1] + LOCAL_SIZE - 1) / LOCAL_SIZE), 1, 1);
    VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(sm->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                         0, 1, &after, 0, NULL, 0, NULL);
    return vkEndCommandBuffer(sm->cmd);
}

sleapc_status sleapc__vk_sample(vk_context *ctx, const vk_pipelines *pl, vk_sample *sm,
                                vk_view head, const int64_t shape[4], int64_t n,
                                const int32_t (*cells)[3], float *values)
{
    /* The shader indexes the maps and the values in 32 bits. */
    int64_t max_values = (int64_t)ctx->props.limits.maxComputeWorkGroupCount[0] * LOCAL_SIZE;
    if (shape[1] < 1 || shape[2] < 1 || shape[3] < 1 ||
        shape[0] * shape[1] > INT32_MAX / (shape[2] * shape[3]) || n > INT32_MAX / shape[1] ||
        n * shape[1] > max_values || n > INT32_MAX / 3)
        return SLEAPC_ERR_UNSUPPORTED;
    for (int64_t i = 0; i < n; i++)
        if (cells[i][0] < 0 || cells[i][0] >= shape[0] || cells[i][1] < 0 ||
            cells[i][1] >= shape[2] || cells[i][2] < 0 || cells[i][2] >= shape[3])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "vulkan: sample head: cell %lld (%d, %d, %d) outside maps of "
                                "(%lld, %lld, %lld, %lld)",
                                (long long)i, (int)cells[i][0], (int)cells[i][1], (int)cells[i][2],
                                (long long)shape[0], (long long)shape[1], (long long)shape[2],
                                (long long)shape[3]);
    sleapc_status st =
        sleapc__vk_oneshot_init(ctx, pl, "sample head", &sm->pool, &sm->set, &sm->cmd, &sm->fence);
    if (!st)
        st = reserve(ctx, sm, n, shape[1]);
    if (st)
        return st;
    memcpy(sm->cells.map, cells, (size_t)n * sizeof *cells);
    bind(ctx, sm, head);
    VkResult r = record(pl, sm, shape, n);
    if (r != VK_SUCCESS)
        return vk_fail(r, "record");
    st = sleapc__vk_submit_wait(ctx, sm->cmd, sm->fence);
    if (!st)
        memcpy(values, sm->values.map, (size_t)(n * shape[1]) * sizeof(float));
    return st;
}

void sleapc__vk_sample_destroy(vk_context *ctx, vk_sample *sm)
{
    if (sm->fence)
        vkDestroyFence(ctx->dev, sm->fence, NULL);
    if (sm->cmd)
        vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1, &sm->cmd);
    if (sm->pool)
        vkDestroyDescriptorPool(ctx->dev, sm->pool, NULL);
    sleapc__vk_buffer_destroy(ctx, &sm->values);
    sleapc__vk_buffer_destroy(ctx, &sm->cells);
    memset(sm, 0, sizeof *sm);
}
