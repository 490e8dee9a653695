/* Device peak finding in the plan (vulkan_impl.h's vk_peaks): the buffer the
 * host reads the peaks from, its descriptor set (binding 0 the peaks, 1 the
 * head's maps) and the dispatch of shaders/peaks_global.comp, one workgroup
 * per (sample, channel) map. */
#include "backends/vulkan/vulkan_impl.h"
#include "core/error.h"

sleapc_status sleapc__vk_peaks_alloc(vk_context *ctx, const vk_pipelines *pl,
                                     const sleapc_graph *g, vk_plan *p)
{
    const int64_t *s = p->shapes[g->outputs[p->peaks.output].node];
    int64_t maps = s[0] * s[1];
    if (s[2] == 0 || maps > ctx->props.limits.maxComputeWorkGroupCount[0] || s[2] * s[3] > INT32_MAX)
        return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                            "vulkan: peaks of %lld maps of %lld x %lld are too many for %s",
                            (long long)maps, (long long)s[2], (long long)s[3],
                            ctx->props.deviceName);
    sleapc_status st = sleapc__vk_buffer_create(ctx, (VkDeviceSize)maps * 3 * sizeof(float), true,
                                                &p->peaks.buf);
    if (st)
        return st;
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = p->desc_pool,
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &pl->set_layout};
    VkResult r = vkAllocateDescriptorSets(ctx->dev, &ai, &p->peaks.set);
    if (r != VK_SUCCESS)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: peaks descriptor set: %s",
                            sleapc__vk_result_str(r));
    /* Bindings 2-4 are unused: the head's buffer stands in for them. */
    vk_view head = p->node[g->outputs[p->peaks.output].node];
    vk_view views[VK_N_BINDINGS] = {{p->peaks.buf.buf, 0, VK_WHOLE_SIZE}, head, head, head, head};
    sleapc__vk_set_write_views(ctx, p->peaks.set, views);
    return SLEAPC_OK;
}

void sleapc__vk_peaks_record(VkCommandBuffer cmd, const vk_pipelines *pl,
                             const sleapc_graph *g, const vk_plan *p)
{
    const int64_t *s = p->shapes[g->outputs[p->peaks.output].node];
    struct {
        int32_t maps, h, w, k;
        float thr;
    } pc = {(int32_t)(s[0] * s[1]), (int32_t)s[2], (int32_t)s[3], p->peaks.refine_k,
            p->peaks.threshold};
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->pipe[VK_K_PEAKS_GLOBAL]);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->layout, 0, 1,
                            &p->peaks.set, 0, NULL);
    vkCmdPushConstants(cmd, pl->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
    vkCmdDispatch(cmd, (uint32_t)pc.maps, 1, 1);
}
