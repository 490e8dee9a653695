/* The network's input cut from uploaded uint8 frames on the device (the
 * contract's upload_frames and forward_windows, backend.h): the frames stay
 * in a mapped buffer until the next upload; a run records two dispatches,
 * shaders/window_w.comp (cut each window, resize its rows) and
 * shaders/window_h.comp (resize its columns, round to uint8, pad, normalise
 * into node 0), and submits them ahead of the plan's commands, whose input
 * shader then leaves node 0 as it is (VK_INPUT_MODE_NONE). The resize's taps
 * and weights are the host's (core/resize_aa.h), computed once per run.
 * Windows that ask for the size matcher's resize are cut from the frames
 * size-matched first on the device (window_w.comp on whole frames, then
 * shaders/frames_match.comp: uint8, kept until the next upload or another
 * size matcher); a channel conversion happens as window_w.comp reads a
 * pixel. */
#ifndef SLEAPC_BACKENDS_VULKAN_WINDOW_H
#define SLEAPC_BACKENDS_VULKAN_WINDOW_H

#include "backends/vulkan/vulkan_impl.h"

typedef struct vk_windows {
    vk_buffer frames;   /* host-visible: the last upload, uint8 */
    int64_t shape[4];   /* its (F, C, H, W); F 0: none yet */
    vk_buffer geom;     /* host-visible: the table v / 255.0f, samples, taps */
    vk_buffer tmp;      /* the rows resized: (n, C, win_h, rs_w) float32 */
    vk_buffer sized;    /* the frames size-matched: (F, c, sized_h, sized_w) uint8 */
    int64_t sized_of[5]; /* its c, match_h, match_w, sized_h, sized_w; c 0: none */
    int64_t *bounds;    /* host scratch for an axis's taps */
    size_t bounds_cap;  /* int64 pairs */
    VkDescriptorPool pool;
    VkDescriptorSet set_w, set_h, set_mw, set_mh; /* windows; size matcher */
    VkCommandBuffer cmd;
} vk_windows;

/* Copy frames (F, C, H, W) uint8 into the frames buffer (grown as needed). */
sleapc_status sleapc__vk_windows_upload(vk_context *ctx, vk_windows *vw,
                                        const sleapc_tensor *frames);

/* Whether w can be cut from the upload into g's input: SLEAPC_ERR_UNSUPPORTED
 * (no error recorded) for channels or sizes the shaders do not take,
 * SLEAPC_ERR_INVALID_ARG for no upload or a frame index out of range. */
sleapc_status sleapc__vk_windows_check(const vk_context *ctx, const vk_windows *vw,
                                       const sleapc_graph *g, const sleapc_backend_windows *w);

/* Cut w (checked) into node 0 of p, planned for (w->n, in_c, out_h, out_w),
 * and run p's commands after it; waits. */
sleapc_status sleapc__vk_windows_run(vk_context *ctx, const vk_pipelines *pl, vk_windows *vw,
                                     const sleapc_graph *g, vk_plan *p,
                                     const sleapc_backend_windows *w);

/* Accepts a zeroed one. */
void sleapc__vk_windows_destroy(vk_context *ctx, vk_windows *vw);

#endif
