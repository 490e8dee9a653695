#version 450
// LayerNorm over the channels of each pixel (SLEAPC_OP_LAYERNORM), weight
// and bias per channel (has_weight 0: ones; the bias buffer holds zeros when
// the node has none). One thread per pixel, two passes as torch computes it.
#include "common.glsl"
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(push_constant) uniform P {
    int c, hw, has_weight;
    float eps;
} p;

void main()
{
    int px = int(gl_GlobalInvocationID.x), b = int(gl_GlobalInvocationID.y);
    if (px >= p.hw)
        return;
    int base = b * p.c * p.hw + px;
    float mean = 0.0;
    for (int ci = 0; ci < p.c; ci++)
        mean += float(src0[base + ci * p.hw]);
    mean *= 1.0 / float(p.c);
    float var = 0.0;
    for (int ci = 0; ci < p.c; ci++) {
        float v = float(src0[base + ci * p.hw]) - mean;
        var += v * v;
    }
    float rstd = 1.0 / sqrt(var * (1.0 / float(p.c)) + p.eps);
    for (int ci = 0; ci < p.c; ci++) {
        float wv = p.has_weight != 0 ? float(wts[ci]) : 1.0;
        float v = float(src0[base + ci * p.hw]);
        dst[base + ci * p.hw] = to_store((v - mean) * rstd * wv + float(bias[ci]));
    }
}
