#version 450
// x + gamma[c] * y, layer scale and residual (SLEAPC_OP_SCALE_ADD); without
// a gamma (has_gamma 0), x + y.
#include "common.glsl"
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(push_constant) uniform P {
    int c, hw, has_gamma;
} p;

void main()
{
    int i = int(gl_GlobalInvocationID.x), plane = int(gl_GlobalInvocationID.y);
    if (i >= p.hw)
        return;
    float g = p.has_gamma != 0 ? float(wts[plane % p.c]) : 1.0;
    int k = plane * p.hw + i;
    dst[k] = to_store(float(src0[k]) + g * float(src1[k]));
}
