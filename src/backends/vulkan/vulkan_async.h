/* The Vulkan backend's two-step forward (the contract's submit/collect):
 * two plans of one shape, the backend's own and a spare, used in turn, each
 * with its own buffers, command buffer and fence, so the host fills one
 * plan's input and reads the other's outputs while the device runs. The
 * spare is made at the first submit of a shape; a steady run then records
 * and allocates nothing. */
#ifndef SLEAPC_BACKENDS_VULKAN_ASYNC_H
#define SLEAPC_BACKENDS_VULKAN_ASYNC_H

#include "backends/vulkan/vulkan_impl.h"

typedef struct vk_async {
    vk_plan spare; /* slot 1 (slot 0: the backend's plan); shape all zero: none yet */
    int n;         /* submitted, not collected */
    int next;      /* the slot the next submit fills */
} vk_async;

/* Fill slot a->next's input with x and submit its commands; no wait. Both
 * plans must be made for x's shape and fewer than two in flight. */
sleapc_status sleapc__vk_async_submit(vk_context *ctx, vk_async *a, vk_plan *first,
                                      const sleapc_tensor *x, int in_c, bool as_is);
/* Wait for the oldest submitted run; *done: its plan, whose outputs are
 * read as a forward's are. A failed run is dropped all the same. */
sleapc_status sleapc__vk_async_collect(vk_context *ctx, vk_async *a, vk_plan *first,
                                       vk_plan **done);
/* Wait for every run in flight (their outputs dropped) and free the spare:
 * before the backend's plan changes, and at destroy. Accepts a zeroed one. */
void sleapc__vk_async_reset(vk_context *ctx, const sleapc_graph *g, vk_async *a,
                            vk_plan *first);

#endif
