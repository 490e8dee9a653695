/* The input buffer's header and contents (vulkan_input.h). */
#include "backends/vulkan/vulkan_input.h"

#include <string.h>

#include "model/graph_input.h"

uint64_t sleapc__vk_input_bytes(const int64_t shape[4])
{
    return (uint64_t)VK_INPUT_DATA * 4u +
           (uint64_t)(shape[0] * shape[1] * shape[2] * shape[3]) * sizeof(float);
}

void sleapc__vk_input_init(void *map, uint64_t bytes, int in_c)
{
    memset(map, 0, (size_t)bytes);
    float *table = map;
    for (int v = 0; v < 256; v++)
        table[v] = (float)v / 255.0f; /* graph_input.c's rounding */
    uint32_t *words = map;
    words[VK_INPUT_MODE] = 0;
    words[VK_INPUT_SRC_C] = (uint32_t)in_c;
}

sleapc_status sleapc__vk_input_fill(void *map, const sleapc_tensor *x, int in_c, bool as_is)
{
    uint32_t *words = map;
    if (x->dtype == SLEAPC_DTYPE_U8 && !as_is) {
        words[VK_INPUT_MODE] = 0;
        words[VK_INPUT_SRC_C] = (uint32_t)x->shape[1];
        memcpy(words + VK_INPUT_DATA, x->data,
               (size_t)(x->shape[0] * x->shape[1] * x->shape[2] * x->shape[3]));
        return SLEAPC_OK;
    }
    words[VK_INPUT_MODE] = 1;
    return sleapc__graph_input_prepare_as(x, in_c, as_is, (float *)(words + VK_INPUT_DATA));
}
