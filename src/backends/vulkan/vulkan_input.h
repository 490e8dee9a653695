/* The mapped input buffer the network's first shader (shaders/input_u8.comp)
 * reads: a header, then the batch. uint8 frames go up as they are (a quarter
 * of the float32 bytes) and are normalised and channel-converted on the
 * device; float32 inputs (legacy models) are prepared on the host, since
 * sleap-nn divides them by 255 only when the batch's maximum exceeds 1, and
 * the shader copies them; so are the inputs of a graph that takes them as
 * they are. */
#ifndef SLEAPC_BACKENDS_VULKAN_INPUT_H
#define SLEAPC_BACKENDS_VULKAN_INPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "sleapc/tensor.h"

/* Header words: [0, 256) the table v / 255.0f as the host rounds it, then
 * the mode (0 uint8, 1 float32, VK_INPUT_MODE_NONE: node 0 was filled
 * before, by vulkan_window.h's shaders) and the source channel count; the
 * data starts at word VK_INPUT_DATA. */
#define VK_INPUT_MODE 256
#define VK_INPUT_SRC_C 257
#define VK_INPUT_DATA 272
#define VK_INPUT_MODE_NONE 2

/* Bytes of the input buffer for a (B, in_c, H, W) model input: the header
 * and room for its float32 values (which also holds any uint8 source of 1
 * or 3 channels). */
uint64_t sleapc__vk_input_bytes(const int64_t shape[4]);

/* Write the header for uint8 frames of in_c channels and zero the data
 * (a warmup runs on zeros). */
void sleapc__vk_input_init(void *map, uint64_t bytes, int in_c);

/* Put x (checked by sleapc__graph_input_check) into the mapped buffer.
 * as_is (the graph's input_as_is: an embedding model's standardized crop):
 * prepared on the host, never divided by 255, whatever its type. */
sleapc_status sleapc__vk_input_fill(void *map, const sleapc_tensor *x, int in_c, bool as_is);

#endif
