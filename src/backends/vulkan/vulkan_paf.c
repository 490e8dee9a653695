/* Device PAF line scoring (vulkan_paf.h): pack the lines, point the
 * descriptor set at the head and the line buffers, record and submit one
 * dispatch of paf_score.comp, copy the scores out. */
#include "backends/vulkan/vulkan_paf.h"

#include <string.h>

#include "core/error.h"

/* paf_score.comp's Line: sample, edge, then the two end points. */
typedef struct paf_line {
    int32_t sample, edge;
    float sx, sy, dx, dy;
} paf_line;

#define LOCAL_SIZE 64 /* paf_score.comp's local_size_x */

static sleapc_status vk_fail(VkResult r, const char *what)
{
    return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: PAF scores: %s: %s", what,
                        sleapc__vk_result_str(r));
}

/* Grow the host-visible buffers to n lines and n_points points. */
static sleapc_status reserve(vk_context *ctx, vk_paf *pf, int64_t n, int n_points)
{
    sleapc_status st = SLEAPC_OK;
    if (n > pf->cap) {
        if (pf->cap <= INT64_MAX / 2 && 2 * pf->cap > n)
            n = 2 * pf->cap; /* candidate counts vary frame to frame */
        sleapc__vk_buffer_destroy(ctx, &pf->scores);
        sleapc__vk_buffer_destroy(ctx, &pf->lines);
        pf->cap = 0;
        st = sleapc__vk_buffer_create(ctx, (VkDeviceSize)n * sizeof(float), true, &pf->scores);
        if (!st)
            st =
                sleapc__vk_buffer_create(ctx, (VkDeviceSize)n * sizeof(paf_line), true, &pf->lines);
        if (!st)
            pf->cap = n;
    }
    if (!st && n_points > pf->t_cap) {
        sleapc__vk_buffer_destroy(ctx, &pf->t);
        pf->t_cap = 0;
        st = sleapc__vk_buffer_create(ctx, (VkDeviceSize)VK_PAF_MAX_POINTS * sizeof(float), true,
                                      &pf->t);
        if (!st)
            pf->t_cap = VK_PAF_MAX_POINTS;
    }
    return st;
}

static sleapc_status pack(const sleapc_backend_paf_lines *ln, const int64_t shape[4], paf_line *dst)
{
    for (int64_t c = 0; c < ln->n; c++) {
        if (ln->sample[c] < 0 || ln->sample[c] >= shape[0] || ln->edge[c] < 0 ||
            2 * (int64_t)ln->edge[c] + 1 >= shape[1])
            return sleapc__fail(SLEAPC_ERR_INVALID_ARG,
                                "vulkan: PAF scores: line %lld: sample %d or edge %d out of "
                                "range for a (%lld, %lld) head",
                                (long long)c, (int)ln->sample[c], (int)ln->edge[c],
                                (long long)shape[0], (long long)shape[1]);
        dst[c] = (paf_line){ln->sample[c], ln->edge[c],   ln->src[c][0],
                            ln->src[c][1], ln->dst[c][0], ln->dst[c][1]};
    }
    return SLEAPC_OK;
}

static void bind(vk_context *ctx, vk_paf *pf, vk_view head)
{
    vk_view t = {pf->t.buf, 0, VK_WHOLE_SIZE};
    const vk_view views[VK_N_BINDINGS] = {{pf->scores.buf, 0, VK_WHOLE_SIZE}, head,
                                          {pf->lines.buf, 0, VK_WHOLE_SIZE}, t, t};
    sleapc__vk_set_write_views(ctx, pf->set, views);
}

static bool power_of_two(int v)
{
    return v > 0 && (v & (v - 1)) == 0;
}

