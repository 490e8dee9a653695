/* The compute shaders (shaders/NAME.comp) as SPIR-V, compiled by glslc at build
 * time and embedded by cmake/SleapcEmbedSpirv.cmake into a generated C file:
 * one array of words per shader, named after its file; NAME_f16 is its
 * fp16-storage variant (compiled with SLEAPC_FP16, common.glsl), declared here
 * for the shaders that have one; NAME_f16m the fp16-arithmetic one of the
 * convolutions (SLEAPC_FP16_MATH too). */
#ifndef SLEAPC_BACKENDS_VULKAN_SHADERS_H
#define SLEAPC_BACKENDS_VULKAN_SHADERS_H

#include <stddef.h>
#include <stdint.h>

#define SLEAPC_VK_SHADER(name)                         \
    extern const uint32_t sleapc__vk_spv_##name[];     \
    extern const size_t sleapc__vk_spv_##name##_words;

SLEAPC_VK_SHADER(conv2d)
SLEAPC_VK_SHADER(conv_transpose2d)
SLEAPC_VK_SHADER(maxpool2)
SLEAPC_VK_SHADER(resize_bilinear)
SLEAPC_VK_SHADER(global_maxpool)
SLEAPC_VK_SHADER(linear)
SLEAPC_VK_SHADER(softmax)
SLEAPC_VK_SHADER(patches)
SLEAPC_VK_SHADER(dwconv)
SLEAPC_VK_SHADER(layernorm)
SLEAPC_VK_SHADER(scale_add)
SLEAPC_VK_SHADER(input_u8)
SLEAPC_VK_SHADER(peaks_global)
SLEAPC_VK_SHADER(window_attention)
SLEAPC_VK_SHADER(paf_score)
SLEAPC_VK_SHADER(window_w)
SLEAPC_VK_SHADER(window_h)
SLEAPC_VK_SHADER(frames_match)
SLEAPC_VK_SHADER(peaks_local_count)
SLEAPC_VK_SHADER(peaks_local_scan)
SLEAPC_VK_SHADER(peaks_local_write)
SLEAPC_VK_SHADER(sample_cells)
SLEAPC_VK_SHADER(global_gempool)
SLEAPC_VK_SHADER(l2norm)

SLEAPC_VK_SHADER(conv2d_f16)
SLEAPC_VK_SHADER(conv_transpose2d_f16)
SLEAPC_VK_SHADER(maxpool2_f16)
SLEAPC_VK_SHADER(resize_bilinear_f16)
SLEAPC_VK_SHADER(global_maxpool_f16)
SLEAPC_VK_SHADER(linear_f16)
SLEAPC_VK_SHADER(softmax_f16)
SLEAPC_VK_SHADER(patches_f16)
SLEAPC_VK_SHADER(dwconv_f16)
SLEAPC_VK_SHADER(layernorm_f16)
SLEAPC_VK_SHADER(scale_add_f16)
SLEAPC_VK_SHADER(input_u8_f16)
SLEAPC_VK_SHADER(peaks_global_f16)
SLEAPC_VK_SHADER(window_attention_f16)
SLEAPC_VK_SHADER(paf_score_f16)
SLEAPC_VK_SHADER(window_w_f16)
SLEAPC_VK_SHADER(window_h_f16)
SLEAPC_VK_SHADER(frames_match_f16)
SLEAPC_VK_SHADER(peaks_local_count_f16)
SLEAPC_VK_SHADER(peaks_local_scan_f16)
SLEAPC_VK_SHADER(peaks_local_write_f16)
SLEAPC_VK_SHADER(sample_cells_f16)
SLEAPC_VK_SHADER(global_gempool_f16)
SLEAPC_VK_SHADER(l2norm_f16)

SLEAPC_VK_SHADER(conv2d_f16m)
SLEAPC_VK_SHADER(dwconv_f16m)
SLEAPC_VK_SHADER(linear_f16m)

#undef SLEAPC_VK_SHADER

#endif
