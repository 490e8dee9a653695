/* Device PAF line scoring (the contract's device_paf_scores): the candidate
 * lines go up into host-visible buffers, shaders/paf_score.comp scores them
 * against the PAF head's buffer of the last forward (still on the device) in
 * one submission of its own, and only the scores come back. */
#ifndef SLEAPC_BACKENDS_VULKAN_PAF_H
#define SLEAPC_BACKENDS_VULKAN_PAF_H

#include "backends/vulkan/vulkan_impl.h"

/* paf_score.comp's per-line sample buffer (its MAX_POINTS). */
#define VK_PAF_MAX_POINTS 64

/* Buffers grown on demand, kept from call to call; zeroed: none yet. */
typedef struct vk_paf {
    vk_buffer scores, lines, t;
    int64_t cap; /* lines the buffers hold */
    int t_cap;   /* points t holds */
    VkDescriptorPool pool;
    VkDescriptorSet set;
    VkCommandBuffer cmd;
    VkFence fence;
} vk_paf;

/* Score lines against head, a (B, 2E, H, W) node's range of the plan's
 * arena, of shape `shape` (elements of the pipelines' storage type). SLEAPC_ERR_UNSUPPORTED, with
 * nothing recorded, for what the shader cannot score as the host does (too
 * many points, too large a head); SLEAPC_ERR_INVALID_ARG for a sample or
 * edge out of range. */
sleapc_status sleapc__vk_paf_score(vk_context *ctx, const vk_pipelines *pl, vk_paf *pf,
                                   vk_view head, const int64_t shape[4],
                                   const sleapc_backend_paf_lines *lines, float *scores);
/* Accepts a zeroed vk_paf; leaves it zeroed. */
void sleapc__vk_paf_destroy(vk_context *ctx, vk_paf *pf);

#endif
