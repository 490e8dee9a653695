#version 450
// (B, C) -> (B, C) (SLEAPC_OP_L2NORM): F.normalize, x / max(||x||_2, eps)
// per row. One thread per row (an embedding is a few dozen values).
#include "common.glsl"
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(push_constant) uniform P {
    int rows, n;
    float eps;
} p;

void main()
{
    int r = int(gl_GlobalInvocationID.x);
    if (r >= p.rows)
        return;
    int s = r * p.n;
    float ss = 0.0;
    for (int k = 0; k < p.n; k++) {
        float v = float(src0[s + k]);
        ss += v * v;
    }
    float norm = max(sqrt(ss), p.eps);
    for (int k = 0; k < p.n; k++)
        dst[s + k] = to_store(float(src0[s + k]) / norm);
}
