/* A head's maps read at cells on the device (the contract's
 * device_sample_head): the cells go up into a host-visible buffer,
 * shaders/sample_cells.comp copies the values under them, every channel,
 * from the head's buffer of the last forward (still on the device) in one
 * submission of its own, and only those values come back. */
#ifndef SLEAPC_BACKENDS_VULKAN_SAMPLE_H
#define SLEAPC_BACKENDS_VULKAN_SAMPLE_H

#include "backends/vulkan/vulkan_impl.h"

/* Buffers grown on demand, kept from call to call; zeroed: none yet. */
typedef struct vk_sample {
    vk_buffer values, cells;
    int64_t cap; /* values (cells x channels) the buffers hold */
    VkDescriptorPool pool;
    VkDescriptorSet set;
    VkCommandBuffer cmd;
    VkFence fence;
} vk_sample;

/* values (n, shape[1]): head, a (B, C, H, W) node's range of the plan's
 * arena, of shape `shape` (elements of the pipelines' storage type), at
 * cells (n, 3) (sample, y, x), widened to float32. SLEAPC_ERR_UNSUPPORTED, with nothing recorded, for
 * sizes the shader cannot index; SLEAPC_ERR_INVALID_ARG for a cell outside
 * the maps. */
sleapc_status sleapc__vk_sample(vk_context *ctx, const vk_pipelines *pl, vk_sample *sm,
                                vk_view head, const int64_t shape[4], int64_t n,
                                const int32_t (*cells)[3], float *values);
/* Accepts a zeroed vk_sample; leaves it zeroed. */
void sleapc__vk_sample_destroy(vk_context *ctx, vk_sample *sm);

#endif
