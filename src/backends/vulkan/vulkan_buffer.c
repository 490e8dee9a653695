/* Buffers and submission: memory types chosen for their use (device-local
 * for activations and weights, host-visible and coherent for what the host
 * writes or reads, cached where the device has it), uploads through a
 * staging buffer, and one submit-and-wait. */
#include <string.h>

#include "backends/vulkan/vulkan_backend.h"
#include "backends/vulkan/vulkan_impl.h"
#include "core/error.h"

/* The first memory type allowed by bits with every flag of need, preferring
 * one that also has every flag of want; UINT32_MAX when none. */
static uint32_t memory_type(const vk_context *ctx, uint32_t bits, VkMemoryPropertyFlags need,
                            VkMemoryPropertyFlags want)
{
    uint32_t fallback = UINT32_MAX;
    for (uint32_t i = 0; i < ctx->mem.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = ctx->mem.memoryTypes[i].propertyFlags;
        if (!(bits & (1u << i)) || (f & need) != need)
            continue;
        if ((f & want) == want)
            return i;
        if (fallback == UINT32_MAX)
            fallback = i;
    }
    return fallback;
}

sleapc_status sleapc__vk_buffer_create(vk_context *ctx, VkDeviceSize size, bool host_visible,
                                       vk_buffer *out)
{
    memset(out, 0, sizeof *out);
    if (size < 16)
        size = 16; /* Vulkan refuses empty buffers */
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                              .size = size,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                              .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = vkCreateBuffer(ctx->dev, &bci, NULL, &out->buf);
    if (r != VK_SUCCESS) {
        out->buf = VK_NULL_HANDLE;
        return sleapc__fail(SLEAPC_ERR_NOMEM, "vulkan: buffer of %llu bytes: %s",
                            (unsigned long long)size, sleapc__vk_result_str(r));
    }
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(ctx->dev, out->buf, &req);
    VkMemoryPropertyFlags need =
        host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                     : 0;
    VkMemoryPropertyFlags want =
        host_visible ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    uint32_t type = memory_type(ctx, req.memoryTypeBits, need, want);
    if (type == UINT32_MAX) {
        sleapc__vk_buffer_destroy(ctx, out);
        return sleapc__fail(SLEAPC_ERR_UNSUPPORTED, "vulkan: no memory type for a %s buffer",
                            host_visible ? "host-visible" : "device");
    }
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .allocationSize = req.size,
                                .memoryTypeIndex = type};
    r = vkAllocateMemory(ctx->dev, &mai, NULL, &out->mem);
    if (r == VK_SUCCESS)
        r = vkBindBufferMemory(ctx->dev, out->buf, out->mem, 0);
    else
        out->mem = VK_NULL_HANDLE;
    if (r == VK_SUCCESS && host_visible)
        r = vkMapMemory(ctx->dev, out->mem, 0, VK_WHOLE_SIZE, 0, &out->map);
    if (r != VK_SUCCESS) {
        sleapc__vk_buffer_destroy(ctx, out);
        return sleapc__fail(SLEAPC_ERR_NOMEM, "vulkan: %llu bytes of %s memory: %s",
                            (unsigned long long)size, host_visible ? "host-visible" : "device",
                            sleapc__vk_result_str(r));
    }
    out->size = size;
    return SLEAPC_OK;
}

void sleapc__vk_buffer_destroy(vk_context *ctx, vk_buffer *b)
{
    if (b->map)
        vkUnmapMemory(ctx->dev, b->mem);
    if (b->buf)
        vkDestroyBuffer(ctx->dev, b->buf, NULL);
    if (b->mem)
        vkFreeMemory(ctx->dev, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

sleapc_status sleapc__vk_run_error(const vk_context *ctx, VkResult r)
{
    return sleapc__fail(r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY
                            ? SLEAPC_ERR_NOMEM
                            : SLEAPC_ERR_BACKEND,
                        "vulkan: run on %s: %s", ctx->props.deviceName, sleapc__vk_result_str(r));
}

sleapc_status sleapc__vk_submit_wait(vk_context *ctx, VkCommandBuffer cmd, VkFence fence)
{
    return sleapc__vk_submit_wait_n(ctx, &cmd, 1, fence);
}

sleapc_status sleapc__vk_submit_wait_n(vk_context *ctx, const VkCommandBuffer *cmds, uint32_t n,
                                       VkFence fence)
{
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = n, .pCommandBuffers = cmds};
    VkResult r = vkQueueSubmit(ctx->queue, 1, &si, fence);
    return r == VK_SUCCESS ? sleapc__vk_fence_wait(ctx, fence) : sleapc__vk_run_error(ctx, r);
}

sleapc_status sleapc__vk_fence_wait(vk_context *ctx, VkFence fence)
{
    VkResult r = vkWaitForFences(ctx->dev, 1, &fence, VK_TRUE, UINT64_MAX);
    if (r == VK_SUCCESS)
        r = vkResetFences(ctx->dev, 1, &fence);
    if (r != VK_SUCCESS)
        return sleapc__vk_run_error(ctx, r);
    /* Under SLEAPC_VULKAN_VALIDATION a message is a failure, so that every
     * test run with the layer on checks it stays silent. */
    int64_t messages = 0;
    sleapc__vulkan_validation_stats(NULL, &messages);
    if (messages > 0)
        return sleapc__fail(SLEAPC_ERR_BACKEND,
                            "vulkan: the validation layer reported %lld message%s (logged as "
                            "warnings)",
                            (long long)messages, messages == 1 ? "" : "s");
    return SLEAPC_OK;
}

sleapc_status sleapc__vk_buffer_upload(vk_context *ctx, vk_buffer *dst, const void *data,
                                       VkDeviceSize size)
{
    if (dst->map) {
        memcpy(dst->map, data, (size_t)size);
        return SLEAPC_OK;
    }
    vk_buffer staging;
    sleapc_status st = sleapc__vk_buffer_create(ctx, size, true, &staging);
    if (st)
        return st;
    memcpy(staging.map, data, (size_t)size);
    VkCommandBuffer cmd = VK_NULL_HANDLE;
    VkFence fence = VK_NULL_HANDLE;
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = ctx->cmd_pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = vkAllocateCommandBuffers(ctx->dev, &cai, &cmd);
    if (r == VK_SUCCESS)
        r = vkCreateFence(ctx->dev, &fci, NULL, &fence);
    if (r == VK_SUCCESS)
        r = vkBeginCommandBuffer(cmd, &bi);
    if (r == VK_SUCCESS) {
        VkBufferCopy region = {.size = size};
        vkCmdCopyBuffer(cmd, staging.buf, dst->buf, 1, &region);
        r = vkEndCommandBuffer(cmd);
    }
    st = r == VK_SUCCESS
             ? sleapc__vk_submit_wait(ctx, cmd, fence)
             : sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: upload: %s", sleapc__vk_result_str(r));
    if (fence)
        vkDestroyFence(ctx->dev, fence, NULL);
    if (cmd)
        vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1, &cmd);
    sleapc__vk_buffer_destroy(ctx, &staging);
    return st;
}
