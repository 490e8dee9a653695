/* One compute pipeline per embedded shader, all over one descriptor set
 * layout and one push-constant range, so a node's descriptor set fits any of
 * them (a LINEAR node's set also serves its softmax). */
#include <string.h>

#include "backends/vulkan/vulkan_impl.h"
#include "backends/vulkan/vulkan_shaders.h"
#include "core/error.h"

typedef struct shader_code {
    const uint32_t *words;
    const size_t *n_words;
    const char *name;
} shader_code;

/* The float32 shader of kernel k, or its fp16-storage variant. */
static shader_code shader_of(vk_kernel k, bool fp16)
{
#define CODE(name)                                                                            \
    (fp16 ? (shader_code){sleapc__vk_spv_##name##_f16, &sleapc__vk_spv_##name##_f16_words,      \
                          #name "_f16"}                                                       \
          : (shader_code){sleapc__vk_spv_##name, &sleapc__vk_spv_##name##_words, #name})
    switch (k) {
    case VK_K_CONV2D: return CODE(conv2d);
    case VK_K_CONVT: return CODE(conv_transpose2d);
    case VK_K_MAXPOOL2: return CODE(maxpool2);
    case VK_K_RESIZE: return CODE(resize_bilinear);
    case VK_K_GLOBAL_MAXPOOL: return CODE(global_maxpool);
    case VK_K_LINEAR: return CODE(linear);
    case VK_K_SOFTMAX: return CODE(softmax);
    case VK_K_PATCHES: return CODE(patches);
    case VK_K_DWCONV: return CODE(dwconv);
    case VK_K_LAYERNORM: return CODE(layernorm);
    case VK_K_SCALE_ADD: return CODE(scale_add);
    case VK_K_INPUT_U8: return CODE(input_u8);
    case VK_K_PEAKS_GLOBAL: return CODE(peaks_global);
    case VK_K_WINDOW_ATTENTION: return CODE(window_attention);
    case VK_K_PAF_SCORE: return CODE(paf_score);
    case VK_K_WINDOW_W: return CODE(window_w);
    case VK_K_WINDOW_H: return CODE(window_h);
    case VK_K_FRAMES_MATCH: return CODE(frames_match);
    case VK_K_PEAKS_LOCAL_COUNT: return CODE(peaks_local_count);
    case VK_K_PEAKS_LOCAL_SCAN: return CODE(peaks_local_scan);
    case VK_K_PEAKS_LOCAL_WRITE: return CODE(peaks_local_write);
    case VK_K_SAMPLE_CELLS: return CODE(sample_cells);
    case VK_K_GLOBAL_GEMPOOL: return CODE(global_gempool);
    case VK_K_L2NORM: return CODE(l2norm);
    case VK_K_COUNT: break;
    }
#undef CODE
    return (shader_code){0};
}

/* The fp16-arithmetic variant of kernel k where it has one (the
 * convolutions), else its fp16-storage code as given. */
static shader_code fp16_math_of(vk_kernel k, shader_code storage)
{
#define CODE(name)                                                                            \
    ((shader_code){sleapc__vk_spv_##name##_f16m, &sleapc__vk_spv_##name##_f16m_words,           \
                   #name "_f16m"})
    switch (k) {
    case VK_K_CONV2D: return CODE(conv2d);
    case VK_K_DWCONV: return CODE(dwconv);
    case VK_K_LINEAR: return CODE(linear);
    default: return storage;
    }
#undef CODE
}

static sleapc_status pipeline_create(vk_context *ctx, vk_pipelines *p, vk_kernel k, bool fp16)
{
    shader_code code = shader_of(k, fp16);
    if (fp16 && ctx->fp16_math)
        code = fp16_math_of(k, code);
    VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                    .codeSize = *code.n_words * sizeof(uint32_t),
                                    .pCode = code.words};
    VkShaderModule mod = VK_NULL_HANDLE;
    VkResult r = vkCreateShaderModule(ctx->dev, &mci, NULL, &mod);
    if (r == VK_SUCCESS) {
        VkComputePipelineCreateInfo ci = {
            .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
            .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                      .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                      .module = mod,
                      .pName = "main"},
            .layout = p->layout};
        r = vkCreateComputePipelines(ctx->dev, VK_NULL_HANDLE, 1, &ci, NULL, &p->pipe[k]);
        if (r != VK_SUCCESS)
            p->pipe[k] = VK_NULL_HANDLE;
        vkDestroyShaderModule(ctx->dev, mod, NULL);
    }
    if (r != VK_SUCCESS)
        return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: shader %s on %s: %s", code.name,
                            ctx->props.deviceName, sleapc__vk_result_str(r));
    return SLEAPC_OK;
}

sleapc_status sleapc__vk_pipelines_create(vk_context *ctx, bool fp16, vk_pipelines *out)
{
    memset(out, 0, sizeof *out);
    VkDescriptorSetLayoutBinding b[VK_N_BINDINGS];
    for (uint32_t i = 0; i < VK_N_BINDINGS; i++)
        b[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                              .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                              .descriptorCount = 1,
                                              .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo dci = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = VK_N_BINDINGS,
        .pBindings = b};
    VkResult r = vkCreateDescriptorSetLayout(ctx->dev, &dci, NULL, &out->set_layout);
    if (r != VK_SUCCESS) {
        out->set_layout = VK_NULL_HANDLE;
        return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: descriptor set layout: %s",
                            sleapc__vk_result_str(r));
    }
    VkPushConstantRange pc = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = VK_PUSH_BYTES};
    VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                      .setLayoutCount = 1,
                                      .pSetLayouts = &out->set_layout,
                                      .pushConstantRangeCount = 1,
                                      .pPushConstantRanges = &pc};
    r = vkCreatePipelineLayout(ctx->dev, &lci, NULL, &out->layout);
    if (r != VK_SUCCESS) {
        out->layout = VK_NULL_HANDLE;
        sleapc__vk_pipelines_destroy(ctx, out);
        return sleapc__fail(SLEAPC_ERR_BACKEND, "vulkan: pipeline layout: %s",
                            sleapc__vk_result_str(r));
    }
    for (int k = 0; k < VK_K_COUNT; k++) {
        sleapc_status st = pipeline_create(ctx, out, (vk_kernel)k, fp16);
        if (st) {
            sleapc__vk_pipelines_destroy(ctx, out);
            return st;
        }
    }
    return SLEAPC_OK;
}

