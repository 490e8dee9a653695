#version 450
// Softmax over each row of a (B, C) vector, in place (a LINEAR node's
// SLEAPC_ACT_SOFTMAX); the row max is subtracted first, as torch.softmax does.
#include "common.glsl"
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(push_constant) uniform P {
    int rows, n;
} p;

void main()
{
    int r = int(gl_GlobalInvocationID.x);
    if (r >= p.rows)
        return;
    int s = r * p.n;
    float m = float(dst[s]);
    for (int i = 1; i < p.n; i++)
        m = max(m, float(dst[s + i]));
    float sum = 0.0;
    for (int i = 0; i < p.n; i++) {
        float e = exp(float(dst[s + i]) - m);
        dst[s + i] = to_store(e);
        sum += e;
    }
    for (int i = 0; i < p.n; i++)
        dst[s + i] = to_store(float(dst[s + i]) / sum);
}
