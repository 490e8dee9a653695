#version 450
#ifdef SLEAPC_FP16
#extension GL_EXT_shader_16bit_storage : require
#define ELEM float16_t
#else
#define ELEM float
#endif
// The network's input from the mapped input buffer (vulkan_input.h):
// uint8 frames normalised here, or float32 values the host prepared, into
// node 0's (B, in_c, H, W) float32 buffer. uint8 goes through the host's
// table v / 255.0f (division is not correctly rounded on every GPU), and the
// 3 -> 1 luma keeps graph_input.c's order without fused multiply-adds
// (precise), so the result is bit-identical to sleapc__graph_input_prepare.
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
#ifdef SLEAPC_FP16
#define to_store(v) float16_t(v)
#else
#define to_store(v) (v)
#endif
// fp16: node 0 is binary16, each value rounded once on store.
layout(std430, set = 0, binding = 0) buffer Dst { ELEM dst[]; };
layout(std430, set = 0, binding = 1) readonly buffer In { uint words[]; };
layout(push_constant) uniform P {
    int in_c, hw;
} p;

// Header words: the table, then the mode (0 uint8, 1 float32, 2 none) and the
// source channel count; the data starts at DATA (vulkan_input.h).
const int MODE = 256, SRC_C = 257, DATA = 272;

float u8_at(int idx)
{
    uint w = words[DATA + (idx >> 2)];
    uint v = (w >> (uint(idx & 3) * 8u)) & 255u;
    return uintBitsToFloat(words[v]);
}

void main()
{
    int i = int(gl_GlobalInvocationID.x), b = int(gl_GlobalInvocationID.y);
    if (i >= p.hw)
        return;
    int out0 = b * p.in_c * p.hw + i;
    if (words[MODE] == 2u) // node 0 holds the input already (window_h.comp)
        return;
    if (words[MODE] != 0u) {
        for (int c = 0; c < p.in_c; c++)
            dst[out0 + c * p.hw] = to_store(uintBitsToFloat(words[DATA + out0 + c * p.hw]));
        return;
    }
    int c = int(words[SRC_C]);
    int in0 = b * c * p.hw + i;
    if (c == p.in_c) {
        for (int k = 0; k < c; k++)
            dst[out0 + k * p.hw] = to_store(u8_at(in0 + k * p.hw));
    } else if (c == 1) {
        float v = u8_at(in0);
        for (int k = 0; k < p.in_c; k++)
            dst[out0 + k * p.hw] = to_store(v);
    } else {
        precise float y = 0.2989 * u8_at(in0);
        y = y + 0.587 * u8_at(in0 + p.hw);
        y = y + 0.114 * u8_at(in0 + 2 * p.hw);
        dst[out0] = to_store(y);
    }
}
