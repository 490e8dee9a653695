/* What a device op of one dispatch outside the plan needs (PAF scores, a
 * head read at cells): one descriptor set, a command buffer and a fence,
 * made once. */
#include "backends/vulkan/vulkan_impl.h"

#include "core/error.h"

static sleapc_status oneshot_fail(const char *what, const char *part, VkResult r)
{
    return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: %s: %s: %s", what, part,
                        sleapc__vk_result_str(r));
}

sleapc_status sleapc__vk_oneshot_init(vk_context *ctx, const vk_pipelines *pl, const char *what,
                                      VkDescriptorPool *pool, VkDescriptorSet *set,
                                      VkCommandBuffer *cmd, VkFence *fence)
{
    if (*fence)
        return SLEAPC_OK;
    VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                 .descriptorCount = VK_N_BINDINGS};
    VkDescriptorPoolCreateInfo dpci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                       .maxSets = 1,
                                       .poolSizeCount = 1,
                                       .pPoolSizes = &size};
    VkResult r = vkCreateDescriptorPool(ctx->dev, &dpci, NULL, pool);
    if (r != VK_SUCCESS) {
        *pool = VK_NULL_HANDLE;
        return oneshot_fail(what, "descriptor pool", r);
    }
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = *pool,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &pl->set_layout};
    r = vkAllocateDescriptorSets(ctx->dev, &ai, set);
    if (r != VK_SUCCESS)
        return oneshot_fail(what, "descriptor set", r);
    VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                       .commandPool = ctx->cmd_pool,
                                       .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                       .commandBufferCount = 1};
    r = vkAllocateCommandBuffers(ctx->dev, &cai, cmd);
    if (r != VK_SUCCESS) {
        *cmd = VK_NULL_HANDLE;
        return oneshot_fail(what, "command buffer", r);
    }
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = vkCreateFence(ctx->dev, &fci, NULL, fence);
    if (r != VK_SUCCESS) {
        *fence = VK_NULL_HANDLE;
        return oneshot_fail(what, "fence", r);
    }
    return SLEAPC_OK;
}
