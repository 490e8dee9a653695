/* The Vulkan backend: the graph IR run by compute shaders on a GPU (NVIDIA,
 * AMD, Intel; Apple through MoltenVK) or on a software Vulkan device (Mesa's
 * lavapipe), fp32. vulkan.h stays inside this folder. */
#ifndef SLEAPC_BACKENDS_VULKAN_BACKEND_H
#define SLEAPC_BACKENDS_VULKAN_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include "backends/backend.h"

extern const struct sleapc_backend_factory sleapc__vulkan_factory;

/* SLEAPC_VULKAN_VALIDATION=1 in the environment turns on the Khronos
 * validation layer for every Vulkan backend created afterwards, with a
 * messenger that counts its warnings and errors (and logs them). *enabled:
 * whether a backend has run with the layer; *messages: warnings and errors
 * reported so far in this process. */
void sleapc__vulkan_validation_stats(bool *enabled, int64_t *messages);

/* Runs of forward_windows (backend.h) in this process so far: *resized,
 * those that resized their windows; *cut, those whose windows were not the
 * whole frames (top-down crops). */
void sleapc__vulkan_window_stats(int64_t *resized, int64_t *cut);
/* The same: *matched, those cut from frames size-matched on the device;
 * *converted, those whose channels were converted there. */
void sleapc__vulkan_window_prep_stats(int64_t *matched, int64_t *converted);

/* Maps (4-D outputs) the backends have copied down to the host in this
 * process so far, with forward's outputs or fetched (device_fetch_head),
 * and their bytes. */
void sleapc__vulkan_map_stats(int64_t *maps, int64_t *bytes);

/* Device memory of the activations in be's plan (one arena, as the shared
 * planner sized it; 0: no plan yet), and in *align the offset alignment it
 * was planned at. */
int64_t sleapc__vulkan_activation_bytes(const sleapc_backend *be, int64_t *align);

#endif
