#version 450
// (B, in) -> (B, out) with weight (out, in), bias and activation
// (SLEAPC_OP_LINEAR); one thread per output value.
#include "common.glsl"
layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;
layout(push_constant) uniform P {
    int batch, n_in, n_out, act;
} p;

void main()
{
    int i = int(gl_GlobalInvocationID.x);
    if (i >= p.batch * p.n_out)
        return;
    int b = i / p.n_out, o = i % p.n_out;
    float acc = float(bias[o]);
    for (int k = 0; k < p.n_in; k++)
        acc += prod16(wts[o * p.n_in + k], src0[b * p.n_in + k]);
    dst[i] = to_store(activate(acc, p.act));
}
