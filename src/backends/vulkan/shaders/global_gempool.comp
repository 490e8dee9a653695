#version 450
// (B, C, H, W) -> (B, C) (SLEAPC_OP_GLOBAL_GEMPOOL): sleap-nn's GeM,
// mean(max(x, eps)^p)^(1/p) over each plane, p already clamped to [1, 6] on
// the host; has_p 0: the plain mean. One thread per plane; the sum in float32
// (a plane at the encoder's stride is a few pixels).
#include "common.glsl"
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(push_constant) uniform P {
    int planes, plane_size, has_p;
    float p, eps;
} p;

void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= p.planes)
        return;
    int s = i * p.plane_size;
    float sum = 0.0;
    for (int k = 0; k < p.plane_size; k++) {
        float v = float(src0[s + k]);
        sum += p.has_p != 0 ? pow(max(v, p.eps), p.p) : v;
    }
    float mean = p.plane_size > 0 ? sum / float(p.plane_size) : 0.0;
    dst[i] = to_store(p.has_p != 0 ? pow(mean, 1.0 / p.p) : mean);
}
