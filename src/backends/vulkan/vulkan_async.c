/* Two plans in turn (vulkan_async.h). Each plan's recorded command buffer
 * and buffers belong to it alone (the weights, read only, are shared), so
 * two submissions need no barrier between them; a slot is filled again only
 * after its run was collected, so the host never writes a buffer the device
 * still reads. */
#include "backends/vulkan/vulkan_async.h"

#include <string.h>

#include "backends/vulkan/vulkan_input.h"
#include "core/error.h"

static vk_plan *slot(vk_async *a, vk_plan *first, int i)
{
    return i == 0 ? first : &a->spare;
}

sleapc_status sleapc__vk_async_submit(vk_context *ctx, vk_async *a, vk_plan *first,
                                      const sleapc_tensor *x, int in_c, bool as_is)
{
    vk_plan *p = slot(a, first, a->next);
    if (a->n >= 2 || !p->cmd)
        return sleapc__fail(SLEAPC_ERR_STATE, "vulkan: submit: %s",
                            a->n >= 2 ? "two runs in flight" : "no plan");
    sleapc_status st = sleapc__vk_input_fill(p->in.map, x, in_c, as_is);
    if (st)
        return st;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
                       .commandBufferCount = 1,
                       .pCommandBuffers = &p->cmd};
    VkResult r = vkQueueSubmit(ctx->queue, 1, &si, p->fence);
    if (r != VK_SUCCESS)
        return sleapc__vk_run_error(ctx, r);
    a->next ^= 1;
    a->n++;
    return SLEAPC_OK;
}

sleapc_status sleapc__vk_async_collect(vk_context *ctx, vk_async *a, vk_plan *first, vk_plan **done)
{
    *done = NULL;
    if (a->n == 0)
        return sleapc__fail(SLEAPC_ERR_STATE, "vulkan: collect: nothing in flight");
    vk_plan *p = slot(a, first, (a->next + a->n) & 1); /* the oldest: n slots back */
    a->n--;
    sleapc_status st = sleapc__vk_fence_wait(ctx, p->fence);
    if (st)
        return st;
    *done = p;
    return SLEAPC_OK;
}

void sleapc__vk_async_reset(vk_context *ctx, const sleapc_graph *g, vk_async *a, vk_plan *first)
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