void sleapc__vk_pipelines_destroy(vk_context *ctx, vk_pipelines *p)
{
    for (int k = 0; k < VK_K_COUNT; k++)
        if (p->pipe[k])
            vkDestroyPipeline(ctx->dev, p->pipe[k], NULL);
    if (p->layout)
        vkDestroyPipelineLayout(ctx->dev, p->layout, NULL);
    if (p->set_layout)
        vkDestroyDescriptorSetLayout(ctx->dev, p->set_layout, NULL);
    memset(p, 0, sizeof *p);
}

void sleapc__vk_set_write_views(vk_context *ctx, VkDescriptorSet set,
                                const vk_view views[VK_N_BINDINGS])
{
    VkDescriptorBufferInfo info[VK_N_BINDINGS];
    VkWriteDescriptorSet wr[VK_N_BINDINGS];
    for (int k = 0; k < VK_N_BINDINGS; k++) {
        info[k] = (VkDescriptorBufferInfo){
            .buffer = views[k].buf, .offset = views[k].off, .range = views[k].size};
        wr[k] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                       .dstSet = set,
                                       .dstBinding = (uint32_t)k,
                                       .descriptorCount = 1,
                                       .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                       .pBufferInfo = &info[k]};
    }
    vkUpdateDescriptorSets(ctx->dev, VK_N_BINDINGS, wr, 0, NULL);
}

void sleapc__vk_set_write(vk_context *ctx, VkDescriptorSet set, const VkBuffer bufs[VK_N_BINDINGS])
{
    vk_view views[VK_N_BINDINGS];
    for (int k = 0; k < VK_N_BINDINGS; k++)
        views[k] = (vk_view){bufs[k], 0, VK_WHOLE_SIZE};
    sleapc__vk_set_write_views(ctx, set, views);
}
