#version 450
// 2 x 2 max pooling, stride 2, floor (SLEAPC_OP_MAXPOOL2D); NaN wins, as in
// PyTorch.
#include "common.glsl"
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;
layout(push_constant) uniform P {
    int h, w;
} p;

float max_nan(float m, float v)
{
    return (v > m || isnan(v)) ? v : m;
}

void main()
{
    int ox = int(gl_GlobalInvocationID.x), oy = int(gl_GlobalInvocationID.y);
    int plane = int(gl_GlobalInvocationID.z);
    int oh = p.h / 2, ow = p.w / 2;
    if (ox >= ow || oy >= oh)
        return;
    int s = (plane * p.h + 2 * oy) * p.w + 2 * ox;
    float m = float(src0[s]);
    m = max_nan(m, float(src0[s + 1]));
    m = max_nan(m, float(src0[s + p.w]));
    m = max_nan(m, float(src0[s + p.w + 1]));
    dst[(plane * oh + oy) * ow + ox] = to_store(m);
}