static VkResult record(const vk_pipelines *pl, vk_paf *pf, const int64_t shape[4],
                       const sleapc_backend_paf_lines *ln)
{
    VkResult r = vkResetCommandBuffer(pf->cmd, 0);
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    if (r == VK_SUCCESS)
        r = vkBeginCommandBuffer(pf->cmd, &bi);
    if (r != VK_SUCCESS)
        return r;
    /* The forward's writes of the head (an earlier submission) before the
     * reads here; the scores' writes before the host reads them. */
    VkMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                              .srcAccessMask =
                                  VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_SHADER_READ_BIT};
    vkCmdPipelineBarrier(pf->cmd,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &before, 0, NULL, 0, NULL);
    struct {
        int32_t n, n_points, c, h, w, stride;
        float max_len, weight, inv_stride;
    } pc = {(int32_t)ln->n,
            ln->n_points,
            (int32_t)shape[1],
            (int32_t)shape[2],
            (int32_t)shape[3],
            ln->paf_stride,
            ln->max_edge_length,
            ln->dist_penalty_weight,
            power_of_two(ln->paf_stride) ? 1.0f / (float)ln->paf_stride : 0.0f};
    vkCmdBindPipeline(pf->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->pipe[VK_K_PAF_SCORE]);
    vkCmdBindDescriptorSets(pf->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl->layout, 0, 1, &pf->set, 0,
                            NULL);
    vkCmdPushConstants(pf->cmd, pl->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
    vkCmdDispatch(pf->cmd, (uint32_t)((ln->n + LOCAL_SIZE - 1) / LOCAL_SIZE), 1, 1);
    VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(pf->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                         0, 1, &after, 0, NULL, 0, NULL);
    return vkEndCommandBuffer(pf->cmd);
}

sleapc_status sleapc__vk_paf_score(vk_context *ctx, const vk_pipelines *pl, vk_paf *pf,
                                   vk_view head, const int64_t shape[4],
                                   const sleapc_backend_paf_lines *ln, float *scores)
{
    /* The shader indexes the head and the lines in 32 bits. */
    int64_t max_lines = (int64_t)ctx->props.limits.maxComputeWorkGroupCount[0] * LOCAL_SIZE;
    if (ln->n_points > VK_PAF_MAX_POINTS || shape[2] < 1 || shape[3] < 1 || shape[1] < 2 ||
        shape[0] * shape[1] > UINT32_MAX / (shape[2] * shape[3]) || ln->n > INT32_MAX ||
        ln->n > max_lines)
        return SLEAPC_ERR_UNSUPPORTED;
    sleapc_status st =
        sleapc__vk_oneshot_init(ctx, pl, "PAF scores", &pf->pool, &pf->set, &pf->cmd, &pf->fence);
    if (!st)
        st = reserve(ctx, pf, ln->n, ln->n_points);
    if (!st)
        st = pack(ln, shape, pf->lines.map);
    if (st)
        return st;
    memcpy(pf->t.map, ln->t, (size_t)ln->n_points * sizeof(float));
    bind(ctx, pf, head);
    VkResult r = record(pl, pf, shape, ln);
    if (r != VK_SUCCESS)
        return vk_fail(r, "record");
    st = sleapc__vk_submit_wait(ctx, pf->cmd, pf->fence);
    if (!st)
        memcpy(scores, pf->scores.map, (size_t)ln->n * sizeof(float));
    return st;
}

void sleapc__vk_paf_destroy(vk_context *ctx, vk_paf *pf)
{
    if (pf->fence)
        vkDestroyFence(ctx->dev, pf->fence, NULL);
    if (pf->cmd)
        vkFreeCommandBuffers(ctx->dev, ctx->cmd_pool, 1, &pf->cmd);
    if (pf->pool)
        vkDestroyDescriptorPool(ctx->dev, pf->pool, NULL);
    sleapc__vk_buffer_destroy(ctx, &pf->scores);
    sleapc__vk_buffer_destroy(ctx, &pf->lines);
    sleapc__vk_buffer_destroy(ctx, &pf->t);
    memset(pf, 0, sizeof *pf);
}
