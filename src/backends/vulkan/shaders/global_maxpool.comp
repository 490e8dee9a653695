#version 450
// (B, C, H, W) -> (B, C): the max of each plane (SLEAPC_OP_GLOBAL_MAXPOOL);
// NaN wins, as in PyTorch.
#include "common.glsl"
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(push_constant) uniform P {
    int planes, plane_size;
} p;

void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= p.planes)
        return;
    int s = i * p.plane_size;
    float m = float(src0[s]);
    for (int k = 1; k < p.plane_size; k++) {
        float v = float(src0[s + k]);
        m = (v > m || isnan(v)) ? v : m;
    }
    dst[i] = to_store(m);
}
