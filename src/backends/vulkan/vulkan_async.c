/* Two plans in turn (vulkan_async.h). Each plan's recorded command buffer
 * and buffers belong to it alone (the weights, read only, are shared), so
 * two submissions need no barrier between them; a slot is filled again only
 * after its run was collected, so the host never writes a buffer the device
 * still reads. */
#include "backends/vulkan/vulkan_async.h"

#include <string.h>

#include "backends/vulkan/vulkan_backend.h"
#include "backends/vulkan/vulkan_input.h"
#include "core/error.h"

static vk_plan *slot(vk_async *a, vk_plan *first, int i)
{
    return i == 0 ? first : &a->spare;
}

static sleapc_status run_error(const vk_context *ctx, VkResult r)
{
    return sleapc__fail(r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY
                            ? SLEAPC_ERR_NOMEM
                            : SLEAPC_ERR_BACKEND,
                        "vulkan: run on %s: %s", ctx->props.deviceName,
                        sleapc__vk_result_str(r));
}

sleapc_status sleapc__vk_async_submit(vk_context *ctx, vk_async *a, vk_plan *first,
                                      const sleapc_tensor *x, int in_c)
{
    vk_plan *p = slot(a, first, a->next);
    if (a->n >= 2 || !p->cmd)
        return sleapc__fail(SLEAPC_ERR_STATE, "vulkan: submit: %s",
                            a->n >= 2 ? "two runs in flight" : "no plan");
    sleapc_status st = sleapc__vk_input_fill(p->in.map, x, in_c);
    if (st)
        return st;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &p->cmd};
    VkResult r = vkQueueSubmit(ctx->queue, 1, &si, p->fence);
    if (r != VK_SUCCESS)
        return run_error(ctx, r);
    a->next ^= 1;
    a->n++;
    return SLEAPC_OK;
}

sleapc_status sleapc__vk_async_collect(vk_context *ctx, vk_async *a, vk_plan *first,
                                       vk_plan **done)
{
    *done = NULL;
    if (a->n == 0)
        return sleapc__fail(SLEAPC_ERR_STATE, "vulkan: collect: nothing in flight");
    vk_plan *p = slot(a, first, (a->next + a->n) & 1); /* the oldest: n slots back */
    a->n--;
    VkResult r = vkWaitForFences(ctx->dev, 1, &p->fence, VK_TRUE, UINT64_MAX);
    if (r == VK_SUCCESS)
        r = vkResetFences(ctx->dev, 1, &p->fence);
    if (r != VK_SUCCESS)
        return run_error(ctx, r);
    /* As sleapc__vk_submit_wait: under SLEAPC_VULKAN_VALIDATION a message fails. */
    int64_t messages = 0;
    sleapc__vulkan_validation_stats(NULL, &messages);
    if (messages > 0)
        return sleapc__fail(SLEAPC_ERR_BACKEND,
                            "vulkan: the validation layer reported %lld message%s (logged as "
                            "warnings)",
                            (long long)messages, messages == 1 ? "" : "s");
    *done = p;
    return SLEAPC_OK;
}

void sleapc__vk_async_reset(vk_context *ctx, const sleapc_graph *g, vk_async *a,
                            vk_plan *first)
{
    if (ctx->dev && a->n > 0) {
        vkQueueWaitIdle(ctx->queue);
        /* The dropped runs' fences are signalled: unsignal them for the
         * next submit of their plan. */
        for (int k = a->n; k > 0; k--) {
            vk_plan *p = slot(a, first, (a->next + k) & 1);
            if (p->fence)
                vkResetFences(ctx->dev, 1, &p->fence);
        }
    }
    if (ctx->dev)
        sleapc__vk_plan_destroy(ctx, g, &a->spare);
    a->n = 0;
    a->next = 0;
}
